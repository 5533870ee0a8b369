//! IR to CUDA C: one accessor type per tensor argument, the body as a device function, the
//! guarded grid-stride loop that decodes the launch indices, and four entry points per
//! kernel: 32-bit and 64-bit indices, each in a release and a checked form.

use crate::c_expr::{c_expr, c_literal};
use askama::Template;
use ima_contract::EntryParam;
use ima_dsl::abi::{ArgKind, ContractArg, contract_args, contract_index, kernel_contract, owned};
use ima_dsl::facts::{Knowledge, Var};
use ima_dsl::ir::{self, DType, Role};
use quant::{QuantCu, quant};

mod names;
mod quant;

pub use ima_contract::{ENTRY_POINTS, EntryPoint};
pub use names::{DERIVED_PREFIXES, KERNEL_NAMESPACE_PREFIX};
use names::{accessor_type, kernel_namespace, stride_param, tensor_map_param};

/// `e` as a value of the index type `index` (`I`, `int`, `long long`) where it initialises
/// one in braces: converted explicitly when it holds a literal past 32 bits or a param of
/// 64 bits or unsigned (which c_expr computes in `long long`), either making it a `long
/// long` that braces refuse to narrow into a 32-bit entry point's `int` (the runtime picks
/// that entry point only where every value the kernel computes fits it, but it must
/// compile).
fn index_expr(k: &ir::Kernel, e: &ir::Expr, index: &str) -> String {
    let wide_param = |p: usize| crate::c_expr::long_long_param(k.params[p].dtype);
    fn wide(e: &ir::Expr, wide_param: &dyn Fn(usize) -> bool) -> bool {
        match e {
            ir::Expr::Const(v) => i32::try_from(*v).is_err(),
            ir::Expr::Sym(_) => false,
            ir::Expr::Param(p) => wide_param(*p),
            ir::Expr::Neg(a) | ir::Expr::Not(a) => wide(a, wide_param),
            ir::Expr::Bin(_, a, b) => wide(a, wide_param) || wide(b, wide_param),
        }
    }
    if wide(e, &wide_param) {
        format!("static_cast<{index}>({})", c_expr(k, e))
    } else {
        c_expr(k, e)
    }
}

/// The C type that holds one element.
pub fn c_type(d: DType) -> &'static str {
    match d {
        DType::F16 => "__half",
        DType::BF16 => "__nv_bfloat16",
        DType::F32 => "float",
        DType::F64 => "double",
        DType::I8 => "signed char",
        DType::U8 => "unsigned char",
        DType::I16 => "short",
        DType::U16 => "unsigned short",
        DType::I32 => "int",
        DType::U32 => "unsigned int",
        DType::I64 => "long long",
        DType::U64 => "unsigned long long",
        DType::E4M3 => "__nv_fp8_e4m3",
        DType::E5M2 => "__nv_fp8_e5m2",
    }
}

fn header(d: DType) -> Option<&'static str> {
    match d {
        DType::F16 => Some("cuda_fp16.h"),
        DType::BF16 => Some("cuda_bf16.h"),
        DType::E4M3 | DType::E5M2 => Some("cuda_fp8.h"),
        _ => None,
    }
}

/// The header every generated module embeds once, after its CUDA includes: the violation
/// record, the checks and reports, and the helpers with no template variables
/// (`codegen/include/ima.cuh`, compiled on the host by `codegen/tests/ima_cuh.rs`).
pub const IMA_CUH: &str = include_str!("../include/ima.cuh");

/// The line of a hand-written CUDA file (bench/twins/gemm.cu) that stands for ima.cuh, after
/// the file's CUDA includes: NVRTC compiles one source, so the header is spliced in there.
pub const IMA_CUH_SPLICE: &str = "// <ima.cuh>\n";

/// `source` with ima.cuh in place of its [`IMA_CUH_SPLICE`] line, or as it is without one.
pub fn splice_ima_cuh(source: &str) -> String {
    source.replacen(IMA_CUH_SPLICE, IMA_CUH, 1)
}

#[derive(Template)]
#[template(path = "module.cu", escape = "none")]
struct ModuleCu {
    version: &'static str,
    /// The spec's path as the text of a C string literal, for the bodies' `#line`s (the
    /// first line's comment holds it too: escaped, it has no line break).
    spec: String,
    includes: Vec<&'static str>,
    ima_cuh: &'static str,
    consts: Vec<ConstCu>,
    kernels: Vec<KernelCu>,
}

struct ConstCu {
    name: String,
    c_type: &'static str,
    /// A C literal (c_expr.rs: a negative one bracketed, i64::MIN as a sum).
    value: String,
}

