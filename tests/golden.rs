//! Snapshot tests of everything imac generates, naga-style: each input spec sits beside its
//! committed outputs, and any difference fails. `IMA_BLESS=1 cargo test --test golden`
//! rewrites the outputs; review the diff before committing it.
//!
//! - `specs/NAME.ima` → `tests/out/specs/NAME.cu` and `NAME.rs`;
//! - `tests/in/NAME.ima` → `tests/out/NAME.cu` and `NAME.rs`, or `NAME.err` (the rendered
//!   diagnostics) when the spec has errors.

use ima_dsl::Source;
mod common;

use common::{root, specs_in};
use std::path::Path;

/// The outputs of one spec: (file name, contents).
fn outputs(spec: &Path) -> Vec<(String, String)> {
    let rel = spec.strip_prefix(root()).unwrap().display().to_string();
    let stem = ima_codegen::stem(&rel).to_string();
    let source = Source::new(&rel, std::fs::read_to_string(spec).unwrap());
    match ima_dsl::compile(&source) {
        Ok(m) => {
            let cu = ima_codegen::cu_file(&rel);
            vec![
                (cu.clone(), ima_codegen::cuda::generate(&m, &cu)),
                (
                    format!("{stem}.rs"),
                    ima_codegen::rust::generate(&m, ima_codegen::rust::RustOptions::for_crate(&cu)),
                ),
            ]
        }
        Err(diags) => vec![(format!("{stem}.err"), source.render(&diags))],
    }
}

fn compare(spec_dir: &str, out_dir: &str) {
    let bless = std::env::var_os("IMA_BLESS").is_some();
    let mut failures = Vec::new();
    for spec in specs_in(spec_dir) {
        for (name, actual) in outputs(&spec) {
            // An example spec must compile: its snapshot is never a diagnostic.
            assert!(
                !(out_dir == "tests/out/specs" && name.ends_with(".err")),
                "{} has errors:\n{actual}",
                spec.display()
            );
            let path = root().join(out_dir).join(&name);
            if bless {
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(&path, &actual).unwrap();
                continue;
            }
            let expected = std::fs::read_to_string(&path).unwrap_or_default();
            if expected != actual {
                let diff = similar::TextDiff::from_lines(&expected, &actual);
                failures.push(format!(
                    "{} differs from what imac generates for {}:\n{}",
                    path.display(),
                    spec.display(),
                    diff.unified_diff().header("committed", "generated")
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{}\n(run with IMA_BLESS=1 to accept the new output)",
        failures.join("\n")
    );
}

#[test]
fn specs_generate_their_committed_outputs() {
    compare("specs", "tests/out/specs");
}

#[test]
fn test_inputs_generate_their_committed_outputs() {
    compare("tests/in", "tests/out");
}

/// Every class of checker error (`CheckError::ALL`) is triggered by some `tests/in/*.ima`,
/// so that each one's rendering has a committed `.err` snapshot above.
#[test]
fn every_check_error_has_a_snapshot() {
    let mut seen = std::collections::BTreeSet::new();
    for spec in specs_in("tests/in") {
        let source = Source::new(
            spec.display().to_string(),
            std::fs::read_to_string(&spec).unwrap(),
        );
        if let Err(diags) = ima_dsl::compile(&source) {
            seen.extend(diags.iter().filter_map(|d| d.code));
        }
    }
    let missing: Vec<&str> = ima_dsl::CheckError::ALL
        .iter()
        .copied()
        .filter(|code| !seen.contains(code))
        .collect();
    assert!(
        missing.is_empty(),
        "no tests/in/*.ima snapshot triggers these checker errors: {}\n(add a case, then bless with IMA_BLESS=1)",
        missing.join(", ")
    );
}
