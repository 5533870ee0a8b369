//! `imac check` as a pipe or a CI log receives it: plain text, equal to the committed
//! snapshot `tests/out/check_piped.stderr`, since `--color auto` colours only a terminal;
//! `--color always` colours even there. `IMA_BLESS=1 cargo test -p imac --test
//! check_piped` rewrites the snapshot; review the diff before committing it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A spec with errors of several kinds, some with a second label.
const BAD_SPEC: &str = "tests/in/duplicate_and_reserved.ima";
/// What starts every ANSI colour or style sequence.
const ESCAPE: &str = "\x1b[";

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("cli/ sits in the workspace")
        .to_path_buf()
}

/// `imac ARGS` from the workspace root (so that diagnostics name `tests/in/...`), its
/// output piped. `TERM` says the terminal could colour, so that only the pipe says no;
/// `NO_COLOR` is set as given, never inherited.
fn imac(args: &[&str], no_color: Option<&str>) -> (Output, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_imac"));
    cmd.args(args)
        .current_dir(workspace())
        .env("TERM", "xterm-256color")
        .env_remove("NO_COLOR");
    if let Some(v) = no_color {
        cmd.env("NO_COLOR", v);
    }
    let out = cmd.output().expect("running imac");
    let stderr = String::from_utf8(out.stderr.clone()).expect("UTF-8 diagnostics");
    (out, stderr)
}

/// `text` without its ANSI escape sequences (`ESC [ ... m`, all that termcolor writes).
fn strip_escapes(text: &str) -> String {
    let mut plain = String::new();
    let mut rest = text;
    while let Some(start) = rest.find(ESCAPE) {
        plain.push_str(&rest[..start]);
        let after = &rest[start..];
        rest = after.find('m').map_or("", |end| &after[end + 1..]);
    }
    plain.push_str(rest);
    plain
}

fn assert_matches_snapshot(actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/out/check_piped.stderr");
    if std::env::var_os("IMA_BLESS").is_some() {
        std::fs::write(&path, actual).expect("writing the snapshot");
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        expected == actual,
        "{} differs from what imac check prints:\n{}\n(run with IMA_BLESS=1 to accept it)",
        path.display(),
        similar::TextDiff::from_lines(expected.as_str(), actual)
            .unified_diff()
            .header("committed", "printed")
    );
}

#[test]
fn check_writes_plain_text_into_a_pipe() {
    let (out, stderr) = imac(&["check", BAD_SPEC], None);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        out.stdout.is_empty(),
        "{:?}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(
        !stderr.contains(ESCAPE),
        "escape codes in a pipe:\n{stderr:?}"
    );
    assert_matches_snapshot(&stderr);
}

#[test]
fn color_always_colours_a_pipe_even_with_no_color_set() {
    // `--color` is global: it may come after the subcommand too.
    let (_, before) = imac(&["--color", "always", "check", BAD_SPEC], Some("1"));
    let (_, after) = imac(&["check", "--color=always", BAD_SPEC], Some("1"));
    for stderr in [before, after] {
        assert!(stderr.contains(ESCAPE), "no colour:\n{stderr}");
        assert_matches_snapshot(&strip_escapes(&stderr));
    }
}

#[test]
fn color_never_and_no_color_write_plain_text() {
    let (_, never) = imac(&["--color", "never", "check", BAD_SPEC], None);
    let (_, no_color) = imac(&["--color", "auto", "check", BAD_SPEC], Some("1"));
    for stderr in [never, no_color] {
        assert!(!stderr.contains(ESCAPE), "{stderr:?}");
        assert_matches_snapshot(&stderr);
    }
}

#[test]
fn strip_escapes_removes_only_escape_sequences() {
    assert_eq!(
        strip_escapes("\x1b[0m\x1b[1m\x1b[38;5;9merror\x1b[0m: x\n"),
        "error: x\n"
    );
    assert_eq!(strip_escapes("plain [m]"), "plain [m]");
}
