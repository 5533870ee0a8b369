//! What must not compile: a host buffer passed as a kernel argument; a tensor captured by a
//! graph dropped, written elsewhere or outliving it while the graph lives.
//! Regenerate the expected output with `TRYBUILD=overwrite` after a deliberate change.

#[test]
fn unsound_uses_do_not_compile() {
    if std::env::var_os("IMA_GPU").is_some() {
        // `.gpu/on-device` sets IMA_GPU; that machine has no Rust toolchain. CI runs this.
        eprintln!("not run on the GPU machine: this test drives cargo, which it lacks");
        return;
    }
    trybuild::TestCases::new().compile_fail("tests/ui/*.rs");
}
