//! Names a spec may not use: they would collide in the generated CUDA C, C++ or Rust.

const CUDA_CPP: &[&str] = &[
    "alignas",
    "alignof",
    "asm",
    "auto",
    "bool",
    "break",
    "case",
    "catch",
    "char",
    "class",
    "const",
    "constexpr",
    "const_cast",
    "continue",
    "decltype",
    "default",
    "delete",
    "do",
    "double",
    "dynamic_cast",
    "else",
    "enum",
    "explicit",
    "export",
    "extern",
    "false",
    "float",
    "for",
    "friend",
    "goto",
    "if",
    "inline",
    "int",
    "long",
    "mutable",
    "namespace",
    "new",
    "noexcept",
    "nullptr",
    "operator",
    "private",
    "protected",
    "public",
    "register",
    "reinterpret_cast",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "static_assert",
    "static_cast",
    "struct",
    "switch",
    "template",
    "this",
    "throw",
    "true",
    "try",
    "typedef",
    "typeid",
    "typename",
    "union",
    "unsigned",
    "using",
    "virtual",
    "void",
    "volatile",
    "while",
    "threadIdx",
    "blockIdx",
    "blockDim",
    "gridDim",
    "warpSize",
    "half",
    "float2",
    "float4",
    "int2",
    "int4",
    "uint",
    "size_t",
];

const RUST: &[&str] = &[
    "as", "async", "await", "crate", "dyn", "fn", "impl", "in", "let", "loop", "match", "mod",
    "move", "mut", "pub", "ref", "self", "Self", "super", "trait", "type", "unsafe", "use",
    "where", "yield", "abstract", "become", "box", "final", "macro", "override", "priv", "typeof",
    "unsized", "gen",
];

/// Parameter names of every generated launch stub.
const STUB: &[&str] = &["stream"];

/// Names the generated CUDA gives bodies: `I`, the index type.
const BODY: &[&str] = &["I"];

/// Names a generated Rust module or Python package defines at its top level, beside the
/// spec's kernels and constants (codegen/src/python.rs's test holds the Python package's
/// names to it).
const MODULE: &[&str] = &[
    "SPEC_FILE",
    "CUDA_SOURCE",
    "Kernels",
    "ops",
    "ContractError",
    "DeviceError",
    "QuantWeight",
    "check_deferred",
    "set_checked",
    "set_sync",
];

/// Why `name` is reserved, or `None` when it is free.
pub fn reserved(name: &str) -> Option<&'static str> {
    if name.starts_with("ima_") || name.starts_with("__") {
        Some("names starting with `ima_` or `__` belong to the generated code")
    } else if CUDA_CPP.contains(&name) {
        Some("it is a keyword or built-in name in CUDA C++")
    } else if BODY.contains(&name) {
        Some("`I` is the index type (int or long long) inside bodies")
    } else if STUB.contains(&name) {
        Some("every launch stub already has a parameter of that name")
    } else if MODULE.contains(&name) {
        Some("the generated Rust module or Python package already defines it")
    } else if RUST.contains(&name) {
        Some("it is a keyword in Rust, where it names a launch-stub argument")
    } else {
        None
    }
}
