//! What the `where` clauses say about each symbol: bounds and divisibility. The checker
//! uses them to prove shared memory fits, that vector alignment holds, and to find
//! constraints that can never hold.

use crate::ir::{BinOp, Expr};

/// Bounds and divisors known for one symbol or param.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Facts {
    pub lo: Option<i64>,
    pub hi: Option<i64>,
    /// The symbol is a multiple of each of these.
    pub multiple_of: Vec<i64>,
}

impl Facts {
    fn unknown(lo: Option<i64>) -> Self {
        Facts {
            lo,
            hi: None,
            multiple_of: Vec::new(),
        }
    }

    /// Whether the value is known to be a multiple of `m`.
    pub fn is_multiple_of(&self, m: i64) -> bool {
        m == 1 || self.multiple_of.iter().any(|&d| d % m == 0)
    }
}

/// A name whose facts are tracked: a symbol or a param.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Var {
    Sym(usize),
    Param(usize),
}

fn var(e: &Expr) -> Option<Var> {
    match e {
        Expr::Sym(s) => Some(Var::Sym(*s)),
        Expr::Param(p) => Some(Var::Param(*p)),
        _ => None,
    }
}

/// Facts for every symbol (dimensions, never negative) and param, from the constraints.
pub struct Knowledge {
    pub symbols: Vec<Facts>,
    pub params: Vec<Facts>,
}

impl Knowledge {
    pub fn from_constraints(symbols: usize, params: usize, constraints: &[&Expr]) -> Self {
        let mut k = Knowledge {
            symbols: vec![Facts::unknown(Some(0)); symbols],
            params: vec![Facts::unknown(None); params],
        };
        for c in constraints {
            k.learn(c);
        }
        k
    }

    pub fn facts(&self, v: Var) -> &Facts {
        match v {
            Var::Sym(s) => &self.symbols[s],
            Var::Param(p) => &self.params[p],
        }
    }

    fn facts_mut(&mut self, v: Var) -> &mut Facts {
        match v {
            Var::Sym(s) => &mut self.symbols[s],
            Var::Param(p) => &mut self.params[p],
        }
    }

    fn learn(&mut self, c: &Expr) {
        let Expr::Bin(op, a, b) = c else { return };
        if *op == BinOp::And {
            self.learn(a);
            self.learn(b);
            return;
        }
        // `X % m == 0`
        if *op == BinOp::Eq
            && let (Expr::Bin(BinOp::Rem, x, m), Expr::Const(0)) = (&**a, &**b)
            && let (Some(v), Expr::Const(m)) = (var(x), &**m)
            && *m > 0
        {
            self.facts_mut(v).multiple_of.push(*m);
            return;
        }
        // `X op c`, or `c op X` flipped.
        let (v, op, c) = match (var(a), &**b, &**a, var(b)) {
            (Some(v), Expr::Const(c), _, _) => (v, *op, *c),
            (_, _, Expr::Const(c), Some(v)) => (v, flip(*op), *c),
            _ => return,
        };
        let f = self.facts_mut(v);
        let tighten_hi = |f: &mut Facts, h: i64| f.hi = Some(f.hi.map_or(h, |x| x.min(h)));
        let tighten_lo = |f: &mut Facts, l: i64| f.lo = Some(f.lo.map_or(l, |x| x.max(l)));
        match op {
            BinOp::Le => tighten_hi(f, c),
            BinOp::Lt => tighten_hi(f, c.saturating_sub(1)),
            BinOp::Ge => tighten_lo(f, c),
            BinOp::Gt => tighten_lo(f, c.saturating_add(1)),
            BinOp::Eq => {
                tighten_lo(f, c);
                tighten_hi(f, c);
            }
            _ => {}
        }
    }

    /// Whether `e` is known to be a multiple of `m`: a constant that is, a symbol or
    /// param the constraints say is, a product with such a factor, or a sum or
    /// difference of such terms (`(HQ + 2 * HKV) * D` with `D % 8 == 0`).
    pub fn is_multiple_of(&self, e: &Expr, m: i64) -> bool {
        match e {
            _ if m == 1 => true,
            Expr::Const(c) => c % m == 0,
            Expr::Sym(_) | Expr::Param(_) => {
                self.facts(var(e).expect("a variable")).is_multiple_of(m)
            }
            Expr::Neg(a) => self.is_multiple_of(a, m),
            Expr::Bin(BinOp::Mul, a, b) => self.is_multiple_of(a, m) || self.is_multiple_of(b, m),
            Expr::Bin(BinOp::Add | BinOp::Sub, a, b) => {
                self.is_multiple_of(a, m) && self.is_multiple_of(b, m)
            }
            _ => false,
        }
    }

    /// The largest value `e` can take, when the facts bound it.
    pub fn upper(&self, e: &Expr) -> Option<i64> {
        self.range(e).1
    }

