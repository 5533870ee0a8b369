//! A Llama 3 8B decoder layer's decode step (GPTQ int4 weights, G = 128, f16 activations,
//! paged KV cache with block size 16) from imac specs, on a GPU:
//!
//!     cargo run --release --example decode_layer -- check          # B = 1, 8, 32 against the f64 host reference
//!     cargo run --release --example decode_layer -- bench          # B = 1 and 32 at a context of 1024
//!     cargo run --release --example decode_layer -- ablate         # what each launch adds to the graph
//!     cargo run --release --example decode_layer -- dump DIR LEN... # inputs and outputs for bench/decode_layer_torch.py
//!     cargo run --release --example decode_layer -- precompile DIR [MAJOR.MINOR]  # modules into a cache, no device (9.0 by default)
//!
//! `check` runs each batch kernel by kernel and as a replayed `ima::Graph`, in release and
//! in deferred checked mode, and compares the outputs with the host reference.
//! `bench` times the layer kernel by kernel and replayed as a graph, in both modes, and as
//! one of STACK layers (weights and caches of their own) in one graph, as a model's step
//! runs it, and prints the rows of bench/RESULTS.md's decode-layer table with the layer's
//! roofline.
//! `ablate` times the graph with each launch left out in turn: what a launch adds to a
//! replay, where ncu's time of a kernel alone also counts what a graph overlaps or hides.
//! docs/decode-layer.md walks through the layer.

mod layer;
mod reference;

use std::error::Error;
use std::io::Write;
use std::sync::Arc;

use ima::cudarc::driver::{CudaStream, sys::CUevent_flags};
use ima::half::f16;
use ima::{CheckedMode, Graph, HostQWeight};

use layer::{Config, HostBatch, HostWeights, Kernels, State, Step, Weights};

type Res<T> = Result<T, Box<dyn Error>>;

/// Largest |got - want| over `1 + |want|`, and where.
fn worst(got: &[f16], want: &[f16]) -> (f64, usize) {
    got.iter()
        .zip(want)
        .enumerate()
        .map(|(i, (&g, &w))| {
            let (g, w) = (f64::from(g), f64::from(w));
            let e = if g.is_finite() {
                (g - w).abs() / (1.0 + w.abs())
            } else {
                f64::INFINITY
            };
            (e, i)
        })
        .fold((0.0, 0), |a, b| if b.0 > a.0 { b } else { a })
}

fn check(stream: &Arc<CudaStream>, kernels: &Kernels, host: &HostWeights, w: &Weights) -> Res<()> {
    let c = host.config;
    for lens in layer::ragged_batches() {
        let batch = HostBatch::new(&c, &lens, 7);
        let want = reference::reference(host, &batch);
        for mode in [CheckedMode::Off, CheckedMode::Deferred] {
            kernels.set_checked_mode(mode);
            for graphed in [false, true] {
                let s = kernels.step(stream, w, &batch, graphed)?;
                let (out, residual) = (s.out.to_host(stream)?, s.residual.to_host(stream)?);
                let (e_out, at) = worst(&out, &want.out);
                let (e_res, _) = worst(&residual, &want.residual);
                println!(
                    "B={:2} lens {:?}{}: {mode:?}, {}: out max err {e_out:.2e} (at {at}: {} vs {}), residual {e_res:.2e}",
                    lens.len(),
                    &lens[..lens.len().min(4)],
                    if lens.len() > 4 { " .." } else { "" },
                    if graphed { "graph" } else { "kernel by kernel" },
                    out[at],
                    want.out[at],
                );
            }
        }
    }
    kernels.set_checked_mode(CheckedMode::Off);
    Ok(())
}

/// Median microseconds of `iters` runs of `f`, each between two events.
fn time(stream: &Arc<CudaStream>, iters: usize, f: &mut dyn FnMut() -> Res<()>) -> Res<f64> {
    for _ in 0..10 {
        f()?;
    }
    stream.synchronize()?;
    let mut events = Vec::with_capacity(iters);
    for _ in 0..iters {
        let a = stream.record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
        f()?;
        let b = stream.record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
        events.push((a, b));
    }
    stream.synchronize()?;
    let mut us: Vec<f64> = events
        .iter()
        .map(|(a, b)| a.elapsed_ms(b).map(|ms| f64::from(ms) * 1e3))
        .collect::<Result<_, _>>()?;
    us.sort_by(f64::total_cmp);
    Ok(us[us.len() / 2])
}

