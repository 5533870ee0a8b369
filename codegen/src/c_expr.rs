//! IR expressions printed as C, over the symbol and param names in scope in the kernel.

use ima_dsl::ir::{BinOp, Expr, Kernel};

pub fn c_expr(k: &Kernel, e: &Expr) -> String {
    match e {
        Expr::Const(v) => c_literal(*v),
        Expr::Sym(s) => k.symbols[*s].name.clone(),
        Expr::Param(p) => k.params[*p].name.clone(),
        Expr::Neg(a) => format!("(-{})", c_expr(k, a)),
        Expr::Not(a) => format!("(!{})", c_expr(k, a)),
        Expr::Bin(op, a, b) => {
            let (a, b) = (c_expr(k, a), c_expr(k, b));
            match op {
                BinOp::CeilDiv => format!("ima_ceil_div({a}, {b})"),
                BinOp::Min => format!("min({a}, {b})"),
                BinOp::Max => format!("max({a}, {b})"),
                _ => format!("({a} {} {b})", op.symbol()),
            }
        }
    }
}

/// A constant as a C literal. A negative one (a `const` folded below zero) is bracketed, so
/// that a negation before it never reads as C's `--`; i64::MIN is written as a sum, since
/// C reads `-9223372036854775808` as the negation of a literal too large for `long long`.
fn c_literal(v: i64) -> String {
    if v == i64::MIN {
        format!("({}LL - 1)", i64::MIN + 1)
    } else if v < 0 {
        format!("({v})")
    } else {
        v.to_string()
    }
}

#[cfg(test)]
mod tests {
    //! The C the back end prints for an expression, compiled by the host C++ compiler
    //! (`c++`, or `$CXX`) in 64-bit arithmetic with ima.cuh (for `ima_ceil_div`), gives
    //! the value of the contract's one evaluator on random expressions and inputs,
    //! wherever that evaluation succeeds (no overflow, no division by zero), for every
    //! sign of `ceil`'s operands.

    use super::c_expr;
    use ima_dsl::ir::{self, BinOp, Body, DType, EmptyPolicy, Expr, Kernel, Launch, Resident};
    use std::fmt::Write;
    use std::process::Command;

    const SYMBOLS: [&str; 3] = ["A", "B", "C"];
    const PARAMS: [&str; 2] = ["p", "q"];

    fn kernel() -> Kernel {
        Kernel {
            name: "k".into(),
            docs: vec![],
            line: 1,
            symbols: SYMBOLS
                .iter()
                .enumerate()
                .map(|(dim, s)| ir::Symbol {
                    name: s.to_string(),
                    arg: 0,
                    dim,
                })
                .collect(),
            args: vec![],
            params: PARAMS
                .iter()
                .map(|p| ir::Param {
                    name: p.to_string(),
                    docs: vec![],
                    dtype: DType::I64,
                })
                .collect(),
            constraints: vec![],
            shared: vec![],
            empty: EmptyPolicy::Skip,
            launch: Launch::Grid {
                grid: vec![],
                resident: Resident::No,
                cluster: None,
            },
            body: Body {
                text: String::new(),
                line: 1,
            },
            block: [1, 1, 1],
            block_from_occupancy: false,
            min_blocks: 1,
        }
    }

    /// splitmix64: deterministic, so a failure reproduces.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }

        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }

        fn value(&mut self) -> i64 {
            self.below(50) as i64 - 12
        }
    }

    fn expr(rng: &mut Rng, depth: u32) -> Expr {
        let leaf = depth == 0 || rng.below(4) == 0;
        if leaf {
            return match rng.below(3) {
                // Negative literals are what a `const` below zero folds to; i64::MIN, rarely.
                0 if rng.below(64) == 0 => Expr::Const(i64::MIN),
                0 => Expr::Const(rng.below(40) as i64 - 20),
                1 => Expr::Sym(rng.below(SYMBOLS.len() as u64) as usize),
                _ => Expr::Param(rng.below(PARAMS.len() as u64) as usize),
            };
        }
        let sub = |rng: &mut Rng| Box::new(expr(rng, depth - 1));
        match rng.below(8) {
            0 => Expr::Neg(sub(rng)),
            1 => Expr::Not(sub(rng)),
            _ => {
                let op = BinOp::ALL[rng.below(BinOp::ALL.len() as u64) as usize];
                Expr::Bin(op, sub(rng), sub(rng))
            }
        }
    }

    #[test]
    fn c_text_evaluates_as_the_contract() {
        let k = kernel();
        let mut rng = Rng(17);
        let mut program = String::from(
            "#include <cstdio>\n\
             #include \"host_shim.h\"\n\
             #include \"ima.cuh\"\n\
             static long long min(long long a, long long b) { return a < b ? a : b; }\n\
             static long long max(long long a, long long b) { return a > b ? a : b; }\n\
             int main() {\n",
        );
        let mut expected = Vec::new();
        while expected.len() < 2000 {
            let e = expr(&mut rng, 4);
            let symbols: Vec<i64> = SYMBOLS.iter().map(|_| rng.value()).collect();
            let params: Vec<i64> = PARAMS.iter().map(|_| rng.value()).collect();
            let Ok(v) = e.eval(&symbols, &params) else {
                continue;
            };
            let mut decls = String::new();
            for (name, v) in SYMBOLS
                .iter()
                .zip(&symbols)
                .chain(PARAMS.iter().zip(&params))
            {
                write!(decls, "long long {name} = {v}LL; ").unwrap();
            }
            writeln!(
                program,
                "  {{ {decls}printf(\"%lld\\n\", (long long)({})); }}",
                c_expr(&k, &e)
            )
            .unwrap();
            expected.push((v, c_expr(&k, &e), symbols, params));
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
        let got: Vec<&str> = out.lines().collect();
        assert_eq!(got.len(), expected.len());
        for (g, (want, text, symbols, params)) in got.iter().zip(&expected) {
            assert_eq!(
                g.parse::<i64>().unwrap(),
                *want,
                "{text} at symbols {symbols:?}, params {params:?}"
            );
        }
    }
}
