//! What the checks cost: the host-side `check` per launch, and launches per second through
//! `Kernel::launch` against raw cudarc `launch_builder` launches of the same trivial kernel.
//!
//! `cargo run --release -p ima-runtime --example launch_overhead [-- LAUNCHES]`
//! (default 100000). Without a GPU it measures the checks only. Prints a markdown table.
//!
//! The `check` rows time the public [`check`], which also builds the `Plan`'s vectors;
//! `Kernel::launch` runs the same checks without them, and a launch with the same
//! arguments as the kernel's last one reuses that one's plan. So two rates are measured:
//! launches that alternate two buffers, each checked in full (the cost of checking), and
//! launches of the same buffer, which the plan memo lets skip the checks. For the checking
//! path, with heap allocations counted, and without a GPU:
//! `cargo test --release -p ima-runtime --lib check_cost -- --ignored --nocapture`.

#[path = "../tests/common/attn.rs"]
mod attn;
#[path = "../tests/common/touch.rs"]
mod touch;

use std::error::Error;
use std::hint::black_box;
use std::time::{Duration, Instant};

use ima_runtime::cudarc::driver::{CudaContext, LaunchConfig, PushKernelArg};
use ima_runtime::cudarc::nvrtc::Ptx;
use ima_runtime::{
    DType, DeviceId, DeviceLimits, KernelArg, KernelContract, Module, Scalar, Tensor, TensorMeta,
    check, compile_cuda, driver_present,
};

const SOURCE: &str = r#"
template <typename I>
__device__ void touch(float* y, I y0, I N) {
    for (I i = (I)blockIdx.x * (I)blockDim.x + (I)threadIdx.x; i < N;
         i += (I)gridDim.x * (I)blockDim.x)
        y[i * y0] = 1.0f;
}
extern "C" __global__ void __launch_bounds__(256) touch_i32(float* y, int y0, int N) {
    touch<int>(y, y0, N);
}
extern "C" __global__ void __launch_bounds__(256)
touch_i64(float* y, long long y0, long long N) {
    touch<long long>(y, y0, N);
}
"#;

/// Elements of the trivial kernel's tensor: one block.
const N: usize = 256;

const DEVICE: DeviceId = DeviceId {
    ordinal: 0,
    context: 1,
};

/// Row-major strides of `shape`.
fn strides(shape: &[usize]) -> Vec<isize> {
    let mut s = vec![1isize; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * shape[i + 1] as isize;
    }
    s
}

/// Nanoseconds per `check` of `contract` with tensors of `shapes` (far apart in memory).
fn check_ns(
    contract: &KernelContract,
    dtypes: &[DType],
    shapes: &[&[usize]],
    params: &[Scalar],
    iterations: u32,
) -> Result<f64, Box<dyn Error>> {
    let all_strides: Vec<Vec<isize>> = shapes.iter().map(|s| strides(s)).collect();
    let metas: Vec<TensorMeta<'_>> = shapes
        .iter()
        .zip(&all_strides)
        .zip(dtypes)
        .enumerate()
        .map(|(i, ((shape, strides), &dtype))| TensorMeta {
            dtype,
            shape,
            strides,
            offset: 0,
            buffer_len: shape.iter().product(),
            base_ptr: (i as u64 + 1) << 40,
            device: DEVICE,
        })
        .collect();
    check(contract, DEVICE, &DeviceLimits::SM_90, &metas, params)?;
    let start = Instant::now();
    for _ in 0..iterations {
        black_box(check(
            black_box(contract),
            DEVICE,
            &DeviceLimits::SM_90,
            black_box(&metas),
            params,
        ))?;
    }
    Ok(start.elapsed().as_nanos() as f64 / f64::from(iterations))
}

fn rate(launches: u32, took: Duration) -> String {
    let per = took.as_secs_f64() / f64::from(launches);
    format!("{:.0} launches/s ({:.2} µs each)", 1.0 / per, per * 1e6)
}

