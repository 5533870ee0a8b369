//! A compiled and loaded `.ima` file: one CUDA module holding every kernel of the spec.

use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaModule, DriverError, sys};
use cudarc::nvrtc::Ptx;

use crate::compile::{arch_for, compile_cuda, nvrtc_version};
use crate::contract::KernelContract;
use crate::cubin;
use crate::device::{DeviceId, DeviceLimits};
use crate::error::Error;
use crate::kernel::Kernel;
use crate::programmatic;
use crate::ptx_cache;
use crate::version::{check_driver_loads_nvrtc, driver_version};

/// A module loaded into one context, with the name of the file it came from for messages
/// and the limits of its device, read once here for every launch's checks.
#[derive(Debug)]
pub struct Module {
    file: String,
    module: Arc<CudaModule>,
    device: DeviceId,
    limits: DeviceLimits,
    log: String,
    /// The PTX's entry points, so that optional ones are looked up only where they exist
    /// (a failed lookup is a CUDA API error that compute-sanitizer reports).
    entries: Vec<String>,
    /// The device's compute capability, (major, minor).
    capability: (i32, i32),
    /// Its kernels that start early may ([`crate::programmatic`]): decided once here, for
    /// the device and the PTX.
    programmatic: bool,
}

impl Module {
    /// Compiles `source` with NVRTC for `ctx`'s device ([`arch_for`] its compute
    /// capability) and loads the SASS NVRTC assembled (the driver then compiles nothing
    /// more). Refuses first, with both versions, when NVRTC is newer than the driver
    /// ([`Error::PtxTooNew`]). The PTX and SASS are kept in memory and in the user's cache
    /// directory (`IMA_PTX_CACHE`; runtime/src/ptx_cache.rs), so that the same source for
    /// the same device and NVRTC compiles once.
    pub fn compile(ctx: &Arc<CudaContext>, file: &str, source: &str) -> Result<Module, Error> {
        check_driver_loads_nvrtc(file)?;
        let (major, minor) = capability(ctx)?;
        let (arch, nvrtc) = (arch_for(major, minor), nvrtc_version()?);
        let key = ptx_cache::Key {
            source,
            file,
            arch: &arch,
            nvrtc,
        };
        let compiled = ptx_cache::compiled(&key, ptx_cache::dir().as_deref(), || {
            compile_cuda(source, file, &arch)
        })?;
        let mut module = Self::load(
            ctx,
            file,
            Some(&compiled.cubin),
            &compiled.ptx,
            Some(nvrtc),
            (major, minor),
        )?;
        module.log = compiled.log;
        Ok(module)
    }

    /// Compiles `source` (named `file`, as [`Module::compile`] is given it) with NVRTC into
    /// the cache directory `dir` for a device of compute `capability` ((9, 0) for an H100 or
    /// H200), with no device, unless `dir` holds it already: on a build machine, so that a
    /// process on a GPU machine whose `IMA_PTX_CACHE` is that directory loads the module
    /// without compiling it, where its device has that capability and its NVRTC this one's
    /// version. NVRTC takes up to a minute on the larger generated modules. The entry's
    /// path.
    pub fn precompile(
        dir: &std::path::Path,
        file: &str,
        source: &str,
        capability: (i32, i32),
    ) -> Result<std::path::PathBuf, Error> {
        // The architecture `compile` asks for on such a device, so that the keys are equal.
        let arch = arch_for(capability.0, capability.1);
        let key = ptx_cache::Key {
            source,
            file,
            arch: &arch,
            nvrtc: nvrtc_version()?,
        };
        ptx_cache::fill(&key, dir, || compile_cuda(source, file, &arch))
    }

    /// Loads PTX compiled earlier (shipped in a generated crate).
    pub fn load_ptx(ctx: &Arc<CudaContext>, file: &str, ptx: &str) -> Result<Module, Error> {
        Self::load(ctx, file, None, ptx, None, capability(ctx)?)
    }

    /// Loads the SASS `cubin` that NVRTC assembled from `ptx` ([`crate::compile_cuda`],
    /// shipped in a generated crate): the driver then compiles nothing, where PTX costs its
    /// JIT compiler up to minutes for the larger modules on a machine whose compute cache
    /// does not hold them yet. The entry points are read from `ptx`. A cubin for another
    /// architecture falls back to `ptx`, whose error, if it fails too, says why: one whose
    /// ELF header shows it without asking the driver, any other where the driver refuses.
    pub fn load_cubin(
        ctx: &Arc<CudaContext>,
        file: &str,
        cubin: &[u8],
        ptx: &str,
    ) -> Result<Module, Error> {
        Self::load(ctx, file, Some(cubin), ptx, None, capability(ctx)?)
    }

