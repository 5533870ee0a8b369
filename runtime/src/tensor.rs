//! Device tensors: a cudarc buffer plus the view (shape, strides, offset) a kernel sees.
//!
//! A [`Tensor`] always owns device memory, so a host pointer cannot reach a kernel. Its
//! view is checked when it is made ([`Tensor::with_layout`]) and checked again at every
//! launch ([`crate::check`]), because the checker trusts no metadata it did not compute.

use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DeviceRepr, ValidAsZeroBits};

use crate::check::{DeviceId, TensorMeta};
use crate::contract::DType;
use crate::error::Error;
use crate::layout;

/// An element type a kernel can take, with its spec dtype.
pub trait Element: DeviceRepr + ValidAsZeroBits + Copy + Default + 'static {
    const DTYPE: DType;
}

macro_rules! element {
    ($($t:ty => $d:ident),* $(,)?) => {
        $(impl Element for $t { const DTYPE: DType = DType::$d; })*
    };
}

element! {
    f32 => F32, f64 => F64, half::f16 => F16, half::bf16 => BF16,
    i8 => I8, u8 => U8, i16 => I16, u16 => U16, i32 => I32, u32 => U32, i64 => I64, u64 => U64,
}

/// A strided view of a device buffer of `T`.
#[derive(Debug)]
pub struct Tensor<T> {
    buf: CudaSlice<T>,
    /// Device address of `buf`, read once: it never changes, and reading it again would
    /// need a stream and record a stream-ordering event.
    base_ptr: u64,
    shape: Vec<usize>,
    strides: Vec<isize>,
    offset: usize,
}

impl<T: Element> Tensor<T> {
    /// Copies `data` (row-major, `shape`'s element count) to the device.
    pub fn from_host(stream: &Arc<CudaStream>, data: &[T], shape: &[usize]) -> Result<Self, Error> {
        let n = checked_numel(shape)?;
        if n != data.len() {
            return Err(Error::HostLen {
                shape: shape.to_vec(),
                expected: n,
                actual: data.len(),
            });
        }
        let what = || format!("copying {n} {} elements to the device", T::DTYPE);
        // cudarc cannot allocate 0 bytes; an empty tensor keeps a 1-element buffer.
        let buf = if data.is_empty() {
            stream.alloc_zeros::<T>(1)
        } else {
            stream.clone_htod(data)
        }
        .map_err(Error::driver(what()))?;
        Self::from_slice(buf, shape)
    }

    /// A contiguous tensor with every element `value`.
    pub fn full(stream: &Arc<CudaStream>, value: T, shape: &[usize]) -> Result<Self, Error> {
        let n = checked_numel(shape)?;
        Self::from_host(stream, &vec![value; n], shape)
    }

    /// A contiguous tensor of zeros.
    pub fn zeros(stream: &Arc<CudaStream>, shape: &[usize]) -> Result<Self, Error> {
        let n = checked_numel(shape)?;
        let buf = stream
            .alloc_zeros::<T>(n.max(1))
            .map_err(Error::driver(format!(
                "allocating {n} {} elements",
                T::DTYPE
            )))?;
        Self::from_slice(buf, shape)
    }

    /// Wraps an existing buffer as a contiguous row-major tensor over its first elements.
    pub fn from_slice(buf: CudaSlice<T>, shape: &[usize]) -> Result<Self, Error> {
        let strides = layout::contiguous_strides(shape).ok_or_else(|| Error::Layout {
            reason: "the strides overflow".into(),
            shape: shape.to_vec(),
            strides: vec![],
            offset: 0,
            buffer_len: buf.len(),
        })?;
        let base_ptr = {
            let (ptr, _record) = buf.device_ptr(buf.stream());
            ptr
        };
        let t = Tensor {
            buf,
            base_ptr,
            shape: vec![],
            strides: vec![],
            offset: 0,
        };
        t.with_layout(shape, &strides, 0)
    }

