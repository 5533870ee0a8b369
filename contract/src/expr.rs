//! Contract expressions: integer expressions over a kernel's symbols and integer params.

/// Binary operators of contract expressions. Comparisons and logic yield 0 or 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    /// Integer division, rounding toward zero (as in C).
    Div,
    /// The remainder of [`BinOp::Div`], with the dividend's sign (as in C).
    Rem,
    /// `ceil(a / b)`.
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

impl BinOp {
    /// Every operator, in declaration order.
    pub const ALL: [BinOp; 16] = [
        BinOp::Add,
        BinOp::Sub,
        BinOp::Mul,
        BinOp::Div,
        BinOp::Rem,
        BinOp::CeilDiv,
        BinOp::Min,
        BinOp::Max,
        BinOp::Eq,
        BinOp::Ne,
        BinOp::Lt,
        BinOp::Le,
        BinOp::Gt,
        BinOp::Ge,
        BinOp::And,
        BinOp::Or,
    ];

    /// The operator as specs (and C) write it; the function name for the three that are
    /// calls (`ceil`, `min`, `max`).
    pub const fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::And => "&&",
            BinOp::Or => "||",
            BinOp::CeilDiv => "ceil",
            BinOp::Min => "min",
            BinOp::Max => "max",
        }
    }
}
