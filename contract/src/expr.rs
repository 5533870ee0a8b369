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

/// What failed while evaluating an expression.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EvalError {
    DivByZero,
    Overflow,
    /// A param that is not an integer was used as one.
    NotInteger(usize),
}

/// One node of a contract expression, as the evaluator sees it. The spec language's IR
/// (boxed) and the static contract (`&'static`) present their expressions through
/// [`ExprView`], so that both are evaluated by [`eval`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Node<'a, E: ?Sized> {
    Const(i64),
    /// Index into the kernel's symbols.
    Sym(usize),
    /// Index into the kernel's params; only integer params.
    Param(usize),
    Neg(&'a E),
    Not(&'a E),
    Bin(BinOp, &'a E, &'a E),
}

/// An expression tree the evaluator can walk.
pub trait ExprView {
    fn node(&self) -> Node<'_, Self>;
}

/// Where an expression's symbols and params take their values.
pub trait Env {
    /// What a failed evaluation reports: at least an [`EvalError`].
    type Error: From<EvalError>;
    fn symbol(&self, index: usize) -> Result<i64, Self::Error>;
    fn param(&self, index: usize) -> Result<i64, Self::Error>;
}

/// Evaluates a contract expression: the one definition of its semantics.
///
/// - Arithmetic is checked: a result outside `i64` is [`EvalError::Overflow`].
/// - `/` and `%` truncate toward zero, as in C; a zero divisor is
///   [`EvalError::DivByZero`], for `ceil` too.
/// - `ceil(a / b)` is the ceiling of the exact quotient, for every sign of `a` and `b`:
///   the truncated quotient, plus one where the remainder is not zero and has the
///   divisor's sign. The C back end prints it as `ima_ceil_div(a, b)` (ima.cuh), the same
///   computation.
/// - `&&` and `||` short-circuit, so that `N > 0 && K / N == 2` cannot divide by zero;
///   comparisons and logic yield 0 or 1.
pub fn eval<X: ExprView + ?Sized, V: Env + ?Sized>(e: &X, env: &V) -> Result<i64, V::Error> {
    eval_peak(e, env).map(|(value, _)| value)
}

/// [`eval`]'s value, and the largest magnitude among the values computed on the way (each
/// subexpression's, the result's included): generated C computes every one of them in the
/// entry point's index type, so a 32-bit entry point is exact only where this fits in 32
/// bits (`N * M / K` overflows where N, M, K and the result fit).
pub fn eval_peak<X: ExprView + ?Sized, V: Env + ?Sized>(
    e: &X,
    env: &V,
) -> Result<(i64, u64), V::Error> {
    use BinOp::*;
    let (value, below) = match e.node() {
        Node::Const(v) => (v, 0),
        Node::Sym(i) => (env.symbol(i)?, 0),
        Node::Param(i) => (env.param(i)?, 0),
        Node::Neg(a) => {
            let (a, peak) = eval_peak(a, env)?;
            (a.checked_neg().ok_or(EvalError::Overflow)?, peak)
        }
        Node::Not(a) => {
            let (a, peak) = eval_peak(a, env)?;
            ((a == 0) as i64, peak)
        }
        Node::Bin(op, a, b) => {
            let (a, peak_a) = eval_peak(a, env)?;
            match op {
                And if a == 0 => return Ok((0, peak_a)),
                Or if a != 0 => return Ok((1, peak_a)),
                _ => {}
            }
            let (b, peak_b) = eval_peak(b, env)?;
            (apply(op, a, b)?, peak_a.max(peak_b))
        }
    };
    Ok((value, below.max(value.unsigned_abs())))
}

/// `a op b` on values, with [`eval`]'s semantics (`&&` and `||` on evaluated operands).
pub fn apply(op: BinOp, a: i64, b: i64) -> Result<i64, EvalError> {
    use BinOp::*;
    let ov = EvalError::Overflow;
    Ok(match op {
        Add => a.checked_add(b).ok_or(ov)?,
        Sub => a.checked_sub(b).ok_or(ov)?,
        Mul => a.checked_mul(b).ok_or(ov)?,
        Div | Rem | CeilDiv if b == 0 => return Err(EvalError::DivByZero),
        Div => a.checked_div(b).ok_or(ov)?,
        Rem => a.checked_rem(b).ok_or(ov)?,
        CeilDiv => {
            let (q, r) = (a.checked_div(b).ok_or(ov)?, a % b);
            // |q| < i64::MAX where r != 0: the increment cannot overflow.
            q + i64::from(r != 0 && (r > 0) == (b > 0))
        }
        Min => a.min(b),
        Max => a.max(b),
        Eq => (a == b) as i64,
        Ne => (a != b) as i64,
        Lt => (a < b) as i64,
        Le => (a <= b) as i64,
        Gt => (a > b) as i64,
        Ge => (a >= b) as i64,
        And => (a != 0 && b != 0) as i64,
        Or => (a != 0 || b != 0) as i64,
    })
}

/// Why an expression has no constant value: it names a symbol or param, or its
/// evaluation fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotConst {
    Symbolic,
    Eval(EvalError),
}

