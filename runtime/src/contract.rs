//! A kernel's contract as data.
//!
//! The code generator writes one `static KernelContract` per kernel; the runtime's one
//! checker ([`crate::check()`]) interprets it before every launch. Keeping the contract as
//! data (rather than as generated `if`s) keeps every check in one place, shared by the
//! generated crates, the proc macro and `imac fuzz`.
//!
//! # Kernel parameter order (the ABI between codegen and runtime)
//!
//! Every generated entry point takes, in this order:
//! 1. for each tensor argument, in declaration order: its data pointer (already offset to
//!    the view's first element), then one stride per *logical* dimension, in elements;
//! 2. the value of each symbol, in [`KernelContract::symbols`] order;
//! 3. each scalar param, in declaration order, with its own C type.
//!
//! Strides and symbol values have the entry point's index type: `int` for the 32-bit entry
//! point, `long long` for the 64-bit one.

pub use ima_contract::{BinOp, DType};

/// An integer expression over symbols and integer params.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expr {
    Const(i64),
    /// Index into [`KernelContract::symbols`].
    Sym(usize),
    /// Index into [`KernelContract::params`]; only integer params.
    Param(usize),
    Neg(&'static Expr),
    Not(&'static Expr),
    Bin(BinOp, &'static Expr, &'static Expr),
}

/// What failed while evaluating an [`Expr`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EvalError {
    DivByZero,
    Overflow,
    /// A param that is not an integer was used as one.
    NotInteger(usize),
}

impl Expr {
    /// Evaluates with checked arithmetic.
    pub fn eval(&self, symbols: &[i64], params: &[Scalar]) -> Result<i64, EvalError> {
        use BinOp::*;
        Ok(match *self {
            Expr::Const(v) => v,
            Expr::Sym(i) => symbols[i],
            Expr::Param(i) => params[i].as_i64().ok_or(EvalError::NotInteger(i))?,
            Expr::Neg(e) => e
                .eval(symbols, params)?
                .checked_neg()
                .ok_or(EvalError::Overflow)?,
            Expr::Not(e) => (e.eval(symbols, params)? == 0) as i64,
            Expr::Bin(op, a, b) => {
                let a = a.eval(symbols, params)?;
                // `&&` and `||` short-circuit so that `N > 0 && K / N == 2` cannot divide by 0.
                match op {
                    And if a == 0 => return Ok(0),
                    Or if a != 0 => return Ok(1),
                    _ => {}
                }
                let b = b.eval(symbols, params)?;
                let ov = EvalError::Overflow;
                match op {
                    Add => a.checked_add(b).ok_or(ov)?,
                    Sub => a.checked_sub(b).ok_or(ov)?,
                    Mul => a.checked_mul(b).ok_or(ov)?,
                    Div | Rem | CeilDiv if b == 0 => return Err(EvalError::DivByZero),
                    Div => a.checked_div(b).ok_or(ov)?,
                    Rem => a.checked_rem(b).ok_or(ov)?,
                    CeilDiv => a.checked_add(b - 1).ok_or(ov)?.div_euclid(b),
                    Min => a.min(b),
                    Max => a.max(b),
                    Eq => (a == b) as i64,
                    Ne => (a != b) as i64,
                    Lt => (a < b) as i64,
                    Le => (a <= b) as i64,
                    Gt => (a > b) as i64,
                    Ge => (a >= b) as i64,
                    And | Or => (b != 0) as i64,
                }
            }
        })
    }
}

/// A scalar param's value at launch.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scalar {
    F32(f32),
    F64(f64),
    I32(i32),
    U32(u32),
    I64(i64),
    U64(u64),
}

impl Scalar {
    pub fn dtype(self) -> DType {
        match self {
            Scalar::F32(_) => DType::F32,
            Scalar::F64(_) => DType::F64,
            Scalar::I32(_) => DType::I32,
            Scalar::U32(_) => DType::U32,
            Scalar::I64(_) => DType::I64,
            Scalar::U64(_) => DType::U64,
        }
    }

    /// The value as an integer, for constraints; `None` for floats and u64 past i64.
    pub fn as_i64(self) -> Option<i64> {
        match self {
            Scalar::I32(v) => Some(v.into()),
            Scalar::U32(v) => Some(v.into()),
            Scalar::I64(v) => Some(v),
            Scalar::U64(v) => i64::try_from(v).ok(),
            Scalar::F32(_) | Scalar::F64(_) => None,
        }
    }
}

impl std::fmt::Display for Scalar {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Scalar::F32(v) => write!(f, "{v}"),
            Scalar::F64(v) => write!(f, "{v}"),
            Scalar::I32(v) => write!(f, "{v}"),
            Scalar::U32(v) => write!(f, "{v}"),
            Scalar::I64(v) => write!(f, "{v}"),
            Scalar::U64(v) => write!(f, "{v}"),
        }
    }
}

