//! [`IndexValue`]: an entry of an index tensor outside its value contract, as a kernel
//! found it (in every mode) or as [`crate::validate_values`] found it on the host.

use std::fmt;

use crate::contract::{BinOp, Expr, Extent, KernelContract, ValueContract, physical};

/// Which rule of the contract the entry broke.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueFault {
    /// Outside `lo .. hi`, and not the sentinel.
    Range { lo: i64, hi: i64 },
    /// An ascending tensor's entry below the one before it, `previous`.
    Order { previous: i64 },
    /// An ascending tensor's first entry, which must be `lo`.
    First { expected: i64 },
    /// An ascending tensor's last entry, which must be `hi - 1`.
    Last { expected: i64 },
}

/// An entry of an index tensor (a block table, slot mapping, expert id, token id, offset,
/// act-order `g_idx`) that breaks its value contract. A kernel that read it did not use it
/// as an address: it was skipped (an argument with a sentinel), or read as the contract's
/// lower bound, and the launch that found it, or the next one, reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexValue {
    /// The kernel whose contract the entry breaks (that read it, or that host validation
    /// checked it for).
    pub kernel: &'static str,
    pub signature: &'static str,
    /// `specs/paged.ima:12`, where the kernel is declared.
    pub location: &'static str,
    /// `block_tables`, or `w.g_idx`.
    pub arg: String,
    /// The entry's position, one index per logical dimension.
    pub position: Vec<i64>,
    pub value: i64,
    pub fault: ValueFault,
    /// As the spec writes it: `0 .. NB, or -1`.
    pub contract: &'static str,
    /// The value besides the range that the contract allows.
    pub sentinel: Option<i64>,
    /// The bound the entry broke, with the symbol that set it: `NB = 4096 (bound by
    /// k_cache.shape[0])`.
    pub bound: String,
    /// Where a kernel found it; `None` on the host.
    pub found_at: Option<([u32; 3], [u32; 3])>,
    /// Every bad entry the kernel read (of the launches since the last report when
    /// `deferred`); 1 on the host, which stops at the first.
    pub count: u32,
    /// Found by an earlier launch and reported by a later one or `check_deferred`.
    pub deferred: bool,
}

impl IndexValue {
    /// Argument `arg` of `c` holds `value` at `position`, which breaks its contract as
    /// `fault` says.
    pub(crate) fn new(
        c: &KernelContract,
        arg: usize,
        position: Vec<i64>,
        value: i64,
        fault: ValueFault,
    ) -> IndexValue {
        let a = &c.args[arg];
        let v = a.values.as_ref();
        let bound = match (v, fault) {
            (Some(v), ValueFault::Range { hi, .. }) => bound_text(c, &v.hi, hi),
            (Some(v), ValueFault::First { expected }) => bound_text(c, &v.lo, expected),
            (Some(v), ValueFault::Last { expected }) => bound_text(c, &last(v), expected),
            _ => String::new(),
        };
        IndexValue {
            kernel: c.name,
            signature: c.signature,
            location: c.location,
            arg: a.name.to_string(),
            position,
            value,
            fault,
            contract: v.map_or("", |v| v.text),
            sentinel: v.and_then(|v| v.sentinel),
            bound,
            found_at: None,
            count: 1,
            deferred: false,
        }
    }
}

/// An ascending contract's last entry, `T` of `ascending from 0 to T` (whose exclusive
/// bound the contract holds as `T + 1`).
fn last(v: &ValueContract) -> Extent {
    match v.hi.expr {
        Expr::Bin(BinOp::Add, inner, &Expr::Const(1)) => Extent {
            text: v.hi.text.strip_suffix(" + 1").unwrap_or(v.hi.text),
            expr: *inner,
        },
        _ => v.hi,
    }
}

/// `NB = 4096 (bound by k_cache.shape[0])`, `NB * BS = 65536 (NB bound by
/// k_cache.shape[0], BS bound by k_cache.shape[1])`, or just `4096` for a constant.
fn bound_text(c: &KernelContract, e: &Extent, value: i64) -> String {
    if matches!(e.expr, Expr::Const(_)) {
        return value.to_string();
    }
    let (mut syms, mut params) = (Vec::new(), Vec::new());
    e.expr.mentions(&mut syms, &mut params);
    let by = |s: usize| {
        let sym = &c.symbols[s];
        let arg = &c.args[sym.bound_by.arg];
        format!("{}.shape[{}]", arg.name, physical(arg, sym.bound_by.dim))
    };
    match (e.expr, syms.as_slice()) {
        (Expr::Sym(s), _) => format!("{} = {value} (bound by {})", e.text, by(s)),
        (_, []) => format!("{} = {value}", e.text),
        (_, many) => {
            let parts: Vec<String> = many
                .iter()
                .map(|&s| format!("{} bound by {}", c.symbols[s].name, by(s)))
                .collect();
            format!("{} = {value} ({})", e.text, parts.join(", "))
        }
    }
}

impl fmt::Display for IndexValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at: Vec<String> = self.position.iter().map(|i| i.to_string()).collect();
        write!(
            f,
            "{}: {}[{}] = {}, expected ",
            self.kernel,
            self.arg,
            at.join(", "),
            self.value
        )?;
        match self.fault {
            // `< V` says it of an entry too large; one below 0 needs the lower bound too.
            ValueFault::Range { lo: 0, .. } if self.value >= 0 => write!(f, "< {}", self.bound)?,
            ValueFault::Range { lo, .. } => write!(f, "{lo} <= value < {}", self.bound)?,
            ValueFault::Order { previous } => {
                write!(f, ">= {previous}, the entry before it (ascending)")?
            }
            ValueFault::First { .. } | ValueFault::Last { .. } => {
                let which = if matches!(self.fault, ValueFault::First { .. }) {
                    "first"
                } else {
                    "last"
                };
                write!(
                    f,
                    "{}, as the {which} entry of an ascending tensor",
                    self.bound
                )?
            }
        }
        if let Some(s) = self.sentinel {
            write!(f, " or {s}")?;
        }
        write!(f, "; values({})", self.contract)?;
        if let Some(([bx, by, bz], [tx, ty, tz])) = self.found_at {
            write!(
                f,
                " (block ({bx},{by},{bz}), thread ({tx},{ty},{tz})); 1 of {} bad entr{}{}",
                self.count,
                if self.count == 1 { "y" } else { "ies" },
                if self.deferred {
                    " in the launches since the last report (deferred)"
                } else {
                    ""
                }
            )?;
        }
        write!(f, "\n  in {} at {}", self.signature, self.location)
    }
}
