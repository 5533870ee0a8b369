//! imac's runtime: device tensors, the one launch-contract checker, NVRTC compilation,
//! module loading and checked kernel launches.
//!
//! Generated launch stubs hold a `static` [`KernelContract`] per kernel and call
//! [`Kernel::launch`], which runs [`check`] on every argument before anything reaches the
//! GPU. The runtime knows nothing of the spec language: a vendored crate needs only this
//! crate and cudarc.

pub mod check;
pub mod compile;
pub mod contract;
pub mod error;
pub mod kernel;
mod layout;
pub mod locate;
pub mod module;
pub mod tensor;
pub mod violation;

pub use cudarc;
pub use half;

pub use check::{DeviceId, GRID_THREADS, IndexWidth, Plan, TensorMeta, check};
pub use compile::{Compiled, compile_ptx, compile_ptx_checked, nvrtc_version};
pub use contract::{
    BinOp, Binding, Constraint, DType, EmptyPolicy, EvalError, Expr, Extent, KernelContract,
    Launch, Param, Role, Scalar, Symbol, TensorArg,
};
pub use error::Error;
pub use kernel::{DeviceTensor, Kernel, KernelArg, Launched};
pub use locate::{CudaRoot, candidate_roots, find_root, nvrtc};
pub use module::Module;
pub use tensor::{Element, Tensor};
pub use violation::{Bound, LaunchError, StrideFault, Violation};
