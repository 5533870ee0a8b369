//! The runtime as the stubs in `lib.rs` see it: `ima_runtime`, with a [`Module`] that loads
//! what imac compiled ahead of time when it fits the device (the SASS of the device's own
//! architecture, else PTX), and compiles the CUDA C with NVRTC otherwise.

pub use ima_runtime::*;

use ima_runtime::cudarc::driver::CudaContext;
use std::sync::Arc;

/// What imac compiled for each architecture named with `--arch`: the PTX, and the SASS
/// NVRTC assembled from it.
{%- if archs.is_empty() %}
pub const IMAGES: &[ShippedImage] = &[];
{%- else %}
pub const IMAGES: &[ShippedImage] = &[
{%- for arch in archs %}
    ShippedImage {
        arch: "{{ arch }}",
        ptx: include_str!("ptx/{{ arch }}.ptx"),
        cubin: include_bytes!("cubin/{{ arch }}.cubin"),
    },
{%- endfor %}
];
{%- endif %}

/// A kernel of the module reads a `tma` argument or runs in clusters, which only PTX for
/// sm_90a has.
const NEEDS_SM90A: bool = {{ needs_sm90a }};

/// Loads the stubs' module.
pub struct Module;

impl Module {
    /// Loads the shipped image that fits the device (`ima_runtime::shipped::fitting`: the
    /// SASS of its major version, so that the driver compiles nothing, or else PTX, which
    /// runs on later GPUs too); compiles `source` with NVRTC when none fits.
    pub fn compile(
        ctx: &Arc<CudaContext>,
        file: &str,
        source: &str,
    ) -> Result<ima_runtime::Module, Error> {
        load_shipped(ctx, file, IMAGES, NEEDS_SM90A)
            .unwrap_or_else(|| ima_runtime::Module::compile(ctx, file, source))
    }
}
