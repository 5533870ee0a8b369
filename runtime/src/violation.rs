//! What the checker refuses, and how it says so.
//!
//! Every variant names the argument (or param, or constraint) and carries the expected and
//! the actual values, so that the message alone is enough to find the bug: no debugger, no
//! reproduction. [`LaunchError`] holds every violation of one launch, not only the first,
//! because one wrong tensor usually breaks several checks and seeing them together is what
//! tells a transposed `[B,S,H,D]` from a plain wrong size.

use std::fmt;

use crate::contract::{DType, EvalError, KernelContract, Resident};
use crate::device_id::DeviceId;

/// Where a symbol used in an expected extent took its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bound {
    pub symbol: &'static str,
    pub value: i64,
    /// The argument whose shape gave the value.
    pub arg: &'static str,
    /// Physical position in that argument's shape.
    pub position: usize,
}

/// How a tensor's strides break what the kernel assumes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StrideFault {
    /// The spec does not say `strided`, so the kernel assumes row-major contiguity in
    /// physical order; this dimension's stride differs.
    NotContiguous {
        position: usize,
        expected: isize,
        actual: isize,
    },
    /// An output whose elements alias each other (a zero or overlapping stride): two
    /// threads would write the same element.
    SelfOverlap,
}

/// One array of a launch's dynamic shared memory, for [`Violation::SharedMemory`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharedUse {
    pub name: &'static str,
    pub dtype: DType,
    /// Its extents at this launch.
    pub dims: Vec<i64>,
    /// Where it starts, in bytes from the start of the block's shared memory.
    pub offset: u64,
    pub bytes: u64,
}

