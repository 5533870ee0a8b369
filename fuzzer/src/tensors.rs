//! Synthetic tensors for one case: random data, in every layout the spec allows.
//!
//! A plain argument is contiguous in its physical order (the caller's shape under
//! `stored`). A `strided` one gets a random view ([`plan_layout`]): its dimensions laid
//! out in memory in a random order (a permutation), a slice of a padded buffer (a pitch)
//! starting at an offset, a reversed dimension (negative stride), and, for an input, a
//! broadcast dimension (stride 0). A quantized weight's buffers get random words (any
//! nibble is valid) and random scales. An integer argument with a value contract (a
//! `g_idx`, `values(0 .. V)`) gets entries that keep it: random ones in its range, now and
//! then its sentinel, or ascending runs from its first value to its last.

use std::sync::Arc;

use ima_runtime::cudarc::driver::CudaStream;
use ima_runtime::half::{bf16, f16};
use ima_runtime::{
    DType, DeviceId, DynTensor, Error, KernelArg, KernelContract, LogicalShape, Role, TensorArg,
};

use crate::mutate::Mutation;
use crate::rng::Rng;
use crate::shapes::{Case, STRIDED_SLACK, eval};

/// A view of a buffer: what [`DynTensor::with_layout`] takes, and the buffer's length.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// In physical order (the caller's).
    pub shape: Vec<usize>,
    /// In elements.
    pub strides: Vec<isize>,
    pub offset: usize,
    /// Elements of the buffer.
    pub alloc: usize,
    /// `contiguous`, `permuted, pitched, offset 3`, ...
    pub kind: String,
}

impl Layout {
    /// Row-major over `shape`, at the buffer's start.
    pub fn contiguous(shape: &[usize]) -> Layout {
        let strides = contiguous_strides(shape);
        Layout {
            shape: shape.to_vec(),
            strides,
            offset: 0,
            alloc: shape.iter().product::<usize>().max(1),
            kind: "contiguous".into(),
        }
    }

    /// The buffer length that holds every element the view reaches.
    fn fit(&mut self) {
        let hi: isize = self
            .shape
            .iter()
            .zip(&self.strides)
            .filter(|(_, s)| **s > 0)
            .map(|(&n, &s)| (n as isize - 1) * s)
            .sum();
        self.alloc = self.alloc.max((self.offset as isize + hi + 1) as usize);
    }
}

fn contiguous_strides(shape: &[usize]) -> Vec<isize> {
    let mut strides = vec![0isize; shape.len()];
    let mut acc = 1isize;
    for (s, &n) in strides.iter_mut().zip(shape).rev() {
        *s = acc;
        acc *= n.max(1) as isize;
    }
    strides
}

/// An argument's shape in physical order (as the caller passes it) for `case`.
pub fn physical_shape(a: &TensorArg, case: &Case) -> Vec<usize> {
    a.stored
        .iter()
        .map(|&l| eval(&a.dims[l].expr, &case.symbols, &case.params).unwrap_or(0) as usize)
        .collect()
}

/// A random view of `shape` for a `strided` argument (see the module docs), taking at
/// most twice its elements plus [`STRIDED_SLACK`]; contiguous for any other argument.
pub fn plan_layout(a: &TensorArg, shape: &[usize], rng: &mut Rng) -> Layout {
    if !a.strided || rng.chance(0.2) {
        return Layout::contiguous(shape);
    }
    let r = shape.len();
    let numel: usize = shape.iter().product();
    let width = (a.align / a.dtype.size()).max(1);
    let mut kind = Vec::new();
    // Memory order: base position i holds physical dimension order[i].
    let order = if rng.chance(0.6) {
        rng.permutation(r)
    } else {
        (0..r).collect()
    };
    if order.iter().enumerate().any(|(i, &p)| i != p) {
        kind.push(format!("permuted {order:?}"));
    }
    // Pitch: pad base dimensions while the buffer stays within twice the view.
    let mut padded: Vec<usize> = order.iter().map(|&p| shape[p]).collect();
    let mut pads = vec![0usize; r];
    if rng.chance(0.6) {
        for i in 0..r {
            let pad = rng.range(1, 3) as usize;
            let mut trial = padded.clone();
            trial[i] += pad;
            if rng.chance(0.6) && trial.iter().product::<usize>() <= 2 * numel + 16 {
                padded = trial;
                pads[i] = pad;
            }
        }
        if pads.iter().any(|&p| p > 0) {
            kind.push(format!("pitched {pads:?}"));
        }
    }
    let base = contiguous_strides(&padded);
    let mut strides = vec![0isize; r];
    let mut offset = 0usize;
    for i in 0..r {
        let start = rng.range(0, pads[i] as i64) as usize;
        offset += start * base[i] as usize;
        strides[order[i]] = base[i];
    }
    // A reversed dimension, and for an input a broadcast one.
    for p in 0..r {
        if shape[p] > 1 && rng.chance(0.15) {
            offset += (shape[p] - 1) * strides[p] as usize;
            strides[p] = -strides[p];
            kind.push(format!("reversed dim {p}"));
        } else if a.role == Role::In && shape[p] > 1 && rng.chance(0.1) {
            strides[p] = 0;
            kind.push(format!("broadcast dim {p}"));
        }
    }
    let lead = rng.range(0, 3) as usize;
    offset = (offset + lead).next_multiple_of(width);
    if offset > 0 {
        kind.push(format!("offset {offset}"));
    }
    let mut layout = Layout {
        shape: shape.to_vec(),
        strides,
        offset,
        alloc: padded.iter().product::<usize>().max(1),
        kind: if kind.is_empty() {
            "contiguous".into()
        } else {
            kind.join(", ")
        },
    };
    layout.fit();
    if layout.alloc as u128 > 2 * numel as u128 + STRIDED_SLACK {
        return Layout::contiguous(shape);
    }
    layout
}

