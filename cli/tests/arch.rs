//! `--arch`. `imac compile --arch`: a real architecture's PTX and SASS are written and make
//! the crate up to date with its spec; a virtual one, which has no SASS, is refused before
//! anything is written, as is a body NVRTC refuses, its error a diagnostic on the spec.
//! `imac check --arch`: NVRTC's errors and warnings about a body are diagnostics on the
//! spec, each at its line and column with its notes, once, in the spec's order; a spec
//! whose bodies compile says so; a path NVRTC cannot name is refused. Needs NVRTC, as
//! `tests/nvrtc.rs` does.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn spec() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../specs/rmsnorm.ima")
}

/// A spec whose body names `z`, which nothing declares.
const UNDECLARED: &str = "kernel k {\n    in  x: f32[N]\n    out y: f32[N]\n    launch over y[i]\n    body {\n        y(i) = z(i);\n    }\n}\n";

/// `text` written as `dir/k.ima` (`dir` made where it is missing): its path.
fn spec_in(dir: &Path, text: &str) -> String {
    std::fs::create_dir_all(dir).unwrap();
    let spec = dir.join("k.ima");
    std::fs::write(&spec, text).unwrap();
    spec.display().to_string()
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
    // Named twice, shipped once.
    let compiled = imac(&["compile", &spec, "--arch", "sm_90,sm_90", "-o", &crate_dir]);
    assert!(
        compiled.status.success(),
        "{}",
        String::from_utf8_lossy(&compiled.stderr)
    );
    let stamp = std::fs::read_to_string(out.join("imac.stamp")).unwrap();
    assert!(stamp.contains("arch = \"sm_90\"\n"), "{stamp}");
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
    let spec = spec_in(dir.path(), UNDECLARED);
    let out = dir.path().join("crate_dir");
    let crate_dir = out.display().to_string();
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

#[test]
fn a_body_s_errors_are_diagnostics_on_the_spec() {
    let dir = tempfile::tempdir().unwrap();
    let spec = spec_in(
        dir.path(),
        "kernel k {\n    in  x: f32[N]\n    out y: f32[N]\n    launch over y[i]\n    body {\n        y(i) = z(i);\n        int unused = 3;\n        y(i) = x(i)\n    }\n}\n",
    );
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
    // Four entry points instantiate the body; each message is said once, and neither the
    // error nor the warning (said once, in the first instantiation) is said of some only.
    assert_eq!(stderr.matches("identifier \"z\"").count(), 1, "{stderr}");
    assert!(!stderr.contains("NVRTC says this only"), "{stderr}");
    assert!(!stderr.contains("k.cu"), "{stderr}");
}

/// NVRTC's notes on a body's error are the diagnostic's notes: an overload that matches
/// nothing lists its candidates, once however many entry points instantiate the body.
#[test]
fn an_overload_s_candidates_are_notes() {
    let dir = tempfile::tempdir().unwrap();
    let spec = spec_in(
        dir.path(),
        &UNDECLARED.replace("y(i) = z(i);", "y(i) = __shfl_sync(x(i));"),
    );
    let checked = imac(&["check", "--color", "never", "--arch", "sm_90", &spec]);
    assert_eq!(checked.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&checked.stderr);
    let candidate = "  = note: number of parameters of function \
                     \"__shfl_sync(unsigned int, float, int, int)\" does not match the call\n";
    assert!(
        stderr.contains(&format!(
            "error: no instance of overloaded function \"__shfl_sync\" matches the argument list; \
             argument types are: (float)\n  ┌─ {spec}:6:16\n"
        )) && stderr.matches(candidate).count() == 1,
        "{stderr}"
    );
}

/// An error only 64-bit indices make is said so, with the entry points NVRTC said it of;
/// one NVRTC cannot go past says that more may follow.
#[test]
fn a_body_s_error_only_some_entry_points_meet_names_them() {
    let dir = tempfile::tempdir().unwrap();
    let spec = spec_in(
        dir.path(),
        &UNDECLARED.replace("y(i) = z(i);", "const int* p = &i; y(i) = p[0];"),
    );
    let checked = imac(&["check", "--color", "never", "--arch", "sm_90", &spec]);
    assert_eq!(checked.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&checked.stderr);
    assert!(
        stderr.contains(&format!(
            "error: a value of type \"const long long *\" cannot be used to initialize an \
             entity of type \"const int *\"\n  ┌─ {spec}:6:24\n"
        )) && stderr.contains(
            "  = note: NVRTC says this only of k_i64 and k_i64_checked, which instantiate the \
             body with I = long long (not of k_i32 and k_i32_checked)\n"
        ) && !stderr.contains("NVRTC stopped"),
        "{stderr}"
    );

    // One whose words name the index type is two messages at one place, of two entry
    // points each: all four make it, and neither is said of some only.
    let spec = spec_in(
        dir.path(),
        &UNDECLARED.replace("y(i) = z(i);", "float* p = &i; y(i) = p[0];"),
    );
    let checked = imac(&["check", "--color", "never", "--arch", "sm_90", &spec]);
    let stderr = String::from_utf8_lossy(&checked.stderr);
    assert!(
        stderr.contains("\"const int *\"")
            && stderr.contains("\"const long long *\"")
            && !stderr.contains("NVRTC says this only"),
        "{stderr}"
    );

    let spec = spec_in(
        dir.path(),
        &UNDECLARED.replace("y(i) = z(i);", "#include \"not_there.h\""),
    );
    let checked = imac(&["check", "--color", "never", "--arch", "sm_90", &spec]);
    assert_eq!(checked.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&checked.stderr);
    assert!(
        stderr.contains("error: cannot open source file \"not_there.h\"")
            && stderr.ends_with(
                "note: NVRTC stopped there (at its error limit, or at an error it cannot go \
                 past); more may follow once these are fixed\n"
            ),
        "{stderr}"
    );
}

/// A macro one body defines reaches no other kernel's declarations (an `#undef` follows
/// the body), and a body line that is the generated code's own line marker stays the
/// body's: the spec compiles, and an error after that line lands on the spec.
#[test]
fn a_body_s_macro_and_marker_stay_in_the_body() {
    let spec = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/in/body_directives.ima"
    );
    let checked = imac(&["check", "--arch", "sm_90", spec]);
    let stderr = String::from_utf8_lossy(&checked.stderr);
    assert!(checked.status.success(), "{stderr}");

    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(spec).unwrap();
    let spec = spec_in(dir.path(), &text.replace("TWICE(x(i))", "TWICE(z(i))"));
    let checked = imac(&["check", "--color", "never", "--arch", "sm_90", &spec]);
    assert_eq!(checked.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&checked.stderr);
    // NVRTC points at the macro the name is inside.
    let expected = format!("error: identifier \"z\" is undefined\n   ┌─ {spec}:20:16\n");
    assert!(
        stderr.contains(&expected) && !stderr.contains("bug of imac's"),
        "{stderr}"
    );
}

