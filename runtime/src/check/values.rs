//! Evaluating contract expressions against the symbols bound so far, and naming the values
//! they used in messages.

use crate::contract::{EvalError, Expr, KernelContract, Scalar, TensorArg};

/// Symbols and params an expression mentions, each once, in first-use order.
pub(super) fn mentions(e: &Expr, syms: &mut Vec<usize>, params: &mut Vec<usize>) {
    match *e {
        Expr::Const(_) => {}
        Expr::Sym(i) if !syms.contains(&i) => syms.push(i),
        Expr::Param(i) if !params.contains(&i) => params.push(i),
        Expr::Sym(_) | Expr::Param(_) => {}
        Expr::Neg(a) | Expr::Not(a) => mentions(a, syms, params),
        Expr::Bin(_, a, b) => {
            mentions(a, syms, params);
            mentions(b, syms, params);
        }
    }
}

/// What expressions are evaluated against: the symbols bound so far and the params.
pub(super) struct Env<'a> {
    /// `None` where the binding argument was refused (already reported).
    pub symbols: Vec<Option<i64>>,
    /// `symbols` with 0 for the unbound, for [`Expr::eval`]; read only for bound symbols.
    filled: Vec<i64>,
    pub params: &'a [Scalar],
}

impl<'a> Env<'a> {
    pub fn new(symbols: Vec<Option<i64>>, params: &'a [Scalar]) -> Self {
        let filled = symbols.iter().map(|s| s.unwrap_or(0)).collect();
        Env {
            symbols,
            filled,
            params,
        }
    }

    /// Evaluates `e` if every symbol it mentions is bound; `None` otherwise (the reason is
    /// already reported).
    pub fn eval(&self, e: &Expr) -> Option<Result<i64, EvalError>> {
        self.bound(e).then(|| e.eval(&self.filled, self.params))
    }

    fn bound(&self, e: &Expr) -> bool {
        match *e {
            Expr::Const(_) | Expr::Param(_) => true,
            Expr::Sym(i) => self.symbols[i].is_some(),
            Expr::Neg(a) | Expr::Not(a) => self.bound(a),
            Expr::Bin(_, a, b) => self.bound(a) && self.bound(b),
        }
    }

    /// `name = value` for each symbol and param `e` mentions, for messages.
    pub fn values_of(&self, e: &Expr, c: &KernelContract) -> Vec<(&'static str, String)> {
        let (mut syms, mut ps) = (Vec::new(), Vec::new());
        mentions(e, &mut syms, &mut ps);
        let s = syms
            .into_iter()
            .filter_map(|i| Some((c.symbols[i].name, self.symbols[i]?.to_string())));
        let p = ps
            .into_iter()
            .map(|i| (c.params[i].name, self.params[i].to_string()));
        s.chain(p).collect()
    }
}

/// The physical position holding logical dimension `dim`.
pub(super) fn physical(a: &TensorArg, dim: usize) -> usize {
    a.stored.iter().position(|&l| l == dim).unwrap_or(dim)
}
