//! Every generated kernel, and the bench's CUDA (its helpers, bench/helpers.cu, and the
//! hand-written twins, bench/twins/), compiles with NVRTC for sm_90, with no error and no
//! warning.
//!
//! This needs no GPU, only libnvrtc and the CUDA headers: the test command (`.ci/run`)
//! installs the pip wheels pinned to CUDA 13.0 and points `IMA_CUDA_ROOT` at them. Without
//! them the test fails, naming every place it looked: CI never skips it silently.

use std::path::{Path, PathBuf};

fn generated_cuda(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            generated_cuda(&path, out);
        } else if path.extension().is_some_and(|x| x == "cu") {
            out.push(path);
        }
    }
}

/// Compiles each file with NVRTC for sm_90; fails naming every file that errs or warns.
fn compiles_cleanly(dir: &str) {
    let mut files = Vec::new();
    generated_cuda(&Path::new(env!("CARGO_MANIFEST_DIR")).join(dir), &mut files);
    assert!(!files.is_empty(), "no CUDA under {dir}");
    let mut failures = Vec::new();
    for f in &files {
        let source = std::fs::read_to_string(f).unwrap();
        let name = f.file_name().unwrap().to_string_lossy();
        match ima::compile_ptx_checked(&source, &name, "sm_90") {
            Ok(ptx) => assert!(
                ptx.contains(".entry"),
                "{}: PTX without entry points",
                f.display()
            ),
            Err(e) => failures.push(format!("{}:\n{e}", f.display())),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn every_generated_kernel_compiles_for_sm_90_without_warnings() {
    compiles_cleanly("tests/out");
}

/// The bench compiles these at run time on the GPU machine: a mistake would otherwise
/// surface only there.
#[test]
fn the_bench_cuda_compiles_for_sm_90_without_warnings() {
    compiles_cleanly("bench");
}

/// A `prefetch` section runs before the kernel waits for the one ahead of it, so it sees
/// each argument as an ImaPrefetchView: prefetching compiles, reading or writing does not.
#[test]
fn a_prefetch_section_can_prefetch_but_not_read_or_write() {
    let spec = |section: &str| {
        format!(
            "kernel copy {{\n    in  x: f32[N]\n    out y: f32[N]\n    launch grid(ceil(N / 64)) block(64)\n    \
             prefetch {{ {section} }}\n    body {{\n        const I i = I(blockIdx.x) * 64 + threadIdx.x;\n        \
             if (i < N) y(i) = x(i);\n    }}\n}}\n"
        )
    };
    let cuda = |section: &str| {
        let source = ima_dsl::Source::new("prefetch_view.ima", spec(section));
        let module = ima_dsl::compile(&source).expect("the spec is valid");
        ima_codegen::cuda::generate(&module, "prefetch_view.cu")
    };
    let prefetch = cuda("x.prefetch_l2(I(blockIdx.x) * 64 + threadIdx.x);");
    ima::compile_ptx_checked(&prefetch, "prefetch_view.cu", "sm_90").expect("a prefetch compiles");
    for misuse in [
        "const float v = x(0); (void)v;",
        "y(0) = 1.f;",
        "y.prefetch_l2(0); const float v = x.load(0); (void)v;",
    ] {
        let err = ima::compile_ptx_checked(&cuda(misuse), "prefetch_view.cu", "sm_90")
            .expect_err(misuse)
            .to_string();
        assert!(
            err.contains("prefetch_view.ima"),
            "{misuse}: the error names the spec:\n{err}"
        );
    }
}
