//! Whether a kernel may start before the kernel ahead of it in a graph has finished:
//! programmatic dependent launch (PDL), on devices of compute capability 9.0 and later,
//! for the kernels whose contract has `early` arguments
//! ([`KernelContract::starts_early`](crate::contract::KernelContract::starts_early)).
//!
//! Why that is safe: such a kernel's body reads only its `early` arguments (inputs no
//! kernel ahead of it writes) before `ima_wait_for_inputs()`, which returns once the grids
//! ahead have completed and their writes are visible, and every thread waits again before
//! it exits (codegen/include/ima.cuh). The graph checks the rest: no node ahead of it
//! writes an `early` argument (crate::graph). A module without the wait (built for an
//! architecture before sm_90, or by hand) has no marker, and its kernels keep ordinary
//! edges. Direct launches keep stream order: what a stream ran before is not known.

use std::sync::OnceLock;

/// The off switch: `IMA_PROGRAMMATIC_LAUNCH=0` gives every graph ordinary edges only, for
/// debugging and for benchmarks that compare both.
pub(crate) const ENV: &str = "IMA_PROGRAMMATIC_LAUNCH";

/// The global a generated module built for sm_90 or later defines (codegen/include/ima.cuh):
/// its kernels' waits are compiled in.
const MARKER: &str = "ima_programmatic_wait";

/// Whether a module's kernels that start early may, on a device of compute capability
/// `major`.x, the module's PTX defining the marker (`waits`), with `env` the value of
/// [`ENV`].
pub(crate) fn allows(major: i32, waits: bool, env: Option<&str>) -> bool {
    major >= 9 && waits && env.is_none_or(|v| v.trim() != "0")
}

/// [`allows`] with [`ENV`] as the process started with (read once).
pub(crate) fn enabled(major: i32, ptx: &str) -> bool {
    static ENV_VALUE: OnceLock<Option<String>> = OnceLock::new();
    let env = ENV_VALUE.get_or_init(|| std::env::var(ENV).ok());
    allows(major, waits_for_grids(ptx), env.as_deref())
}

/// The PTX defines the marker (a text search: a failed `cuModuleGetGlobal` would be an API
/// error that compute-sanitizer reports).
fn waits_for_grids(ptx: &str) -> bool {
    ptx.lines().any(|line| {
        line.contains(".global")
            && line
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .any(|word| word == MARKER)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn on_from_sm_90_for_modules_that_wait_unless_the_variable_says_0() {
        assert!(allows(9, true, None));
        assert!(allows(10, true, None));
        assert!(allows(12, true, Some("1")));
        assert!(allows(9, true, Some("")));
        // Ampere and older have no programmatic launch.
        assert!(!allows(8, true, None));
        // A module without the wait could read its inputs before they are written.
        assert!(!allows(9, false, None));
        assert!(!allows(9, true, Some("0")));
        assert!(!allows(9, true, Some(" 0\n")));
    }

    #[test]
    fn modules_wait_where_the_ptx_defines_the_marker() {
        let entry = ".visible .entry k(\n.param .u64 k_param_0\n)\n{\n\tret;\n}\n";
        let marked = format!(
            ".version 8.8\n.target sm_90\n\n\
             .visible .global .align 4 .u32 ima_programmatic_wait = 1;\n\n{entry}"
        );
        assert!(waits_for_grids(&marked));
        assert!(!waits_for_grids(entry));
        // Another global of a similar name, or the name outside a global's definition.
        assert!(!waits_for_grids(
            ".visible .global .align 4 .u32 ima_programmatic_wait_not = 1;\n"
        ));
        assert!(!waits_for_grids("// ima_programmatic_wait\n"));
    }
}
