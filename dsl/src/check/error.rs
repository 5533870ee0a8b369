//! The checker's errors, naga-style: one variant per class of mistake, carrying what it
//! needs to explain itself (names, spans, the expected and the actual values), and one
//! place, [`CheckError::to_diagnostic`], that renders each into a [`Diagnostic`].
//!
//! Every variant has a name ([`CheckError::code`]) listed in [`CheckError::ALL`]; both are
//! generated from the one list below, so they cannot drift from the enum. The name travels
//! with the rendered diagnostic ([`Diagnostic::code`], not printed), and tests/golden.rs
//! fails naming every variant that no `tests/in/*.ima` snapshot triggers.

use super::scope::Ty;
use crate::ast::{Role, Span};
use crate::diag::Diagnostic;
use crate::ir::DType;
use ima_contract::MAX_RANK;

/// The most dynamic shared memory one block may use on sm_90 (H100, H200): 227 KiB.
pub(super) const MAX_SHARED_BYTES: u64 = 227 * 1024;

/// Defines `CheckError` with its variants, and `code()` and `ALL` from the same list.
macro_rules! check_errors {
    ($( $(#[$doc:meta])* $variant:ident { $($(#[$fdoc:meta])* $field:ident : $ty:ty),* $(,)? } ),* $(,)?) => {
        /// An error in a spec that parses: the checker reports every one in the file.
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub enum CheckError {
            $( $(#[$doc])* $variant { $($(#[$fdoc])* $field: $ty),* } ),*
        }

        impl CheckError {
            /// The name of every variant, in declaration order.
            pub const ALL: &'static [&'static str] = &[$(stringify!($variant)),*];

            /// This error's variant name, e.g. `"UnknownSymbol"`.
            pub fn code(&self) -> &'static str {
                match self {
                    $( CheckError::$variant { .. } => stringify!($variant) ),*
                }
            }
        }
    };
}

/// Why constraints on one name contradict each other.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Conflict {
    /// The constraints fix the value, and it is no multiple of a required divisor.
    NotMultiple { value: i64, of: i64 },
    /// The lower bound is above the upper one.
    EmptyRange { lo: i64, hi: i64 },
}

check_errors! {
    // Names.
    /// A name declared twice in one namespace: constants, kernels, a kernel's arguments and
    /// params (and shared arrays), or its launch indices.
    Duplicate { what: &'static str, name: String, span: Span, first: Span },
    /// A name that CUDA C++, Rust or the generated code already uses.
    Reserved { name: String, span: Span, why: &'static str },
    /// Two names, each the spec's or one the back ends derive from it (crate::names), that
    /// are the same identifier in one namespace of the generated code.
    NameClash {
        /// The identifier.
        name: String,
        /// What makes it: "kernel `k_args`'s Rust struct".
        what: String,
        span: Span,
        /// What made it first, and where, unless the generated code's own.
        first: String,
        first_span: Option<Span>,
        /// The namespace: "the generated Rust module's types".
        place: &'static str,
    },
    /// A name in an expression that is no constant, symbol or param.
    UnknownSymbol { name: String, span: Span },
    /// A constant's value naming a constant declared below it.
    ConstBeforeDeclared { name: String, span: Span, declared: Span },

    // Expressions.
    /// An expression no launch can evaluate: a part with no symbol or param (a `const`'s
    /// value, a launch number, a constant clause) that overflows 64 bits or divides by zero,
    /// or a division by a constant 0.
    ConstOverflow { span: Span },
    /// An extent, a grid's extent or a group size that is a constant below its least value
    /// (0; a group 1): every launch would be refused.
    ConstantBelow { what: &'static str, value: i64, least: i64, span: Span },
    /// A number where a condition is expected, or the reverse.
    TypeMismatch { expected: Ty, found: Ty, span: Span },
    /// A float param in an extent or a constraint.
    NonIntegerParam { name: String, dtype: DType, span: Span },
    /// `ceil(...)` of something other than a division.
    CeilNotDivision { span: Span },
    /// `ceil`, `min` or `max` with the wrong number of arguments.
    WrongArgCount { function: String, expected: usize, found: usize, span: Span },
    /// A call of a function other than `ceil`, `min` and `max`.
    UnknownFunction { name: String, span: Span },

    // A kernel's members.
    /// A kernel without a `launch` or a `body`.
    MissingMember { kernel: String, member: &'static str, span: Span },
    /// A kernel with more than one `launch` or `body`.
    RepeatedMember { kernel: String, member: &'static str, count: usize, span: Span },
    /// A second `empty` policy.
    SecondEmptyPolicy { span: Span },
    /// An element type imac does not know.
    UnknownDType { name: String, span: Span },
    /// A param of a type the launch stub does not pass (f16, 8- and 16-bit integers, ...).
    ParamType { name: String, dtype: DType, span: Span },

    // Constraints.
    /// A constraint with no symbol or param that is false.
    ConstraintNeverHolds { text: String, span: Span },
    /// A constraint that, with the ones before it, no value of `name` satisfies.
    ConstraintsContradict { name: String, conflict: Conflict, span: Span },

    // Tensor arguments: alignment.
    /// `align(N)` with N no power of two.
    /// (`element`: the argument's element size, the least alignment it may ask for.)
    AlignNotPowerOfTwo { align: u64, element: u64, span: Span },
    /// `align(N)` below the size of one element.
    AlignBelowElement { align: u64, dtype: DType, span: Span },
    /// `align(N)` promising vectors along an inner extent that the constraints do not make
    /// a multiple of the vector's width.
    AlignWithoutMultiple {
        arg: String,
        align: u64,
        dtype: DType,
        width: i64,
        inner: String,
        /// The inner extent, when it is a bare symbol (the help names the constraint).
        inner_symbol: Option<String>,
        span: Span,
    },

    // Tensor arguments: `stored`.
    /// `stored` names something that is no logical dimension of the argument.
    StoredUnknownDim { dim: String, arg: String, logical: Vec<String>, span: Span },
    /// `stored` names a dimension twice.
    StoredRepeated { dim: String, span: Span },
    /// `stored` lists fewer dimensions than the argument has.
    StoredNotPermutation { arg: String, given: usize, logical: Vec<String>, span: Span },
    /// `stored` on an argument whose logical dimensions repeat a name.
    StoredAmbiguous { arg: String, span: Span },

    // Tensor arguments: `early`.
    /// `early` on an output: a kernel that starts early may write only after it waits.
    EarlyOutput { arg: String, span: Span },
    /// `early` arguments in a kernel whose body never calls `ima_wait_for_inputs()`.
    EarlyWithoutWait { kernel: String, span: Span },

    // Tensor arguments: quantization.
    /// `q4` or `q8` without a format.
    QuantWithoutFormat { dtype: String, span: Span },
    /// A format on a tensor that is not `q4` or `q8`.
    FormatOnPlain { format: String, dtype: String, span: Span },
    /// A format of the other width (`int8` on `q4`, `gptq` on `q8`).
    QuantWidth { format: String, format_bits: u32, arg: String, bits: u32, span: Span },
    /// A quantized argument that is not a matrix.
    QuantRank { arg: String, rank: usize, span: Span },
    /// A quantized argument that the kernel writes.
    QuantNotInput { arg: String, span: Span },
    /// `align` on a quantized argument other than align(16) on a 4-bit format.
    QuantAlign { arg: String, span: Span },
    /// `stored` or `strided` on a quantized argument.
    QuantLayout { span: Span },
    /// An option the format does not have.
    QuantUnknownOption { format: String, option: String, allowed: &'static [&'static str], span: Span },
    /// An option with a value it cannot take (or a flag given a value).
    QuantBadValue { option: String, span: Span },
    /// A format without `group`.
    QuantNoGroup { format: String, first_extent: Option<String>, span: Span },

    // TMA (check/args.rs).
    /// `tma(...)` on an argument that is not a plain, contiguous, 16-byte-aligned tensor of
    /// rank 2 to 5.
    TmaLayout { arg: String, span: Span },
    /// A box whose rows are not 128 bytes, or whose row count is not 8 to 256 in steps of 8.
    TmaBox { arg: String, rows: u64, cols: u64, dtype: DType, span: Span },
    /// `tma(...)` on a quantized argument whose format is not GPTQ without act-order.
    TmaQuantFormat { arg: String, span: Span },
    /// A quantized argument's tile whose rows are not 64 to 2048 in steps of 64, or whose
    /// columns are not 32 to 256 in steps of 32.
    TmaQuantBox { arg: String, rows: u64, cols: u64, span: Span },
    /// `align(N)` on a shared array other than a power of two from 16 to 1024 (raised by
    /// check/shared.rs).
    SharedAlign { name: String, align: u64, span: Span },
    /// A body's directive the generated code around it cannot stand: an `#if` that no
    /// `#endif` closes, an `#endif` that closes no `#if`, an `#undef` of a macro defined
    /// before it, a `#define` of imac's names.
    BodyDirective { kernel: String, what: String, span: Span },
    /// An argument whose constant extents multiply past i64 (its element count, which the
    /// entry points compute): every launch would be refused, or its count overflow.
    ElementCountOverflow { arg: String, extents: String, span: Span },
    /// An argument or shared array of more than `MAX_RANK` dimensions (its extents past
    /// the last allowed are the span).
    RankTooHigh { what: &'static str, name: String, rank: usize, span: Span },

    // Value contracts (check/values.rs).
    /// `values(...)` on a quantized argument.
    ValuesOnQuant { arg: String, span: Span },
    /// `values(...)` on an argument of a non-integer element type.
    ValuesNotInteger { arg: String, dtype: DType, span: Span },
    /// `values(...)` on an argument the kernel writes.
    ValuesOnOutput { arg: String, role: Role, span: Span },
    /// A value range with constant bounds that holds nothing (`hi` is exclusive).
    ValuesEmptyRange { arg: String, lo: i64, hi: i64, ascending: bool, span: Span },
    /// A sentinel in an `ascending` contract.
    SentinelInAscending { arg: String, span: Span },
    /// A sentinel not provably outside the range.
    SentinelInsideRange { arg: String, sentinel: i64, lo: String, hi: String, span: Span },
    /// A sentinel that the element type cannot hold.
    SentinelOutOfType { arg: String, sentinel: i64, dtype: DType, span: Span },

    // Shared memory.
    /// A shared array with an extent that the constraints do not bound from above.
    SharedUnbounded { name: String, extent: String, symbol: Option<String>, span: Span },
    /// Shared arrays that can together exceed what a block may use.
    SharedTooLarge { name: String, total: u64, bytes: u64, span: Span },

    // The launch.
    /// A number of the launch (`block`, `cluster`, `threads`, `min_blocks`) that names a
    /// symbol or param: the launch's shape is fixed when the module is built.
    LaunchNotConstant { what: &'static str, text: String, span: Span },
    /// `threads N` outside 1 to 1024.
    ThreadsOutOfRange { threads: i64, span: Span },
    /// `threads N` with `launch grid(...)` or `persistent(...)`, whose `block(...)` gives the
    /// size.
    ThreadsWithGrid { span: Span },
    /// A `block(...)` dimension outside 1 to 1024.
    BlockDimOutOfRange { dim: i64, span: Span },
    /// A `block(...)` of more than 1024 threads.
    BlockTooLarge { threads: u64, span: Span },
    /// `min_blocks N` that no SM can hold (or below 1).
    MinBlocks { min_blocks: i64, threads: u64, span: Span },
    /// A `cluster(...)` extent below 1, or clusters of more than 8 blocks.
    ClusterSize { dims: Vec<i64>, span: Span },
    /// A `cluster(...)` of more extents than the grid has.
    ClusterRank { cluster: usize, grid: usize, span: Span },
    /// `cluster(...)` with `resident` or `persistent`.
    ClusterResident { persistent: bool, span: Span },
    /// `launch over` a name that is no tensor argument.
    LaunchOverUnknown { name: String, span: Span },
    /// `launch over` an `in` argument.
    LaunchOverInput { name: String, declared: Span, span: Span },
    /// `launch over` with a number of indices other than the argument's rank.
    LaunchIndexCount { arg: String, indices: usize, dims: usize, span: Span },
    /// `_` in `launch over` (a thread per element).
    HoleInThreadLaunch { span: Span },
    /// `launch blocks over` without trailing `_`s.
    BlocksWithoutHole { span: Span },
    /// A launch index named as an argument.
    IndexShadowsArgument { name: String, arg: Span, span: Span },
    /// A launch index named as a symbol or a constant.
    IndexShadowsSymbol { name: String, span: Span },
}

impl CheckError {
    /// The diagnostic shown for this error: message, labelled span, related spans, help.
    pub fn to_diagnostic(&self) -> Diagnostic {
        use CheckError::*;
        let d = match self {
            Duplicate {
                what,
                name,
                span,
                first,
            } => Diagnostic::error(
                format!("duplicate {what} `{name}`"),
                *span,
                "declared again here",
            )
            .with_related(*first, "first declared here")
            .with_help(format!("rename one of the two `{name}`")),
            Reserved { name, span, why } => {
                Diagnostic::error(format!("`{name}` is a reserved name"), *span, "reserved")
                    .with_help(format!("rename it: {why}"))
            }
            NameClash {
                name,
                what,
                span,
                first,
                first_span,
                place,
            } => {
                let d = Diagnostic::error(
                    format!("`{name}` names both {first} and {what} in {place}"),
                    *span,
                    what.clone(),
                );
                match first_span {
                    Some(first_span) => d
                        .with_related(*first_span, first.clone())
                        .with_help("rename one of the two"),
                    None => d.with_help("rename it"),
                }
            }
            ConstBeforeDeclared {
                name,
                span,
                declared,
            } => Diagnostic::error(
                format!("constant `{name}` is used above its declaration"),
                *span,
                "not declared yet",
            )
            .with_related(*declared, "declared here")
            .with_help(format!(
                "a constant's value sees the constants above it: move `const {name}` up"
            )),
            UnknownSymbol { name, span } => {
                Diagnostic::error(format!("unknown symbol `{name}`"), *span, "not declared")
                    .with_help(format!(
                        "bind `{name}` by using it as a dimension of an input or an output, or declare `const {name} = ...` or `param {name}: i32`"
                    ))
            }
            ConstOverflow { span } => Diagnostic::error(
                "expression overflows or divides by zero",
                *span,
                "cannot be evaluated",
            ),
            ConstantBelow {
                what,
                value,
                least,
                span,
            } => Diagnostic::error(
                format!("{what} is {value}, below {least}"),
                *span,
                format!("always {value}"),
            )
            .with_help("every launch would be refused: give it a value it can take"),
            TypeMismatch {
                expected,
                found,
                span,
            } => Diagnostic::error(
                format!(
                    "type mismatch: expected {}, found {}",
                    expected.name(),
                    found.name()
                ),
                *span,
                format!("this is {}", found.name()),
            )
            .with_help(match expected {
                Ty::Bool => "write a comparison, e.g. `D % 8 == 0`",
                Ty::Int => "a comparison yields a truth value, not a number",
            }),
            NonIntegerParam { name, dtype, span } => Diagnostic::error(
                format!(
                    "type mismatch: param `{name}` is {}, not an integer",
                    dtype.name()
                ),
                *span,
                "not an integer",
            )
            .with_help("only integer params may appear in extents and constraints"),
            CeilNotDivision { span } => {
                Diagnostic::error("`ceil` takes a division", *span, "not a division")
                    .with_help("write `ceil(K / G)`: extents are integers, rounded up")
            }
            WrongArgCount {
                function,
                expected,
                found,
                span,
            } => Diagnostic::error(
                format!("`{function}` takes {expected} argument(s), found {found}"),
                *span,
                "wrong number of arguments",
            ),
            UnknownFunction { name, span } => {
                Diagnostic::error(format!("unknown function `{name}`"), *span, "unknown")
                    .with_help(
                        "extents and constraints may call `ceil(a / b)`, `min(a, b)` and `max(a, b)`",
                    )
            }
            MissingMember {
                kernel,
                member,
                span,
            } => Diagnostic::error(
                format!("kernel `{kernel}` has no `{member}`"),
                *span,
                format!("needs a `{member}`"),
            )
            .with_help(if *member == "launch" {
                "add `launch over OUT[i, j]`, naming an output and one index per dimension"
            } else {
                "add `body { ... }` with the kernel's CUDA C"
            }),
            RepeatedMember {
                kernel,
                member,
                count,
                span,
            } => Diagnostic::error(
                format!("kernel `{kernel}` has {count} `{member}`s"),
                *span,
                format!("needs exactly one `{member}`"),
            )
            .with_help(format!("keep one `{member}`")),
            SecondEmptyPolicy { span } => {
                Diagnostic::error("a second `empty` policy", *span, "given twice")
                    .with_help("keep one")
            }
            UnknownDType { name, span } => {
                let all: Vec<&str> = DType::ALL.iter().map(|d| d.name()).collect();
                Diagnostic::error(
                    format!("unknown element type `{name}`"),
                    *span,
                    "unknown type",
                )
                .with_help(format!("use one of {}", all.join(", ")))
            }
            ParamType { name, dtype, span } => Diagnostic::error(
                format!("param `{name}` cannot be {}", dtype.name()),
                *span,
                "not a scalar param type",
            )
            .with_help("pass scalars as f32, f64, i32, u32, i64 or u64 and convert in the body"),
            ConstraintNeverHolds { text, span } => Diagnostic::error(
                format!("constraint `{text}` never holds"),
                *span,
                "always false",
            )
            .with_help("every launch would be refused: remove or fix it"),
            ConstraintsContradict {
                name,
                conflict,
                span,
            } => {
                let why = match conflict {
                    Conflict::NotMultiple { value, of } => {
                        format!("`{name}` = {value} is no multiple of {of}")
                    }
                    Conflict::EmptyRange { lo, hi } => {
                        format!("no `{name}` is at least {lo} and at most {hi}")
                    }
                };
                Diagnostic::error(
                    format!("constraints on `{name}` can never hold together"),
                    *span,
                    why,
                )
                .with_help("every launch would be refused: loosen or remove one of the constraints")
            }
            AlignNotPowerOfTwo {
                align,
                element,
                span,
            } => Diagnostic::error(
                format!("`align({align})` is not a power of two"),
                *span,
                "not a power of two",
            )
            // The power of two above, at least an element; past 2^63 there is none.
            .with_help(match align.checked_next_power_of_two() {
                Some(p) if p <= 1 << 62 => format!("use align({})", p.max(*element)),
                _ => format!("use a power of two from align({element}), such as align(16)"),
            }),
            AlignBelowElement { align, dtype, span } => {
                let (name, size) = (dtype.name(), dtype.size());
                Diagnostic::error(
                    format!("`align({align})` is below the size of {name} ({size} bytes)"),
                    *span,
                    "smaller than one element",
                )
                .with_help(format!(
                    "every {name} pointer is already {size}-byte aligned: use align({size}) or more, or drop it"
                ))
            }
            AlignWithoutMultiple {
                arg,
                align,
                dtype,
                width,
                inner,
                inner_symbol,
                span,
            } => Diagnostic::error(
                format!(
                    "`align({align})` on `{arg}` promises {width}-element vectors, but its inner extent `{inner}` is not constrained to a multiple of {width}"
                ),
                *span,
                format!("{width} × {} = {align} bytes", dtype.name()),
            )
            .with_help(match inner_symbol {
                Some(s) => format!("add `where {s} % {width} == 0`"),
                None => format!(
                    "make the innermost extent a symbol constrained to a multiple of {width}"
                ),
            }),
            StoredUnknownDim {
                dim,
                arg,
                logical,
                span,
            } => Diagnostic::error(
                format!("`stored` names `{dim}`, which is no dimension of `{arg}`"),
                *span,
                "not a logical dimension",
            )
            .with_help(format!(
                "list the logical dimensions [{}] in memory order",
                logical.join(", ")
            )),
            StoredRepeated { dim, span } => {
                Diagnostic::error(format!("`stored` names `{dim}` twice"), *span, "repeated")
                    .with_help("`stored` is a permutation of the logical dimensions")
            }
            StoredNotPermutation {
                arg,
                given,
                logical,
                span,
            } => Diagnostic::error(
                format!(
                    "`stored` has {given} dimensions, `{arg}` has {}",
                    logical.len()
                ),
                *span,
                "not a permutation",
            )
            .with_help(format!(
                "list all of [{}] in memory order",
                logical.join(", ")
            )),
            StoredAmbiguous { arg, span } => Diagnostic::error(
                format!("`stored` is ambiguous: `{arg}` has repeated dimensions"),
                *span,
                "ambiguous",
            )
            .with_help("give repeated dimensions their own symbols and constrain them equal"),
            QuantWithoutFormat { dtype, span } => Diagnostic::error(
                format!("`{dtype}` needs a quantization format"),
                *span,
                "no format",
            )
            .with_help(
                "add one, e.g. `gptq(group = 128)`, `awq(group = 128)` or, for q8, `int8(group = 128)`",
            ),
            FormatOnPlain {
                format,
                dtype,
                span,
            } => Diagnostic::error(
                format!("`{format}(...)` on a `{dtype}` tensor"),
                *span,
                "not a quantized type",
            )
            .with_help("quantization formats apply to `q4` (gptq, awq) and `q8` (int8) tensors"),
            QuantWidth {
                format,
                format_bits,
                arg,
                bits,
                span,
            } => Diagnostic::error(
                format!("`{format}` stores {format_bits}-bit values, but `{arg}` is `q{bits}`"),
                *span,
                "wrong width",
            )
            .with_help(if *bits == 4 {
                "use `gptq(...)` or `awq(...)` for q4"
            } else {
                "use `int8(...)` for q8"
            }),
            QuantRank { arg, rank, span } => Diagnostic::error(
                format!("quantized `{arg}` has {rank} dimensions"),
                *span,
                "must be [K, N]",
            )
            .with_help("quantized weights are matrices: `q4[K, N]`, grouped along K"),
            EarlyOutput { arg, span } => Diagnostic::error(
                format!("`early` on output `{arg}`"),
                *span,
                "only an input can be early",
            )
            .with_help(
                "`early` lets the body read an argument before `ima_wait_for_inputs()`, while the kernel \
                 ahead may still run; it writes nothing before then: declare the argument `in` or `inout`",
            ),
            EarlyWithoutWait { kernel, span } => Diagnostic::error(
                format!("`{kernel}` has `early` arguments but its body never calls `ima_wait_for_inputs()`"),
                *span,
                "the body may read this before it waits",
            )
            .with_help(
                "a kernel with `early` arguments may start while the kernel ahead still writes the others: \
                 call `ima_wait_for_inputs()` in the body before it reads or writes any argument not `early`",
            ),
            QuantNotInput { arg, span } => Diagnostic::error(
                format!("quantized `{arg}` is not `in`"),
                *span,
                "read-only",
            )
            .with_help("kernels read quantized weights; write dequantized values to a plain output"),
            TmaLayout { arg, span } => Diagnostic::error(
                format!("`tma` on `{arg}`, which is not a plain contiguous tensor of rank 2 to 5 with align(16)"),
                *span,
                "no tensor map for this layout",
            )
            .with_help(
                "a tensor map describes a row-major tensor whose rows start 16-byte aligned: declare it \
                 with `align(16)`, without `stored`, `strided` or a quantization format",
            ),
            TmaBox {
                arg,
                rows,
                cols,
                dtype,
                span,
            } => Diagnostic::error(
                format!("`tma({rows}, {cols})` on `{arg}`: a box of {rows} rows of {cols} {} elements", dtype.name()),
                *span,
                "not a 128-byte-swizzled box",
            )
            .with_help(format!(
                "a box row is 128 bytes ({} {} columns), and its rows number 8 to 256 in steps of 8",
                128 / dtype.size(),
                dtype.name()
            )),
            TmaQuantFormat { arg, span } => Diagnostic::error(
                format!("`tma` on `{arg}`, which is not in GPTQ format without act-order"),
                *span,
                "no tensor maps for this format",
            )
            .with_help(
                "a quantized argument's tiles come by TMA as GPTQ's packed words, scales and zeros, \
                 group by group: `gptq(group = G)`, without `g_idx`",
            ),
            TmaQuantBox { arg, rows, cols, span } => Diagnostic::error(
                format!("`tma({rows}, {cols})` on `{arg}`: a tile of {rows} rows of K by {cols} columns"),
                *span,
                "not a tile of whole swizzled boxes",
            )
            .with_help(
                "a quantized tile's rows number 64 to 2048 in steps of 64 (its packed words are then \
                 whole 8-row swizzle periods, at most 256 of them), and its columns 32 to 256 in steps of \
                 32 (boxes of 32 words, 128 bytes)",
            ),
            BodyDirective { kernel, what, span } => Diagnostic::error(
                format!("the body of `{kernel}` has {what}"),
                *span,
                "not allowed in a body",
            )
            .with_help(
                "imac's code and the other kernels follow the body: its conditionals close \
                 inside it, and it undefines only the macros it defines",
            ),
            ElementCountOverflow { arg, extents, span } => Diagnostic::error(
                format!("argument `{arg}` has more elements than 64 bits count: {extents} overflows"),
                *span,
                "constant extents whose product passes 2^63 - 1",
            )
            .with_help("no launch can hold it; the entry points compute the element count in 64 bits"),
            RankTooHigh {
                what,
                name,
                rank,
                span,
            } => Diagnostic::error(
                format!("{what} `{name}` has {rank} dimensions, more than {MAX_RANK}"),
                *span,
                format!("dimensions past the {MAX_RANK}th"),
            )
            .with_help(format!(
                "a checked launch records a violation's indices and extents, {MAX_RANK} at most: \
                 merge dimensions (a contiguous pair [A, B] reads as one of A * B)"
            )),
            SharedAlign { name, align, span } => Diagnostic::error(
                format!("shared `{name}` asks for align({align})"),
                *span,
                "not a power of two from 16 to 1024",
            )
            .with_help("shared arrays start 16-byte aligned; align(1024) suits TMA's 128-byte swizzle"),
            QuantAlign { arg, span } => Diagnostic::error(
                format!("`align` on quantized `{arg}` other than align(16) on a 4-bit format"),
                *span,
                "not allowed here",
            )
            .with_help(
                "align(16) on a q4 `gptq` or `awq` argument (with N a multiple of 8) makes its tiles load 16 bytes at a time; no other alignment applies",
            ),
            QuantLayout { span } => Diagnostic::error(
                "layout attributes on a quantized tensor",
                *span,
                "not allowed here",
            )
            .with_help("the format fixes every buffer's layout"),
            QuantUnknownOption {
                format,
                option,
                allowed,
                span,
            } => Diagnostic::error(
                format!("`{format}` has no option `{option}`"),
                *span,
                "unknown option",
            )
            .with_help(format!("options of `{format}`: {}", allowed.join(", "))),
            QuantBadValue { option, span } => {
                let expected = match option.as_str() {
                    "group" => "`group = 128` (a constant, a symbol, or K)",
                    "zeros" => "`zeros = plain` or `zeros = minus_one`",
                    "scales" => "`scales = f16` or `scales = bf16`",
                    _ => "a flag without a value",
                };
                Diagnostic::error(
                    format!("bad value for `{option}`"),
                    *span,
                    "unexpected value",
                )
                .with_help(format!("write {expected}"))
            }
            QuantNoGroup {
                format,
                first_extent,
                span,
            } => Diagnostic::error(
                format!("`{format}` needs a group size"),
                *span,
                "no `group`",
            )
            .with_help(format!(
                "add `group = 128` (or a symbol, or `{}` for one group)",
                first_extent.as_deref().unwrap_or("K")
            )),
            ValuesOnQuant { arg, span } => Diagnostic::error(
                format!("`values(...)` on quantized `{arg}`"),
                *span,
                "a quantized weight holds no indices",
            )
            .with_help(
                "an act-order `g_idx` (`gptq(..., g_idx)`) carries its own contract, `0 .. ceil(K / G)`",
            ),
            ValuesNotInteger { arg, dtype, span } => Diagnostic::error(
                format!("`values(...)` on `{arg}`, a {} argument", dtype.name()),
                *span,
                "not an integer type",
            )
            .with_help(
                "value contracts describe integer tensors that hold indices: i32, i64, u32, ...",
            ),
            ValuesOnOutput { arg, role, span } => Diagnostic::error(
                format!("`values(...)` on `{}` argument `{arg}`", role.keyword()),
                *span,
                "the kernel writes this argument",
            )
            .with_help(
                "a value contract is checked where the kernel reads an entry, and the accessor of an index tensor only reads: declare it on an `in` argument",
            ),
            ValuesEmptyRange {
                arg,
                lo,
                hi,
                ascending,
                span,
            } => {
                let shown = if *ascending {
                    format!("{lo} ..= {}", hi - 1)
                } else {
                    format!("{lo} .. {hi}")
                };
                Diagnostic::error(
                    format!("the value range of `{arg}` is empty: {shown}"),
                    *span,
                    "no entry can satisfy it",
                )
                .with_help(
                    "the lower bound is inclusive and the upper one exclusive: `0 .. N` holds 0 to N - 1",
                )
            }
            SentinelInAscending { arg, span } => Diagnostic::error(
                format!("a sentinel in the ascending contract of `{arg}`"),
                *span,
                "offsets have no padding value",
            )
            .with_help("drop `, or ...`: every entry of an ascending tensor is an offset"),
            SentinelInsideRange {
                arg,
                sentinel,
                lo,
                hi,
                span,
            } => Diagnostic::error(
                format!("the sentinel {sentinel} of `{arg}` may lie inside its range {lo} .. {hi}"),
                *span,
                "not provably outside the range",
            )
            .with_help(
                "a sentinel must lie below a constant lower bound (`0 .. N, or -1`) or at or above a constant upper one",
            ),
            SentinelOutOfType {
                arg,
                sentinel,
                dtype,
                span,
            } => Diagnostic::error(
                format!("the sentinel {sentinel} of `{arg}` is no {} value", dtype.name()),
                *span,
                format!("outside the range of {}", dtype.name()),
            )
            .with_help("use a signed element type for a negative sentinel"),
            SharedUnbounded {
                name,
                extent,
                symbol,
                span,
            } => Diagnostic::error(
                format!(
                    "nothing bounds the size of shared `{name}`: extent `{extent}` has no upper limit"
                ),
                *span,
                "unbounded shared memory",
            )
            .with_help(match symbol {
                Some(n) => format!("bound it: add e.g. `where {n} <= 256`"),
                None => "use extents the constraints bound from above".to_string(),
            }),
            SharedTooLarge {
                name,
                total,
                bytes,
                span,
            } => Diagnostic::error(
                format!(
                    "shared memory can reach {total} bytes, past the {MAX_SHARED_BYTES} bytes a block may use"
                ),
                *span,
                format!("`{name}` alone can take {bytes} bytes"),
            )
            .with_help("tighten the `where` bounds on its extents, or tile the work"),
            LaunchNotConstant { what, text, span } => Diagnostic::error(
                format!("`{what}` takes a constant"),
                *span,
                format!("`{text}` names a symbol or param, known only at a launch"),
            )
            .with_help(
                "a launch's block, cluster and `min_blocks` are fixed when the module is built \
                 (the entry points' `__launch_bounds__`, the contract's shape): use numbers \
                 and the spec's `const`s",
            ),
            ThreadsOutOfRange { threads, span } => Diagnostic::error(
                format!("{threads} threads per block"),
                *span,
                "must be 1 to 1024",
            )
            .with_help("CUDA blocks hold at most 1024 threads; 128 or 256 suit most kernels"),
            ThreadsWithGrid { span } => Diagnostic::error(
                "`threads` with a raw `grid`",
                *span,
                "the block is already given",
            )
            .with_help("set the block's size in `block(...)`"),
            BlockDimOutOfRange { dim, span } => {
                Diagnostic::error(format!("block dimension {dim}"), *span, "must be 1 to 1024")
            }
            BlockTooLarge { threads, span } => Diagnostic::error(
                format!("a block of {threads} threads"),
                *span,
                "more than 1024 threads",
            )
            .with_help("CUDA blocks hold at most 1024 threads"),
            MinBlocks {
                min_blocks,
                threads,
                span,
            } => Diagnostic::error(
                format!("`min_blocks {min_blocks}` with blocks of {threads} threads"),
                *span,
                if *min_blocks < 1 {
                    "at least 1"
                } else {
                    "no SM holds that many"
                },
            )
            .with_help(format!(
                "an SM holds at most 32 blocks and 2048 threads: use 1 to {}",
                (2048 / threads).min(32)
            )),
            ClusterSize { dims, span } => {
                let shape = dims
                    .iter()
                    .map(i64::to_string)
                    .collect::<Vec<_>>()
                    .join(" x ");
                // Blocks in a cluster, said where the extents are not negative.
                let blocks = match dims.iter().try_fold(1i64, |a, &d| a.checked_mul(d)) {
                    _ if dims.iter().any(|&d| d < 0) => String::new(),
                    Some(b) => format!(" ({b} blocks)"),
                    None => " (more blocks than an i64 holds)".to_string(),
                };
                Diagnostic::error(
                    format!("clusters of {shape}{blocks}"),
                    *span,
                    if dims.contains(&0) {
                        "an extent of 0"
                    } else if dims.iter().any(|&d| d < 0) {
                        "a negative extent"
                    } else {
                        "more than 8 blocks"
                    },
                )
                .with_help(
                    "a cluster holds 1 to 8 blocks (the portable size: every GPU that runs \
                     clusters can schedule one), each extent at least 1",
                )
            }
            ClusterRank {
                cluster,
                grid,
                span,
            } => Diagnostic::error(
                format!("a cluster of {cluster} extents on a grid of {grid}"),
                *span,
                "more extents than the grid's",
            )
            .with_help("give the cluster at most as many extents as `grid(...)` has"),
            ClusterResident { persistent, span } => Diagnostic::error(
                format!(
                    "`cluster(...)` with a {} launch",
                    if *persistent {
                        "`persistent`"
                    } else {
                        "`resident`"
                    }
                ),
                *span,
                "not supported",
            )
            .with_help(
                "a cooperative launch of clusters is not supported: launch the clusters as a \
                 plain `grid(...)`, whose blocks wait only for the blocks of their own cluster",
            ),
            LaunchOverUnknown { name, span } => Diagnostic::error(
                format!("`launch over` names `{name}`, which is no argument"),
                *span,
                "unknown argument",
            )
            .with_help("name an `out` or `inout` tensor of this kernel"),
            LaunchOverInput {
                name,
                declared,
                span,
            } => Diagnostic::error(
                format!("`launch over` an input: `{name}` is `in`"),
                *span,
                "an input",
            )
            .with_related(*declared, "declared `in` here")
            .with_help("launch over the output each thread writes, or declare it `inout`"),
            LaunchIndexCount {
                arg,
                indices,
                dims,
                span,
            } => Diagnostic::error(
                format!(
                    "`launch over {arg}` gives {indices} {}; `{arg}` has {dims} dimensions",
                    if *indices == 1 { "index" } else { "indices" }
                ),
                *span,
                "wrong number of indices",
            )
            .with_help("name one index per dimension"),
            HoleInThreadLaunch { span } => Diagnostic::error(
                "`_` in a thread-per-element launch",
                *span,
                "every dimension needs an index",
            )
            .with_help("name every index, or write `launch blocks over ...` for a block per row"),
            BlocksWithoutHole { span } => Diagnostic::error(
                "`launch blocks over` needs `_` for its inner dimensions",
                *span,
                "no `_` at the end",
            )
            .with_help(
                "name the outer indices and mark the dimensions the block's threads cover with `_`, e.g. `launch blocks over y[row, _]`",
            ),
            IndexShadowsArgument { name, arg, span } => Diagnostic::error(
                format!("index `{name}` shadows the argument `{name}`"),
                *span,
                "shadows an argument",
            )
            .with_related(*arg, "argument declared here")
            .with_help("give the index another name"),
            IndexShadowsSymbol { name, span } => Diagnostic::error(
                format!("index `{name}` shadows the symbol `{name}`"),
                *span,
                "shadows a symbol",
            )
            .with_help("indices are usually lower case, symbols upper case"),
        };
        d.with_code(self.code())
    }
}

impl From<CheckError> for Diagnostic {
    fn from(e: CheckError) -> Self {
        e.to_diagnostic()
    }
}