    /// Loads `cubin` when given, not empty, of an SM the device runs (as far as its header
    /// says) and accepted by the driver, else `ptx` (made by NVRTC `nvrtc` when known),
    /// into `ctx`, whose device has compute capability `capability`.
    fn load(
        ctx: &Arc<CudaContext>,
        file: &str,
        cubin: Option<&[u8]>,
        ptx: &str,
        nvrtc: Option<(i32, i32)>,
        capability: (i32, i32),
    ) -> Result<Module, Error> {
        // PTX is text, and a NUL ends it as it would in C (cudarc would panic on one).
        let ptx = ptx.split('\0').next().unwrap_or_default();
        // A cubin whose header shows SASS this device cannot run is not offered to the
        // driver: its refusal would be a failed API call (runtime/src/cubin.rs). A copy
        // of the cubin, for the driver reads the ELF image with aligned loads that a
        // static byte array does not promise.
        let sass = cubin
            .filter(|c| !c.is_empty() && cubin::may_run_on(c, capability))
            .and_then(|c| ctx.load_module(Ptx::from_binary(c.to_vec())).ok());
        let module = match sass {
            Some(module) => module,
            None => ctx
                .load_module(Ptx::from_src(ptx))
                .map_err(|e| load_error(e, file, nvrtc))?,
        };
        Ok(Module {
            file: file.to_string(),
            module,
            device: DeviceId::of(ctx),
            limits: DeviceLimits::of(ctx)?,
            log: String::new(),
            entries: ptx_entries(ptx),
            capability,
            programmatic: programmatic::enabled(capability.0, ptx),
        })
    }

    /// The kernel of `contract`, with both of its entry points.
    pub fn kernel(&self, contract: &'static KernelContract) -> Result<Kernel, Error> {
        // Its entry points exist only in PTX for sm_90a (the generated CUDA leaves them
        // out elsewhere): say why, rather than that they are missing.
        if contract.needs_sm90a() && (self.capability != (9, 0) || !self.has(contract.entry_i32)) {
            let (major, minor) = self.capability;
            return Err(Error::Entry {
                kernel: contract.name,
                entry: contract.entry_i32.to_string(),
                file: self.file.clone(),
                reason: format!(
                    "{}, which need a device of compute capability 9.0 and PTX compiled for \
                     sm_90a; this device is {major}.{minor}{}",
                    contract.sm90a_use(),
                    if self.capability == (9, 0) {
                        ", and the module was compiled for another architecture"
                    } else {
                        ""
                    }
                ),
            });
        }
        let checked = [contract.entry_i32, contract.entry_i64]
            .iter()
            .all(|e| self.has(&ima_contract::EntryPoint::checked_twin(e)));
        Kernel::load(
            &self.module,
            &self.file,
            contract,
            self.device,
            self.limits,
            checked,
            self.programmatic && contract.starts_early(),
        )
    }

    /// Whether the PTX has the entry point `name`.
    fn has(&self, name: &str) -> bool {
        self.entries.iter().any(|x| x == name)
    }

    /// What NVRTC said while compiling (empty when loaded from PTX, or when it said nothing).
    pub fn log(&self) -> &str {
        &self.log
    }

    pub fn file(&self) -> &str {
        &self.file
    }

    /// The driver's module, for the runtime's own kernels, which have no contract
    /// (contiguous.rs's gather).
    pub(crate) fn cuda_module(&self) -> &Arc<CudaModule> {
        &self.module
    }

    /// The limits of the module's device, which every launch is checked against.
    pub fn limits(&self) -> &DeviceLimits {
        &self.limits
    }
}

/// The compute capability of `ctx`'s device, (major, minor).
fn capability(ctx: &Arc<CudaContext>) -> Result<(i32, i32), Error> {
    ctx.compute_capability()
        .map_err(Error::driver("reading the device's compute capability"))
}

/// The names of a PTX module's kernels: `.entry NAME(` lines.
fn ptx_entries(ptx: &str) -> Vec<String> {
    ptx.lines()
        .filter_map(|l| l.trim_start().split_once(".entry ").map(|(_, rest)| rest))
        .map(|rest| {
            rest.split(['(', ' '])
                .next()
                .unwrap_or_default()
                .to_string()
        })
        .collect()
}

/// An unsupported PTX version means the PTX is newer than the driver: say so with both
/// versions instead of the driver's bare error code.
fn load_error(e: DriverError, file: &str, nvrtc: Option<(i32, i32)>) -> Error {
    if e.0 != sys::CUresult::CUDA_ERROR_UNSUPPORTED_PTX_VERSION {
        return Error::driver(format!("loading the module of {file}"))(e);
    }
    Error::PtxTooNew {
        file: file.to_string(),
        driver: driver_version().unwrap_or((0, 0)),
        nvrtc,
        nvrtc_path: nvrtc.and_then(|_| crate::locate::nvrtc().ok().map(|r| r.nvrtc.clone())),
    }
}
