//! IR to CUDA C: one accessor type per tensor argument, the body as a device function, the
//! guarded grid-stride loop that decodes the launch indices, and two entry points per
//! kernel (32-bit and 64-bit indices).

use crate::c_expr::c_expr;
use crate::signature;
use askama::Template;
use ima_dsl::ir::{self, DType, Role};

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

#[derive(Template)]
#[template(path = "module.cu", escape = "none")]
struct ModuleCu {
    version: &'static str,
    spec: String,
    includes: Vec<&'static str>,
    consts: Vec<ConstCu>,
    kernels: Vec<KernelCu>,
}

struct ConstCu {
    name: String,
    c_type: &'static str,
    value: i64,
}

struct KernelCu {
    name: String,
    signature: String,
    docs: Vec<String>,
    args: Vec<ArgCu>,
    shared: Vec<SharedCu>,
    launch: LaunchCu,
    body_params: String,
    body_line: usize,
    body: String,
    run_params: String,
    domain: String,
    decode: Vec<Decode>,
    body_args: String,
    threads: u32,
    entries: Vec<Entry>,
}

/// How `run` covers the domain.
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
    name: String,
    dtype: &'static str,
    c_type: &'static str,
    dims: String,
    dim_fields: String,
    dim_values: String,
    index_params: String,
    offset: String,
    bytes: String,
}

struct ArgCu {
    role: &'static str,
    name: String,
    dtype: &'static str,
    dims: String,
    layout_note: String,
    pointee: String,
    stride_fields: String,
    element_ref: String,
    index_params: String,
    offset: String,
}

/// One step of turning the linear thread index into the launch indices.
struct Decode {
    index: String,
    value: String,
    extent: String,
    last: bool,
}

struct Entry {
    suffix: &'static str,
    index_type: &'static str,
    params: String,
    run_args: String,
}

/// Renders the CUDA C for every kernel of a module.
pub fn generate(m: &ir::Module, cu_file: &str) -> String {
    let mut includes: Vec<&'static str> = m
        .kernels
        .iter()
        .flat_map(|k| k.args.iter().map(|a| a.dtype))
        .filter_map(header)
        .collect();
    includes.sort();
    includes.dedup();
    ModuleCu {
        version: crate::VERSION,
        spec: m.file.clone(),
        includes,
        consts: m
            .consts
            .iter()
            .map(|(name, value)| ConstCu {
                name: name.clone(),
                c_type: if i32::try_from(*value).is_ok() { "int" } else { "long long" },
                value: *value,
            })
            .collect(),
        kernels: m.kernels.iter().map(kernel).collect(),
    }
    .render()
    .map(|text| resume_lines(&text, cu_file))
    .expect("the module template renders from plain strings")
}

/// Bodies carry `#line` directives pointing into the spec, so that NVRTC reports errors at
/// the spec's lines; after each body, line numbers go back to the generated file's own.
fn resume_lines(text: &str, cu_file: &str) -> String {
    text.lines()
        .enumerate()
        .map(|(i, line)| {
            if line == "// ima:resume-line" {
                // `#line N` names the line after the directive, the (i + 2)th.
                format!("#line {} \"{cu_file}\"\n", i + 2)
            } else {
                format!("{line}\n")
            }
        })
        .collect()
}

fn kernel(k: &ir::Kernel) -> KernelCu {
    let args: Vec<ArgCu> = k.args.iter().map(arg).collect();
    let symbols: Vec<&str> = k.symbols.iter().map(|s| s.name.as_str()).collect();

    // run()'s parameters: accessors, symbols, params. body() also gets the shared arrays
    // and the launch indices.
    let mut run_params: Vec<String> = k.args.iter().map(|a| format!("const {}_t<I> {}", a.name, a.name)).collect();
    run_params.extend(symbols.iter().map(|s| format!("const I {s}")));
    run_params.extend(k.params.iter().map(|p| format!("const {} {}", c_type(p.dtype), p.name)));
    let mut body_params = run_params.clone();
    body_params.extend(k.shared.iter().map(|a| format!("const {}_t<I> {}", a.name, a.name)));
    body_params.extend(k.launch.indices().iter().map(|i| format!("const I {i}")));

    let mut body_names: Vec<String> = k.args.iter().map(|a| a.name.clone()).collect();
    body_names.extend(symbols.iter().map(|s| s.to_string()));
    body_names.extend(k.params.iter().map(|p| p.name.clone()));
    body_names.extend(k.shared.iter().map(|a| a.name.clone()));
    body_names.extend(k.launch.indices().iter().cloned());

    let (launch, extents) = match &k.launch {
        ir::Launch::Grid { .. } => (LaunchCu::Grid, Vec::new()),
        ir::Launch::Threads { arg, .. } => (
            LaunchCu::Loop {
                first: "I(blockIdx.x) * I(blockDim.x) + I(threadIdx.x)",
                step: "I(gridDim.x) * I(blockDim.x)",
                sync: false,
            },
            k.args[*arg].dims.iter().map(|d| c_expr(k, &d.expr)).collect(),
        ),
        ir::Launch::Blocks { arg, indices } => (
            LaunchCu::Loop {
                first: "I(blockIdx.x)",
                step: "I(gridDim.x)",
                sync: !k.shared.is_empty(),
            },
            k.args[*arg].dims[..indices.len()].iter().map(|d| c_expr(k, &d.expr)).collect::<Vec<_>>(),
        ),
    };
    let domain = if extents.is_empty() { "1".to_string() } else { extents.join(" * ") };
    let decode = k
        .launch
        .indices()
        .iter()
        .zip(&extents)
        .enumerate()
        .rev()
        .map(|(d, (index, extent))| {
            let first = d == 0;
            Decode {
                index: index.clone(),
                value: if first { "ima_rest".to_string() } else { format!("ima_rest % {extent}") },
                extent: extent.clone(),
                last: first,
            }
        })
        .collect();

    let entries = [("i32", "int"), ("i64", "long long")]
        .into_iter()
        .map(|(suffix, index_type)| entry(k, suffix, index_type))
        .collect();

    KernelCu {
        name: k.name.clone(),
        signature: signature(k),
        docs: k.docs.clone(),
        args,
        shared: k.shared.iter().map(|a| shared(k, a)).collect(),
        launch,
        body_params: body_params.join(",\n    "),
        body_line: k.body.line,
        body: k.body.text.clone(),
        run_params: run_params.join(",\n    "),
        domain,
        decode,
        body_args: body_names.join(", "),
        threads: k.threads_per_block(),
        entries,
    }
}