/// What the entries of an argument with a value contract hold, under a case's symbols.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ints {
    /// Inclusive bounds.
    pub lo: i64,
    pub hi: i64,
    pub sentinel: Option<i64>,
    /// Ascending along this physical dimension, from `lo` to `hi`.
    pub along: Option<usize>,
}

impl Ints {
    /// `a`'s value contract under `case`; `None` when it has none.
    fn of(a: &TensorArg, case: &Case) -> Option<Ints> {
        let v = a.values?;
        let bound = |e: &ima_runtime::Extent| eval(&e.expr, &case.symbols, &case.params);
        let last = a.dims.len().checked_sub(1)?;
        Some(Ints {
            lo: bound(&v.lo)?,
            hi: bound(&v.hi)? - 1,
            sentinel: v.sentinel,
            along: v
                .ascending
                .then(|| a.stored.iter().position(|&l| l == last).unwrap_or(last)),
        })
    }

    fn entry(&self, rng: &mut Rng) -> i64 {
        match self.sentinel {
            Some(s) if rng.chance(0.125) => s,
            _ => rng.range(self.lo, self.hi),
        }
    }
}

/// The entries of an ascending contract in a contiguous `shape`: along dimension `along`,
/// each run starts at `lo`, ends at `hi` (a run of one entry holds `lo`) and never
/// decreases.
fn ascending_bytes(
    dtype: DType,
    shape: &[usize],
    ints: &Ints,
    along: usize,
    rng: &mut Rng,
) -> Vec<u8> {
    let n: usize = shape.iter().product();
    let len = shape[along];
    let step: usize = shape[along + 1..].iter().product();
    let mut v = vec![0i64; n];
    for start in (0..n).filter(|&i| (i / step).is_multiple_of(len)) {
        let mut run: Vec<i64> = (0..len).map(|_| rng.range(ints.lo, ints.hi)).collect();
        run.sort_unstable();
        run[0] = ints.lo;
        if len > 1 {
            run[len - 1] = ints.hi;
        }
        for (j, x) in run.into_iter().enumerate() {
            v[start + j * step] = x;
        }
    }
    v.iter()
        .flat_map(|x| x.to_le_bytes()[..dtype.size()].to_vec())
        .collect()
}

/// The bytes of a buffer of `layout`: random, keeping `ints` where given.
pub fn buffer_bytes(dtype: DType, layout: &Layout, ints: Option<&Ints>, rng: &mut Rng) -> Vec<u8> {
    // Ascending runs need the buffer to be the view (no mutated layout), with an element
    // at least.
    let contiguous = layout.alloc == layout.shape.iter().product::<usize>();
    match ints {
        Some(i @ Ints { along: Some(p), .. }) if contiguous => {
            ascending_bytes(dtype, &layout.shape, i, *p, rng)
        }
        _ => random_bytes(dtype, layout.alloc, ints, rng),
    }
}

/// `n` random elements of `dtype` as little-endian bytes: floats in [-1, 1), integers of
/// any bits, or entries that keep `ints` when given.
/// Past [`TILE`] elements the first `TILE` repeat: large cases stay quick to make.
pub fn random_bytes(dtype: DType, n: usize, ints: Option<&Ints>, rng: &mut Rng) -> Vec<u8> {
    let mut out = Vec::with_capacity(n * dtype.size());
    for _ in 0..n.min(TILE) {
        let bits = rng.next_u64();
        let x = (bits >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0;
        match (dtype, ints) {
            (_, Some(ints)) => {
                let v = ints.entry(rng).to_le_bytes();
                out.extend_from_slice(&v[..dtype.size()]);
            }
            (DType::F16, None) => out.extend_from_slice(&f16::from_f32(x).to_le_bytes()),
            (DType::BF16, None) => out.extend_from_slice(&bf16::from_f32(x).to_le_bytes()),
            (DType::F32, None) => out.extend_from_slice(&x.to_le_bytes()),
            (DType::F64, None) => out.extend_from_slice(&f64::from(x).to_le_bytes()),
            // fp8: a small value of either sign (exponent below the bias, no NaN).
            (DType::E4M3 | DType::E5M2, None) => out.push((bits as u8) & 0b1011_1111),
            (_, None) => out.extend_from_slice(&bits.to_le_bytes()[..dtype.size()]),
        }
    }
    let tile = out.len();
    while out.len() < n * dtype.size() {
        let more = tile.min(n * dtype.size() - out.len());
        out.extend_from_within(..more);
    }
    out
}

/// Elements drawn at random per buffer; see [`random_bytes`].
pub const TILE: usize = 1 << 20;

/// One argument of a case: a device tensor with its view, or a quantized weight's shape.
#[derive(Debug)]
pub enum Slot {
    Tensor { tensor: DynTensor, layout: Layout },
    Logical(LogicalShape),
}

/// Every argument of one case, in contract order.
#[derive(Debug)]
pub struct CaseTensors {
    pub slots: Vec<Slot>,
}

/// What one argument of a case will be, before any memory: see [`plan`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArgPlan {
    /// A quantized weight's `[K, N, G]` and scales' dtype (as mutated).
    Logical { shape: [usize; 3], dtype: DType },
    /// A tensor: its view, dtype, and what its entries hold where it has a value contract.
    Tensor {
        layout: Layout,
        dtype: DType,
        ints: Option<Ints>,
    },
}

