//! The checked kernel: every name resolved, every symbol bound, constants folded.
//! Back ends (CUDA C, Rust stubs, `imac explain`) read only this.

pub use crate::ast::{Resident, Role};
pub use ima_contract::owned::{Constraint, Expr, Extent};
pub use ima_contract::{BinOp, DType};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Module {
    /// The spec file, as named on the command line.
    pub file: String,
    /// Named constants (`const G = 128`), in declaration order; bodies may use them.
    pub consts: Vec<(String, i64)>,
    pub kernels: Vec<Kernel>,
}

impl Module {
    /// Its kernels, or the one named `kernel` (`--kernel K` of a command); `Err` where it
    /// has none of that name, naming those it has, or none at all.
    pub fn kernels_named(&self, kernel: Option<&str>) -> Result<Vec<&Kernel>, String> {
        if self.kernels.is_empty() {
            return Err(format!("{} declares no kernel", self.file));
        }
        let found: Vec<&Kernel> = (self.kernels.iter())
            .filter(|k| kernel.is_none_or(|n| k.name == n))
            .collect();
        match (kernel, found.is_empty()) {
            (Some(name), true) => {
                let names: Vec<&str> = self.kernels.iter().map(|k| k.name.as_str()).collect();
                Err(format!(
                    "{} has no kernel `{name}`; its kernels: {}",
                    self.file,
                    names.join(", ")
                ))
            }
            _ => Ok(found),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kernel {
    pub name: String,
    pub docs: Vec<String>,
    /// 1-based line of the kernel's name.
    pub line: usize,
    pub symbols: Vec<Symbol>,
    pub args: Vec<TensorArg>,
    pub params: Vec<Param>,
    pub constraints: Vec<Constraint>,
    pub shared: Vec<SharedArray>,
    pub empty: EmptyPolicy,
    pub launch: Launch,
    pub body: Body,
    /// Threads per block (x, y, z).
    pub block: [u32; 3],
    /// The spec left the block's size open: a `launch over` of threads, without `threads
    /// N` or shared arrays. The runtime picks it at load with the occupancy API, at most
    /// `block[0]` (the entry points' `__launch_bounds__`).
    pub block_from_occupancy: bool,
    /// Blocks each SM must hold at once: `__launch_bounds__`' second argument, which caps
    /// the registers per thread. 1 unless the spec says `min_blocks N`.
    pub min_blocks: u32,
}

impl Kernel {
    pub fn threads_per_block(&self) -> u32 {
        self.block.iter().product()
    }

    /// It has an `early` argument: its body waits for the grids ahead of it
    /// (`ima_wait_for_inputs()`) and may read only those before, and it may start before the
    /// kernel ahead of it has finished (docs/programmatic-launch.md).
    pub fn starts_early(&self) -> bool {
        self.args.iter().any(|a| a.early)
    }

    /// `attn_scores(q: f16[B,H,S,D], k: f16[B,H,T,D], o: f32[B,H,S,T], scale: f32)`: how
    /// messages and docs name a kernel.
    pub fn signature(&self) -> String {
        let args = self.args.iter().map(|a| {
            let dims: Vec<&str> = a.dims.iter().map(|d| d.text.as_str()).collect();
            let dtype = match &a.quant {
                Some(q) if q.format == QuantFormat::Int8 => "q8",
                Some(_) => "q4",
                None => a.dtype.name(),
            };
            format!("{}: {dtype}[{}]", a.name, dims.join(","))
        });
        let params = self
            .params
            .iter()
            .map(|p| format!("{}: {}", p.name, p.dtype.name()));
        format!(
            "{}({})",
            self.name,
            args.chain(params).collect::<Vec<_>>().join(", ")
        )
    }
}

pub use crate::ast::EmptyPolicy;

/// `shared tile: f32[BLOCK, D]`: a dynamic shared-memory array.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharedArray {
    pub name: String,
    pub docs: Vec<String>,
    pub dtype: DType,
    pub dims: Vec<Extent>,
    /// Alignment of its start in bytes: 16, or the spec's `align(N)`.
    pub align: u64,
}

/// A symbol such as `D`, with the argument dimension its value is read from at launch: an
/// input's, a quantized argument's group (dim 2), or, where no input carries it, an output's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Symbol {
    pub name: String,
    pub arg: usize,
    /// Logical dimension of `arg`.
    pub dim: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorArg {
    pub name: String,
    pub docs: Vec<String>,
    pub role: Role,
    pub dtype: DType,
    /// Logical dimensions, in the order the body indexes them.
    pub dims: Vec<Extent>,
    /// `stored[p]` is the logical dimension at physical position `p`.
    pub stored: Vec<usize>,
    pub strided: bool,
    /// `early`: no kernel ahead of this one writes it; the body may read it before it waits
    /// for the grids ahead (`ima_wait_for_inputs()`).
    pub early: bool,
    /// Alignment of the data pointer in bytes.
    pub align: u64,
    /// For a quantized argument (`q4[K, N] gptq(...)`): its format. `dims` are then the
    /// logical `[K, N]`, `dtype` is the scales' type, and the data lives in the buffers of
    /// [`Quant::buffers`].
    pub quant: Option<Quant>,
    /// `values(...)`: what the entries of an integer argument may hold.
    pub values: Option<Values>,
    /// `tma(ROWS, COLS)`: the box of the TMA tensor map the kernel also receives.
    pub tma: Option<ima_contract::TmaBox>,
}

/// A value contract: every entry `v` read by the kernel has `lo <= v < hi` or is the
/// sentinel; with `ascending`, entries are also non-decreasing along the last dimension,
/// the first is `lo` and the last `hi - 1`. The contract's own type: the IR holds what
/// the contract is built from.
pub use ima_contract::owned::ValueContract as Values;

/// A quantized weight's storage, as declared: `gptq(group = 128, zeros = plain)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quant {
    pub format: QuantFormat,
    /// Rows of K per group: a constant, a symbol, or K itself.
    pub group: Extent,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QuantFormat {
    /// 4-bit, packed along K (8 per i32 word), zeros packed along N.
    Gptq { zeros: Zeros, g_idx: bool },
    /// 4-bit, packed along N with the interleave `[0, 2, 4, 6, 1, 3, 5, 7]`; zeros likewise,
    /// plain.
    Awq,
    /// 8-bit signed, one per i8, symmetric.
    Int8,
}

/// How GPTQ stores its zero points.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Zeros {
    /// Classic GPTQ: stored as zero - 1 (mod 16).
    MinusOne,
    /// Stored as they are.
    Plain,
    /// Symmetric: no zeros buffer; the zero is 8.
    Symmetric,
}

/// One real buffer behind a quantized argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuantBuffer {
    /// `qweight`, `qzeros`, `scales` or `g_idx`.
    pub part: &'static str,
    pub dtype: DType,
    pub dims: Vec<Extent>,
    /// `g_idx` holds group numbers, `0 .. ceil(K / G)`.
    pub values: Option<Values>,
}

