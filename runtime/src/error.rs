//! The runtime's one error type.
//!
//! Every failure names what was being done (which kernel, which file, which tensor) and
//! carries what the underlying library said, so that no caller needs to add context to
//! make it actionable.

use std::path::PathBuf;

use cudarc::driver::DriverError;

use crate::violation::LaunchError;

#[derive(Debug, Clone, thiserror::Error)]
pub enum Error {
    /// The arguments of a launch break the kernel's contract; nothing was launched.
    #[error(transparent)]
    Launch(#[from] LaunchError),

    /// A CUDA driver call failed.
    #[error("CUDA driver error while {what}: {source}")]
    Driver {
        /// What was being done: `launching attn_scores`, `copying a tensor to the host`.
        what: String,
        source: DriverError,
    },

    /// NVRTC refused the source; `log` is its full output (shown with each message once).
    #[error("NVRTC failed to compile {file}:\n{}", crate::nvrtc_log::condense(.log))]
    Nvrtc { file: String, log: String },

    /// [`crate::Module::precompile`] could not write its entry into the cache directory.
    #[error("cannot write the PTX and SASS of {file} into {}: {message}", .dir.display())]
    CacheWrite {
        file: String,
        dir: PathBuf,
        message: String,
    },

    /// NVRTC compiled the source but warned; CI treats warnings as errors.
    #[error("NVRTC warned while compiling {file}:\n{}", crate::nvrtc_log::condense(.log))]
    NvrtcWarnings { file: String, log: String },

    /// A CUDA toolkit piece was found nowhere.
    #[error(
        "{what} not found; looked in:\n{}\nset IMA_CUDA_ROOT to a CUDA toolkit (or to the \
         site-packages/nvidia/cu13 folder of the nvidia-cuda-nvrtc and nvidia-cuda-runtime \
         wheels)",
        .looked.iter().map(|p| format!("  {}", p.display())).collect::<Vec<_>>().join("\n")
    )]
    CudaNotFound {
        what: &'static str,
        looked: Vec<PathBuf>,
    },

    /// A library that was found could not be loaded.
    #[error("cannot load {}: {message}", .path.display())]
    LibraryLoad { path: PathBuf, message: String },

    /// The driver cannot load PTX this new: NVRTC (or whatever made the PTX) is newer than
    /// the driver.
    #[error("{}", ptx_too_new(file, *driver, *nvrtc, nvrtc_path.as_deref()))]
    PtxTooNew {
        file: String,
        /// The CUDA version the driver supports.
        driver: (i32, i32),
        /// NVRTC's version, when NVRTC made the PTX here.
        nvrtc: Option<(i32, i32)>,
        nvrtc_path: Option<PathBuf>,
    },

    /// The dynamic loader finds no CUDA driver library.
    #[error(
        "no CUDA driver: the dynamic loader finds no libcuda.so; install the NVIDIA driver, \
         or add the folder holding libcuda.so to LD_LIBRARY_PATH"
    )]
    NoDriver,

    /// A kernel's entry point is missing from its module, or cannot be used.
    #[error("kernel {kernel}: entry point {entry} of {file}: {reason}")]
    Entry {
        kernel: &'static str,
        entry: String,
        file: String,
        reason: String,
    },

    /// Data for a tensor does not match its shape.
    #[error("host data has {actual} elements, but shape {shape:?} needs {expected}")]
    HostLen {
        shape: Vec<usize>,
        expected: usize,
        actual: usize,
    },

    /// Bytes for an untyped tensor do not match its dtype and shape.
    #[error(
        "host data has {actual} bytes, but {dtype} elements of shape {shape:?} need {expected}"
    )]
    HostBytes {
        dtype: crate::contract::DType,
        shape: Vec<usize>,
        expected: usize,
        actual: usize,
    },

    /// A shape, stride list, offset or permutation that describes no valid view.
    #[error(
        "invalid view: {reason} (shape {shape:?}, strides {strides:?}, offset {offset}, \
         buffer of {buffer_len} elements)"
    )]
    Layout {
        reason: String,
        shape: Vec<usize>,
        strides: Vec<isize>,
        offset: usize,
        buffer_len: usize,
    },

    /// A launch in sync mode, or the synchronisation after it, reported a CUDA error: the
    /// fault is this kernel's (with these argument shapes).
    #[error("kernel {kernel} failed with {shapes}: {error}")]
    KernelFault {
        kernel: &'static str,
        shapes: String,
        error: DriverError,
    },

    /// Checked mode caught an out-of-bounds access; it was skipped, and the context is
    /// healthy.
    #[error("{0}")]
    OutOfBounds(Box<crate::out_of_bounds::OutOfBounds>),

    /// An entry of an index tensor breaks its value contract. Found by the kernel that
    /// read it (in every mode: it was not used as an address, and the context is
    /// healthy), or by [`crate::validate_values`] on the host.
    #[error("{0}")]
    IndexValue(Box<crate::index_value::IndexValue>),

    /// Checked mode is on, but the module has no `_checked` entry points for this kernel
    /// (a hand-written module, not one imac generated).
    #[error("{kernel}: checked mode is on, but the module has no checked entry points for it")]
    NoCheckedVariant { kernel: &'static str },

    /// A node of a [`crate::Graph`] failed: its checks at capture or at an update (the graph
    /// is unchanged), a report of its checked or value-contract record after a replay, or
    /// a fault of its kernel in a sync-mode replay. `source` is the error a direct launch
    /// of the kernel would return, naming its arguments; `kernel` is `copy` or `zero` for
    /// a copy or fill node.
    #[error("graph node {node} ({kernel}): {source}")]
    InGraph {
        node: usize,
        kernel: &'static str,
        source: Box<Error>,
    },

    /// A replay of a graph failed on the device, outside sync mode: the context is
    /// poisoned, and the driver does not say which node faulted.
    #[error(
        "a replay of the graph of {kernels} failed: {error}; replay it in sync mode \
         (Graph::set_sync, or IMA_SYNC=1 at capture) to find the node"
    )]
    GraphFault { kernels: String, error: DriverError },

    /// A graph was asked for a node or a tensor it does not hold, or for a tensor's data
    /// as another element type.
    #[error("{what}: {reason}")]
    GraphUsage { what: String, reason: String },

    /// A value the checker guaranteed did not hold: a bug in imac.
    #[error("internal error (a bug in imac): {0}")]
    Internal(String),

    /// Quantized-weight buffers that describe no valid weight.
    #[error(transparent)]
    Quant(#[from] crate::quant::QuantError),
}

