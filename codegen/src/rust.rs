//! IR to Rust: one typed launch stub per kernel, and its contract as a static descriptor
//! that the runtime's one checker interprets.

use askama::Template;
use ima_dsl::abi::{kernel_contract, owned};
use ima_dsl::ir::{self, DType, Expr, Role};
use ima_dsl::names::{camel_case, rust_args_struct, rust_contract_static, rust_kernel_type};

/// The Rust type of one element, as the runtime names it.
pub fn rust_type(d: DType) -> &'static str {
    match d {
        DType::F16 => "ima::half::f16",
        DType::BF16 => "ima::half::bf16",
        DType::F32 => "f32",
        DType::F64 => "f64",
        DType::I8 => "i8",
        DType::U8 => "u8",
        DType::I16 => "i16",
        DType::U16 => "u16",
        DType::I32 => "i32",
        DType::U32 => "u32",
        DType::I64 => "i64",
        DType::U64 => "u64",
        DType::E4M3 => "ima::F8E4M3",
        DType::E5M2 => "ima::F8E5M2",
    }
}

/// The runtime's `DType` (and `Scalar`) variant: the contract's own name for it.
fn dtype_variant(d: DType) -> String {
    format!("{d:?}")
}

#[derive(Template)]
#[template(path = "module.rs", escape = "none")]
struct ModuleRs {
    version: &'static str,
    spec: String,
    runtime: String,
    /// A Rust expression of type `&str`.
    cuda_source: String,
    /// The spec's constants, by name.
    consts: Vec<(String, i64)>,
    kernels: Vec<KernelRs>,
}

struct KernelRs {
    name: String,
    /// An argument has a value contract: the stub also has `validate`.
    has_values: bool,
    type_name: String,
    contract_name: String,
    signature: String,
    location: String,
    docs: Vec<String>,
    /// The stub's named arguments: `AttnScoresArgs`.
    args_name: String,
    /// Its generic parameters, bounds included: `<'a, Q: ima::ReadTensor<f32>, ...>`.
    args_generics: String,
    args_fields: Vec<FieldRs>,
    /// The type `launch` and `validate` take: `AttnScoresArgs<'_, impl ima::ReadTensor<f32>, ...>`.
    args_type: String,
    /// The type `launch_in` takes, its tensors borrowed for the graph's `'a`:
    /// `AttnScoresArgs<'a, impl ima::ReadTensor<f32>, ...>`.
    graph_args_type: String,
    /// The fields, as a pattern binds them: `q, k, o, scale`.
    args_bind: String,
    /// The stub's argument array, or `None` when a quantized argument needs `arg_pushes`.
    kernel_args: Option<String>,
    /// Statements building the `ima::KernelArgs`.
    arg_pushes: Vec<String>,
    scalars: String,
    symbols: Vec<SymbolRs>,
    args: Vec<ArgRs>,
    params: Vec<ParamRs>,
    constraints: Vec<ExtentRs>,
    shared: Vec<SharedRs>,
    /// A `ima::Launch` expression.
    launch: String,
    empty: String,
    /// `[x, y, z]`.
    block: String,
    block_from_occupancy: bool,
    /// Its release entry points' names (`ima_contract::EntryPoint`).
    entry_i32: String,
    entry_i64: String,
}

/// One field of a stub's named arguments.
struct FieldRs {
    /// Element type, shape and layout, and the spec's doc comment.
    doc: String,
    name: String,
    ty: String,
}

struct SharedRs {
    name: String,
    dtype: String,
    dims: Vec<ExtentRs>,
    align: usize,
}

struct SymbolRs {
    name: String,
    arg: usize,
    dim: usize,
}

struct ArgRs {
    name: String,
    role: String,
    dtype: String,
    dims: Vec<ExtentRs>,
    stored: String,
    strided: bool,
    early: bool,
    align: usize,
    /// `None`, or `Some(ima::ValueContract { .. })`.
    values: String,
    /// `None`, or `Some(ima::TmaBox { .. })`.
    tma: String,
}

struct ExtentRs {
    text: String,
    expr: String,
}

struct ParamRs {
    name: String,
    dtype: String,
}

/// Where the stubs find the CUDA C.
pub enum CudaSource<'a> {
    /// A file beside the module, read with `include_str!` (generated crates).
    File(&'a str),
    /// The source itself, as a string literal (the proc macro).
    Inline(&'a str),
}

/// How the generated module reaches its dependencies.
pub struct RustOptions<'a> {
    pub cuda: CudaSource<'a>,
    /// Path of the runtime crate: `crate::runtime` in generated crates (their runtime.rs
    /// re-exports ima_runtime), `::ima` (which re-exports it) in the proc macro's expansion,
    /// `ima_runtime` in tests/golden.rs's outputs.
    pub runtime: &'a str,
}

