//! Symbol assignments for one kernel: edge values first, then random ones.
//!
//! Everything here reads the [`KernelContract`] only and evaluates its expressions with
//! the runtime's own [`Expr::eval`]. A case is *valid* when every constraint holds, every
//! extent of every argument is at least 1, a raw grid and the shared memory fit the
//! device's limits, and the tensors' bytes stay within the budget ([`check_case`]); every
//! case this module returns is valid, and whatever it could not generate it says in
//! [`Cases::notes`].
//!
//! Edge values per symbol ([`targets`]): 1; each vector width (alignment over element
//! size, where it exceeds 1) and the block's thread count, each ± 1; a quantized
//! argument's group size ± 1 (32, 64 and 128 when the group is a symbol, plus `K` at
//! `G - 1`, `G + 1` and `2G + 1`, or the nearest `K` on that side that the kernel admits
//! and that leaves a group partial); values leaving a remainder against the pack factor
//! 8; small primes; and the largest value the constraints (`S <= 256`, `512 % S == 0`)
//! and the byte budget allow, the symbols a constraint relates to it grown alongside. One
//! more case takes an argument past 2^31 elements when `--max-bytes` allows it.

use ima_runtime::{
    BinOp, DeviceLimits, Expr, KernelContract, Launch, Resident, Role, SHARED_ALIGN, Scalar,
    TensorArg,
};

use crate::rng::Rng;

/// Elements an argument must exceed for the case past 32-bit indexing.
pub const PAST_I32: u128 = 1 << 31;
/// The pack factor of 4-bit formats: 8 values per `i32` word.
pub const PACK: i64 = 8;
/// Small primes every symbol tries.
pub const PRIMES: [i64; 6] = [3, 7, 13, 31, 127, 257];
/// Values that leave a remainder against [`PACK`].
pub const UNPACKED: [i64; 4] = [7, 9, 15, 17];
/// Group sizes tried where a quantized argument's group is a symbol.
pub const GROUPS: [i64; 3] = [32, 64, 128];

/// What limits the generated cases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// Bytes of all tensors of one case together (`--max-bytes`).
    pub max_bytes: u64,
    /// Bytes of one random case: a smaller budget keeps random cases fast; edge cases
    /// use `max_bytes`.
    pub random_bytes: u64,
    /// No symbol exceeds this (but in the case past 2^31 elements): bounds symbols that
    /// no byte count grows with, such as a group size.
    pub symbol_cap: i64,
    /// Largest random value drawn for a symbol before shrinking to the budget.
    pub random_cap: i64,
    /// The device's limits: a case whose grid or shared memory the checker would refuse
    /// on it is not generated.
    pub limits: DeviceLimits,
}

/// Default `--max-bytes`: 256 MiB.
pub const DEFAULT_MAX_BYTES: u64 = 256 << 20;

impl Config {
    pub fn new(max_bytes: u64, limits: DeviceLimits) -> Self {
        Config {
            max_bytes,
            random_bytes: max_bytes.min(16 << 20),
            symbol_cap: 1 << 24,
            random_cap: 4096,
            limits,
        }
    }

    /// The limits of current NVIDIA GPUs (an H100's or H200's), for generating cases
    /// without one.
    pub fn typical_limits() -> DeviceLimits {
        DeviceLimits::SM_90
    }
}

/// One launch's symbol values and params.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    /// In [`KernelContract::symbols`] order.
    pub symbols: Vec<i64>,
    pub params: Vec<Scalar>,
    /// Why this case: `D = 255 (block - 1)`, `random`.
    pub label: String,
}

impl Case {
    /// `B = 1, H = 3, D = 256`.
    pub fn describe(&self, c: &KernelContract) -> String {
        let syms = c
            .symbols
            .iter()
            .zip(&self.symbols)
            .map(|(s, v)| format!("{} = {v}", s.name));
        let params = c
            .params
            .iter()
            .zip(&self.params)
            .map(|(p, v)| format!("{} = {v}", p.name));
        syms.chain(params).collect::<Vec<_>>().join(", ")
    }
}

