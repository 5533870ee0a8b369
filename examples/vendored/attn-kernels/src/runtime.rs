//! The runtime as the stubs in `lib.rs` see it: `ima_runtime`, with a [`Module`] that loads
//! the PTX imac compiled ahead of time when one fits the device, and compiles the CUDA C
//! with NVRTC otherwise.

pub use ima_runtime::*;

use ima_runtime::cudarc::driver::CudaContext;
use std::sync::Arc;

/// PTX that imac compiled for each architecture named with `--arch`.
pub const PTX: &[(&str, &str)] = &[];

/// Loads the stubs' module.
pub struct Module;

impl Module {
    /// Loads the shipped PTX of the newest `sm_XY` not newer than the device (PTX runs on
    /// later GPUs too); compiles `source` with NVRTC when none fits.
    pub fn compile(
        ctx: &Arc<CudaContext>,
        file: &str,
        source: &str,
    ) -> Result<ima_runtime::Module, Error> {
        let (major, minor) = ctx.compute_capability().map_err(|source| Error::Driver {
            what: "reading the device's compute capability".into(),
            source,
        })?;
        match newest_fitting(major * 10 + minor) {
            Some(ptx) => ima_runtime::Module::load_ptx(ctx, file, ptx),
            None => ima_runtime::Module::compile(ctx, file, source),
        }
    }
}

/// The PTX of the newest plain `sm_XY` in [`PTX`] with `XY <= capability`.
fn newest_fitting(capability: i32) -> Option<&'static str> {
    PTX.iter()
        .filter_map(|&(arch, ptx)| Some((arch.strip_prefix("sm_")?.parse::<i32>().ok()?, ptx)))
        .filter(|&(sm, _)| sm <= capability)
        .max_by_key(|&(sm, _)| sm)
        .map(|(_, ptx)| ptx)
}
