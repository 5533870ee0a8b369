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

    /// NVRTC refused the source; `log` is its full output.
    #[error("NVRTC failed to compile {file}:\n{log}")]
    Nvrtc { file: String, log: String },

    /// NVRTC compiled the source but warned; CI treats warnings as errors.
    #[error("NVRTC warned while compiling {file}:\n{log}")]
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

    /// The driver cannot load PTX this new: NVRTC is newer than the driver.
    #[error(
        "the CUDA driver (version {}.{}) is older than the NVRTC that compiled {file} ({}) \
         and cannot load its PTX; update the driver or compile with an NVRTC no newer than it",
        .driver.0, .driver.1,
        .nvrtc.map_or("version unknown".to_string(), |(a, b)| format!("version {a}.{b}"))
    )]
    PtxTooNew {
        file: String,
        driver: (i32, i32),
        nvrtc: Option<(i32, i32)>,
    },

    /// A kernel's entry point is missing from its module, or cannot be used.
    #[error("kernel {kernel}: entry point {entry} of {file}: {reason}")]
    Entry {
        kernel: &'static str,
        entry: &'static str,
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

    /// A value the checker guaranteed did not hold: a bug in imac.
    #[error("internal error (a bug in imac): {0}")]
    Internal(String),
}

impl Error {
    /// A driver error, with what was being done.
    pub(crate) fn driver(what: impl Into<String>) -> impl FnOnce(DriverError) -> Error {
        let what = what.into();
        move |source| Error::Driver { what, source }
    }
}