/// Layers of one graph in `bench`'s stacked rows.
const STACK: usize = 8;

fn bench(stream: &Arc<CudaStream>, kernels: &Kernels, host: &HostWeights, w: &Weights) -> Res<()> {
    let c = host.config;
    // The stacked rows' other layers' weights: the same values in buffers of their own, so
    // that each layer reads its weights from memory, as a model's layers do.
    let others = (1..STACK)
        .map(|_| Weights::upload(stream, host))
        .collect::<Result<Vec<_>, _>>()?;
    // The device copy rate: 1 GiB read and written.
    let n = 1 << 30;
    let src = stream.alloc_zeros::<u8>(n)?;
    let mut dst = stream.alloc_zeros::<u8>(n)?;
    let copy_us = time(stream, 20, &mut || Ok(stream.memcpy_dtod(&src, &mut dst)?))?;
    let rate = 2.0 * n as f64 / (copy_us * 1e-6);
    drop((src, dst));
    println!(
        "device copy: {:.2} TB/s (1 GiB each way, {copy_us:.1} us)",
        rate / 1e12
    );
    println!("| B | context | bytes read | roofline (us) | variant | median (us) | of roofline |");
    println!("|---:|---:|---:|---:|---|---:|---:|");
    for b in [1usize, 32] {
        let lens = vec![1024; b];
        let batch = HostBatch::new(&c, &lens, 7);
        // What the step must read: the weights, the KV pages in use, the activations
        // (hidden and residual in; the intermediates are written and read back once, the
        // MLP's being `act`, SiluAndMul fused into the gate/up projection).
        let act = b
            * 2
            * (2 * c.hidden
                + c.qkv_width()
                + 2 * c.heads * c.head_dim
                + 3 * c.hidden
                + c.intermediate);
        let bytes = host.quantized_bytes() + batch.kv_bytes_read(&c) + act;
        let roof_us = bytes as f64 / rate * 1e6;
        let row = |variant: &str, us: f64| {
            println!(
                "| {b} | 1024 | {:.1} MB | {roof_us:.1} | {variant} | {us:.1} | {:.0}% |",
                bytes as f64 / 1e6,
                100.0 * roof_us / us
            );
        };
        for (mode, name) in [
            (CheckedMode::Off, "release"),
            (CheckedMode::Deferred, "deferred"),
        ] {
            kernels.set_checked_mode(mode);
            let mut s = State::upload(stream, &c, &batch)?;
            let eager = time(stream, 50, &mut || Ok(kernels.forward(stream, w, &mut s)?))?;
            row(&format!("imac {name}, kernel by kernel"), eager);
            let mut s = State::upload(stream, &c, &batch)?;
            let mut graph = Graph::new(stream)?;
            kernels.capture(&mut graph, w, &mut s)?;
            let graphed = time(stream, 200, &mut || Ok(graph.replay(stream)?))?;
            graph.check()?;
            row(&format!("imac {name}, CUDA graph"), graphed);
            // STACK layers in one graph, each with its weights and state, as a model's step
            // runs them: what a layer takes there, where one replay's start and end are
            // shared by the STACK layers. Then (release only) the same stack on one copy of
            // the weights, as a graph of one layer replayed reads them: what reading the same
            // weights again is worth (bench/RESULTS.md, session 74).
            let mut states = (0..STACK)
                .map(|_| State::upload(stream, &c, &batch))
                .collect::<Result<Vec<_>, _>>()?;
            let layers = format!("imac {name}, {STACK} layers in one CUDA graph");
            let own = std::iter::once(w).chain(&others);
            row(
                &format!("{layers}, a layer"),
                stack_us(stream, kernels, own.zip(&mut states))?,
            );
            if mode == CheckedMode::Off {
                let one = std::iter::repeat_n(w, STACK);
                row(
                    &format!("{layers}, one copy of the weights, a layer"),
                    stack_us(stream, kernels, one.zip(&mut states))?,
                );
            }
        }
        kernels.set_checked_mode(CheckedMode::Off);
    }
    Ok(())
}

