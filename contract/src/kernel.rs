//! A kernel's contract in its static form: what the Rust back end writes into generated
//! stubs as a `static KernelContract`, and what the runtime's one checker interprets.
//! Everything is `Copy` and `'static`, so a contract costs nothing at load.

use crate::DType;
use crate::expr::{BinOp, Env, EvalError, ExprView, Node};

/// An integer expression over symbols and integer params.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expr {
    Const(i64),
    /// Index into [`KernelContract::symbols`].
    Sym(usize),
    /// Index into [`KernelContract::params`]; only integer params.
    Param(usize),
    Neg(&'static Expr),
    Not(&'static Expr),
    Bin(BinOp, &'static Expr, &'static Expr),
}

impl Expr {
    /// Evaluates with checked arithmetic, by [`crate::eval`]: symbols by index into
    /// `symbols`, params into `params` (an integer param's value; a float is
    /// [`EvalError::NotInteger`]).
    pub fn eval(&self, symbols: &[i64], params: &[Scalar]) -> Result<i64, EvalError> {
        crate::eval(self, &Values { symbols, params })
    }

    /// [`Expr::eval`], with the largest magnitude it computes on the way
    /// ([`crate::eval_peak`]).
    pub fn eval_peak(&self, symbols: &[i64], params: &[Scalar]) -> Result<(i64, u64), EvalError> {
        crate::eval_peak(self, &Values { symbols, params })
    }

    /// Symbols and params it mentions, each once, in first-use order.
    pub fn mentions(&self, syms: &mut Vec<usize>, params: &mut Vec<usize>) {
        match *self {
            Expr::Const(_) => {}
            Expr::Sym(i) if !syms.contains(&i) => syms.push(i),
            Expr::Param(i) if !params.contains(&i) => params.push(i),
            Expr::Sym(_) | Expr::Param(_) => {}
            Expr::Neg(a) | Expr::Not(a) => a.mentions(syms, params),
            Expr::Bin(_, a, b) => {
                a.mentions(syms, params);
                b.mentions(syms, params);
            }
        }
    }

    /// Whether a param appears in it: such an expression has no value before a launch.
    pub fn mentions_param(&self) -> bool {
        let mut params = Vec::new();
        self.mentions(&mut Vec::new(), &mut params);
        !params.is_empty()
    }
}

impl ExprView for Expr {
    fn node(&self) -> Node<'_, Expr> {
        match *self {
            Expr::Const(v) => Node::Const(v),
            Expr::Sym(i) => Node::Sym(i),
            Expr::Param(i) => Node::Param(i),
            Expr::Neg(a) => Node::Neg(a),
            Expr::Not(a) => Node::Not(a),
            Expr::Bin(op, a, b) => Node::Bin(op, a, b),
        }
    }
}

/// A launch's symbol values and params, as an [`Env`].
struct Values<'a> {
    symbols: &'a [i64],
    params: &'a [Scalar],
}

impl Env for Values<'_> {
    type Error = EvalError;
    fn symbol(&self, i: usize) -> Result<i64, EvalError> {
        Ok(self.symbols[i])
    }
    fn param(&self, i: usize) -> Result<i64, EvalError> {
        self.params[i].as_i64().ok_or(EvalError::NotInteger(i))
    }
}

/// A scalar param's value at launch.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scalar {
    F32(f32),
    F64(f64),
    I32(i32),
    U32(u32),
    I64(i64),
    U64(u64),
}

impl Scalar {
    pub fn dtype(self) -> DType {
        match self {
            Scalar::F32(_) => DType::F32,
            Scalar::F64(_) => DType::F64,
            Scalar::I32(_) => DType::I32,
            Scalar::U32(_) => DType::U32,
            Scalar::I64(_) => DType::I64,
            Scalar::U64(_) => DType::U64,
        }
    }

    /// The value as an integer, for constraints; `None` for floats and u64 past i64.
    pub fn as_i64(self) -> Option<i64> {
        match self {
            Scalar::I32(v) => Some(v.into()),
            Scalar::U32(v) => Some(v.into()),
            Scalar::I64(v) => Some(v),
            Scalar::U64(v) => i64::try_from(v).ok(),
            Scalar::F32(_) | Scalar::F64(_) => None,
        }
    }
}

impl std::fmt::Display for Scalar {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Scalar::F32(v) => write!(f, "{v}"),
            Scalar::F64(v) => write!(f, "{v}"),
            Scalar::I32(v) => write!(f, "{v}"),
            Scalar::U32(v) => write!(f, "{v}"),
            Scalar::I64(v) => write!(f, "{v}"),
            Scalar::U64(v) => write!(f, "{v}"),
        }
    }
}

