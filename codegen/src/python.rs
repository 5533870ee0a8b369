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
//! `torch.compile`). Kernels with quantized arguments are left out for now.

use askama::Template;
use ima_dsl::ir::{self, BinOp, Expr, Role};

use crate::package::{CrateOptions, GeneratedFile, RuntimeDep};

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
    contracts: Vec<String>,
}

/// The shared Python layer, the same in every package.
const IMAC_PY: &str = include_str!("../templates/python/_imac.py");

/// `rmsnorm_kernels`: the Python package and the Rust library of `specs/rmsnorm.ima`.
pub fn package_name(m: &ir::Module) -> String {
    format!("{}_kernels", crate::stem(&m.file).replace('-', "_"))
}

/// The kernels the Python package exposes: all but those with quantized arguments.
fn exposed(m: &ir::Module) -> Vec<&ir::Kernel> {
    m.kernels
        .iter()
        .filter(|k| k.args.iter().all(|a| a.quant.is_none()))
        .collect()
}

fn runtime_toml(r: &RuntimeDep) -> String {
    match r {
        RuntimeDep::Path(p) => format!("{{ path = {p:?} }}"),
        RuntimeDep::Version(v) => format!("{v:?}"),
    }
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
    let kernels = exposed(m);
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
                        runtime: runtime_toml(&options.runtime),
                    })
                }
                "src/lib.rs" => f.contents.push_str(
                    "\n/// The Python module `_native`, built by maturin (`pyproject.toml`).\nmod python;\n",
                ),
                _ => {}
            }
            f
        })
        .collect();
    let file = |path: String, contents: String| GeneratedFile { path, contents };
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
            contracts: kernels
                .iter()
                .map(|k| k.name.to_ascii_uppercase())
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
        let mut line = format!(
            "{} ({role}): {} [{}], {}",
            a.name,
            a.dtype.name(),
            dims.join(", "),
            if a.strided {
                "any strides"
            } else {
                "contiguous"
            }
        );
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
    s.replace('"', "'")
}

fn py_type(d: ir::DType) -> &'static str {
    if d.is_integer() { "int" } else { "float" }
}

/// An extent as a Python expression over `s_NAME` symbol variables and params.
fn py_expr(k: &ir::Kernel, e: &Expr) -> String {
    match e {
        Expr::Const(v) => v.to_string(),
        Expr::Sym(s) => format!("s_{}", k.symbols[*s].name),
        Expr::Param(p) => k.params[*p].name.clone(),
        Expr::Neg(a) => format!("(-{})", py_expr(k, a)),
        Expr::Not(a) => format!("(not {})", py_expr(k, a)),
        Expr::Bin(op, a, b) => {
            let (a, b) = (py_expr(k, a), py_expr(k, b));
            match op {
                BinOp::Add => format!("({a} + {b})"),
                BinOp::Sub => format!("({a} - {b})"),
                BinOp::Mul => format!("({a} * {b})"),
                BinOp::Div => format!("({a} // {b})"),
                BinOp::Rem => format!("({a} % {b})"),
                BinOp::CeilDiv => format!("(-((-{a}) // {b}))"),
                BinOp::Min => format!("_imac.sym_min({a}, {b})"),
                BinOp::Max => format!("_imac.sym_max({a}, {b})"),
                BinOp::Eq => format!("({a} == {b})"),
                BinOp::Ne => format!("({a} != {b})"),
                BinOp::Lt => format!("({a} < {b})"),
                BinOp::Le => format!("({a} <= {b})"),
                BinOp::Gt => format!("({a} > {b})"),
                BinOp::Ge => format!("({a} >= {b})"),
                BinOp::And => format!("({a} and {b})"),
                BinOp::Or => format!("({a} or {b})"),
            }
        }
    }
}

/// The body of `NAME_output_shapes(inputs..., params...)`, when every output's shape
/// follows from the inputs and params: each symbol from its input's dimension, then each
/// output's physical shape.
fn output_shapes(k: &ir::Kernel) -> Option<Vec<String>> {
    if k.args.iter().any(|a| a.role == Role::InOut) || !k.args.iter().any(|a| a.role == Role::Out) {
        return None;
    }
    let mut lines = Vec::new();
    for s in &k.symbols {
        let a = &k.args[s.arg];
        if a.role != Role::In {
            return None;
        }
        let p = a.stored.iter().position(|&l| l == s.dim)?;
        lines.push(format!("s_{} = {}.shape[{p}]", s.name, a.name));
    }
    let shapes: Vec<String> = k
        .args
        .iter()
        .filter(|a| a.role == Role::Out)
        .map(|a| {
            let dims: Vec<String> = a.physical_dims().map(|d| py_expr(k, &d.expr)).collect();
            format!(
                "({}{})",
                dims.join(", "),
                if dims.len() == 1 { "," } else { "" }
            )
        })
        .collect();
    lines.push(format!("return ({},)", shapes.join(", ")));
    Some(lines)
}