struct KernelCu {
    /// The namespace of its declarations: [`KERNEL_NAMESPACE_PREFIX`] and its name.
    namespace: String,
    signature: String,
    docs: Vec<String>,
    args: Vec<ArgCu>,
    shared: Vec<SharedCu>,
    launch: LaunchCu,
    body_params: String,
    body_line: usize,
    /// The body as written, but a line that is [`RESUME_LINE`] itself, which takes a space
    /// after it so that `resume_lines` leaves it alone.
    body: String,
    /// The macros the body `#define`s, each with the macro ([`names::had_macro`]) that
    /// says it was defined before the body: after the body, one that was not is undefined,
    /// since it would reach the next kernel's declarations (a body's `#define D 8` made
    /// another's extent `const I 8`), and one that was (ima.cuh's INFINITY, under the
    /// body's `#ifndef INFINITY`) stays. (NVRTC knows no `#pragma push_macro`.)
    body_macros: Vec<(String, String)>,
    /// The spec's line of the body's closing brace, where the generated function's brace
    /// is said to stand: an error at the end of the body's last statement (a missing `;`)
    /// is then reported at the spec's line, not the generated file's. (On the body's last
    /// line itself, a preprocessor directive there, or continued into it, would take it.)
    brace_line: usize,
    run_params: String,
    domain: String,
    /// Launch indices a loop decodes (0 for a raw grid), and their extents, innermost first.
    rank: usize,
    extents_inner_first: String,
    body_args: String,
    threads: u32,
    /// The block's extents, or their bounds when the runtime picks the size.
    block: [u32; 3],
    min_blocks: u32,
    /// What the `where` clauses say divides the dimensions, or fixes them, as C conditions.
    assumptions: Vec<String>,
    report_extents: Vec<ReportExtents>,
    entries: Vec<Entry>,
    /// An argument is read through TMA, or the blocks run in clusters: the kernel exists
    /// only in PTX for sm_90a.
    sm90a: bool,
    /// What needs sm_90a, for the generated comment.
    sm90a_use: &'static str,
    /// `cluster(x, y, z)`: the entry points' `__cluster_dims__`, and every shared array's
    /// `in_block(rank)`.
    cluster: Option<[u32; 3]>,
    /// The largest alignment of its shared arrays, in bytes (16 unless one asks for more).
    smem_align: u64,
    /// [`ir::Kernel::starts_early`]: every thread waits for the grids ahead before it exits.
    starts_early: bool,
}

enum ArgCu {
    Plain(PlainCu),
    Quant(QuantCu),
}

/// The accessor of a plain tensor argument.
struct PlainCu {
    docs: Vec<String>,
    role: &'static str,
    name: String,
    /// Its accessor type.
    type_name: String,
    /// Contract index, for checked-mode reports.
    arg: usize,
    write: u8,
    rank: usize,
    dtype: &'static str,
    dims: String,
    layout_note: String,
    pointee: String,
    /// `restrict`'s qualifier of its pointer.
    restrict: &'static str,
    /// `recorder`'s type of its recorder.
    recorder: &'static str,
    stride_fields: String,
    extent_fields: String,
    element_ref: String,
    /// What a refused access yields.
    refused: String,
    index_params: String,
    indices: String,
    extents: String,
    offset: String,
    c_type: &'static str,
    /// Elements per 16-byte vector access, or 0 where the spec does not allow them.
    vec: u64,
    /// The value contract its entries are checked against.
    values: Option<Box<ValuesCu>>,
    /// The stride of the last logical dimension, in elements: `1` where it is innermost.
    last_stride: String,
    /// `tma(ROWS, COLS)`: its tensor map's box, and its indices as TMA coordinates.
    tma: Option<Box<TmaCu>>,
}

/// What a `tma` argument's `tma_load` needs.
struct TmaCu {
    rows: u32,
    cols: u32,
    /// The indices innermost first, as TMA coordinates (`int(i1), int(i0)`).
    coords_inner_first: String,
}

/// A value contract, as the accessor of its argument checks it.
struct ValuesCu {
    text: String,
    sentinel: Option<i64>,
    /// The sentinel as a C literal: `-1`, `-4294967296LL`, `(-9223372036854775807 - 1)`.
    sentinel_text: String,
    ascending: bool,
}

/// How `ima_run` covers the domain.
enum LaunchCu {
    /// Every thread runs the body once; the body indexes by hand.
    Grid,
    /// A loop over the domain, starting at `first` and advancing by `step`.
    Loop {
        first: &'static str,
        step: &'static str,
        /// `__syncthreads()` after each iteration, so shared memory can be reused.
        sync: bool,
    },
}

