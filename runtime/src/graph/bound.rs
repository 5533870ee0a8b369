//! The tensors bound into a graph, and [`GraphArg`], the handle its launches name them by.
//!
//! A graph borrows each tensor once, for its whole life, as an input (`&'a`) or as a
//! tensor it may write (`&'a mut`); launches then name it by handle, any number of times.
//! One tensor can so be written by one node and read by the next, which two Rust borrows
//! held side by side would not allow.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use cudarc::driver::{CudaStream, SyncOnDrop};
use smallvec::SmallVec;

use crate::arg::{KernelArg, LogicalShape, elements_from_bytes};
use crate::capacity::ARGS;
use crate::check::TensorMeta;
use crate::error::Error;
use crate::layout;
use crate::tensor::Element;
use crate::view::View;

/// Tells graphs apart, so that a handle of one graph is refused by another.
static NEXT_GRAPH: AtomicU64 = AtomicU64::new(0);

/// An argument of a graph's launch: a tensor bound into that graph
/// ([`crate::Graph::read`], [`crate::Graph::write`], [`crate::Graph::bind`]), or a
/// quantized weight's logical shape. Cheap to copy; pass the same handle to every launch
/// that uses the tensor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GraphArg(Slot);

impl GraphArg {
    /// A quantized weight's logical shape, which holds no elements.
    pub(super) fn is_logical(self) -> bool {
        matches!(self.0, Slot::Logical(_))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    Tensor {
        graph: u64,
        index: usize,
    },
    /// Entry `index` of [`Bound::reshaped`]: a bound tensor seen through another shape.
    Reshaped {
        graph: u64,
        index: usize,
    },
    Logical(LogicalShape),
}

/// A contiguous bound tensor seen as another row-major shape of as many elements.
struct Reshaped {
    /// Index of the tensor in [`Bound::tensors`].
    tensor: usize,
    view: View,
}

/// The tensors a graph borrows, each once: inputs as [`KernelArg::Read`], tensors it may
/// write as [`KernelArg::Write`].
pub(super) struct Bound<'a> {
    graph: u64,
    tensors: Vec<KernelArg<'a>>,
    reshaped: Vec<Reshaped>,
}

impl std::fmt::Debug for Bound<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let metas: Vec<TensorMeta<'_>> = self.tensors.iter().map(KernelArg::meta).collect();
        f.debug_struct("Bound")
            .field("graph", &self.graph)
            .field("tensors", &metas)
            .finish()
    }
}

impl<'a> Bound<'a> {
    pub(super) fn new() -> Self {
        Bound {
            graph: NEXT_GRAPH.fetch_add(1, Ordering::Relaxed),
            tensors: Vec::new(),
            reshaped: Vec::new(),
        }
    }

    pub(super) fn bind(&mut self, arg: KernelArg<'a>) -> GraphArg {
        if let KernelArg::Logical(shape) = arg {
            return GraphArg(Slot::Logical(shape));
        }
        self.tensors.push(arg);
        GraphArg(Slot::Tensor {
            graph: self.graph,
            index: self.tensors.len() - 1,
        })
    }

    /// A handle to the tensor `arg` names (bound here, contiguous) seen as the row-major
    /// `shape`, of as many elements, from the same first element: a `[B, H, D]` output read
    /// as the `[B, H * D]` input of the next launch. Reads and writes through it are the
    /// tensor's own (it was bound once, for the access it was bound for).
    pub(super) fn reshape(&mut self, arg: GraphArg, shape: &[usize]) -> Result<GraphArg, Error> {
        let usage = |reason: String| Error::GraphUsage {
            what: format!("reshaping a graph's tensor to {shape:?}"),
            reason,
        };
        let tensor = match (arg.0, self.tensor_index(arg)) {
            (_, Some(index)) => index,
            (Slot::Logical(_), _) => return Err(usage("a logical shape holds no elements".into())),
            _ => return Err(usage("the tensor was bound into another graph".into())),
        };
        let meta = self.tensors[tensor].meta();
        if let Some((dim, stride)) = layout::first_non_contiguous(meta.shape, meta.strides) {
            return Err(usage(format!(
                "its view {:?} is not contiguous: stride[{dim}] is {}, expected {stride}",
                meta.shape, meta.strides[dim]
            )));
        }
        let (from, to) = (layout::numel(meta.shape), layout::numel(shape));
        if from != to {
            return Err(usage(format!(
                "it has shape {:?}, {from:?} elements, and {shape:?} has {to:?}",
                meta.shape
            )));
        }
        let strides = layout::contiguous_strides(shape)
            .ok_or_else(|| usage("the strides overflow".into()))?;
        let view = View::new(shape, &strides, meta.offset, meta.buffer_len)?;
        self.reshaped.push(Reshaped { tensor, view });
        Ok(GraphArg(Slot::Reshaped {
            graph: self.graph,
            index: self.reshaped.len() - 1,
        }))
    }

