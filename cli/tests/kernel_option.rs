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

/// A spec of constants alone has nothing to wait for or fuzz, and explain shows its
/// constants; an empty one has nothing for any.
#[test]
fn a_spec_of_no_kernel_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let consts = dir.path().join("consts.ima");
    std::fs::write(&consts, "const G = 128\n").unwrap();
    let consts = consts.display().to_string();
    for command in ["waits", "fuzz"] {
        assert_eq!(
            imac(&[command, &consts]),
            (Some(1), format!("error: {consts} declares no kernel")),
            "{command}"
        );
    }
    let explained = Command::new(env!("CARGO_BIN_EXE_imac"))
        .args(["explain", &consts])
        .output()
        .expect("running imac");
    assert!(explained.status.success());
    assert_eq!(
        String::from_utf8_lossy(&explained.stdout).trim_end(),
        "constants: G = 128"
    );

    let empty = dir.path().join("empty.ima");
    std::fs::write(&empty, "").unwrap();
    let empty = empty.display().to_string();
    for command in ["explain", "waits", "fuzz"] {
        assert_eq!(
            imac(&[command, &empty]),
            (Some(1), format!("error: {empty} declares no kernel")),
            "{command}"
        );
    }
}
