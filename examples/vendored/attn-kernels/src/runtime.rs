//! The runtime as the stubs in `lib.rs` see it: `ima_runtime`, with a [`Module`] that loads
//! what imac compiled ahead of time when it fits the device (the SASS of the device's own
//! architecture, else PTX), and compiles the CUDA C with NVRTC otherwise.

pub use ima_runtime::*;

use ima_runtime::cudarc::driver::CudaContext;
use std::sync::Arc;

/// What imac compiled for each architecture named with `--arch`: (architecture, PTX, the
/// SASS NVRTC assembled from that PTX).
pub const IMAGES: &[(&str, &str, &[u8])] = &[];

/// Loads the stubs' module.
pub struct Module;

impl Module {
    /// Loads the shipped image that fits the device ([`newest_fitting`]): its SASS when it
    /// was assembled for the device's major version (SASS for `sm_XY` runs on `X.Z`, Z >= Y),
    /// so that the driver compiles nothing, else its PTX (PTX runs on later GPUs too);
    /// compiles `source` with NVRTC when none fits.
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
            Some((sm, ptx, cubin)) if sm / 10 == major => {
                ima_runtime::Module::load_cubin(ctx, file, cubin, ptx)
            }
            Some((_, ptx, _)) => ima_runtime::Module::load_ptx(ctx, file, ptx),
            None => ima_runtime::Module::compile(ctx, file, source),
        }
    }
}

/// A kernel of the module reads a `tma` argument, which only PTX for sm_90a has.
const NEEDS_SM90A: bool = false;

/// The shipped image that fits a device of `capability` (`XY`), with its architecture's
/// number: `sm_XYa`, compiled for that exact device with its architecture-specific
/// features, or else the newest plain `sm_XY` not newer than it. On a 9.0 device a module
/// with `tma` kernels takes only `sm_90a`, and is compiled with NVRTC without it.
fn newest_fitting(capability: i32) -> Option<(i32, &'static str, &'static [u8])> {
    IMAGES
        .iter()
        .filter_map(|&(arch, ptx, cubin)| {
            let digits = arch.strip_prefix("sm_")?;
            let (digits, specific) = match digits.strip_suffix('a') {
                Some(d) => (d, true),
                None => (digits, false),
            };
            let sm = digits.parse::<i32>().ok()?;
            let fits = if specific {
                sm == capability
            } else {
                sm <= capability && !(NEEDS_SM90A && capability == 90)
            };
            fits.then_some(((sm, specific), ptx, cubin))
        })
        .max_by_key(|&(key, _, _)| key)
        .map(|((sm, _), ptx, cubin)| (sm, ptx, cubin))
}