/// Where a symbol takes its value at launch: a dimension of an input, or of an output when
/// no input carries the symbol bare.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Binding {
    /// Index into [`KernelContract::args`].
    pub arg: usize,
    /// Logical dimension of that argument.
    pub dim: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Symbol {
    pub name: &'static str,
    pub bound_by: Binding,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    In,
    Out,
    InOut,
    /// The logical `[K, N, G]` shape of a quantized argument: it binds and is checked like
    /// a tensor's shape, but has no memory and is never passed to the kernel. Its buffers
    /// follow it as arguments of their own.
    Logical,
}

impl Role {
    pub fn writes(self) -> bool {
        matches!(self, Role::Out | Role::InOut)
    }
}

/// One logical dimension of a tensor argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Extent {
    /// The extent as written in the spec (`D`, `S + 1`, `ceil(K / G)`).
    pub text: &'static str,
    pub expr: Expr,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TensorArg {
    pub name: &'static str,
    pub role: Role,
    pub dtype: DType,
    /// Logical dimensions, in the order the body indexes them.
    pub dims: &'static [Extent],
    /// Physical order: `stored[p]` is the logical dimension held at physical position `p`.
    /// The tensor a caller passes has its shape in physical order. Identity when the spec
    /// has no `stored`.
    pub stored: &'static [usize],
    /// `strided`: any strides are accepted; otherwise contiguous in physical order.
    pub strided: bool,
    /// `early`: no kernel ahead of this one in its stream or graph writes it (weights, a
    /// step's block tables, the cache's earlier pages), so the kernel may read it before it
    /// waits for the grids ahead (`ima_wait_for_inputs()`, docs/programmatic-launch.md).
    /// A kernel with such an argument may start before the kernel ahead of it finishes.
    pub early: bool,
    /// Required alignment of the data pointer, in bytes.
    pub align: usize,
    /// What the entries of an integer argument may hold (`values(...)`, an act-order
    /// `g_idx`'s groups). The kernel checks each entry it reads, in every mode.
    pub values: Option<ValueContract>,
    /// `tma(ROWS, COLS)`: the kernel also receives a TMA tensor map of the argument, which
    /// the runtime encodes at launch from the checked view (docs/tensor-cores.md).
    pub tma: Option<TmaBox>,
}

/// The box of an argument's TMA tensor map: `rows` along its next-to-last logical
/// dimension by `cols` along its last (one along every other), laid out in shared memory
/// as `layout` says, zeros outside the tensor. A plain argument's box is 128-byte
/// swizzled, and its `cols` elements make 128 bytes.
///
/// A quantized argument's `tma(ROWS, COLS)` gives each of its buffers a box: qweight's is
/// `ROWS / 8` packed rows by COLS words, swizzled, where COLS is 32, and where it is wider
/// plain boxes of `plain_box_words(COLS)` words side by side; its scales' and zeros' are
/// `Groups` boxes, whose `rows` counts rows of K: the box holds their `rows / G` groups, by
/// `cols` entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TmaBox {
    pub rows: u32,
    pub cols: u32,
    pub layout: TmaLayout,
}

/// How a TMA box lands in shared memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TmaLayout {
    /// Rows of 128 bytes, each row's 16-byte chunks XOR-ed with its index modulo 8: what
    /// warpgroup MMA's shared-memory operands take, and what lets a quarter warp read 16
    /// bytes of each of 8 rows without bank conflicts.
    Swizzled,
    /// Row after row as in memory: a GPTQ argument's words wider than 32, in boxes an odd
    /// multiple of 16 words wide side by side (dsl/src/abi.rs, `plain_box_words`), so that
    /// a warp reading 4 consecutive rows spreads them over all the banks; unswizzled, since a ring
    /// of one box of 192 words a stage streamed at 3.90 TB/s, where gptq_gemm_wg's idle
    /// pipelines of six swizzled boxes of 32 streamed at about 3.2 (bench/RESULTS.md).
    Plain,
    /// A quantized argument's per-group buffer (scales, qzeros): `rows / G` rows, where G
    /// divides `rows`, plain.
    Groups,
}

/// A value contract: every entry `v` the kernel reads has `lo <= v < hi`, or is the
/// sentinel; with `ascending`, the entries are non-decreasing along the last dimension,
/// the first is `lo` and the last `hi - 1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ValueContract {
    /// As the spec writes it inside `values(...)`: `0 .. NB, or -1`.
    pub text: &'static str,
    /// Inclusive.
    pub lo: Extent,
    /// Exclusive.
    pub hi: Extent,
    pub sentinel: Option<i64>,
    pub ascending: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Param {
    pub name: &'static str,
    pub dtype: DType,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Constraint {
    /// As written in the spec, e.g. `D % 8 == 0`.
    pub text: &'static str,
    pub expr: Expr,
}

/// What to do when the launch domain has no elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EmptyPolicy {
    /// Return `Launched::Skipped` without launching.
    Skip,
    /// Refuse with `Violation::Empty`.
    Refuse,
}

