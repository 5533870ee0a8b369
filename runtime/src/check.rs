//! The one checker: a kernel's [`KernelContract`] against the tensors and params of a launch.
//!
//! [`check`] sees only metadata ([`TensorMeta`]: dtype, shape, strides, offset, buffer
//! length, pointer, device), never device memory, so every rule here is unit-tested without
//! a GPU, and the same function serves generated stubs, the proc macro and `imac fuzz`.
//! It collects every violation rather than stopping at the first, and on success returns
//! the [`Plan`]: what the launch passes to the kernel, in the ABI of [`crate::contract`].

use std::fmt;

use crate::contract::{EmptyPolicy, EvalError, Expr, KernelContract, Launch, Scalar, TensorArg};
use crate::layout;
use crate::violation::{Bound, LaunchError, StrideFault, Violation};

/// A device as the driver names it: the ordinal and the context handle (`CUcontext` as
/// an integer). Two tensors on one GPU but in different contexts cannot share pointers,
/// so both are compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DeviceId {
    pub ordinal: usize,
    pub context: usize,
}

impl DeviceId {
    /// The device and context of `ctx` (a stream's, or a buffer's).
    pub fn of(ctx: &cudarc::driver::CudaContext) -> Self {
        DeviceId {
            ordinal: ctx.ordinal(),
            context: ctx.cu_ctx() as usize,
        }
    }
}

impl fmt::Display for DeviceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "device {} (context {:#x})", self.ordinal, self.context)
    }
}

/// What the checker needs to know about one tensor argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TensorMeta<'a> {
    pub dtype: crate::contract::DType,
    /// In physical order, as the caller holds it.
    pub shape: &'a [usize],
    /// In elements, one per entry of `shape`.
    pub strides: &'a [isize],
    /// Elements from the buffer's start to the view's first element.
    pub offset: usize,
    /// Elements in the whole buffer.
    pub buffer_len: usize,
    /// Device address of the buffer's start.
    pub base_ptr: u64,
    pub device: DeviceId,
}

/// Which entry point the launch uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IndexWidth {
    I32,
    I64,
}

/// The checked launch: everything the kernel receives, in ABI order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The domain is empty and the contract says skip: launch nothing.
    pub skip: bool,
    /// Symbol values, in [`KernelContract::symbols`] order.
    pub symbols: Vec<i64>,
    /// Elements of the launch domain.
    pub numel: u64,
    pub index: IndexWidth,
    /// Per argument, one stride per logical dimension (logical dimension `l` takes the
    /// caller's `strides[p]` where `stored[p] == l`). A dimension of extent 1 gets stride 0,
    /// and so does every dimension of an empty view: the kernel multiplies those strides
    /// by 0 only, and a huge stride there would otherwise force 64-bit indexing.
    pub strides: Vec<Vec<i64>>,
    /// Per argument, the device address of the view's first element.
    pub pointers: Vec<u64>,
    /// Blocks of the grid (0 when skipped).
    pub grid: u32,
    /// Threads per block, from the contract.
    pub block: u32,
}

/// Threads one grid may have. The kernels are grid-stride loops that compute
/// `idx + gridDim.x * blockDim.x` in the entry point's index type, so a 32-bit launch is
/// safe only while `numel + threads` stays below `i32::MAX`; capping the grid at 2^24
/// threads makes that headroom fixed. No GPU holds more threads at once (an H200 holds
/// 132 x 2048 = 270,336), so a larger grid would buy nothing; 64-bit launches use the same cap.
pub const GRID_THREADS: u64 = 1 << 24;

const I32_LIMIT: i128 = i32::MAX as i128;

