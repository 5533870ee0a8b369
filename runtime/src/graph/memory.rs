//! The plain work a graph runs between kernels: a copy from one bound tensor into another,
//! and a fill of a bound tensor with zeros. Each is checked when it enters the graph and at
//! every update, like a launch's arguments: the tensors are bound into this graph, on its
//! device, contiguous and not empty, the one written was bound for writing, and a copy's two
//! hold the same element type and count and do not overlap.

use cudarc::driver::sys::{self, CUDA_MEMCPY3D, CUDA_MEMSET_NODE_PARAMS, CUmemorytype};
use cudarc::driver::{CudaStream, DriverError};

use super::bound::{Bound, GraphArg};
use super::exec::Params;
use crate::check::TensorMeta;
use crate::device::DeviceId;
use crate::error::Error;
use crate::layout::{first_non_contiguous, numel};

/// A copy or a fill with zeros, as its node runs it: device addresses and a length in
/// bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Memory {
    Copy {
        src: u64,
        dst: u64,
        bytes: usize,
    },
    /// Written in units of `unit` bytes (4, 2 or 1): the widest that divides both the
    /// address and the length, as a memset of wider units is faster.
    Zero {
        dst: u64,
        bytes: usize,
        unit: u32,
    },
}

impl Memory {
    /// A copy of `args` = `[src, dst]`.
    pub(super) fn copy(
        bound: &Bound<'_>,
        args: &[GraphArg],
        device: DeviceId,
    ) -> Result<Memory, Error> {
        let &[src, dst] = args else {
            return Err(count("a copy", "a source and a destination", args));
        };
        let what = || "copying a tensor into another".to_string();
        let (sm, s, sbytes) = region(bound, &src, "source", device, what)?;
        let (dm, d, dbytes) = region(bound, &dst, "destination", device, what)?;
        writable(bound, dst, "destination", what)?;
        let usage = |reason| {
            Err(Error::GraphUsage {
                what: what(),
                reason,
            })
        };
        if sm.dtype != dm.dtype {
            return usage(format!(
                "the source holds {} elements, the destination {}",
                sm.dtype, dm.dtype
            ));
        }
        if sbytes != dbytes {
            return usage(format!(
                "the source holds {} elements ({} {:?}), the destination {} ({} {:?})",
                sbytes / sm.dtype.size(),
                sm.dtype,
                sm.shape,
                dbytes / dm.dtype.size(),
                dm.dtype,
                dm.shape
            ));
        }
        // Same length: the two overlap unless one ends before the other starts.
        if s < d.saturating_add(dbytes as u64) && d < s.saturating_add(sbytes as u64) {
            return usage(format!(
                "the source ({s:#x}, {sbytes} bytes) and the destination ({d:#x}) overlap"
            ));
        }
        Ok(Memory::Copy {
            src: s,
            dst: d,
            bytes: sbytes,
        })
    }

    /// A fill with zeros of `args` = `[dst]`.
    pub(super) fn zero(
        bound: &Bound<'_>,
        args: &[GraphArg],
        device: DeviceId,
    ) -> Result<Memory, Error> {
        let &[dst] = args else {
            return Err(count("a fill with zeros", "one tensor", args));
        };
        let what = || "filling a tensor with zeros".to_string();
        let (_, d, bytes) = region(bound, &dst, "tensor", device, what)?;
        writable(bound, dst, "tensor", what)?;
        let unit = [4u32, 2]
            .into_iter()
            .find(|&u| d.is_multiple_of(u64::from(u)) && bytes.is_multiple_of(u as usize))
            .unwrap_or(1);
        Ok(Memory::Zero {
            dst: d,
            bytes,
            unit,
        })
    }

    /// The same work on other tensors, checked again: how an update makes a node's new work.
    pub(super) fn again(
        &self,
        bound: &Bound<'_>,
        args: &[GraphArg],
        device: DeviceId,
    ) -> Result<Memory, Error> {
        match self {
            Memory::Copy { .. } => Memory::copy(bound, args, device),
            Memory::Zero { .. } => Memory::zero(bound, args, device),
        }
    }