/// Median microseconds a layer of `layers` captured into one graph (`Kernels::capture_stack`),
/// replayed: `bench`'s stacked rows.
fn stack_us<'a>(
    stream: &Arc<CudaStream>,
    kernels: &'a Kernels,
    layers: impl IntoIterator<Item = (&'a Weights, &'a mut State)>,
) -> Res<f64> {
    let mut graph = Graph::new(stream)?;
    let mut count = 0;
    kernels.capture_stack(&mut graph, layers.into_iter().inspect(|_| count += 1))?;
    let us = time(stream, 50, &mut || Ok(graph.replay(stream)?))?;
    graph.check()?;
    Ok(us / count as f64)
}

/// The graph at B = 1 and 32 (contexts of 1024, release) with each launch left out in
/// turn, two passes: a launch's share of a replay is the whole graph's time less the time
/// without it.
fn ablate(stream: &Arc<CudaStream>, kernels: &Kernels, host: &HostWeights, w: &Weights) -> Res<()> {
    let c = host.config;
    let names: Vec<&str> = Step::ALL.iter().map(|s| s.name()).collect();
    println!("| B | pass | whole graph (us) | {} |", names.join(" | "));
    println!("|---:|---:|---:|{}", "---:|".repeat(names.len()));
    for b in [1usize, 32] {
        let batch = HostBatch::new(&c, &vec![1024; b], 7);
        let mut s = State::upload(stream, &c, &batch)?;
        let mut replay = |omit: Option<Step>| -> Res<f64> {
            let mut graph = Graph::new(stream)?;
            kernels.capture_omitting(&mut graph, w, &mut s, omit)?;
            let us = time(stream, 200, &mut || Ok(graph.replay(stream)?))?;
            graph.check()?;
            Ok(us)
        };
        for pass in 1..=2 {
            let whole = replay(None)?;
            let shares = Step::ALL
                .iter()
                .map(|&step| Ok(format!("{:.1}", whole - replay(Some(step))?)))
                .collect::<Res<Vec<String>>>()?;
            println!("| {b} | {pass} | {whole:.1} | {} |", shares.join(" | "));
        }
    }
    Ok(())
}

/// Writes `data` to `dir/name.bin` and its entry to the manifest.
fn put<T: Copy>(
    dir: &str,
    manifest: &mut Vec<String>,
    name: &str,
    dtype: &str,
    shape: &[usize],
    data: &[T],
) -> Res<()> {
    // SAFETY: plain numbers (f16, f32, i32, i64), viewed as their bytes.
    let bytes = unsafe {
        std::slice::from_raw_parts(data.as_ptr().cast::<u8>(), std::mem::size_of_val(data))
    };
    std::fs::write(format!("{dir}/{name}.bin"), bytes)?;
    manifest.push(format!(
        "\"{name}\": {{\"dtype\": \"{dtype}\", \"shape\": {shape:?}}}"
    ));
    Ok(())
}