/// The cases of one kernel, and what could not be generated.
#[derive(Debug, Clone, Default)]
pub struct Cases {
    pub cases: Vec<Case>,
    pub notes: Vec<String>,
}

/// Why an assignment is not a valid case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reject {
    /// A constraint is false, or cannot be evaluated.
    Constraint(&'static str),
    /// An extent is below 1 or cannot be evaluated.
    Extent(String),
    /// A symbol exceeds [`Config::symbol_cap`].
    Cap(&'static str),
    /// The tensors take more bytes than the budget.
    Bytes(u128),
    /// A raw grid outside the device's limits, a `resident` one of more blocks than the
    /// device has SMs (the most it surely holds at once; the runtime refuses a launch past
    /// what the kernel's occupancy allows, where a `persistent` one launches fewer), or one
    /// that is no whole number of its clusters (which the runtime refuses).
    Grid,
    /// More shared memory than the device has.
    Shared(u128),
}

/// `e` with `symbols` and `params`; `None` on any evaluation error.
pub fn eval(e: &Expr, symbols: &[i64], params: &[Scalar]) -> Option<i64> {
    e.eval(symbols, params).ok()
}

/// Elements of argument `arg` (product of its extents), `None` if one cannot be evaluated.
pub fn numel(c: &KernelContract, arg: usize, symbols: &[i64], params: &[Scalar]) -> Option<u128> {
    c.args[arg].dims.iter().try_fold(1u128, |acc, d| {
        let n = eval(&d.expr, symbols, params)?;
        Some(acc.saturating_mul(u128::try_from(n).ok()?))
    })
}

/// Extra elements a strided argument's view may take beyond its own: see
/// [`crate::layout::plan_layout`].
pub const STRIDED_SLACK: u128 = 64;

/// Bytes the tensors of a case take at most: every argument with memory, a strided one
/// counted twice plus [`STRIDED_SLACK`] elements for its padding and offset.
pub fn bytes(c: &KernelContract, symbols: &[i64], params: &[Scalar]) -> Option<u128> {
    let mut total: u128 = 0;
    for (i, a) in c.args.iter().enumerate() {
        if a.role == Role::Logical {
            continue;
        }
        let n = numel(c, i, symbols, params)?;
        let n = if a.strided {
            n.saturating_mul(2).saturating_add(STRIDED_SLACK)
        } else {
            n
        };
        total = total.saturating_add(n.saturating_mul(a.dtype.size() as u128));
    }
    Some(total)
}

/// Dynamic shared memory the launch takes, laid out as the runtime lays it out.
pub fn shared_bytes(c: &KernelContract, symbols: &[i64], params: &[Scalar]) -> Option<u128> {
    let mut end: u128 = 0;
    for s in c.shared {
        let mut bytes = s.dtype.size() as u128;
        for d in s.dims {
            let n = u128::try_from(eval(&d.expr, symbols, params)?).ok()?;
            bytes = bytes.saturating_mul(n);
        }
        end = end
            .next_multiple_of(s.align.max(SHARED_ALIGN) as u128)
            .saturating_add(bytes);
    }
    Some(end.saturating_add(c.shared_slack() as u128))
}

/// Whether `symbols` and `params` make a valid case within `budget` bytes.
pub fn check_case(
    c: &KernelContract,
    cfg: &Config,
    symbols: &[i64],
    params: &[Scalar],
    budget: u64,
) -> Result<(), Reject> {
    for (s, &v) in c.symbols.iter().zip(symbols) {
        if v > cfg.symbol_cap {
            return Err(Reject::Cap(s.name));
        }
    }
    structure(c, cfg, symbols, params, budget)
}

/// [`check_case`] without the symbol cap.
fn structure(
    c: &KernelContract,
    cfg: &Config,
    symbols: &[i64],
    params: &[Scalar],
    budget: u64,
) -> Result<(), Reject> {
    extents(c, symbols, params)?;
    for k in c.constraints {
        if !matches!(eval(&k.expr, symbols, params), Some(v) if v != 0) {
            return Err(Reject::Constraint(k.text));
        }
    }
    limits(c, cfg, symbols, params, budget)
}

/// Every extent is at least 1.
fn extents(c: &KernelContract, symbols: &[i64], params: &[Scalar]) -> Result<(), Reject> {
    for a in c.args {
        for d in a.dims {
            match eval(&d.expr, symbols, params) {
                Some(n) if n >= 1 => {}
                _ => return Err(Reject::Extent(format!("{}: {}", a.name, d.text))),
            }
        }
    }
    Ok(())
}

/// The grid, shared memory and bytes fit: the limits that only grow with each symbol.
fn limits(
    c: &KernelContract,
    cfg: &Config,
    symbols: &[i64],
    params: &[Scalar],
    budget: u64,
) -> Result<(), Reject> {
    if let Launch::Grid {
        dims,
        resident,
        cluster,
    } = c.launch
    {
        let mut blocks = 1i128;
        for (axis, (e, &limit)) in dims.iter().zip(&cfg.limits.grid).enumerate() {
            let whole = |n: i64| cluster.is_none_or(|c| n % i64::from(c[axis]) == 0);
            match eval(e, symbols, params) {
                Some(n) if n >= 1 && n <= i64::from(limit) && whole(n) => blocks *= i128::from(n),
                _ => return Err(Reject::Grid),
            }
        }
        if resident == Resident::Whole && blocks > i128::from(cfg.limits.sms) {
            return Err(Reject::Grid);
        }
    }
    let shared = shared_bytes(c, symbols, params).ok_or(Reject::Shared(u128::MAX))?;
    if shared > u128::from(cfg.limits.shared_bytes) {
        return Err(Reject::Shared(shared));
    }
    let b = bytes(c, symbols, params).ok_or(Reject::Bytes(u128::MAX))?;
    if b > u128::from(budget) {
        return Err(Reject::Bytes(b));
    }
    Ok(())
}

/// Whether `v` satisfies every constraint that mentions symbol `s` alone.
pub fn unary_ok(c: &KernelContract, s: usize, v: i64) -> bool {
    if v < 1 {
        return false;
    }
    let mut symbols = vec![1i64; c.symbols.len()];
    symbols[s] = v;
    c.constraints.iter().all(|k| {
        let mut m = Vec::new();
        k.expr.mentions(&mut m, &mut Vec::new());
        m != [s]
            || k.expr.mentions_param()
            || matches!(eval(&k.expr, &symbols, &[]), Some(x) if x != 0)
    })
}

/// The upper bound the constraints put on symbol `s` alone (`S <= 256`, `S < 17`,
/// `256 >= S`, `S == 4`, `512 % S == 0`, also inside `&&`).
pub fn upper_bound(c: &KernelContract, s: usize) -> Option<i64> {
    fn walk(e: &Expr, s: usize, ub: &mut Option<i64>) {
        let mut bound = |v: i64| *ub = Some(ub.map_or(v, |u| u.min(v)));
        match *e {
            Expr::Bin(BinOp::And, a, b) => {
                walk(a, s, ub);
                walk(b, s, ub);
            }
            // S divides k (a TMA tile of 512 rows asks it of a quantized weight's group):
            // no divisor of a positive k exceeds it.
            Expr::Bin(
                BinOp::Eq,
                &Expr::Bin(BinOp::Rem, &Expr::Const(k), &Expr::Sym(x)),
                &Expr::Const(0),
            )
            | Expr::Bin(
                BinOp::Eq,
                &Expr::Const(0),
                &Expr::Bin(BinOp::Rem, &Expr::Const(k), &Expr::Sym(x)),
            ) if x == s && k > 0 => bound(k),
            Expr::Bin(op, &Expr::Sym(x), &Expr::Const(k)) if x == s => match op {
                BinOp::Le | BinOp::Eq => bound(k),
                BinOp::Lt => bound(k - 1),
                _ => {}
            },
            Expr::Bin(op, &Expr::Const(k), &Expr::Sym(x)) if x == s => match op {
                BinOp::Ge | BinOp::Eq => bound(k),
                BinOp::Gt => bound(k - 1),
                _ => {}
            },
            _ => {}
        }
    }
    let mut ub = None;
    for k in c.constraints {
        walk(&k.expr, s, &mut ub);
    }
    ub
}

/// The nearest value to `v` that [`unary_ok`] accepts within `1..=hi`: the first one at
/// or above `v`, else the last one below it (each within 4096 steps).
pub fn admissible_near(c: &KernelContract, s: usize, v: i64, hi: i64) -> Option<i64> {
    let v = v.clamp(1, hi.max(1));
    (v..=hi.min(v.saturating_add(4096)))
        .find(|&u| unary_ok(c, s, u))
        .or_else(|| {
            (v.saturating_sub(4096).max(1)..v)
                .rev()
                .find(|&u| unary_ok(c, s, u))
        })
}

/// The most a symbol may be: its constraint bound and the symbol cap.
fn ceiling(c: &KernelContract, cfg: &Config, s: usize) -> i64 {
    upper_bound(c, s).map_or(cfg.symbol_cap, |u| u.min(cfg.symbol_cap))
}

/// The smallest admissible value of each symbol, the starting point of every edge case,
/// then tied (`tie`), so that constraints between symbols (`NY == N || 2 * NY == N`) hold
/// there too where a tie can make them.
pub fn base(c: &KernelContract, cfg: &Config) -> Result<Vec<i64>, String> {
    let mut base = (0..c.symbols.len())
        .map(|s| {
            admissible_near(c, s, 1, ceiling(c, cfg, s)).ok_or_else(|| {
                format!(
                    "no value of {} in 1..=4097 satisfies the constraints",
                    c.symbols[s].name
                )
            })
        })
        .collect::<Result<Vec<i64>, String>>()?;
    tie(c, cfg, &mut base, &[], &[]);
    Ok(base)
}

/// The constraints `symbols` leaves failing (one that cannot be evaluated fails, as does
/// one that mentions a param when there are none yet).
fn failing(c: &KernelContract, symbols: &[i64], params: &[Scalar]) -> usize {
    let holds = |e: &Expr| {
        (!params.is_empty() || !e.mentions_param())
            && matches!(eval(e, symbols, params), Some(v) if v != 0)
    };
    c.constraints.iter().filter(|k| !holds(&k.expr)).count()
}

/// Where constraints between symbols fail, moves the symbols not in `fixed`, in turn, to
/// the value among their own and each other symbol's value, its double and its half that
/// [`unary_ok`] accepts and that leaves the fewest constraints failing (their own on a
/// tie): a relation such as `NY == N || 2 * NY == N` or `HQ % HKV == 0` then holds, where
/// symbols drawn apart would almost never meet it.
fn tie(c: &KernelContract, cfg: &Config, symbols: &mut [i64], fixed: &[usize], params: &[Scalar]) {
    if failing(c, symbols, params) == 0 {
        return;
    }
    for o in (0..symbols.len()).filter(|o| !fixed.contains(o)) {
        let others: Vec<i64> = (0..symbols.len())
            .filter(|&f| f != o)
            .flat_map(|f| [symbols[f], symbols[f].saturating_mul(2), symbols[f] / 2])
            .collect();
        let hi = ceiling(c, cfg, o);
        let mut best = (failing(c, symbols, params), symbols[o]);
        for v in others.into_iter().filter(|&v| v <= hi && unary_ok(c, o, v)) {
            symbols[o] = v;
            let f = failing(c, symbols, params);
            if f < best.0 {
                best = (f, v);
            }
        }
        symbols[o] = best.1;
    }
}

/// Random values for the params: floats in [-1, 1), integers in 1..=8.
pub fn params(c: &KernelContract, rng: &mut Rng) -> Vec<Scalar> {
    use ima_runtime::DType;
    c.params
        .iter()
        .map(|p| {
            let x = rng.unit() * 2.0 - 1.0;
            let i = rng.range(1, 8);
            match p.dtype {
                DType::F64 => Scalar::F64(x),
                DType::I32 => Scalar::I32(i as i32),
                DType::U32 => Scalar::U32(i as u32),
                DType::I64 => Scalar::I64(i),
                DType::U64 => Scalar::U64(i as u64),
                _ => Scalar::F32(x as f32),
            }
        })
        .collect()
}

/// The largest value of symbol `s` with the others as in `others`: the constraints'
/// bound, the byte budget, the grid and shared-memory limits and the symbol cap, and
/// then every constraint. `None` when no value of `s` is valid there.
pub fn max_value(
    c: &KernelContract,
    cfg: &Config,
    s: usize,
    others: &[i64],
    params: &[Scalar],
) -> Option<i64> {
    // The others as given, s at v, and the symbols a constraint relates to s tied to it
    // (`NY` follows `N`, `HKV` follows `HQ`).
    let at = |v: i64| {
        let mut a = others.to_vec();
        a[s] = v;
        tie(c, cfg, &mut a, &[s], params);
        a
    };
    // Bytes, grid and shared memory grow with each symbol (the tied ones' bytes count
    // too): the largest value that fits them, by bisection. The constraints are not
    // monotonic (`K % 8 == 0`), so they wait, but each value is read as the nearest one
    // s alone admits: at an odd N no NY ties to it, and its bytes would be NY's alone.
    let cap = ceiling(c, cfg, s);
    let fits = |v: i64| {
        let a = at(admissible_near(c, s, v, cap).unwrap_or(v));
        extents(c, &a, params).is_ok() && limits(c, cfg, &a, params, cfg.max_bytes).is_ok()
    };
    // From the given value up (an extent such as `D / 2` may be 0 below it).
    let lo = others[s].max(1);
    if !fits(lo) {
        return None;
    }
    let (mut lo, mut hi) = (lo, cap);
    if !fits(hi) {
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if fits(mid) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        hi = lo;
    }
    // Then the constraints, down from there.
    (hi.saturating_sub(4096).max(1)..=hi)
        .rev()
        .find(|&v| check_case(c, cfg, &at(v), params, cfg.max_bytes).is_ok())
}

/// The edge values symbol `s` tries, each with why; before filtering by the constraints.
pub fn targets(c: &KernelContract, s: usize) -> Vec<(i64, String)> {
    let mut out: Vec<(i64, String)> = vec![(1, "1".into())];
    let around = |out: &mut Vec<(i64, String)>, v: i64, what: &str| {
        // Saturating: a constant may sit at i64's edge; the constraints filter these anyway.
        out.push((v.saturating_sub(1), format!("{what} - 1")));
        out.push((v, what.to_string()));
        out.push((v.saturating_add(1), format!("{what} + 1")));
    };
    let mut logical_syms = Vec::new();
    for a in c.args {
        let mut m = Vec::new();
        for d in a.dims {
            d.expr.mentions(&mut m, &mut Vec::new());
        }
        if !m.contains(&s) {
            continue;
        }
        if a.role != Role::Logical && a.align > a.dtype.size() {
            let w = (a.align / a.dtype.size()) as i64;
            around(&mut out, w, &format!("vector width {w} of {}", a.name));
        }
        if a.role == Role::Logical {
            logical_syms.push(a);
        }
    }
    let block: i64 = c.block.iter().map(|&b| i64::from(b)).product();
    around(&mut out, block, &format!("block {block}"));
    for a in logical_syms {
        match a.dims.get(2).map(|g| g.expr) {
            Some(Expr::Const(g)) => around(&mut out, g, &format!("group {g} of {}", a.name)),
            _ => {
                for g in GROUPS {
                    around(&mut out, g, &format!("group size {g} of {}", a.name));
                }
            }
        }
    }
    for v in UNPACKED {
        out.push((v, format!("{v}, not a multiple of {PACK}")));
    }
    for p in PRIMES {
        out.push((p, format!("prime {p}")));
    }
    let mut seen = Vec::new();
    out.retain(|(v, _)| {
        *v >= 1 && !seen.contains(v) && {
            seen.push(*v);
            true
        }
    });
    out
}

/// Tries to make a valid case with symbol `s` at `v`: the base values first, then the
/// other symbols redrawn small.
fn with_value(
    c: &KernelContract,
    cfg: &Config,
    base: &[i64],
    fixed: &[(usize, i64)],
    label: String,
    rng: &mut Rng,
) -> Option<Case> {
    let mut symbols = base.to_vec();
    for &(s, v) in fixed {
        symbols[s] = v;
    }
    let pinned: Vec<usize> = fixed.iter().map(|&(s, _)| s).collect();
    tie(c, cfg, &mut symbols, &pinned, &[]);
    for attempt in 0..256 {
        let params = params(c, rng);
        if attempt > 0 {
            for o in 0..symbols.len() {
                if fixed.iter().any(|&(s, _)| s == o) {
                    continue;
                }
                // Half the time a small multiple of a fixed value, so that constraints
                // between symbols (`HQ % HKV == 0`) can hold at an edge value.
                let v = match fixed.first() {
                    Some(&(_, f)) if attempt % 2 == 1 && rng.chance(0.5) => {
                        f.saturating_mul(rng.range(1, 4))
                    }
                    _ => rng.log_uniform(64),
                };
                symbols[o] = admissible_near(c, o, v, ceiling(c, cfg, o)).unwrap_or(base[o]);
            }
        }
        if check_case(c, cfg, &symbols, &params, cfg.max_bytes).is_ok() {
            return Some(Case {
                symbols,
                params,
                label,
            });
        }
    }
    None
}

/// The symbols of a quantized argument's K and group, where both are symbols
/// (`q4[K, N] gptq(group = G)`: its logical shape `[K, N, G]`).
pub fn symbolic_group(a: &TensorArg) -> Option<(usize, usize)> {
    match (
        a.role,
        a.dims.first().map(|d| d.expr),
        a.dims.get(2).map(|d| d.expr),
    ) {
        (Role::Logical, Some(Expr::Sym(k)), Some(Expr::Sym(g))) => Some((k, g)),
        _ => None,
    }
}

/// Every edge case of a kernel, in a fixed order; `seed` only picks the values of the
/// symbols that are not the edge's.
pub fn edges(c: &KernelContract, cfg: &Config, seed: u64) -> Cases {
    let mut out = Cases::default();
    let base = match base(c, cfg) {
        Ok(b) => b,
        Err(e) => {
            out.notes.push(format!("{}: {e}; nothing to fuzz", c.name));
            return out;
        }
    };
    let mut rng = Rng::for_case(seed, c.name, 0, "edges");
    let push = |out: &mut Cases, case: Option<Case>, what: &str| match case {
        Some(case) if !out.cases.iter().any(|k| k.symbols == case.symbols) => out.cases.push(case),
        Some(_) => {}
        None => out
            .notes
            .push(format!("{}: no valid case with {what}", c.name)),
    };
    for (s, sym) in c.symbols.iter().enumerate() {
        let hi = ceiling(c, cfg, s);
        for (v, why) in targets(c, s) {
            if v > hi || !unary_ok(c, s, v) {
                continue; // the constraints exclude it
            }
            let label = format!("{} = {v} ({why})", sym.name);
            let case = with_value(c, cfg, &base, &[(s, v)], label.clone(), &mut rng);
            push(&mut out, case, &label);
        }
        let params = params(c, &mut rng);
        match max_value(c, cfg, s, &base, &params) {
            Some(v) => {
                let label = format!("{} = {v} (largest allowed)", sym.name);
                let case = with_value(c, cfg, &base, &[(s, v)], label.clone(), &mut rng);
                push(&mut out, case, &label);
            }
            None => out
                .notes
                .push(format!("{}: no largest value of {}", c.name, sym.name)),
        }
    }
    // A symbolic group against its K: a partial last group, and one row short of a group;
    // where K admits only some values (`K % 8 == 0`), the nearest one on the same side
    // that still leaves a group partial (G - 8, G + 8 and 2G + 8).
    for (k, g) in c.args.iter().filter_map(symbolic_group) {
        for gv in [32, 128].into_iter().filter(|&gv| unary_ok(c, g, gv)) {
            for (target, up, why) in [
                (gv - 1, false, "G - 1"),
                (gv + 1, true, "G + 1"),
                (2 * gv + 1, true, "2G + 1"),
            ] {
                let admitted = |v: &i64| unary_ok(c, k, *v) && v % gv != 0;
                let nearest = if up {
                    (target..target + 4096).find(admitted)
                } else {
                    (1..=target).rev().find(admitted)
                };
                let kv = nearest.unwrap_or(target);
                let why = if kv == target {
                    why.to_string()
                } else {
                    format!("{why}, the nearest {} admits", c.symbols[k].name)
                };
                let label = format!(
                    "{} = {gv}, {} = {kv} ({why})",
                    c.symbols[g].name, c.symbols[k].name
                );
                let case = with_value(c, cfg, &base, &[(g, gv), (k, kv)], label.clone(), &mut rng);
                push(&mut out, case, &label);
            }
        }
    }
    match past_i32(c, cfg, &base, &mut rng) {
        Ok(case) => out.cases.push(case),
        Err(note) => out.notes.push(format!("{}: {note}", c.name)),
    }
    out
}

/// The case past 2^31 elements: the symbols of one argument raised together (each subset
/// of them tried) until it holds more than 2^31 elements, taking the fewest bytes.
/// `Err` says why there is none (usually: it needs more than `--max-bytes`).
pub fn past_i32(
    c: &KernelContract,
    cfg: &Config,
    base: &[i64],
    rng: &mut Rng,
) -> Result<Case, String> {
    let params = params(c, rng);
    let unlimited = Config {
        max_bytes: u64::MAX,
        symbol_cap: i64::MAX / 4,
        ..*cfg
    };
    let ceiling = |s: usize| upper_bound(c, s).unwrap_or(i64::MAX / 4);
    let mut best: Option<(u128, Vec<i64>, usize)> = None;
    for (i, a) in c.args.iter().enumerate() {
        if a.role == Role::Logical {
            continue;
        }
        let mut syms = Vec::new();
        for d in a.dims {
            d.expr.mentions(&mut syms, &mut Vec::new());
        }
        syms.truncate(8);
        for subset in 1u32..(1 << syms.len()) {
            let chosen: Vec<usize> = (0..syms.len())
                .filter(|b| subset & (1 << b) != 0)
                .map(|b| syms[b])
                .collect();
            let assign = |v: i64| {
                let mut x = base.to_vec();
                for &s in &chosen {
                    x[s] = v.min(ceiling(s)).max(base[s]);
                }
                x
            };
            let big = |x: &[i64]| numel(c, i, x, &params).is_some_and(|n| n > PAST_I32);
            let (mut lo, mut hi) = (1i64, 1i64 << 33);
            if !big(&assign(hi)) {
                continue;
            }
            while hi - lo > 1 {
                let mid = lo + (hi - lo) / 2;
                if big(&assign(mid)) {
                    hi = mid;
                } else {
                    lo = mid;
                }
            }
            let mut x = assign(hi);
            for &s in &chosen {
                if let Some(v) = admissible_near(c, s, x[s], ceiling(s)) {
                    x[s] = v;
                }
            }
            // The symbols tied to the raised ones follow them (y's NY to W's N).
            tie(c, &unlimited, &mut x, &chosen, &params);
            if !big(&x) || structure(c, &unlimited, &x, &params, u64::MAX).is_err() {
                continue;
            }
            let b = bytes(c, &x, &params).unwrap_or(u128::MAX);
            if best.as_ref().is_none_or(|(bb, _, _)| b < *bb) {
                best = Some((b, x, i));
            }
        }
    }
    let Some((b, symbols, arg)) = best else {
        return Err("no valid case past 2^31 elements".into());
    };
    if b > u128::from(cfg.max_bytes) {
        return Err(format!(
            "skipped the case past 2^31 elements: it needs {b} bytes, over --max-bytes {}",
            cfg.max_bytes
        ));
    }
    let n = numel(c, arg, &symbols, &params).unwrap_or(0);
    Ok(Case {
        symbols,
        params,
        label: format!("{} past 2^31 elements ({n})", c.args[arg].name),
    })
}

/// A random valid case within [`Config::random_bytes`], or `None` after many tries.
pub fn random(c: &KernelContract, cfg: &Config, rng: &mut Rng) -> Option<Case> {
    let budget = cfg.random_bytes;
    let n = c.symbols.len();
    let targets: Vec<Vec<i64>> = (0..n)
        .map(|s| targets(c, s).into_iter().map(|(v, _)| v).collect())
        .collect();
    for _ in 0..2000 {
        let params = params(c, rng);
        let mut symbols = Vec::with_capacity(n);
        for (s, t) in targets.iter().enumerate() {
            let hi = ceiling(c, cfg, s).min(cfg.random_cap);
            let mut v = if rng.chance(0.3) {
                *rng.pick(t)
            } else {
                rng.log_uniform(hi)
            };
            if rng.chance(0.4) {
                let m = *rng.pick(&[8, 16, 32]);
                v = v.saturating_add(m - 1) / m * m;
            }
            symbols.push(admissible_near(c, s, v, hi).unwrap_or(1));
        }
        // Halve the largest symbol until the case fits the budget.
        for _ in 0..64 {
            match check_case(c, cfg, &symbols, &params, budget) {
                Ok(()) => {
                    return Some(Case {
                        symbols,
                        params,
                        label: "random".into(),
                    });
                }
                Err(Reject::Bytes(_) | Reject::Grid | Reject::Shared(_)) => {
                    let Some((s, _)) = symbols
                        .iter()
                        .enumerate()
                        .filter(|(_, v)| **v > 1)
                        .max_by_key(|(_, v)| **v)
                    else {
                        break;
                    };
                    let hi = ceiling(c, cfg, s);
                    symbols[s] = admissible_near(c, s, symbols[s] / 2, hi).unwrap_or(1);
                }
                Err(_) => break,
            }
        }
    }
    None
}

/// The `n` cases of a kernel for `seed`: its edge cases first (as many as fit), then
/// random ones. Case `i` depends only on `seed`, the kernel and `i`.
pub fn cases(c: &KernelContract, cfg: &Config, seed: u64, n: usize) -> Cases {
    let mut out = edges(c, cfg, seed);
    if out.cases.len() > n {
        out.notes.push(format!(
            "{}: ran {n} of {} edge cases; pass --cases {} for all",
            c.name,
            out.cases.len(),
            out.cases.len()
        ));
        out.cases.truncate(n);
    }
    let mut failed = 0;
    for i in out.cases.len()..n {
        let mut rng = Rng::for_case(seed, c.name, i, "shape");
        match random(c, cfg, &mut rng) {
            Some(case) => out.cases.push(case),
            None => failed += 1,
        }
    }
    if failed > 0 {
        out.notes.push(format!(
            "{}: {failed} random case(s) found no valid values",
            c.name
        ));
    }
    out
}
