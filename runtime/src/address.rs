//! A cudarc buffer's device address, read without telling cudarc of a use.
//!
//! A tensor reads its buffer's address once, when it is made, to check and pass it later.
//! cudarc keeps one read event a buffer, and the guard `DevicePtr::device_ptr` returns
//! records it again, on the stream given, when it is dropped. Dropped here it would replace
//! the record of a kernel still reading the buffer on another stream by the buffer's own
//! stream's tail: the buffer's free, or the next launch that writes it, would wait for the
//! wrong work and could run under that kernel. Reading an address uses nothing, so the
//! guard is forgotten; it holds only references, so nothing leaks. A launch reads the
//! buffer again with its guard kept (runtime/src/arg.rs), which records the kernel.

use cudarc::driver::{CudaStream, DevicePtr};

/// `buf`'s device address; `stream`, the buffer's own, first waits on its last write, as
/// cudarc's `device_ptr` does.
pub(crate) fn device_address<T>(buf: &impl DevicePtr<T>, stream: &CudaStream) -> u64 {
    let (ptr, record) = buf.device_ptr(stream);
    std::mem::forget(record);
    ptr
}