impl Quant {
    /// The buffers a quantized `[K, N]` argument expands into, with their padded shapes.
    /// `k` and `n` are the argument's logical extents, `scales` the scales' type.
    pub fn buffers(&self, k: &Extent, n: &Extent, scales: DType) -> Vec<QuantBuffer> {
        let ceil = |a: &Extent, b: &Extent| Extent {
            text: format!("ceil({} / {})", paren(&a.text), paren(&b.text)),
            expr: Expr::Bin(
                BinOp::CeilDiv,
                Box::new(a.expr.clone()),
                Box::new(b.expr.clone()),
            ),
        };
        let eight = Extent {
            text: "8".into(),
            expr: Expr::Const(8),
        };
        let groups = ceil(k, &self.group);
        let packed_n = ceil(n, &eight);
        let buffer = |part, dtype, dims| QuantBuffer {
            part,
            dtype,
            dims,
            values: None,
        };
        let mut out = Vec::new();
        match self.format {
            QuantFormat::Gptq { zeros, g_idx } => {
                out.push(buffer(
                    "qweight",
                    DType::I32,
                    vec![ceil(k, &eight), n.clone()],
                ));
                if zeros != Zeros::Symmetric {
                    out.push(buffer("qzeros", DType::I32, vec![groups.clone(), packed_n]));
                }
                out.push(buffer("scales", scales, vec![groups.clone(), n.clone()]));
                if g_idx {
                    out.push(QuantBuffer {
                        values: Some(Values::below(groups)),
                        ..buffer("g_idx", DType::I32, vec![k.clone()])
                    });
                }
            }
            QuantFormat::Awq => {
                out.push(buffer(
                    "qweight",
                    DType::I32,
                    vec![k.clone(), packed_n.clone()],
                ));
                out.push(buffer("qzeros", DType::I32, vec![groups.clone(), packed_n]));
                out.push(buffer("scales", scales, vec![groups, n.clone()]));
            }
            QuantFormat::Int8 => {
                out.push(buffer("qweight", DType::I8, vec![k.clone(), n.clone()]));
                out.push(buffer("scales", scales, vec![groups, n.clone()]));
            }
        }
        out
    }
}