    /// (lowest, highest) values of `e`, where known.
    fn range(&self, e: &Expr) -> (Option<i64>, Option<i64>) {
        match e {
            Expr::Const(v) => (Some(*v), Some(*v)),
            Expr::Sym(_) | Expr::Param(_) => {
                let f = self.facts(var(e).expect("a variable"));
                (f.lo, f.hi)
            }
            Expr::Neg(a) => {
                let (lo, hi) = self.range(a);
                (hi.and_then(i64::checked_neg), lo.and_then(i64::checked_neg))
            }
            Expr::Not(_) => (Some(0), Some(1)),
            Expr::Bin(op, a, b) => {
                let (alo, ahi) = self.range(a);
                let (blo, bhi) = self.range(b);
                let both = |x: Option<i64>, y: Option<i64>, f: fn(i64, i64) -> Option<i64>| {
                    x.zip(y).and_then(|(x, y)| f(x, y))
                };
                let nonneg = alo.is_some_and(|v| v >= 0) && blo.is_some_and(|v| v >= 0);
                match op {
                    BinOp::Add => (
                        both(alo, blo, i64::checked_add),
                        both(ahi, bhi, i64::checked_add),
                    ),
                    BinOp::Sub => (
                        both(alo, bhi, i64::checked_sub),
                        both(ahi, blo, i64::checked_sub),
                    ),
                    BinOp::Mul if nonneg => (
                        both(alo, blo, i64::checked_mul),
                        both(ahi, bhi, i64::checked_mul),
                    ),
                    BinOp::Div if nonneg && blo.is_some_and(|v| v > 0) => (
                        both(alo, bhi, i64::checked_div),
                        both(ahi, blo, i64::checked_div),
                    ),
                    BinOp::CeilDiv if nonneg && blo.is_some_and(|v| v > 0) => (
                        both(alo, bhi, |x, y| Some(x.checked_add(y - 1)? / y)),
                        both(ahi, blo, |x, y| Some(x.checked_add(y - 1)? / y)),
                    ),
                    BinOp::Rem if nonneg && bhi.is_some() => {
                        // bhi may lie below blo where the constraints contradict.
                        let top = bhi.and_then(|v| v.checked_sub(1));
                        (Some(0), top.zip(ahi).map(|(x, y)| x.min(y)))
                    }
                    BinOp::Min => (
                        both(alo, blo, |x, y| Some(x.min(y))),
                        match (ahi, bhi) {
                            (Some(x), Some(y)) => Some(x.min(y)),
                            (x, y) => x.or(y),
                        },
                    ),
                    BinOp::Max => (alo.max(blo), both(ahi, bhi, |x, y| Some(x.max(y)))),
                    _ => (None, None),
                }
            }
        }
    }
}

fn flip(op: BinOp) -> BinOp {
    match op {
        BinOp::Lt => BinOp::Gt,
        BinOp::Le => BinOp::Ge,
        BinOp::Gt => BinOp::Lt,
        BinOp::Ge => BinOp::Le,
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
        Expr::Bin(op, Box::new(a), Box::new(b))
    }

    /// Symbols 0 (HQ), 1 (HKV), 2 (D) with `D % 16 == 0` and `HQ % 8 == 0`.
    fn knowledge() -> Knowledge {
        let rem = |s: usize, m: i64| {
            bin(
                BinOp::Eq,
                bin(BinOp::Rem, Expr::Sym(s), Expr::Const(m)),
                Expr::Const(0),
            )
        };
        let (d16, hq8) = (rem(2, 16), rem(0, 8));
        Knowledge::from_constraints(3, 0, &[&d16, &hq8])
    }

    #[test]
    fn a_product_is_a_multiple_when_one_factor_is() {
        let k = knowledge();
        let heads = bin(
            BinOp::Add,
            Expr::Sym(0),
            bin(BinOp::Mul, Expr::Const(2), Expr::Sym(1)),
        );
        let width = bin(BinOp::Mul, heads.clone(), Expr::Sym(2));
        assert!(k.is_multiple_of(&width, 8));
        assert!(k.is_multiple_of(&width, 16));
        assert!(!k.is_multiple_of(&width, 32));
        // HQ + 2 * HKV: HQ is a multiple of 8, 2 * HKV only of 2.
        assert!(k.is_multiple_of(&heads, 2));
        assert!(!k.is_multiple_of(&heads, 8));
    }

    #[test]
    fn a_sum_needs_every_term_and_a_quotient_proves_nothing() {
        let k = knowledge();
        let sum = bin(BinOp::Sub, Expr::Sym(2), Expr::Const(8));
        assert!(k.is_multiple_of(&sum, 8));
        assert!(!k.is_multiple_of(&bin(BinOp::Add, Expr::Sym(2), Expr::Const(4)), 8));
        assert!(!k.is_multiple_of(&bin(BinOp::Div, Expr::Sym(2), Expr::Const(2)), 8));
        assert!(k.is_multiple_of(&Expr::Neg(Box::new(Expr::Sym(2))), 16));
        assert!(k.is_multiple_of(&Expr::Sym(1), 1));
    }
}
