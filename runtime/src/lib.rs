//! imac's runtime: device tensors, the one launch-contract checker, NVRTC compilation,
//! module loading and checked kernel launches.
//!
//! Generated launch stubs hold a `static` [`KernelContract`] per kernel and call
//! [`Kernel::launch`], which runs [`check()`] on every argument before anything reaches the
//! GPU. The runtime knows nothing of the spec language: a vendored crate needs only this
//! crate and cudarc.

// Lets unit tests share the integration tests' contracts (`tests/common`), which name
// the crate as users do.
#[cfg(test)]
extern crate self as ima_runtime;

mod abi;
mod address;
mod arg;
mod borrowed;
mod capacity;
pub mod check;
pub mod checked;
pub mod compile;
pub mod contiguous;
pub mod contract;
mod cubin;
pub mod device;
mod device_id;
pub mod doctor;
mod dyn_tensor;
mod element;
pub mod env_mode;
pub mod error;
pub mod graph;
mod index_value;
pub mod kernel;
mod kernel_args;
mod layout;
pub mod locate;
pub mod module;
pub mod nvrtc_log;
mod out_of_bounds;
mod programmatic;
mod ptx_cache;
mod record;
pub mod shipped;
pub mod tensor;
mod tensor_map;
mod thread_safe;
mod validate;
pub mod version;
mod view;
pub mod violation;

pub use cudarc;
pub use float8::{F8E4M3, F8E5M2};
pub use half;

pub use arg::{DeviceTensor, DeviceTensorMut, KernelArg, LogicalShape, ReadTensor, WriteTensor};
pub use borrowed::{RawTensor, TensorView, TensorViewMut};
pub use check::{GRID_THREADS, IndexWidth, Plan, TensorMeta, check};
pub use checked::{Access, CheckedMode, OutOfBounds};
pub use compile::{
    Compiled, arch_for, compile_cuda, compile_ptx_checked, is_real_architecture, nvrtc_version,
};
pub use contract::{
    BinOp, Binding, Constraint, DType, EmptyPolicy, EvalError, Expr, Extent, KernelContract,
    Launch, Param, Resident, Role, SHARED_ALIGN, Scalar, SharedArray, Symbol, TensorArg, TmaBox,
    TmaLayout, ValueContract,
};
pub use device::{DeviceId, DeviceLimits, context};
pub use dyn_tensor::DynTensor;
pub use element::Element;
pub use error::Error;
pub use graph::{Graph, GraphArg};
pub use index_value::{IndexValue, ValueFault};
pub use kernel::{Kernel, Launched};
pub use kernel_args::KernelArgs;
pub use locate::{CudaRoot, candidate_roots, find_root, nvrtc};
pub use module::Module;
pub use shipped::{ShippedImage, load_shipped};
pub use tensor::Tensor;
pub use thread_safe::assert_send_sync;
pub use validate::validate_values;
pub use version::{driver_present, driver_version};
pub use violation::{Bound, LaunchError, SharedUse, StrideFault, Violation};

pub mod quant;
pub use quant::{
    BufferShape, Checkpoint, CheckpointError, CheckpointLayer, HostQWeight, QWeight, QuantError,
    QuantFormat, QuantHost, QuantScale, QuantSpec, QuantTensor, Shaped, ZeroStyle,
    dequant_reference, quantize_awq, quantize_gptq, quantize_int8, validate_g_idx,
};
