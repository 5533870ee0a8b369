//! Two GPUs: a tensor on GPU 1, or a stream of GPU 1, passed to a launch of a kernel loaded
//! on GPU 0 is refused before launching, and the output is left as it was.
//!
//! These tests need two GPUs and fail on one: run this binary on a two-GPU machine
//! (`bash .gpu/on-device test multi_gpu`) and leave it out on one
//! (`bash .gpu/on-device test -v multi_gpu`).

use std::sync::Arc;

use ima_fuzz::contract;
use ima_runtime::cudarc::driver::{CudaContext, CudaStream};
use ima_runtime::{DType, DeviceId, DynTensor, Error, Kernel, KernelArg, Module, Violation};

/// GPU 0 and GPU 1, each with a stream, and the example transpose loaded on GPU 0.
struct TwoGpus {
    ctx0: Arc<CudaContext>,
    ctx1: Arc<CudaContext>,
    s0: Arc<CudaStream>,
    s1: Arc<CudaStream>,
    transpose: Kernel,
    _module: Module,
}

fn two_gpus() -> TwoGpus {
    let n = CudaContext::device_count().unwrap_or_else(|e| panic!("{e}"));
    assert!(
        n >= 2,
        "this test needs two GPUs and found {n}: run it on a two-GPU machine"
    );
    let file = "specs/transpose.ima";
    let text = std::fs::read_to_string(format!("{}/../{file}", env!("CARGO_MANIFEST_DIR")))
        .unwrap_or_else(|e| panic!("{file}: {e}"));
    let m = contract::load(file, &text).unwrap_or_else(|e| panic!("{e}"));
    let cuda = ima_codegen::cuda::generate(&m, "transpose.cu");
    let c = contract::build_all(&m)
        .into_iter()
        .find(|c| c.name == "transpose")
        .expect("specs/transpose.ima has a kernel named transpose");
    let (ctx0, ctx1) = (CudaContext::new(0).unwrap(), CudaContext::new(1).unwrap());
    let (s0, s1) = (ctx0.new_stream().unwrap(), ctx1.new_stream().unwrap());
    let module = Module::compile(&ctx0, file, &cuda).unwrap_or_else(|e| panic!("{e}"));
    let transpose = module.kernel(c).unwrap_or_else(|e| panic!("{e}"));
    TwoGpus {
        ctx0,
        ctx1,
        s0,
        s1,
        transpose,
        _module: module,
    }
}

const ROWS: usize = 33;
const COLS: usize = 17;

/// An f32 tensor of `shape` on `stream`'s GPU, every element `value`.
fn filled(stream: &Arc<CudaStream>, value: f32, shape: &[usize]) -> DynTensor {
    let bytes: Vec<u8> = (0..shape.iter().product::<usize>())
        .flat_map(|_| value.to_le_bytes())
        .collect();
    DynTensor::from_bytes(stream, DType::F32, &bytes, shape).unwrap()
}

impl TwoGpus {
    /// Launches the transpose on `stream` with x made on `x_stream` and y on GPU 0 (NaN),
    /// asserts that the checker refused it and that y was left as it was, and returns the
    /// refusal's violations.
    fn refused_transpose(
        &self,
        stream: &Arc<CudaStream>,
        x_stream: &Arc<CudaStream>,
    ) -> Vec<Violation> {
        let x = filled(x_stream, 1.0, &[ROWS, COLS]);
        let mut y = filled(&self.s0, f32::NAN, &[COLS, ROWS]);
        let result = self.transpose.launch(
            stream,
            &mut [KernelArg::read_dyn(&x), KernelArg::write_dyn(&mut y)],
            &[],
        );
        let Err(Error::Launch(e)) = result else {
            panic!("expected a refusal, got {result:?}");
        };
        eprintln!("{e}");
        let bytes = y.to_bytes(&self.s0).unwrap();
        assert!(
            bytes
                .chunks_exact(4)
                .all(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]).is_nan()),
            "the refused launch wrote y"
        );
        e.violations
    }
}

#[test]
#[ignore = "needs two CUDA GPUs"]
fn a_tensor_on_another_gpu_is_refused_with_violation_device() {
    let g = two_gpus();
    let v = g.refused_transpose(&g.s0, &g.s1);
    assert!(
        v.iter().any(|v| matches!(
            v,
            Violation::Device { arg: "x", expected, actual }
                if *expected == DeviceId::of(&g.ctx0) && *actual == DeviceId::of(&g.ctx1)
        )),
        "{v:?}"
    );
}

#[test]
#[ignore = "needs two CUDA GPUs"]
fn a_stream_of_another_gpu_is_refused_with_violation_stream() {
    let g = two_gpus();
    let v = g.refused_transpose(&g.s1, &g.s0);
    assert!(
        v.iter().any(|v| matches!(
            v,
            Violation::Stream { kernel, stream }
                if *kernel == DeviceId::of(&g.ctx0) && *stream == DeviceId::of(&g.ctx1)
        )),
        "{v:?}"
    );
}
