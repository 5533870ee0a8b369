//! A host buffer where a kernel expects device memory does not compile.

use ima_runtime::KernelArg;
use ima_runtime::half::f16;

fn main() {
    let mut host: Vec<f16> = vec![f16::ZERO; 8];
    let _vec = KernelArg::read(&host);
    let _slice = KernelArg::read(&host[..]);
    let _out = KernelArg::write(&mut host);
    // The untyped constructors and the raw variant take device tensors only, too.
    let _dyn = KernelArg::read_dyn(&host);
    let _raw = KernelArg::Read(&host);
}