/// The batch's inputs, the int4 weights as GPTQ holds them, and the layer's outputs
/// (graph replay, release), for bench/decode_layer_torch.py.
fn dump(
    stream: &Arc<CudaStream>,
    kernels: &Kernels,
    host: &HostWeights,
    w: &Weights,
    dir: &str,
    lens: &[i32],
) -> Res<()> {
    let c = host.config;
    std::fs::create_dir_all(dir)?;
    let batch = HostBatch::new(&c, lens, 7);
    let s = kernels.step(stream, w, &batch, true)?;
    let mut m = Vec::new();
    for ((name, k, n), q) in c.projections().iter().zip(&host.projections) {
        let HostQWeight::Packed(qw) = q.qweight() else {
            return Err("GPTQ packs int4 into i32".into());
        };
        put(
            dir,
            &mut m,
            &format!("{name}.qweight"),
            "int32",
            &[k / 8, *n],
            qw,
        )?;
        put(
            dir,
            &mut m,
            &format!("{name}.qzeros"),
            "int32",
            &[k / c.group, n / 8],
            q.qzeros().ok_or("GPTQ v1 has qzeros")?,
        )?;
        put(
            dir,
            &mut m,
            &format!("{name}.scales"),
            "float16",
            &[k / c.group, *n],
            q.scales(),
        )?;
    }
    let (b, hd) = (batch.b, c.hidden);
    let cache = [batch.blocks, c.block_size, c.kv_heads, c.head_dim];
    put(dir, &mut m, "norm1", "float16", &[hd], &host.norm1)?;
    put(dir, &mut m, "norm2", "float16", &[hd], &host.norm2)?;
    put(
        dir,
        &mut m,
        "cos_sin",
        "float32",
        &[c.max_positions, c.head_dim],
        &host.cos_sin,
    )?;
    put(dir, &mut m, "hidden", "float16", &[b, hd], &batch.hidden)?;
    put(
        dir,
        &mut m,
        "residual",
        "float16",
        &[b, hd],
        &batch.residual,
    )?;
    put(dir, &mut m, "positions", "int64", &[b], &batch.positions)?;
    put(dir, &mut m, "slot_mapping", "int64", &[b], &batch.slots)?;
    put(
        dir,
        &mut m,
        "block_tables",
        "int32",
        &[b, batch.pages_per_seq],
        &batch.block_tables,
    )?;
    put(dir, &mut m, "seq_lens", "int32", &[b], &batch.lens)?;
    put(dir, &mut m, "k_cache", "float16", &cache, &batch.k_cache)?;
    put(dir, &mut m, "v_cache", "float16", &cache, &batch.v_cache)?;
    put(
        dir,
        &mut m,
        "imac.out",
        "float16",
        &[b, hd],
        &s.out.to_host(stream)?,
    )?;
    put(
        dir,
        &mut m,
        "imac.residual",
        "float16",
        &[b, hd],
        &s.residual.to_host(stream)?,
    )?;
    let mut f = std::fs::File::create(format!("{dir}/manifest.json"))?;
    writeln!(
        f,
        "{{\"config\": {{\"hidden\": {}, \"heads\": {}, \"kv_heads\": {}, \"head_dim\": {}, \"intermediate\": {}, \"gate_up_unit\": {}, \"group\": {}, \"block_size\": {}, \"eps\": {:e}}},\n\"tensors\": {{\n{}\n}}}}",
        c.hidden,
        c.heads,
        c.kv_heads,
        c.head_dim,
        c.intermediate,
        layer::GATE_UP_UNIT,
        c.group,
        c.block_size,
        c.eps,
        m.join(",\n")
    )?;
    println!("wrote B={b} lens {:?} to {dir}", &lens[..lens.len().min(8)]);
    Ok(())
}

fn main() -> Res<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: decode_layer check | bench | ablate | dump DIR LEN... | precompile DIR [MAJOR.MINOR]";
    let what = args.first().ok_or(usage)?;
    if what == "precompile" {
        // No device: the modules into a cache directory for a GPU machine's process.
        let dir = args.get(1).ok_or(usage)?;
        // The compute capability of the device that will load them: by default an H100's.
        let capability = match args.get(2).map(|c| c.split_once('.')) {
            None => (9, 0),
            Some(Some((major, minor))) => (major.parse()?, minor.parse()?),
            Some(None) => return Err(usage.into()),
        };
        for entry in Kernels::precompile(std::path::Path::new(dir), capability)? {
            println!("{}", entry.display());
        }
        return Ok(());
    }
    let ctx = ima::context(0)?;
    let stream = ctx.new_stream()?;
    let kernels = Kernels::load(&ctx)?;
    let host = HostWeights::random(Config::LLAMA_8B, 1)?;
    let w = Weights::upload(&stream, &host)?;
    match what.as_str() {
        "check" => check(&stream, &kernels, &host, &w),
        "bench" => bench(&stream, &kernels, &host, &w),
        "ablate" => ablate(&stream, &kernels, &host, &w),
        "dump" => {
            let dir = args.get(1).ok_or(usage)?;
            let lens = args[2..]
                .iter()
                .map(|l| l.parse())
                .collect::<Result<Vec<i32>, _>>()?;
            dump(&stream, &kernels, &host, &w, dir, &lens)
        }
        _ => Err(usage.into()),
    }
}
