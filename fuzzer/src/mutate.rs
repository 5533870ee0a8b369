//! `--negative`: one wrong dimension, rank, dtype, stride, alignment or aliasing per case,
//! which the checker must refuse with the matching [`Violation`]; or an index entry outside
//! its value contract, which `validate` must name and the kernel must report or never read.

use ima_runtime::{DType, KernelContract, Role, StrideFault, TensorArg, Violation};

use crate::layout::{Layout, physical_shape};
use crate::rng::Rng;
use crate::shapes::Case;
use crate::values::{BadValue, ValuePlan, bad_values};

/// One mutation of one argument (by contract index).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mutation {
    /// Physical dimension `pos` off by `delta`; never a dimension that binds a symbol.
    Dim { arg: usize, pos: usize, delta: i64 },
    /// A trailing dimension of 1 more.
    Rank { arg: usize },
    /// Another element type.
    DType { arg: usize, to: DType },
    /// A non-contiguous stride at `pos` for an argument that must be contiguous.
    Stride { arg: usize, pos: usize },
    /// The view one element past an aligned address.
    Align { arg: usize },
    /// Stride 0 at `pos` for a written `strided` argument: its elements alias.
    SelfOverlap { arg: usize, pos: usize },
    /// One entry of an index tensor outside its value contract: host validation must name
    /// it, and the kernel must report it or never read it.
    Value { arg: usize, bad: BadValue },
}

/// Element types to swap in: another of the same size where there is one.
fn other_dtype(d: DType, rng: &mut Rng) -> DType {
    let same: Vec<DType> = DType::ALL
        .into_iter()
        .filter(|&o| o != d && o.size() == d.size())
        .collect();
    if same.is_empty() {
        *rng.pick(&[DType::F32, DType::I32])
    } else {
        *rng.pick(&same)
    }
}

impl Mutation {
    pub fn arg(&self) -> usize {
        match *self {
            Mutation::Dim { arg, .. }
            | Mutation::Rank { arg }
            | Mutation::DType { arg, .. }
            | Mutation::Stride { arg, .. }
            | Mutation::Align { arg }
            | Mutation::SelfOverlap { arg, .. }
            | Mutation::Value { arg, .. } => arg,
        }
    }

    /// How this mutation breaks argument `arg`'s entries, if it does.
    pub fn bad_value(&self, arg: usize) -> Option<BadValue> {
        match *self {
            Mutation::Value { arg: a, bad } if a == arg => Some(bad),
            _ => None,
        }
    }

    /// A random mutation that the contract makes wrong for `case`, or `None` when the
    /// kernel offers none (every argument's every dimension binds a symbol, and so on).
    pub fn choose(c: &KernelContract, case: &Case, rng: &mut Rng) -> Option<Mutation> {
        let mut kinds: Vec<Vec<Mutation>> = vec![Vec::new(); 7];
        for (i, a) in c.args.iter().enumerate() {
            let shape = physical_shape(a, case);
            for (p, &l) in a.stored.iter().enumerate() {
                let binds = c
                    .symbols
                    .iter()
                    .any(|s| s.bound_by.arg == i && s.bound_by.dim == l);
                if !binds {
                    let delta = if shape[p] > 1 && rng.chance(0.5) {
                        -1
                    } else {
                        1
                    };
                    kinds[0].push(Mutation::Dim {
                        arg: i,
                        pos: p,
                        delta,
                    });
                }
            }
            let other = if a.dtype == DType::F32 {
                DType::I32
            } else {
                DType::F32
            };
            kinds[2].push(Mutation::DType {
                arg: i,
                to: if rng.chance(0.5) {
                    other_dtype(a.dtype, rng)
                } else {
                    other
                },
            });
            if a.role == Role::Logical {
                continue;
            }
            kinds[1].push(Mutation::Rank { arg: i });
            for (p, &n) in shape.iter().enumerate() {
                if n > 1 && !a.strided {
                    kinds[3].push(Mutation::Stride { arg: i, pos: p });
                }
                if n > 1 && a.strided && a.role.writes() {
                    kinds[5].push(Mutation::SelfOverlap { arg: i, pos: p });
                }
            }
            if a.align > a.dtype.size() {
                kinds[4].push(Mutation::Align { arg: i });
            }
            if let Some(v) = ValuePlan::of(a, case) {
                for bad in bad_values(&v, a.dtype, a.dims.len(), &shape) {
                    kinds[6].push(Mutation::Value { arg: i, bad });
                }
            }
        }
        kinds.retain(|k| !k.is_empty());
        if kinds.is_empty() {
            return None;
        }
        let kind = rng.pick(&kinds);
        Some(rng.pick(kind).clone())
    }

