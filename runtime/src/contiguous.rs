//! Device-side `contiguous()`: a strided view copied into a new row-major buffer by a small
//! gather kernel, compiled with NVRTC and loaded once per context (through the on-disk
//! cache, as a spec's module) and kept for the process.
//!
//! The `contiguous` method of every tensor ([`Tensor`], [`TensorView`], [`TensorViewMut`],
//! [`DynTensor`], [`RawTensor`]) is defined here, above the tensor types, which know
//! nothing of the gather kernel.

use std::sync::{Arc, Mutex};

use cudarc::driver::{
    CudaFunction, CudaModule, CudaSlice, CudaStream, DeviceRepr, LaunchConfig, PushKernelArg,
};

use crate::arg::DeviceTensor;
use crate::borrowed::{RawTensor, TensorView, TensorViewMut};
use crate::dyn_tensor::DynTensor;
use crate::element::Element;
use crate::error::Error;
use crate::module::Module;
use crate::tensor::Tensor;
use crate::view::checked_numel;

/// The most dimensions a view may have for a device-side copy (this file's `ImaGather`; a
/// limit of its own, as large as a spec's argument's, `ima_contract::MAX_RANK`).
pub const MAX_RANK: usize = 8;

const SOURCE: &str = r#"
struct ImaGather { long long shape[8]; long long strides[8]; };
template <typename W>
__device__ void ima_gather(W* dst, const W* src, long long n, int rank, const ImaGather& g) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        long long rest = i, at = 0;
        for (int d = rank - 1; d >= 0; --d) {
            long long e = g.shape[d];
            at += (rest % e) * g.strides[d];
            rest /= e;
        }
        dst[i] = src[at];
    }
}
extern "C" __global__ void ima_gather_1(unsigned char* d, const unsigned char* s, long long n, int r, ImaGather g) { ima_gather(d, s, n, r, g); }
extern "C" __global__ void ima_gather_2(unsigned short* d, const unsigned short* s, long long n, int r, ImaGather g) { ima_gather(d, s, n, r, g); }
extern "C" __global__ void ima_gather_4(unsigned int* d, const unsigned int* s, long long n, int r, ImaGather g) { ima_gather(d, s, n, r, g); }
extern "C" __global__ void ima_gather_8(unsigned long long* d, const unsigned long long* s, long long n, int r, ImaGather g) { ima_gather(d, s, n, r, g); }
"#;

#[repr(C)]
#[derive(Clone, Copy)]
struct Gather {
    shape: [i64; MAX_RANK],
    strides: [i64; MAX_RANK],
}

// SAFETY: a plain `repr(C)` struct of integers, laid out as the kernel's `ImaGather`.
unsafe impl DeviceRepr for Gather {}

/// Gather modules loaded so far, by context handle.
static MODULES: Mutex<Vec<(usize, Arc<CudaModule>)>> = Mutex::new(Vec::new());

fn module(stream: &Arc<CudaStream>) -> Result<Arc<CudaModule>, Error> {
    let ctx = stream.context();
    let key = ctx.cu_ctx() as usize;
    let mut modules = MODULES.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, m)) = modules.iter().find(|(k, _)| *k == key) {
        return Ok(m.clone());
    }
    // As a spec's module: NVRTC's SASS, kept in the user's cache between processes.
    let m = Module::compile(ctx, "ima_gather.cu", SOURCE)?
        .cuda_module()
        .clone();
    modules.push((key, m.clone()));
    Ok(m)
}

fn function(stream: &Arc<CudaStream>, size: usize) -> Result<CudaFunction, Error> {
    module(stream)?
        .load_function(&format!("ima_gather_{size}"))
        .map_err(Error::driver("loading a gather kernel"))
}

/// Copies the view `src` into `dst` (row-major, at least the view's element count) on
/// `stream`, whose context must be the view's.
fn gather<T>(
    stream: &Arc<CudaStream>,
    src: &dyn DeviceTensor,
    dst: &mut CudaSlice<T>,
) -> Result<(), Error> {
    let meta = src.meta();
    let fail = |reason: &str| Error::Layout {
        reason: reason.into(),
        shape: meta.shape.to_vec(),
        strides: meta.strides.to_vec(),
        offset: meta.offset,
        buffer_len: meta.buffer_len,
    };
    if meta.shape.len() > MAX_RANK {
        return Err(fail("a device-side copy takes at most 8 dimensions"));
    }
    if meta.device != crate::DeviceId::of(stream.context()) {
        return Err(fail("the view is not in the stream's context"));
    }
    let size = meta.dtype.size();
    // The gather loads whole elements: a misaligned one faults the context (a raw view's
    // address is its maker's, checked by nothing before).
    if !meta.base_ptr.is_multiple_of(size as u64) {
        return Err(fail(
            "the view's address is not a multiple of its element size",
        ));
    }
    let n = crate::layout::numel(meta.shape).ok_or_else(|| fail("the element count overflows"))?;
    if n == 0 {
        return Ok(());
    }
    let (have, need) = (dst.len().checked_mul(size_of::<T>()), n.checked_mul(size));
    if !matches!((have, need), (Some(have), Some(need)) if have >= need) {
        return Err(Error::Internal(
            "a gather's destination is too short".into(),
        ));
    }
    let mut g = Gather {
        shape: [1; MAX_RANK],
        strides: [0; MAX_RANK],
    };
    for (d, (&e, &s)) in meta.shape.iter().zip(meta.strides).enumerate() {
        g.shape[d] = e as i64;
        g.strides[d] = s as i64;
    }
    let f = function(stream, size)?;
    let (n, rank) = (n as i64, meta.shape.len() as i32);
    let (base, guard) = src.read_ptr(stream);
    let first = base + (meta.offset * size) as u64;
    let blocks = ((n as u64).div_ceil(256)).min(1 << 20) as u32;
    let mut b = stream.launch_builder(&f);
    b.arg(&mut *dst).arg(&first).arg(&n).arg(&rank).arg(&g);
    // SAFETY: the kernel takes (W*, const W*, long long, int, ImaGather) with W of the
    // dtype's size; it writes elements 0..n of `dst`, which holds at least n of them, and
    // reads the view's elements, which the view's constructor kept inside its buffer.
    let launched = unsafe {
        b.launch(LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        })
    };
    drop(guard);
    launched
        .map(drop)
        .map_err(Error::driver("launching a device-side copy"))
}