    /// Tensors bound so far.
    pub(super) fn len(&self) -> usize {
        self.tensors.len()
    }

    /// Unbinds the tensors bound after the first `len`, whose handles were never given
    /// out: how a refused launch that bound its own tensors leaves the graph as it was.
    pub(super) fn truncate(&mut self, len: usize) {
        self.tensors.truncate(len);
    }

    /// The tensor `arg` names (a reshaped handle: the tensor it reshapes), if it was
    /// bound here.
    fn tensor(&self, arg: GraphArg) -> Option<&KernelArg<'a>> {
        self.tensors.get(self.tensor_index(arg)?)
    }

    /// The index in `tensors` of the tensor `arg` names, if it was bound here.
    fn tensor_index(&self, arg: GraphArg) -> Option<usize> {
        match arg.0 {
            Slot::Tensor { graph, index } if graph == self.graph => Some(index),
            Slot::Reshaped { graph, index } if graph == self.graph => {
                Some(self.reshaped.get(index)?.tensor)
            }
            _ => None,
        }
    }

    /// What the checker sees of `arg`; `None` for a tensor of another graph.
    pub(super) fn meta<'s>(&'s self, arg: &'s GraphArg) -> Option<TensorMeta<'s>> {
        match &arg.0 {
            Slot::Logical(shape) => Some(shape.meta()),
            Slot::Tensor { .. } => self.tensor(*arg).map(KernelArg::meta),
            Slot::Reshaped { index, .. } => {
                // `tensor` refuses another graph's handle; this graph's index is valid.
                let m = self.tensor(*arg)?.meta();
                let view = &self.reshaped[*index].view;
                Some(view.meta(m.dtype, m.buffer_len, m.base_ptr, m.device))
            }
        }
    }

    /// The device memory of the buffer under the tensor `arg` names, whole (a view's
    /// elements may lie anywhere in it), as a range of addresses; `None` for a logical
    /// shape or another graph's tensor.
    pub(super) fn buffer_bytes(&self, arg: GraphArg) -> Option<std::ops::Range<u64>> {
        let m = self.tensor(arg)?.meta();
        let bytes = (m.buffer_len as u64).saturating_mul(m.dtype.size() as u64);
        Some(m.base_ptr..m.base_ptr.saturating_add(bytes))
    }

    /// `arg` was bound for writing.
    pub(super) fn writable(&self, arg: GraphArg) -> bool {
        self.tensor(arg).is_some_and(|t| !t.is_read_only())
    }

    /// Orders a replay on `stream` as a launch is ordered (crate::kernel, "Lifetimes"):
    /// `stream` waits for each tensor's pending writes (and, for a tensor bound for
    /// writing, its pending reads), and the guards, dropped once the replay is enqueued,
    /// record the replay as each tensor's latest read or write, so that a launch on
    /// another stream waits for it and a tensor's free is ordered after it.
    pub(super) fn order<'s>(
        &'s mut self,
        stream: &'s CudaStream,
    ) -> SmallVec<[SyncOnDrop<'s>; ARGS]> {
        self.tensors
            .iter_mut()
            .filter_map(|t| match t {
                KernelArg::Read(t) => Some(t.read_ptr(stream).1),
                KernelArg::Write(t) => Some(t.write_ptr(stream).1),
                KernelArg::Logical(_) => None,
            })
            .collect()
    }

    /// The elements of the tensor `arg` names, copied to the host on `stream` in the
    /// row-major order of its shape, after its pending writes (a replay's included).
    pub(super) fn to_host<T: Element>(
        &self,
        arg: GraphArg,
        stream: &Arc<CudaStream>,
    ) -> Result<Vec<T>, Error> {
        let what = || format!("reading a graph's tensor as {}", T::DTYPE);
        let usage = |reason: String| Error::GraphUsage {
            what: what(),
            reason,
        };
        let t = match (arg.0, self.tensor(arg)) {
            (_, Some(KernelArg::Read(t))) => &**t,
            (_, Some(KernelArg::Write(t))) => &**t as &dyn crate::arg::DeviceTensor,
            (Slot::Logical(_), _) => {
                return Err(usage("a logical shape holds no elements".into()));
            }
            _ => {
                return Err(usage("the tensor was bound into another graph".into()));
            }
        };
        let dtype = t.meta().dtype;
        if dtype != T::DTYPE {
            return Err(usage(format!("it holds {dtype}")));
        }
        let bytes = t.to_host_bytes(stream)?;
        elements_from_bytes(&bytes).ok_or_else(|| {
            Error::Internal(format!(
                "{} bytes of {dtype} elements are no whole number of them",
                bytes.len()
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::borrowed::RawTensor;
    use crate::contract::DType;
    use crate::device::DeviceId;

    const DEV: DeviceId = DeviceId {
        ordinal: 0,
        context: 0xc0,
    };

    /// A contiguous raw view of `n` elements: metadata only, never launched.
    fn raw(dtype: DType, n: usize, base: u64) -> RawTensor<'static> {
        // SAFETY: the view is never launched or read: only its metadata is used.
        unsafe { RawTensor::from_raw(base, n, dtype, &[n], &[1], 0, DEV) }.unwrap()
    }

    #[test]
    fn a_bound_tensor_is_named_by_its_handle_with_the_access_it_was_bound_for() {
        let (x, mut y) = (raw(DType::F32, 64, 1 << 40), raw(DType::F32, 32, 2 << 40));
        let mut bound = Bound::new();
        let xa = bound.bind(KernelArg::read_raw(&x));
        let ya = bound.bind(KernelArg::write_raw(&mut y));
        let shape = GraphArg(Slot::Logical(LogicalShape::new(8, 4, 2, DType::F16, DEV)));
        assert_eq!(
            bound.bind(KernelArg::Logical(LogicalShape::new(
                8,
                4,
                2,
                DType::F16,
                DEV
            ))),
            shape
        );
        assert_eq!(
            bound.meta(&xa).map(|m| (m.shape[0], m.base_ptr)),
            Some((64, 1 << 40))
        );
        assert_eq!(
            bound.meta(&ya).map(|m| (m.shape[0], m.base_ptr)),
            Some((32, 2 << 40))
        );
        assert_eq!(
            bound.meta(&shape).map(|m| m.shape.to_vec()),
            Some(vec![8, 4, 2])
        );
        assert!(!bound.writable(xa));
        assert!(bound.writable(ya));
        assert!(!bound.writable(shape));
    }

    #[test]
    fn a_handle_of_another_graph_names_nothing() {
        let x = raw(DType::I32, 16, 1 << 40);
        let (mut one, mut other) = (Bound::new(), Bound::new());
        let xa = one.bind(KernelArg::read_raw(&x));
        other.bind(KernelArg::read_raw(&x));
        assert!(one.meta(&xa).is_some());
        // Same index, another graph.
        assert_eq!(other.meta(&xa), None);
        assert!(!other.writable(xa));
    }

    #[test]
    fn a_reshaped_handle_names_the_same_tensor_through_another_shape() {
        let mut y = raw(DType::F16, 24, 3 << 40);
        let x = raw(DType::F16, 24, 4 << 40);
        let mut bound = Bound::new();
        let ya = bound.bind(KernelArg::write_raw(&mut y));
        let xa = bound.bind(KernelArg::read_raw(&x));
        let y3 = bound.reshape(ya, &[2, 3, 4]).unwrap();
        let m = bound.meta(&y3).unwrap();
        assert_eq!(
            (m.shape, m.strides, m.base_ptr),
            (&[2, 3, 4][..], &[12, 4, 1][..], 3 << 40)
        );
        assert!(bound.writable(y3));
        // A reshape of a reshape is one of the tensor; an input stays read-only.
        let y2 = bound.reshape(y3, &[6, 4]).unwrap();
        assert_eq!(bound.meta(&y2).unwrap().shape, &[6, 4]);
        let x2 = bound.reshape(xa, &[4, 6]).unwrap();
        assert!(!bound.writable(x2));
        let e = bound.reshape(ya, &[5, 5]).unwrap_err().to_string();
        assert!(e.contains("24") && e.contains("25"), "{e}");
        let other = Bound::new().reshape(ya, &[24]).unwrap_err().to_string();
        assert!(other.contains("another graph"), "{other}");
    }

    #[test]
    fn a_strided_tensor_is_not_reshaped() {
        // SAFETY: metadata only, as `raw`.
        let t = unsafe { RawTensor::from_raw(5 << 40, 16, DType::F32, &[4, 2], &[4, 1], 0, DEV) }
            .unwrap();
        let mut bound = Bound::new();
        let ta = bound.bind(KernelArg::read_raw(&t));
        let e = bound.reshape(ta, &[8]).unwrap_err().to_string();
        assert!(
            e.contains("not contiguous") && e.contains("stride[0] is 4, expected 2"),
            "{e}"
        );
    }
}