impl<'a> RustOptions<'a> {
    /// Stubs that name `ima_runtime` directly, with the CUDA C in `cu_file` beside them
    /// (tests/golden.rs's outputs).
    pub fn for_crate(cu_file: &'a str) -> Self {
        RustOptions {
            cuda: CudaSource::File(cu_file),
            runtime: "ima_runtime",
        }
    }
}

/// Renders the Rust module body for a spec.
pub fn generate(m: &ir::Module, options: RustOptions) -> String {
    let RustOptions { cuda, runtime } = options;
    ModuleRs {
        version: crate::VERSION,
        spec: m.file.clone(),
        runtime: runtime.to_string(),
        cuda_source: match cuda {
            CudaSource::File(name) => format!("include_str!({name:?})"),
            CudaSource::Inline(text) => format!("{text:?}"),
        },
        consts: m.consts.clone(),
        kernels: m.kernels.iter().map(|k| kernel(m, k)).collect(),
    }
    .render()
    .expect("the module template renders from plain strings")
}

/// An argument's line in a stub's docs, followed by the spec's doc comment for it.
fn with_docs(line: String, docs: &[String]) -> String {
    if docs.is_empty() {
        line
    } else {
        format!("{line}: {}", docs.join(" "))
    }
}

/// `name<a, b>`, or `name` with no parameters.
fn angle(name: &str, params: &[String]) -> String {
    if params.is_empty() {
        name.to_string()
    } else {
        format!("{name}<{}>", params.join(", "))
    }
}

/// A plain tensor's element type, shape (in memory order) and layout, for its field's docs.
fn tensor_doc(a: &ir::TensorArg, dims: &[&str]) -> String {
    let mut doc = format!("{} `[{}]`", a.dtype.name(), dims.join(", "));
    if a.is_permuted() {
        let logical: Vec<&str> = a.dims.iter().map(|d| d.text.as_str()).collect();
        doc.push_str(&format!(" in memory, read as `[{}]`", logical.join(", ")));
    }
    doc.push_str(if a.strided {
        ", any strides"
    } else {
        ", contiguous"
    });
    if a.align > a.dtype.size() as u64 {
        doc.push_str(&format!(", {}-byte aligned", a.align));
    }
    doc
}

/// The generic parameter of argument `name`'s tensor type: its name in camel case (`q` is
/// `Q`, `cu_seqlens` is `CuSeqlens`), numbered where two names would give the same one (or
/// the keyword `Self`).
fn generic_name(name: &str, taken: &[(String, String)]) -> String {
    let base = camel_case(name);
    let base = if base.is_empty() {
        "T".to_string()
    } else {
        base
    };
    let free = |p: &String| p != "Self" && !taken.iter().any(|(t, _)| t == p);
    std::iter::once(base.clone())
        .chain((1..).map(|i| format!("{base}{i}")))
        .find(free)
        .expect("some numbered name is free")
}

