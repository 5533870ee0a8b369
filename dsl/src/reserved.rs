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
    "wchar_t",
    "char8_t",
    "char16_t",
    "char32_t",
    "thread_local",
    // The alternative spellings of operators (`and`, `or`, `not`: Python's keywords, below).
    "and_eq",
    "bitand",
    "bitor",
    "compl",
    "not_eq",
    "or_eq",
    "xor",
    "xor_eq",
    // C++20's, which NVRTC reads under -std=c++20.
    "concept",
    "requires",
    "co_await",
    "co_return",
    "co_yield",
    "consteval",
    "constinit",
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

/// Parameter names of every generated Rust launch stub (`launch`, `launch_in`, `validate`),
/// and its list of kernel arguments, which a quantized argument's stub builds in `args`.
const STUB: &[&str] = &["stream", "args", "graph"];

/// Keywords of Python, where the package's functions take the spec's arguments and params
/// by name (those of C++ and Rust are above).
const PYTHON: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield",
];

/// Macros the generated CUDA sees where a spec's name may stand: ima.cuh's `INFINITY`, and
/// those of the CUDA headers for f16, bf16 and fp8 that take no reserved prefix (below).
const MACROS: &[&str] = &["INFINITY", "NAN", "NULL", "IF_DEVICE_OR_CUDACC"];

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

/// Whether `name` starts `ima_` or `IMA_`, the prefixes of imac's own names (ima.cuh's and
/// the generated code's), which a body may not `#define` either.
pub(crate) fn imacs_prefix(name: &str) -> bool {
    ["ima_", "IMA_"].iter().any(|p| name.starts_with(p))
}

/// Whether `name` takes a prefix of the generated code's names: `ima_` (ima.cuh's functions
/// and every name the generated CUDA derives from the spec's), `IMA_` (its macros and the
/// checked-mode template parameter), `Ima` and a capital (its types), `_` (the Python
/// package's private names, and C's reserved ones), and `CUDART_` (the CUDA headers'
/// constants, which are macros).
fn generated_prefix(name: &str) -> bool {
    imacs_prefix(name)
        || ["_", "CUDART_"].iter().any(|p| name.starts_with(p))
        || name
            .strip_prefix("Ima")
            .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_uppercase()))
}

/// Why `name` is reserved, or `None` when it is free.
pub fn reserved(name: &str) -> Option<&'static str> {
    if generated_prefix(name) {
        Some(
            "names starting with `ima_`, `IMA_`, `Ima` and a capital, `_` or `CUDART_` belong to the generated code",
        )
    } else if MACROS.contains(&name) {
        Some("the generated CUDA sees a macro of that name")
    } else if CUDA_CPP.contains(&name) {
        Some("it is a keyword or built-in name in CUDA C++")
    } else if BODY.contains(&name) {
        Some("`I` is the index type (int or long long) inside bodies")
    } else if STUB.contains(&name) {
        Some("every Rust launch stub already has a parameter or local of that name")
    } else if MODULE.contains(&name) {
        Some("the generated Rust module or Python package already defines it")
    } else if RUST.contains(&name) {
        Some("it is a keyword in Rust, where it names a launch-stub argument")
    } else if PYTHON.contains(&name) {
        Some("it is a keyword in Python, where it names a parameter of the kernel's function")
    } else {
        None
    }
}