/// How the grid covers the work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Launch {
    /// One thread per element of `args[arg]`'s logical domain, grid-stride.
    Threads { arg: usize },
    /// One block per tuple of the first `outer` logical dimensions of `args[arg]`,
    /// block-stride; the block's threads cover the inner dimensions themselves.
    Blocks { arg: usize, outer: usize },
    /// A raw grid: one to three extents over symbols and params, (x, y, z), whose blocks
    /// run in waves or, as `resident` says, all at once; in thread-block clusters of the
    /// shape `cluster` (x, y, z) where it is given, each extent of the grid a multiple of
    /// the cluster's.
    Grid {
        dims: &'static [Expr],
        resident: Resident,
        cluster: Option<[u32; 3]>,
    },
}

impl Launch {
    /// The shape of the clusters the blocks run in (`cluster(...)`), if any.
    pub fn cluster(&self) -> Option<[u32; 3]> {
        match self {
            Launch::Grid { cluster, .. } => *cluster,
            Launch::Threads { .. } | Launch::Blocks { .. } => None,
        }
    }
}

/// Whether a raw grid's blocks all run at once. Where they do, the body's blocks may wait
/// for each other: the runtime launches the grid cooperatively.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resident {
    /// Blocks run as the device makes room for them (a plain launch).
    No,
    /// `launch grid(...) block(...) resident`: every block at once; a grid the device
    /// cannot hold at once is refused.
    Whole,
    /// `launch persistent(MAX) block(...)`: a one-dimensional grid of MAX blocks, or of as
    /// many as the device holds at once where that is fewer, every one at once: a
    /// persistent kernel, whose body shares its work out by `gridDim.x`.
    AtMost,
}

/// `shared tile: f32[BLOCK, D]`: a dynamic shared-memory array. Arrays are laid out in
/// declaration order, each starting at a multiple of its `align` bytes; the kernel
/// computes the same offsets from the symbols.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SharedArray {
    pub name: &'static str,
    pub dtype: DType,
    pub dims: &'static [Extent],
    /// Alignment of the array's start in bytes: [`SHARED_ALIGN`], or the spec's larger
    /// `align(N)` (1024 for the 128-byte-swizzled tiles of TMA and wgmma).
    pub align: usize,
}

/// Alignment of each shared-memory array's start, in bytes (a 16-byte vector load's),
/// unless the spec asks for more.
pub const SHARED_ALIGN: usize = 16;

/// The most dimensions an argument or a shared array may have: a checked-mode record
/// holds this many indices and extents (codegen/include/ima.cuh's `ImaRecord`, whose
/// layout runtime/src/checked.rs's test holds to this, and `ImaPending`, whose
/// `ima_note` static_asserts it), so a violation of a higher-ranked access would write
/// past them.
pub const MAX_RANK: usize = 8;

/// Everything the runtime needs to check and launch one kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelContract {
    pub name: &'static str,
    /// `attn_scores(q: f16[B,H,S,D], k: f16[B,H,T,D], o: f32[B,H,S,T], scale: f32)`.
    pub signature: &'static str,
    /// `specs/attn.ima:4`, where the kernel is declared.
    pub location: &'static str,
    pub symbols: &'static [Symbol],
    pub args: &'static [TensorArg],
    pub params: &'static [Param],
    pub constraints: &'static [Constraint],
    pub shared: &'static [SharedArray],
    pub launch: Launch,
    pub empty: EmptyPolicy,
    /// Threads per block (x, y, z); their product is the entry points' `__launch_bounds__`.
    pub block: [u32; 3],
    /// The spec left the block's size open (a `launch over` of threads without `threads N`
    /// or shared arrays): the runtime's `Kernel` picks it at load with the occupancy API,
    /// at most `block[0]`; its `check` plans with `block` itself.
    pub block_from_occupancy: bool,
    /// Entry point with 32-bit indices.
    pub entry_i32: &'static str,
    /// Entry point with 64-bit indices.
    pub entry_i64: &'static str,
}

impl KernelContract {
    /// The kernel waits for the grids ahead of it in its body (`ima_wait_for_inputs()`),
    /// reading only its `early` arguments before: one that has any. Only such a kernel may
    /// start before the kernel ahead of it has finished (docs/programmatic-launch.md).
    pub fn starts_early(&self) -> bool {
        self.args.iter().any(|a| a.early)
    }
}
