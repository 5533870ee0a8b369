//! `imac doctor` on whatever machine runs the tests (no GPU needed: without a driver it
//! says what is missing): its output ends its last line, so that what the shell or a
//! script prints next starts a line of its own.

use std::process::Command;

#[test]
fn doctor_ends_its_last_line() {
    let out = Command::new(env!("CARGO_BIN_EXE_imac"))
        .arg("doctor")
        .output()
        .expect("running imac doctor");
    let text = String::from_utf8(out.stdout).expect("UTF-8 report");
    assert!(
        text.ends_with('\n') && !text.ends_with("\n\n"),
        "not one final newline: {text:?}"
    );
    let last = text.lines().last().unwrap_or_default();
    assert!(
        last == "everything fits" || last.starts_with("  - "),
        "last line {last:?} of:\n{text}"
    );
    assert_eq!(out.status.success(), last == "everything fits", "{text}");
}
