//! The device a launch runs on: which one it is, and the limits the checker holds a
//! launch to.
//!
//! [`DeviceLimits`] is read from the driver once, when a module is loaded, and passed to
//! the pure [`crate::check()`], which therefore needs no GPU to be tested.

use std::sync::Arc;

use cudarc::driver::CudaContext;
use cudarc::driver::sys::CUdevice_attribute as Attr;

use crate::error::Error;
use crate::version::driver_present;

/// A context on device `ordinal`. cudarc's `CudaContext::new` panics where the dynamic
/// loader finds no driver library; this asks first and returns [`Error::NoDriver`].
pub fn context(ordinal: usize) -> Result<Arc<CudaContext>, Error> {
    if !driver_present() {
        return Err(Error::NoDriver);
    }
    CudaContext::new(ordinal).map_err(Error::driver(format!(
        "opening a context on device {ordinal}"
    )))
}

pub use crate::device_id::DeviceId;

/// What one device allows a launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DeviceLimits {
    /// Most blocks along each grid dimension (x, y, z).
    pub grid: [u32; 3],
    /// Most threads along each block dimension (x, y, z).
    pub block: [u32; 3],
    /// Most dynamic shared memory one block may use, in bytes: the device's opt-in
    /// maximum (`CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN`), less the static
    /// shared memory of the kernel when a [`crate::Kernel`] holds it.
    pub shared_bytes: u32,
    /// Streaming multiprocessors: with an entry point's blocks per SM, how many blocks of
    /// a `resident` grid the device holds at once.
    pub sms: u32,
}

impl DeviceLimits {
    /// An H100 SXM's or H200's limits (sm_90, 132 SMs), for checking and generating
    /// launches without a GPU.
    pub const SM_90: DeviceLimits = DeviceLimits {
        grid: [i32::MAX as u32, 65535, 65535],
        block: [1024, 1024, 64],
        shared_bytes: 227 * 1024,
        sms: 132,
    };

    /// The limits of `ctx`'s device.
    pub fn of(ctx: &CudaContext) -> Result<Self, Error> {
        let read = |attr: Attr| -> Result<u32, Error> {
            let value = ctx
                .attribute(attr)
                .map_err(Error::driver(format!("reading the device's {attr:?}")))?;
            // The driver never reports a negative limit; treat one as no room at all.
            Ok(u32::try_from(value).unwrap_or(0))
        };
        Ok(DeviceLimits {
            grid: [
                read(Attr::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X)?,
                read(Attr::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y)?,
                read(Attr::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z)?,
            ],
            block: [
                read(Attr::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X)?,
                read(Attr::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y)?,
                read(Attr::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z)?,
            ],
            shared_bytes: read(Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)?,
            sms: read(Attr::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
        })
    }
}
