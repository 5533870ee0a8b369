//! A host buffer cannot pose as a device tensor: the trait is sealed.

use ima_runtime::cudarc::driver::{CudaStream, SyncOnDrop, sys::CUdeviceptr};
use ima_runtime::{DeviceTensor, DeviceTensorMut, Error, TensorMeta};
use std::sync::Arc;

struct Host(Vec<f32>);

impl DeviceTensor for Host {
    fn meta(&self) -> TensorMeta<'_> {
        unimplemented!()
    }
    fn read_ptr<'a>(&'a self, _: &'a CudaStream) -> (CUdeviceptr, SyncOnDrop<'a>) {
        unimplemented!()
    }
    fn to_host_bytes(&self, _: &Arc<CudaStream>) -> Result<Vec<u8>, Error> {
        unimplemented!()
    }
}

fn main() {
    let _ = Host(vec![]).0;
}

// Nor as a writable one.
impl DeviceTensorMut for Host {
    fn write_ptr<'a>(&'a mut self, _: &'a CudaStream) -> (CUdeviceptr, SyncOnDrop<'a>) {
        unimplemented!()
    }
}