/// Checks a launch of `contract` on `device` with tensor arguments `args` (declaration
/// order) and scalar `params`; see the module documentation.
pub fn check(
    contract: &KernelContract,
    device: DeviceId,
    args: &[TensorMeta<'_>],
    params: &[Scalar],
) -> Result<Plan, LaunchError> {
    let fail = |v| Err(LaunchError::new(contract, v));
    let mut v = contract_faults(contract);
    if args.len() != contract.args.len() {
        v.push(Violation::ArgCount {
            what: "tensor arguments",
            expected: contract.args.len(),
            actual: args.len(),
        });
    }
    if params.len() != contract.params.len() {
        v.push(Violation::ArgCount {
            what: "params",
            expected: contract.params.len(),
            actual: params.len(),
        });
    }
    if !v.is_empty() {
        // Nothing below can be trusted to index the contract or the arguments.
        return fail(v);
    }

    for (p, s) in contract.params.iter().zip(params) {
        if s.dtype() != p.dtype {
            v.push(Violation::ParamType {
                param: p.name,
                expected: p.dtype,
                actual: s.dtype(),
            });
        }
    }

    // Per argument: dtype, rank, device. Only arguments of the right rank go further.
    let mut ranked = vec![false; args.len()];
    for (i, (a, m)) in contract.args.iter().zip(args).enumerate() {
        if m.dtype != a.dtype {
            v.push(Violation::DType {
                arg: a.name,
                expected: a.dtype,
                actual: m.dtype,
            });
        }
        if m.shape.len() != a.dims.len() || m.strides.len() != m.shape.len() {
            v.push(Violation::Rank {
                arg: a.name,
                declared: declared(a),
                expected: a.dims.len(),
                actual: m.shape.len(),
                strides: m.strides.len(),
            });
        } else {
            ranked[i] = true;
        }
        if m.device != device {
            v.push(Violation::Device {
                arg: a.name,
                expected: device,
                actual: m.device,
            });
        }
    }

    let symbols = bind_symbols(contract, args, &ranked, &mut v);
    check_dims(contract, args, &ranked, &symbols, params, &mut v);
    check_constraints(contract, &symbols, params, &mut v);

    // Layout: strides, buffer bounds, alignment.
    for (i, (a, m)) in contract.args.iter().zip(args).enumerate() {
        if ranked[i] {
            check_layout(a, m, &mut v);
        }
    }
    check_overlap(contract, args, &ranked, &mut v);

    let Launch::Over { arg: domain } = contract.launch;
    let mut skip = false;
    let mut numel = 0u64;
    if ranked[domain] {
        let shape = args[domain].shape;
        let name = contract.args[domain].name;
        match layout::numel(shape)
            .map(|n| n as u64)
            .filter(|&n| n <= i64::MAX as u64)
        {
            None => v.push(Violation::TooLarge {
                arg: name,
                shape: shape.to_vec(),
            }),
            Some(0) => match contract.empty {
                EmptyPolicy::Skip => skip = true,
                EmptyPolicy::Refuse => v.push(Violation::Empty {
                    arg: name,
                    shape: shape.to_vec(),
                }),
            },
            Some(n) => numel = n,
        }
    }

    if !v.is_empty() {
        return fail(v);
    }
    let Some(symbols) = symbols.into_iter().collect::<Option<Vec<i64>>>() else {
        // Every way a symbol stays unbound reports a violation first.
        return fail(vec![Violation::Contract {
            what: "a symbol was left unbound".into(),
        }]);
    };
    Ok(plan(contract, args, symbols, numel, skip))
}

/// The declared type of an argument, `f16[B, H, S, D]`.
fn declared(a: &TensorArg) -> String {
    let dims: Vec<&str> = a.dims.iter().map(|d| d.text).collect();
    format!("{}[{}]", a.dtype, dims.join(", "))
}

/// Index checks on the contract itself, so that evaluation and indexing below never panic
/// on a contract that a buggy generator (or `imac fuzz`) built.
fn contract_faults(c: &KernelContract) -> Vec<Violation> {
    let mut faults = Vec::new();
    let mut fault = |what: String| faults.push(Violation::Contract { what });
    for a in c.args {
        let mut seen = vec![false; a.dims.len()];
        let permutation = a.stored.len() == a.dims.len()
            && a.stored
                .iter()
                .all(|&l| l < seen.len() && !std::mem::replace(&mut seen[l], true));
        if !permutation {
            fault(format!(
                "argument {}: stored order {:?} is not a permutation",
                a.name, a.stored
            ));
        }
        for d in a.dims {
            if let Some(e) = expr_fault(&d.expr, c) {
                fault(format!("argument {}: extent {}: {e}", a.name, d.text));
            }
        }
    }
    for s in c.symbols {
        let b = s.bound_by;
        if c.args.get(b.arg).is_none_or(|a| b.dim >= a.dims.len()) {
            fault(format!(
                "symbol {} is bound by a missing argument or dimension",
                s.name
            ));
        }
    }
    for k in c.constraints {
        if let Some(e) = expr_fault(&k.expr, c) {
            fault(format!("constraint {}: {e}", k.text));
        }
    }
    let Launch::Over { arg } = c.launch;
    if arg >= c.args.len() {
        fault(format!(
            "launch domain is argument #{arg}, which does not exist"
        ));
    }
    if !(1..=1024).contains(&c.block) {
        fault(format!("block of {} threads (must be 1..=1024)", c.block));
    }
    faults
}

fn expr_fault(e: &Expr, c: &KernelContract) -> Option<String> {
    match *e {
        Expr::Const(_) => None,
        Expr::Sym(i) if i >= c.symbols.len() => Some(format!("symbol #{i} does not exist")),
        Expr::Param(i) if i >= c.params.len() => Some(format!("param #{i} does not exist")),
        Expr::Sym(_) | Expr::Param(_) => None,
        Expr::Neg(a) | Expr::Not(a) => expr_fault(a, c),
        Expr::Bin(_, a, b) => expr_fault(a, c).or_else(|| expr_fault(b, c)),
    }
}

/// Symbols and params an expression mentions, each once, in first-use order.
fn mentions(e: &Expr, syms: &mut Vec<usize>, params: &mut Vec<usize>) {
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

/// The physical position holding logical dimension `dim`.
fn physical(a: &TensorArg, dim: usize) -> usize {
    a.stored.iter().position(|&l| l == dim).unwrap_or(dim)
}

/// Each symbol's value: the caller's extent at the physical position holding the binding
/// dimension. `None` where the binding argument's rank is wrong (already reported).
fn bind_symbols(
    c: &KernelContract,
    args: &[TensorMeta<'_>],
    ranked: &[bool],
    v: &mut Vec<Violation>,
) -> Vec<Option<i64>> {
    c.symbols
        .iter()
        .map(|s| {
            let b = s.bound_by;
            if !ranked[b.arg] {
                return None;
            }
            let a = &c.args[b.arg];
            let p = physical(a, b.dim);
            let value = i64::try_from(args[b.arg].shape[p]).ok();
            if value.is_none() {
                v.push(Violation::Eval {
                    site: format!("argument {}: shape[{p}]", a.name),
                    text: s.name,
                    error: EvalError::Overflow,
                    values: vec![],
                });
            }
            value
        })
        .collect()
}

/// Evaluates `e` if every symbol it mentions is bound; `None` otherwise (the reason is
/// already reported).
fn eval(e: &Expr, symbols: &[Option<i64>], params: &[Scalar]) -> Option<Result<i64, EvalError>> {
    let (mut syms, mut ps) = (Vec::new(), Vec::new());
    mentions(e, &mut syms, &mut ps);
    if syms.iter().any(|&i| symbols[i].is_none()) {
        return None;
    }
    let values: Vec<i64> = symbols.iter().map(|s| s.unwrap_or(0)).collect();
    Some(e.eval(&values, params))
}

/// `name = value` for each symbol and param `e` mentions, for messages.
fn values_of(
    e: &Expr,
    c: &KernelContract,
    symbols: &[Option<i64>],
    params: &[Scalar],
) -> Vec<(&'static str, String)> {
    let (mut syms, mut ps) = (Vec::new(), Vec::new());
    mentions(e, &mut syms, &mut ps);
    let s = syms
        .into_iter()
        .filter_map(|i| Some((c.symbols[i].name, symbols[i]?.to_string())));
    let p = ps
        .into_iter()
        .map(|i| (c.params[i].name, params[i].to_string()));
    s.chain(p).collect()
}

fn check_dims(
    c: &KernelContract,
    args: &[TensorMeta<'_>],
    ranked: &[bool],
    symbols: &[Option<i64>],
    params: &[Scalar],
    v: &mut Vec<Violation>,
) {
    for (i, (a, m)) in c.args.iter().zip(args).enumerate() {
        if !ranked[i] {
            continue;
        }
        for (p, &l) in a.stored.iter().enumerate() {
            let extent = &a.dims[l];
            match eval(&extent.expr, symbols, params) {
                None => {}
                Some(Err(error)) => v.push(Violation::Eval {
                    site: format!("argument {}: shape[{p}]", a.name),
                    text: extent.text,
                    error,
                    values: values_of(&extent.expr, c, symbols, params),
                }),
                Some(Ok(expected)) if expected as i128 != m.shape[p] as i128 => {
                    let (mut syms, mut ps) = (Vec::new(), Vec::new());
                    mentions(&extent.expr, &mut syms, &mut ps);
                    let bound_by = syms
                        .into_iter()
                        .filter_map(|s| {
                            let sym = &c.symbols[s];
                            let by = &c.args[sym.bound_by.arg];
                            Some(Bound {
                                symbol: sym.name,
                                value: symbols[s]?,
                                arg: by.name,
                                position: physical(by, sym.bound_by.dim),
                            })
                        })
                        .collect();
                    v.push(Violation::Dim {
                        arg: a.name,
                        position: p,
                        logical: l,
                        extent: extent.text,
                        expected,
                        actual: m.shape[p],
                        bound_by,
                    });
                }
                Some(Ok(_)) => {}
            }
        }
    }
}

fn check_constraints(
    c: &KernelContract,
    symbols: &[Option<i64>],
    params: &[Scalar],
    v: &mut Vec<Violation>,
) {
    for k in c.constraints {
        let values = || values_of(&k.expr, c, symbols, params);
        match eval(&k.expr, symbols, params) {
            Some(Ok(0)) => v.push(Violation::Constraint {
                text: k.text,
                values: values(),
            }),
            Some(Err(error)) => v.push(Violation::Eval {
                site: "constraint".into(),
                text: k.text,
                error,
                values: values(),
            }),
            // Nonzero holds; `None`: a symbol is unbound, already reported.
            _ => {}
        }
    }
}

/// Strides, buffer bounds and alignment of one argument of the right rank.
fn check_layout(a: &TensorArg, m: &TensorMeta<'_>, v: &mut Vec<Violation>) {
    let stride_fault = |fault| Violation::Stride {
        arg: a.name,
        shape: m.shape.to_vec(),
        strides: m.strides.to_vec(),
        fault,
    };
    let reach = layout::reach(m.shape, m.strides);
    if reach.is_some() {
        if !a.strided
            && let Some(expected) = layout::contiguous_strides(m.shape)
            && let Some(p) =
                (0..m.shape.len()).find(|&p| m.shape[p] > 1 && m.strides[p] != expected[p])
        {
            v.push(stride_fault(StrideFault::NotContiguous {
                position: p,
                expected: expected[p],
                actual: m.strides[p],
            }));
        }
        if a.role.writes() && a.strided && !non_overlapping(m.shape, m.strides) {
            v.push(stride_fault(StrideFault::SelfOverlap));
        }
    }
    let inside =
        m.offset <= m.buffer_len && layout::fits(m.shape, m.strides, m.offset, m.buffer_len);
    if !inside {
        let r = reach.unwrap_or(layout::Reach { lo: 0, hi: 0 });
        v.push(Violation::OutOfBuffer {
            arg: a.name,
            offset: m.offset,
            shape: m.shape.to_vec(),
            strides: m.strides.to_vec(),
            first: (m.offset as i128).saturating_add(r.lo),
            last: (m.offset as i128).saturating_add(r.hi),
            buffer_len: m.buffer_len,
        });
    } else if a.align > 1 {
        let address = view_address(m);
        if !address.is_multiple_of(a.align as u128) {
            v.push(Violation::Align {
                arg: a.name,
                align: a.align,
                address: address as u64,
                offset: m.offset,
            });
        }
    }
}

/// Device address of the view's first element, in `u128` so a fabricated meta cannot
/// overflow it.
fn view_address(m: &TensorMeta<'_>) -> u128 {
    m.base_ptr as u128 + m.offset as u128 * m.dtype.size() as u128
}

/// A sufficient test that distinct indices reach distinct elements: sorted by stride,
/// each stride exceeds everything the smaller dimensions reach.
fn non_overlapping(shape: &[usize], strides: &[isize]) -> bool {
    let mut dims: Vec<(i128, i128)> = shape
        .iter()
        .zip(strides)
        .filter(|(n, _)| **n > 1)
        .map(|(&n, &s)| ((s as i128).abs(), n as i128))
        .collect();
    dims.sort_unstable();
    let mut reached: i128 = 0;
    for (stride, n) in dims {
        if stride <= reached {
            return false;
        }
        reached = reached.saturating_add(stride.saturating_mul(n - 1));
    }
    true
}

/// Byte range `[lo, hi)` a view can touch, `None` when it has no elements.
fn byte_range(m: &TensorMeta<'_>) -> Option<(u128, u128)> {
    let r = layout::reach(m.shape, m.strides)?;
    let size = m.dtype.size() as i128;
    let start = view_address(m) as i128;
    let lo = start.saturating_add(r.lo.saturating_mul(size));
    let hi = start.saturating_add(r.hi.saturating_add(1).saturating_mul(size));
    Some((lo.max(0) as u128, hi.max(0) as u128))
}

/// Outputs may not share bytes with any other argument: the kernel's reads and writes
/// would race. Pairs of outputs are reported once.
fn check_overlap(
    c: &KernelContract,
    args: &[TensorMeta<'_>],
    ranked: &[bool],
    v: &mut Vec<Violation>,
) {
    let ranges: Vec<Option<(u128, u128)>> = args
        .iter()
        .zip(ranked)
        .map(|(m, &ok)| if ok { byte_range(m) } else { None })
        .collect();
    for (w, a) in c.args.iter().enumerate() {
        let Some(range) = ranges[w].filter(|_| a.role.writes()) else {
            continue;
        };
        for (o, other) in c.args.iter().enumerate() {
            let Some(other_range) = ranges[o] else {
                continue;
            };
            let counted = o == w || (other.role.writes() && o < w);
            if !counted && range.0 < other_range.1 && other_range.0 < range.1 {
                let clip = |r: (u128, u128)| (r.0 as u64, r.1.min(u64::MAX as u128) as u64);
                v.push(Violation::Overlap {
                    arg: a.name,
                    other: other.name,
                    range: clip(range),
                    other_range: clip(other_range),
                });
            }
        }
    }
}

/// Builds the plan of a launch that passed every check.
fn plan(
    c: &KernelContract,
    args: &[TensorMeta<'_>],
    symbols: Vec<i64>,
    numel: u64,
    skip: bool,
) -> Plan {
    let strides: Vec<Vec<i64>> = c
        .args
        .iter()
        .zip(args)
        .map(|(a, m)| {
            let empty = m.shape.contains(&0);
            let mut logical = vec![0i64; a.dims.len()];
            for (p, &l) in a.stored.iter().enumerate() {
                if !empty && m.shape[p] > 1 {
                    logical[l] = m.strides[p] as i64;
                }
            }
            logical
        })
        .collect();
    // Checked: every view lies inside its buffer, so its address fits a u64.
    let pointers = args.iter().map(|m| view_address(m) as u64).collect();

    let small = |x: i128| x.abs() <= I32_LIMIT;
    let fits_i32 = numel as i128 + GRID_THREADS as i128 <= I32_LIMIT
        && symbols.iter().all(|&s| small(s as i128))
        && strides.iter().flatten().all(|&s| small(s as i128))
        && args.iter().all(|m| {
            m.shape.iter().all(|&n| small(n as i128))
                && layout::reach(m.shape, m.strides).is_none_or(|r| small(r.lo) && small(r.hi))
        });
    let index = if fits_i32 {
        IndexWidth::I32
    } else {
        IndexWidth::I64
    };

    let block = c.block;
    let grid = if skip {
        0
    } else {
        let cap = (GRID_THREADS / block as u64).max(1);
        numel.div_ceil(block as u64).min(cap) as u32
    };
    Plan {
        skip,
        symbols,
        numel,
        index,
        strides,
        pointers,
        grid,
        block,
    }
}
