//! Where a synthetic tensor's elements lie: contiguous in physical order, or, for a
//! `strided` argument, a random view of a padded buffer ([`plan_layout`]). The mutations
//! (mutate.rs) and the tensors (tensors.rs) both read it.

use ima_runtime::{Role, TensorArg};

use crate::rng::Rng;
use crate::shapes::{Case, STRIDED_SLACK, eval};

/// A view of a buffer: what [`ima_runtime::DynTensor::with_layout`] takes, and the buffer's
/// length.
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
