//! `imac compile` refuses a spec whose path cannot name or be quoted in what it writes (the
//! crate's and Python package's names come from the file's stem; the path is quoted in
//! Rust, C and TOML strings), before anything is written; `imac fuzz` and `imac waits`
//! refuse one that NVRTC cannot name.

use std::path::Path;
use std::process::Command;

/// specs/rmsnorm.ima copied to `name` under a fresh directory, compiled with `--python`:
/// the exit status, stderr, and whether the output directory was made.
fn compile_as(name: &str) -> (Option<i32>, String, bool) {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join(name);
    std::fs::create_dir_all(spec.parent().unwrap()).unwrap();
    let text = Path::new(env!("CARGO_MANIFEST_DIR")).join("../specs/rmsnorm.ima");
    std::fs::copy(text, &spec).unwrap();
    let out = dir.path().join("out");
    let run = Command::new(env!("CARGO_BIN_EXE_imac"))
        .arg("compile")
        .arg(&spec)
        .arg("--python")
        .arg("-o")
        .arg(&out)
        .output()
        .expect("running imac");
    let stderr = String::from_utf8_lossy(&run.stderr).into_owned();
    (run.status.code(), stderr, out.exists())
}

#[test]
fn a_file_name_that_cannot_name_the_crate_is_refused() {
    // `_k` would make the crate `-k-kernels`, which Cargo refuses.
    for name in ["my.spec.ima", "1st.ima", "rms norm.ima", "_k.ima"] {
        let (code, stderr, written) = compile_as(name);
        assert_eq!(code, Some(1), "{name}: {stderr}");
        assert!(
            stderr.contains("cannot name the generated crate"),
            "{name}: {stderr}"
        );
        assert!(!written, "{name}: nothing is written");
    }
}

#[test]
fn a_path_the_generated_strings_cannot_quote_is_refused() {
    let (code, stderr, written) = compile_as("we\"ird/rmsnorm.ima");
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("generated files' strings cannot hold"),
        "{stderr}"
    );
    assert!(!written);
}

#[test]
fn a_plain_name_compiles() {
    let (code, stderr, written) = compile_as("rms_norm-2.ima");
    assert_eq!(code, Some(0), "{stderr}");
    assert!(written);
}

/// `imac fuzz` and `imac waits` compile the generated CUDA as `imac compile` does: a path
/// with a `"`, which NVRTC would copy into the PTX unescaped, is refused by name before
/// either looks for a GPU or nvdisasm.
#[test]
fn fuzz_and_waits_refuse_a_path_with_a_quote() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("we\"ird/rmsnorm.ima");
    std::fs::create_dir_all(spec.parent().unwrap()).unwrap();
    let text = Path::new(env!("CARGO_MANIFEST_DIR")).join("../specs/rmsnorm.ima");
    std::fs::copy(text, &spec).unwrap();
    for command in ["fuzz", "waits"] {
        let run = Command::new(env!("CARGO_BIN_EXE_imac"))
            .arg(command)
            .arg(&spec)
            .output()
            .expect("running imac");
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(1), "{command}: {stderr}");
        assert!(
            stderr.contains("holds a `\"`, which NVRTC writes into the PTX"),
            "{command}: {stderr}"
        );
    }
}
