//! A kernel's contract, owned: what `ima_dsl::abi::kernel_contract` builds from the IR, in
//! one place. The Rust back end prints it as the static form ([`crate::KernelContract`])
//! into generated stubs; `imac fuzz` [leaks](KernelContract::leak) it into one at run time.
//! The spec language's IR uses [`Expr`] and [`Extent`] as its own.

use crate::kernel as fixed;
use crate::{BinOp, Binding, DType, EmptyPolicy, Env, EvalError, ExprView, Node, Resident, Role};

/// An integer expression over symbols and integer params, owned.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Expr {
    Const(i64),
    /// Index into the kernel's symbols.
    Sym(usize),
    /// Index into the kernel's params.
    Param(usize),
    Neg(Box<Expr>),
    Not(Box<Expr>),
    Bin(BinOp, Box<Expr>, Box<Expr>),
}

impl ExprView for Expr {
    fn node(&self) -> Node<'_, Expr> {
        match self {
            Expr::Const(v) => Node::Const(*v),
            Expr::Sym(i) => Node::Sym(*i),
            Expr::Param(i) => Node::Param(*i),
            Expr::Neg(a) => Node::Neg(a),
            Expr::Not(a) => Node::Not(a),
            Expr::Bin(op, a, b) => Node::Bin(*op, a, b),
        }
    }
}

/// Symbol values and integer param values, as an [`Env`].
struct Values<'a>(&'a [i64], &'a [i64]);

impl Env for Values<'_> {
    type Error = EvalError;
    fn symbol(&self, i: usize) -> Result<i64, EvalError> {
        Ok(self.0[i])
    }
    fn param(&self, i: usize) -> Result<i64, EvalError> {
        Ok(self.1[i])
    }
}

impl Expr {
    /// The value of an expression that needs no symbol or param, by the one evaluator
    /// ([`crate::eval`]); `None` where it needs one or its evaluation fails.
    pub fn eval_const(&self) -> Option<i64> {
        crate::eval_const(self).ok()
    }

    /// The value for the given symbol values and integer param values, by the one
    /// evaluator, as the runtime evaluates the static form of the same expression.
    pub fn eval(&self, symbols: &[i64], params: &[i64]) -> Result<i64, EvalError> {
        crate::eval(self, &Values(symbols, params))
    }

    /// The static form, its subexpressions leaked.
    pub fn leak(&self) -> fixed::Expr {
        let boxed = |e: &Expr| -> &'static fixed::Expr { Box::leak(Box::new(e.leak())) };
        match self {
            Expr::Const(v) => fixed::Expr::Const(*v),
            Expr::Sym(s) => fixed::Expr::Sym(*s),
            Expr::Param(p) => fixed::Expr::Param(*p),
            Expr::Neg(a) => fixed::Expr::Neg(boxed(a)),
            Expr::Not(a) => fixed::Expr::Not(boxed(a)),
            Expr::Bin(op, a, b) => fixed::Expr::Bin(*op, boxed(a), boxed(b)),
        }
    }
}

fn leak<T>(v: Vec<T>) -> &'static [T] {
    Box::leak(v.into_boxed_slice())
}

fn leak_str(s: &str) -> &'static str {
    Box::leak(s.to_owned().into_boxed_str())
}

/// An extent (or a bound) with its spec text: `S + 1`, `ceil(K / G)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Extent {
    /// As written, normalised.
    pub text: String,
    pub expr: Expr,
}

impl Extent {
    pub fn leak(&self) -> fixed::Extent {
        fixed::Extent {
            text: leak_str(&self.text),
            expr: self.expr.leak(),
        }
    }
}

fn extents(dims: &[Extent]) -> &'static [fixed::Extent] {
    leak(dims.iter().map(Extent::leak).collect())
}

/// See [`fixed::ValueContract`]. The dsl's IR holds this type too (`ir::Values`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValueContract {
    /// As written inside `values(...)`, normalised: `0 .. NB, or -1`.
    pub text: String,
    /// Inclusive.
    pub lo: Extent,
    /// Exclusive.
    pub hi: Extent,
    pub sentinel: Option<i64>,
    pub ascending: bool,
}

impl ValueContract {
    /// `0 .. hi`, as act-order `g_idx` holds group numbers.
    pub fn below(hi: Extent) -> ValueContract {
        ValueContract {
            text: format!("0 .. {}", hi.text),
            lo: Extent {
                text: "0".into(),
                expr: Expr::Const(0),
            },
            hi,
            sentinel: None,
            ascending: false,
        }
    }
}

