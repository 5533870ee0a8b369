//! Evaluating contract expressions against the symbols bound so far, and naming the values
//! they used in messages.

use crate::capacity::SYMBOLS;
use crate::contract::{EvalError, Expr, KernelContract, Scalar};
use smallvec::SmallVec;

/// What expressions are evaluated against: the symbols bound so far and the params.
pub(super) struct Env<'a> {
    /// Each symbol's value, in [`KernelContract::symbols`] order, for [`Expr::eval`];
    /// 0 for an unbound symbol, and then read only by [`Env::symbol`], which says so.
    filled: SmallVec<[i64; SYMBOLS]>,
    /// Whether each symbol is bound: not where its binding argument was refused (already
    /// reported).
    bound: SmallVec<[bool; SYMBOLS]>,
    /// Every symbol is bound, as at any launch that passes: no expression need be
    /// searched for unbound symbols before it is evaluated.
    all_bound: bool,
    pub params: &'a [Scalar],
}

impl<'a> Env<'a> {
    /// No symbols yet.
    pub fn new(params: &'a [Scalar]) -> Self {
        Env {
            filled: SmallVec::new(),
            bound: SmallVec::new(),
            all_bound: true,
            params,
        }
    }

    /// Binds the next symbol to `value`; `None` leaves it unbound.
    pub fn push(&mut self, value: Option<i64>) {
        self.filled.push(value.unwrap_or(0));
        self.bound.push(value.is_some());
        self.all_bound &= value.is_some();
    }

    /// Symbol `i`'s value, `None` if it is unbound.
    pub fn symbol(&self, i: usize) -> Option<i64> {
        self.bound[i].then(|| self.filled[i])
    }

    /// Every symbol's value, in [`KernelContract::symbols`] order; `None` if one is unbound.
    pub fn values(&self) -> Option<&[i64]> {
        self.all_bound.then_some(&self.filled)
    }

    /// Evaluates `e` if every symbol it mentions is bound; `None` otherwise (the reason is
    /// already reported).
    pub fn eval(&self, e: &Expr) -> Option<Result<i64, EvalError>> {
        (self.all_bound || self.bound(e)).then(|| e.eval(&self.filled, self.params))
    }

    /// The largest magnitude `e` computes, its value's included ([`Expr::eval_peak`]), if
    /// every symbol it mentions is bound.
    pub fn peak(&self, e: &Expr) -> Option<Result<u64, EvalError>> {
        (self.all_bound || self.bound(e))
            .then(|| e.eval_peak(&self.filled, self.params).map(|(_, peak)| peak))
    }

    fn bound(&self, e: &Expr) -> bool {
        match *e {
            Expr::Const(_) | Expr::Param(_) => true,
            Expr::Sym(i) => self.bound[i],
            Expr::Neg(a) | Expr::Not(a) => self.bound(a),
            Expr::Bin(_, a, b) => self.bound(a) && self.bound(b),
        }
    }

    /// `name = value` for each symbol and param `e` mentions, for messages.
    pub fn values_of(&self, e: &Expr, c: &KernelContract) -> Vec<(&'static str, String)> {
        let (mut syms, mut ps) = (Vec::new(), Vec::new());
        e.mentions(&mut syms, &mut ps);
        let s = syms
            .into_iter()
            .filter_map(|i| Some((c.symbols[i].name, self.symbol(i)?.to_string())));
        let p = ps
            .into_iter()
            .map(|i| (c.params[i].name, self.params[i].to_string()));
        s.chain(p).collect()
    }
}
