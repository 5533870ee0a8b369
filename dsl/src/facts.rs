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

    /// The least common multiple of `multiple_of` (1 where it is empty): what the value is
    /// known to be a multiple of, in one number. Where it would overflow, the largest of
    /// them, which the value is a multiple of too.
    fn least_multiple(&self) -> i64 {
        let lcm = self.multiple_of.iter().try_fold(1i64, |l, &m| {
            let m = m.abs();
            (l / gcd(l, m)).checked_mul(m)
        });
        lcm.unwrap_or_else(|| self.multiple_of.iter().map(|m| m.abs()).max().unwrap_or(1))
    }
}

/// The greatest common divisor of |a| and |b| (gcd(x, 0) = |x|).
fn gcd(a: i64, b: i64) -> i64 {
    let (mut a, mut b) = (a.unsigned_abs(), b.unsigned_abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    i64::try_from(a).unwrap_or(i64::MAX)
}

/// The branches of a chain of `||`, in order.
fn or_branches<'e>(e: &'e Expr, out: &mut Vec<&'e Expr>) {
    match e {
        Expr::Bin(BinOp::Or, a, b) => {
            or_branches(a, out);
            or_branches(b, out);
        }
        _ => out.push(e),
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
        if *op == BinOp::Or {
            self.learn_any(c);
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
        // `X op c`, or `c op X` flipped; c any constant expression (`-1` is a negation).
        let (v, op, c) = match (var(a), b.eval_const(), a.eval_const(), var(b)) {
            (Some(v), Some(c), _, _) => (v, *op, c),
            (_, _, Some(c), Some(v)) => (v, flip(*op), c),
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
                // `D == 128`: a multiple of 128, so of every divisor of it (0 is left out:
                // the facts' multiples divide, and nothing divides by 0).
                if c > 0 {
                    f.multiple_of.push(c);
                }
            }
            _ => {}
        }
    }

    /// `A || B || ...`: what holds in every branch, each learned alone from what holds
    /// for any kernel (a dimension is never negative): the lowest of the branches' lower
    /// bounds, the highest of their upper bounds, and the greatest common divisor of
    /// what each makes a multiple of. So `D == 64 || D == 128 || D == 256` says D lies in
    /// 64 ..= 256 and is a multiple of 64, and a branch that says nothing of D (`NY == N
    /// || 2 * NY == N` says nothing of any one symbol) leaves D as the other facts have it.
    fn learn_any(&mut self, c: &Expr) {
        let mut branches = Vec::new();
        or_branches(c, &mut branches);
        let alone: Vec<Knowledge> = branches
            .iter()
            .map(|b| {
                let mut k = Knowledge::from_constraints(self.symbols.len(), self.params.len(), &[]);
                k.learn(b);
                k
            })
            .collect();
        let vars = (0..self.symbols.len())
            .map(Var::Sym)
            .chain((0..self.params.len()).map(Var::Param));
        for v in vars {
            let each = || alone.iter().map(|k| k.facts(v));
            let lo = each().map(|f| f.lo).min().flatten();
            let hi = each()
                .map(|f| f.hi)
                .try_fold(i64::MIN, |h, x| x.map(|x| h.max(x)));
            let multiple = each().map(Facts::least_multiple).fold(0, gcd);
            let f = self.facts_mut(v);
            if let Some(lo) = lo {
                f.lo = Some(f.lo.map_or(lo, |x| x.max(lo)));
            }
            if let Some(hi) = hi {
                f.hi = Some(f.hi.map_or(hi, |x| x.min(hi)));
            }
            if multiple > 1 {
                f.multiple_of.push(multiple);
            }
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

    /// Whether no value the facts allow satisfies `c`: a comparison whose sides' ranges
    /// admit no pair that meets it (`max(N, M) < 0`), two identical sides compared as
    /// different (`N != N`), a conjunction with such a part, a disjunction of only such
    /// branches.
    pub fn never_holds(&self, c: &Expr) -> bool {
        let Expr::Bin(op, a, b) = c else { return false };
        if a == b && matches!(op, BinOp::Ne | BinOp::Lt | BinOp::Gt) {
            return true;
        }
        let ((alo, ahi), (blo, bhi)) = (self.range(a), self.range(b));
        // x < y, both known.
        let below = |x: Option<i64>, y: Option<i64>| x.zip(y).is_some_and(|(x, y)| x < y);
        match op {
            BinOp::And => self.never_holds(a) || self.never_holds(b),
            BinOp::Or => self.never_holds(a) && self.never_holds(b),
            // a < b needs some a below some b: never where b's highest is at most a's lowest.
            BinOp::Lt => below(bhi, alo) || bhi == alo && bhi.is_some(),
            BinOp::Le => below(bhi, alo),
            BinOp::Gt => below(ahi, blo) || ahi == blo && ahi.is_some(),
            BinOp::Ge => below(ahi, blo),
            BinOp::Eq => below(ahi, blo) || below(bhi, alo),
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
    use proptest::prelude::*;

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

    fn eq(a: Expr, b: Expr) -> Expr {
        bin(BinOp::Eq, a, b)
    }

    fn any(branches: Vec<Expr>) -> Expr {
        branches
            .into_iter()
            .reduce(|a, b| bin(BinOp::Or, a, b))
            .expect("a branch")
    }

    #[test]
    fn a_symbol_fixed_to_a_value_is_a_multiple_of_its_divisors() {
        let d128 = eq(Expr::Sym(0), Expr::Const(128));
        let k = Knowledge::from_constraints(1, 0, &[&d128]);
        let f = k.facts(Var::Sym(0));
        assert_eq!((f.lo, f.hi), (Some(128), Some(128)));
        assert!(f.is_multiple_of(8) && f.is_multiple_of(128) && !f.is_multiple_of(256));
        // 48 == D: the same, written the other way round; D == 0 adds no multiple.
        let flipped = eq(Expr::Const(48), Expr::Sym(0));
        let k = Knowledge::from_constraints(1, 0, &[&flipped]);
        assert!(k.facts(Var::Sym(0)).is_multiple_of(16));
        let zero = eq(Expr::Sym(0), Expr::Const(0));
        let k = Knowledge::from_constraints(1, 0, &[&zero]);
        assert!(k.facts(Var::Sym(0)).multiple_of.is_empty());
    }

    #[test]
    fn a_disjunction_keeps_what_every_branch_says() {
        let d = |v| eq(Expr::Sym(0), Expr::Const(v));
        let head_dims = any(vec![d(64), d(128), d(256)]);
        let k = Knowledge::from_constraints(1, 0, &[&head_dims]);
        let f = k.facts(Var::Sym(0));
        assert_eq!((f.lo, f.hi), (Some(64), Some(256)));
        assert!(f.is_multiple_of(64) && !f.is_multiple_of(128));
        // A branch of `D % 8 == 0` and one of `D == 4`: multiples of 4, no upper bound.
        let rem8 = eq(
            bin(BinOp::Rem, Expr::Sym(0), Expr::Const(8)),
            Expr::Const(0),
        );
        let mixed = any(vec![rem8, d(4)]);
        let k = Knowledge::from_constraints(1, 0, &[&mixed]);
        let f = k.facts(Var::Sym(0));
        assert_eq!((f.lo, f.hi), (Some(0), None));
        assert!(f.is_multiple_of(4) && !f.is_multiple_of(8));
        // Joined facts meet the other constraints': with D >= 100, D lies in 100 ..= 256.
        let at_least = bin(BinOp::Ge, Expr::Sym(0), Expr::Const(100));
        let k = Knowledge::from_constraints(1, 0, &[&head_dims, &at_least]);
        let f = k.facts(Var::Sym(0));
        assert_eq!((f.lo, f.hi), (Some(100), Some(256)));
    }

    #[test]
    fn a_branch_that_says_nothing_of_a_symbol_leaves_it_unknown() {
        // `NY == N || 2 * NY == N` (symbols 0 and 1) bounds neither; nor does a branch on
        // another symbol, next to one that fixes this one.
        let ny_n = any(vec![
            eq(Expr::Sym(0), Expr::Sym(1)),
            eq(bin(BinOp::Mul, Expr::Const(2), Expr::Sym(0)), Expr::Sym(1)),
        ]);
        let other = any(vec![
            eq(Expr::Sym(0), Expr::Const(64)),
            eq(Expr::Sym(1), Expr::Const(64)),
        ]);
        let k = Knowledge::from_constraints(2, 0, &[&ny_n, &other]);
        for s in 0..2 {
            let f = k.facts(Var::Sym(s));
            assert_eq!((f.lo, f.hi), (Some(0), None));
            assert!(f.multiple_of.is_empty());
        }
    }

    #[test]
    fn a_multiple_too_large_for_one_number_keeps_its_largest_factor() {
        let f = Facts {
            lo: None,
            hi: None,
            multiple_of: vec![1 << 40, 3i64.pow(30)],
        };
        assert_eq!(f.least_multiple(), 3i64.pow(30));
        let f = Facts {
            lo: None,
            hi: None,
            multiple_of: vec![8, 12],
        };
        assert_eq!(f.least_multiple(), 24);
        assert_eq!((gcd(-12, 18), gcd(0, 5), gcd(0, 0)), (6, 5, 0));
    }

    /// The comparisons the generators below pick from.
    const COMPARISONS: [BinOp; 6] = [
        BinOp::Eq,
        BinOp::Le,
        BinOp::Lt,
        BinOp::Ge,
        BinOp::Gt,
        BinOp::Ne,
    ];

    /// A constraint on symbols 0 and 1 of the forms `learn` reads: comparisons with a
    /// constant, `S % m == 0`, and `&&` and `||` of them, nested (so that a branch may
    /// speak of one symbol and not the other).
    fn constraint() -> impl Strategy<Value = Expr> {
        let cmp = (0..2usize, 0..6usize, 0..80i64).prop_map(|(s, op, c)| {
            let op = COMPARISONS[op];
            bin(op, Expr::Sym(s), Expr::Const(c))
        });
        let rem = (0..2usize, 1..20i64).prop_map(|(s, m)| {
            eq(
                bin(BinOp::Rem, Expr::Sym(s), Expr::Const(m)),
                Expr::Const(0),
            )
        });
        prop_oneof![cmp, rem].prop_recursive(3, 12, 3, |inner| {
            (prop::bool::ANY, inner.clone(), inner)
                .prop_map(|(or, a, b)| bin(if or { BinOp::Or } else { BinOp::And }, a, b))
        })
    }

    proptest! {
        /// Sound: every pair of values in 0 ..= 90 that satisfies the constraints (by the
        /// contract's one evaluator) lies within each symbol's bounds and is a multiple of
        /// each of its divisors.
        #[test]
        fn the_facts_hold_for_every_value_the_constraints_allow(
            cs in prop::collection::vec(constraint(), 1..3)
        ) {
            let refs: Vec<&Expr> = cs.iter().collect();
            let k = Knowledge::from_constraints(2, 0, &refs);
            for v0 in 0..=90i64 {
                for v1 in 0..=90i64 {
                    if !cs.iter().all(|c| c.eval(&[v0, v1], &[]) == Ok(1)) {
                        continue;
                    }
                    for (s, v) in [(0, v0), (1, v1)] {
                        let f = k.facts(Var::Sym(s));
                        prop_assert!(f.lo.is_none_or(|lo| lo <= v), "{v} below {:?}: {cs:?}", f.lo);
                        prop_assert!(f.hi.is_none_or(|hi| v <= hi), "{v} above {:?}: {cs:?}", f.hi);
                        for &m in &f.multiple_of {
                            prop_assert!(v % m == 0, "{v} not a multiple of {m}: {cs:?}");
                        }
                    }
                }
            }
        }
    }

    /// A comparison of two terms over symbols 0 and 1: a symbol, a constant, their
    /// minimum, maximum, sum or difference.
    fn comparison() -> impl Strategy<Value = Expr> {
        let term = (0..7usize, -5..100i64).prop_map(|(t, c)| {
            let (s0, s1) = (Expr::Sym(0), Expr::Sym(1));
            match t {
                0 => s0,
                1 => s1,
                2 => Expr::Const(c),
                3 => bin(BinOp::Max, s0, s1),
                4 => bin(BinOp::Min, s0, s1),
                5 => bin(BinOp::Add, s0, s1),
                _ => bin(BinOp::Sub, s0, s1),
            }
        });
        (0..6usize, term.clone(), term).prop_map(|(op, a, b)| {
            let op = COMPARISONS[op];
            bin(op, a, b)
        })
    }

    proptest! {
        /// Sound: a constraint said never to hold under the constraints before it is false
        /// for every pair of values in 0 ..= 90 that satisfies those.
        #[test]
        fn what_never_holds_holds_for_no_value_the_constraints_allow(
            cs in prop::collection::vec(constraint(), 0..3),
            c in comparison(),
        ) {
            let refs: Vec<&Expr> = cs.iter().collect();
            let k = Knowledge::from_constraints(2, 0, &refs);
            if k.never_holds(&c) {
                for v0 in 0..=90i64 {
                    for v1 in 0..=90i64 {
                        if cs.iter().all(|p| p.eval(&[v0, v1], &[]) == Ok(1)) {
                            prop_assert!(c.eval(&[v0, v1], &[]) != Ok(1), "{c:?} holds at {v0}, {v1} under {cs:?}");
                        }
                    }
                }
            }
        }
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