/// Where a symbol takes its value at launch: a dimension of an input, or of an output when
/// no input carries the symbol bare.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Binding {
    /// Index into [`KernelContract::args`].
    pub arg: usize,
    /// Logical dimension of that argument.
    pub dim: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Symbol {
    pub name: &'static str,
    pub bound_by: Binding,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    In,
    Out,
    InOut,
    /// The logical `[K, N, G]` shape of a quantized argument: it binds and is checked like
    /// a tensor's shape, but has no memory and is never passed to the kernel. Its buffers
    /// follow it as arguments of their own.
    Logical,
}

impl Role {
    pub fn writes(self) -> bool {
        matches!(self, Role::Out | Role::InOut)
    }
}

/// One logical dimension of a tensor argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Extent {
    /// The extent as written in the spec (`D`, `S + 1`, `ceil(K / G)`).
    pub text: &'static str,
    pub expr: Expr,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TensorArg {
    pub name: &'static str,
    pub role: Role,
    pub dtype: DType,
    /// Logical dimensions, in the order the body indexes them.
    pub dims: &'static [Extent],
    /// Physical order: `stored[p]` is the logical dimension held at physical position `p`.
    /// The tensor a caller passes has its shape in physical order. Identity when the spec
    /// has no `stored`.
    pub stored: &'static [usize],
    /// `strided`: any strides are accepted; otherwise contiguous in physical order.
    pub strided: bool,
    /// Required alignment of the data pointer, in bytes.
    pub align: usize,
    /// What the entries of an integer argument may hold (`values(...)`, an act-order
    /// `g_idx`'s groups). The kernel checks each entry it reads, in every mode.
    pub values: Option<ValueContract>,
}

/// A value contract: every entry `v` the kernel reads has `lo <= v < hi`, or is the
/// sentinel; with `ascending`, the entries are non-decreasing along the last dimension,
/// the first is `lo` and the last `hi - 1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ValueContract {
    /// As the spec writes it inside `values(...)`: `0 .. NB, or -1`.
    pub text: &'static str,
    /// Inclusive.
    pub lo: Extent,
    /// Exclusive.
    pub hi: Extent,
    pub sentinel: Option<i64>,
    pub ascending: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Param {
    pub name: &'static str,
    pub dtype: DType,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Constraint {
    /// As written in the spec, e.g. `D % 8 == 0`.
    pub text: &'static str,
    pub expr: Expr,
}

/// What to do when the launch domain has no elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EmptyPolicy {
    /// Return [`crate::Launched::Skipped`] without launching.
    Skip,
    /// Refuse with [`crate::Violation::Empty`].
    Refuse,
}

/// How the grid covers the work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Launch {
    /// One thread per element of `args[arg]`'s logical domain, grid-stride.
    Threads { arg: usize },
    /// One block per tuple of the first `outer` logical dimensions of `args[arg]`,
    /// block-stride; the block's threads cover the inner dimensions themselves.
    Blocks { arg: usize, outer: usize },
    /// A raw grid: one to three extents over symbols and params, (x, y, z).
    Grid { dims: &'static [Expr] },
}

/// `shared tile: f32[BLOCK, D]`: a dynamic shared-memory array. Arrays are laid out in
/// declaration order, each starting at a multiple of [`SHARED_ALIGN`] bytes; the kernel
/// computes the same offsets from the symbols.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SharedArray {
    pub name: &'static str,
    pub dtype: DType,
    pub dims: &'static [Extent],
}

/// Alignment of each shared-memory array's start, in bytes (a 16-byte vector load's).
pub const SHARED_ALIGN: usize = 16;

/// Everything the runtime needs to check and launch one kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelContract {
    pub name: &'static str,
    /// `attn_scores(q: f16[B,H,S,D], k: f16[B,H,T,D], o: f32[B,H,S,T], scale: f32)`.
    pub signature: &'static str,
    /// `specs/attn.ima:3`, where the kernel is declared.
    pub location: &'static str,
    pub symbols: &'static [Symbol],
    pub args: &'static [TensorArg],
    pub params: &'static [Param],
    pub constraints: &'static [Constraint],
    pub shared: &'static [SharedArray],
    pub launch: Launch,
    pub empty: EmptyPolicy,
    /// Threads per block (x, y, z); their product is the entry points' `__launch_bounds__`.
    pub block: [u32; 3],
    /// The spec left the block's size open (a `launch over` of threads without `threads N`
    /// or shared arrays): a [`crate::Kernel`] picks it at load with the occupancy API, at
    /// most `block[0]`. [`crate::check()`] plans with `block` itself.
    pub block_from_occupancy: bool,
    /// Entry point with 32-bit indices.
    pub entry_i32: &'static str,
    /// Entry point with 64-bit indices.
    pub entry_i64: &'static str,
}
