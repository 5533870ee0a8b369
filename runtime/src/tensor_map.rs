//! TMA tensor maps: what a kernel's `tma(ROWS, COLS)` argument receives besides its pointer
//! and strides, encoded at launch from the same checked view (`cuTensorMapEncodeTiled`).
//!
//! The map gives the TMA unit the tensor's true extents, so a box that reaches past them
//! is zero-filled by the hardware and nothing outside the tensor is read: the bounds a
//! tile load needs travel with the map, not with the body's arithmetic.

use cudarc::driver::sys;

use crate::check::{TensorMeta, view_address};
use crate::contract::{DType, KernelContract, Role, TensorArg, TmaBox, TmaLayout};
use crate::error::Error;

/// A `CUtensorMap`: 128 opaque bytes, passed by value as a kernel's
/// `const __grid_constant__ ImaTensorMap` (codegen/include/ima.cuh).
#[repr(C, align(64))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TensorMap(pub [u64; 16]);

// SAFETY: 128 plain bytes with the layout of the CUDA type, passed by value.
unsafe impl cudarc::driver::DeviceRepr for TensorMap {}

/// The TMA element type of `dtype`.
fn data_type(dtype: DType) -> sys::CUtensorMapDataType {
    use sys::CUtensorMapDataType::*;
    match dtype {
        DType::F16 => CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
        DType::BF16 => CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
        DType::F32 => CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
        DType::F64 => CU_TENSOR_MAP_DATA_TYPE_FLOAT64,
        DType::I32 => CU_TENSOR_MAP_DATA_TYPE_INT32,
        DType::U32 => CU_TENSOR_MAP_DATA_TYPE_UINT32,
        DType::I64 => CU_TENSOR_MAP_DATA_TYPE_INT64,
        DType::U64 => CU_TENSOR_MAP_DATA_TYPE_UINT64,
        DType::I16 | DType::U16 => CU_TENSOR_MAP_DATA_TYPE_UINT16,
        // Bytes: the TMA unit copies them whatever they mean.
        DType::U8 | DType::I8 | DType::E4M3 | DType::E5M2 => CU_TENSOR_MAP_DATA_TYPE_UINT8,
    }
}

/// The group size G of the quantized argument whose buffer is contract argument `arg`:
/// its logical `[K, N, G]` argument is the nearest before it.
pub(crate) fn quant_group(
    c: &KernelContract,
    metas: &[TensorMeta<'_>],
    arg: usize,
) -> Option<usize> {
    let logical = (0..arg).rev().find(|&i| c.args[i].role == Role::Logical)?;
    metas[logical].shape.get(2).copied()
}

/// The tensor map of `arg` of kernel `kernel`, whose view `meta` passed the launch's checks:
/// row-major (the checker allows `tma` only without `stored` or `strided`), its address and
/// row strides multiples of 16 bytes (align(16), and a last extent the constraints prove a
/// multiple of 16 bytes; a quantized argument's buffers are contiguous, and their rows
/// 16-byte multiples: qweight's and the scales' as N is a multiple of 8, the zeros' as the
/// checker adds N % 32 == 0). Boxes of `b.rows` x `b.cols` in `b.layout`, zeros outside.
///
/// A quantized argument's scales and zeros (`TmaLayout::Groups`) have boxes of
/// `b.rows / group` rows, not swizzled: `group` is the argument's G, which the launch's checks made a
/// divisor of `b.rows` (the constraints `quant_tma_constraints` adds, dsl/src/abi.rs).
///
/// An empty tensor gets a map of zeros, which no load uses: the accessor loads nothing
/// from an empty tensor (ima.cuh's `ima_tma_load`), since the driver encodes no map of
/// an extent 0.
pub(crate) fn encode(
    kernel: &str,
    arg: &TensorArg,
    meta: &TensorMeta<'_>,
    b: TmaBox,
    group: Option<usize>,
) -> Result<TensorMap, Error> {
    let fail =
        |reason: String| Error::Internal(format!("{kernel}: {}'s tensor map: {reason}", arg.name));
    if meta.shape.contains(&0) {
        return Ok(TensorMap([0; 16]));
    }
    let dtype = data_type(arg.dtype);
    let rank = meta.shape.len();
    let size = arg.dtype.size() as u64;
    // Innermost first, as the driver takes them; a coordinate is an i32 in the kernel. The
    // strides are the row-major ones of the shape: the view's equal them wherever they
    // matter, and a dimension of extent 1 (whose stride the layout checks ignore, and a
    // caller may have set to anything) is never stepped over.
    let mut dims = [1u64; 5];
    let mut strides = [0u64; 4];
    let mut boxes = [1u32; 5];
    let mut reach = size;
    for (i, &n) in meta.shape.iter().rev().enumerate() {
        if n > i32::MAX as usize {
            return Err(fail(format!(
                "dimension {} has {n} elements, past a TMA coordinate's 2^31",
                rank - 1 - i
            )));
        }
        dims[i] = n as u64;
        if i > 0 {
            strides[i - 1] = reach;
        }
        reach *= n as u64;
    }
    let (rows, swizzle) = match b.layout {
        TmaLayout::Groups => {
            let g = group
                .filter(|&g| g > 0 && (b.rows as usize).is_multiple_of(g))
                .ok_or_else(|| {
                    fail(format!(
                        "a box of groups of {} rows of K with group size {group:?}",
                        b.rows
                    ))
                })?;
            (
                (b.rows as usize / g) as u32,
                sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_NONE,
            )
        }
        TmaLayout::Plain => (b.rows, sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_NONE),
        TmaLayout::Swizzled => (b.rows, sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_128B),
    };
    boxes[0] = b.cols;
    boxes[1] = rows;
    let elements = [1u32; 5];
    let mut map = std::mem::MaybeUninit::<sys::CUtensorMap>::uninit();
    // SAFETY: every array holds at least `rank` entries (the strides `rank - 1`); the
    // address is the view's first element, inside its live buffer (checked), and the map
    // is written by the call before it is read.
    let result = unsafe {
        sys::cuTensorMapEncodeTiled(
            map.as_mut_ptr(),
            dtype,
            rank as u32,
            view_address(meta) as *mut std::ffi::c_void,
            dims.as_ptr(),
            strides.as_ptr(),
            boxes.as_ptr(),
            elements.as_ptr(),
            sys::CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
            swizzle,
            sys::CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
            sys::CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
        )
    };
    result.result().map_err(|e| {
        fail(format!(
            "cuTensorMapEncodeTiled of dims {dims:?}, byte strides {strides:?}, box {boxes:?}: {e}"
        ))
    })?;
    // SAFETY: written by the successful call above.
    Ok(TensorMap(unsafe { map.assume_init() }.opaque))
}
