//! Synthetic tensors for one case: random data, in every layout the spec allows.
//!
//! A plain argument is contiguous in its physical order (the caller's shape under
//! `stored`). A `strided` one gets a random view ([`plan_layout`]): its dimensions laid
//! out in memory in a random order (a permutation), a slice of a padded buffer (a pitch)
//! starting at an offset, a reversed dimension (negative stride), and, for an input, a
//! broadcast dimension (stride 0). A quantized weight's buffers get random words (any
//! nibble is valid) and random scales. An argument with a value contract (a `g_idx`'s
//! groups too) gets entries that keep it ([`crate::values`]), or one that breaks it.

use std::sync::Arc;

use ima_runtime::cudarc::driver::CudaStream;
use ima_runtime::half::{bf16, f16};
use ima_runtime::{
    DType, DeviceId, DynTensor, Error, KernelArg, KernelContract, LogicalShape, Role, TensorArg,
};

use crate::mutate::Mutation;
use crate::rng::Rng;
use crate::shapes::{Case, STRIDED_SLACK, eval};
use crate::values::{ValuePlan, plant, valid_entries, write_entries};

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

/// `n` random elements of `dtype` as little-endian bytes: floats in [-1, 1), integers of
/// any bits. Past [`TILE`] elements the first `TILE` repeat: large cases stay quick to make.
pub fn random_bytes(dtype: DType, n: usize, rng: &mut Rng) -> Vec<u8> {
    let mut out = Vec::with_capacity(n * dtype.size());
    for _ in 0..n.min(TILE) {
        let bits = rng.next_u64();
        let x = (bits >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0;
        match dtype {
            DType::F16 => out.extend_from_slice(&f16::from_f32(x).to_le_bytes()),
            DType::BF16 => out.extend_from_slice(&bf16::from_f32(x).to_le_bytes()),
            DType::F32 => out.extend_from_slice(&x.to_le_bytes()),
            DType::F64 => out.extend_from_slice(&f64::from(x).to_le_bytes()),
            // fp8: a small value of either sign (exponent below the bias, no NaN).
            DType::E4M3 | DType::E5M2 => out.push((bits as u8) & 0b1011_1111),
            _ => out.extend_from_slice(&bits.to_le_bytes()[..dtype.size()]),
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

/// The entry a `--negative` case broke: where (one index per logical dimension) and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Planted {
    pub arg: usize,
    pub position: Vec<i64>,
    pub value: i64,
}

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
    /// The entry a value mutation broke.
    pub planted: Option<Planted>,
}

/// What one argument of a case will be, before any memory: see [`plan`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArgPlan {
    /// A quantized weight's `[K, N, G]` and scales' dtype (as mutated).
    Logical { shape: [usize; 3], dtype: DType },
    /// A tensor: its view, dtype, and its value contract where it has one.
    Tensor {
        layout: Layout,
        dtype: DType,
        values: Option<ValuePlan>,
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
        let layout = match mutation {
            Some(m) => m.layout(a, &shape),
            None => plan_layout(a, &shape, rng),
        };
        out.push(ArgPlan::Tensor {
            layout,
            dtype,
            values: ValuePlan::of(a, case),
        });
    }
    out
}

/// Builds the tensors of `case` on `stream`, with `mutation` applied (negative mode);
/// `None` when the case admits no valid entries for an argument's value contract (an
/// empty range over a non-empty tensor), so that there is nothing to launch.
pub fn build(
    stream: &Arc<CudaStream>,
    c: &KernelContract,
    case: &Case,
    rng: &mut Rng,
    mutation: Option<&Mutation>,
) -> Result<Option<CaseTensors>, Error> {
    let device = DeviceId::of(stream.context());
    let mut slots = Vec::with_capacity(c.args.len());
    let mut planted = None;
    for (i, p) in plan(c, case, rng, mutation).into_iter().enumerate() {
        match p {
            ArgPlan::Logical {
                shape: [k, n, g],
                dtype,
            } => slots.push(Slot::Logical(LogicalShape::new(k, n, g, dtype, device))),
            ArgPlan::Tensor {
                layout,
                dtype,
                values,
            } => {
                let mut bytes = random_bytes(dtype, layout.alloc, rng);
                if let Some(v) = values.filter(|_| dtype.is_integer()) {
                    let a = &c.args[i];
                    let last = a.stored.iter().position(|&l| l + 1 == a.dims.len());
                    let last = last.unwrap_or(0);
                    let Some(mut entries) = valid_entries(&v, &layout.shape, last, rng) else {
                        return Ok(None);
                    };
                    if let Some(bad) = mutation.and_then(|m| m.bad_value(i)) {
                        let (at, value) =
                            plant(bad, &v, dtype, &mut entries, &layout.shape, last, rng);
                        planted = Some(Planted {
                            arg: i,
                            position: logical_position(a, &layout.shape, at),
                            value,
                        });
                    }
                    write_entries(&mut bytes, dtype, &layout, &entries);
                }
                let tensor = DynTensor::from_bytes(stream, dtype, &bytes, &[layout.alloc])?
                    .with_layout(&layout.shape, &layout.strides, layout.offset)?;
                slots.push(Slot::Tensor { tensor, layout });
            }
        }
    }
    Ok(Some(CaseTensors { slots, planted }))
}

/// The logical position of row-major index `i` of a view of `shape` (physical order).
fn logical_position(a: &TensorArg, shape: &[usize], i: usize) -> Vec<i64> {
    let mut position = vec![0i64; shape.len()];
    let mut rest = i;
    for p in (0..shape.len()).rev() {
        let n = shape[p].max(1);
        position[a.stored[p]] = (rest % n) as i64;
        rest /= n;
    }
    position
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
