//! The checked kernel: every name resolved, every symbol bound, constants folded.
//! Back ends (CUDA C, Rust stubs, `imac explain`) read only this.

pub use crate::ast::Role;
pub use crate::dtype::DType;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Module {
    /// The spec file, as named on the command line.
    pub file: String,
    pub kernels: Vec<Kernel>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kernel {
    pub name: String,
    pub docs: Vec<String>,
    /// 1-based line of the `kernel` keyword.
    pub line: usize,
    pub symbols: Vec<Symbol>,
    pub args: Vec<TensorArg>,
    pub params: Vec<Param>,
    pub constraints: Vec<Constraint>,
    pub launch: Launch,
    pub body: Body,
    /// Threads per block.
    pub block: u32,
}

/// A symbol such as `D`, with the input dimension its value is read from at launch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Symbol {
    pub name: String,
    pub arg: usize,
    /// Logical dimension of `arg`.
    pub dim: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorArg {
    pub name: String,
    pub docs: Vec<String>,
    pub role: Role,
    pub dtype: DType,
    /// Logical dimensions, in the order the body indexes them.
    pub dims: Vec<Extent>,
    /// `stored[p]` is the logical dimension at physical position `p`.
    pub stored: Vec<usize>,
    pub strided: bool,
    /// Alignment of the data pointer in bytes.
    pub align: u64,
}

impl TensorArg {
    pub fn rank(&self) -> usize {
        self.dims.len()
    }

    /// The dimensions in physical order, as the caller's tensor holds them.
    pub fn physical_dims(&self) -> impl Iterator<Item = &Extent> {
        self.stored.iter().map(|&l| &self.dims[l])
    }

    pub fn is_permuted(&self) -> bool {
        self.stored.iter().enumerate().any(|(p, &l)| p != l)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Extent {
    /// As written, normalised (`S + 1`, `ceil(K / G)`).
    pub text: String,
    pub expr: Expr,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Param {
    pub name: String,
    pub docs: Vec<String>,
    pub dtype: DType,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Constraint {
    pub text: String,
    pub expr: Expr,
}

/// One thread per element of `args[arg]`'s logical domain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launch {
    pub arg: usize,
    /// Index names bound in the body, one per logical dimension of `arg`.
    pub indices: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Body {
    pub text: String,
    /// 1-based line of the body's first character, for `#line`.
    pub line: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    CeilDiv,
    Min,
    Max,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
}

/// An integer expression over symbols and integer params.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expr {
    Const(i64),
    /// Index into [`Kernel::symbols`].
    Sym(usize),
    /// Index into [`Kernel::params`].
    Param(usize),
    Neg(Box<Expr>),
    Not(Box<Expr>),
    Bin(BinOp, Box<Expr>, Box<Expr>),
}