/// Which of the two to change, with both versions.
fn ptx_too_new(
    file: &str,
    (dmaj, dmin): (i32, i32),
    nvrtc: Option<(i32, i32)>,
    path: Option<&std::path::Path>,
) -> String {
    match nvrtc {
        Some((nmaj, nmin)) => {
            let at = path.map_or(String::new(), |p| format!(" at {}", p.display()));
            format!(
                "the CUDA driver supports CUDA {dmaj}.{dmin}, older than NVRTC {nmaj}.{nmin}{at}, \
                 so it cannot load the PTX of {file}; update the NVIDIA driver to one for CUDA \
                 {nmaj}.{nmin} or newer, or set IMA_CUDA_ROOT to a CUDA toolkit no newer than \
                 {dmaj}.{dmin}"
            )
        }
        None => format!(
            "the CUDA driver supports CUDA {dmaj}.{dmin} and cannot load the PTX of {file}, \
             which a newer CUDA compiled; update the NVIDIA driver, or recompile with a CUDA \
             toolkit no newer than {dmaj}.{dmin}"
        ),
    }
}

impl Error {
    /// A driver error, with what was being done.
    pub(crate) fn driver(what: impl Into<String>) -> impl FnOnce(DriverError) -> Error {
        let what = what.into();
        move |source| Error::Driver { what, source }
    }
}