fn shared(k: &ir::Kernel, a: &ir::SharedArray) -> SharedCu {
    let rank = a.dims.len();
    let extents: Vec<String> = a.dims.iter().map(|d| c_expr(k, &d.expr)).collect();
    // Row-major, Horner form: ((i0 * d1 + i1) * d2 + i2).
    let offset = (1..rank).fold("i0".to_string(), |acc, d| format!("({acc}) * d{d} + i{d}"));
    let ty = c_type(a.dtype);
    SharedCu {
        name: a.name.clone(),
        dtype: a.dtype.name(),
        c_type: ty,
        dims: a.dims.iter().map(|d| d.text.as_str()).collect::<Vec<_>>().join(", "),
        dim_fields: (0..rank).map(|d| format!("d{d}")).collect::<Vec<_>>().join(", "),
        dim_values: extents.join(", "),
        index_params: (0..rank).map(|d| format!("I i{d}")).collect::<Vec<_>>().join(", "),
        offset: offset.replace("(i0)", "i0"),
        bytes: format!("{} * I(sizeof({ty}))", extents.join(" * ")),
    }
}

fn arg(a: &ir::TensorArg) -> ArgCu {
    let ty = c_type(a.dtype);
    let writes = a.role != Role::In;
    let rank = a.rank();
    let dims: Vec<&str> = a.dims.iter().map(|d| d.text.as_str()).collect();
    let layout_note = if a.is_permuted() {
        let phys: Vec<&str> = a.physical_dims().map(|d| d.text.as_str()).collect();
        format!(", stored [{}]", phys.join(", "))
    } else {
        String::new()
    };
    ArgCu {
        role: match a.role {
            Role::In => "in",
            Role::Out => "out",
            Role::InOut => "inout",
        },
        name: a.name.clone(),
        dtype: a.dtype.name(),
        dims: dims.join(", "),
        layout_note: if a.strided { format!("{layout_note}, strided") } else { layout_note },
        pointee: if writes { ty.to_string() } else { format!("const {ty}") },
        stride_fields: (0..rank).map(|d| format!("s{d}")).collect::<Vec<_>>().join(", "),
        // Inputs read by value through the read-only path; outputs hand out a reference.
        element_ref: if writes { format!("{ty}&") } else { ty.to_string() },
        index_params: (0..rank).map(|d| format!("I i{d}")).collect::<Vec<_>>().join(", "),
        offset: (0..rank).map(|d| format!("i{d} * s{d}")).collect::<Vec<_>>().join(" + "),
    }
}

fn entry(k: &ir::Kernel, suffix: &'static str, index_type: &'static str) -> Entry {
    let mut params = Vec::new();
    let mut run_args = Vec::new();
    for a in &k.args {
        let ty = c_type(a.dtype);
        let pointee = if a.role == Role::In { format!("const {ty}") } else { ty.to_string() };
        params.push(format!("{pointee}* __restrict__ {}", a.name));
        let strides: Vec<String> = (0..a.rank()).map(|d| format!("{}_s{d}", a.name)).collect();
        params.extend(strides.iter().map(|s| format!("{index_type} {s}")));
        run_args.push(format!("{}_t<{index_type}>{{{}, {}}}", a.name, a.name, strides.join(", ")));
    }
    for s in &k.symbols {
        params.push(format!("{index_type} {}", s.name));
        run_args.push(s.name.clone());
    }
    for p in &k.params {
        params.push(format!("{} {}", c_type(p.dtype), p.name));
        run_args.push(p.name.clone());
    }
    Entry {
        suffix,
        index_type,
        params: params.join(",\n    "),
        run_args: run_args.join(",\n        "),
    }
}