struct SharedCu {
    docs: Vec<String>,
    name: String,
    /// Its accessor type.
    type_name: String,
    /// `-1 - n` for the n-th shared array, in checked-mode reports.
    arg: i64,
    rank: usize,
    dtype: &'static str,
    c_type: &'static str,
    dims: String,
    /// The extents' fields, `d0, d1, d2`.
    dim_list: String,
    dim_values: String,
    index_params: String,
    indices: String,
    offset: String,
    bytes: String,
    /// Elements per 16-byte vector (`at8`), or 0 for an element type of 16 bytes.
    vec: u64,
    /// For `tile(...)`: the indices before the last two (`i0, i1`), as parameters after
    /// the tile's shape (`, I i0, I i1`), and with zeros for the last two (`i0, i1, 0, 0`).
    lead_indices: String,
    lead_params: String,
    lead_indices_then_zeros: String,
    /// The offset of the tile at the leading indices: the array's offset with the last
    /// two indices 0.
    tile_offset: String,
    /// Aligned to 1024 bytes with constant last two extents (rows, columns): it has
    /// `tma_tile` of that shape.
    tma_tile: Option<(i64, i64)>,
    /// Alignment of the next array's start (its own for the last), which the carve
    /// rounds its end up to.
    next_align: u64,
}

struct Entry {
    /// Its name (`rms_norm_i32`).
    name: String,
    index_type: &'static str,
    checked: bool,
    /// Whether it takes the launch's record: its accessors then record violations through
    /// the thread's recorder (ima.cuh's ImaRec: its ImaPending in a checked entry point, a
    /// count and an ImaPending in a release one), which it flushes into the record once
    /// the body returns.
    reports: bool,
    params: String,
    run_args: String,
    /// The entry point's tensor-map parameters, which it prefetches.
    tensor_maps: Vec<String>,
}

/// The extents of an argument that a violation can name, as C expressions over the
/// entry point's symbols: its record gets them at the flush (ima.cuh's ImaPending).
struct ReportExtents {
    /// Its contract index, or -1 - n for shared array n.
    arg: i64,
    extents: Vec<String>,
}

/// Renders the CUDA C for every kernel of a module, as the file `cu_file`.
pub fn generate(m: &ir::Module, cu_file: &str) -> String {
    let mut includes: Vec<&'static str> = m
        .kernels
        .iter()
        .flat_map(|k| {
            k.args
                .iter()
                .map(|a| a.dtype)
                .chain(k.shared.iter().map(|s| s.dtype))
        })
        .filter_map(header)
        .collect();
    // A 4-bit accessor's `dot_tile` works in f16 whatever its scales' type.
    let four_bit = m.kernels.iter().flat_map(|k| &k.args).any(|a| {
        a.quant
            .as_ref()
            .is_some_and(|q| q.format != ir::QuantFormat::Int8)
    });
    if four_bit {
        includes.push("cuda_fp16.h");
    }
    includes.sort();
    includes.dedup();
    ModuleCu {
        version: crate::VERSION,
        spec: c_string_text(&m.file),
        includes,
        // The template puts the line break after it.
        ima_cuh: IMA_CUH.trim_end(),
        consts: m
            .consts
            .iter()
            .map(|(name, value)| ConstCu {
                name: name.clone(),
                c_type: if i32::try_from(*value).is_ok() {
                    "int"
                } else {
                    "long long"
                },
                value: c_literal(*value),
            })
            .collect(),
        kernels: m.kernels.iter().map(|k| kernel(m, k)).collect(),
    }
    .render()
    .map(|text| resume_lines(&text, cu_file))
    .expect("the module template renders from plain strings")
}

/// The line module.cu writes after each body, which [`resume_lines`] makes a `#line`.
const RESUME_LINE: &str = "// ima:resume-line";

/// Bodies carry `#line` directives pointing into the spec, so that NVRTC reports errors at
/// the spec's lines; after each body, line numbers go back to the generated file's own.
fn resume_lines(text: &str, cu_file: &str) -> String {
    text.lines()
        .enumerate()
        .map(|(i, line)| {
            if line == RESUME_LINE {
                // `#line N` names the line after the directive, the (i + 2)th.
                format!("#line {} \"{}\"\n", i + 2, c_string_text(cu_file))
            } else {
                format!("{line}\n")
            }
        })
        .collect()
}

/// Refuses a spec path that the generated CUDA cannot name: NVRTC copies a `#line`'s file
/// name into the PTX's `.file` directives as it is, unescaped, where ptxas refuses a `"`
/// (a `\` or a line break, escaped in the `#line`, passes).
pub fn check_line_path(spec: &str) -> Result<(), String> {
    if spec.contains('"') {
        return Err(format!(
            "the spec's path {spec:?} holds a `\"`, which NVRTC writes into the PTX's line \
             information unescaped, where ptxas refuses it: move or rename the spec"
        ));
    }
    Ok(())
}

/// `text` as the inside of a C string literal: `\` and `"` escaped, control characters
/// in octal, so that a `#line` names a path with them (`imac compile` refuses such paths
/// for the crate's sake; `imac fuzz`, `imac waits` and `imac check --arch` take them).
fn c_string_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' | '"' => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_ascii_control() => out.push_str(&format!("\\{:03o}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