fn init_py(m: &ir::Module, lib: &str, kernels: &[&ir::Kernel]) -> String {
    let ns = format!("imac_{lib}");
    let mut s = format!(
        r#""""The kernels of `{spec}`, generated by imac {version}. Do not edit.

Each function checks its arguments against the kernel's contract (the same checker as
the Rust stubs) and raises ContractError (a ValueError) with the same text, before
anything reaches the GPU; a report from the device (checked mode, a bad index value, a
fault in sync mode) raises DeviceError (a RuntimeError). Launches run on
torch.cuda.current_stream() of the tensors' device. IMA_CHECKED=1, IMA_CHECKED=deferred
and IMA_SYNC=1 apply as in Rust; set_checked, set_sync and check_deferred set them here.

Every kernel is also a torch.library.custom_op in the namespace `{ns}`: NAME_out writes
the outputs it is given; NAME allocates its outputs and returns them, where the spec's
shapes give them from the inputs (with a register_fake for torch.compile).
"""

from . import _imac
from . import _native
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
    let mut all = vec![
        "ContractError".to_string(),
        "DeviceError".into(),
        "check_deferred".into(),
        "set_checked".into(),
        "set_sync".into(),
    ];
    for (index, k) in kernels.iter().enumerate() {
        let tensors: Vec<&str> = k.args.iter().map(|a| a.name.as_str()).collect();
        let params: Vec<&str> = k.params.iter().map(|p| p.name.as_str()).collect();
        let all_args: Vec<&str> = tensors.iter().chain(&params).copied().collect();
        let named: Vec<String> = tensors.iter().map(|t| format!("({t:?}, {t})")).collect();
        let param_tuple = if params.is_empty() {
            "()".to_string()
        } else {
            format!("({},)", params.join(", "))
        };
        let doc = docstring(
            m,
            k,
            "\n    Writes the outputs in place and returns None. Raises ContractError (a\n    ValueError) for arguments that break the contract.\n",
        );
        s.push_str(&format!(
            "\n\ndef {name}({args}):\n    \"\"\"{doc}\"\"\"\n    _imac.launch(_native, {index}, {name:?}, ({named},), {param_tuple})\n",
            name = k.name,
            args = all_args.join(", "),
            named = named.join(", "),
        ));
        all.push(k.name.clone());
        let shapes = output_shapes(k);
        let inputs: Vec<&str> = k
            .args
            .iter()
            .filter(|a| a.role == Role::In)
            .map(|a| a.name.as_str())
            .chain(params.iter().copied())
            .collect();
        if let Some(lines) = &shapes {
            s.push_str(&format!(
                "\n\ndef {name}_output_shapes({args}):\n    \"\"\"The shapes of `{name}`'s outputs ({outs}), from its inputs' shapes and\n    params, as the spec's extents give them.\"\"\"\n",
                name = k.name,
                args = inputs.join(", "),
                outs = k
                    .args
                    .iter()
                    .filter(|a| a.role == Role::Out)
                    .map(|a| a.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            ));
            for l in lines {
                s.push_str(&format!("    {l}\n"));
            }
            all.push(format!("{}_output_shapes", k.name));
        }
        // The custom ops.
        let ann = |a: &ir::TensorArg| format!("{}: _torch.Tensor", a.name);
        let typed: Vec<String> = k
            .args
            .iter()
            .map(ann)
            .chain(
                k.params
                    .iter()
                    .map(|p| format!("{}: {}", p.name, py_type(p.dtype))),
            )
            .collect();
        let mutated: Vec<String> = k
            .args
            .iter()
            .filter(|a| a.role != Role::In)
            .map(|a| format!("{:?}", a.name))
            .collect();
        s.push_str(&format!(
            "\n\nif _torch is not None:\n\n    @_torch.library.custom_op(\"{ns}::{name}_out\", mutates_args=({mutated},))\n    def _{name}_out({typed}) -> None:\n        {name}({args})\n\n    @_{name}_out.register_fake\n    def _({args}):\n        return None\n",
            name = k.name,
            mutated = mutated.join(", "),
            typed = typed.join(", "),
            args = all_args.join(", "),
        ));
        if shapes.is_some() {
            let outs: Vec<&ir::TensorArg> = k.args.iter().filter(|a| a.role == Role::Out).collect();
            let first = k
                .args
                .iter()
                .find(|a| a.role == Role::In)
                .map(|a| a.name.as_str());
            let typed_in: Vec<String> = k
                .args
                .iter()
                .filter(|a| a.role == Role::In)
                .map(ann)
                .chain(
                    k.params
                        .iter()
                        .map(|p| format!("{}: {}", p.name, py_type(p.dtype))),
                )
                .collect();
            let ret = if outs.len() == 1 {
                "_torch.Tensor".to_string()
            } else {
                format!("tuple[{}]", vec!["_torch.Tensor"; outs.len()].join(", "))
            };
            let shape_vars: Vec<String> = outs.iter().map(|a| format!("s_{}", a.name)).collect();
            let alloc = |fake: bool| -> String {
                outs.iter()
                    .map(|a| {
                        let dtype = format!("_torch.{}", torch_name(a.dtype));
                        match (fake, first) {
                            (_, Some(x)) => format!(
                                "        {o} = {x}.new_empty(s_{o}, dtype={dtype})\n",
                                o = a.name
                            ),
                            (_, None) => format!(
                                "        {o} = _torch.empty(s_{o}, dtype={dtype}, device=\"cuda\")\n",
                                o = a.name
                            ),
                        }
                    })
                    .collect()
            };
            let returned = outs
                .iter()
                .map(|a| a.name.as_str())
                .collect::<Vec<_>>()
                .join(", ");
            let unpack = format!(
                "        ({},) = {name}_output_shapes({args})\n",
                shape_vars.join(", "),
                name = k.name,
                args = inputs.join(", ")
            );
            s.push_str(&format!(
                "\n    @_torch.library.custom_op(\"{ns}::{name}\", mutates_args=())\n    def _{name}_op({typed}) -> {ret}:\n{unpack}{alloc}        {name}({args})\n        return {returned}\n\n    @_{name}_op.register_fake\n    def _({inputs}):\n{unpack}{fake_alloc}        return {returned}\n",
                name = k.name,
                typed = typed_in.join(", "),
                alloc = alloc(false),
                fake_alloc = alloc(true),
                args = all_args.join(", "),
                inputs = inputs.join(", "),
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

fn init_pyi(m: &ir::Module, kernels: &[&ir::Kernel]) -> String {
    let mut s = format!(
        "# Type stubs of the kernels of `{}`, generated by imac {}.\nimport torch\n\nSPEC_FILE: str\n\nclass ContractError(ValueError): ...\nclass DeviceError(RuntimeError): ...\n\ndef set_checked(mode: str) -> None:\n    \"\"\"Checked mode for every kernel: 'off', 'wait' or 'deferred'.\"\"\"\n\ndef set_sync(on: bool) -> None:\n    \"\"\"Sync mode for every kernel: synchronise after each launch.\"\"\"\n\ndef check_deferred() -> None:\n    \"\"\"Waits for deferred checked launches; raises DeviceError for a violation.\"\"\"\n\nops: object\n",
        m.file,
        crate::VERSION
    );
    for k in kernels {
        let typed: Vec<String> = k
            .args
            .iter()
            .map(|a| format!("{}: torch.Tensor", a.name))
            .chain(
                k.params
                    .iter()
                    .map(|p| format!("{}: {}", p.name, py_type(p.dtype))),
            )
            .collect();
        s.push_str(&format!(
            "\ndef {}({}) -> None:\n    \"\"\"{}\"\"\"\n",
            k.name,
            typed.join(", "),
            docstring(m, k, "")
        ));
        if output_shapes(k).is_some() {
            let typed_in: Vec<String> = k
                .args
                .iter()
                .filter(|a| a.role == Role::In)
                .map(|a| format!("{}: torch.Tensor", a.name))
                .chain(
                    k.params
                        .iter()
                        .map(|p| format!("{}: {}", p.name, py_type(p.dtype))),
                )
                .collect();
            s.push_str(&format!(
                "\ndef {}_output_shapes({}) -> tuple[tuple[int, ...], ...]: ...\n",
                k.name,
                typed_in.join(", ")
            ));
        }
    }
    s
}
