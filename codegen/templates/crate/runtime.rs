//! The runtime as the stubs in `lib.rs` see it: `ima_runtime`, with a [`Module`] that loads
//! the PTX imac compiled ahead of time when one fits the device, and compiles the CUDA C
//! with NVRTC otherwise.

pub use ima_runtime::*;

use ima_runtime::cudarc::driver::CudaContext;
use std::sync::Arc;

/// PTX that imac compiled for each architecture named with `--arch`.
{%- if archs.is_empty() %}
pub const PTX: &[(&str, &str)] = &[];
{%- else %}
pub const PTX: &[(&str, &str)] = &[
{%- for arch in archs %}
    ("{{ arch }}", include_str!("ptx/{{ arch }}.ptx")),
{%- endfor %}
];
{%- endif %}

/// Loads the stubs' module.
pub struct Module;

impl Module {
    /// Loads the shipped PTX that fits the device ([`newest_fitting`]: PTX runs on later
    /// GPUs too); compiles `source` with NVRTC when none fits.
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

/// A kernel of the module reads a `tma` argument, which only PTX for sm_90a has.
const NEEDS_SM90A: bool = {{ needs_sm90a }};

/// The shipped PTX that fits a device of `capability` (`XY`): `sm_XYa`, compiled for that
/// exact device with its architecture-specific features, or else the newest plain `sm_XY`
/// not newer than it. On a 9.0 device a module with `tma` kernels takes only `sm_90a`,
/// and is compiled with NVRTC without it.
fn newest_fitting(capability: i32) -> Option<&'static str> {
    PTX.iter()
        .filter_map(|&(arch, ptx)| {
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
            fits.then_some(((sm, specific), ptx))
        })
        .max_by_key(|&(key, _)| key)
        .map(|(_, ptx)| ptx)
}