fn list<T: std::fmt::Display>(items: impl IntoIterator<Item = T>) -> String {
    items
        .into_iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn kernel(m: &ir::Module, k: &ir::Kernel) -> KernelCu {
    let index = contract_index(k);
    let args: Vec<ArgCu> = k
        .args
        .iter()
        .zip(&index)
        .map(|(a, &i)| arg(k, a, i))
        .collect();
    let symbols: Vec<&str> = k.symbols.iter().map(|s| s.name.as_str()).collect();

    // ima_run()'s parameters: accessors, symbols, params, the record. ima_body() gets the
    // accessors, symbols, params, shared arrays and launch indices; both also get
    // ima_wait_for_inputs in a kernel that starts early.
    let accessor = |name: &str| format!("const {}<I, IMA_CHECKED> {name}", accessor_type(name));
    let accessors: Vec<String> = k.args.iter().map(|a| accessor(&a.name)).collect();
    let values: Vec<String> = symbols
        .iter()
        .map(|s| format!("const I {s}"))
        .chain(
            k.params
                .iter()
                .map(|p| format!("const {} {}", c_type(p.dtype), p.name)),
        )
        .collect();
    let mut run_params = accessors.clone();
    run_params.extend(values.iter().cloned());
    run_params.push("const ImaRec<IMA_CHECKED> ima_recorder".into());
    // A kernel that starts early waits where its body says (ima.cuh's ImaWaitForInputs).
    let wait = k.starts_early().then_some("ima_wait_for_inputs");
    run_params.extend(wait.map(|w| format!("const ImaWaitForInputs<IMA_CHECKED> {w}")));
    let mut body_params = accessors;
    body_params.extend(values);
    body_params.extend(k.shared.iter().map(|a| accessor(&a.name)));
    body_params.extend(wait.map(|w| format!("const ImaWaitForInputs<IMA_CHECKED> {w}")));
    body_params.extend(k.launch.indices().iter().map(|i| format!("const I {i}")));
    let rank = k.launch.indices().len();

    let body_args: Vec<String> = k
        .args
        .iter()
        .map(|a| a.name.clone())
        .chain(symbols.iter().map(|s| s.to_string()))
        .chain(k.params.iter().map(|p| p.name.clone()))
        .chain(k.shared.iter().map(|a| a.name.clone()))
        .chain(wait.map(str::to_string))
        // The loop's decoded indices, `ima_i`, hold the innermost first.
        .chain((0..rank).rev().map(|d| format!("ima_i[{d}]")))
        .collect();

    let (launch, extents) = match &k.launch {
        ir::Launch::Grid { .. } => (LaunchCu::Grid, Vec::new()),
        ir::Launch::Threads { arg, .. } => (
            LaunchCu::Loop {
                first: "I(blockIdx.x) * I(blockDim.x) + I(threadIdx.x)",
                step: "I(gridDim.x) * I(blockDim.x)",
                sync: false,
            },
            k.args[*arg]
                .dims
                .iter()
                .map(|d| index_expr(k, &d.expr, "I"))
                .collect(),
        ),
        ir::Launch::Blocks { arg, indices } => (
            LaunchCu::Loop {
                first: "I(blockIdx.x)",
                step: "I(gridDim.x)",
                sync: !k.shared.is_empty(),
            },
            k.args[*arg].dims[..indices.len()]
                .iter()
                .map(|d| index_expr(k, &d.expr, "I"))
                .collect::<Vec<_>>(),
        ),
    };
    let domain = if extents.is_empty() {
        "1".to_string()
    } else {
        extents.join(" * ")
    };
    let extents_inner_first = extents.iter().rev().cloned().collect::<Vec<_>>().join(", ");

    let contract = contract_args(k);
    let abi = kernel_contract(m, k);
    let entries: Vec<Entry> = (ENTRY_POINTS.iter())
        .map(|&e| entry(k, &contract, &abi, e))
        .collect();
    let report_extents = report_extents(k, &index, &args);

    KernelCu {
        namespace: kernel_namespace(&k.name),
        signature: k.signature(),
        docs: comment_lines(&k.docs),
        args,
        shared: k
            .shared
            .iter()
            .enumerate()
            .map(|(i, a)| shared(k, i, a))
            .collect(),
        sm90a: abi.needs_sm90a(),
        sm90a_use: abi.sm90a_use(),
        cluster: k.launch.cluster(),
        smem_align: k.shared.iter().map(|a| a.align).max().unwrap_or(16),
        starts_early: k.starts_early(),
        launch,
        body_params: body_params.join(",\n    "),
        body_line: k.body.line,
        // A spec with CRLF lines: `resume_lines` reads the line without its `\r`.
        body: (k.body.text.split('\n'))
            .map(|l| match l.trim_end_matches('\r') == RESUME_LINE {
                true => format!("{l} "),
                false => l.to_string(),
            })
            .collect::<Vec<_>>()
            .join("\n"),
        body_macros: (ima_dsl::body_code::Directives::of(&k.body.text)
            .defined
            .into_iter())
        .map(|name| {
            let had = names::had_macro(&name);
            (name, had)
        })
        .collect(),
        brace_line: k.body.brace_line(),
        run_params: run_params.join(",\n    "),
        domain,
        rank,
        extents_inner_first,
        body_args: body_args.join(", "),
        threads: k.threads_per_block(),
        block: k.block,
        min_blocks: k.min_blocks,
        assumptions: dimension_assumptions(k),
        report_extents,
        entries,
    }
}

/// The logical extents of each argument and shared array, for the violations that name
/// them: a quantized argument's are K and N, its g_idx's K.
fn report_extents(k: &ir::Kernel, index: &[usize], accessors: &[ArgCu]) -> Vec<ReportExtents> {
    let of = |dims: &[ir::Extent]| dims.iter().map(|d| c_expr(k, &d.expr)).collect();
    let args = k
        .args
        .iter()
        .zip(index)
        .zip(accessors)
        .flat_map(|((a, &i), cu)| {
            let g_idx = match cu {
                ArgCu::Quant(q) if q.g_idx => Some(ReportExtents {
                    arg: q.g_idx_arg as i64,
                    extents: of(&a.dims[..1]),
                }),
                _ => None,
            };
            std::iter::once(ReportExtents {
                arg: i as i64,
                extents: of(&a.dims),
            })
            .chain(g_idx)
        });
    let shared = k.shared.iter().enumerate().map(|(i, a)| ReportExtents {
        arg: -1 - i as i64,
        extents: of(&a.dims),
    });
    args.chain(shared).collect()
}

/// What the `where` clauses say divides each dimension (`K % 8 == 0`), or the one value
/// they leave it (`D == 128`), as C conditions the entry points assume. The runtime checks
/// every constraint before a launch, so they hold; with the divisors the compiler folds a
/// 16-byte vector's test of its last element, which its first element's test implies when
/// the extent is a multiple of its width (gptq_gemm_i32_checked: 2,960 SASS instructions
/// instead of 3,184), and with a value it folds the dimension into every index
/// (paged_attn_rope_i32: 3,496 instead of 3,704). Bounds are left out: assuming them
/// made paged_attn_i32_checked larger (15,760 instead of 14,264).
fn dimension_assumptions(k: &ir::Kernel) -> Vec<String> {
    let constraints: Vec<&ir::Expr> = k.constraints.iter().map(|c| &c.expr).collect();
    let known = Knowledge::from_constraints(k.symbols.len(), k.params.len(), &constraints);
    k.symbols
        .iter()
        .enumerate()
        .flat_map(|(i, s)| {
            let facts = known.facts(Var::Sym(i));
            match (facts.lo, facts.hi) {
                (Some(lo), Some(hi)) if lo == hi => vec![format!("{} == {lo}", s.name)],
                _ => facts
                    .multiple_of
                    .iter()
                    .map(|m| format!("{} % {m} == 0", s.name))
                    .collect(),
            }
        })
        .collect()
}

fn shared(k: &ir::Kernel, i: usize, a: &ir::SharedArray) -> SharedCu {
    let rank = a.dims.len();
    let extents: Vec<String> = a.dims.iter().map(|d| index_expr(k, &d.expr, "I")).collect();
    let ty = c_type(a.dtype);
    let lead = rank.saturating_sub(2);
    // The tile's first element: the leading indices, then row 0 and column 0.
    let tile_index = |d: usize| {
        if d < lead {
            format!("i{d}")
        } else {
            "0".to_string()
        }
    };
    SharedCu {
        docs: comment_lines(&a.docs),
        name: a.name.clone(),
        type_name: accessor_type(&a.name),
        arg: -1 - i as i64,
        rank,
        dtype: a.dtype.name(),
        c_type: ty,
        dims: list(a.dims.iter().map(|d| &d.text)),
        dim_list: list((0..rank).map(|d| format!("d{d}"))),
        dim_values: extents.join(", "),
        index_params: list((0..rank).map(|d| format!("I i{d}"))),
        indices: list((0..rank).map(|d| format!("i{d}"))),
        offset: row_major_offset(rank, |d| format!("i{d}")),
        bytes: format!("{} * I(sizeof({ty}))", extents.join(" * ")),
        vec: if a.dtype.size() < 16 {
            16 / a.dtype.size() as u64
        } else {
            0
        },
        lead_indices: list((0..lead).map(|d| format!("i{d}"))),
        lead_params: (0..lead).map(|d| format!(", I i{d}")).collect(),
        lead_indices_then_zeros: list((0..rank).map(tile_index)),
        tile_offset: row_major_offset(rank, tile_index),
        tma_tile: match &a.dims[..] {
            [.., r, c] if a.align >= 1024 => r.expr.eval_const().zip(c.expr.eval_const()),
            _ => None,
        },
        next_align: k.shared.get(i + 1).map_or(a.align, |b| b.align),
    }
}

/// The row-major offset of a shared array's element `index(0), index(1), ...` in Horner
/// form over its extents d0, d1, ...: `(i0 * d1 + i1) * d2 + i2`.
fn row_major_offset(rank: usize, index: impl Fn(usize) -> String) -> String {
    (1..rank).fold(index(0), |acc, d| {
        let acc = if d == 1 { acc } else { format!("({acc})") };
        format!("{acc} * d{d} + {}", index(d))
    })
}

fn arg(k: &ir::Kernel, a: &ir::TensorArg, index: usize) -> ArgCu {
    match &a.quant {
        None => ArgCu::Plain(plain(k, a, index)),
        Some(q) => ArgCu::Quant(quant(a, q, index, restrict(k, a), recorder(k, a))),
    }
}

/// A kernel that starts early may touch the argument only once it has waited for the
/// grids ahead (docs/programmatic-launch.md): the argument is not `early`.
fn after_wait(k: &ir::Kernel, a: &ir::TensorArg) -> bool {
    k.starts_early() && !a.early
}

/// The type of an argument's recorder: ima.cuh's ImaRecAfterWait, whose checked accesses
/// are refused before the thread's wait, for one read [`after_wait`], else ImaRec.
fn recorder(k: &ir::Kernel, a: &ir::TensorArg) -> &'static str {
    if after_wait(k, a) {
        "ImaRecAfterWait<IMA_CHECKED>"
    } else {
        "ImaRec<IMA_CHECKED>"
    }
}