/// Every argument of `case`, with `mutation` applied (negative mode): shapes, dtypes and
/// views, drawn from `rng`. Pure, so the checker can be run on it without a GPU.
pub fn plan(
    c: &KernelContract,
    case: &Case,
    rng: &mut Rng,
    mutation: Option<&Mutation>,
) -> Vec<ArgPlan> {
    let mut out = Vec::with_capacity(c.args.len());
    for (i, a) in c.args.iter().enumerate() {
        let mutation = mutation.filter(|m| m.arg() == i);
        let mut shape = physical_shape(a, case);
        let mut dtype = a.dtype;
        if let Some(m) = mutation {
            m.apply_shape(&mut shape, &mut dtype);
        }
        if a.role == Role::Logical {
            out.push(ArgPlan::Logical {
                shape: [shape[0], shape[1], shape[2]],
                dtype,
            });
            continue;
        }
        let ints = Ints::of(a, case);
        let layout = match mutation {
            Some(m) => m.layout(a, &shape),
            // Ascending runs are written in a contiguous buffer.
            None if ints.as_ref().is_some_and(|i| i.along.is_some()) => Layout::contiguous(&shape),
            None => plan_layout(a, &shape, rng),
        };
        out.push(ArgPlan::Tensor {
            layout,
            dtype,
            ints,
        });
    }
    out
}

/// Builds the tensors of `case` on `stream`, with `mutation` applied (negative mode).
pub fn build(
    stream: &Arc<CudaStream>,
    c: &KernelContract,
    case: &Case,
    rng: &mut Rng,
    mutation: Option<&Mutation>,
) -> Result<CaseTensors, Error> {
    let device = DeviceId::of(stream.context());
    let mut slots = Vec::with_capacity(c.args.len());
    for p in plan(c, case, rng, mutation) {
        match p {
            ArgPlan::Logical {
                shape: [k, n, g],
                dtype,
            } => slots.push(Slot::Logical(LogicalShape::new(k, n, g, dtype, device))),
            ArgPlan::Tensor {
                layout,
                dtype,
                ints,
            } => {
                let bytes = buffer_bytes(dtype, &layout, ints.as_ref(), rng);
                let tensor = DynTensor::from_bytes(stream, dtype, &bytes, &[layout.alloc])?
                    .with_layout(&layout.shape, &layout.strides, layout.offset)?;
                slots.push(Slot::Tensor { tensor, layout });
            }
        }
    }
    Ok(CaseTensors { slots })
}

impl CaseTensors {
    /// The launch's arguments: inputs read, outputs written.
    pub fn kernel_args(&mut self, c: &KernelContract) -> Vec<KernelArg<'_>> {
        self.slots
            .iter_mut()
            .zip(c.args)
            .map(|(slot, a)| match slot {
                Slot::Logical(l) => KernelArg::Logical(*l),
                Slot::Tensor { tensor, .. } => {
                    if a.role == Role::In {
                        KernelArg::read_dyn(tensor)
                    } else {
                        KernelArg::write_dyn(tensor)
                    }
                }
            })
            .collect()
    }

    /// `x: f32[3, 5] strides [1, 3] offset 0 (permuted [1, 0]); ...`, for reports.
    pub fn describe(&self, c: &KernelContract) -> String {
        self.slots
            .iter()
            .zip(c.args)
            .map(|(slot, a)| match slot {
                Slot::Logical(_) => format!("{}: logical", a.name),
                Slot::Tensor { tensor, layout } => format!(
                    "{}: {}{:?} strides {:?} offset {} ({})",
                    a.name,
                    tensor.dtype(),
                    layout.shape,
                    layout.strides,
                    layout.offset,
                    layout.kind
                ),
            })
            .collect::<Vec<_>>()
            .join("; ")
    }
}