fn main() -> Result<(), Box<dyn Error>> {
    // `.gpu/on-device test` runs every staged binary with the test harness's flags;
    // a benchmark is run on purpose instead (bench/run-on-device.sh).
    if std::env::args().any(|a| a == "--include-ignored") {
        println!("a benchmark, not a test: run it through bench/run-on-device.sh");
        return Ok(());
    }
    let launches: u32 = match std::env::args().nth(1) {
        Some(n) => n.parse()?,
        None => 100_000,
    };
    let mut rows: Vec<(String, String)> = Vec::new();

    let attn = check_ns(
        &attn::ATTN,
        &[DType::F16, DType::F16, DType::F32],
        &[&[2, 8, 128, 64], &[2, 96, 8, 64], &[2, 8, 128, 96]],
        &[Scalar::F32(0.125)],
        1_000_000,
    )?;
    rows.push((
        "`check`, attn_scores (3 tensors of rank 4, 2 constraints)".into(),
        format!("{attn:.0} ns"),
    ));
    let touch = check_ns(&touch::TOUCH, &[DType::F32], &[&[N]], &[], 1_000_000)?;
    rows.push((
        "`check`, touch (1 tensor of rank 1)".into(),
        format!("{touch:.0} ns"),
    ));

    let gpu = driver_present() && CudaContext::device_count().unwrap_or(0) > 0;
    if gpu {
        let ctx = CudaContext::new(0)?;
        let stream = ctx.default_stream();
        let kernel = Module::compile(&ctx, "launch_overhead.cu", SOURCE)?.kernel(&touch::TOUCH)?;
        let (major, minor) = ctx.compute_capability()?;
        let ptx = compile_cuda(SOURCE, "launch_overhead.cu", &format!("sm_{major}{minor}"))?;
        let raw = ctx
            .load_module(Ptx::from_src(ptx.ptx))?
            .load_function("touch_i32")?;
        let mut y = Tensor::<f32>::zeros(&stream, &[N])?;
        let mut buf = stream.alloc_zeros::<f32>(N)?;
        let config = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        let (stride, n) = (1i32, N as i32);

        let mut raw_launches = |count: u32| -> Result<Duration, Box<dyn Error>> {
            let start = Instant::now();
            for _ in 0..count {
                let mut b = stream.launch_builder(&raw);
                b.arg(&mut buf).arg(&stride).arg(&n);
                // SAFETY: touch_i32 takes (float*, int, int), pushed in that order, and
                // `buf` holds N floats.
                unsafe { b.launch(config) }?;
            }
            stream.synchronize()?;
            Ok(start.elapsed())
        };
        let mut repeated_launches = |count: u32| -> Result<Duration, Box<dyn Error>> {
            let start = Instant::now();
            for _ in 0..count {
                kernel.launch(&stream, &mut [KernelArg::write(&mut y)], &[])?;
            }
            stream.synchronize()?;
            Ok(start.elapsed())
        };
        // Two buffers in turn: no launch has the arguments of the one before, so each is
        // checked in full (a repeated launch reuses the last one's plan).
        let (mut ya, mut yb) = (
            Tensor::<f32>::zeros(&stream, &[N])?,
            Tensor::<f32>::zeros(&stream, &[N])?,
        );
        let mut alternating_launches = |count: u32| -> Result<Duration, Box<dyn Error>> {
            let start = Instant::now();
            for i in 0..count {
                let y = if i % 2 == 0 { &mut ya } else { &mut yb };
                kernel.launch(&stream, &mut [KernelArg::write(y)], &[])?;
            }
            stream.synchronize()?;
            Ok(start.elapsed())
        };
        // Warm up both paths (module load, first-launch costs).
        repeated_launches(1000)?;
        raw_launches(1000)?;
        // Rounds interleave the three, so that a noisy host slows them alike; each
        // reports its median round.
        const ROUNDS: u32 = 11;
        let per_round = (launches / ROUNDS).max(1);
        let (mut raw_rounds, mut repeated_rounds, mut alternating_rounds) =
            (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..ROUNDS {
            raw_rounds.push(raw_launches(per_round)?);
            repeated_rounds.push(repeated_launches(per_round)?);
            alternating_rounds.push(alternating_launches(per_round)?);
        }
        let median = |mut v: Vec<Duration>| {
            v.sort();
            v[v.len() / 2]
        };
        let (raw_time, repeated_time, alternating_time) = (
            median(raw_rounds),
            median(repeated_rounds),
            median(alternating_rounds),
        );
        rows.push((
            format!("raw cudarc `launch_builder`, median of {ROUNDS} rounds of {per_round}"),
            rate(per_round, raw_time),
        ));
        // The full check first: it is what checking costs; the memo's rate is what a loop
        // relaunching the same tensors pays.
        for (how, what, time) in [
            (
                "full check",
                "two buffers in turn, every launch checked in full",
                alternating_time,
            ),
            (
                "plan memo",
                "the same buffer each launch, the plan memo skips the checks",
                repeated_time,
            ),
        ] {
            rows.push((
                format!("`Kernel::launch`, {what}, median of {ROUNDS} rounds of {per_round}"),
                rate(per_round, time),
            ));
            rows.push((
                format!("launch rate, imac / raw, {how}"),
                format!("{:.2}", raw_time.as_secs_f64() / time.as_secs_f64()),
            ));
            let extra = (time.as_secs_f64() - raw_time.as_secs_f64()) / f64::from(per_round);
            rows.push((
                format!("added per launch, {how}"),
                format!("{:.2} µs", extra * 1e6),
            ));
        }
        rows.push(("GPU".into(), ctx.name()?));
    } else {
        rows.push((
            "launch rates".into(),
            "skipped: no CUDA driver or GPU".into(),
        ));
    }

    println!("| measurement | value |");
    println!("|---|---|");
    for (what, value) in rows {
        println!("| {what} | {value} |");
    }
    Ok(())
}
