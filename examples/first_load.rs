//! What loading a module costs a process on a machine whose caches hold nothing: NVRTC's
//! compile of a spec's generated CUDA C (its PTX, and the SASS it assembles in the same
//! compile), then the driver's load of that PTX (its JIT compiler compiles it again) and of
//! that SASS (nothing left to compile), one after the other in one process. Session 49's
//! gemm_tma wheel, which shipped PTX only, took minutes to import on a fresh GPU machine;
//! generated crates and wheels now ship the SASS too. Run it with the driver's compute
//! cache off, so that the PTX is compiled for real:
//!
//! ```text
//! CUDA_CACHE_DISABLE=1 first_load [SPEC...]    # default: specs/gemm_tma.ima
//! ```

use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut specs: Vec<String> = std::env::args().skip(1).collect();
    if specs.is_empty() {
        specs.push(concat!(env!("CARGO_MANIFEST_DIR"), "/specs/gemm_tma.ima").into());
    }
    let ctx = ima::context(0)?;
    let (major, minor) = ctx.compute_capability()?;
    let arch = ima::arch_for(major, minor);
    println!(
        "CUDA_CACHE_DISABLE={}, {arch}",
        std::env::var("CUDA_CACHE_DISABLE").unwrap_or_default()
    );
    println!("| spec | PTX (MB) | SASS (MB) | NVRTC (s) | load PTX (s) | load SASS (s) |");
    println!("|---|---:|---:|---:|---:|---:|");
    for spec in specs {
        let source = ima_dsl::Source::new(spec.clone(), std::fs::read_to_string(&spec)?);
        let module = ima_dsl::compile(&source).map_err(|diags| {
            format!("{spec}: {} error(s); `imac check` shows them", diags.len())
        })?;
        let cu_file = ima_codegen::cu_file(&module.file);
        let cuda = ima_codegen::cuda::generate(&module, &cu_file);
        let seconds = |start: Instant| start.elapsed().as_secs_f64();
        let start = Instant::now();
        let compiled = ima::compile_cuda(&cuda, &cu_file, &arch)?;
        let nvrtc = seconds(start);
        let start = Instant::now();
        drop(ima::Module::load_ptx(&ctx, &cu_file, &compiled.ptx)?);
        let ptx = seconds(start);
        let start = Instant::now();
        drop(ima::Module::load_cubin(
            &ctx,
            &cu_file,
            &compiled.cubin,
            &compiled.ptx,
        )?);
        let sass = seconds(start);
        let mb = |bytes: usize| bytes as f64 / 1e6;
        println!(
            "| {spec} | {:.1} | {:.1} | {nvrtc:.1} | {ptx:.2} | {sass:.2} |",
            mb(compiled.ptx.len()),
            mb(compiled.cubin.len())
        );
    }
    Ok(())
}