/// One failed check. See the module documentation.
#[derive(Debug, Clone, PartialEq)]
pub enum Violation {
    /// The stub passed another number of tensors or params than the contract declares:
    /// a bug in the generated stub, refused rather than trusted.
    ArgCount {
        what: &'static str,
        expected: usize,
        actual: usize,
    },
    /// The contract itself is inconsistent: a bug in the code generator.
    Contract { what: String },
    /// The kernel writes this argument but the stub passed it read-only, so the
    /// stream-ordering events would be recorded as a read.
    Access { arg: &'static str },
    DType {
        arg: &'static str,
        expected: DType,
        actual: DType,
    },
    /// Wrong number of dimensions (or a stride list whose length differs from the shape's).
    Rank {
        arg: &'static str,
        /// The declared type, e.g. `f16[B, H, S, D]`.
        declared: String,
        expected: usize,
        actual: usize,
        strides: usize,
    },
    /// A dimension differs from its extent.
    Dim {
        arg: &'static str,
        /// Physical position in the caller's shape.
        position: usize,
        /// The logical dimension held there (differs from `position` under `stored`).
        logical: usize,
        /// The extent as written in the spec.
        extent: &'static str,
        expected: i64,
        actual: usize,
        /// Where each symbol of the extent was bound.
        bound_by: Vec<Bound>,
    },
    /// An argument with entries whose value contract admits none for this launch
    /// (`values(0 .. V)` with V = 0; with a sentinel, one whose upper bound is below its lower).
    EmptyValueRange {
        arg: &'static str,
        /// As the spec writes it: `0 .. V`.
        contract: &'static str,
        lo: i64,
        hi: i64,
    },
    /// A `where` constraint evaluated to 0.
    Constraint {
        text: &'static str,
        values: Vec<(&'static str, String)>,
    },
    /// An extent, constraint, grid or shared size could not be evaluated (division by zero,
    /// overflow, a param that is not an integer).
    Eval {
        /// `argument w: shape[0]`, `argument ids: values(0 .. V / p)`, `constraint`, `launch
        /// grid` or `shared tile: dims[1]`.
        site: String,
        text: &'static str,
        error: EvalError,
        values: Vec<(&'static str, String)>,
    },
    /// A tensor lives on another device or context than the launch stream.
    Device {
        arg: &'static str,
        expected: DeviceId,
        actual: DeviceId,
    },
    /// The launch stream is on another device or context than the one the kernel was
    /// loaded into.
    Stream { kernel: DeviceId, stream: DeviceId },
    Stride {
        arg: &'static str,
        shape: Vec<usize>,
        strides: Vec<isize>,
        fault: StrideFault,
    },
    /// The view reaches elements outside its buffer.
    OutOfBuffer {
        arg: &'static str,
        offset: usize,
        shape: Vec<usize>,
        strides: Vec<isize>,
        /// First and last element reached, relative to the buffer's start.
        first: i128,
        last: i128,
        buffer_len: usize,
    },
    /// The data pointer (after the view's offset) is not aligned as the spec requires.
    Align {
        arg: &'static str,
        align: usize,
        address: u64,
        offset: usize,
    },
    /// An output shares memory with another argument.
    Overlap {
        arg: &'static str,
        other: &'static str,
        range: (u64, u64),
        other_range: (u64, u64),
    },
    ParamType {
        param: &'static str,
        expected: DType,
        actual: DType,
    },
    /// The launch domain has no elements and the spec says `empty refuse`.
    Empty {
        arg: &'static str,
        shape: Vec<usize>,
    },
    /// The launch domain has more elements than a 64-bit index reaches.
    TooLarge {
        arg: &'static str,
        shape: Vec<usize>,
    },
    /// A raw launch grid (x, y, z as evaluated) outside the device's limits: each
    /// extent must lie in `0..=limit` (0 makes the launch empty).
    Grid { grid: Vec<i64>, limit: [u32; 3] },
    /// A raw launch grid that is no whole number of the spec's clusters: each extent must
    /// be a multiple of the cluster's (the driver refuses the launch otherwise, with
    /// CUDA_ERROR_INVALID_CLUSTER_SIZE and no numbers).
    ClusterGrid { grid: [u32; 3], cluster: [u32; 3] },
    /// A `resident` grid of more blocks than the device holds at once: `blocks_per_sm`
    /// blocks of the entry point (with its registers and `shared_bytes` of dynamic shared
    /// memory) on each of `sms` SMs. Launched, its blocks could wait forever for blocks
    /// that never start. A `persistent` launch shrinks its grid to what the device holds,
    /// so it is refused only where no SM holds one of its blocks.
    NotResident {
        /// `Resident::Whole` or `Resident::AtMost`: which launch form asked.
        form: Resident,
        grid: [u32; 3],
        threads: u32,
        shared_bytes: u32,
        blocks_per_sm: u32,
        sms: u32,
    },
    /// The launch needs more dynamic shared memory than one block may have.
    SharedMemory {
        bytes: u64,
        limit: u32,
        /// Every array, in layout order.
        arrays: Vec<SharedUse>,
    },
    /// An extent that must not be negative evaluated to a negative value.
    Negative {
        /// `shared tile: dims[1]`.
        site: String,
        text: &'static str,
        value: i64,
        values: Vec<(&'static str, String)>,
    },
}

fn list<T: fmt::Display>(items: &[T]) -> String {
    let parts: Vec<String> = items.iter().map(T::to_string).collect();
    format!("[{}]", parts.join(", "))
}

fn values(values: &[(&'static str, String)]) -> String {
    let parts: Vec<String> = values.iter().map(|(k, v)| format!("{k} = {v}")).collect();
    parts.join(", ")
}

fn eval_error(e: EvalError) -> &'static str {
    match e {
        EvalError::DivByZero => "division by zero",
        EvalError::Overflow => "integer overflow",
        EvalError::NotInteger(_) => "a param that is not an integer is used as one",
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Violation::ArgCount {
                what,
                expected,
                actual,
            } => write!(
                f,
                "the launch stub passed {actual} {what}, the contract declares {expected}"
            ),
            Violation::Contract { what } => {
                write!(f, "malformed contract (a code generator bug): {what}")
            }
            Violation::Access { arg } => write!(
                f,
                "argument {arg}: the kernel writes it, but it was passed read-only"
            ),
            Violation::DType {
                arg,
                expected,
                actual,
            } => {
                write!(f, "argument {arg}: dtype is {actual}, expected {expected}")
            }
            Violation::Rank {
                arg,
                declared,
                expected,
                actual,
                strides,
            } => {
                if actual != expected {
                    write!(
                        f,
                        "argument {arg}: rank is {actual}, expected {expected} ({declared})"
                    )
                } else {
                    write!(
                        f,
                        "argument {arg}: {strides} strides given for {actual} dimensions ({declared})"
                    )
                }
            }
            Violation::Dim {
                arg,
                position,
                logical,
                extent,
                expected,
                actual,
                bound_by,
            } => {
                write!(f, "argument {arg}: shape[{position}]")?;
                if position != logical {
                    write!(f, " (logical dim {logical}, {extent})")?;
                }
                write!(f, " is {actual}, expected ")?;
                if extent.parse::<i64>().ok() == Some(*expected) {
                    write!(f, "{expected}")?;
                } else {
                    write!(f, "{extent} = {expected}")?;
                }
                match bound_by.as_slice() {
                    [] => Ok(()),
                    [b] if b.symbol == *extent => {
                        write!(f, " (bound by {}.shape[{}])", b.arg, b.position)
                    }
                    many => {
                        let parts: Vec<String> = many
                            .iter()
                            .map(|b| {
                                format!(
                                    "{} = {} bound by {}.shape[{}]",
                                    b.symbol, b.value, b.arg, b.position
                                )
                            })
                            .collect();
                        write!(f, " ({})", parts.join(", "))
                    }
                }
            }
            Violation::EmptyValueRange {
                arg,
                contract,
                lo,
                hi,
            } => write!(
                f,
                "argument {arg}: its entries must lie in values({contract}), which is empty here ({lo} .. {hi})"
            ),
            Violation::Constraint { text, values: v } => {
                write!(f, "constraint {text} does not hold")?;
                if !v.is_empty() {
                    write!(f, ": {}", values(v))?;
                }
                Ok(())
            }
            Violation::Eval {
                site,
                text,
                error,
                values: v,
            } => {
                write!(f, "{site}: cannot evaluate {text}: {}", eval_error(*error))?;
                if !v.is_empty() {
                    write!(f, " ({})", values(v))?;
                }
                Ok(())
            }
            Violation::Device {
                arg,
                expected,
                actual,
            } => write!(
                f,
                "argument {arg}: on {actual}, but the launch stream is on {expected}"
            ),
            Violation::Stream { kernel, stream } => write!(
                f,
                "the launch stream is on {stream}, but the kernel was loaded on {kernel}"
            ),
            Violation::Stride {
                arg,
                shape,
                strides,
                fault,
            } => match fault {
                StrideFault::NotContiguous {
                    position,
                    expected,
                    actual,
                } => write!(
                    f,
                    "argument {arg}: not contiguous: stride[{position}] is {actual}, expected \
                     {expected} (shape {}, strides {}; the spec does not say `strided`)",
                    list(shape),
                    list(strides)
                ),
                StrideFault::SelfOverlap => write!(
                    f,
                    "argument {arg}: an output whose elements alias each other (shape {}, \
                     strides {}): threads would write the same element",
                    list(shape),
                    list(strides)
                ),
            },
            Violation::OutOfBuffer {
                arg,
                offset,
                shape,
                strides,
                first,
                last,
                buffer_len,
            } => {
                write!(
                    f,
                    "argument {arg}: the view (offset {offset}, shape {}, strides {}) reaches \
                     elements {first}..={last} of a buffer of {buffer_len} elements",
                    list(shape),
                    list(strides)
                )
            }
            Violation::Align {
                arg,
                align,
                address,
                offset,
            } => write!(
                f,
                "argument {arg}: data pointer {address:#x} (offset {offset} elements) is not \
                 aligned to {align} bytes"
            ),
            Violation::Overlap {
                arg,
                other,
                range,
                other_range,
            } => write!(
                f,
                "output {arg} overlaps argument {other}: bytes {:#x}..{:#x} and {:#x}..{:#x}",
                range.0, range.1, other_range.0, other_range.1
            ),
            Violation::ParamType {
                param,
                expected,
                actual,
            } => {
                write!(f, "param {param}: dtype is {actual}, expected {expected}")
            }
            Violation::Empty { arg, shape } => write!(
                f,
                "launch domain {arg} has no elements (shape {}) and the kernel refuses empty \
                 launches",
                list(shape)
            ),
            Violation::TooLarge { arg, shape } => write!(
                f,
                "launch domain {arg} (shape {}) has more elements than a 64-bit index holds",
                list(shape)
            ),
            Violation::Grid { grid, limit } => {
                let axes: Vec<String> = ["x", "y", "z"]
                    .iter()
                    .zip(limit)
                    .take(grid.len())
                    .map(|(axis, l)| format!("{axis} 0..={l}"))
                    .collect();
                write!(
                    f,
                    "launch grid {} is outside the device's limits ({})",
                    list(grid),
                    axes.join(", ")
                )
            }
            Violation::ClusterGrid { grid, cluster } => write!(
                f,
                "launch grid {} is no whole number of clusters of {}: each extent of the grid \
                 must be a multiple of the cluster's",
                list(grid),
                list(cluster)
            ),
            Violation::NotResident {
                form,
                grid,
                threads,
                shared_bytes,
                blocks_per_sm,
                sms,
            } => {
                let blocks: u64 = grid.iter().map(|&g| u64::from(g)).product();
                let plural = if *blocks_per_sm == 1 { "" } else { "s" };
                let form = match form {
                    Resident::AtMost => "persistent",
                    Resident::Whole | Resident::No => "resident",
                };
                write!(
                    f,
                    "launch grid {} ({blocks} blocks) is `{form}`, but the device holds {} \
                     at once: {blocks_per_sm} block{plural} of {threads} threads with \
                     {shared_bytes} bytes of dynamic shared memory on each of {sms} SMs",
                    list(grid),
                    u64::from(*blocks_per_sm) * u64::from(*sms)
                )
            }
            Violation::SharedMemory {
                bytes,
                limit,
                arrays,
            } => {
                let parts: Vec<String> = arrays
                    .iter()
                    .map(|a| {
                        format!(
                            "{}: {}{} = {} bytes at offset {}",
                            a.name,
                            a.dtype,
                            list(&a.dims),
                            a.bytes,
                            a.offset
                        )
                    })
                    .collect();
                write!(
                    f,
                    "dynamic shared memory of {bytes} bytes exceeds the {limit} bytes a block \
                     may have on this device ({})",
                    parts.join("; ")
                )
            }
            Violation::Negative {
                site,
                text,
                value,
                values: v,
            } => {
                write!(f, "{site}: {text} = {value} is negative")?;
                if !v.is_empty() {
                    write!(f, " ({})", values(v))?;
                }
                Ok(())
            }
        }
    }
}

/// Every violation found for one launch, with the kernel's signature and spec location.
#[derive(Debug, Clone, PartialEq)]
pub struct LaunchError {
    pub kernel: &'static str,
    pub signature: &'static str,
    pub location: &'static str,
    pub violations: Vec<Violation>,
}

impl LaunchError {
    pub fn new(contract: &KernelContract, violations: Vec<Violation>) -> Self {
        LaunchError {
            kernel: contract.name,
            signature: contract.signature,
            location: contract.location,
            violations,
        }
    }
}

impl fmt::Display for LaunchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.violations.len();
        let plural = if n == 1 { "" } else { "s" };
        write!(
            f,
            "{} at {}: {n} argument error{plural}",
            self.signature, self.location
        )?;
        for v in &self.violations {
            write!(f, "\n  {v}")?;
        }
        Ok(())
    }
}

impl std::error::Error for LaunchError {}
