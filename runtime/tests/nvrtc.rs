//! NVRTC compilation, with no GPU. These tests fail (never skip) when no toolkit is found:
//! CI exports IMA_CUDA_ROOT or installs the wheels into `.cache/cuda-venv`.

use ima_runtime::{Error, compile_cuda, compile_ptx_checked, nvrtc, nvrtc_version};

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

/// The SASS is an ELF image for the CUDA machine (ELF's EM_CUDA, 190); a virtual
/// architecture has PTX and no SASS.
#[test]
fn a_real_architecture_gets_sass_beside_its_ptx() {
    found();
    let real = compile_cuda(FP16, "scale_half.cu", "sm_90a").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(real.cubin.get(..4), Some(&b"\x7fELF"[..]));
    let machine = real
        .cubin
        .get(18..20)
        .map(|m| u16::from_le_bytes([m[0], m[1]]));
    assert_eq!(machine, Some(190), "e_machine");
    assert!(real.ptx.contains(".target sm_90a"), "{}", real.ptx);
    let virt = compile_cuda(FP16, "scale_half.cu", "compute_90").unwrap_or_else(|e| panic!("{e}"));
    assert!(virt.cubin.is_empty());
    assert!(virt.ptx.contains(".entry scale_half"), "{}", virt.ptx);
}

#[test]
fn compile_errors_carry_the_log() {
    found();
    let e = compile_cuda(
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
    let compiled = compile_cuda(src, "warn.cu", "sm_90").unwrap_or_else(|e| panic!("{e}"));
    assert!(compiled.log.contains("unused"), "{}", compiled.log);
    let e = compile_ptx_checked(src, "warn.cu", "sm_90").unwrap_err();
    assert!(matches!(e, Error::NvrtcWarnings { .. }), "{e}");
}

#[test]
fn bad_input_is_an_error_not_a_panic() {
    found();
    assert!(matches!(
        compile_cuda("a\0b", "nul.cu", "sm_90"),
        Err(Error::Nvrtc { .. })
    ));
    assert!(matches!(
        compile_cuda(FP16, "arch.cu", "sm_90 --evil"),
        Err(Error::Nvrtc { .. })
    ));
}

/// A module precompiled on a machine with no GPU: one entry a source in the directory,
/// holding the SASS NVRTC assembled (the ELF image for the CUDA machine), and not compiled
/// again when the directory holds it.
#[test]
fn precompiling_fills_the_cache_directory_once() {
    found();
    let dir = tempfile::tempdir().unwrap();
    let path = ima_runtime::Module::precompile(dir.path(), "scale_half.cu", FP16, (9, 0))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(path.parent(), Some(dir.path()));
    let bytes = std::fs::read(&path).unwrap();
    let elf = bytes.windows(4).position(|w| w == b"\x7fELF");
    assert!(elf.is_some(), "no SASS in the entry");
    // For sm_90a, the architecture Module::compile asks for on a 9.0 device.
    let needle = b".target sm_90a";
    let target = bytes.windows(needle.len()).position(|w| w == needle);
    assert!(target.is_some(), "not sm_90a's PTX");
    let modified = std::fs::metadata(&path).unwrap().modified().unwrap();
    let again = ima_runtime::Module::precompile(dir.path(), "scale_half.cu", FP16, (9, 0))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(again, path);
    assert_eq!(
        std::fs::metadata(&path).unwrap().modified().unwrap(),
        modified
    );
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}
