//! Fake tensor metadata and the device limits the checker tests run against: nothing is
//! allocated, so any shape costs nothing.

use ima_runtime::{
    DType, DeviceId, DeviceLimits, KernelContract, Plan, Scalar, TensorMeta, Violation, check,
};

/// An H100/H200's limits.
pub const LIMITS: DeviceLimits = DeviceLimits::SM_90;

/// The device every fake tensor and launch is on.
const DEV: DeviceId = DeviceId {
    ordinal: 0,
    context: 0xc0,
};

/// An owned stand-in for a device tensor.
#[derive(Clone, Debug)]
pub struct Fake {
    pub dtype: DType,
    pub shape: Vec<usize>,
    pub strides: Vec<isize>,
    pub offset: usize,
    pub buffer_len: usize,
    pub base_ptr: u64,
    pub device: DeviceId,
}

impl Fake {
    pub fn new(dtype: DType, shape: &[usize], base_ptr: u64) -> Fake {
        let mut strides = vec![0isize; shape.len()];
        let mut acc = 1isize;
        for (s, &n) in strides.iter_mut().zip(shape).rev() {
            *s = acc;
            acc *= n.max(1) as isize;
        }
        Fake {
            dtype,
            shape: shape.to_vec(),
            strides,
            offset: 0,
            buffer_len: shape.iter().product::<usize>().max(1),
            base_ptr,
            device: DEV,
        }
    }

    fn meta(&self) -> TensorMeta<'_> {
        TensorMeta {
            dtype: self.dtype,
            shape: &self.shape,
            strides: &self.strides,
            offset: self.offset,
            buffer_len: self.buffer_len,
            base_ptr: self.base_ptr,
            device: self.device,
        }
    }
}

pub fn run(c: &KernelContract, args: &[Fake], params: &[Scalar]) -> Result<Plan, Vec<Violation>> {
    let metas: Vec<TensorMeta<'_>> = args.iter().map(Fake::meta).collect();
    check(c, DEV, &LIMITS, &metas, params).map_err(|e| e.violations)
}

pub fn refused(c: &KernelContract, args: &[Fake], params: &[Scalar]) -> String {
    let metas: Vec<TensorMeta<'_>> = args.iter().map(Fake::meta).collect();
    match check(c, DEV, &LIMITS, &metas, params) {
        Ok(plan) => panic!("accepted: {plan:?}"),
        Err(e) => e.to_string(),
    }
}

/// Places fake buffers 2^44 bytes apart, room for any shape a test uses.
pub fn spread(mut args: Vec<Fake>) -> Vec<Fake> {
    for (i, a) in args.iter_mut().enumerate() {
        a.base_ptr = (i as u64 + 1) << 44;
    }
    args
}
