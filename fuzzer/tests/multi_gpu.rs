//! Two GPUs: a tensor on GPU 1 passed to a launch on GPU 0 is refused before launching.

use ima_fuzz::contract;
use ima_runtime::cudarc::driver::CudaContext;
use ima_runtime::{DType, DeviceId, DynTensor, Error, KernelArg, Module, Violation};

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_tensor_on_another_gpu_is_refused_with_violation_device() {
    let n = CudaContext::device_count().unwrap_or(0);
    if n < 2 {
        println!("needs 2 GPUs, found {n}");
        return;
    }
    let file = "specs/transpose.ima";
    let text =
        std::fs::read_to_string(format!("{}/../{file}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let m = contract::load(file, &text).unwrap();
    let cuda = ima_codegen::cuda::generate(&m, "transpose.cu");
    let c = contract::build_all(&m)
        .into_iter()
        .find(|c| c.name == "transpose")
        .unwrap();

    let (ctx0, ctx1) = (CudaContext::new(0).unwrap(), CudaContext::new(1).unwrap());
    let (s0, s1) = (ctx0.new_stream().unwrap(), ctx1.new_stream().unwrap());
    let module = Module::compile(&ctx0, file, &cuda).unwrap();
    let kernel = module.kernel(c).unwrap();

    let (rows, cols) = (33, 17);
    let x =
        DynTensor::from_bytes(&s1, DType::F32, &vec![0u8; rows * cols * 4], &[rows, cols]).unwrap();
    let mut y = DynTensor::zeros(&s0, DType::F32, &[cols, rows]).unwrap();
    let result = kernel.launch(
        &s0,
        &mut [KernelArg::read_dyn(&x), KernelArg::write_dyn(&mut y)],
        &[],
    );
    let Err(Error::Launch(e)) = result else {
        panic!("expected a refusal, got {result:?}");
    };
    assert!(
        e.violations.iter().any(|v| matches!(
            v,
            Violation::Device { arg: "x", expected, actual }
                if *expected == DeviceId::of(&ctx0) && *actual == DeviceId::of(&ctx1)
        )),
        "{e}"
    );
}