    /// What the node is called in reports, where a kernel node gives its kernel's name.
    pub(super) fn name(&self) -> &'static str {
        match self {
            Memory::Copy { .. } => "copy",
            Memory::Zero { .. } => "zero",
        }
    }

    /// Calls `f` with the node's parameters.
    pub(super) fn with_params<R>(&self, f: impl FnOnce(Params<'_>) -> R) -> R {
        match *self {
            Memory::Copy { src, dst, bytes } => f(Params::Copy(&CUDA_MEMCPY3D {
                srcXInBytes: 0,
                srcY: 0,
                srcZ: 0,
                srcLOD: 0,
                srcMemoryType: CUmemorytype::CU_MEMORYTYPE_DEVICE,
                srcHost: std::ptr::null(),
                srcDevice: src,
                srcArray: std::ptr::null_mut(),
                reserved0: std::ptr::null_mut(),
                srcPitch: 0,
                srcHeight: 0,
                dstXInBytes: 0,
                dstY: 0,
                dstZ: 0,
                dstLOD: 0,
                dstMemoryType: CUmemorytype::CU_MEMORYTYPE_DEVICE,
                dstHost: std::ptr::null_mut(),
                dstDevice: dst,
                dstArray: std::ptr::null_mut(),
                reserved1: std::ptr::null_mut(),
                dstPitch: 0,
                dstHeight: 0,
                // One row of `bytes`: a flat copy.
                WidthInBytes: bytes,
                Height: 1,
                Depth: 1,
            })),
            Memory::Zero { dst, bytes, unit } => f(Params::Memset(&CUDA_MEMSET_NODE_PARAMS {
                dst,
                // Unused for one row.
                pitch: 0,
                value: 0,
                elementSize: unit,
                width: bytes / unit as usize,
                height: 1,
            })),
        }
    }

    /// Runs the node's work directly on `stream`: how a sync-mode replay runs it alone.
    pub(super) fn run_alone(&self, stream: &CudaStream) -> Result<(), DriverError> {
        stream.context().bind_to_thread()?;
        let s = stream.cu_stream();
        // SAFETY: the addresses passed this module's checks when the node was added or
        // last updated, and the tensors they point into are borrowed by the graph.
        unsafe {
            match *self {
                Memory::Copy { src, dst, bytes } => sys::cuMemcpyDtoDAsync_v2(dst, src, bytes, s),
                Memory::Zero { dst, bytes, unit } => match unit {
                    4 => sys::cuMemsetD32Async(dst, 0, bytes / 4, s),
                    2 => sys::cuMemsetD16Async(dst, 0, bytes / 2, s),
                    _ => sys::cuMemsetD8Async(dst, 0, bytes, s),
                },
            }
        }
        .result()
    }
}

/// The error of `args` of the wrong count for `work`.
fn count(work: &str, expected: &str, args: &[GraphArg]) -> Error {
    Error::GraphUsage {
        what: format!("{work} of {} tensors", args.len()),
        reason: format!("it takes {expected}"),
    }
}

/// What the tensor `arg` names is, with its first element's device address and its length
/// in bytes, once it is found bound into this graph (as `role` in the work `what`
/// describes), on `device`, contiguous, inside its buffer and not empty.
fn region<'s>(
    bound: &'s Bound<'_>,
    arg: &'s GraphArg,
    role: &str,
    device: DeviceId,
    what: impl Fn() -> String,
) -> Result<(TensorMeta<'s>, u64, usize), Error> {
    let usage = |reason: String| Error::GraphUsage {
        what: what(),
        reason: format!("the {role} {reason}"),
    };
    if arg.is_logical() {
        return Err(usage("is a logical shape, which holds no elements".into()));
    }
    let m = match bound.meta(arg) {
        Some(m) => m,
        None => {
            return Err(usage(
                "was bound into another graph (a GraphArg belongs to the graph whose read, \
                 write or bind made it)"
                    .into(),
            ));
        }
    };
    if m.device != device {
        return Err(usage(format!("is on {}, the graph on {device}", m.device)));
    }
    if let Some((p, stride)) = first_non_contiguous(m.shape, m.strides) {
        return Err(usage(format!(
            "is not contiguous: shape {:?}, strides {:?} (dimension {p} has stride {}, \
             contiguous would be {stride})",
            m.shape, m.strides, m.strides[p]
        )));
    }
    let n = numel(m.shape).ok_or_else(|| usage(format!("has too many elements: {:?}", m.shape)))?;
    if n == 0 {
        return Err(usage(format!("has no elements: shape {:?}", m.shape)));
    }
    if m.offset.checked_add(n).is_none_or(|end| end > m.buffer_len) {
        return Err(usage(format!(
            "reaches past its buffer: {n} elements from element {} of {}",
            m.offset, m.buffer_len
        )));
    }
    let size = m.dtype.size();
    let bytes = n.checked_mul(size);
    let start = (m.offset as u64)
        .checked_mul(size as u64)
        .and_then(|o| m.base_ptr.checked_add(o));
    match (start, bytes) {
        (Some(start), Some(bytes)) => Ok((m, start, bytes)),
        _ => Err(usage(format!(
            "has an address past 64 bits: {} elements of {} from element {} of {:#x}",
            n, m.dtype, m.offset, m.base_ptr
        ))),
    }
}

