//! IR expressions printed as C, over the symbol and param names in scope in the kernel.

use ima_dsl::ir::{BinOp, DType, Expr, Kernel};

pub fn c_expr(k: &Kernel, e: &Expr) -> String {
    match e {
        // A negative literal (a `const` folded below zero) is bracketed, so that a negation
        // before it never reads as C's `--`.
        Expr::Const(v) if *v < 0 => format!("({})", c_literal(*v)),
        Expr::Const(v) => c_literal(*v),
        Expr::Sym(s) => k.symbols[*s].name.clone(),
        // C computes `N - p` in unsigned arithmetic for an unsigned p of int's width or
        // more, where the contract's evaluator subtracts in i64: converted, the two agree
        // (a u64 past i64's range is refused at launch).
        Expr::Param(p) => match k.params[*p].dtype {
            DType::U32 | DType::U64 => format!("((long long){})", k.params[*p].name),
            _ => k.params[*p].name.clone(),
        },
        Expr::Neg(a) => format!("(-{})", c_expr(k, a)),
        Expr::Not(a) => format!("(!{})", c_expr(k, a)),
        Expr::Bin(op, a, b) => {
            let (a, b) = (c_expr(k, a), c_expr(k, b));
            match op {
                BinOp::CeilDiv => format!("ima_ceil_div({a}, {b})"),
                BinOp::Min => format!("ima_min({a}, {b})"),
                BinOp::Max => format!("ima_max({a}, {b})"),
                _ => format!("({a} {} {b})", op.symbol()),
            }
        }
    }
}

/// Whether [`c_expr`] prints a param of `dtype` as a `long long`: an i64, or an unsigned
/// param of int's width or more, which it converts.
pub(crate) fn long_long_param(dtype: DType) -> bool {
    matches!(dtype, DType::I64 | DType::U32 | DType::U64)
}

/// An integer as a C literal of its value: `long long` past 32 bits; `i64::MIN`, which has
/// no literal of its own (C reads `-9223372036854775808` as the negation of a literal too
/// large for `long long`), as a difference.
pub(crate) fn c_literal(v: i64) -> String {
    if v == i64::MIN {
        format!("({}LL - 1)", v + 1)
    } else if i32::try_from(v).is_ok() {
        v.to_string()
    } else {
        format!("{v}LL")
    }
}

#[cfg(test)]
mod tests {
    //! The C the back end prints for an expression, compiled by the host C++ compiler (`c++`,
    //! or `$CXX`) in 64-bit arithmetic with ima.cuh (for `ima_ceil_div`, `ima_min`, `ima_max`),
    //! gives the value of the contract's one evaluator on random expressions and inputs,
    //! wherever that evaluation succeeds (no overflow, no division by zero), for every sign of
    //! `ceil`'s operands.

    use super::c_expr;
    use crate::cuda::c_type;
    use crate::random_exprs::{PARAMS, SYMBOLS, assert_values, cases, kernel};
    use std::fmt::Write;
    use std::process::Command;

    #[test]
    fn c_text_evaluates_as_the_contract() {
        let k = kernel();
        let cases = cases(17, 2000);
        let mut program = String::from(
            "#include <cstdio>\n\
             #include \"host_shim.h\"\n\
             #include \"ima.cuh\"\n\
             int main() {\n",
        );
        for c in &cases {
            let mut decls = String::new();
            for (name, v) in SYMBOLS.iter().zip(&c.symbols) {
                write!(decls, "long long {name} = {v}LL; ").unwrap();
            }
            // Each param of its own type, as the kernel declares it.
            for ((name, dtype), v) in PARAMS.iter().zip(&c.params) {
                write!(decls, "{} {name} = {v}LL; ", c_type(*dtype)).unwrap();
            }
            writeln!(
                program,
                "  {{ {decls}printf(\"%lld\\n\", (long long)({})); }}",
                c_expr(&k, &c.expr)
            )
            .unwrap();
        }
        program.push_str("  return 0;\n}\n");

        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("c_expr.cpp");
        let exe = dir.path().join("c_expr");
        std::fs::write(&src, &program).unwrap();
        let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
        let built = Command::new(&cxx)
            .args(["-std=c++17", "-O0", "-w", "-I"])
            .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/include"))
            .arg("-o")
            .arg(&exe)
            .arg(&src)
            .output()
            .unwrap_or_else(|e| panic!("running {cxx}: {e}"));
        assert!(
            built.status.success(),
            "{cxx} failed:\n{}",
            String::from_utf8_lossy(&built.stderr)
        );
        let ran = Command::new(&exe).output().unwrap();
        assert!(ran.status.success());
        let out = String::from_utf8(ran.stdout).unwrap();
        assert_values(&cases, &out, |e| c_expr(&k, e));
    }
}
