//! The syntax tree of a `.ima` file, as written, with a span on every node.

pub use ima_contract::Resident;

/// A byte range in the source file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Self {
        Span { start, end }
    }

    pub fn range(self) -> std::ops::Range<usize> {
        self.start..self.end
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct File {
    pub items: Vec<Item>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    Const(ConstDecl),
    Kernel(Kernel),
}

/// `const G = 128`
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConstDecl {
    pub docs: Vec<String>,
    pub name: Ident,
    pub value: Expr,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kernel {
    pub docs: Vec<String>,
    pub name: Ident,
    pub constraints: Vec<Expr>,
    /// Members in source order.
    pub members: Vec<Member>,
    /// From its first doc comment (or `kernel`) to the closing brace.
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Member {
    Tensor(Box<TensorArg>),
    Param(Param),
    Shared(Shared),
    Empty(EmptyPolicy, Span),
    Launch(Launch),
    Body(Body),
}

/// What a launch over an empty domain does: the contract's own type.
pub use ima_contract::EmptyPolicy;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    In,
    Out,
    InOut,
}

impl Role {
    pub fn keyword(self) -> &'static str {
        match self {
            Role::In => "in",
            Role::Out => "out",
            Role::InOut => "inout",
        }
    }
}

/// `in q: f16[B, H, S, D] stored [B, S, H, D] align(16)`
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorArg {
    pub docs: Vec<String>,
    pub role: Role,
    pub name: Ident,
    pub dtype: Ident,
    pub extents: Vec<Expr>,
    pub stored: Option<Vec<Ident>>,
    pub strided: Option<Span>,
    /// `early`: the body may read it before `ima_wait_for_inputs()`.
    pub early: Option<Span>,
    pub align: Option<(u64, Span)>,
    /// `tma(ROWS, COLS)`: the box of its TMA tensor map.
    pub tma: Option<Tma>,
    pub quant: Option<Quant>,
    /// Boxed: most arguments have none, and it holds two expressions.
    pub values: Option<Box<Values>>,
    pub span: Span,
}

/// `tma(128, 64)`: the box of an argument's TMA tensor map, rows by columns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tma {
    pub rows: u64,
    pub cols: u64,
    pub span: Span,
}

/// `values(0 .. NB, or -1)`: what an integer tensor's entries may hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Values {
    pub kind: ValuesKind,
    /// `or -1`: one value besides the range, which the body never sees as an index.
    pub sentinel: Option<(i64, Span)>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ValuesKind {
    /// `lo .. hi`: lo <= v < hi.
    Range { lo: Expr, hi: Expr },
    /// `ascending from first to last`: non-decreasing along the last dimension, the first
    /// entry `first` and the last `last`.
    Ascending { first: Expr, last: Expr },
}

impl std::fmt::Display for Values {
    /// The canonical form inside `values(...)`: `0 .. NB, or -1`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.kind {
            ValuesKind::Range { lo, hi } => write!(f, "{lo} .. {hi}")?,
            ValuesKind::Ascending { first, last } => write!(f, "ascending from {first} to {last}")?,
        }
        if let Some((v, _)) = self.sentinel {
            write!(f, ", or {v}")?;
        }
        Ok(())
    }
}

/// `gptq(group = 128, zeros = plain)`: how a quantized tensor is stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quant {
    /// `gptq`, `awq` or `int8`.
    pub kind: Ident,
    pub options: Vec<QuantOption>,
    pub span: Span,
}

/// `group = 128`, or a flag such as `sym`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuantOption {
    pub name: Ident,
    pub value: Option<Expr>,
}

/// `shared tile: f32[BLOCK, D]`
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shared {
    pub docs: Vec<String>,
    pub name: Ident,
    pub dtype: Ident,
    pub extents: Vec<Expr>,
    /// `align(1024)`: a start aligned beyond the default 16 bytes.
    pub align: Option<(u64, Span)>,
    pub span: Span,
}

/// `param scale: f32`
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Param {
    pub docs: Vec<String>,
    pub name: Ident,
    pub dtype: Ident,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launch {
    pub kind: LaunchKind,
    /// `threads N`: threads per block. This number, `min_blocks`'s and the block's and
    /// cluster's extents are constant expressions (numbers and the spec's `const`s), which
    /// the checker folds.
    pub threads: Option<Expr>,
    /// `min_blocks N`: blocks each SM must hold at once (`__launch_bounds__`).
    pub min_blocks: Option<Expr>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LaunchKind {
    /// `launch over o[b, h, i, j]` (a thread per element), or with `blocks`,
    /// `launch blocks over y[row, _]` (a block per index tuple; `_` marks the inner
    /// dimensions the block's threads stride over).
    Over {
        blocks: bool,
        arg: Ident,
        /// `None` for `_`.
        indices: Vec<Option<Ident>>,
    },
    /// `launch grid(X, Y) block(256)`: the body indexes by hand; only accessors guard.
    /// `launch grid(X) block(256) resident` runs every block at once, and
    /// `launch persistent(MAX) block(256)` (`Resident::AtMost`, one extent) at most MAX.
    /// `launch grid(X) block(256) cluster(4)` runs the blocks in thread-block clusters.
    Grid {
        grid: Vec<Expr>,
        block: Vec<Expr>,
        /// `cluster(x, y, z)`: its extents, and the whole clause's span.
        cluster: Option<(Vec<Expr>, Span)>,
        resident: Resident,
    },
}

/// `body { ... }`: CUDA C, verbatim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Body {
    pub text: String,
    /// The text between the braces.
    pub span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    Or,
    And,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Add,
    Sub,
    Mul,
    Div,
    Rem,
}

impl BinOp {
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Or => "||",
            BinOp::And => "&&",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
        }
    }

    /// Binding strength, higher binds tighter.
    pub fn precedence(self) -> u8 {
        match self {
            BinOp::Or => 1,
            BinOp::And => 2,
            BinOp::Eq | BinOp::Ne => 3,
            BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => 4,
            BinOp::Add | BinOp::Sub => 5,
            BinOp::Mul | BinOp::Div | BinOp::Rem => 6,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExprKind {
    Int(i64),
    Name(String),
    Neg(Box<Expr>),
    Not(Box<Expr>),
    Bin(BinOp, Box<Expr>, Box<Expr>),
    /// `ceil(K / G)`, `min(a, b)`, `max(a, b)`.
    Call(Ident, Vec<Expr>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

/// Prints an expression in canonical form: single spaces around binary operators and
/// parentheses only where precedence needs them.
impl std::fmt::Display for Expr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        fn operand(f: &mut std::fmt::Formatter<'_>, e: &Expr, min: u8) -> std::fmt::Result {
            match &e.kind {
                ExprKind::Bin(op, ..) if op.precedence() < min => write!(f, "({e})"),
                _ => write!(f, "{e}"),
            }
        }
        match &self.kind {
            ExprKind::Int(v) => write!(f, "{v}"),
            ExprKind::Name(n) => f.write_str(n),
            ExprKind::Neg(e) => {
                f.write_str("-")?;
                operand(f, e, u8::MAX)
            }
            ExprKind::Not(e) => {
                f.write_str("!")?;
                operand(f, e, u8::MAX)
            }
            ExprKind::Bin(op, a, b) => {
                // Left-associative: the right operand needs parentheses at equal precedence.
                operand(f, a, op.precedence())?;
                write!(f, " {} ", op.symbol())?;
                operand(f, b, op.precedence() + 1)
            }
            ExprKind::Call(name, args) => {
                write!(f, "{}(", name.name)?;
                for (i, a) in args.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{a}")?;
                }
                f.write_str(")")
            }
        }
    }
}
