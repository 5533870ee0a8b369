//! `imac fmt` snapshots: every committed spec is already in canonical form, and each
//! `tests/fmt/in/NAME.ima` formats to `tests/fmt/out/NAME.ima`. `IMA_BLESS=1 cargo test
//! --test fmt_golden` rewrites the outputs; review the diff before committing it.

mod common;

use common::{root, specs_in};
use std::path::Path;

fn format(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    ima_dsl::fmt::format(&text)
        .unwrap_or_else(|d| panic!("{} does not parse: {d:?}", path.display()))
}

fn diff(expected: &str, actual: &str) -> String {
    similar::TextDiff::from_lines(expected, actual)
        .unified_diff()
        .header("expected", "actual")
        .to_string()
}

#[test]
fn committed_specs_are_formatted() {
    let mut failures = Vec::new();
    for spec in specs_in("specs") {
        let text = std::fs::read_to_string(&spec).unwrap();
        let formatted = format(&spec);
        if formatted != text {
            failures.push(format!(
                "{} is not formatted (run `imac fmt`):\n{}",
                spec.display(),
                diff(&text, &formatted)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn fmt_goldens() {
    let bless = std::env::var_os("IMA_BLESS").is_some();
    let mut failures = Vec::new();
    let inputs = specs_in("tests/fmt/in");
    assert!(!inputs.is_empty(), "no inputs in tests/fmt/in");
    for input in inputs {
        let actual = format(&input);
        let out = root()
            .join("tests/fmt/out")
            .join(input.file_name().unwrap());
        assert_eq!(
            ima_dsl::fmt::format(&actual).as_ref(),
            Ok(&actual),
            "{} formats differently twice",
            input.display()
        );
        if bless {
            std::fs::write(&out, &actual).unwrap();
            continue;
        }
        let expected = std::fs::read_to_string(&out).unwrap_or_default();
        if expected != actual {
            failures.push(format!(
                "{} differs (IMA_BLESS=1 to accept):\n{}",
                out.display(),
                diff(&expected, &actual)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
