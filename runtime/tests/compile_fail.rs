//! What must not compile: a host buffer passed as a kernel argument.
//! Regenerate the expected output with `TRYBUILD=overwrite` after a deliberate change.

#[test]
fn host_buffers_are_not_kernel_arguments() {
    if std::env::var_os("IMA_GPU").is_some() {
        // `.gpu/on-device` sets IMA_GPU; that machine has no Rust toolchain. CI runs this.
        eprintln!("not run on the GPU machine: this test drives cargo, which it lacks");
        return;
    }
    trybuild::TestCases::new().compile_fail("tests/ui/*.rs");
}
