//! A view borrowed shared cannot be a kernel's output: it lends no write access.

use ima_runtime::cudarc::driver::CudaView;
use ima_runtime::{KernelArg, TensorView};

fn as_output(view: CudaView<'_, f32>) {
    let mut v = TensorView::new(view, &[4]).unwrap();
    let _out = KernelArg::write(&mut v);
}

fn main() {
    let _ = as_output;
}
