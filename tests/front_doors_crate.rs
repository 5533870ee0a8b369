//! `imac compile`'s crate builds on its own, copied out of the workspace: `cargo build
//! --offline` and `cargo doc` (warnings denied) in a temporary folder, with the PTX and SASS
//! that NVRTC compiled for sm_90 embedded; a spec of no kernels builds without a warning,
//! and a kernel's doc comment with an untagged code fence passes the crate's doctests.
//! Needs NVRTC, as `tests/nvrtc.rs` does.

use ima_codegen::package::{self, CrateOptions, RuntimeDep};
use ima_dsl::Source;
use std::path::Path;
use std::process::Command;

/// Runs cargo in `dir`; returns its standard error (the build's warnings).
fn cargo(dir: &Path, args: &[&str]) -> String {
    // Dependencies are built once, beside the workspace's own, not once per temp folder.
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("../front-doors");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(cargo)
        .args(args)
        .args(["--offline", "-j2"])
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", target)
        .env("RUSTDOCFLAGS", "-D warnings")
        .output()
        .expect("running cargo");
    assert!(
        output.status.success(),
        "cargo {args:?} failed in {}:\n{}",
        dir.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The crate `imac compile` writes for the spec `path` (text `text`), in a temporary folder.
fn write_crate(path: &str, text: &str) -> tempfile::TempDir {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let module = ima_dsl::compile(&Source::new(path, text.to_string())).unwrap();
    let cuda = ima_codegen::cuda::generate(&module, "module.cu");
    let compiled =
        ima::compile_cuda(&cuda, "module.cu", "sm_90").unwrap_or_else(|e| panic!("NVRTC: {e}"));
    let images = [package::ArchImage {
        arch: "sm_90".into(),
        ptx: compiled.ptx,
        cubin: compiled.cubin,
    }];
    let options = CrateOptions {
        runtime: RuntimeDep::Path(root.join("runtime").display().to_string()),
        archs: vec!["sm_90".into()],
        python: false,
    };
    let mut files = package::source_files(&module, text, &options);
    files.extend(package::image_files(&images));
    let dir = tempfile::tempdir().unwrap();
    package::write_crate(dir.path(), &files).unwrap();
    dir
}

/// `.gpu/on-device` sets IMA_GPU; that machine has no Rust toolchain. CI runs these.
fn on_the_gpu_machine() -> bool {
    let there = std::env::var_os("IMA_GPU").is_some();
    if there {
        eprintln!("not run on the GPU machine: this test drives cargo, which it lacks");
    }
    there
}

#[test]
fn generated_crate_builds_offline_outside_the_workspace() {
    if on_the_gpu_machine() {
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("specs/attn.ima")).unwrap();
    let module = ima_dsl::compile(&Source::new("specs/attn.ima", text.clone())).unwrap();
    let dir = write_crate("specs/attn.ima", &text);
    cargo(dir.path(), &["build"]);
    cargo(dir.path(), &["doc", "--no-deps"]);

    let stubs = std::fs::read_to_string(dir.path().join("src/stubs.rs")).unwrap();
    let readme = std::fs::read_to_string(dir.path().join("README.md")).unwrap();
    for kernel in &module.kernels {
        assert!(
            readme.contains(&format!("### `{}`", kernel.name)),
            "README lacks {}",
            kernel.name
        );
        assert!(
            stubs.contains(&format!("/// `{}", kernel.signature())),
            "no rustdoc on {}",
            kernel.name
        );
    }
}

#[test]
fn a_spec_of_no_kernels_makes_a_crate_that_builds_without_warnings() {
    if on_the_gpu_machine() {
        return;
    }
    let dir = write_crate("empty.ima", "// no kernel yet\n");
    let stderr = cargo(dir.path(), &["build"]);
    let ours = stderr
        .lines()
        .filter(|l| l.starts_with("warning"))
        .collect::<Vec<_>>();
    assert!(ours.is_empty(), "{stderr}");
}

#[test]
fn a_kernel_documented_with_an_untagged_code_fence_passes_its_doctests() {
    if on_the_gpu_machine() {
        return;
    }
    let spec = "/// Copies x; from Python:\n/// ```\n/// y = copy(x)   # not Rust\n/// ```\n\
                kernel copy {\n    in  x: f32[N]\n    out y: f32[N]\n    launch over y[i]\n    \
                body { y(i) = x(i); }\n}\n";
    let dir = write_crate("copy.ima", spec);
    cargo(dir.path(), &["test", "--doc"]);
}