/// A contiguous row-major copy of the view `src` (of `T` elements), made on the device.
fn contiguous<T: Element>(
    stream: &Arc<CudaStream>,
    src: &dyn DeviceTensor,
) -> Result<Tensor<T>, Error> {
    let meta = src.meta();
    if meta.dtype != T::DTYPE {
        return Err(Error::Internal(format!(
            "a {} view copied as {}",
            meta.dtype,
            T::DTYPE
        )));
    }
    let shape = meta.shape.to_vec();
    let n = checked_numel(&shape, size_of::<T>())?;
    // SAFETY: every element the tensor's view covers is written by the gather before the
    // stream runs anything else; an empty tensor's one element is never read.
    let mut buf = unsafe { stream.alloc::<T>(n.max(1)) }.map_err(Error::driver(format!(
        "allocating {n} {} elements",
        T::DTYPE
    )))?;
    gather(stream, src, &mut buf)?;
    Tensor::from_slice(buf, &shape)
}

/// A contiguous row-major copy of the view `src`, as bytes, made on the device.
fn contiguous_bytes(
    stream: &Arc<CudaStream>,
    src: &dyn DeviceTensor,
) -> Result<CudaSlice<u8>, Error> {
    let meta = src.meta();
    let n = checked_numel(meta.shape, meta.dtype.size())?;
    let bytes = n.max(1) * meta.dtype.size();
    // SAFETY: as in `contiguous`.
    let mut buf = unsafe { stream.alloc::<u8>(bytes) }.map_err(Error::driver(format!(
        "allocating {n} {} elements",
        meta.dtype
    )))?;
    gather(stream, src, &mut buf)?;
    Ok(buf)
}

impl<T: Element> Tensor<T> {
    /// A contiguous copy of the view, made on the device on `stream` (a row-major tensor of
    /// the view's shape, in a new buffer).
    pub fn contiguous(&self, stream: &Arc<CudaStream>) -> Result<Tensor<T>, Error> {
        contiguous(stream, self)
    }
}

impl<T: Element> TensorView<'_, T> {
    /// A contiguous copy of the view in a new owned tensor, made on the device on `stream`.
    pub fn contiguous(&self, stream: &Arc<CudaStream>) -> Result<Tensor<T>, Error> {
        contiguous(stream, self)
    }
}

impl<T: Element> TensorViewMut<'_, T> {
    /// A contiguous copy of the view in a new owned tensor, made on the device on `stream`.
    pub fn contiguous(&self, stream: &Arc<CudaStream>) -> Result<Tensor<T>, Error> {
        contiguous(stream, self)
    }
}

impl DynTensor {
    /// A contiguous copy of the view, made on the device on `stream`.
    pub fn contiguous(&self, stream: &Arc<CudaStream>) -> Result<DynTensor, Error> {
        let buf = contiguous_bytes(stream, self)?;
        DynTensor::from_slice(self.dtype(), buf, self.shape())
    }
}

impl RawTensor<'_> {
    /// A contiguous copy of the view in a new owned tensor, made on the device on
    /// `stream` (of the view's context).
    pub fn contiguous(&self, stream: &Arc<CudaStream>) -> Result<DynTensor, Error> {
        let buf = contiguous_bytes(stream, self)?;
        DynTensor::from_slice(self.dtype(), buf, self.shape())
    }
}

#[cfg(test)]
mod tests {
    use super::SOURCE;
    use crate::compile::{arch_for, compile_cuda};

    /// What `Module::compile` asks NVRTC for on an H200 (and on an earlier device):
    /// every element size's entry point, and the SASS it loads. NVRTC only, no GPU; fails
    /// (never skips) without a toolkit, as runtime/tests/nvrtc.rs does.
    #[test]
    fn the_gather_kernels_compile_with_sass() {
        for (major, minor) in [(9, 0), (8, 0)] {
            let arch = arch_for(major, minor);
            let compiled =
                compile_cuda(SOURCE, "ima_gather.cu", &arch).unwrap_or_else(|e| panic!("{e}"));
            for size in [1, 2, 4, 8] {
                let entry = format!(".entry ima_gather_{size}(");
                assert!(compiled.ptx.contains(&entry), "{arch}: no {entry}");
            }
            assert_eq!(compiled.cubin.get(..4), Some(&b"\x7fELF"[..]), "{arch}");
        }
    }
}
