//! Which device and context a tensor, stream or launch belongs to: a leaf that the error
//! types (violation.rs) name without depending on the rest of device.rs.

use std::fmt;

use cudarc::driver::CudaContext;

/// A device as the driver names it: the ordinal and the context handle (`CUcontext` as
/// an integer). Two tensors on one GPU but in different contexts cannot share pointers,
/// so both are compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DeviceId {
    pub ordinal: usize,
    pub context: usize,
}

impl DeviceId {
    /// The device and context of `ctx` (a stream's, or a buffer's).
    pub fn of(ctx: &CudaContext) -> Self {
        DeviceId {
            ordinal: ctx.ordinal(),
            context: ctx.cu_ctx() as usize,
        }
    }
}

impl fmt::Display for DeviceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "device {} (context {:#x})", self.ordinal, self.context)
    }
}
