//! Synthetic tensors for one case: random data, in every layout the spec allows.
//!
//! A plain argument is contiguous in its physical order (the caller's shape under
//! `stored`). A `strided` one gets a random view ([`crate::layout::plan_layout`]): its dimensions laid
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

use crate::layout::{Layout, physical_shape, plan_layout};
use crate::mutate::Mutation;
use crate::rng::{Rng, TILE};
use crate::shapes::Case;
use crate::values::{ValuePlan, plant, valid_entries, write_entries};

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
            // fp8: a small value of either sign (exponent at most the bias: magnitude below 2;
            // no NaN).
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