/// A spec under a path with a `\` or a line break is checked as any other (the `#line`s
/// escape them) and its body's error lands on it, once (NVRTC's messages then start on
/// the path's two lines); one with a `"` is refused by name, not left to ptxas, which
/// reads the path in the PTX, where NVRTC writes it unescaped.
#[test]
fn a_spec_path_with_a_backslash_or_line_break_is_checked_and_one_with_a_quote_refused() {
    let dir = tempfile::tempdir().unwrap();
    for odd in ["back\\slash", "line\nbreak"] {
        let spec = spec_in(&dir.path().join(odd), UNDECLARED);
        let checked = imac(&["check", "--color", "never", "--arch", "sm_90", &spec]);
        assert_eq!(checked.status.code(), Some(1));
        let stderr = String::from_utf8_lossy(&checked.stderr);
        let expected = format!("error: identifier \"z\" is undefined\n  ┌─ {spec}:6:16\n");
        assert!(
            stderr.contains(&expected) && stderr.matches("identifier \"z\"").count() == 1,
            "{stderr}"
        );
    }

    let spec = spec_in(&dir.path().join("we\"ird"), UNDECLARED);
    let refused = imac(&["check", "--arch", "sm_90", &spec]);
    assert_eq!(refused.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("error: --arch sm_90: the spec's path")
            && stderr.contains("holds a `\"`, which NVRTC writes into the PTX"),
        "{stderr}"
    );
}

#[test]
fn a_spec_whose_bodies_compile_says_so() {
    let spec = concat!(env!("CARGO_MANIFEST_DIR"), "/../specs/rmsnorm.ima");
    // A list, as compile --arch takes, each named once.
    let checked = imac(&["check", "--arch", "sm_90a,sm_80,sm_90a", spec]);
    assert!(
        checked.status.success(),
        "{}",
        String::from_utf8_lossy(&checked.stderr)
    );
    let stdout = String::from_utf8_lossy(&checked.stdout);
    assert!(
        stdout.contains("rmsnorm.ima: 1 kernel(s) ok, their bodies compile for sm_90a\n")
            && stdout.contains("rmsnorm.ima: 1 kernel(s) ok, their bodies compile for sm_80\n")
            && stdout.lines().count() == 2,
        "{stdout}"
    );
    assert!(
        checked.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&checked.stderr)
    );
}