/// Parenthesises a compound extent inside a larger one: `ceil((S + 1) / 8)`.
pub fn paren(text: &str) -> String {
    if text.chars().all(|c| c.is_alphanumeric() || c == '_') {
        text.to_string()
    } else {
        format!("({text})")
    }
}

impl TensorArg {
    pub fn rank(&self) -> usize {
        self.dims.len()
    }

    /// The dimensions in physical order, as the caller's tensor holds them.
    pub fn physical_dims(&self) -> impl Iterator<Item = &Extent> {
        self.stored.iter().map(|&l| &self.dims[l])
    }

    pub fn is_permuted(&self) -> bool {
        self.stored.iter().enumerate().any(|(p, &l)| p != l)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Param {
    pub name: String,
    pub docs: Vec<String>,
    pub dtype: DType,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Launch {
    /// One thread per element of `args[arg]`'s logical domain; `indices` names each
    /// logical dimension's index in the body.
    Threads { arg: usize, indices: Vec<String> },
    /// One block per tuple of `args[arg]`'s first `indices.len()` logical dimensions; the
    /// block's threads stride over the remaining (inner) dimensions themselves.
    Blocks { arg: usize, indices: Vec<String> },
    /// A raw grid, sized by expressions over symbols; the body indexes by hand. Where
    /// `resident` says so, every block runs at once (a cooperative launch), so that blocks
    /// may wait for each other. Where `cluster` is given, the blocks run in thread-block
    /// clusters of that shape (x, y, z), each extent of the grid a multiple of the
    /// cluster's.
    Grid {
        grid: Vec<Expr>,
        resident: Resident,
        cluster: Option<[u32; 3]>,
    },
}

impl Launch {
    /// The shape of the clusters a raw grid's blocks run in (`cluster(...)`), if any.
    pub fn cluster(&self) -> Option<[u32; 3]> {
        match self {
            Launch::Grid { cluster, .. } => *cluster,
            Launch::Threads { .. } | Launch::Blocks { .. } => None,
        }
    }

    /// The argument whose domain the launch covers, for `Threads` and `Blocks`.
    pub fn domain_arg(&self) -> Option<usize> {
        match self {
            Launch::Threads { arg, .. } | Launch::Blocks { arg, .. } => Some(*arg),
            Launch::Grid { .. } => None,
        }
    }

    /// Index names the body sees.
    pub fn indices(&self) -> &[String] {
        match self {
            Launch::Threads { indices, .. } | Launch::Blocks { indices, .. } => indices,
            Launch::Grid { .. } => &[],
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Body {
    pub text: String,
    /// 1-based line of the body's first character, for `#line`.
    pub line: usize,
}

impl Body {
    /// 1-based line of the body's closing brace, which its last line ends on.
    pub fn brace_line(&self) -> usize {
        self.line + self.text.matches('\n').count()
    }
}
