//! `imac check --vendored`: a generated crate is compared with its spec through its stamp,
//! and the crate vendored under `examples/vendored/attn-kernels` is kept up to date with
//! `specs/attn.ima` (`IMA_BLESS=1 cargo test --test front_doors_drift` regenerates it).

use ima_codegen::package::{self, CrateOptions, RuntimeDep};
use ima_codegen::vendored::{self, Drift};
use ima_dsl::{Source, ir};
use std::path::Path;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn attn(name: &str) -> (ir::Module, String) {
    let text = std::fs::read_to_string(root().join("specs/attn.ima")).unwrap();
    (
        ima_dsl::compile(&Source::new(name, text.clone())).unwrap(),
        text,
    )
}

/// A crate generated from `specs/attn.ima` into a temporary folder, claiming PTX for sm_90
/// that it does not carry when `archs` says so.
fn generated(archs: &[&str]) -> tempfile::TempDir {
    generated_as(archs, false)
}

/// [`generated`], a Python package too where `python`.
fn generated_as(archs: &[&str], python: bool) -> tempfile::TempDir {
    let (module, text) = attn("specs/attn.ima");
    let options = CrateOptions {
        runtime: RuntimeDep::Version("0.1.0".into()),
        archs: archs.iter().map(|a| a.to_string()).collect(),
        python,
    };
    let dir = tempfile::tempdir().unwrap();
    package::write_crate(dir.path(), &package::source_files(&module, &text, &options)).unwrap();
    dir
}

fn drifts(dir: &Path, module: &ir::Module, text: &str) -> Vec<Drift> {
    vendored::check(dir, module, text).unwrap().drifts
}

#[test]
fn a_fresh_crate_has_not_drifted_even_when_the_spec_is_named_another_way() {
    let dir = generated(&[]);
    let (module, text) = attn("./specs/../specs/attn.ima");
    assert_eq!(drifts(dir.path(), &module, &text), []);
}

#[test]
fn an_edited_spec_is_drift() {
    let dir = generated(&[]);
    let (module, text) = attn("specs/attn.ima");
    let edited = text.replace("D <= 256", "D <= 128");
    let found = drifts(dir.path(), &module, &edited);
    assert!(
        matches!(&found[0], Drift::Spec { stamped, now } if stamped != now),
        "{found:?}"
    );
}

#[test]
fn an_edited_stub_is_drift() {
    let dir = generated(&[]);
    let stubs = dir.path().join("src/stubs.rs");
    let edited = std::fs::read_to_string(&stubs)
        .unwrap()
        .replace("D <= 256", "D <= 512");
    std::fs::write(&stubs, edited).unwrap();
    let (module, text) = attn("specs/attn.ima");
    assert_eq!(
        drifts(dir.path(), &module, &text),
        [Drift::Differs {
            path: "src/stubs.rs".into()
        }]
    );
}

#[test]
fn missing_ptx_and_sass_are_drift() {
    let dir = generated(&["sm_90"]);
    let (module, text) = attn("specs/attn.ima");
    assert_eq!(
        drifts(dir.path(), &module, &text),
        [
            Drift::Missing {
                path: "src/ptx/sm_90.ptx".into()
            },
            Drift::Missing {
                path: "src/cubin/sm_90.cubin".into()
            }
        ]
    );
}

/// A Python package's crate is compared as one (its stamp says `python`): fresh, it has
/// not drifted; without a Python file it has; and the command that regenerates it says
/// `--python`, with its paths quoted for a shell.
#[test]
fn a_python_package_is_compared_as_one() {
    let dir = generated_as(&[], true);
    let (module, text) = attn("specs/attn.ima");
    assert_eq!(drifts(dir.path(), &module, &text), []);
    std::fs::remove_file(dir.path().join("python/attn_kernels/_imac.py")).unwrap();
    assert_eq!(
        drifts(dir.path(), &module, &text),
        [Drift::Missing {
            path: "python/attn_kernels/_imac.py".into()
        }]
    );
    let report = vendored::check(dir.path(), &module, &text).unwrap();
    assert_eq!(
        report.regenerate(Path::new("vendor/it's here")),
        "imac compile specs/attn.ima -o 'vendor/it'\\''s here' --runtime-version 0.1.0 --python"
    );
}

#[test]
fn a_folder_without_a_stamp_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (module, text) = attn("specs/attn.ima");
    let err = vendored::check(dir.path(), &module, &text).err().unwrap();
    assert!(err.contains("imac.stamp"), "{err}");
}

#[test]
fn the_vendored_example_is_up_to_date_with_its_spec() {
    let dir = root().join("examples/vendored/attn-kernels");
    let (module, text) = attn("specs/attn.ima");
    let report = vendored::check(&dir, &module, &text).unwrap();
    if std::env::var_os("IMA_BLESS").is_some() {
        let options = CrateOptions {
            runtime: report.stamp.runtime.clone(),
            archs: report.stamp.archs.clone(),
            python: report.stamp.python,
        };
        // The images the stamp lists are the crate's own, written by `imac compile --arch`.
        package::write_crate(&dir, &package::source_files(&module, &text, &options)).unwrap();
        return;
    }
    assert!(
        report.drifts.is_empty(),
        "{} has drifted from specs/attn.ima: {:?}\nregenerate it with: {}\n(or IMA_BLESS=1)",
        dir.display(),
        report.drifts,
        report.regenerate(Path::new("examples/vendored/attn-kernels"))
    );
}
