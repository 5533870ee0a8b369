//! The names the Rust and Python back ends derive from a spec's kernel and argument names,
//! written once: the back ends print them and the checker (check/names.rs) refuses a spec
//! in which two of them, or one and a spec name, would be the same identifier. Below them,
//! the generated code's own names where the spec's stand, which the checker starts each
//! namespace with.
//!
//! The generated CUDA's own derived names need no check: each takes a prefix of its own
//! under the reserved `ima_` (codegen/src/cuda/names.rs); nor do the Python package's
//! private names, which start with the reserved `_`. A quantized argument's buffers are
//! named here ([`quant_buffer`]), as the CUDA's parameters and the custom ops' alike.

/// `attn_scores` as a Rust type: `AttnScores` (`_` dropped, each word capitalised).
pub fn camel_case(name: &str) -> String {
    name.split('_')
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase())
                .into_iter()
                .chain(c)
                .collect::<String>()
        })
        .collect()
}

/// A kernel's Rust struct: `AttnScores` for `attn_scores`.
pub fn rust_kernel_type(kernel: &str) -> String {
    camel_case(kernel)
}

/// The struct of a kernel's named arguments: `AttnScoresArgs` for `attn_scores`.
pub fn rust_args_struct(kernel: &str) -> String {
    format!("{}Args", camel_case(kernel))
}

/// A kernel's contract, a Rust static: `ATTN_SCORES` for `attn_scores`.
pub fn rust_contract_static(kernel: &str) -> String {
    kernel.to_ascii_uppercase()
}

/// The Python function giving a kernel's output shapes from its inputs.
pub fn python_output_shapes(kernel: &str) -> String {
    format!("{kernel}_output_shapes")
}

/// The torch custom op that writes a kernel's outputs in place (the kernel's own name is
/// the op that allocates them).
pub fn torch_out_op(kernel: &str) -> String {
    format!("{kernel}_out")
}

/// A custom op's parameter for quantized argument `arg`'s buffer `part` (`w_qweight`), which
/// is also that buffer's name in the generated CUDA.
pub fn quant_buffer(arg: &str, part: &str) -> String {
    format!("{arg}_{part}")
}

/// A custom op's parameter for quantized argument `arg`'s group size.
pub fn quant_group_size(arg: &str) -> String {
    format!("{arg}_group_size")
}

/// A custom op's parameter for quantized argument `arg`'s K (its rows).
pub fn quant_k(arg: &str) -> String {
    format!("{arg}_k")
}

// The generated code's own names where the spec's names also stand: names it uses
// unqualified, and those it defines. The checker (check/names.rs) refuses a spec name, or
// a name derived from one (`Kernels` of a kernel `kernels`), that one of its own would
// meet; some are also reserved.rs's, which refuses them as spec names everywhere.
// codegen/tests/unqualified_names.rs reads back the generated Rust, Python and CUDA (the
// functions it calls) and holds every such name of theirs to these lists; TORCH_OPS_NAMES
// is torch's, held to torch's op namespaces by tests/python/test_gpu.py (torch is on the GPU
// machine only).

/// The generated Rust module's types, beside each kernel's structs: its struct of every
/// kernel, its import, and the prelude's types, which a kernel's struct would shadow.
pub const RUST_MODULE_TYPES: &[&str] =
    &["Kernels", "Arc", "Result", "Option", "Vec", "Box", "String"];

/// The generated Rust module's values, beside the spec's constants and each kernel's
/// contract static: its constants and the crate root's, the prelude's variants, and the
/// parameters and locals of `Kernels`' methods.
pub const RUST_MODULE_VALUES: &[&str] = &[
    "CUDA_SOURCE",
    "SPEC_FILE",
    "SPEC_HASH",
    "IMAC_VERSION",
    "Ok",
    "Err",
    "Some",
    "module",
    "ctx",
    "on",
    "mode",
];

/// Of [`RUST_MODULE_VALUES`], those a launch stub's `let` sees, where it binds the kernel's
/// arguments and params by name: the module's constants, and the prelude's variants (a
/// field `Ok` would be a pattern of the variant; `None` is a Python keyword, reserved).
pub const RUST_STUB_SEES: &[&str] = &["CUDA_SOURCE", "SPEC_FILE", "Ok", "Err", "Some"];

/// The builtins and imports the Python package's `__init__.py` and `__init__.pyi` use or
/// define at their top level, beside the spec's kernels and constants (its private names
/// start with the reserved `_`).
pub const PYTHON_PACKAGE_NAMES: &[&str] = &[
    "getattr",
    "tuple",
    "dict",
    "str",
    "object",
    "typing",
    "torch",
    "Array",
    "Part",
    "CudaArray",
    "DLPackArray",
    "ImportError",
    "ValueError",
    "RuntimeError",
    "property",
];

/// The attributes of `torch.ops.NAMESPACE` that are not custom ops.
pub const TORCH_OPS_NAMES: &[&str] = &["name"];

/// The functions the accessors in each kernel's namespace of the generated CUDA call
/// unqualified.
pub const CUDA_NAMESPACE_CALLS: &[&str] = &["min", "max", "memcpy"];
