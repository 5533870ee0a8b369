//! IR to a Python package: `imac compile SPEC --python -o DIR` writes the Rust crate of
//! [`crate::package`] plus a PyO3 module (`src/python.rs`), a `pyproject.toml` for maturin
//! (abi3: one wheel for Python 3.9 and later), and the Python layer
//! (`python/NAME/__init__.py`, its `.pyi` stubs and the shared `_imac.py`).
//!
//! One Python function per kernel takes the spec's arguments by their names (tensors:
//! `torch.Tensor`s or `__cuda_array_interface__` / `__dlpack__` producers) and launches
//! through the same `Kernel::launch` as the Rust stubs. Each kernel is also registered as a
//! `torch.library.custom_op`: `NAME_out` writes outputs the caller passes; `NAME` allocates
//! them, where every output's shape follows from the inputs and params, with a
//! `register_fake` that evaluates the spec's extents (SymInts included, for
//! `torch.compile`). A quantized argument is one `QuantWeight` (its parts) in the
//! function, and its parts flattened into the custom ops (`W_qweight`, ...,
//! `W_group_size`, `W_k`), which take tensors and numbers only.

use askama::Template;
use ima_dsl::ir::{self, BinOp, Expr, Role};
use ima_dsl::names::{python_output_shapes, quant_buffer, quant_group_size, quant_k, torch_out_op};

use crate::package::{CrateOptions, GeneratedFile};

#[derive(Template)]
#[template(path = "python/Cargo.toml", escape = "none")]
struct CargoToml<'a> {
    version: &'static str,
    spec: &'a str,
    name: &'a str,
    lib: &'a str,
    runtime: String,
}

#[derive(Template)]
#[template(path = "python/pyproject.toml", escape = "none")]
struct PyProject<'a> {
    version: &'static str,
    spec: &'a str,
    name: &'a str,
    lib: &'a str,
}

#[derive(Template)]
#[template(path = "python/native.rs", escape = "none")]
struct NativeRs<'a> {
    version: &'static str,
    spec: &'a str,
    lib: &'a str,
    kernels: Vec<ExposedRs>,
    /// `(DType variant, torch attribute)` of every dtype.
    torch_dtypes: Vec<(String, &'static str)>,
}

/// One kernel in the native module's table.
struct ExposedRs {
    contract: String,
    /// `Slot::Tensor, Slot::Quant { .. }, ...`: how each spec argument reaches the kernel.
    slots: String,
}

/// What every package exports beside its kernels and the spec's constants (which
/// ima_dsl's reserved names keep apart from them).
const PACKAGE_NAMES: &[&str] = &[
    "ContractError",
    "DeviceError",
    "QuantWeight",
    "check_deferred",
    "set_checked",
    "set_sync",
];

/// The shared Python layer, the same in every package.
const IMAC_PY: &str = include_str!("../templates/python/_imac.py");

/// `rmsnorm_kernels`: the Python package and the Rust library of `specs/rmsnorm.ima`.
pub fn package_name(m: &ir::Module) -> String {
    format!("{}_kernels", crate::stem(&m.file).replace('-', "_"))
}

