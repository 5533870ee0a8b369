//! IR expressions printed as C, over the symbol and param names in scope in the kernel.

use ima_dsl::ir::{BinOp, Expr, Kernel};

pub fn c_expr(k: &Kernel, e: &Expr) -> String {
    match e {
        Expr::Const(v) => v.to_string(),
        Expr::Sym(s) => k.symbols[*s].name.clone(),
        Expr::Param(p) => k.params[*p].name.clone(),
        Expr::Neg(a) => format!("(-{})", c_expr(k, a)),
        Expr::Not(a) => format!("(!{})", c_expr(k, a)),
        Expr::Bin(op, a, b) => {
            let (a, b) = (c_expr(k, a), c_expr(k, b));
            match op {
                BinOp::CeilDiv => format!("(({a} + {b} - 1) / {b})"),
                BinOp::Min => format!("min({a}, {b})"),
                BinOp::Max => format!("max({a}, {b})"),
                _ => format!("({a} {} {b})", op.symbol()),
            }
        }
    }
}