    /// The shape and dtype the mutated argument is built with.
    pub fn apply_shape(&self, shape: &mut Vec<usize>, dtype: &mut DType) {
        match *self {
            Mutation::Dim { pos, delta, .. } => {
                shape[pos] = (shape[pos] as i64 + delta).max(0) as usize;
            }
            Mutation::Rank { .. } => shape.push(1),
            Mutation::DType { to, .. } => *dtype = to,
            _ => {}
        }
    }

    /// The mutated argument's view (after [`Mutation::apply_shape`]).
    pub fn layout(&self, _a: &TensorArg, shape: &[usize]) -> Layout {
        let mut l = Layout::contiguous(shape);
        match *self {
            Mutation::Stride { pos, .. } => {
                l.strides[pos] *= 2;
                l.kind = format!("stride {} at {pos}", l.strides[pos]);
            }
            Mutation::Align { .. } => {
                l.offset = 1;
                l.kind = "offset 1, misaligned".into();
            }
            Mutation::SelfOverlap { pos, .. } => {
                l.strides[pos] = 0;
                l.kind = format!("stride 0 at {pos}");
            }
            _ => return l,
        }
        let hi: isize = l
            .shape
            .iter()
            .zip(&l.strides)
            .map(|(&n, &s)| (n as isize - 1) * s)
            .sum();
        l.alloc = l.alloc.max((l.offset as isize + hi + 1) as usize);
        l
    }

    /// Whether `v` is the refusal this mutation must cause.
    pub fn expects(&self, c: &KernelContract, v: &Violation) -> bool {
        let name = c.args[self.arg()].name;
        match (self, v) {
            (Mutation::Dim { pos, .. }, Violation::Dim { arg, position, .. }) => {
                *arg == name && position == pos
            }
            (Mutation::Rank { .. }, Violation::Rank { arg, .. })
            | (Mutation::DType { .. }, Violation::DType { arg, .. })
            | (Mutation::Align { .. }, Violation::Align { arg, .. }) => *arg == name,
            (
                Mutation::Stride { .. },
                Violation::Stride {
                    arg,
                    fault: StrideFault::NotContiguous { .. },
                    ..
                },
            )
            | (
                Mutation::SelfOverlap { .. },
                Violation::Stride {
                    arg,
                    fault: StrideFault::SelfOverlap,
                    ..
                },
            ) => *arg == name,
            _ => false,
        }
    }

    /// `w.scales: shape[1] +1`, for reports.
    pub fn describe(&self, c: &KernelContract) -> String {
        let name = c.args[self.arg()].name;
        match self {
            Mutation::Dim { pos, delta, .. } => format!("{name}: shape[{pos}] {delta:+}"),
            Mutation::Rank { .. } => format!("{name}: one more dimension"),
            Mutation::DType { to, .. } => format!("{name}: dtype {to}"),
            Mutation::Stride { pos, .. } => format!("{name}: stride[{pos}] doubled"),
            Mutation::Align { .. } => format!("{name}: misaligned by one element"),
            Mutation::SelfOverlap { pos, .. } => format!("{name}: stride[{pos}] = 0"),
            Mutation::Value { bad, .. } => format!("{name}: one entry {}", bad.name()),
        }
    }
}
