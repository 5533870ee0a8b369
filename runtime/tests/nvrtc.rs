//! NVRTC compilation, with no GPU. These tests fail (never skip) when no toolkit is found:
//! CI exports IMA_CUDA_ROOT or installs the wheels into `.cache/cuda-venv`.

use ima_runtime::{Error, compile_ptx, compile_ptx_checked, nvrtc, nvrtc_version};

const FP16: &str = r#"
#include <cuda_fp16.h>
extern "C" __global__ void scale_half(__half* x, float s, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = __float2half(__half2float(x[i]) * s);
}
"#;

fn found() {
    if let Err(e) = nvrtc() {
        panic!("{e}");
    }
}

#[test]
fn compiles_an_fp16_kernel_for_sm90() {
    found();
    let ptx = compile_ptx_checked(FP16, "scale_half.cu", "sm_90").unwrap_or_else(|e| panic!("{e}"));
    assert!(ptx.contains(".entry scale_half"), "{ptx}");
    assert!(ptx.contains(".target sm_90"), "{ptx}");
    let (major, _) = nvrtc_version().unwrap();
    assert!(major >= 12, "NVRTC {major}");
}

#[test]
fn compile_errors_carry_the_log() {
    found();
    let e = compile_ptx(
        "extern \"C\" __global__ void f( {",
        "specs/broken.ima",
        "sm_90",
    )
    .unwrap_err();
    let Error::Nvrtc { file, log } = &e else {
        panic!("{e}")
    };
    assert_eq!(file, "specs/broken.ima");
    assert!(
        log.contains("specs/broken.ima") && log.contains("error"),
        "{log}"
    );
    assert!(
        e.to_string()
            .starts_with("NVRTC failed to compile specs/broken.ima:\n"),
        "{e}"
    );
}

#[test]
fn warnings_are_returned_and_refused_when_checked() {
    found();
    let src = "extern \"C\" __global__ void f(int* x) { int unused = 3; x[0] = 1; }";
    let compiled = compile_ptx(src, "warn.cu", "sm_90").unwrap_or_else(|e| panic!("{e}"));
    assert!(compiled.log.contains("unused"), "{}", compiled.log);
    let e = compile_ptx_checked(src, "warn.cu", "sm_90").unwrap_err();
    assert!(matches!(e, Error::NvrtcWarnings { .. }), "{e}");
}

#[test]
fn bad_input_is_an_error_not_a_panic() {
    found();
    assert!(matches!(
        compile_ptx("a\0b", "nul.cu", "sm_90"),
        Err(Error::Nvrtc { .. })
    ));
    assert!(matches!(
        compile_ptx(FP16, "arch.cu", "sm_90 --evil"),
        Err(Error::Nvrtc { .. })
    ));
}
