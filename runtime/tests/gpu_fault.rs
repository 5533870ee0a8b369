//! Sync mode turns a real device fault into [`Error::KernelFault`] naming the kernel:
//! `cargo test -p ima-runtime --test gpu_fault -- --ignored`.
//!
//! A device fault poisons the CUDA context for the rest of the process, so this is its own
//! test binary with one GPU test: no other GPU test shares the poisoned context.

#[path = "common/fault.rs"]
mod fault;

use fault::{FAULT, SOURCE, under_sanitizer};
use ima_runtime::cudarc::driver::CudaContext;
use ima_runtime::cudarc::driver::sys::CUresult;
use ima_runtime::{Error, KernelArg, Module, Tensor};

/// No GPU needed: the kernel compiles cleanly.
#[test]
fn the_fault_kernel_compiles() {
    let ptx = ima_runtime::compile_ptx_checked(SOURCE, "tests/gpu_fault.rs", "sm_90")
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(ptx.contains(".entry fault_i32("), "{ptx}");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn sync_mode_names_the_faulting_kernel() {
    let ctx = CudaContext::new(0).unwrap_or_else(|e| panic!("{e}"));
    if under_sanitizer() {
        eprintln!("not run under compute-sanitizer: this test faults on purpose");
        return;
    }
    let stream = ctx.default_stream();
    let module =
        Module::compile(&ctx, "tests/gpu_fault.rs", SOURCE).unwrap_or_else(|e| panic!("{e}"));
    let kernel = module.kernel(&FAULT).unwrap_or_else(|e| panic!("{e}"));
    kernel.set_sync(true);
    let mut x = Tensor::<f32>::zeros(&stream, &[4]).unwrap();
    let e = kernel
        .launch(&stream, &mut [KernelArg::write(&mut x)], &[])
        .unwrap_err();
    let Error::KernelFault {
        kernel: name,
        shapes,
        error,
    } = &e
    else {
        panic!("not a kernel fault: {e}")
    };
    assert_eq!(*name, "fault");
    assert_eq!(shapes, "x: f32[4]");
    assert_eq!(error.0, CUresult::CUDA_ERROR_ILLEGAL_ADDRESS, "{e}");
    assert!(
        e.to_string()
            .starts_with("kernel fault failed with x: f32[4]: "),
        "{e}"
    );
    // Dropping the buffers of a poisoned context records errors; it does not panic.
}
