//! Where a checked launch leaves its violation record, and how the host learns of it.
//!
//! The record (`ImaRecord` in codegen/include/ima.cuh, [`ViolationRecord`] here) lives
//! in device memory, where every violating thread counts itself with an atomic. The thread
//! that fills it then raises a flag in mapped host memory (page-locked and written by the
//! kernel over the bus). A clean launch leaves the flag down, so the host learns that from
//! one read of its own memory: no copy back, and for a deferred report no wait either.
//! Only a violation costs a copy.

use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DriverError, result, sys};

use crate::address::device_address;
use crate::checked::ViolationRecord;

/// A violation record on the device with its flag on the host.
#[derive(Debug)]
pub(crate) struct Record {
    /// Dropped first: its drop waits for the context's work, so that the device record is
    /// freed after every launch that may write it, on whatever stream (cudarc's read event
    /// orders the free after the last stream's only; the kernel writes the record through
    /// a pointer it was passed as read).
    flag: MappedFlag,
    device: CudaSlice<u8>,
}

impl Record {
    pub(crate) fn new(stream: &Arc<CudaStream>) -> Result<Record, DriverError> {
        let flag = MappedFlag::new(stream.context())?;
        let device = stream.clone_htod(&clean_image(flag.device))?;
        Ok(Record { flag, device })
    }

    /// What the kernel receives.
    pub(crate) fn device(&self) -> &CudaSlice<u8> {
        &self.device
    }

    /// The record's device address, for a kernel node's parameters (a graph,
    /// runtime/src/graph/node.rs), which the driver copies and cudarc's events do not see: the
    /// graph orders its own use of the record (it waits for its last replay before it reads
    /// or frees one).
    pub(crate) fn address(&self) -> u64 {
        device_address(&self.device, self.device.stream())
    }

    /// The stream the record was made on.
    pub(crate) fn stream(&self) -> &Arc<CudaStream> {
        self.device.stream()
    }

    /// A launch using this record has filled it. Once those launches are finished, a
    /// lowered flag means none did.
    pub(crate) fn raised(&self) -> bool {
        self.flag.is_raised()
    }

    /// The record, if a launch filled it, which is then made clean again. Only once every
    /// launch using it has finished: the copy back is not ordered after them.
    pub(crate) fn take(&mut self) -> Result<Option<ViolationRecord>, DriverError> {
        if !self.raised() {
            return Ok(None);
        }
        let stream = self.device.stream().clone();
        let found = ViolationRecord::parse(&stream.clone_dtoh(&self.device)?);
        stream.memcpy_htod(&clean_image(self.flag.device), &mut self.device)?;
        stream.synchronize()?;
        self.flag.lower();
        Ok(found)
    }
}

/// A record with no violation that raises the flag at `flag` when filled.
fn clean_image(flag: u64) -> [u8; ViolationRecord::BYTES] {
    let mut image = [0u8; ViolationRecord::BYTES];
    image[ViolationRecord::FLAG..ViolationRecord::FLAG + 8].copy_from_slice(&flag.to_le_bytes());
    image
}

/// One `u32` of page-locked host memory mapped into the device's address space.
#[derive(Debug)]
struct MappedFlag {
    host: *mut u32,
    device: u64,
    ctx: Arc<CudaContext>,
}

// SAFETY: the host pointer is only read and written with volatile accesses of a `u32`, the
// writes through `&mut self`, and the allocation lives until drop.
unsafe impl Send for MappedFlag {}
unsafe impl Sync for MappedFlag {}

impl MappedFlag {
    fn new(ctx: &Arc<CudaContext>) -> Result<MappedFlag, DriverError> {
        ctx.bind_to_thread()?;
        // SAFETY: a 4-byte allocation, written before anything reads it.
        let host = unsafe { result::malloc_host(4, sys::CU_MEMHOSTALLOC_DEVICEMAP) }?.cast::<u32>();
        // SAFETY: `host` is a fresh, aligned allocation of 4 bytes.
        unsafe { host.write_volatile(0) };
        // Owned from here on, so that an error below frees it.
        let mut flag = MappedFlag {
            host,
            device: 0,
            ctx: ctx.clone(),
        };
        // SAFETY: `host` was allocated with CU_MEMHOSTALLOC_DEVICEMAP in this context.
        unsafe { sys::cuMemHostGetDevicePointer_v2(&mut flag.device, host.cast(), 0) }.result()?;
        Ok(flag)
    }

    fn is_raised(&self) -> bool {
        // SAFETY: see the `Send` impl.
        unsafe { self.host.read_volatile() != 0 }
    }

    fn lower(&mut self) {
        // SAFETY: see the `Send` impl.
        unsafe { self.host.write_volatile(0) }
    }
}

impl Drop for MappedFlag {
    fn drop(&mut self) {
        // A kernel still running may yet raise the flag: free it only after the context's
        // work is done. Errors have nowhere to go from a drop.
        let _ = self.ctx.synchronize();
        // SAFETY: allocated by `malloc_host`, freed once.
        let _ = unsafe { result::free_host(self.host.cast()) };
    }
}