/// The qualifier of an argument's pointers, in its entry point's parameters and its
/// accessor: `__restrict__`, except on an input read [`after_wait`]. A `const
/// __restrict__` pointer lets NVVM load by `ld.global.nc`, whose contract (nothing writes
/// the memory while the grid runs) lets ptxas move the load across `griddepcontrol.wait`,
/// and it did, both ways (bench/explore/pdlpre's README): above the wait, such a load
/// would read what the grid ahead has not written yet.
fn restrict(k: &ir::Kernel, a: &ir::TensorArg) -> &'static str {
    if after_wait(k, a) && a.role == Role::In {
        ""
    } else {
        " __restrict__"
    }
}

fn plain(k: &ir::Kernel, a: &ir::TensorArg, index: usize) -> PlainCu {
    let ty = c_type(a.dtype);
    let writes = a.role != Role::In;
    let rank = a.rank();
    let layout_note = if a.is_permuted() {
        format!(", stored [{}]", list(a.physical_dims().map(|d| &d.text)))
    } else {
        String::new()
    };
    PlainCu {
        docs: comment_lines(&a.docs),
        role: match a.role {
            Role::In => "in",
            Role::Out => "out",
            Role::InOut => "inout",
        },
        name: a.name.clone(),
        type_name: accessor_type(&a.name),
        arg: index,
        write: u8::from(writes),
        rank,
        dtype: a.dtype.name(),
        dims: list(a.dims.iter().map(|d| &d.text)),
        layout_note: if a.strided {
            format!("{layout_note}, strided")
        } else {
            layout_note
        },
        pointee: if writes {
            ty.to_string()
        } else {
            format!("const {ty}")
        },
        restrict: restrict(k, a),
        recorder: recorder(k, a),
        stride_fields: list((0..rank).map(|d| format!("s{d}"))),
        extent_fields: list((0..rank).map(|d| format!("e{d}"))),
        // Inputs read by value; outputs hand out a reference.
        element_ref: if writes {
            format!("{ty}&")
        } else {
            ty.to_string()
        },
        // A read gives the zero value (`{}` also suits multi-word types such as `signed char`).
        refused: if writes {
            format!("ima_sink<{ty}>()")
        } else {
            "{}".to_string()
        },
        index_params: list((0..rank).map(|d| format!("I i{d}"))),
        indices: list((0..rank).map(|d| format!("i{d}"))),
        extents: list((0..rank).map(|d| format!("e{d}"))),
        offset: (0..rank)
            .map(|d| {
                if Some(&d) == unit_stride_dim(a).as_ref() {
                    format!("i{d}")
                } else {
                    format!("i{d} * s{d}")
                }
            })
            .collect::<Vec<_>>()
            .join(" + "),
        c_type: ty,
        vec: vector_width(a),
        values: a.values.as_ref().map(|v| {
            Box::new(ValuesCu {
                text: v.text.clone(),
                sentinel: v.sentinel,
                sentinel_text: v.sentinel.map(c_literal).unwrap_or_default(),
                ascending: v.ascending,
            })
        }),
        last_stride: if unit_stride_dim(a) == Some(rank - 1) {
            "1".into()
        } else {
            format!("s{}", rank - 1)
        },
        tma: a.tma.map(|b| {
            Box::new(TmaCu {
                rows: b.rows,
                cols: b.cols,
                coords_inner_first: list((0..rank).rev().map(|d| format!("int(i{d})"))),
            })
        }),
    }
}