impl From<EvalError> for NotConst {
    fn from(e: EvalError) -> Self {
        NotConst::Eval(e)
    }
}

/// The environment of constant folding: no symbol or param has a value.
struct NoValues;

impl Env for NoValues {
    type Error = NotConst;
    fn symbol(&self, _: usize) -> Result<i64, NotConst> {
        Err(NotConst::Symbolic)
    }
    fn param(&self, _: usize) -> Result<i64, NotConst> {
        Err(NotConst::Symbolic)
    }
}

/// The value of an expression that needs no symbol or param (where short-circuiting
/// skips one, it is not needed), by [`eval`].
pub fn eval_const<X: ExprView + ?Sized>(e: &X) -> Result<i64, NotConst> {
    eval(e, &NoValues)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Expr;

    fn leak(e: Expr) -> &'static Expr {
        Box::leak(Box::new(e))
    }

    fn bin(op: BinOp, a: i64, b: i64) -> Result<i64, EvalError> {
        Expr::Bin(op, leak(Expr::Const(a)), leak(Expr::Const(b))).eval(&[], &[])
    }

    #[test]
    fn division_truncates_as_in_c() {
        assert_eq!(bin(BinOp::Div, -7, 2), Ok(-3));
        assert_eq!(bin(BinOp::Rem, -7, 2), Ok(-1));
        assert_eq!(bin(BinOp::Div, 7, -2), Ok(-3));
        assert_eq!(bin(BinOp::Div, i64::MIN, -1), Err(EvalError::Overflow));
        assert_eq!(bin(BinOp::Rem, 1, 0), Err(EvalError::DivByZero));
    }

    #[test]
    fn ceil_is_the_ceiling_for_every_sign() {
        for a in -20..20 {
            for b in (-7..7).filter(|&b| b != 0) {
                let want = (a as f64 / b as f64).ceil() as i64;
                assert_eq!(bin(BinOp::CeilDiv, a, b), Ok(want), "ceil({a} / {b})");
            }
        }
        assert_eq!(bin(BinOp::CeilDiv, 3, 0), Err(EvalError::DivByZero));
        // No intermediate `a + b - 1`: the largest operands are fine.
        assert_eq!(bin(BinOp::CeilDiv, i64::MAX, 2), Ok(i64::MAX / 2 + 1));
        assert_eq!(bin(BinOp::CeilDiv, 0, i64::MIN), Ok(0));
        assert_eq!(bin(BinOp::CeilDiv, i64::MIN, -1), Err(EvalError::Overflow));
        assert_eq!(bin(BinOp::CeilDiv, i64::MIN + 2, -1), Ok(i64::MAX - 1));
    }

    #[test]
    fn the_peak_is_the_largest_magnitude_on_the_way() {
        // N * M / K at 65536 each: the value 65536, N * M = 2^32 on the way.
        let n = leak(Expr::Sym(0));
        let nm = leak(Expr::Bin(BinOp::Mul, n, n));
        let e = Expr::Bin(BinOp::Div, nm, n);
        assert_eq!(e.eval_peak(&[1 << 16], &[]), Ok((1 << 16, 1 << 32)));
        // A negative step counts by its magnitude; a short-circuited operand not at all.
        let neg = Expr::Bin(BinOp::Add, leak(Expr::Const(-5_000_000_000)), nm);
        assert_eq!(
            neg.eval_peak(&[1], &[]),
            Ok((-4_999_999_999, 5_000_000_000))
        );
        let skipped = Expr::Bin(BinOp::And, leak(Expr::Const(0)), nm);
        assert_eq!(skipped.eval_peak(&[1 << 16], &[]), Ok((0, 0)));
    }

    #[test]
    fn and_or_short_circuit() {
        let div0 = leak(Expr::Bin(BinOp::Div, &Expr::Const(1), &Expr::Const(0)));
        let and = Expr::Bin(BinOp::And, &Expr::Const(0), div0);
        let or = Expr::Bin(BinOp::Or, &Expr::Const(-1), div0);
        assert_eq!(and.eval(&[], &[]), Ok(0));
        assert_eq!(or.eval(&[], &[]), Ok(1));
        assert_eq!(eval_const(&and), Ok(0));
        assert_eq!(eval_const(div0), Err(NotConst::Eval(EvalError::DivByZero)));
        assert_eq!(eval_const(&Expr::Sym(0)), Err(NotConst::Symbolic));
    }
}
