//! `--kernel K` of `imac explain`, `imac waits` and `imac fuzz`: a name the spec lacks is
//! an error that names the kernels it has, and a spec that declares none says so, before
//! anything is compiled or a GPU asked for (one reading, `ir::Module::kernels_named`).

use std::path::Path;
use std::process::Command;

fn imac(args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_imac"))
        .args(args)
        .output()
        .expect("running imac");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).trim_end().to_string(),
    )
}

#[test]
fn a_kernel_the_spec_lacks_is_refused_by_name() {
    let spec = Path::new(env!("CARGO_MANIFEST_DIR")).join("../specs/rmsnorm.ima");
    let spec = spec.display().to_string();
    for command in ["explain", "waits", "fuzz"] {
        assert_eq!(
            imac(&[command, &spec, "--kernel", "nope"]),
            (
                Some(1),
                format!("error: {spec} has no kernel `nope`; its kernels: rms_norm")
            ),
            "{command}"
        );
    }
}

#[test]
fn a_spec_of_no_kernel_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("consts.ima");
    std::fs::write(&spec, "const G = 128\n").unwrap();
    let spec = spec.display().to_string();
    for command in ["explain", "waits", "fuzz"] {
        assert_eq!(
            imac(&[command, &spec]),
            (Some(1), format!("error: {spec} declares no kernel")),
            "{command}"
        );
    }
}