/// A spec's doc lines as the text of `//` comments: one that ends in a backslash would
/// splice the next line of C into the comment, so it gets a `//` after a space.
fn comment_lines(docs: &[String]) -> Vec<String> {
    docs.iter()
        .map(|line| {
            if line.trim_end().ends_with('\\') {
                format!("{} //", line.trim_end())
            } else {
                line.clone()
            }
        })
        .collect()
}

/// The logical dimension that is innermost in memory, for a contiguous argument: the
/// checker guarantees its stride is 1 (or that it has extent 1, where the index is 0), so
/// the accessor adds its index instead of multiplying by a stride it knows.
fn unit_stride_dim(a: &ir::TensorArg) -> Option<usize> {
    if a.strided {
        None
    } else {
        a.stored.last().copied()
    }
}

/// Elements per 16-byte access along the last logical dimension, when the spec makes
/// such accesses safe: `align(16)` (which the checker proved to go with an inner extent
/// that is a multiple of the width), contiguous, and the last logical dimension also the
/// last in memory (unit stride).
fn vector_width(a: &ir::TensorArg) -> u64 {
    let last_is_innermost = a.stored.last() == Some(&(a.rank() - 1));
    if a.align >= 16 && !a.strided && last_is_innermost && a.dtype.size() < 16 {
        16 / a.dtype.size() as u64
    } else {
        0
    }
}

