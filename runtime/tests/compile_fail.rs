//! What must not compile: a host buffer passed as a kernel argument.
//! Regenerate the expected output with `TRYBUILD=overwrite` after a deliberate change.

#[test]
fn host_buffers_are_not_kernel_arguments() {
    trybuild::TestCases::new().compile_fail("tests/ui/*.rs");
}
