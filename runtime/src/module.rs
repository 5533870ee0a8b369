//! A compiled and loaded `.ima` file: one CUDA module holding every kernel of the spec.

use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaModule, DriverError, sys};
use cudarc::nvrtc::Ptx;

use crate::compile::{compile_ptx, nvrtc_version};
use crate::contract::KernelContract;
use crate::error::Error;
use crate::kernel::Kernel;

/// A module loaded into one context, with the name of the file it came from for messages.
#[derive(Debug)]
pub struct Module {
    file: String,
    module: Arc<CudaModule>,
    log: String,
}

impl Module {
    /// Compiles `source` with NVRTC for `ctx`'s device (`sm_XY` from its compute
    /// capability) and loads it.
    pub fn compile(ctx: &Arc<CudaContext>, file: &str, source: &str) -> Result<Module, Error> {
        let (major, minor) = ctx
            .compute_capability()
            .map_err(Error::driver("reading the device's compute capability"))?;
        let compiled = compile_ptx(source, file, &format!("sm_{major}{minor}"))?;
        let mut module = Self::load_ptx(ctx, file, &compiled.ptx)?;
        module.log = compiled.log;
        Ok(module)
    }

    /// Loads PTX compiled earlier (shipped in a generated crate, or cached).
    pub fn load_ptx(ctx: &Arc<CudaContext>, file: &str, ptx: &str) -> Result<Module, Error> {
        // PTX is text, and a NUL ends it as it would in C (cudarc would panic on one).
        let ptx = ptx.split('\0').next().unwrap_or_default();
        let module = ctx
            .load_module(Ptx::from_src(ptx))
            .map_err(|e| load_error(e, file))?;
        Ok(Module {
            file: file.to_string(),
            module,
            log: String::new(),
        })
    }

    /// The kernel of `contract`, with both of its entry points.
    pub fn kernel(&self, contract: &'static KernelContract) -> Result<Kernel, Error> {
        Kernel::load(&self.module, &self.file, contract)
    }

    /// What NVRTC said while compiling (empty when loaded from PTX, or when it said nothing).
    pub fn log(&self) -> &str {
        &self.log
    }

    pub fn file(&self) -> &str {
        &self.file
    }
}

/// An unsupported PTX version means NVRTC is newer than the driver: say so with both
/// versions instead of the driver's bare error code.
fn load_error(e: DriverError, file: &str) -> Error {
    if e.0 != sys::CUresult::CUDA_ERROR_UNSUPPORTED_PTX_VERSION {
        return Error::driver(format!("loading the module of {file}"))(e);
    }
    let mut version = 0;
    // SAFETY: one valid out-pointer; the driver library is loaded (a context exists).
    let driver = match unsafe { sys::cuDriverGetVersion(&mut version) }.result() {
        Ok(()) => (version / 1000, version % 1000 / 10),
        Err(_) => (0, 0),
    };
    Error::PtxTooNew {
        file: file.to_string(),
        driver,
        nvrtc: nvrtc_version().ok(),
    }
}