/// The native table's slots of a kernel's spec arguments.
fn slots(k: &ir::Kernel) -> String {
    k.args
        .iter()
        .map(|a| match &a.quant {
            None => "Slot::Tensor".to_string(),
            Some(q) => format!(
                "Slot::Quant {{ format: {}, g_idx: {} }}",
                crate::rust::quant_format(q).0,
                matches!(q.format, ir::QuantFormat::Gptq { g_idx: true, .. })
            ),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The files of the Python package: `crate_files` (the Rust crate the module links) with
/// its `Cargo.toml` replaced and `lib.rs` extended, and the Python side added.
pub fn package_files(
    m: &ir::Module,
    crate_files: Vec<GeneratedFile>,
    options: &CrateOptions,
) -> Vec<GeneratedFile> {
    let lib = package_name(m);
    let name = lib.replace('_', "-");
    let render = |t: &dyn askama::DynTemplate| {
        t.dyn_render()
            .expect("the python templates render from plain strings")
            + "\n"
    };
    let kernels: Vec<&ir::Kernel> = m.kernels.iter().collect();
    let mut files: Vec<GeneratedFile> = crate_files
        .into_iter()
        .map(|mut f| {
            match f.path.as_str() {
                "Cargo.toml" => {
                    f.contents = render(&CargoToml {
                        version: crate::VERSION,
                        spec: &m.file,
                        name: &name,
                        lib: &lib,
                        runtime: options.runtime.toml(),
                    })
                    .into_bytes()
                }
                "src/lib.rs" => f.contents.extend_from_slice(
                    b"\n/// The Python module `_native`, built by maturin (`pyproject.toml`).\nmod python;\n",
                ),
                _ => {}
            }
            f
        })
        .collect();
    let file = GeneratedFile::text;
    files.push(file(
        "pyproject.toml".into(),
        render(&PyProject {
            version: crate::VERSION,
            spec: &m.file,
            name: &name,
            lib: &lib,
        }),
    ));
    files.push(file(
        "src/python.rs".into(),
        render(&NativeRs {
            version: crate::VERSION,
            spec: &m.file,
            lib: &lib,
            kernels: kernels
                .iter()
                .map(|k| ExposedRs {
                    contract: ima_dsl::names::rust_contract_static(&k.name),
                    slots: slots(k),
                })
                .collect(),
            torch_dtypes: ir::DType::ALL
                .into_iter()
                .map(|d| (format!("{d:?}"), torch_name(d)))
                .collect(),
        }),
    ));
    files.push(file(format!("python/{lib}/_imac.py"), IMAC_PY.into()));
    files.push(file(format!("python/{lib}/py.typed"), String::new()));
    files.push(file(
        format!("python/{lib}/__init__.py"),
        init_py(m, &lib, &kernels),
    ));
    files.push(file(
        format!("python/{lib}/__init__.pyi"),
        init_pyi(m, &kernels),
    ));
    files
}

/// `x: f16 [R, N], contiguous` lines of a kernel's docstring.
fn arg_docs(k: &ir::Kernel) -> Vec<String> {
    let mut out = Vec::new();
    for a in &k.args {
        let dims: Vec<&str> = a.physical_dims().map(|d| d.text.as_str()).collect();
        let role = match a.role {
            Role::In => "in",
            Role::Out => "out",
            Role::InOut => "inout",
        };
        let mut line = match &a.quant {
            Some(q) => {
                let parts: Vec<String> = q
                    .buffers(&a.dims[0], &a.dims[1], a.dtype)
                    .iter()
                    .map(|b| {
                        let dims: Vec<&str> = b.dims.iter().map(|d| d.text.as_str()).collect();
                        format!("{} {} [{}]", b.part, b.dtype.name(), dims.join(", "))
                    })
                    .collect();
                format!(
                    "{} ({role}): QuantWeight({:?}) [{}], group {}: {}",
                    a.name,
                    crate::rust::quant_format(q).1,
                    dims.join(", "),
                    q.group.text,
                    parts.join(", ")
                )
            }
            None => format!(
                "{} ({role}): {} [{}], {}",
                a.name,
                a.dtype.name(),
                dims.join(", "),
                if a.strided {
                    "any strides"
                } else {
                    "contiguous"
                }
            ),
        };
        if a.align > a.dtype.size() as u64 {
            line.push_str(&format!(", {}-byte aligned", a.align));
        }
        if !a.docs.is_empty() {
            line.push_str(&format!(": {}", a.docs.join(" ")));
        }
        out.push(line);
    }
    for p in &k.params {
        let mut line = format!("{}: {}", p.name, p.dtype.name());
        if !p.docs.is_empty() {
            line.push_str(&format!(": {}", p.docs.join(" ")));
        }
        out.push(line);
    }
    out
}

fn docstring(m: &ir::Module, k: &ir::Kernel, extra: &str) -> String {
    let mut s = format!("`{}`\n", k.signature());
    if !k.docs.is_empty() {
        s.push_str(&format!("\n    {}\n", k.docs.join("\n    ")));
    }
    s.push_str(&format!(
        "\n    Declared at {}:{}.\n\n    Arguments:\n",
        m.file, k.line
    ));
    for line in arg_docs(k) {
        s.push_str(&format!("      {line}\n"));
    }
    for c in &k.constraints {
        s.push_str(&format!("    where {}\n", c.text));
    }
    s.push_str(extra);
    s.push_str("    ");
    // A docstring is a plain string: a backslash (`C:\Users`) would start an escape.
    s.replace('\\', "\\\\").replace('"', "'")
}

fn py_type(d: ir::DType) -> &'static str {
    if d.is_integer() { "int" } else { "float" }
}

/// An extent as a Python expression over `_s_NAME` symbol variables and params, with the
/// contract's semantics: `/` and `%` truncate as in C (`_imac.c_div`, `c_rem`; Python's
/// floor), logic gives 0 or 1 (Python's `and` and `or` give an operand).
fn py_expr(k: &ir::Kernel, e: &Expr) -> String {
    match e {
        Expr::Const(v) => v.to_string(),
        Expr::Sym(s) => shape_local(&k.symbols[*s].name),
        Expr::Param(p) => k.params[*p].name.clone(),
        Expr::Neg(a) => format!("(-{})", py_expr(k, a)),
        Expr::Not(a) => format!("(0 if {} else 1)", py_expr(k, a)),
        Expr::Bin(op, a, b) => {
            let (a, b) = (py_expr(k, a), py_expr(k, b));
            match op {
                BinOp::Add => format!("({a} + {b})"),
                BinOp::Sub => format!("({a} - {b})"),
                BinOp::Mul => format!("({a} * {b})"),
                BinOp::Div => format!("_imac.c_div({a}, {b})"),
                BinOp::Rem => format!("_imac.c_rem({a}, {b})"),
                BinOp::CeilDiv => format!("(-((-{a}) // {b}))"),
                BinOp::Min => format!("_imac.sym_min({a}, {b})"),
                BinOp::Max => format!("_imac.sym_max({a}, {b})"),
                BinOp::Eq => format!("({a} == {b})"),
                BinOp::Ne => format!("({a} != {b})"),
                BinOp::Lt => format!("({a} < {b})"),
                BinOp::Le => format!("({a} <= {b})"),
                BinOp::Gt => format!("({a} > {b})"),
                BinOp::Ge => format!("({a} >= {b})"),
                BinOp::And => format!("(1 if {a} and {b} else 0)"),
                BinOp::Or => format!("(1 if {a} or {b} else 0)"),
            }
        }
    }
}

/// The symbols that only outputs carry (specs/quant.ima's `NY`, the width of a y that may
/// be half of W's for a fused SiluAndMul): nothing the inputs hold says their value, so
/// `NAME_output_shapes` and the op that allocates the outputs take each as an `int`
/// parameter of the symbol's name, after the params.
fn output_symbols(k: &ir::Kernel) -> Vec<&str> {
    k.symbols
        .iter()
        .filter(|s| k.args[s.arg].role == Role::Out)
        .map(|s| s.name.as_str())
        .collect()
}

/// The local that holds symbol or output `name`'s value in the shape functions and the
/// custom ops: under the `_` no spec name starts with, so no argument can meet it.
fn shape_local(name: &str) -> String {
    format!("_s_{name}")
}

/// The body of `NAME_output_shapes(inputs..., params..., output symbols...)`, when every
/// output's shape follows from those: each symbol from its input's dimension (a quantized
/// input's `k`, `n` or `group_size`) or, one only outputs carry, from its parameter
/// ([`output_symbols`]); then each output's physical shape, refused where an extent is
/// negative for the inputs (`_imac.output_shape`). None for a kernel with an
/// `inout` argument, or none written. (No symbol is named as an argument or param: in an
/// extent, a param's name is the param, and an argument's an unknown symbol.)
fn output_shapes(k: &ir::Kernel) -> Option<Vec<String>> {
    if k.args.iter().any(|a| a.role == Role::InOut) || !k.args.iter().any(|a| a.role == Role::Out) {
        return None;
    }
    let mut lines = Vec::new();
    for s in &k.symbols {
        let a = &k.args[s.arg];
        if a.role == Role::Out {
            lines.push(format!("{} = {}", shape_local(&s.name), s.name));
            continue;
        }
        let value = if a.quant.is_some() {
            format!("{}.{}", a.name, ["k", "n", "group_size"].get(s.dim)?)
        } else {
            let p = a.stored.iter().position(|&l| l == s.dim)?;
            format!("_imac.shape_of({})[{p}]", a.name)
        };
        lines.push(format!("{} = {value}", shape_local(&s.name)));
    }
    let shapes: Vec<String> = k
        .args
        .iter()
        .filter(|a| a.role == Role::Out)
        .map(|a| {
            let (dims, texts): (Vec<String>, Vec<String>) = a
                .physical_dims()
                .map(|d| (py_expr(k, &d.expr), format!("{:?}", d.text)))
                .unzip();
            let tuple = |items: &[String]| {
                format!(
                    "({}{})",
                    items.join(", "),
                    if items.len() == 1 { "," } else { "" }
                )
            };
            format!(
                "_imac.output_shape(\"kernel {}: argument `{}`\", {}, {}, ContractError)",
                k.name,
                a.name,
                tuple(&dims),
                tuple(&texts)
            )
        })
        .collect();
    lines.push("return (".to_string());
    lines.extend(shapes.iter().map(|s| format!("    {s},")));
    lines.push(")".to_string());
    Some(lines)
}

/// A spec argument as a custom op's parameters, `(name, annotation)`: one tensor, or a
/// quantized weight's parts, group size and K (custom ops take tensors and numbers only).
fn op_params(a: &ir::TensorArg) -> Vec<(String, &'static str)> {
    match &a.quant {
        None => vec![(a.name.clone(), "_torch.Tensor")],
        Some(q) => {
            let mut v: Vec<(String, &'static str)> = q
                .buffers(&a.dims[0], &a.dims[1], a.dtype)
                .iter()
                .map(|b| (quant_buffer(&a.name, b.part), "_torch.Tensor"))
                .collect();
            v.push((quant_group_size(&a.name), "int"));
            v.push((quant_k(&a.name), "_typing.Optional[int]"));
            v
        }
    }
}

/// The statement that makes a quantized argument's `QuantWeight` from a custom op's
/// parameters ([`op_params`]); `None` for a plain tensor.
fn op_rebuild(a: &ir::TensorArg) -> Option<String> {
    let q = a.quant.as_ref()?;
    let parts: Vec<String> = q
        .buffers(&a.dims[0], &a.dims[1], a.dtype)
        .iter()
        .map(|b| format!("{}={}", b.part, quant_buffer(&a.name, b.part)))
        .collect();
    Some(format!(
        "        {n} = _imac.QuantWeight({f:?}, {parts}, group_size={g}, k={k})\n",
        n = a.name,
        g = quant_group_size(&a.name),
        k = quant_k(&a.name),
        f = crate::rust::quant_format(q).1,
        parts = parts.join(", "),
    ))
}

/// `name: annotation` of each parameter, for a signature.
fn typed(params: &[(String, &str)]) -> String {
    params
        .iter()
        .map(|(n, t)| format!("{n}: {t}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn names(params: &[(String, &str)]) -> String {
    params
        .iter()
        .map(|(n, _)| n.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The Python function of kernel `index`: its signature, docstring and one call into the
/// native module (`launch` or `validate`), nothing else on the way.
fn py_function(
    name: &str,
    args: &[&str],
    doc: &str,
    native: &str,
    index: usize,
    k: &ir::Kernel,
) -> String {
    let tensors: Vec<&str> = k.args.iter().map(|a| a.name.as_str()).collect();
    let params: Vec<&str> = k.params.iter().map(|p| p.name.as_str()).collect();
    let tuple = |v: &[&str]| match v {
        [one] => format!("({one},)"),
        _ => format!("({})", v.join(", ")),
    };
    format!(
        "\n\ndef {name}({args}):\n    \"\"\"{doc}\"\"\"\n    _native.{native}({index}, {tensors}, {params})\n",
        args = args.join(", "),
        tensors = tuple(&tensors),
        params = tuple(&params),
    )
}

fn init_py(m: &ir::Module, lib: &str, kernels: &[&ir::Kernel]) -> String {
    let ns = format!("imac_{lib}");
    let mut s = format!(
        r#""""The kernels of `{spec}`, generated by imac {version}. Do not edit.

Each function checks its arguments against the kernel's contract (the same checker as
the Rust stubs) and raises ContractError (a ValueError) with the same text, before
it launches anything (the first call loads the module on the device); a report from
the device (checked mode, a bad index value, a fault in sync mode) raises DeviceError
(a RuntimeError). Launches run on
torch.cuda.current_stream() of the tensors' device, after the pending work on a
__cuda_array_interface__ producer's stream. IMA_CHECKED=1, IMA_CHECKED=deferred
and IMA_SYNC=1 apply as in Rust; set_checked, set_sync and check_deferred set them here.
A kernel with value contracts also has NAME.validate(...), which checks every entry on
the host and launches nothing. A quantized argument takes a QuantWeight (its parts).

Every kernel is also a torch.library.custom_op in the namespace `{ns}`: NAME_out writes
the outputs it is given; NAME allocates its outputs and returns them, where the spec's
shapes give them from the inputs (with a register_fake for torch.compile). Their
quantized arguments are flattened: W_qweight, W_qzeros, W_scales, W_g_idx (the parts the
format has), W_group_size, W_k.
"""

import typing as _typing

from . import _imac
from . import _native
from ._imac import QuantWeight
from ._native import ContractError, DeviceError, check_deferred, set_checked, set_sync

try:
    import torch as _torch
except ImportError:  # the plain launches and shape functions work without it
    _torch = None

SPEC_FILE = _native.SPEC_FILE
"#,
        spec = m.file,
        version = crate::VERSION,
    );
    // The spec's constants (a partition length that sizes a workspace, say), as it
    // declares them.
    for (name, value) in &m.consts {
        s.push_str(&format!("{name} = {value}\n"));
    }
    let mut all: Vec<String> = PACKAGE_NAMES.iter().map(|n| n.to_string()).collect();
    all.extend(m.consts.iter().map(|(name, _)| name.clone()));
    for (index, k) in kernels.iter().enumerate() {
        let params: Vec<&str> = k.params.iter().map(|p| p.name.as_str()).collect();
        let all_args: Vec<&str> = k
            .args
            .iter()
            .map(|a| a.name.as_str())
            .chain(params.iter().copied())
            .collect();
        let doc = docstring(
            m,
            k,
            "\n    Writes the outputs in place and returns None. Raises ContractError (a\n    ValueError) for arguments that break the contract.\n",
        );
        s.push_str(&py_function(&k.name, &all_args, &doc, "launch", index, k));
        all.push(k.name.clone());
        if ima_dsl::abi::has_value_contracts(k) {
            let doc = docstring(
                m,
                k,
                "\n    Checks the arguments as a launch does, then copies each argument with a\n    value contract to the host and checks every entry: ContractError for the first\n    bad one. Launches nothing.\n",
            );
            let name = format!("_{}_validate", k.name);
            s.push_str(&py_function(&name, &all_args, &doc, "validate", index, k));
            s.push_str(&format!("\n\n{}.validate = {name}\n", k.name));
        }
        let shapes = output_shapes(k);
        let out_symbols = output_symbols(k);
        let inputs: Vec<&str> = k
            .args
            .iter()
            .filter(|a| a.role == Role::In)
            .map(|a| a.name.as_str())
            .chain(params.iter().copied())
            .chain(out_symbols.iter().copied())
            .collect();
        if let Some(lines) = &shapes {
            s.push_str(&format!(
                "\n\ndef {shapes}({args}):\n    \"\"\"The shapes of `{name}`'s outputs ({outs}), from its inputs' shapes and\n    params{given}, as the spec's extents give them.\"\"\"\n",
                shapes = python_output_shapes(&k.name),
                name = k.name,
                args = inputs.join(", "),
                outs = k
                    .args
                    .iter()
                    .filter(|a| a.role == Role::Out)
                    .map(|a| a.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                given = if out_symbols.is_empty() {
                    String::new()
                } else {
                    format!(" and the extents only outputs carry ({})", out_symbols.join(", "))
                },
            ));
            for l in lines {
                s.push_str(&format!("    {l}\n"));
            }
            all.push(python_output_shapes(&k.name));
        }
        // The custom ops, over the flattened arguments.
        let param_list: Vec<(String, &str)> = k
            .params
            .iter()
            .map(|p| (p.name.clone(), py_type(p.dtype)))
            .collect();
        let flat: Vec<(String, &str)> = k
            .args
            .iter()
            .flat_map(op_params)
            .chain(param_list.iter().cloned())
            .collect();
        let flat_in: Vec<(String, &str)> = k
            .args
            .iter()
            .filter(|a| a.role == Role::In)
            .flat_map(op_params)
            .chain(param_list.iter().cloned())
            .chain(out_symbols.iter().map(|s| (s.to_string(), "int")))
            .collect();
        let rebuild = |role: Option<Role>| -> String {
            k.args
                .iter()
                .filter(|a| role.is_none_or(|r| a.role == r))
                .filter_map(op_rebuild)
                .collect()
        };
        // A Python tuple of the names, `()` where the kernel writes no tensor (`(,)` is
        // no Python).
        let mutated: String = k
            .args
            .iter()
            .filter(|a| a.role != Role::In)
            .map(|a| format!("{:?}, ", a.name))
            .collect();
        s.push_str(&format!(
            "\n\nif _torch is not None:\n\n    @_torch.library.custom_op(\"{ns}::{out}\", mutates_args=({mutated}))\n    def _{out}({typed}) -> None:\n{rebuild}        {name}({args})\n\n    @_{out}.register_fake\n    def _({flat}):\n        return None\n",
            name = k.name,
            out = torch_out_op(&k.name),
            mutated = mutated.trim_end(),
            typed = typed(&flat),
            rebuild = rebuild(None),
            args = all_args.join(", "),
            flat = names(&flat),
        ));
        if shapes.is_some() {
            let outs: Vec<&ir::TensorArg> = k.args.iter().filter(|a| a.role == Role::Out).collect();
            // Outputs are made like the first input tensor (its device), or on the
            // current CUDA device when the kernel has no input tensor.
            let like = flat_in
                .iter()
                .find(|(_, t)| *t == "_torch.Tensor")
                .map(|(n, _)| n.as_str());
            let ret = if outs.len() == 1 {
                "_torch.Tensor".to_string()
            } else {
                format!("tuple[{}]", vec!["_torch.Tensor"; outs.len()].join(", "))
            };
            let shape_vars: Vec<String> = outs.iter().map(|a| shape_local(&a.name)).collect();
            let alloc: String = outs
                .iter()
                .map(|a| {
                    let dtype = format!("_torch.{}", torch_name(a.dtype));
                    match like {
                        Some(x) => format!(
                            "        {o} = {x}.new_empty({s}, dtype={dtype})\n",
                            o = a.name,
                            s = shape_local(&a.name)
                        ),
                        None => format!(
                            "        {o} = _torch.empty({s}, dtype={dtype}, device=\"cuda\")\n",
                            o = a.name,
                            s = shape_local(&a.name)
                        ),
                    }
                })
                .collect();
            let returned = outs
                .iter()
                .map(|a| a.name.as_str())
                .collect::<Vec<_>>()
                .join(", ");
            let unpack = format!(
                "{}        ({},) = {shapes}({args})\n",
                rebuild(Some(Role::In)),
                shape_vars.join(", "),
                shapes = python_output_shapes(&k.name),
                args = inputs.join(", ")
            );
            s.push_str(&format!(
                "\n    @_torch.library.custom_op(\"{ns}::{name}\", mutates_args=())\n    def _{name}_op({typed}) -> {ret}:\n{unpack}{alloc}        {name}({args})\n        return {returned}\n\n    @_{name}_op.register_fake\n    def _({flat}):\n{unpack}{alloc}        return {returned}\n",
                name = k.name,
                typed = typed(&flat_in),
                args = all_args.join(", "),
                flat = names(&flat_in),
            ));
        }
    }
    s.push_str(&format!(
        "\n\nops = getattr(_torch.ops, {ns:?}) if _torch is not None else None\n\n__all__ = {all:?}\n"
    ));
    s.replace("__all__ = [", "__all__ = [\n    ")
        .replace("\", \"", "\",\n    \"")
        .replace("\"]\n", "\",\n]\n")
}
fn torch_name(d: ir::DType) -> &'static str {
    use ir::DType::*;
    match d {
        F16 => "float16",
        BF16 => "bfloat16",
        F32 => "float32",
        F64 => "float64",
        I8 => "int8",
        U8 => "uint8",
        I16 => "int16",
        U16 => "uint16",
        I32 => "int32",
        U32 => "uint32",
        I64 => "int64",
        U64 => "uint64",
        E4M3 => "float8_e4m3fn",
        E5M2 => "float8_e5m2",
    }
}

/// A spec argument's type in the stubs.
fn pyi_type(a: &ir::TensorArg) -> &'static str {
    if a.quant.is_some() {
        "QuantWeight"
    } else {
        "Array"
    }
}

/// `name: type` of each argument `keep` takes, then of each scalar param, for the stubs.
fn pyi_params(k: &ir::Kernel, keep: impl Fn(&ir::TensorArg) -> bool) -> Vec<String> {
    k.args
        .iter()
        .filter(|a| keep(a))
        .map(|a| format!("{}: {}", a.name, pyi_type(a)))
        .chain(
            k.params
                .iter()
                .map(|p| format!("{}: {}", p.name, py_type(p.dtype))),
        )
        .collect()
}

fn init_pyi(m: &ir::Module, kernels: &[&ir::Kernel]) -> String {
    let mut s = format!(
        "# Type stubs of the kernels of `{}`, generated by imac {}.\nimport typing\n\nimport torch\n\nSPEC_FILE: str\n\nclass ContractError(ValueError): ...\nclass DeviceError(RuntimeError): ...\n\nclass CudaArray(typing.Protocol):\n    \"\"\"A `__cuda_array_interface__` producer (CuPy, Numba): its `stream` is waited for.\"\"\"\n    @property\n    def __cuda_array_interface__(self) -> dict[str, typing.Any]: ...\n\nclass DLPackArray(typing.Protocol):\n    \"\"\"A `__dlpack__` producer: asked for its array on the launch stream.\"\"\"\n    def __dlpack__(self, *, stream: int | None = ...) -> typing.Any: ...\n    def __dlpack_device__(self) -> tuple[int, int]: ...\n\n# What a tensor argument takes.\nArray = torch.Tensor | CudaArray | DLPackArray\n\n# A quantized weight's part: its shape is read where the weight is made.\nPart = torch.Tensor | CudaArray\n\nclass QuantWeight:\n    \"\"\"A quantized weight as its parts (see _imac.QuantWeight).\"\"\"\n    format: str\n    qweight: Part\n    qzeros: Part | None\n    scales: Part\n    g_idx: Part | None\n    k: int\n    n: int\n    group_size: int\n    def __init__(self, format: str, *, qweight: Part, scales: Part, group_size: int, qzeros: Part | None = None, g_idx: Part | None = None, k: int | None = None) -> None: ...\n\ndef set_checked(mode: str) -> None:\n    \"\"\"Checked mode for every kernel: 'off', 'wait' or 'deferred'.\"\"\"\n\ndef set_sync(on: bool) -> None:\n    \"\"\"Sync mode for every kernel: synchronise after each launch.\"\"\"\n\ndef check_deferred() -> None:\n    \"\"\"Waits for deferred checked launches; raises DeviceError for a violation.\"\"\"\n\nops: object\n",
        m.file,
        crate::VERSION
    );
    for (name, _) in &m.consts {
        s.push_str(&format!("{name}: int\n"));
    }
    for k in kernels {
        let typed = pyi_params(k, |_| true);
        if ima_dsl::abi::has_value_contracts(k) {
            // A function with a `validate` attribute: a callable protocol.
            s.push_str(&format!(
                "\nclass _{name}_kernel(typing.Protocol):\n    def __call__(self, {args}) -> None:\n        \"\"\"{doc}\"\"\"\n    def validate(self, {args}) -> None:\n        \"\"\"Checks every entry of the arguments with value contracts on the host; launches nothing.\"\"\"\n\n{name}: _{name}_kernel\n",
                name = k.name,
                args = typed.join(", "),
                doc = docstring(m, k, "").replace("\n    ", "\n        "),
            ));
        } else {
            s.push_str(&format!(
                "\ndef {}({}) -> None:\n    \"\"\"{}\"\"\"\n",
                k.name,
                typed.join(", "),
                docstring(m, k, "")
            ));
        }
        if output_shapes(k).is_some() {
            let mut typed_in = pyi_params(k, |a| a.role == Role::In);
            typed_in.extend(output_symbols(k).iter().map(|s| format!("{s}: int")));
            s.push_str(&format!(
                "\ndef {}({}) -> tuple[tuple[int, ...], ...]: ...\n",
                python_output_shapes(&k.name),
                typed_in.join(", ")
            ));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::{PACKAGE_NAMES, init_py, init_pyi, py_expr, shape_local};
    use crate::random_exprs::{PARAMS, SYMBOLS, assert_values, cases, kernel};
    use std::fmt::Write;

    /// What `python3` prints running `program`; fails with its errors if it fails.
    fn run_python(program: &str) -> String {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("program.py");
        std::fs::write(&src, program).unwrap();
        let ran = std::process::Command::new("python3")
            .arg(&src)
            .output()
            .expect("running python3");
        assert!(
            ran.status.success(),
            "{program}\n{}",
            String::from_utf8_lossy(&ran.stderr)
        );
        String::from_utf8(ran.stdout).unwrap()
    }

    /// The Python the package prints for an extent (its outputs' shapes), run by `python3`
    /// with the package's `_imac.py`, gives the value of the contract's one evaluator on
    /// random expressions and inputs wherever that evaluation succeeds: C's truncating `/`
    /// and `%`, not Python's flooring ones, and 0 or 1 from logic.
    #[test]
    fn python_text_evaluates_as_the_contract() {
        let k = kernel();
        let cases = cases(29, 2000);
        let mut program = format!(
            "import sys\nsys.path.insert(0, {:?})\nimport _imac\n",
            concat!(env!("CARGO_MANIFEST_DIR"), "/templates/python")
        );
        for c in &cases {
            for (name, v) in SYMBOLS.iter().zip(&c.symbols) {
                write!(program, "{} = {v}; ", shape_local(name)).unwrap();
            }
            for ((name, _), v) in PARAMS.iter().zip(&c.params) {
                write!(program, "{name} = {v}; ").unwrap();
            }
            writeln!(program, "print(int({}))", py_expr(&k, &c.expr)).unwrap();
        }
        let out = run_python(&program);
        assert_values(&cases, &out, |e| py_expr(&k, e));
    }

    /// A docstring holds its doc lines as written: a backslash (a Windows path, a line's
    /// last character) is not read as an escape, and Python parses it.
    #[test]
    fn a_docstring_keeps_its_backslashes() {
        let source = ima_dsl::Source::new(
            "specs/t.ima",
            "/// Reads C:\\Users\\name, and ends in a backslash: \\\nkernel k {\n    in x: f32[N]\n    out y: f32[N]\n    launch over y[i]\n    body { y(i) = x(i); }\n}\n",
        );
        let m = ima_dsl::compile(&source).expect("the spec checks");
        let text = super::docstring(&m, &m.kernels[0], "");
        let out = run_python(&format!("print(\"\"\"{text}\"\"\")"));
        assert!(
            out.contains("Reads C:\\Users\\name, and ends in a backslash: \\\n"),
            "{out}"
        );
    }

    /// A spec cannot name a kernel or a constant as the package's own exports: the checker
    /// reserves each of them (and SPEC_FILE, ops).
    #[test]
    fn the_package_s_own_names_are_reserved() {
        for name in PACKAGE_NAMES.iter().chain(&["SPEC_FILE", "ops"]) {
            assert!(ima_dsl::reserved(name).is_some(), "{name} is not reserved");
        }
    }

    /// The package `NAME_kernels` of a spec `specs/NAME.ima` holding `text`: its
    /// `__init__.py` and its stubs.
    fn package(name: &str, text: &str) -> (String, String) {
        let source = ima_dsl::Source::new(format!("specs/{name}.ima"), text);
        let module = ima_dsl::compile(&source).expect("the spec checks");
        let kernels: Vec<&ima_dsl::ir::Kernel> = module.kernels.iter().collect();
        (
            init_py(&module, &format!("{name}_kernels"), &kernels),
            init_pyi(&module, &kernels),
        )
    }

    /// A symbol only an output carries (a y that may be half as wide as x) is an `int`
    /// parameter, after the params, of the shape function and of the op that allocates the
    /// outputs, and the stubs type it.
    #[test]
    fn an_output_symbol_is_a_parameter_of_the_shape_function_and_the_op() {
        let (py, pyi) = package(
            "half",
            "kernel pick where NY == N || 2 * NY == N {\n    in x: f32[N]\n    out y: f32[NY]\n    param scale: f32\n    launch over y[i]\n    body { y(i) = x(i) * scale; }\n}\n",
        );
        for line in [
            "def pick_output_shapes(x, scale, NY):",
            "    _s_NY = NY",
            "    return (",
            "        _imac.output_shape(\"kernel pick: argument `y`\", (_s_NY,), (\"NY\",), ContractError),",
            "    )",
            "    def _pick_op(x: _torch.Tensor, scale: float, NY: int) -> _torch.Tensor:",
            "        (_s_y,) = pick_output_shapes(x, scale, NY)",
        ] {
            assert!(py.lines().any(|l| l == line), "no `{line}` in:\n{py}");
        }
        assert!(
            pyi.lines()
                .any(|l| l == "def pick_output_shapes(x: Array, scale: float, NY: int) -> tuple[tuple[int, ...], ...]: ..."),
            "{pyi}"
        );
    }

    /// An input named `s_M` beside the symbol `M` that an earlier input binds: the shape
    /// function's locals take the `_` no spec name starts with, so the input is still the
    /// tensor when the function reads its shape (with the locals `s_M`, `s_N`, the first
    /// statement made `s_M` an int, and the second failed on its `.shape`).
    #[test]
    fn the_shape_function_s_locals_leave_the_arguments_alone() {
        let (py, _) = package(
            "locals",
            "kernel pad {\n    in x: f32[M]\n    in s_M: f32[N]\n    out y: f32[N, M]\n    launch over y[i, j]\n    body { y(i, j) = s_M(i) + x(j); }\n}\n",
        );
        let start = py.find("def pad_output_shapes(").expect("a shape function");
        let end = start + py[start..].find("\n\n").unwrap();
        let program = format!(
            "import sys\nsys.path.insert(0, {:?})\nimport _imac\nContractError = ValueError\n\nclass Tensor:\n    def __init__(self, *shape):\n        self.shape = shape\n\n{}\n\nprint(pad_output_shapes(Tensor(3), Tensor(5)))\n",
            concat!(env!("CARGO_MANIFEST_DIR"), "/templates/python"),
            &py[start..end]
        );
        assert_eq!(run_python(&program), "((5, 3),)\n");
    }

    /// A spec's constants are the package's module attributes, exported and typed.
    #[test]
    fn a_spec_s_constants_are_module_attributes() {
        let (py, pyi) = package(
            "tiles",
            "/// Rows of a tile.\nconst TILE = 32\n\nkernel copy {\n    in x: f32[N]\n    out y: f32[N]\n    launch over y[i]\n    body { y(i) = x(i) + TILE; }\n}\n",
        );
        assert!(py.lines().any(|l| l == "TILE = 32"), "{py}");
        assert!(py.contains("\n    \"TILE\",\n"), "not in __all__: {py}");
        assert!(pyi.lines().any(|l| l == "TILE: int"), "{pyi}");
    }
}
