//! The identifiers the generated CUDA derives from a spec's names for its own use. Each
//! starts with a prefix of its own under `ima_`, which no spec name may start with
//! (dsl/src/reserved.rs) and no identifier of ima.cuh starts with (codegen/tests/ima_cuh.rs
//! holds it to that), so no argument, symbol, param or shared array can meet one: an
//! argument `x` beside one named `x_s0` or `x_t` once made a duplicate parameter or a type
//! shadowed by a variable. (A quantized argument's buffers, `w_qweight`, are the contract's
//! names, dsl/src/names.rs, which the checker holds apart; two kernels' entry points,
//! `<kernel>_i32` and the like, cannot meet, since no suffix of theirs ends another.)

/// Each kernel's declarations (constants, accessors, body) stand in the namespace of this
/// prefix and its name, so that a kernel may take the name of one of ima.cuh's helpers less
/// the `ima_` (`ceil_div`, `rotate_half`), which a namespace `ima_<name>` made a
/// redeclaration.
pub const KERNEL_NAMESPACE_PREFIX: &str = "ima_kernel_";
const ACCESSOR_PREFIX: &str = "ima_accessor_";
const STRIDE_PREFIX: &str = "ima_stride_";
const TENSOR_MAP_PREFIX: &str = "ima_tensor_map_";
const HAD_MACRO_PREFIX: &str = "ima_had_";

/// Every prefix above, and the names of the device functions module.cu declares in each
/// kernel's namespace (`ima_body`, `ima_run`, which its entry points call unqualified), for
/// the test that ima.cuh leaves them free.
pub const DERIVED_PREFIXES: &[&str] = &[
    KERNEL_NAMESPACE_PREFIX,
    ACCESSOR_PREFIX,
    STRIDE_PREFIX,
    TENSOR_MAP_PREFIX,
    HAD_MACRO_PREFIX,
    "ima_body",
    "ima_run",
];

/// The macro that says a body's macro `name` was defined before the body (its `#define`
/// then undoes nothing the body did not do, and stays).
pub(super) fn had_macro(name: &str) -> String {
    format!("{HAD_MACRO_PREFIX}{name}")
}

/// The namespace of kernel `name`'s declarations.
pub(super) fn kernel_namespace(name: &str) -> String {
    format!("{KERNEL_NAMESPACE_PREFIX}{name}")
}

/// The accessor type (a template over the index type and checked mode) of an argument or
/// shared array.
pub(super) fn accessor_type(name: &str) -> String {
    format!("{ACCESSOR_PREFIX}{name}")
}

/// An entry point's parameter holding buffer `ident`'s stride along logical dimension `dim`
/// (read from the right, the name gives back its one pair: `dim` has no `_`).
pub(super) fn stride_param(ident: &str, dim: usize) -> String {
    format!("{STRIDE_PREFIX}{ident}_{dim}")
}

/// An entry point's parameter holding buffer `ident`'s TMA tensor map.
pub(super) fn tensor_map_param(ident: &str) -> String {
    format!("{TENSOR_MAP_PREFIX}{ident}")
}
