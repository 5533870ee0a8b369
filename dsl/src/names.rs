//! The names the Rust and Python back ends derive from a spec's kernel and argument names,
//! written once: the back ends print them and the checker (check/names.rs) refuses a spec
//! in which two of them, or one and a spec name, would be the same identifier.
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
