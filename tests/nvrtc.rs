//! Every generated kernel, and the bench's CUDA (its helpers, bench/helpers.cu, and the
//! hand-written twins, bench/twins/), compiles with NVRTC for sm_90, with no error and no
//! warning.
//!
//! This needs no GPU, only libnvrtc and the CUDA headers: the test command (`.ci/run`)
//! installs the pip wheels pinned to CUDA 13.0 and points `IMA_CUDA_ROOT` at them. Without
//! them the test fails, naming every place it looked: CI never skips it silently.

use std::path::{Path, PathBuf};

/// The `.cu` files under `dir`, or `dir` itself when it is one.
fn generated_cuda(dir: &Path, out: &mut Vec<PathBuf>) {
    if dir.is_file() {
        out.push(dir.to_path_buf());
        return;
    }
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            generated_cuda(&path, out);
        } else if path.extension().is_some_and(|x| x == "cu") {
            out.push(path);
        }
    }
}

/// Compiles each file under `dir` (or the file `dir`) with NVRTC for `arch`; fails naming
/// every file that errs or warns.
fn compiles_cleanly(dir: &str, arch: &str) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    generated_cuda(&root.join(dir), &mut files);
    assert!(!files.is_empty(), "no CUDA under {dir}");
    let mut failures = Vec::new();
    for f in &files {
        // A hand-written file that uses ima.cuh's helpers gets it as its users compile it.
        let source = ima_codegen::cuda::splice_ima_cuh(&std::fs::read_to_string(f).unwrap());
        let name = f.file_name().unwrap().to_string_lossy();
        match ima::compile_ptx_checked(&source, &name, arch) {
            // Only sm_90a has every kernel: elsewhere a file of `tma` kernels has none.
            Ok(ptx) => assert!(
                ptx.contains(".entry") || !arch.ends_with('a'),
                "{}: PTX without entry points",
                f.display()
            ),
            Err(e) => failures.push(format!("{}:\n{e}", f.display())),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// sm_90 leaves out the kernels with `tma` arguments, which sm_90a (the runtime's choice on
/// a 9.0 device, `ima::arch_for`) compiles with the rest.
#[test]
fn every_generated_kernel_compiles_for_sm_90_and_sm_90a_without_warnings() {
    compiles_cleanly("tests/out", "sm_90");
    compiles_cleanly("tests/out", "sm_90a");
}

/// The bench compiles these at run time on the GPU machine, for sm_90a there: a mistake
/// would otherwise surface only there. (bench/explore/ holds standalone programs that nvcc
/// builds there, host code included: not the bench's.)
#[test]
fn the_bench_cuda_compiles_for_sm_90a_without_warnings() {
    compiles_cleanly("bench/helpers.cu", "sm_90a");
    compiles_cleanly("bench/twins", "sm_90a");
}

/// A shared array's 16-byte vector read (`s.at8(i)` of f16, here through `ima_row_pairs`,
/// as a body feeding mma.sync from shared memory reads it) is one vector load: the accessor
/// says its address is 16-byte aligned. From the element pointer alone, the compiler loaded
/// an f16 vector 2 bytes at a time (eight `ld.shared.u16` where one `ld.shared.v4` does).
#[test]
fn a_shared_f16_vector_is_read_with_one_16_byte_load() {
    let spec = "kernel t where K % 8 == 0, K <= 1024 {
    in  x: f16[K] align(16)
    out y: f32[K]
    shared s: f16[K]
    launch grid(1) block(128)
    body {
        for (I i = threadIdx.x * 8; i < K; i += 1024) s.at8(i) = x.load8(i);
        __syncthreads();
        for (I i = threadIdx.x * 8; i < K; i += 1024) {
            const ImaFrag4 f = ima_row_pairs(s.at8((i + 8) % K));
            y(i) = __uint_as_float(f.x[0] ^ f.x[3]);
        }
    }
}
";
    let m = ima_dsl::compile(&ima_dsl::Source::new("vector_read.ima", spec.to_string()))
        .unwrap_or_else(|d| panic!("{d:?}"));
    let cuda = ima_codegen::cuda::generate(&m, "vector_read.cu");
    let ptx = ima::compile_ptx_checked(&cuda, "vector_read.cu", "sm_90a").unwrap();
    // The release entry point with 32-bit indices: its shared loads.
    let start = ptx.find(".entry t_i32(").expect("t_i32 in the PTX");
    let end = ptx[start + 1..]
        .find(".entry ")
        .map_or(ptx.len(), |e| start + 1 + e);
    let loads: Vec<&str> = ptx[start..end]
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("ld.shared"))
        .collect();
    assert!(
        !loads.is_empty() && loads.iter().all(|l| l.starts_with("ld.shared.v4")),
        "t_i32's shared loads: {loads:?}"
    );
}
