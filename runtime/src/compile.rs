//! CUDA C to PTX (and SASS) through NVRTC, keeping the compiler's log.
//!
//! cudarc's `compile_ptx_with_opts` drops the log on success, but NVRTC warnings matter
//! (CI fails on them), so this drives NVRTC's calls directly and returns the log with the
//! PTX. It also refuses, as errors, the inputs on which cudarc would panic (a NUL byte in
//! the source or the file name).

use std::ffi::{CString, c_char};

use cudarc::nvrtc::{result, sys};

use crate::error::Error;
use crate::locate::nvrtc;

/// PTX, the SASS NVRTC assembled from it, and whatever NVRTC said while producing them
/// (empty when it said nothing).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compiled {
    pub ptx: String,
    /// The cubin for a real architecture (`sm_90`), which a device of that architecture
    /// loads with no JIT compile; empty for a virtual one (`compute_90`).
    pub cubin: Vec<u8>,
    pub log: String,
}

/// Owns an NVRTC program so every exit path destroys it.
struct Program(sys::nvrtcProgram);

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: created by `create_program`, destroyed only here. A failure to free
        // compiler memory is not worth reporting over the compile result.
        let _ = unsafe { result::destroy_program(self.0) };
    }
}

/// Text of a NUL-terminated buffer from NVRTC.
fn text(buf: &[c_char]) -> String {
    let bytes: Vec<u8> = buf
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// NVRTC version, `(major, minor)`.
pub fn nvrtc_version() -> Result<(i32, i32), Error> {
    nvrtc()?;
    let (mut major, mut minor) = (0, 0);
    // SAFETY: two valid out-pointers; the library was loaded by `nvrtc()`.
    unsafe { sys::nvrtcVersion(&mut major, &mut minor) }
        .result()
        .map_err(|e| Error::Nvrtc {
            file: String::new(),
            log: format!("nvrtcVersion: {e}"),
        })?;
    Ok((major, minor))
}

/// The architecture a module is compiled for on a device of compute capability
/// `(major, minor)`: `sm_XY`, and `sm_90a` on a 9.0 device, whose architecture-specific
/// features (TMA, warpgroup MMA, `setmaxnreg`) the kernels with `tma` arguments use. PTX
/// for sm_90a loads on 9.0 devices only, which is exactly where it is asked for.
pub fn arch_for(major: i32, minor: i32) -> String {
    let features = if (major, minor) == (9, 0) { "a" } else { "" };
    format!("sm_{major}{minor}{features}")
}

/// Whether `arch` names a real architecture (`sm_90`, `sm_90a`), for which NVRTC assembles
/// SASS, rather than a virtual one (`compute_90`), which has PTX only.
pub fn is_real_architecture(arch: &str) -> bool {
    arch.starts_with("sm_")
}

/// Compiles `source` (named `file` in messages) for `arch` (`sm_90`), with the CUDA
/// headers on the include path, C++17 and line info for profilers and sanitizers: its PTX
/// and, for a real architecture, the SASS NVRTC assembled from it in the same compile.
pub fn compile_cuda(source: &str, file: &str, arch: &str) -> Result<Compiled, Error> {
    let (prog, log) = compile_program(source, file, arch)?;
    let cubin = if is_real_architecture(arch) {
        program_cubin(&prog, file)?
    } else {
        Vec::new()
    };
    Ok(Compiled {
        ptx: program_ptx(&prog, file)?,
        cubin,
        log,
    })
}

/// The SASS of a program that compiled for a real architecture.
fn program_cubin(prog: &Program, file: &str) -> Result<Vec<u8>, Error> {
    let fail = |call: &str, e: result::NvrtcError| Error::Nvrtc {
        file: file.to_string(),
        log: format!("{call}: {e}"),
    };
    let mut size = 0usize;
    // SAFETY: `prog` compiled successfully; `size` is a valid out-pointer.
    unsafe { sys::nvrtcGetCUBINSize(prog.0, &mut size) }
        .result()
        .map_err(|e| fail("nvrtcGetCUBINSize", e))?;
    let mut cubin = vec![0u8; size];
    // SAFETY: as above; `cubin` holds the `size` bytes NVRTC writes.
    unsafe { sys::nvrtcGetCUBIN(prog.0, cubin.as_mut_ptr().cast()) }
        .result()
        .map_err(|e| fail("nvrtcGetCUBIN", e))?;
    Ok(cubin)
}

/// The PTX of a program that compiled.
fn program_ptx(prog: &Program, file: &str) -> Result<String, Error> {
    // SAFETY: `prog` is a live program, compiled successfully.
    let ptx = unsafe { result::get_ptx(prog.0) }.map_err(|e| Error::Nvrtc {
        file: file.to_string(),
        log: format!("nvrtcGetPTX: {e}"),
    })?;
    Ok(text(&ptx))
}

/// Compiles `source` for `arch` with the fixed options: the program and NVRTC's log.
fn compile_program(source: &str, file: &str, arch: &str) -> Result<(Program, String), Error> {
    let fail = |log: String| Error::Nvrtc {
        file: file.to_string(),
        log,
    };
    if !arch.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return Err(fail(format!("invalid GPU architecture {arch:?}")));
    }
    let root = nvrtc()?;
    let include = root.include.to_str().ok_or_else(|| {
        fail(format!(
            "the include path {} is not UTF-8",
            root.include.display()
        ))
    })?;
    let nul = |what: &'static str| {
        move |e: std::ffi::NulError| {
            fail(format!(
                "the {what} contains a NUL byte at offset {}",
                e.nul_position()
            ))
        }
    };
    let src = CString::new(source).map_err(nul("source"))?;
    let name = CString::new(file).map_err(nul("file name"))?;
    // ptx_cache.rs's FORMAT stands for these options in its entries' keys: change it with them.
    let options = [
        format!("--gpu-architecture={arch}"),
        format!("--include-path={include}"),
        "-std=c++17".to_string(),
        "-lineinfo".to_string(),
        // Everything imac compiles runs on the device: a lambda or helper in a body is
        // device code, as nvcc already treats a lambda inside a device function.
        "-default-device".to_string(),
    ];

    let prog = Program(
        result::create_program(&src, Some(&name))
            .map_err(|e| fail(format!("nvrtcCreateProgram: {e}")))?,
    );
    // SAFETY: `prog` is a live program; `src` and `name` outlive it.
    let compiled = unsafe { result::compile_program(prog.0, &options) };
    // SAFETY: as above.
    let log = unsafe { result::get_program_log(prog.0) }
        .map(|l| text(&l).trim().to_string())
        .map_err(|e| fail(format!("nvrtcGetProgramLog: {e}")))?;
    if let Err(e) = compiled {
        let log = if e.0 == sys::nvrtcResult::NVRTC_ERROR_COMPILATION {
            log
        } else {
            format!("nvrtcCompileProgram: {e}\n{log}")
        };
        return Err(fail(log));
    }
    Ok((prog, log))
}

/// The PTX of [`compile_cuda`], treating any NVRTC output (warnings) as an error.
pub fn compile_ptx_checked(source: &str, file: &str, arch: &str) -> Result<String, Error> {
    let Compiled { ptx, log, .. } = compile_cuda(source, file, arch)?;
    if log.is_empty() {
        Ok(ptx)
    } else {
        Err(Error::NvrtcWarnings {
            file: file.to_string(),
            log,
        })
    }
}