/// Refuses a tensor `arg` bound for reading only, where the work writes it.
fn writable(
    bound: &Bound<'_>,
    arg: GraphArg,
    role: &str,
    what: impl Fn() -> String,
) -> Result<(), Error> {
    if bound.writable(arg) {
        return Ok(());
    }
    Err(Error::GraphUsage {
        what: what(),
        reason: format!(
            "the {role} is written, but was bound for reading (bind it with Graph::write)"
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arg::{KernelArg, LogicalShape};
    use crate::borrowed::RawTensor;
    use crate::contract::DType;

    const DEV: DeviceId = DeviceId {
        ordinal: 0,
        context: 0xc0,
    };

    /// A raw view of `shape` with `strides` at element `offset` of a buffer of `len`
    /// elements: metadata only, never launched.
    fn view(
        dtype: DType,
        base: u64,
        len: usize,
        shape: &[usize],
        strides: &[isize],
        offset: usize,
    ) -> RawTensor<'static> {
        // SAFETY: the view is never launched or read: only its metadata is used.
        unsafe { RawTensor::from_raw(base, len, dtype, shape, strides, offset, DEV) }.unwrap()
    }

    fn flat(dtype: DType, base: u64, n: usize) -> RawTensor<'static> {
        view(dtype, base, n, &[n], &[1], 0)
    }

    /// The reason of a [`Error::GraphUsage`], or a panic naming what came instead.
    fn reason(e: Error) -> String {
        match e {
            Error::GraphUsage { reason, .. } => reason,
            e => panic!("expected a graph usage error, got {e}"),
        }
    }

    #[test]
    fn a_copy_runs_over_the_bytes_of_both_views_from_their_first_elements() {
        let x = view(DType::F32, 1 << 40, 64, &[4, 8], &[8, 1], 16);
        let mut y = flat(DType::F32, 2 << 40, 32);
        let mut bound = Bound::new();
        let args = [
            bound.bind(KernelArg::read_raw(&x)),
            bound.bind(KernelArg::write_raw(&mut y)),
        ];
        assert_eq!(
            Memory::copy(&bound, &args, DEV).unwrap(),
            Memory::Copy {
                src: (1 << 40) + 16 * 4,
                dst: 2 << 40,
                bytes: 128
            }
        );
    }

    #[test]
    fn a_copy_between_tensors_of_other_types_or_counts_is_refused_naming_both() {
        let (x, h) = (flat(DType::F32, 1 << 40, 32), flat(DType::F16, 3 << 40, 32));
        let mut y = flat(DType::F32, 2 << 40, 16);
        let mut bound = Bound::new();
        let (xa, ha) = (
            bound.bind(KernelArg::read_raw(&x)),
            bound.bind(KernelArg::read_raw(&h)),
        );
        let ya = bound.bind(KernelArg::write_raw(&mut y));
        let types = reason(Memory::copy(&bound, &[ha, ya], DEV).unwrap_err());
        assert_eq!(types, "the source holds f16 elements, the destination f32");
        let counts = reason(Memory::copy(&bound, &[xa, ya], DEV).unwrap_err());
        assert_eq!(
            counts,
            "the source holds 32 elements (f32 [32]), the destination 16 (f32 [16])"
        );
    }

    #[test]
    fn a_copy_into_a_tensor_bound_for_reading_is_refused() {
        let (x, y) = (flat(DType::I32, 1 << 40, 8), flat(DType::I32, 2 << 40, 8));
        let mut bound = Bound::new();
        let args = [
            bound.bind(KernelArg::read_raw(&x)),
            bound.bind(KernelArg::read_raw(&y)),
        ];
        let e = reason(Memory::copy(&bound, &args, DEV).unwrap_err());
        assert!(
            e.starts_with("the destination is written, but was bound for reading"),
            "{e}"
        );
    }

    #[test]
    fn overlapping_strided_empty_foreign_and_logical_tensors_are_refused() {
        let x = flat(DType::F32, 1 << 40, 64);
        // The second half of x's buffer, seen again: 32 elements from byte 128.
        let mut overlap = flat(DType::F32, (1 << 40) + 128, 32);
        let head = view(DType::F32, 1 << 40, 64, &[32], &[1], 0);
        let strided = view(DType::F32, 1 << 40, 64, &[4, 8], &[16, 1], 0);
        let mut empty = view(DType::F32, 2 << 40, 0, &[0], &[1], 0);
        let other_device = DeviceId {
            ordinal: 1,
            context: 0xc1,
        };
        let mut elsewhere = unsafe {
            // SAFETY: as for `view`.
            RawTensor::from_raw(3 << 40, 32, DType::F32, &[32], &[1], 0, other_device)
        }
        .unwrap();
        let mut bound = Bound::new();
        let xa = bound.bind(KernelArg::read_raw(&x));
        let ha = bound.bind(KernelArg::read_raw(&head));
        let sa = bound.bind(KernelArg::read_raw(&strided));
        let oa = bound.bind(KernelArg::write_raw(&mut overlap));
        let ea = bound.bind(KernelArg::write_raw(&mut empty));
        let la = bound.bind(KernelArg::write_raw(&mut elsewhere));
        let logical = bound.bind(KernelArg::Logical(LogicalShape::new(
            8,
            4,
            2,
            DType::F16,
            DEV,
        )));
        let refused = |args: &[GraphArg]| reason(Memory::copy(&bound, args, DEV).unwrap_err());
        let longer = refused(&[xa, oa]);
        assert!(
            longer.starts_with("the source holds 64 elements"),
            "{longer}"
        );
        // x's first 32 elements end where `overlap` starts: apart.
        assert!(Memory::copy(&bound, &[ha, oa], DEV).is_ok());
        let x_middle = view(DType::F32, 1 << 40, 64, &[32], &[1], 16);
        let mut tail = flat(DType::F32, (1 << 40) + 128, 32);
        let mut other = Bound::new();
        let (ma, ta) = (
            other.bind(KernelArg::read_raw(&x_middle)),
            other.bind(KernelArg::write_raw(&mut tail)),
        );
        let overlapping = reason(Memory::copy(&other, &[ma, ta], DEV).unwrap_err());
        assert!(overlapping.contains("overlap"), "{overlapping}");
        let not_contiguous = refused(&[sa, oa]);
        assert!(
            not_contiguous
                .starts_with("the source is not contiguous: shape [4, 8], strides [16, 1]"),
            "{not_contiguous}"
        );
        assert_eq!(
            reason(Memory::zero(&bound, &[ea], DEV).unwrap_err()),
            "the tensor has no elements: shape [0]"
        );
        let foreign = reason(Memory::zero(&bound, &[la], DEV).unwrap_err());
        assert!(foreign.starts_with("the tensor is on "), "{foreign}");
        assert_eq!(
            reason(Memory::copy(&bound, &[logical, oa], DEV).unwrap_err()),
            "the source is a logical shape, which holds no elements"
        );
        let another_graph = reason(Memory::zero(&other, &[oa], DEV).unwrap_err());
        assert!(
            another_graph.starts_with("the tensor was bound into another graph"),
            "{another_graph}"
        );
        let count = Memory::copy(&bound, &[xa], DEV).unwrap_err();
        assert_eq!(
            count.to_string(),
            "a copy of 1 tensors: it takes a source and a destination"
        );
    }

    #[test]
    fn a_fill_writes_the_widest_units_its_address_and_length_allow() {
        let mut words = flat(DType::F32, 1 << 40, 8);
        let mut halves = view(DType::F16, 1 << 40, 9, &[3], &[1], 1);
        let mut bytes = view(DType::U8, 1 << 40, 9, &[3], &[1], 1);
        let mut bound = Bound::new();
        let w = bound.bind(KernelArg::write_raw(&mut words));
        let h = bound.bind(KernelArg::write_raw(&mut halves));
        let b = bound.bind(KernelArg::write_raw(&mut bytes));
        let zero = |a| Memory::zero(&bound, &[a], DEV).unwrap();
        assert_eq!(
            zero(w),
            Memory::Zero {
                dst: 1 << 40,
                bytes: 32,
                unit: 4
            }
        );
        assert_eq!(
            zero(h),
            Memory::Zero {
                dst: (1 << 40) + 2,
                bytes: 6,
                unit: 2
            }
        );
        assert_eq!(
            zero(b),
            Memory::Zero {
                dst: (1 << 40) + 1,
                bytes: 3,
                unit: 1
            }
        );
    }
}