fn entry(
    k: &ir::Kernel,
    contract: &[ContractArg<'_>],
    abi: &owned::KernelContract,
    e: EntryPoint,
) -> Entry {
    let (index_type, checked) = (e.index_type(), e.checked);
    // The parameters in the ABI's order, defined once in ima-contract; the runtime pushes
    // a launch's values in the same order.
    let mut takes_record = false;
    let params: Vec<String> = abi
        .entry_params(checked)
        .map(|p| match p {
            EntryParam::Pointer { arg } => {
                let b = &contract[arg];
                let ty = c_type(b.dtype);
                let pointee = if b.role() == Role::In {
                    format!("const {ty}")
                } else {
                    ty.to_string()
                };
                format!("{pointee}*{} {}", restrict(k, b.ir), b.ident)
            }
            EntryParam::Stride { arg, dim } => {
                format!("{index_type} {}", stride_param(&contract[arg].ident, dim))
            }
            EntryParam::TensorMap { arg } => {
                format!(
                    "const __grid_constant__ ImaTensorMap {}",
                    tensor_map_param(&contract[arg].ident)
                )
            }
            EntryParam::Symbol(s) => format!("{index_type} {}", k.symbols[s].name),
            EntryParam::Param(p) => {
                let p = &k.params[p];
                format!("{} {}", c_type(p.dtype), p.name)
            }
            EntryParam::Record => {
                takes_record = true;
                "ImaRecord* ima_record".to_string()
            }
        })
        .collect();
    // An entry point's accessors record violations through the thread's recorder (ima.cuh's
    // ImaRec), which it flushes into `ima_record`. Every checked entry point takes the
    // record (ima_contract's entry_params); a release one where it has a test to make.
    assert!(
        takes_record || !checked,
        "{}: a checked entry point without a record",
        k.name
    );
    let record = match (takes_record, checked) {
        (true, true) => "&ima_pending",
        (true, false) => "ImaRecorder{&ima_violations, &ima_pending}",
        (false, _) => "ImaRecorder{nullptr, nullptr}",
    };
    // Each accessor from the parameters it is made of (by name), its extents and the record.
    let mut run_args = Vec::new();
    for a in &k.args {
        let mut fields = Vec::new();
        for b in contract
            .iter()
            .filter(|c| std::ptr::eq(c.ir, a) && c.kind == ArgKind::Buffer)
        {
            fields.push(b.ident.clone());
            fields.extend((0..b.dims.len()).map(|d| stride_param(&b.ident, d)));
        }
        // Logical extents (plain) or K, N, G (quantized), then the record.
        let logical: Vec<String> = match &a.quant {
            None => a
                .dims
                .iter()
                .map(|d| index_expr(k, &d.expr, index_type))
                .collect(),
            Some(q) => a
                .dims
                .iter()
                .chain([&q.group])
                .map(|d| index_expr(k, &d.expr, index_type))
                .collect(),
        };
        fields.extend(logical);
        // The tensor maps: a plain argument's, or each buffer's of a quantized one.
        for b in contract
            .iter()
            .filter(|c| std::ptr::eq(c.ir, a) && c.tma.is_some())
        {
            fields.push(format!("&{}", tensor_map_param(&b.ident)));
        }
        if let Some(v) = &a.values {
            fields.push(index_expr(k, &v.lo.expr, index_type));
            fields.push(index_expr(k, &v.hi.expr, index_type));
        }
        // An argument a kernel that starts early may touch only after its wait: a checked
        // entry point's accessor also asks the thread's flag (ima.cuh's ImaAfterWait).
        if checked && after_wait(k, a) {
            fields.push(format!("ImaAfterWait{{{record}, &ima_waiting}}"));
        } else {
            fields.push(record.to_string());
        }
        // Qualified: the entry point sees the global namespace too, where CUDA's headers
        // declare POSIX types such as `key_t` and `size_t` (an argument named `key`).
        run_args.push(format!(
            "{}::{}<{index_type}, {checked}>{{{}}}",
            kernel_namespace(&k.name),
            accessor_type(&a.name),
            fields.join(", ")
        ));
    }
    run_args.extend(k.symbols.iter().map(|s| s.name.clone()));
    run_args.extend(k.params.iter().map(|p| p.name.clone()));
    run_args.push(record.to_string());
    if k.starts_early() {
        run_args.push(if checked {
            "ImaWaitForInputs<true>{&ima_waiting}".to_string()
        } else {
            "ImaWaitForInputs<false>{nullptr}".to_string()
        });
    }
    let tensor_maps = abi
        .entry_params(checked)
        .filter_map(|p| match p {
            EntryParam::TensorMap { arg } => Some(tensor_map_param(&contract[arg].ident)),
            _ => None,
        })
        .collect();
    Entry {
        name: e.name(&k.name),
        index_type,
        checked,
        reports: takes_record,
        params: params.join(",\n    "),
        run_args: run_args.join(",\n        "),
        tensor_maps,
    }
}

#[cfg(test)]
mod tests {
    use super::{ArgCu, arg, c_string_text, dimension_assumptions, report_extents};
    use ima_dsl::abi::contract_index;

    fn kernel(text: &str) -> ima_dsl::ir::Kernel {
        let source = ima_dsl::Source::new("specs/t.ima", text);
        let module = ima_dsl::compile(&source).expect("the spec checks");
        module.kernels.into_iter().next().expect("one kernel")
    }

    /// A path's backslash and quote are escaped and its line break written in octal, so
    /// that a `#line "..."` holds it.
    #[test]
    fn a_path_is_escaped_as_a_c_string_holds_it() {
        assert_eq!(c_string_text("specs/attn.ima"), "specs/attn.ima");
        assert_eq!(
            c_string_text("a\\b\"c\nd\té.ima"),
            "a\\\\b\\\"c\\012d\\011é.ima"
        );
    }

    /// Only the divisors, and values the constraints fix, are assumed: bounds made
    /// paged_attn's checked code larger.
    #[test]
    fn entry_points_assume_the_divisors_and_fixed_values_of_the_constraints_and_nothing_else() {
        let k = kernel(
            "kernel k where K % 8 == 0, N <= 64, M >= 2, N % 4 == 0, D == 128, E == 8 || E == 16 {\n    in x: f32[M, K]\n    in z: f32[D, E]\n    out y: f32[M, N]\n    launch over y[m, n]\n    body { y(m, n) = x(m, 0) + z(0, 0); }\n}\n",
        );
        assert_eq!(
            dimension_assumptions(&k),
            ["K % 8 == 0", "D == 128", "E % 8 == 0", "N % 4 == 0"]
        );
    }

    /// The flush's switch names every argument a violation can name: a plain one by its
    /// contract index, a quantized one by its logical index with K and N, its g_idx by
    /// its own index with K, and a shared array as -1 - n.
    #[test]
    fn the_flush_knows_the_extents_of_every_argument_a_violation_names() {
        let k = kernel(
            "kernel k {\n    in  w: q4[K, N] gptq(group = G, zeros = plain, g_idx)\n    out y: f16[K, N]\n    shared s: f32[4, 8]\n    launch over y[k, n]\n    body { s(0, 0) = 0.f; y(k, n) = __float2half_rn(w.dequant(k, n)); }\n}\n",
        );
        let index = contract_index(&k);
        let accessors: Vec<ArgCu> = k
            .args
            .iter()
            .zip(&index)
            .map(|(a, &i)| arg(&k, a, i))
            .collect();
        let got: Vec<(i64, Vec<String>)> = report_extents(&k, &index, &accessors)
            .into_iter()
            .map(|r| (r.arg, r.extents))
            .collect();
        let strings = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let g_idx = got
            .iter()
            .find(|(_, e)| *e == strings(&["K"]))
            .expect("a case for g_idx")
            .0;
        assert!(
            g_idx > index[0] as i64 && g_idx < index[1] as i64,
            "{got:?}"
        );
        assert!(
            got.contains(&(index[0] as i64, strings(&["K", "N"]))),
            "{got:?}"
        );
        assert!(
            got.contains(&(index[1] as i64, strings(&["K", "N"]))),
            "{got:?}"
        );
        assert!(got.contains(&(-1, strings(&["4", "8"]))), "{got:?}");
        assert_eq!(got.len(), 4, "{got:?}");
    }
}
