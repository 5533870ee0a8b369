//! `#[ima_kernel]`'s compile errors as rustc shows them, against the committed
//! `tests/ui/*.stderr` (`TRYBUILD=overwrite cargo test --test front_doors_ui` rewrites them;
//! review the diff).

use std::path::{Path, PathBuf};

/// trybuild compiles each case in a crate of its own under the target directory, whose
/// root (CARGO_MANIFEST_DIR, where `#[ima_kernel]` resolves spec paths) is not this one:
/// the cases' specs are copied there, at the same relative paths.
fn stage_specs() -> std::io::Result<()> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let target = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .unwrap_or(root);
    let staged = target.join("tests/trybuild/ima/tests/ui");
    std::fs::create_dir_all(&staged)?;
    for entry in std::fs::read_dir(root.join("tests/ui"))? {
        let path: PathBuf = entry?.path();
        if path.extension().is_some_and(|x| x == "ima") {
            std::fs::copy(&path, staged.join(path.file_name().unwrap_or_default()))?;
        }
    }
    Ok(())
}

#[test]
fn ima_kernel_reports_spec_errors_as_rust_errors() {
    if std::env::var_os("IMA_GPU").is_some() {
        // `.gpu/on-device` sets IMA_GPU; that machine has no Rust toolchain. CI runs this.
        eprintln!("not run on the GPU machine: this test drives cargo, which it lacks");
        return;
    }
    stage_specs().expect("staging the UI cases' specs");
    trybuild::TestCases::new().compile_fail("tests/ui/*.rs");
}
