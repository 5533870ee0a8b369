//! The one checker: a kernel's [`KernelContract`] against the tensors and params of a launch.
//!
//! [`check()`] sees only metadata ([`TensorMeta`]: dtype, shape, strides, offset, buffer
//! length, pointer, device) and the device's [`DeviceLimits`], never device memory, so
//! every rule here is unit-tested without a GPU, and the same function serves generated
//! stubs, the proc macro and `imac fuzz`. It collects every violation rather than stopping
//! at the first, and on success returns the [`Plan`]: what the launch passes to the
//! kernel, in the ABI of [`crate::contract`], and the grid it launches.
//!
//! [`crate::Kernel::launch`] runs these checks at every launch, so a launch that passes
//! them allocates nothing for a contract of a few arguments: the launch takes the plan
//! with its values in place, and only [`check()`] copies it into a [`Plan`]'s vectors.
//! Messages and other diagnostics are built only for a violation.

#[cfg(test)]
mod cost;
mod domain;
mod faults;
mod memo;
mod memory;
mod shared;
/// attn_scores' contract, for the checks' unit tests (cost, memo).
#[cfg(test)]
#[path = "../tests/common/attn.rs"]
mod test_attn;
#[cfg(test)]
pub(crate) mod test_case;
mod values;

pub use domain::GRID_THREADS;
pub(crate) use memo::Memo;
pub(crate) use memory::view_address;

use crate::capacity::{ARGS, VALUES};
use crate::contract::{
    EmptyPolicy, EvalError, Extent, KernelContract, Role, Scalar, TensorArg, physical,
};
use crate::device::{DeviceId, DeviceLimits};
use crate::layout::{self, Reach};
use crate::violation::{Bound, LaunchError, Violation};
use smallvec::SmallVec;
use values::Env;

/// What the checker needs to know about one tensor argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TensorMeta<'a> {
    /// Static for a [`crate::Tensor`], read at run time for a [`crate::DynTensor`].
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

/// The checked launch: everything the kernel receives, in ABI order, and its grid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The domain is empty and the contract says skip: launch nothing.
    pub skip: bool,
    /// Symbol values, in [`KernelContract::symbols`] order.
    pub symbols: Vec<i64>,
    /// Elements of the launch domain (threads, for a raw [`crate::Launch::Grid`]).
    pub numel: u64,
    pub index: IndexWidth,
    /// Per argument, one stride per logical dimension (logical dimension `l` takes the
    /// caller's `strides[p]` where `stored[p] == l`). A dimension of extent 1 gets stride 0,
    /// and so does every dimension of an empty view: the kernel multiplies those strides
    /// by 0 only, and a huge stride there would otherwise force 64-bit indexing.
    pub strides: Vec<Vec<i64>>,
    /// Per argument, the device address of the view's first element.
    pub pointers: Vec<u64>,
    /// Blocks along x, y, z (all 0 when skipped).
    pub grid: [u32; 3],
    /// Threads per block, from the contract.
    pub block: [u32; 3],
    /// Bytes of dynamic shared memory.
    pub shared_bytes: u32,
}

/// A launch that passed [`check()`], as [`crate::Kernel::launch`] uses it: the [`Plan`],
/// with its index values in place rather than in vectors.
#[derive(Debug, Clone)]
pub(crate) struct Checked {
    pub skip: bool,
    pub numel: u64,
    pub index: IndexWidth,
    /// What the kernel's strides and symbols are computed from: each argument's logical
    /// strides ([`Plan::strides`]) in argument order, then the symbol values
    /// ([`Plan::symbols`]). In the ABI order, except that a logical argument's strides,
    /// which the kernel does not receive, are here too.
    pub values: SmallVec<[i64; VALUES]>,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared_bytes: u32,
}