fn kernel(m: &ir::Module, k: &ir::Kernel) -> KernelRs {
    // The contract, built from the IR where `imac fuzz` builds it too; printed below.
    let c = kernel_contract(m, k);
    let mut fields = Vec::new();
    // One generic parameter per plain tensor, bound to its trait: owned and borrowed
    // tensors alike (`ima::Tensor`, `ima::TensorView`, ...).
    let mut generics: Vec<(String, String)> = Vec::new();
    // Plain stubs pass a fixed array of arguments; a quantized argument expands into a
    // run-time list of its buffers, so those stubs build an `ima::KernelArgs`.
    let mut kernel_args = Vec::new();
    for a in &k.args {
        let dims: Vec<&str> = a.physical_dims().map(|d| d.text.as_str()).collect();
        if let Some(q) = &a.quant {
            let scales = rust_type(a.dtype);
            let g_idx = matches!(q.format, ir::QuantFormat::Gptq { g_idx: true, .. });
            kernel_args.push(KernelArgRs::Quant(format!(
                "{}.kernel_args({}, {g_idx})?",
                a.name,
                quant_format(q).0
            )));
            let buffers = q.buffers(&a.dims[0], &a.dims[1], a.dtype);
            let parts: Vec<String> = buffers
                .iter()
                .map(|b| {
                    format!(
                        "{} `[{}]`",
                        b.part,
                        b.dims
                            .iter()
                            .map(|d| d.text.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                })
                .collect();
            fields.push(FieldRs {
                doc: with_docs(
                    format!(
                        "q `[{}]`, group `{}`: {}",
                        dims.join(", "),
                        q.group.text,
                        parts.join(", ")
                    ),
                    &a.docs,
                ),
                name: a.name.clone(),
                ty: format!("&'a ima::QuantTensor<{scales}>"),
            });
            continue;
        }
        let ty = rust_type(a.dtype);
        let (bound, reference, ctor) = if a.role == Role::In {
            (format!("ima::ReadTensor<{ty}>"), "&'a", "read")
        } else {
            (format!("ima::WriteTensor<{ty}>"), "&'a mut", "write")
        };
        let param = generic_name(&a.name, &generics);
        fields.push(FieldRs {
            doc: with_docs(tensor_doc(a, &dims), &a.docs),
            name: a.name.clone(),
            ty: format!("{reference} {param}"),
        });
        generics.push((param, bound));
        kernel_args.push(KernelArgRs::One(format!(
            "ima::KernelArg::{ctor}({})",
            a.name
        )));
    }
    let mut scalars = Vec::new();
    for p in &k.params {
        scalars.push(format!(
            "ima::Scalar::{}({})",
            dtype_variant(p.dtype),
            p.name
        ));
        fields.push(FieldRs {
            doc: with_docs(p.dtype.name().to_string(), &p.docs),
            name: p.name.clone(),
            ty: rust_type(p.dtype).to_string(),
        });
    }
    let lifetime = (!k.args.is_empty()).then(|| "'a".to_string());
    let args_generics = lifetime
        .iter()
        .cloned()
        .chain(generics.iter().map(|(p, bound)| format!("{p}: {bound}")))
        .collect::<Vec<_>>();
    // `launch` borrows the tensors for the call (`'_`), `launch_in` for the graph's `'a`.
    let args_type_params = |lifetime_arg: &str| {
        lifetime
            .iter()
            .map(|_| lifetime_arg.to_string())
            .chain(generics.iter().map(|(_, bound)| format!("impl {bound}")))
            .collect::<Vec<_>>()
    };
    let args_name = rust_args_struct(&k.name);
    let quantized = kernel_args
        .iter()
        .any(|a| matches!(a, KernelArgRs::Quant(_)));
    KernelRs {
        name: k.name.clone(),
        has_values: ima_dsl::abi::has_value_contracts(k),
        type_name: rust_kernel_type(&k.name),
        contract_name: rust_contract_static(&k.name),
        signature: c.signature.clone(),
        location: c.location.clone(),
        docs: crate::rustdoc::doc_lines(&k.docs),
        args_type: angle(&args_name, &args_type_params("'_")),
        graph_args_type: angle(&args_name, &args_type_params("'a")),
        args_name,
        args_generics: angle("", &args_generics),
        args_bind: fields
            .iter()
            .map(|f| f.name.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        args_fields: fields,
        kernel_args: if quantized {
            None
        } else {
            Some(
                kernel_args
                    .iter()
                    .map(KernelArgRs::expr)
                    .collect::<Vec<_>>()
                    .join(", "),
            )
        },
        arg_pushes: kernel_args.iter().map(KernelArgRs::push).collect(),
        scalars: scalars.join(", "),
        symbols: c
            .symbols
            .iter()
            .map(|s| SymbolRs {
                name: s.name.clone(),
                arg: s.bound_by.arg,
                dim: s.bound_by.dim,
            })
            .collect(),
        args: c
            .args
            .iter()
            .map(|a| ArgRs {
                name: a.name.clone(),
                role: format!("{:?}", a.role),
                dtype: dtype_variant(a.dtype),
                dims: a.dims.iter().map(extent).collect(),
                stored: a
                    .stored
                    .iter()
                    .map(|d| d.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                strided: a.strided,
                early: a.early,
                align: a.align,
                values: a.values.as_ref().map_or("None".into(), value_contract),
                tma: a.tma.map_or("None".into(), |b| {
                    format!(
                        "Some(ima::TmaBox {{ rows: {}, cols: {}, layout: ima::TmaLayout::{:?} }})",
                        b.rows, b.cols, b.layout
                    )
                }),
            })
            .collect(),
        params: c
            .params
            .iter()
            .map(|p| ParamRs {
                name: p.name.clone(),
                dtype: dtype_variant(p.dtype),
            })
            .collect(),
        constraints: c
            .constraints
            .iter()
            .map(|c| ExtentRs {
                text: c.text.clone(),
                expr: rust_expr(&c.expr),
            })
            .collect(),
        shared: c
            .shared
            .iter()
            .map(|a| SharedRs {
                name: a.name.clone(),
                dtype: dtype_variant(a.dtype),
                dims: a.dims.iter().map(extent).collect(),
                align: a.align,
            })
            .collect(),
        launch: match &c.launch {
            owned::Launch::Threads { arg } => format!("ima::Launch::Threads {{ arg: {arg} }}"),
            owned::Launch::Blocks { arg, outer } => {
                format!("ima::Launch::Blocks {{ arg: {arg}, outer: {outer} }}")
            }
            owned::Launch::Grid {
                dims,
                resident,
                cluster,
            } => format!(
                "ima::Launch::Grid {{ dims: &[{}], resident: ima::Resident::{resident:?}, cluster: {cluster:?} }}",
                dims.iter().map(rust_expr).collect::<Vec<_>>().join(", ")
            ),
        },
        empty: format!("{:?}", c.empty),
        block: format!("{:?}", c.block),
        block_from_occupancy: c.block_from_occupancy,
        entry_i32: c.entry_i32.clone(),
        entry_i64: c.entry_i64.clone(),
    }
}

fn extent(d: &ir::Extent) -> ExtentRs {
    ExtentRs {
        text: d.text.clone(),
        expr: rust_expr(&d.expr),
    }
}

fn value_contract(v: &owned::ValueContract) -> String {
    let bound = |e: &ir::Extent| {
        format!(
            "ima::Extent {{ text: {:?}, expr: {} }}",
            e.text,
            rust_expr(&e.expr)
        )
    };
    format!(
        "Some(ima::ValueContract {{ text: {:?}, lo: {}, hi: {}, sentinel: {:?}, ascending: {} }})",
        v.text,
        bound(&v.lo),
        bound(&v.hi),
        v.sentinel,
        v.ascending
    )
}

/// How a stub hands one spec argument to the runtime.
enum KernelArgRs {
    /// One `ima::KernelArg` expression.
    One(String),
    /// An expression yielding the argument list of a quantized tensor (`Result<ima::KernelArgs>`).
    Quant(String),
}

impl KernelArgRs {
    fn expr(&self) -> String {
        match self {
            KernelArgRs::One(e) | KernelArgRs::Quant(e) => e.clone(),
        }
    }

    /// The statement adding it to the `ima::KernelArgs` named `args`.
    fn push(&self) -> String {
        match self {
            KernelArgRs::One(e) => format!("args.push({e});"),
            KernelArgRs::Quant(e) => format!("args.extend({e});"),
        }
    }
}

/// The runtime's format of a quantized argument: its `ima::QuantFormat` expression and its
/// name (`QuantFormat::name`, what a Python `QuantWeight` is made with). The Rust stubs
/// pass the expression to `QuantTensor::kernel_args`; the Python package, both.
pub(crate) fn quant_format(q: &ir::Quant) -> (&'static str, &'static str) {
    match q.format {
        ir::QuantFormat::Gptq { zeros, .. } => match zeros {
            ir::Zeros::MinusOne => ("ima::QuantFormat::Gptq(ima::ZeroStyle::MinusOne)", "gptq"),
            ir::Zeros::Plain => (
                "ima::QuantFormat::Gptq(ima::ZeroStyle::Plain)",
                "gptq(zeros = plain)",
            ),
            ir::Zeros::Symmetric => (
                "ima::QuantFormat::Gptq(ima::ZeroStyle::Symmetric)",
                "gptq(sym)",
            ),
        },
        ir::QuantFormat::Awq => ("ima::QuantFormat::Awq", "awq"),
        ir::QuantFormat::Int8 => ("ima::QuantFormat::Int8", "int8"),
    }
}

/// An expression as a `ima::Expr` constant.
fn rust_expr(e: &Expr) -> String {
    match e {
        Expr::Const(v) => format!("ima::Expr::Const({v})"),
        Expr::Sym(s) => format!("ima::Expr::Sym({s})"),
        Expr::Param(p) => format!("ima::Expr::Param({p})"),
        Expr::Neg(a) => format!("ima::Expr::Neg(&{})", rust_expr(a)),
        Expr::Not(a) => format!("ima::Expr::Not(&{})", rust_expr(a)),
        Expr::Bin(op, a, b) => format!(
            "ima::Expr::Bin(ima::BinOp::{:?}, &{}, &{})",
            op,
            rust_expr(a),
            rust_expr(b)
        ),
    }
}
