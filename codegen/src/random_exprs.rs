//! Random contract expressions and inputs, for the tests that hold each back end's printed
//! expressions (C in c_expr.rs, Python in python.rs) to the contract's one evaluator.

use ima_dsl::ir::{self, BinOp, Body, DType, EmptyPolicy, Expr, Kernel, Launch, Resident};

pub const SYMBOLS: [&str; 3] = ["A", "B", "C"];
/// A signed param and an unsigned one: C computes `A - q` in unsigned arithmetic unless the
/// printer converts q.
pub const PARAMS: [(&str, DType); 2] = [("p", DType::I64), ("q", DType::U32)];

/// A kernel with [`SYMBOLS`] and [`PARAMS`] in scope, for the printers' names.
pub fn kernel() -> Kernel {
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
            .map(|&(name, dtype)| ir::Param {
                name: name.to_string(),
                docs: vec![],
                dtype,
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

/// An expression, the symbols' and params' values, and what the contract evaluates it to.
pub struct Case {
    pub expr: Expr,
    pub symbols: Vec<i64>,
    pub params: Vec<i64>,
    pub value: i64,
}

/// `n` cases whose evaluation succeeds (no overflow, no division by zero), from `seed`:
/// every sign of every operator's operands, negative literals (what a `const` below zero
/// folds to) and, rarely, i64::MIN.
pub fn cases(seed: u64, n: usize) -> Vec<Case> {
    let mut rng = Rng(seed);
    let mut cases = Vec::new();
    while cases.len() < n {
        let expr = expr(&mut rng, 4);
        let symbols: Vec<i64> = SYMBOLS.iter().map(|_| rng.value()).collect();
        let params: Vec<i64> = PARAMS
            .iter()
            .map(|&(_, dtype)| match dtype.holds(-1) {
                true => rng.value(),
                false => rng.value().abs(),
            })
            .collect();
        if let Ok(value) = expr.eval(&symbols, &params) {
            cases.push(Case {
                expr,
                symbols,
                params,
                value,
            });
        }
    }
    cases
}

/// Holds each line of `output`, a program's that printed one value a case in order, to its
/// case's value, naming the expression as `printed` writes it where one differs.
pub fn assert_values(cases: &[Case], output: &str, printed: impl Fn(&Expr) -> String) {
    let got: Vec<&str> = output.lines().collect();
    assert_eq!(got.len(), cases.len());
    for (g, c) in got.iter().zip(cases) {
        assert_eq!(
            g.parse::<i64>().unwrap(),
            c.value,
            "{} at symbols {:?}, params {:?}",
            printed(&c.expr),
            c.symbols,
            c.params
        );
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