    /// The same buffer seen through another view. Refuses a view that reaches outside the
    /// buffer (negative strides are fine while nothing falls before its start).
    pub fn with_layout(
        self,
        shape: &[usize],
        strides: &[isize],
        offset: usize,
    ) -> Result<Self, Error> {
        let bad = |reason: &str| Error::Layout {
            reason: reason.into(),
            shape: shape.to_vec(),
            strides: strides.to_vec(),
            offset,
            buffer_len: self.buf.len(),
        };
        if shape.len() != strides.len() {
            return Err(bad("shape and strides differ in length"));
        }
        if layout::numel(shape).is_none() {
            return Err(bad("the element count overflows"));
        }
        if offset > self.buf.len() || !layout::fits(shape, strides, offset, self.buf.len()) {
            return Err(bad("the view reaches outside its buffer"));
        }
        Ok(Tensor {
            shape: shape.to_vec(),
            strides: strides.to_vec(),
            offset,
            ..self
        })
    }

    /// Reorders the dimensions: dimension `i` of the result is dimension `perm[i]` of `self`.
    pub fn permute(self, perm: &[usize]) -> Result<Self, Error> {
        let mut seen = vec![false; self.shape.len()];
        let valid = perm.len() == self.shape.len()
            && perm
                .iter()
                .all(|&d| d < seen.len() && !std::mem::replace(&mut seen[d], true));
        if !valid {
            return Err(Error::Layout {
                reason: format!(
                    "{perm:?} is not a permutation of {} dimensions",
                    self.shape.len()
                ),
                shape: self.shape,
                strides: self.strides,
                offset: self.offset,
                buffer_len: self.buf.len(),
            });
        }
        let shape: Vec<usize> = perm.iter().map(|&d| self.shape[d]).collect();
        let strides: Vec<isize> = perm.iter().map(|&d| self.strides[d]).collect();
        let offset = self.offset;
        self.with_layout(&shape, &strides, offset)
    }

    /// Copies the view to the host, in logical row-major order.
    pub fn to_host(&self, stream: &Arc<CudaStream>) -> Result<Vec<T>, Error> {
        let all = stream.clone_dtoh(&self.buf).map_err(Error::driver(format!(
            "copying a {} tensor to the host",
            T::DTYPE
        )))?;
        let n = self.numel();
        let mut out = Vec::with_capacity(n);
        let mut index = vec![0usize; self.shape.len()];
        for _ in 0..n {
            let at = index
                .iter()
                .zip(&self.strides)
                .try_fold(self.offset as i128, |acc, (&i, &s)| {
                    acc.checked_add(i as i128 * s as i128)
                });
            let value = at
                .and_then(|at| usize::try_from(at).ok())
                .and_then(|at| all.get(at));
            let Some(&value) = value else {
                return Err(Error::Internal(
                    "a checked view reached outside its buffer".into(),
                ));
            };
            out.push(value);
            // Advance the row-major multi-index.
            for (i, &extent) in index.iter_mut().zip(&self.shape).rev() {
                *i += 1;
                if *i < extent {
                    break;
                }
                *i = 0;
            }
        }
        Ok(out)
    }

    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// In elements.
    pub fn strides(&self) -> &[isize] {
        &self.strides
    }

    /// Elements from the buffer's start to the view's first element.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// Elements in the view (the buffer may hold more).
    pub fn numel(&self) -> usize {
        // `with_layout` refuses shapes whose element count overflows.
        layout::numel(&self.shape).unwrap_or(usize::MAX)
    }

    /// The underlying buffer.
    pub fn slice(&self) -> &CudaSlice<T> {
        &self.buf
    }

    /// The underlying buffer, for writing through cudarc.
    pub fn slice_mut(&mut self) -> &mut CudaSlice<T> {
        &mut self.buf
    }

    /// What the checker sees of this tensor.
    pub fn meta(&self) -> TensorMeta<'_> {
        TensorMeta {
            dtype: T::DTYPE,
            shape: &self.shape,
            strides: &self.strides,
            offset: self.offset,
            buffer_len: self.buf.len(),
            base_ptr: self.base_ptr,
            device: DeviceId::of(self.buf.context()),
        }
    }
}

fn checked_numel(shape: &[usize]) -> Result<usize, Error> {
    layout::numel(shape).ok_or_else(|| Error::Layout {
        reason: "the element count overflows".into(),
        shape: shape.to_vec(),
        strides: vec![],
        offset: 0,
        buffer_len: 0,
    })
}