impl Checked {
    /// The [`Plan`] of the launch of `c` with `args`.
    fn plan(&self, c: &KernelContract, args: &[TensorMeta<'_>]) -> Plan {
        let mut values = self.values.iter().copied();
        let strides = c
            .args
            .iter()
            .map(|a| values.by_ref().take(a.dims.len()).collect())
            .collect();
        Plan {
            skip: self.skip,
            symbols: values.collect(),
            numel: self.numel,
            index: self.index,
            strides,
            // Checked: every view lies inside its buffer, so its address fits a u64.
            pointers: args
                .iter()
                .map(|m| memory::view_address(m) as u64)
                .collect(),
            grid: self.grid,
            block: self.block,
            shared_bytes: self.shared_bytes,
        }
    }
}

const I32_LIMIT: i128 = i32::MAX as i128;

/// Checks a launch of `contract` on `device` (whose limits are `limits`) with tensor
/// arguments `args` (declaration order) and scalar `params`; see the module documentation.
pub fn check(
    contract: &KernelContract,
    device: DeviceId,
    limits: &DeviceLimits,
    args: &[TensorMeta<'_>],
    params: &[Scalar],
) -> Result<Plan, LaunchError> {
    check_launch(contract, false, device, limits, args, params).map(|c| c.plan(contract, args))
}

/// Whether `c` is consistent in itself: [`check()`] reports a [`Violation::Contract`] for
/// each inconsistency. A [`crate::Kernel`] asks once, at load, rather than at every launch.
pub(crate) fn is_sound(c: &KernelContract) -> bool {
    faults::contract_faults(c).is_empty()
}

/// [`check()`], returning the plan as a [`Checked`]: with no heap allocation when the
/// launch passes and the contract is small. `sound`: [`is_sound`] already holds for
/// `contract`, which is then not checked again.
pub(crate) fn check_launch(
    contract: &KernelContract,
    sound: bool,
    device: DeviceId,
    limits: &DeviceLimits,
    args: &[TensorMeta<'_>],
    params: &[Scalar],
) -> Result<Checked, LaunchError> {
    let fail = |v| Err(LaunchError::new(contract, v));
    let mut v = if sound {
        Vec::new()
    } else {
        faults::contract_faults(contract)
    };
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

    // Per argument: dtype, rank, device. Only arguments of the right rank go further, with
    // the element range they reach, found once for the several checks that use it.
    let mut ranked: SmallVec<[bool; ARGS]> = SmallVec::new();
    let mut reaches: SmallVec<[Option<Reach>; ARGS]> = SmallVec::new();
    for (a, m) in contract.args.iter().zip(args) {
        if m.dtype != a.dtype {
            v.push(Violation::DType {
                arg: a.name,
                expected: a.dtype,
                actual: m.dtype,
            });
        }
        let rank_ok = m.shape.len() == a.dims.len() && m.strides.len() == m.shape.len();
        if !rank_ok {
            v.push(Violation::Rank {
                arg: a.name,
                declared: declared(a),
                expected: a.dims.len(),
                actual: m.shape.len(),
                strides: m.strides.len(),
            });
        }
        ranked.push(rank_ok);
        reaches.push(rank_ok.then(|| layout::reach(m.shape, m.strides)).flatten());
        if m.device != device {
            v.push(Violation::Device {
                arg: a.name,
                expected: device,
                actual: m.device,
            });
        }
    }

    let env = bind_symbols(contract, args, &ranked, params, &mut v);
    check_dims(contract, args, &ranked, &env, &mut v);
    check_constraints(contract, &env, &mut v);
    check_value_ranges(contract, args, &ranked, &env, &mut v);
    for (((a, m), &ok), &reach) in contract.args.iter().zip(args).zip(&*ranked).zip(&*reaches) {
        // A logical argument has a shape and nothing else to check.
        if ok && a.role != Role::Logical {
            memory::check_layout(a, m, reach, &mut v);
        }
    }
    memory::check_overlap(contract, args, &ranked, &reaches, &mut v);

    let domain = domain::domain(contract, args, &ranked, &env, limits, &mut v);
    let shared_bytes = shared::shared_bytes(contract, &env, limits.shared_bytes, &mut v);
    let mut skip = false;
    if let Some(d) = &domain
        && d.numel == 0
    {
        match contract.empty {
            EmptyPolicy::Skip => skip = true,
            EmptyPolicy::Refuse => v.push(Violation::Empty {
                arg: d.name,
                shape: d.shape.to_vec(),
            }),
        }
    }

    if !v.is_empty() {
        return fail(v);
    }
    let (Some(symbols), Some(domain), Some(shared_bytes)) = (env.values(), domain, shared_bytes)
    else {
        // Every way a symbol, the domain or the shared size stays unknown reports a
        // violation first.
        return fail(vec![Violation::Contract {
            what: "a symbol, the launch domain or the shared memory size was left unknown".into(),
        }]);
    };
    let grid = if skip { [0; 3] } else { domain.grid };
    Ok(plan(
        contract,
        args,
        &reaches,
        symbols,
        device_peak(contract, &env),
        domain.numel,
        grid,
        shared_bytes,
    ))
}

/// The declared type of an argument, `f16[B, H, S, D]`.
fn declared(a: &TensorArg) -> String {
    let dims: Vec<&str> = a.dims.iter().map(|d| d.text).collect();
    format!("{}[{}]", a.dtype, dims.join(", "))
}

/// Binds each symbol to the caller's extent at the physical position holding the binding
/// dimension; unbound where the binding argument's rank is wrong (already reported).
fn bind_symbols<'a>(
    c: &KernelContract,
    args: &[TensorMeta<'_>],
    ranked: &[bool],
    params: &'a [Scalar],
    v: &mut Vec<Violation>,
) -> Env<'a> {
    let mut env = Env::new(params);
    for s in c.symbols {
        let b = s.bound_by;
        if !ranked[b.arg] {
            env.push(None);
            continue;
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
        env.push(value);
    }
    env
}

fn check_dims(
    c: &KernelContract,
    args: &[TensorMeta<'_>],
    ranked: &[bool],
    env: &Env<'_>,
    v: &mut Vec<Violation>,
) {
    for (i, (a, m)) in c.args.iter().zip(args).enumerate() {
        if !ranked[i] {
            continue;
        }
        for (p, &l) in a.stored.iter().enumerate() {
            let extent = &a.dims[l];
            match env.eval(&extent.expr) {
                None => {}
                Some(Err(error)) => v.push(Violation::Eval {
                    site: format!("argument {}: shape[{p}]", a.name),
                    text: extent.text,
                    error,
                    values: env.values_of(&extent.expr, c),
                }),
                Some(Ok(expected)) if expected as i128 != m.shape[p] as i128 => {
                    let (mut syms, mut ps) = (Vec::new(), Vec::new());
                    extent.expr.mentions(&mut syms, &mut ps);
                    let bound_by = syms
                        .into_iter()
                        .filter_map(|s| {
                            let sym = &c.symbols[s];
                            let by = &c.args[sym.bound_by.arg];
                            Some(Bound {
                                symbol: sym.name,
                                value: env.symbol(s)?,
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

fn check_constraints(c: &KernelContract, env: &Env<'_>, v: &mut Vec<Violation>) {
    for k in c.constraints {
        let values = || env.values_of(&k.expr, c);
        match env.eval(&k.expr) {
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

/// A value contract's bounds for this launch. The kernel tests an entry by one unsigned
/// comparison that holds only for lo <= hi (ima.cuh's `ima_value_in`), so a bound that cannot
/// be evaluated is refused, as is a range empty while the tensor has entries: without a
/// sentinel the kernel reads a refused entry as the range's lower bound, itself outside;
/// with one a refused entry gives no value, so lo = hi (every entry the sentinel) is sound
/// and only hi < lo is refused.
fn check_value_ranges(
    c: &KernelContract,
    args: &[TensorMeta<'_>],
    ranked: &[bool],
    env: &Env<'_>,
    v: &mut Vec<Violation>,
) {
    for ((a, m), &ok) in c.args.iter().zip(args).zip(ranked) {
        let Some(values) = a.values else { continue };
        if !ok {
            continue;
        }
        let mut bound = |e: &Extent| match env.eval(&e.expr) {
            Some(Ok(x)) => Some(x),
            Some(Err(error)) => {
                v.push(Violation::Eval {
                    site: format!("argument {}: values({})", a.name, values.text),
                    text: e.text,
                    error,
                    values: env.values_of(&e.expr, c),
                });
                None
            }
            // A symbol is unbound, already reported.
            None => None,
        };
        let (Some(lo), Some(hi)) = (bound(&values.lo), bound(&values.hi)) else {
            continue;
        };
        let empty = match values.sentinel {
            Some(_) => hi < lo,
            None => hi <= lo,
        };
        if empty && !m.shape.contains(&0) {
            v.push(Violation::EmptyValueRange {
                arg: a.name,
                contract: values.text,
                lo,
                hi,
            });
        }
    }
}

/// The largest magnitude among the values the kernel computes from its contract's
/// expressions, every step of each (the arguments' extents, the shared arrays', the value
/// contracts' bounds, the rows a quantized weight's tile reaches past K), all in its index
/// type: `N * M / K` overflows 32 bits where N, M, K and the extent fit, and
/// `NP * PART + 1` long before any extent does.
fn device_peak(c: &KernelContract, env: &Env<'_>) -> i128 {
    let extents = c
        .args
        .iter()
        .flat_map(|a| a.dims)
        .chain(c.shared.iter().flat_map(|s| s.dims))
        .map(|d| d.expr);
    let bounds = c
        .args
        .iter()
        .filter_map(|a| a.values)
        .flat_map(|v| [v.lo.expr, v.hi.expr]);
    // A quantized weight's tile covers rows k0 .. k0 + QUANT_TILE_ROWS - 1 of K at most
    // (module.cu's load_tile), computed from a k0 below K.
    let tile_rows = c
        .args
        .iter()
        .filter(|a| a.role == Role::Logical)
        .filter_map(|a| env.eval(&a.dims.first()?.expr)?.ok())
        .map(|k| i128::from(k) + QUANT_TILE_ROWS);
    extents
        .chain(bounds)
        .filter_map(|e| env.peak(&e)?.ok())
        .map(i128::from)
        .chain(tile_rows)
        .max()
        .unwrap_or(0)
}

/// Rows of K one tile of a quantized weight spans at most: 16 packed rows of 8 (module.cu's
/// `load_tile`, `R` and `S`).
const QUANT_TILE_ROWS: i128 = 128;

/// Builds the plan of a launch that passed every check.
#[allow(clippy::too_many_arguments)]
fn plan(
    c: &KernelContract,
    args: &[TensorMeta<'_>],
    reaches: &[Option<Reach>],
    symbols: &[i64],
    device_peak: i128,
    numel: u64,
    grid: [u32; 3],
    shared_bytes: u32,
) -> Checked {
    let mut values = SmallVec::new();
    for (a, m) in c.args.iter().zip(args) {
        push_logical_strides(a, m, &mut values);
    }
    values.extend(symbols.iter().copied());

    let small = |x: i128| x.abs() <= I32_LIMIT;
    let fits_i32 = numel as i128 + GRID_THREADS as i128 <= I32_LIMIT
        && values.iter().all(|&s| small(s as i128))
        && small(device_peak)
        && args.iter().zip(reaches).all(|(m, reach)| {
            m.shape.iter().all(|&n| small(n as i128))
                && reach.is_none_or(|r| small(r.lo) && small(r.hi))
        });
    let index = if fits_i32 {
        IndexWidth::I32
    } else {
        IndexWidth::I64
    };
    Checked {
        skip: grid.contains(&0),
        numel,
        index,
        values,
        grid,
        block: c.block,
        shared_bytes,
    }
}

/// Appends one stride per logical dimension of `a` (see [`Plan::strides`]).
fn push_logical_strides(a: &TensorArg, m: &TensorMeta<'_>, values: &mut SmallVec<[i64; VALUES]>) {
    let start = values.len();
    values.extend(std::iter::repeat_n(0, a.dims.len()));
    let logical = &mut values[start..];
    let empty = m.shape.contains(&0);
    for (p, &l) in a.stored.iter().enumerate() {
        if !empty && m.shape[p] > 1 {
            logical[l] = m.strides[p] as i64;
        }
    }
}
