//! `imac check --arch`: NVRTC's errors and warnings about a body are diagnostics on the
//! spec, each at its line and column, once, in the spec's order; a spec whose bodies
//! compile says so. Needs NVRTC, as `tests/nvrtc.rs` does.

use std::process::{Command, Output};

fn imac(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_imac"))
        .args(args)
        .output()
        .expect("running imac")
}

#[test]
fn a_body_s_errors_are_diagnostics_on_the_spec() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("k.ima");
    std::fs::write(
        &spec,
        "kernel k {\n    in  x: f32[N]\n    out y: f32[N]\n    launch over y[i]\n    body {\n        y(i) = z(i);\n        int unused = 3;\n        y(i) = x(i)\n    }\n}\n",
    )
    .unwrap();
    let spec = spec.display().to_string();
    let checked = imac(&["check", "--color", "never", "--arch", "sm_90a", &spec]);
    assert_eq!(checked.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&checked.stderr);
    let expected = [
        format!("error: identifier \"z\" is undefined\n  ┌─ {spec}:6:16\n"),
        format!(
            "warning: variable \"unused\" was declared but never referenced\n  ┌─ {spec}:7:13\n"
        ),
        format!("error: expected a \";\"\n  ┌─ {spec}:9:5\n"),
        format!("error: 2 error(s) in the bodies of {spec} (NVRTC, sm_90a)"),
    ];
    let at: Vec<Option<usize>> = expected.iter().map(|e| stderr.find(e.as_str())).collect();
    assert!(at.iter().all(Option::is_some), "{stderr}");
    assert!(at.is_sorted(), "not in the spec's order:\n{stderr}");
    // Four entry points instantiate the body; each message is said once.
    assert_eq!(stderr.matches("identifier \"z\"").count(), 1, "{stderr}");
    assert!(!stderr.contains("k.cu"), "{stderr}");
}

#[test]
fn a_spec_whose_bodies_compile_says_so() {
    let spec = concat!(env!("CARGO_MANIFEST_DIR"), "/../specs/rmsnorm.ima");
    let checked = imac(&["check", "--arch", "sm_90a", spec]);
    assert!(
        checked.status.success(),
        "{}",
        String::from_utf8_lossy(&checked.stderr)
    );
    let stdout = String::from_utf8_lossy(&checked.stdout);
    assert!(
        stdout.contains("rmsnorm.ima: 1 kernel(s) ok, their bodies compile for sm_90a"),
        "{stdout}"
    );
    assert!(
        checked.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&checked.stderr)
    );
}
