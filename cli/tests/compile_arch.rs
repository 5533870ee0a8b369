//! `imac compile --arch`: a real architecture's PTX and SASS are written and make the crate
//! up to date with its spec; a virtual one, which has no SASS, is refused before anything
//! is written, as is a body NVRTC refuses, its error a diagnostic on the spec. Needs
//! NVRTC, as `tests/nvrtc.rs` does.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn spec() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../specs/rmsnorm.ima")
}

fn imac(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_imac"))
        .args(args)
        .output()
        .expect("running imac")
}

#[test]
fn a_real_architecture_ships_its_ptx_and_sass() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("crate_dir");
    let (spec, crate_dir) = (spec().display().to_string(), out.display().to_string());
    let compiled = imac(&["compile", &spec, "--arch", "sm_90", "-o", &crate_dir]);
    assert!(
        compiled.status.success(),
        "{}",
        String::from_utf8_lossy(&compiled.stderr)
    );
    let ptx = std::fs::read_to_string(out.join("src/ptx/sm_90.ptx")).unwrap();
    assert!(ptx.contains(".target sm_90"), "{ptx}");
    let cubin = std::fs::read(out.join("src/cubin/sm_90.cubin")).unwrap();
    assert_eq!(cubin.get(..4), Some(&b"\x7fELF"[..]));
    assert!(
        imac(&["check", "--vendored", &crate_dir, &spec])
            .status
            .success()
    );

    std::fs::remove_file(out.join("src/cubin/sm_90.cubin")).unwrap();
    let drifted = imac(&["check", "--vendored", &crate_dir, &spec]);
    assert_eq!(drifted.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&drifted.stderr);
    assert!(stderr.contains("src/cubin/sm_90.cubin"), "{stderr}");
}

#[test]
fn a_virtual_architecture_is_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("crate_dir");
    let (spec, crate_dir) = (spec().display().to_string(), out.display().to_string());
    let refused = imac(&["compile", &spec, "--arch", "compute_90", "-o", &crate_dir]);
    assert_eq!(refused.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("error: --arch compute_90: not a real GPU architecture"),
        "{stderr}"
    );
    assert!(!out.exists(), "nothing is written");
}

/// A body NVRTC refuses stops the compile before anything is written, its error on the
/// spec's line and column as `imac check --arch` reports it.
#[test]
fn a_body_nvrtc_refuses_is_a_diagnostic_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("k.ima");
    std::fs::write(
        &spec,
        "kernel k {\n    in  x: f32[N]\n    out y: f32[N]\n    launch over y[i]\n    body {\n        y(i) = z(i);\n    }\n}\n",
    )
    .unwrap();
    let out = dir.path().join("crate_dir");
    let (spec, crate_dir) = (spec.display().to_string(), out.display().to_string());
    let refused = imac(&[
        "compile", &spec, "--color", "never", "--arch", "sm_90", "-o", &crate_dir,
    ]);
    assert_eq!(refused.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains(&format!(
            "error: identifier \"z\" is undefined\n  ┌─ {spec}:6:16\n"
        )),
        "{stderr}"
    );
    assert!(!out.exists(), "nothing is written");
}