/// See [`fixed::TensorArg`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorArg {
    pub name: String,
    pub role: Role,
    pub dtype: DType,
    pub dims: Vec<Extent>,
    pub stored: Vec<usize>,
    pub strided: bool,
    pub early: bool,
    pub align: usize,
    pub values: Option<ValueContract>,
    pub tma: Option<fixed::TmaBox>,
}

/// See [`fixed::Symbol`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Symbol {
    pub name: String,
    pub bound_by: Binding,
}

/// See [`fixed::Param`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Param {
    pub name: String,
    pub dtype: DType,
}

/// A `where` constraint with its spec text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Constraint {
    /// As written in the spec, e.g. `D % 8 == 0`.
    pub text: String,
    pub expr: Expr,
}

/// See [`fixed::SharedArray`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharedArray {
    pub name: String,
    pub dtype: DType,
    pub dims: Vec<Extent>,
    pub align: usize,
}

/// See [`fixed::Launch`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Launch {
    Threads {
        arg: usize,
    },
    Blocks {
        arg: usize,
        outer: usize,
    },
    Grid {
        dims: Vec<Expr>,
        resident: Resident,
        cluster: Option<[u32; 3]>,
    },
}

impl Launch {
    /// As [`fixed::Launch::cluster`], for the owned form.
    pub fn cluster(&self) -> Option<[u32; 3]> {
        match self {
            Launch::Grid { cluster, .. } => *cluster,
            Launch::Threads { .. } | Launch::Blocks { .. } => None,
        }
    }
}

/// See [`fixed::KernelContract`]: the same fields, owned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelContract {
    pub name: String,
    pub signature: String,
    pub location: String,
    pub symbols: Vec<Symbol>,
    pub args: Vec<TensorArg>,
    pub params: Vec<Param>,
    pub constraints: Vec<Constraint>,
    pub shared: Vec<SharedArray>,
    pub launch: Launch,
    pub empty: EmptyPolicy,
    pub block: [u32; 3],
    pub block_from_occupancy: bool,
    pub entry_i32: String,
    pub entry_i64: String,
}

impl KernelContract {
    /// The static form, leaked (a few hundred bytes; once per kernel per fuzzing run).
    pub fn leak(&self) -> &'static fixed::KernelContract {
        let contract = fixed::KernelContract {
            name: leak_str(&self.name),
            signature: leak_str(&self.signature),
            location: leak_str(&self.location),
            symbols: leak(
                self.symbols
                    .iter()
                    .map(|s| fixed::Symbol {
                        name: leak_str(&s.name),
                        bound_by: s.bound_by,
                    })
                    .collect(),
            ),
            args: leak(
                self.args
                    .iter()
                    .map(|a| fixed::TensorArg {
                        name: leak_str(&a.name),
                        role: a.role,
                        dtype: a.dtype,
                        dims: extents(&a.dims),
                        stored: leak(a.stored.clone()),
                        strided: a.strided,
                        early: a.early,
                        align: a.align,
                        values: a.values.as_ref().map(|v| fixed::ValueContract {
                            text: leak_str(&v.text),
                            lo: v.lo.leak(),
                            hi: v.hi.leak(),
                            sentinel: v.sentinel,
                            ascending: v.ascending,
                        }),
                        tma: a.tma,
                    })
                    .collect(),
            ),
            params: leak(
                self.params
                    .iter()
                    .map(|p| fixed::Param {
                        name: leak_str(&p.name),
                        dtype: p.dtype,
                    })
                    .collect(),
            ),
            constraints: leak(
                self.constraints
                    .iter()
                    .map(|c| fixed::Constraint {
                        text: leak_str(&c.text),
                        expr: c.expr.leak(),
                    })
                    .collect(),
            ),
            shared: leak(
                self.shared
                    .iter()
                    .map(|s| fixed::SharedArray {
                        name: leak_str(&s.name),
                        dtype: s.dtype,
                        dims: extents(&s.dims),
                        align: s.align,
                    })
                    .collect(),
            ),
            launch: match &self.launch {
                Launch::Threads { arg } => fixed::Launch::Threads { arg: *arg },
                Launch::Blocks { arg, outer } => fixed::Launch::Blocks {
                    arg: *arg,
                    outer: *outer,
                },
                Launch::Grid {
                    dims,
                    resident,
                    cluster,
                } => fixed::Launch::Grid {
                    dims: leak(dims.iter().map(Expr::leak).collect()),
                    resident: *resident,
                    cluster: *cluster,
                },
            },
            empty: self.empty,
            block: self.block,
            block_from_occupancy: self.block_from_occupancy,
            entry_i32: leak_str(&self.entry_i32),
            entry_i64: leak_str(&self.entry_i64),
        };
        Box::leak(Box::new(contract))
    }
}
