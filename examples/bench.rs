//! The benchmark suite (issue 8): every example kernel three ways, side by side in one
//! process, on the same device buffers:
//!
//! - **imac release**: the generated launch stub (all host-side checks, then the release
//!   entry point);
//! - **imac checked**: the same stub with checked mode on (`Kernel::set_checked(true)`,
//!   the switch `IMA_CHECKED=1` also turns on at load): every accessor bounds-checked,
//!   each launch waiting for its kernel to report;
//! - **imac checked, deferred**: the same in `CheckedMode::Deferred`, where a launch
//!   returns once enqueued and a violation is reported by a later launch;
//! - **CUDA twin**: the same body and launch shape written by hand in CUDA C: raw
//!   pointers, fixed row-major index arithmetic on 32-bit indices, no accessors and no
//!   checks beyond the body's own tests, compiled with the same NVRTC and launched with
//!   raw cudarc in the spec's launch shape: one thread per element for `over` launches
//!   (attn_scores), the spec's raw grid and block for gptq_dequant, awq_dequant, rope (8
//!   elements a thread) and gptq_gemv (with its shared memory), a block of 256 per row
//!   with 16-byte vectors for rms_norm, a thread per 16 bytes of a row for embedding and
//!   reshape_and_cache; paged attention in its own grid of fixed 512-token
//!   partitions (bench/twins/paged.cu), with block_tables and seq_lens entries used unchecked; the
//!   tensor-core kernels of specs/gemm.ima (bench/twins/gemm.cu) with ima.cuh's shared
//!   tiles, accumulators and pipeline but every tile copied, stored and decoded
//!   unconditionally (their shapes' tiles are all whole); specs/gemm_tma.ima's
//!   gptq_gemm_wg the same way, its TMA loads through maps the bench encodes
//!   (`tensor_map_of`), with no origin tested and its sums stored unmasked.
//!
//! Time is the median (and minimum) over `--iters` launches, each bracketed by its own
//! pair of CUDA events after `--warmup` launches. The timed launches queue behind a kernel
//! that holds the stream (`bench_hold`) until the host has queued them all, so they run
//! back to back and a stub's host-side checks never show as GPU idle time (the launch-rate
//! bench measures those); bandwidth is the bytes the kernel must
//! move (every input read once, every output written once) over that time. Every
//! variant's output is compared with the twin's, and the twins of the ragged dequant
//! shapes with the runtime's host reference (`dequant_reference`).
//!
//! The launch rate (a stub's checks plus launch against a raw cudarc launch) is
//! runtime/examples/launch_overhead.rs; bench/run-on-device.sh runs both.
//!
//! ```text
//! bench [--out PATH] [--tsv PATH] [--iters N] [--warmup N]
//!       [--only CASE,...] [--variants release,checked,deferred,twin,explore] [--rows M,...]
//! ```
//! `--rows` keeps only those rows of x in the W4A16 GEMM cases (gptq_gemm and the `_tma`
//! ones), so that a profiler's launches are one shape's.
//! `--out` defaults to `$OUT/bench.md` and `--tsv` to `$OUT/bench.tsv` when `OUT` is set.
//! Cases: gptq_dequant, gptq_dequant_ragged, awq_dequant, awq_dequant_ragged, gptq_gemv,
//! attn_scores, attn_scores_tiled, rms_norm, rope, embedding, reshape_and_cache,
//! paged_attn, attn_scores_mma, gemm, gemm_tma, attn_scores_tma, gptq_gemm_tma,
//! gptq_gemm_wg, gptq_gemm_wg16 and gptq_gemm_wg32 (compute capability 9.0), gptq_gemm. embedding,
//! reshape_and_cache and
//! paged_attn take indices from tensors (specs/index.ima, specs/paged.ima):
//! their release variant checks every id, slot, block id or length it reads too, their
//! twins (bench/twins/) check none, and for the first two a "device copy" row moves the
//! same bytes with `cuMemcpyDtoD`, the roofline they aim at.
//!
//! `graph_replay` (issue 20) is apart: a chain of 10 small rms_norm launches per step,
//! through the stub against one replay of a 10-node [`ima::Graph`], in host time and end
//! to end, and the host cost of a node update; a table of its own among the notes.

use std::error::Error;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use ima::cudarc::driver::sys::CUevent_flags;
use ima::cudarc::driver::{
    CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, CudaViewMut, LaunchConfig,
    PushKernelArg,
};
use ima::cudarc::nvrtc::Ptx;
use ima::half::{bf16, f16};
use ima::{
    CheckedMode, Graph, HostQWeight, Launched, QWeight, QuantFormat, QuantHost, QuantSpec,
    QuantTensor, Scalar, Shaped, Tensor, ZeroStyle, dequant_reference,
};

type Res<T> = Result<T, Box<dyn Error>>;

/// Gives the bench the stub's kernel, to switch checked mode on (the field is private to
/// the stub's module, so the accessor is defined inside it).
macro_rules! stubs {
    ($name:ident, $file:literal, $($kernel:ident),*) => {
        #[allow(dead_code, clippy::all)]
        mod $name {
            include!($file);
            $(impl $kernel {
                pub fn kernel_mut(&mut self) -> &mut ima::Kernel {
                    &mut self.kernel
                }
            })*
        }
    };
}

stubs!(
    attn,
    "../tests/out/specs/attn.rs",
    AttnScores,
    AttnScoresTiled
);
stubs!(
    quant,
    "../tests/out/specs/quant.rs",
    GptqDequant,
    AwqDequant,
    GptqGemv
);
stubs!(rmsnorm, "../tests/out/specs/rmsnorm.rs", RmsNorm);
stubs!(rope, "../tests/out/specs/rope.rs", Rope);
stubs!(
    index,
    "../tests/out/specs/index.rs",
    Embedding,
    ReshapeAndCache
);
stubs!(paged, "../tests/out/specs/paged.rs", PagedAttn);
stubs!(
    gemm,
    "../tests/out/specs/gemm.rs",
    AttnScoresMma,
    AttnScoresMmaF32,
    GemmF16,
    GemmBf16,
    GptqGemm
);
stubs!(
    gemm_tma,
    "../tests/out/specs/gemm_tma.rs",
    GemmTmaF16,
    GemmTmaBf16,
    AttnScoresTma,
    AttnScoresTmaF32,
    GptqGemmTma,
    GptqGemmWg,
    GptqGemmWg16,
    GptqGemmWg32
);

/// Twins kept in files of their own, each compiled as a module: (file name, source).
const TWIN_FILES: &[(&str, &str)] = &[
    (
        "quant_attn_norm_rope.cu",
        include_str!("../bench/twins/quant_attn_norm_rope.cu"),
    ),
    ("index.cu", include_str!("../bench/twins/index.cu")),
    ("paged.cu", include_str!("../bench/twins/paged.cu")),
    // Hand-written on TMA and warpgroup MMA, with no ima.cuh; sm_90a only (its kernels
    // are left out elsewhere).
    ("gemm_tma.cu", include_str!("../bench/twins/gemm_tma.cu")),
    // The tensor-core twins use ima.cuh's tiles, accumulators and pipeline, which are no
    // guards (only the accessors guard, and the twins do without them), spliced in where
    // the file says (`splice_ima_cuh`).
    ("gemm.cu", include_str!("../bench/twins/gemm.cu")),
];

/// The bench's device-side helpers (fills, the hold, comparisons).
const HELPERS: &str = include_str!("../bench/helpers.cu");

// ----------------------------------------------------------------------------------------
// Options

struct Opts {
    out: Option<PathBuf>,
    tsv: Option<PathBuf>,
    iters: usize,
    warmup: usize,
    only: Option<Vec<String>>,
    variants: Vec<String>,
    /// `--rows`: the W4A16 GEMM cases' rows of x to run, all where None.
    rows: Option<Vec<usize>>,
}

const CASES: &[&str] = &[
    "gptq_dequant",
    "gptq_dequant_ragged",
    "awq_dequant",
    "awq_dequant_ragged",
    "gptq_gemv",
    "attn_scores",
    "attn_scores_tiled",
    "rms_norm",
    "rope",
    "embedding",
    "reshape_and_cache",
    "paged_attn",
    "graph_replay",
    "attn_scores_mma",
    "gemm",
    "gemm_tma",
    "attn_scores_tma",
    "gptq_gemm",
    "gptq_gemm_tma",
    "gptq_gemm_wg",
    "gptq_gemm_wg16",
    "gptq_gemm_wg32",
];

impl Opts {
    fn parse() -> Res<Opts> {
        let env_out = std::env::var_os("OUT").map(PathBuf::from);
        let mut o = Opts {
            out: env_out.as_ref().map(|d| d.join("bench.md")),
            tsv: env_out.as_ref().map(|d| d.join("bench.tsv")),
            iters: 50,
            warmup: 5,
            only: None,
            rows: None,
            variants: vec![
                "release".into(),
                "checked".into(),
                "deferred".into(),
                "twin".into(),
            ],
        };
        let mut args = std::env::args().skip(1);
        while let Some(a) = args.next() {
            let mut value = || args.next().ok_or_else(|| format!("{a} needs a value"));
            match a.as_str() {
                "--out" => o.out = Some(PathBuf::from(value()?)),
                "--tsv" => o.tsv = Some(PathBuf::from(value()?)),
                "--iters" => o.iters = value()?.parse()?,
                "--warmup" => o.warmup = value()?.parse()?,
                "--only" => o.only = Some(value()?.split(',').map(str::to_string).collect()),
                "--variants" => o.variants = value()?.split(',').map(str::to_string).collect(),
                "--rows" => {
                    let rows = value()?
                        .split(',')
                        .map(|r| {
                            r.parse()
                                .map_err(|_| format!("--rows takes counts of rows, not `{r}`"))
                        })
                        .collect::<Result<Vec<usize>, _>>()?;
                    o.rows = Some(rows);
                }
                "-h" | "--help" => {
                    println!(
                        "bench [--out PATH] [--tsv PATH] [--iters N] [--warmup N] \
                         [--only CASE,...] [--variants release,checked,deferred,twin,explore] \
                         [--rows M,...]\ncases: {}",
                        CASES.join(", ")
                    );
                    std::process::exit(0);
                }
                _ => return Err(format!("unknown argument {a} (try --help)").into()),
            }
        }
        if o.iters == 0 {
            return Err("--iters must be at least 1".into());
        }
        for c in o.only.iter().flatten() {
            if !CASES.contains(&c.as_str()) {
                return Err(format!("unknown case {c}; cases: {}", CASES.join(", ")).into());
            }
        }
        for v in &o.variants {
            if !["release", "checked", "deferred", "twin", "explore"].contains(&v.as_str()) {
                return Err(format!("unknown variant {v}").into());
            }
        }
        Ok(o)
    }

    fn wants(&self, case: &str) -> bool {
        self.only
            .as_ref()
            .is_none_or(|o| o.iter().any(|c| c == case))
    }

    fn variant(&self, v: &str) -> bool {
        self.variants.iter().any(|x| x == v)
    }

    /// The rows of x of `ms` that `--rows` keeps.
    fn rows_of(&self, ms: &[usize]) -> Vec<usize> {
        ms.iter()
            .copied()
            .filter(|m| self.rows.as_ref().is_none_or(|r| r.contains(m)))
            .collect()
    }
}

// ----------------------------------------------------------------------------------------
// Timing and reporting

#[derive(Clone, Copy)]
struct Stats {
    median_us: f64,
    min_us: f64,
    /// Whether the host queued every timed launch before the hold kernel let the first
    /// run; if not, some gaps between them (the host's launch path) are in the times.
    queued: bool,
}

/// How long `bench_hold` holds the stream before the timed launches: longer than the host
/// takes to queue them (100 launches of a stub: about 2 ms).
const HOLD_MS: f64 = 20.0;

struct Row {
    kernel: String,
    shape: String,
    variant: &'static str,
    bytes: f64,
    stats: Result<Stats, String>,
    output: String,
}

struct Bench {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    aux: Arc<CudaModule>,
    /// The modules of [`TWIN_FILES`].
    twin_files: Vec<Arc<CudaModule>>,
    opts: Opts,
    rows: Vec<Row>,
    notes: Vec<String>,
}

/// Launch configuration of the twins of `over` launches: one thread per element, blocks
/// of 256.
fn per_element(n: usize) -> Res<LaunchConfig> {
    let blocks = u32::try_from(n.div_ceil(256)).map_err(|_| "grid too large")?;
    Ok(LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    })
}

/// Launch configuration of the fill and compare helpers: grid-stride.
fn grid_stride(n: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (n.div_ceil(256).clamp(1, 8192) as u32, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    }
}

fn i32_of(n: usize) -> Res<i32> {
    Ok(i32::try_from(n).map_err(|_| format!("{n} does not fit the twins' 32-bit indices"))?)
}

/// A twin allowed `smem` bytes of dynamic shared memory (which may exceed the default
/// 48 KB), and its launch of `grid` blocks of `threads` with them.
fn twin_with_smem(
    b: &Bench,
    name: &str,
    grid: (usize, usize, usize),
    threads: u32,
    smem: usize,
) -> Res<(CudaFunction, LaunchConfig)> {
    let f = b.func(name)?;
    f.set_attribute(
        ima::cudarc::driver::sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
        i32::try_from(smem)?,
    )?;
    let cfg = LaunchConfig {
        grid_dim: (
            u32::try_from(grid.0)?,
            u32::try_from(grid.1)?,
            u32::try_from(grid.2)?,
        ),
        block_dim: (threads, 1, 1),
        shared_mem_bytes: u32::try_from(smem)?,
    };
    Ok((f, cfg))
}

fn bytes_of<T: ima::Element>(t: &Tensor<T>) -> f64 {
    (t.numel() * T::DTYPE.size()) as f64
}

fn quant_bytes(w: &QuantTensor<f16>) -> f64 {
    w.expected_shapes()
        .iter()
        .map(|b| (b.numel() * b.dtype.size()) as f64)
        .sum()
}

fn done(l: Launched) -> Res<()> {
    match l {
        Launched::Done { .. } => Ok(()),
        Launched::Skipped => Err("the stub skipped the launch".into()),
    }
}

impl Bench {
    /// A function of the twins' module, or of one of [`TWIN_FILES`].
    fn func(&self, name: &str) -> Res<CudaFunction> {
        std::iter::once(&self.aux)
            .chain(&self.twin_files)
            .find_map(|m| m.load_function(name).ok())
            .ok_or_else(|| format!("no twin function {name}").into())
    }

    /// The reference row of a case that moves its bytes once each way: a device-to-device
    /// copy of `bytes / 2` bytes (read once, written once).
    fn copy_row(&mut self, kernel: &str, shape: &str, bytes: f64) -> Res<()> {
        let n = (bytes / 2.0) as usize;
        let src = self.stream.alloc_zeros::<u8>(n)?;
        let mut dst = self.stream.alloc_zeros::<u8>(n)?;
        let stats = self.time(&mut |_| Ok(self.stream.memcpy_dtod(&src, &mut dst)?));
        self.row(kernel, shape, COPY, (2 * n) as f64, stats);
        Ok(())
    }

    /// Median and minimum of `iters` launches of `f(i)`, each between two events, after
    /// `warmup` launches; then one more launch with `i = 0`, so that each variant's
    /// output holds the result for the same inputs.
    fn time(&self, f: &mut dyn FnMut(usize) -> Res<()>) -> Res<Stats> {
        for i in 0..self.opts.warmup {
            f(i)?;
        }
        self.stream.synchronize()?;
        let hold = self.func("bench_hold")?;
        let hold_ns = (HOLD_MS * 1e6) as u64;
        let mut l = self.stream.launch_builder(&hold);
        l.arg(&hold_ns);
        // SAFETY: bench_hold takes one u64 and touches no memory.
        unsafe { l.launch(LaunchConfig::for_num_elems(1)) }?;
        let queueing = Instant::now();
        let mut events = Vec::with_capacity(self.opts.iters);
        for i in 0..self.opts.iters {
            let start = self
                .stream
                .record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
            f(self.opts.warmup + i)?;
            let end = self
                .stream
                .record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
            events.push((start, end));
        }
        let queued = queueing.elapsed().as_secs_f64() * 1e3 < HOLD_MS;
        self.stream.synchronize()?;
        let mut us = events
            .iter()
            .map(|(a, b)| a.elapsed_ms(b).map(|ms| f64::from(ms) * 1e3))
            .collect::<Result<Vec<_>, _>>()?;
        us.sort_by(f64::total_cmp);
        f(0)?;
        self.stream.synchronize()?;
        Ok(Stats {
            median_us: us[us.len() / 2],
            min_us: us[0],
            queued,
        })
    }

    /// The checked variants asked for, each timed with `f` on the checked stubs: "imac
    /// checked", each launch waiting for its report, and "imac checked, deferred", which
    /// reports at a later launch (its report is read after the timing: a violation there
    /// fails the row).
    fn time_checked(
        &self,
        stubs: &dyn CheckedStubs,
        f: &mut dyn FnMut(usize) -> Res<()>,
    ) -> Vec<(&'static str, Res<Stats>)> {
        let mut timed = Vec::new();
        if self.opts.variant("checked") {
            stubs.set_mode(CheckedMode::Wait);
            timed.push((CHECKED, self.time(f)));
        }
        if self.opts.variant("deferred") {
            stubs.set_mode(CheckedMode::Deferred);
            let stats = self.time(f);
            let report = stubs.check_deferred();
            stubs.set_mode(CheckedMode::Wait);
            timed.push((
                DEFERRED,
                stats.and_then(|s| report.map(|()| s).map_err(Into::into)),
            ));
        }
        timed
    }

    fn row(
        &mut self,
        kernel: &str,
        shape: &str,
        variant: &'static str,
        bytes: f64,
        stats: Res<Stats>,
    ) {
        let stats = stats.map_err(|e| e.to_string());
        if let Err(e) = &stats {
            eprintln!("{kernel} {shape} {variant}: {e}");
        }
        self.rows.push(Row {
            kernel: kernel.into(),
            shape: shape.into(),
            variant,
            bytes,
            stats,
            output: String::new(),
        });
    }

    /// Sets the output column of the last row of `kernel`/`shape`/`variant`.
    fn output(&mut self, kernel: &str, shape: &str, variant: &str, text: String) {
        if let Some(r) = self
            .rows
            .iter_mut()
            .rev()
            .find(|r| r.kernel == kernel && r.shape == shape && r.variant == variant)
        {
            r.output = text;
        }
    }

    fn fill<T>(
        &self,
        func: &str,
        buf: &mut CudaViewMut<'_, T>,
        seed: u32,
        lo: f32,
        hi: f32,
    ) -> Res<()> {
        let f = self.func(func)?;
        let n = buf.len() as i64;
        let cfg = grid_stride(buf.len());
        let mut b = self.stream.launch_builder(&f);
        b.arg(&mut *buf).arg(&n).arg(&seed).arg(&lo).arg(&hi);
        // SAFETY: the fill kernels take (T*, long long, unsigned, float, float) and write
        // elements 0..n of `buf`, which holds n elements of the type the kernel writes.
        unsafe { b.launch(cfg) }?;
        Ok(())
    }

    /// `(elements out of tolerance, largest |a - b|)`.
    fn compare<T>(
        &self,
        func: &str,
        a: &CudaSlice<T>,
        b: &CudaSlice<T>,
        rtol: f32,
        atol: f32,
    ) -> Res<(u64, f32)> {
        if a.len() != b.len() {
            return Err(format!("comparing {} with {} elements", a.len(), b.len()).into());
        }
        let f = self.func(func)?;
        let mut bad = self.stream.alloc_zeros::<u64>(1)?;
        let mut worst = self.stream.alloc_zeros::<u32>(1)?;
        let n = a.len() as i64;
        let mut l = self.stream.launch_builder(&f);
        l.arg(a)
            .arg(b)
            .arg(&n)
            .arg(&rtol)
            .arg(&atol)
            .arg(&mut bad)
            .arg(&mut worst);
        // SAFETY: the compare kernels read n elements of a and b (same length, the type
        // the kernel reads) and update one u64 and one u32.
        unsafe { l.launch(grid_stride(a.len())) }?;
        let bad = self.stream.clone_dtoh(&bad)?[0];
        let worst = f32::from_bits(self.stream.clone_dtoh(&worst)?[0]);
        Ok((bad, worst))
    }

    /// The output column: how `a` compares with `b` (`what` names `b`).
    fn verdict<T>(
        &self,
        func: &str,
        a: &CudaSlice<T>,
        b: &CudaSlice<T>,
        tol: (f32, f32),
        what: &str,
    ) -> String {
        match self.compare(func, a, b, tol.0, tol.1) {
            Ok((0, 0.0)) => format!("= {what} (exact)"),
            Ok((0, w)) => format!("= {what} (max abs diff {w:.1e})"),
            Ok((bad, w)) => format!(
                "**MISMATCH** vs {what}: {bad} of {} (max abs diff {w:.3e})",
                a.len()
            ),
            Err(e) => format!("compare failed: {e}"),
        }
    }

    fn markdown(&self) -> String {
        let mut s = String::new();
        let name = self.ctx.name().unwrap_or_else(|e| format!("? ({e})"));
        let cc = self
            .ctx
            .compute_capability()
            .map(|(a, b)| format!("sm_{a}{b}"))
            .unwrap_or_default();
        let _ = writeln!(s, "### imac kernels vs hand-written CUDA twins\n");
        let _ = writeln!(
            s,
            "GPU: {name} ({cc}). Median (and minimum) of {} launches after {} warm-up \
             launches, each between two CUDA events. TB/s = bytes that must be moved \
             (inputs read once, outputs written once) / median time. \"x twin\" = time / \
             the twin's time. The output column compares each variant's output with the \
             twin's, and the twin of a ragged dequant with the runtime's host reference. \
             The timed launches queue behind a {HOLD_MS} ms kernel that holds the stream, \
             so that they run back to back: the times are the GPU's, and what a launch costs \
             the host is the launch-rate table's. † marks a variant whose launches the host \
             could not all queue within the hold (the checked mode that waits on every \
             launch does not queue by design): its times include host time.\n",
            self.opts.iters, self.opts.warmup
        );
        let _ = writeln!(
            s,
            "| kernel | shape | variant | µs (median) | µs (min) | TB/s | x twin | output |"
        );
        let _ = writeln!(s, "|---|---|---|---:|---:|---:|---:|---|");
        for r in &self.rows {
            let twin = self
                .rows
                .iter()
                .find(|t| t.kernel == r.kernel && t.shape == r.shape && t.variant == "CUDA twin")
                .and_then(|t| t.stats.as_ref().ok().copied());
            match &r.stats {
                Ok(st) => {
                    let ratio = twin
                        .map(|t| format!("{:.2}", st.median_us / t.median_us))
                        .unwrap_or_else(|| "-".into());
                    let _ = writeln!(
                        s,
                        "| {} | {} | {} | {:.1}{} | {:.1} | {:.2} | {} | {} |",
                        r.kernel,
                        r.shape,
                        r.variant,
                        st.median_us,
                        if st.queued { "" } else { " †" },
                        st.min_us,
                        r.bytes / (st.median_us * 1e-6) / 1e12,
                        ratio,
                        r.output
                    );
                }
                Err(e) => {
                    let _ = writeln!(
                        s,
                        "| {} | {} | {} | - | - | - | - | error: {} |",
                        r.kernel,
                        r.shape,
                        r.variant,
                        e.replace('|', "/").replace('\n', " ")
                    );
                }
            }
        }
        if !self.notes.is_empty() {
            s.push('\n');
            for n in &self.notes {
                let _ = writeln!(s, "{n}");
            }
        }
        s
    }

    fn tsv(&self) -> String {
        let mut s = String::from("kernel\tshape\tvariant\tmedian_us\tmin_us\ttbps\n");
        for r in &self.rows {
            if let Ok(st) = &r.stats {
                let _ = writeln!(
                    s,
                    "{}\t{}\t{}\t{:.3}\t{:.3}\t{:.4}",
                    r.kernel,
                    r.shape,
                    r.variant,
                    st.median_us,
                    st.min_us,
                    r.bytes / (st.median_us * 1e-6) / 1e12
                );
            }
        }
        s
    }
}

// ----------------------------------------------------------------------------------------
// Cases

const RELEASE: &str = "imac release";
const CHECKED: &str = "imac checked";
const DEFERRED: &str = "imac checked, deferred";
const TWIN: &str = "CUDA twin";
const COPY: &str = "device copy";

/// A stub set's checked modes, for [`Bench::time_checked`].
trait CheckedStubs {
    fn set_mode(&self, mode: CheckedMode);
    fn check_deferred(&self) -> Result<(), ima::Error>;
}

macro_rules! checked_stubs {
    ($($m:ident),*) => {$(
        impl CheckedStubs for $m::Kernels {
            fn set_mode(&self, mode: CheckedMode) {
                self.set_checked_mode(mode);
            }
            fn check_deferred(&self) -> Result<(), ima::Error> {
                $m::Kernels::check_deferred(self)
            }
        }
    )*};
}
checked_stubs!(quant, attn, rmsnorm, rope, index, paged, gemm, gemm_tma);

/// Both stub sets: the second with checked mode on.
struct Stubs<K> {
    release: K,
    checked: K,
}

fn mb(bytes: f64) -> String {
    format!("{:.0} MB", bytes / 1e6)
}

/// A random quantized weight made on the device: random words and zeros, scales in
/// [0.001, 0.02).
fn random_quant(
    b: &Bench,
    format: QuantFormat,
    k: usize,
    n: usize,
    g: usize,
    seed: u32,
) -> Res<QuantTensor<f16>> {
    let spec = QuantSpec::new(format, k, n, g)?;
    let mut qweight = Tensor::<i32>::zeros(&b.stream, &spec.qweight_shape().shape)?;
    b.fill("fill_bits", &mut qweight.slice_mut(), seed, 0.0, 0.0)?;
    let qzeros = match spec.qzeros_shape() {
        Some(shape) => {
            let mut z = Tensor::<i32>::zeros(&b.stream, &shape.shape)?;
            b.fill("fill_bits", &mut z.slice_mut(), seed + 1, 0.0, 0.0)?;
            Some(z)
        }
        None => None,
    };
    let mut scales = Tensor::<f16>::zeros(&b.stream, &spec.scales_shape(ima::DType::F16).shape)?;
    b.fill("fill_f16", &mut scales.slice_mut(), seed + 2, 0.001, 0.02)?;
    Ok(QuantTensor::from_parts(
        spec,
        QWeight::Packed(qweight),
        qzeros,
        scales,
        None,
    ))
}

fn packed(w: &QuantTensor<f16>) -> Res<(&CudaSlice<i32>, &CudaSlice<i32>, &CudaSlice<f16>)> {
    let q = w.qweight().as_packed().ok_or("not a packed weight")?;
    let z = w.qzeros().ok_or("no qzeros")?;
    Ok((q.slice(), z.slice(), w.scales().slice()))
}

/// The runtime's host reference of `w`, on the device.
fn reference(b: &Bench, w: &QuantTensor<f16>) -> Res<Tensor<f16>> {
    let qt = w.qweight().as_packed().ok_or("not a packed weight")?;
    let q = Shaped::new(HostQWeight::Packed(qt.to_host(&b.stream)?), qt.shape());
    let zt = w.qzeros().ok_or("no qzeros")?;
    let z = Shaped::new(zt.to_host(&b.stream)?, zt.shape());
    let s = Shaped::new(w.scales().to_host(&b.stream)?, w.scales().shape());
    let host = QuantHost::new(w.spec(), q, Some(z), s, None)?;
    Ok(Tensor::from_host(
        &b.stream,
        &dequant_reference(&host),
        &[w.k(), w.n()],
    )?)
}

fn dequant(b: &mut Bench, stubs: &Stubs<quant::Kernels>, awq: bool, ragged: bool) -> Res<()> {
    let (k, n, g) = if ragged {
        (5000, 4096, 128)
    } else {
        (28672, 8192, 128)
    };
    let (format, kernel, twin) = if awq {
        (QuantFormat::Awq, "awq_dequant", "twin_awq_dequant")
    } else {
        (
            QuantFormat::Gptq(ZeroStyle::MinusOne),
            "gptq_dequant",
            "twin_gptq_dequant",
        )
    };
    let w = random_quant(b, format, k, n, g, if awq { 20 } else { 10 })?;
    let mut y_rel = Tensor::<f16>::zeros(&b.stream, &[k, n])?;
    let mut y_chk = Tensor::<f16>::zeros(&b.stream, &[k, n])?;
    let mut y_twin = Tensor::<f16>::zeros(&b.stream, &[k, n])?;
    let bytes = quant_bytes(&w) + bytes_of(&y_rel);
    let shape = format!("K={k} N={n} G={g} ({})", mb(bytes));
    let launch = |s: &quant::Kernels, y: &mut Tensor<f16>| -> Res<()> {
        if awq {
            done(
                s.awq_dequant
                    .launch(&b.stream, quant::AwqDequantArgs { w: &w, y })?,
            )
        } else {
            done(
                s.gptq_dequant
                    .launch(&b.stream, quant::GptqDequantArgs { w: &w, y })?,
            )
        }
    };
    let release = b
        .opts
        .variant("release")
        .then(|| b.time(&mut |_| launch(&stubs.release, &mut y_rel)));
    let checked = b.time_checked(&stubs.checked, &mut |_| launch(&stubs.checked, &mut y_chk));
    let twin_stats = if b.opts.variant("twin") {
        let f = b.func(twin)?;
        let (qw, qz, sc) = packed(&w)?;
        let (ki, ni, gi) = (i32_of(k)?, i32_of(n)?, i32_of(g)?);
        i32_of(k * n)?;
        // The specs' raw grid, `grid(ceil(N / 2048), min(ceil(K / 8), 65535)) block(256)`:
        // a thread per 8 x 8 tile.
        let (gx, gy) = (n.div_ceil(2048), k.div_ceil(8).min(65535));
        let cfg = LaunchConfig {
            grid_dim: (u32::try_from(gx)?, u32::try_from(gy)?, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        Some(b.time(&mut |_| {
            let mut l = b.stream.launch_builder(&f);
            let mut y_twin_view = y_twin.slice_mut();
            l.arg(qw)
                .arg(qz)
                .arg(sc)
                .arg(&mut y_twin_view)
                .arg(&ki)
                .arg(&ni)
                .arg(&gi);
            // SAFETY: the twin reads the padded buffers of a K x N weight and writes K*N
            // outputs, with K*N below 2^31; the shapes come from the same spec. Its own
            // `n < N` and `k < K` tests keep the raw grid's spare threads idle.
            unsafe { l.launch(cfg) }?;
            Ok(())
        }))
    } else {
        None
    };
    let tol = (0.0, 0.0);
    if let Some(s) = release {
        b.row(kernel, &shape, RELEASE, bytes, s);
    }
    for (variant, st) in checked {
        b.row(kernel, &shape, variant, bytes, st);
    }
    if let Some(s) = twin_stats {
        b.row(kernel, &shape, TWIN, bytes, s);
        for (v, y) in [(RELEASE, &y_rel), (CHECKED, &y_chk), (DEFERRED, &y_chk)] {
            let text = b.verdict("compare_f16", y.slice(), y_twin.slice(), tol, "twin");
            b.output(kernel, &shape, v, text);
        }
        if ragged {
            let text = match reference(b, &w) {
                Ok(r) => b.verdict(
                    "compare_f16",
                    y_twin.slice(),
                    r.slice(),
                    tol,
                    "host reference",
                ),
                Err(e) => format!("host reference failed: {e}"),
            };
            b.output(kernel, &shape, TWIN, text);
        }
    }
    Ok(())
}

/// The variants of the GEMV twin that `--variants explore` times: name, threads across
/// (the block's x extent, 4 columns each), slices of K (its y extent) and dynamic shared
/// bytes (0: the spec's `part`, as for the twin; M = 1 variants need one f32 a slice and
/// column).
const EXPLORE_GEMV: &[(&str, u32, u32, u32)] = &[
    ("probe_read_gemv_order", 8, 32, 0),
    ("probe_read_address_order", 8, 32, 0),
    ("explore_gemv_r4_ty32_mb3_h2", 8, 32, 32 * 32 * 4),
    ("explore_gemv_r4_ty32_mb4_h2", 8, 32, 32 * 32 * 4),
    ("explore_gemv_bx32_ty16_r4_mb2", 32, 16, 16 * 128 * 4),
    ("explore_gemv_bx16_ty8_r8_mb4", 16, 8, 8 * 64 * 4),
];

fn gemv(b: &mut Bench, stubs: &Stubs<quant::Kernels>) -> Res<()> {
    let (m, k, n, g) = (1, 8192, 28672, 128);
    // Enough weight sets that no launch finds its weight in the 60 MB L2.
    const SETS: usize = 4;
    let ws = (0..SETS)
        .map(|i| {
            random_quant(
                b,
                QuantFormat::Gptq(ZeroStyle::MinusOne),
                k,
                n,
                g,
                30 + 3 * i as u32,
            )
        })
        .collect::<Res<Vec<_>>>()?;
    let mut x = Tensor::<f16>::zeros(&b.stream, &[m, k])?;
    b.fill("fill_f16", &mut x.slice_mut(), 40, -1.0, 1.0)?;
    let mut y_rel = Tensor::<f16>::zeros(&b.stream, &[m, n])?;
    let mut y_chk = Tensor::<f16>::zeros(&b.stream, &[m, n])?;
    let mut y_twin = Tensor::<f16>::zeros(&b.stream, &[m, n])?;
    let bytes = quant_bytes(&ws[0]) + bytes_of(&x) + bytes_of(&y_rel);
    let shape = format!(
        "M={m} K={k} N={n} G={g} ({}, {SETS} weight sets)",
        mb(bytes)
    );
    let kernel = "gptq_gemv";
    let release = b.opts.variant("release").then(|| {
        b.time(&mut |i| {
            done(stubs.release.gptq_gemv.launch(
                &b.stream,
                quant::GptqGemvArgs {
                    x: &x,
                    w: &ws[i % SETS],
                    y: &mut y_rel,
                },
            )?)
        })
    });
    let checked = b.time_checked(&stubs.checked, &mut |i| {
        done(stubs.checked.gptq_gemv.launch(
            &b.stream,
            quant::GptqGemvArgs {
                x: &x,
                w: &ws[i % SETS],
                y: &mut y_chk,
            },
        )?)
    });
    // Hand-written kernels of the spec's launch shape: the twin, and with `--variants
    // explore` variants of it (tiles in flight, loads ahead, __launch_bounds__).
    // The weight sets' buffers, as the twins take them.
    let sets = ws.iter().map(packed).collect::<Res<Vec<_>>>()?;
    let time_twin =
        |name: &str, across: u32, slices: u32, shared: u32, y: &mut Tensor<f16>| -> Res<Stats> {
            let f = b.func(name)?;
            let (mi, ki, ni, gi) = (i32_of(m)?, i32_of(k)?, i32_of(n)?, i32_of(g)?);
            if m > 8 {
                return Err("the gptq_gemv twin holds at most 8 rows of x (M <= 8)".into());
            }
            i32_of(m * k)?;
            i32_of(k.div_ceil(8) * n)?;
            if k % 8 != 0 || n % 8 != 0 {
                return Err("the gptq_gemv twin needs K and N multiples of 8".into());
            }
            // The spec's `grid(ceil(N / 128)) block(32, 8)` (across = 32), with its shared
            // `part: f32[8, 8, 128]` in dynamic shared memory, as the runtime sizes it (a slice
            // of K, 8 rows of x and the block's columns); a block covers 4 columns a thread
            // across.
            let cols = 4 * across as usize;
            let cfg = LaunchConfig {
                grid_dim: (u32::try_from(n.div_ceil(cols))?, 1, 1),
                block_dim: (across, slices, 1),
                shared_mem_bytes: if shared > 0 {
                    shared
                } else {
                    slices * 8 * cols as u32 * std::mem::size_of::<f32>() as u32
                },
            };
            b.time(&mut |i| {
                let (qw, qz, sc) = sets[i % SETS];
                let mut l = b.stream.launch_builder(&f);
                let mut y_view = y.slice_mut();
                l.arg(x.slice()).arg(qw).arg(qz).arg(sc).arg(&mut y_view);
                l.arg(&mi).arg(&ki).arg(&ni).arg(&gi);
                // SAFETY: x is [M, K] with M <= 8, the weight K x N (padded buffers of its
                // spec), y [M, N], all contiguous with 32-bit offsets; the shared memory the
                // kernel uses.
                unsafe { l.launch(cfg) }?;
                Ok(())
            })
        };
    let twin = if b.opts.variant("twin") {
        Some(time_twin("twin_gptq_gemv", 32, 8, 0, &mut y_twin))
    } else {
        None
    };
    // Each variant's output, compared with the twin's when it ran.
    let explored: Vec<(&str, Res<Stats>, Option<String>)> = if b.opts.variant("explore") {
        let mut y = Tensor::<f16>::zeros(&b.stream, &[m, n])?;
        EXPLORE_GEMV
            .iter()
            .map(|&(name, across, slices, shared)| {
                let s = time_twin(name, across, slices, shared, &mut y);
                let text = (twin.is_some() && !name.starts_with("probe_")).then(|| {
                    b.verdict(
                        "compare_f16",
                        y.slice(),
                        y_twin.slice(),
                        (1e-2, 1e-2),
                        "twin",
                    )
                });
                (name, s, text)
            })
            .collect()
    } else {
        Vec::new()
    };
    for (name, s, text) in explored {
        b.row(kernel, &shape, name, bytes, s);
        if let Some(text) = text {
            b.output(kernel, &shape, name, text);
        }
    }
    if let Some(s) = release {
        b.row(kernel, &shape, RELEASE, bytes, s);
    }
    for (variant, st) in checked {
        b.row(kernel, &shape, variant, bytes, st);
    }
    if let Some(s) = twin {
        b.row(kernel, &shape, TWIN, bytes, s);
        for (v, y) in [(RELEASE, &y_rel), (CHECKED, &y_chk), (DEFERRED, &y_chk)] {
            let text = b.verdict(
                "compare_f16",
                y.slice(),
                y_twin.slice(),
                (1e-2, 1e-2),
                "twin",
            );
            b.output(kernel, &shape, v, text);
        }
    }
    Ok(())
}

/// attn_scores, or with `tiled` attn_scores_tiled: the same scores, the second as a tiled
/// product in shared memory.
fn attn_scores(b: &mut Bench, stubs: &Stubs<attn::Kernels>, tiled: bool) -> Res<()> {
    let (bb, h, s, t, d) = (8, 16, 512, 512, 64);
    let scale = 1.0 / (d as f32).sqrt();
    let mut q = Tensor::<f16>::zeros(&b.stream, &[bb, h, s, d])?;
    let mut k = Tensor::<f16>::zeros(&b.stream, &[bb, h, t, d])?;
    b.fill("fill_f16", &mut q.slice_mut(), 50, -1.0, 1.0)?;
    b.fill("fill_f16", &mut k.slice_mut(), 51, -1.0, 1.0)?;
    let mut o_rel = Tensor::<f32>::zeros(&b.stream, &[bb, h, s, t])?;
    let mut o_chk = Tensor::<f32>::zeros(&b.stream, &[bb, h, s, t])?;
    let mut o_twin = Tensor::<f32>::zeros(&b.stream, &[bb, h, s, t])?;
    let bytes = bytes_of(&q) + bytes_of(&k) + bytes_of(&o_rel);
    let shape = format!("B={bb} H={h} S={s} T={t} D={d} ({})", mb(bytes));
    let kernel = if tiled {
        "attn_scores_tiled"
    } else {
        "attn_scores"
    };
    let launch = |ks: &attn::Kernels, o: &mut Tensor<f32>| -> Res<()> {
        done(if tiled {
            ks.attn_scores_tiled.launch(
                &b.stream,
                attn::AttnScoresTiledArgs {
                    q: &q,
                    k: &k,
                    o,
                    scale,
                },
            )?
        } else {
            ks.attn_scores.launch(
                &b.stream,
                attn::AttnScoresArgs {
                    q: &q,
                    k: &k,
                    o,
                    scale,
                },
            )?
        })
    };
    let release = b
        .opts
        .variant("release")
        .then(|| b.time(&mut |_| launch(&stubs.release, &mut o_rel)));
    let checked = b.time_checked(&stubs.checked, &mut |_| launch(&stubs.checked, &mut o_chk));
    let twin = if b.opts.variant("twin") {
        let f = b.func(if tiled {
            "twin_attn_scores_tiled"
        } else {
            "twin_attn_scores"
        })?;
        let (bi, hi, si, ti, di) = (i32_of(bb)?, i32_of(h)?, i32_of(s)?, i32_of(t)?, i32_of(d)?);
        i32_of(bb * h * s * t)?;
        let cfg = if tiled {
            // The spec's grid(B * H, ceil(S / 128), ceil(T / 128)) block(256), with its
            // shared qs and ks (2 x 32 x 128 f32).
            LaunchConfig {
                grid_dim: (
                    u32::try_from(bb * h)?,
                    u32::try_from(s.div_ceil(128))?,
                    u32::try_from(t.div_ceil(128))?,
                ),
                block_dim: (256, 1, 1),
                shared_mem_bytes: 2 * 32 * 128 * 4,
            }
        } else {
            per_element(bb * h * s * t)?
        };
        Some(b.time(&mut |_| {
            let mut l = b.stream.launch_builder(&f);
            let mut o_twin_view = o_twin.slice_mut();
            l.arg(q.slice()).arg(k.slice()).arg(&mut o_twin_view);
            l.arg(&bi).arg(&hi).arg(&si).arg(&ti).arg(&di).arg(&scale);
            // SAFETY: q [B, H, S, D], k [B, H, T, D], o [B, H, S, T], all contiguous.
            unsafe { l.launch(cfg) }?;
            Ok(())
        }))
    } else {
        None
    };
    if let Some(st) = release {
        b.row(kernel, &shape, RELEASE, bytes, st);
    }
    for (variant, st) in checked {
        b.row(kernel, &shape, variant, bytes, st);
    }
    if let Some(st) = twin {
        b.row(kernel, &shape, TWIN, bytes, st);
        for (v, o) in [(RELEASE, &o_rel), (CHECKED, &o_chk), (DEFERRED, &o_chk)] {
            let text = b.verdict(
                "compare_f32",
                o.slice(),
                o_twin.slice(),
                (1e-4, 1e-4),
                "twin",
            );
            b.output(kernel, &shape, v, text);
        }
    }
    Ok(())
}

/// Times `launch` on the release stubs and in the checked modes asked for: (variant,
/// times) in table order. `launch(stubs, checked, i)`, i as [`Bench::time`] numbers
/// the launches.
fn time_stub_variants<K: CheckedStubs>(
    b: &Bench,
    stubs: &Stubs<K>,
    launch: &mut dyn FnMut(&K, bool, usize) -> Res<()>,
) -> Vec<(&'static str, Res<Stats>)> {
    let mut timed = Vec::new();
    if b.opts.variant("release") {
        timed.push((RELEASE, b.time(&mut |i| launch(&stubs.release, false, i))));
    }
    timed.extend(b.time_checked(&stubs.checked, &mut |i| launch(&stubs.checked, true, i)));
    timed
}

/// The rows of `timed`, each with the output column `output` gives its variant and times.
fn add_rows(
    b: &mut Bench,
    kernel: &str,
    shape: &str,
    bytes: f64,
    timed: Vec<(&'static str, Res<Stats>)>,
    output: &dyn Fn(&Bench, &str, Option<&Stats>) -> String,
) {
    for (variant, st) in timed {
        let text = output(b, variant, st.as_ref().ok());
        b.row(kernel, shape, variant, bytes, st);
        b.output(kernel, shape, variant, text);
    }
}

/// An output column's rate: `flops` over the median time.
fn tflops(flops: f64, st: Option<&Stats>) -> String {
    st.map_or(String::new(), |st| {
        format!("{:.0} TFLOP/s", flops / st.median_us / 1e6)
    })
}

/// A twin's row: its times, and as output its TFLOP/s and how `out` compares with
/// release's `reference` (`compare` the helper of their element type) within `tol`
/// (relative, absolute; zero where both sum in the same order).
#[allow(clippy::too_many_arguments)]
fn twin_row<T>(
    b: &mut Bench,
    kernel: &str,
    shape: &str,
    bytes: f64,
    flops: f64,
    st: Res<Stats>,
    (compare, out, reference, tol): (&str, &Tensor<T>, &Tensor<T>, (f32, f32)),
) where
    T: ima::Element,
{
    let text = format!(
        "{}; {}",
        tflops(flops, st.as_ref().ok()),
        b.verdict(compare, out.slice(), reference.slice(), tol, "release")
    );
    b.row(kernel, shape, TWIN, bytes, st);
    b.output(kernel, shape, TWIN, text);
}

/// attn_scores_mma's twins (bench/twins/gemm.cu) on q `[B, H, S, D]` and k `[B, H, T, D]`,
/// `dims` = (B, H, S, T, D).
struct AttnTwin<'a> {
    q: &'a Tensor<f16>,
    k: &'a Tensor<f16>,
    dims: (usize, usize, usize, usize, usize),
    scale: f32,
}

impl AttnTwin<'_> {
    /// Times the twin `name`, whose output is of `reference`'s type, and adds its row.
    #[allow(clippy::too_many_arguments)]
    fn row<O: ima::Element>(
        &self,
        b: &mut Bench,
        name: &str,
        shape: &str,
        bytes: f64,
        flops: f64,
        reference: &Tensor<O>,
        compare: &str,
    ) -> Res<()> {
        let (bb, h, s, t, d) = self.dims;
        // The spec's grid(ceil(S / 128), B * H) block(256), qs and ks (f16 [3, 128, 64]
        // each) in dynamic shared memory.
        let (f, cfg) = twin_with_smem(
            b,
            name,
            (s.div_ceil(128), bb * h, 1),
            256,
            2 * 3 * 128 * 64 * 2,
        )?;
        let (hi, si, ti, di) = (i32_of(h)?, i32_of(s)?, i32_of(t)?, i32_of(d)?);
        i32_of(bb * h * s * t)?;
        let mut out = Tensor::<O>::zeros(&b.stream, &[bb, h, s, t])?;
        let st = b.time(&mut |_| {
            let mut l = b.stream.launch_builder(&f);
            let mut o_view = out.slice_mut();
            l.arg(self.q.slice()).arg(self.k.slice()).arg(&mut o_view);
            l.arg(&hi).arg(&si).arg(&ti).arg(&di).arg(&self.scale);
            // SAFETY: q [B, H, S, D], k [B, H, T, D], o [B, H, S, T] of the twin's output
            // type, contiguous, below 2^31 elements, with S and T multiples of 128 and D of
            // 64: every tile the twin copies and stores unguarded lies inside; the shared
            // memory it uses.
            unsafe { l.launch(cfg) }?;
            Ok(())
        });
        twin_row(
            b,
            "attn_scores_mma",
            shape,
            bytes,
            flops,
            st,
            (compare, &out, reference, (0.0, 0.0)),
        );
        Ok(())
    }
}

/// attn_scores_mma (f16 out) and attn_scores_mma_f32 at attn_scores' shape (cuBLAS's
/// time for it, through torch, is bench/torch_triton.py's `attn_scores` rows). Every f32
/// variant's output is compared with a release launch's.
fn attn_scores_mma(b: &mut Bench, stubs: &Stubs<gemm::Kernels>) -> Res<()> {
    let (bb, h, s, t, d) = (8, 16, 512, 512, 64);
    let scale = 1.0 / (d as f32).sqrt();
    let mut q = Tensor::<f16>::zeros(&b.stream, &[bb, h, s, d])?;
    let mut k = Tensor::<f16>::zeros(&b.stream, &[bb, h, t, d])?;
    b.fill("fill_f16", &mut q.slice_mut(), 50, -1.0, 1.0)?;
    b.fill("fill_f16", &mut k.slice_mut(), 51, -1.0, 1.0)?;
    let mut o16 = Tensor::<f16>::zeros(&b.stream, &[bb, h, s, t])?;
    let mut o32 = Tensor::<f32>::zeros(&b.stream, &[bb, h, s, t])?;
    let mut o32_ref = Tensor::<f32>::zeros(&b.stream, &[bb, h, s, t])?;
    done(stubs.release.attn_scores_mma_f32.launch(
        &b.stream,
        gemm::AttnScoresMmaF32Args {
            q: &q,
            k: &k,
            o: &mut o32_ref,
            scale,
        },
    )?)?;
    let mut o16_ref = Tensor::<f16>::zeros(&b.stream, &[bb, h, s, t])?;
    done(stubs.release.attn_scores_mma.launch(
        &b.stream,
        gemm::AttnScoresMmaArgs {
            q: &q,
            k: &k,
            o: &mut o16_ref,
            scale,
        },
    )?)?;
    let flops = 2.0 * (bb * h * s * t * d) as f64;
    let bytes16 = bytes_of(&q) + bytes_of(&k) + bytes_of(&o16);
    let shape16 = format!("B={bb} H={h} S={s} T={t} D={d}, f16 out ({})", mb(bytes16));
    let timed = time_stub_variants(b, stubs, &mut |ks, _, _| {
        done(ks.attn_scores_mma.launch(
            &b.stream,
            gemm::AttnScoresMmaArgs {
                q: &q,
                k: &k,
                o: &mut o16,
                scale,
            },
        )?)
    });
    add_rows(
        b,
        "attn_scores_mma",
        &shape16,
        bytes16,
        timed,
        &|_, _, st| tflops(flops, st),
    );
    let dims = (bb, h, s, t, d);
    if b.opts.variant("twin") {
        let twin = AttnTwin {
            q: &q,
            k: &k,
            dims,
            scale,
        };
        twin.row(
            b,
            "twin_attn_scores_mma",
            &shape16,
            bytes16,
            flops,
            &o16_ref,
            "compare_f16",
        )?;
    }
    let bytes32 = bytes_of(&q) + bytes_of(&k) + bytes_of(&o32);
    let shape32 = format!("B={bb} H={h} S={s} T={t} D={d}, f32 out ({})", mb(bytes32));
    let timed = time_stub_variants(b, stubs, &mut |ks, _, _| {
        done(ks.attn_scores_mma_f32.launch(
            &b.stream,
            gemm::AttnScoresMmaF32Args {
                q: &q,
                k: &k,
                o: &mut o32,
                scale,
            },
        )?)
    });
    add_rows(
        b,
        "attn_scores_mma",
        &shape32,
        bytes32,
        timed,
        &|b, _, st| {
            format!(
                "{}; {}",
                tflops(flops, st),
                b.verdict(
                    "compare_f32",
                    o32.slice(),
                    o32_ref.slice(),
                    (0.0, 0.0),
                    "release"
                )
            )
        },
    );
    if b.opts.variant("twin") {
        let twin = AttnTwin {
            q: &q,
            k: &k,
            dims,
            scale,
        };
        twin.row(
            b,
            "twin_attn_scores_mma_f32",
            &shape32,
            bytes32,
            flops,
            &o32_ref,
            "compare_f32",
        )?;
    }
    Ok(())
}

/// gemm_bf16 and gemm_f16 at M = N = K = 8192, in TFLOP/s; torch.matmul (cuBLAS) of the
/// same products is bench/torch_triton.py's `gemm` rows.
fn dense_gemm(b: &mut Bench, stubs: &Stubs<gemm::Kernels>) -> Res<()> {
    dense_gemm_of::<bf16>(b, stubs, "bf16", 60, &|ks, s, a, w, c| {
        done(ks.gemm_bf16.launch(s, gemm::GemmBf16Args { a, b: w, c })?)
    })?;
    dense_gemm_of::<f16>(b, stubs, "f16", 62, &|ks, s, a, w, c| {
        done(ks.gemm_f16.launch(s, gemm::GemmF16Args { a, b: w, c })?)
    })
}

/// `launch(kernels, stream, a, b, c)`: one dense GEMM through a stub set's kernels.
type GemmLaunch<K, T> =
    dyn Fn(&K, &Arc<CudaStream>, &Tensor<T>, &Tensor<T>, &mut Tensor<T>) -> Res<()>;

/// The operands of a timed square GEMM, release's output, and what its rows were named
/// and measured by, for the twin's row.
struct GemmCase<T> {
    n: usize,
    a: Tensor<T>,
    w: Tensor<T>,
    c_ref: Tensor<T>,
    shape: String,
    bytes: f64,
    flops: f64,
}

/// The rows of `kernel` (release and the checked modes asked for) for one dtype of a
/// GEMM at M = N = K = 8192, operands filled by `fill_{name}` with seeds `seed` and
/// `seed + 1`.
fn gemm_rows<K: CheckedStubs, T: ima::Element>(
    b: &mut Bench,
    stubs: &Stubs<K>,
    kernel: &str,
    (name, seed): (&str, u32),
    launch: &GemmLaunch<K, T>,
) -> Res<GemmCase<T>> {
    let n = 8192;
    let flops = 2.0 * (n as f64).powi(3);
    let mut a = Tensor::<T>::zeros(&b.stream, &[n, n])?;
    let mut w = Tensor::<T>::zeros(&b.stream, &[n, n])?;
    let fill = format!("fill_{name}");
    b.fill(&fill, &mut a.slice_mut(), seed, -1.0, 1.0)?;
    b.fill(&fill, &mut w.slice_mut(), seed + 1, -1.0, 1.0)?;
    let mut c = Tensor::<T>::zeros(&b.stream, &[n, n])?;
    let mut c_ref = Tensor::<T>::zeros(&b.stream, &[n, n])?;
    launch(&stubs.release, &b.stream, &a, &w, &mut c_ref)?;
    let bytes = 3.0 * bytes_of(&a);
    let timed = time_stub_variants(b, stubs, &mut |ks, _, _| {
        launch(ks, &b.stream, &a, &w, &mut c)
    });
    let shape = format!("M=N=K={n} {name} ({})", mb(bytes));
    add_rows(b, kernel, &shape, bytes, timed, &|_, _, st| {
        tflops(flops, st)
    });
    Ok(GemmCase {
        n,
        a,
        w,
        c_ref,
        shape,
        bytes,
        flops,
    })
}

/// One dtype's rows of [`dense_gemm`], and its twin's.
fn dense_gemm_of<T: ima::Element>(
    b: &mut Bench,
    stubs: &Stubs<gemm::Kernels>,
    name: &str,
    seed: u32,
    launch: &GemmLaunch<gemm::Kernels, T>,
) -> Res<()> {
    let GemmCase {
        n,
        a,
        w,
        c_ref,
        shape,
        bytes,
        flops,
    } = gemm_rows(b, stubs, "gemm", (name, seed), launch)?;
    if b.opts.variant("twin") {
        // The spec's grid(ceil(M / 128) * ceil(N / 128)) block(256), sa and sb (f16 or
        // bf16 [4, 128, 32] and [4, 32, 128]) in dynamic shared memory.
        let tiles = n.div_ceil(128);
        let (f, cfg) = twin_with_smem(
            b,
            &format!("twin_gemm_{name}"),
            (tiles * tiles, 1, 1),
            256,
            2 * 4 * 128 * 32 * 2,
        )?;
        let ni = i32_of(n)?;
        i32_of(n * n)?;
        let mut c_twin = Tensor::<T>::zeros(&b.stream, &[n, n])?;
        let st = b.time(&mut |_| {
            let mut l = b.stream.launch_builder(&f);
            let mut c_view = c_twin.slice_mut();
            l.arg(a.slice()).arg(w.slice()).arg(&mut c_view);
            l.arg(&ni).arg(&ni).arg(&ni);
            // SAFETY: a, b and c are [n, n], contiguous, n a multiple of 128 and n * n
            // below 2^31: every tile the twin copies and stores unguarded lies inside; the
            // shared memory it uses.
            unsafe { l.launch(cfg) }?;
            Ok(())
        });
        let compare = format!("compare_{name}");
        twin_row(
            b,
            "gemm",
            &shape,
            bytes,
            flops,
            st,
            (&compare, &c_twin, &c_ref, (0.0, 0.0)),
        );
    }
    Ok(())
}

/// gemm_tma_bf16 and gemm_tma_f16 (specs/gemm_tma.ima: TMA and warpgroup MMA, compute
/// capability 9.0) at M = N = K = 8192, in TFLOP/s, and their twin (bench/twins/gemm_tma.cu,
/// hand-written with no ima.cuh); torch.matmul (cuBLAS) of the same products is
/// bench/torch_triton.py's `gemm` rows.
fn gemm_tma(b: &mut Bench, stubs: &Stubs<gemm_tma::Kernels>) -> Res<()> {
    gemm_tma_of::<bf16>(b, stubs, "bf16", 60, &|ks, s, a, w, c| {
        done(
            ks.gemm_tma_bf16
                .launch(s, gemm_tma::GemmTmaBf16Args { a, b: w, c })?,
        )
    })?;
    gemm_tma_of::<f16>(b, stubs, "f16", 62, &|ks, s, a, w, c| {
        done(
            ks.gemm_tma_f16
                .launch(s, gemm_tma::GemmTmaF16Args { a, b: w, c })?,
        )
    })
}

/// One dtype's rows of [`gemm_tma`], and its twin's.
fn gemm_tma_of<T: ima::Element>(
    b: &mut Bench,
    stubs: &Stubs<gemm_tma::Kernels>,
    name: &str,
    seed: u32,
    launch: &GemmLaunch<gemm_tma::Kernels, T>,
) -> Res<()> {
    let GemmCase {
        n,
        a,
        w,
        c_ref,
        shape,
        bytes,
        flops,
    } = gemm_rows(b, stubs, "gemm_tma", (name, seed), launch)?;
    if b.opts.variant("twin") {
        // The spec's grid(ceil(N / 256), ceil(M / 128)) block(384); 4 stages of a
        // (128 x 64) and b (64 x 256), 1024 bytes of slack to align them, and the 8
        // mbarriers after them.
        let (f, cfg) = twin_with_smem(
            b,
            &format!("twin_gemm_tma_{name}"),
            (n.div_ceil(256), n.div_ceil(128), 1),
            384,
            4 * (128 * 64 + 64 * 256) * 2 + 1024 + 64,
        )?;
        // A's boxes are 128 rows by 64 of K, b's 64 of K by 64 columns (a stage takes
        // four).
        let (tm_a, tm_b) = {
            use ima::cudarc::driver::DevicePtr;
            let (pa, _ga) = a.slice().device_ptr(&b.stream);
            let (pw, _gw) = w.slice().device_ptr(&b.stream);
            (
                tensor_map::<T>(pa, n, n, 128)?,
                tensor_map::<T>(pw, n, n, 64)?,
            )
        };
        let ni = i32_of(n)?;
        let mut c_twin = Tensor::<T>::zeros(&b.stream, &[n, n])?;
        let st = b.time(&mut |_| {
            let mut l = b.stream.launch_builder(&f);
            let mut c_view = c_twin.slice_mut();
            l.arg(&tm_a).arg(&tm_b).arg(&mut c_view);
            l.arg(&ni).arg(&ni).arg(&ni);
            // SAFETY: the tensor maps describe a and b ([n, n], alive for the launch); c
            // is [n, n], n a multiple of the tiles, so the twin's unmasked stores lie
            // inside; the shared memory it uses.
            unsafe { l.launch(cfg) }?;
            Ok(())
        });
        let compare = format!("compare_{name}");
        twin_row(
            b,
            "gemm_tma",
            &shape,
            bytes,
            flops,
            st,
            (&compare, &c_twin, &c_ref, (0.0, 0.0)),
        );
    }
    Ok(())
}

/// attn_scores_tma and attn_scores_tma_f32 (specs/gemm_tma.ima: TMA and warpgroup MMA) at
/// attn_scores_mma's shape, their outputs compared with attn_scores_mma's (specs/gemm.ima,
/// mma.sync: another algorithm) in release; torch's are the `attn_scores` rows of
/// bench/torch_triton.py.
fn attn_scores_tma(
    b: &mut Bench,
    stubs: &Stubs<gemm_tma::Kernels>,
    mma: &gemm::Kernels,
) -> Res<()> {
    let (bb, h, s, t, d) = (8, 16, 512, 512, 64);
    let scale = 1.0 / (d as f32).sqrt();
    let mut q = Tensor::<f16>::zeros(&b.stream, &[bb, h, s, d])?;
    let mut k = Tensor::<f16>::zeros(&b.stream, &[bb, h, t, d])?;
    b.fill("fill_f16", &mut q.slice_mut(), 50, -1.0, 1.0)?;
    b.fill("fill_f16", &mut k.slice_mut(), 51, -1.0, 1.0)?;
    let mut o16 = Tensor::<f16>::zeros(&b.stream, &[bb, h, s, t])?;
    let mut o32 = Tensor::<f32>::zeros(&b.stream, &[bb, h, s, t])?;
    let mut o16_mma = Tensor::<f16>::zeros(&b.stream, &[bb, h, s, t])?;
    let mut o32_mma = Tensor::<f32>::zeros(&b.stream, &[bb, h, s, t])?;
    done(mma.attn_scores_mma.launch(
        &b.stream,
        gemm::AttnScoresMmaArgs {
            q: &q,
            k: &k,
            o: &mut o16_mma,
            scale,
        },
    )?)?;
    done(mma.attn_scores_mma_f32.launch(
        &b.stream,
        gemm::AttnScoresMmaF32Args {
            q: &q,
            k: &k,
            o: &mut o32_mma,
            scale,
        },
    )?)?;
    let flops = 2.0 * (bb * h * s * t * d) as f64;
    let bytes16 = bytes_of(&q) + bytes_of(&k) + bytes_of(&o16);
    let shape16 = format!("B={bb} H={h} S={s} T={t} D={d}, f16 out ({})", mb(bytes16));
    let timed = time_stub_variants(b, stubs, &mut |ks, _, _| {
        done(ks.attn_scores_tma.launch(
            &b.stream,
            gemm_tma::AttnScoresTmaArgs {
                q: &q,
                k: &k,
                o: &mut o16,
                scale,
            },
        )?)
    });
    let same16 = b.verdict(
        "compare_f16",
        o16.slice(),
        o16_mma.slice(),
        (1e-2, 1e-2),
        "attn_scores_mma",
    );
    add_rows(
        b,
        "attn_scores_tma",
        &shape16,
        bytes16,
        timed,
        &|_, _, st| format!("{}; {same16}", tflops(flops, st)),
    );
    let bytes32 = bytes_of(&q) + bytes_of(&k) + bytes_of(&o32);
    let shape32 = format!("B={bb} H={h} S={s} T={t} D={d}, f32 out ({})", mb(bytes32));
    let timed = time_stub_variants(b, stubs, &mut |ks, _, _| {
        done(ks.attn_scores_tma_f32.launch(
            &b.stream,
            gemm_tma::AttnScoresTmaF32Args {
                q: &q,
                k: &k,
                o: &mut o32,
                scale,
            },
        )?)
    });
    let same32 = b.verdict(
        "compare_f32",
        o32.slice(),
        o32_mma.slice(),
        (1e-4, 1e-4),
        "attn_scores_mma_f32",
    );
    add_rows(
        b,
        "attn_scores_tma",
        &shape32,
        bytes32,
        timed,
        &|_, _, st| format!("{}; {same32}", tflops(flops, st)),
    );
    Ok(())
}

/// A TMA tensor map: 128 opaque bytes, passed by value.
#[repr(C, align(64))]
#[derive(Clone, Copy)]
struct TensorMap([u64; 16]);
// SAFETY: 128 plain bytes, passed by value as a `__grid_constant__` kernel parameter.
unsafe impl ima::cudarc::driver::DeviceRepr for TensorMap {}

/// The twin's tensor map of a row-major 16-bit matrix of `rows` x `cols` at `ptr`, in
/// boxes of `box_rows` x 64 columns, 128-byte swizzled in shared memory, zeros outside
/// (as the runtime encodes a `tma(box_rows, 64)` argument's).
fn tensor_map<T: ima::Element>(
    ptr: u64,
    rows: usize,
    cols: usize,
    box_rows: u32,
) -> Res<TensorMap> {
    let layout = MapLayout {
        rows,
        cols,
        box_rows,
        box_cols: 64,
        swizzle: true,
    };
    match T::DTYPE {
        ima::DType::BF16 | ima::DType::F16 => tensor_map_of(ptr, T::DTYPE, layout),
        d => Err(format!("no twin tensor map of {d:?}").into()),
    }
}

/// A twin's tensor map: a row-major `rows` x `cols` matrix in boxes of `box_rows` x
/// `box_cols`, 128-byte swizzled in shared memory or not.
#[derive(Clone, Copy)]
struct MapLayout {
    rows: usize,
    cols: usize,
    box_rows: u32,
    box_cols: u32,
    swizzle: bool,
}

/// The tensor map of a row-major matrix of 16- or 32-bit `dtype` at `ptr`, zeros outside.
fn tensor_map_of(ptr: u64, dtype: ima::DType, l: MapLayout) -> Res<TensorMap> {
    use ima::cudarc::driver::sys;
    let data = match dtype {
        ima::DType::BF16 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
        ima::DType::F16 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
        ima::DType::I32 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_INT32,
        d => return Err(format!("no twin tensor map of {d:?}").into()),
    };
    let mut map = std::mem::MaybeUninit::<sys::CUtensorMap>::uninit();
    let dims = [l.cols as u64, l.rows as u64];
    let strides = [(l.cols * dtype.size()) as u64];
    let boxes = [l.box_cols, l.box_rows];
    let elems = [1u32, 1];
    let swizzle = if l.swizzle {
        sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_128B
    } else {
        sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_NONE
    };
    // SAFETY: every array has the rank's entries (strides one fewer); `ptr` is a device
    // allocation of rows x cols elements of `dtype`, 16-byte aligned, its row stride a
    // multiple of 16.
    let r = unsafe {
        sys::cuTensorMapEncodeTiled(
            map.as_mut_ptr(),
            data,
            2,
            ptr as *mut std::ffi::c_void,
            dims.as_ptr(),
            strides.as_ptr(),
            boxes.as_ptr(),
            elems.as_ptr(),
            sys::CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
            swizzle,
            sys::CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
            sys::CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
        )
    };
    if r != sys::CUresult::CUDA_SUCCESS {
        return Err(format!("cuTensorMapEncodeTiled: {r:?}").into());
    }
    // SAFETY: encoded above.
    Ok(TensorMap(unsafe { map.assume_init() }.opaque))
}

/// Weight sets of the W4A16 cases a launch cycles through (SETS of them, 122 MB each), so
/// that none finds its weights in L2: (K, N, G) = (8192, 28672, 128), GPTQ v1.
const SETS: usize = 4;
type W4a16Weights = ((usize, usize, usize), Vec<QuantTensor<f16>>);
fn w4a16_weights(b: &mut Bench) -> Res<W4a16Weights> {
    let (k, n, g) = (8192, 28672, 128);
    let ws = (0..SETS)
        .map(|i| {
            random_quant(
                b,
                QuantFormat::Gptq(ZeroStyle::MinusOne),
                k,
                n,
                g,
                70 + 3 * i as u32,
            )
        })
        .collect::<Res<Vec<_>>>()?;
    Ok(((k, n, g), ws))
}

/// gptq_gemm at M = 16, 64 and 128, K = 8192, N = 28672, G = 128, over 4 weight sets (no
/// launch finds its weight in L2): TB/s counts the weights, scales and zeros read once,
/// x read once and y written once; torch's dense `x @ W` of the same shapes is
/// bench/torch_triton.py's `gptq_gemm` rows. Each checked variant's output is compared
/// with the release one's.
fn gptq_gemm(b: &mut Bench, stubs: &Stubs<gemm::Kernels>) -> Res<()> {
    let ((k, n, g), ws) = w4a16_weights(b)?;
    for m in b.opts.rows_of(&[16, 64, 128]) {
        let mut x = Tensor::<f16>::zeros(&b.stream, &[m, k])?;
        b.fill("fill_f16", &mut x.slice_mut(), 80, -1.0, 1.0)?;
        let mut y_rel = Tensor::<f16>::zeros(&b.stream, &[m, n])?;
        let mut y_chk = Tensor::<f16>::zeros(&b.stream, &[m, n])?;
        let bytes = quant_bytes(&ws[0]) + bytes_of(&x) + bytes_of(&y_rel);
        let timed = time_stub_variants(b, stubs, &mut |ks, checked, i| {
            let y = if checked { &mut y_chk } else { &mut y_rel };
            done(ks.gptq_gemm.launch(
                &b.stream,
                gemm::GptqGemmArgs {
                    x: &x,
                    w: &ws[i % SETS],
                    y,
                },
            )?)
        });
        let shape = format!(
            "M={m} K={k} N={n} G={g} ({}, {SETS} weight sets)",
            mb(bytes)
        );
        let flops = 2.0 * (m * k * n) as f64;
        // Each checked variant's output against release's (both end on the same weight
        // set); release's row has nothing to be compared with.
        add_rows(b, "gptq_gemm", &shape, bytes, timed, &|b, variant, st| {
            if variant == RELEASE {
                return tflops(flops, st);
            }
            format!(
                "{}; {}",
                tflops(flops, st),
                b.verdict(
                    "compare_f16",
                    y_chk.slice(),
                    y_rel.slice(),
                    (0.0, 0.0),
                    "release"
                )
            )
        });
        if b.opts.variant("twin") {
            let wn = if m <= 32 { 4 } else { 2 };
            // The spec's grid at these shapes, grid(ceil(M / 32), ceil(N / (32 WN))) (blocks
            // of 16 rows would be more than 264; WN 4 for one row block of N = 28672, 2
            // for more), block(256), part (f32 [8, 32, 32]) in dynamic
            // shared memory.
            let (f, cfg) = twin_with_smem(
                b,
                "twin_gptq_gemm",
                (m.div_ceil(32), n / (32 * wn), 1),
                256,
                8 * 32 * 32 * 4,
            )?;
            let (mi, ki, ni, gi) = (i32_of(m)?, i32_of(k)?, i32_of(n)?, i32_of(g)?);
            let wni = i32_of(wn)?;
            i32_of(k * n)?;
            let parts = ws.iter().map(packed).collect::<Res<Vec<_>>>()?;
            let mut y_twin = Tensor::<f16>::zeros(&b.stream, &[m, n])?;
            let st = b.time(&mut |i| {
                let (qw, qz, sc) = parts[i % SETS];
                let mut l = b.stream.launch_builder(&f);
                let mut y_view = y_twin.slice_mut();
                l.arg(x.slice()).arg(qw).arg(qz).arg(sc).arg(&mut y_view);
                l.arg(&mi).arg(&ki).arg(&ni).arg(&gi).arg(&wni);
                // SAFETY: x [M, K] f16, qweight [K / 8, N], qzeros [K / G, N / 8], scales
                // [K / G, N] f16, y [M, N], contiguous, below 2^31 elements, with M 16 or a
                // multiple of 32, K a multiple of 1024, N of 32 WN and G = 128: every load and
                // store of the twin lies inside; the shared memory it uses.
                unsafe { l.launch(cfg) }?;
                Ok(())
            });
            twin_row(
                b,
                "gptq_gemm",
                &shape,
                bytes,
                flops,
                st,
                ("compare_f16", &y_twin, &y_rel, (0.0, 0.0)),
            );
        }
    }
    Ok(())
}

/// A W4A16 kernel of specs/gemm_tma.ima, `launch(kernels, x, W, y)`, at each M of `ms`,
/// K = 8192, N = 28672, G = 128, over 4 weight sets as gptq_gemm's case; its output is
/// compared with gptq_gemm's (specs/gemm.ima, another order of the same sums: within f16
/// rounding), each checked variant's with release's.
type W4a16TmaLaunch<'a> =
    dyn Fn(&gemm_tma::Kernels, &Tensor<f16>, &QuantTensor<f16>, &mut Tensor<f16>) -> Res<()> + 'a;
/// A launch of the kernel's twin (bench/twins/), `twin(bench, x, W, y)`, where it has one.
type W4a16TmaTwin<'a> =
    dyn Fn(&Bench, &Tensor<f16>, &QuantTensor<f16>, &mut Tensor<f16>) -> Res<()> + 'a;
fn w4a16_tma_case(
    b: &mut Bench,
    stubs: &Stubs<gemm_tma::Kernels>,
    mma: &gemm::Kernels,
    kernel: &str,
    ms: &[usize],
    launch: &W4a16TmaLaunch<'_>,
    twin: Option<&W4a16TmaTwin<'_>>,
) -> Res<()> {
    let ((k, n, g), ws) = w4a16_weights(b)?;
    for m in b.opts.rows_of(ms) {
        let mut x = Tensor::<f16>::zeros(&b.stream, &[m, k])?;
        b.fill("fill_f16", &mut x.slice_mut(), 80, -1.0, 1.0)?;
        let mut y_rel = Tensor::<f16>::zeros(&b.stream, &[m, n])?;
        let mut y_chk = Tensor::<f16>::zeros(&b.stream, &[m, n])?;
        let mut y_mma = Tensor::<f16>::zeros(&b.stream, &[m, n])?;
        done(mma.gptq_gemm.launch(
            &b.stream,
            gemm::GptqGemmArgs {
                x: &x,
                w: &ws[0],
                y: &mut y_mma,
            },
        )?)?;
        let bytes = quant_bytes(&ws[0]) + bytes_of(&x) + bytes_of(&y_rel);
        let timed = time_stub_variants(b, stubs, &mut |ks, checked, i| {
            let y = if checked { &mut y_chk } else { &mut y_rel };
            launch(ks, &x, &ws[i % SETS], y)
        });
        // The timed launches end on the last weight set; set 0's product, as gptq_gemm's,
        // from release and, where a checked variant ran, from the checked entry point.
        launch(&stubs.release, &x, &ws[0], &mut y_rel)?;
        if timed.iter().any(|(v, _)| *v != RELEASE) {
            launch(&stubs.checked, &x, &ws[0], &mut y_chk)?;
        }
        let shape = format!(
            "M={m} K={k} N={n} G={g} ({}, {SETS} weight sets)",
            mb(bytes)
        );
        let flops = 2.0 * (m * k * n) as f64;
        // Release against gptq_gemm (another order of the same sums, each weight rounded to
        // f16 with its scale, where gptq_gemm_wg16 scales a group's sums in f32: outputs of
        // 8 and more then differ by an f16 step of 7.8e-3 or two), each checked variant
        // against release.
        add_rows(b, kernel, &shape, bytes, timed, &|b, variant, st| {
            let verdict = if variant == RELEASE {
                let v = b.verdict(
                    "compare_f16",
                    y_rel.slice(),
                    y_mma.slice(),
                    (2e-3, 2e-2),
                    "gptq_gemm",
                );
                format!("release {v}")
            } else {
                b.verdict(
                    "compare_f16",
                    y_chk.slice(),
                    y_rel.slice(),
                    (0.0, 0.0),
                    "release",
                )
            };
            format!("{}; {verdict}", tflops(flops, st))
        });
        // The twins store unmasked whole accumulator tiles of 16 rows at least.
        if let Some(twin) = twin.filter(|_| b.opts.variant("twin") && m % 16 == 0) {
            let mut y_twin = Tensor::<f16>::zeros(&b.stream, &[m, n])?;
            let st = b.time(&mut |i| twin(b, &x, &ws[i % SETS], &mut y_twin));
            twin(b, &x, &ws[0], &mut y_twin)?;
            // Tiles that blocks share are summed from the blocks' slots in a fixed order in
            // both, but the twin's decode and order of sums are its own: within f16 rounding.
            twin_row(
                b,
                kernel,
                &shape,
                bytes,
                flops,
                st,
                ("compare_f16", &y_twin, &y_rel, (2e-3, 2e-3)),
            );
        }
    }
    Ok(())
}

/// gptq_gemm_tma (GPTQ words, scales, zeros and x streamed by the TMA unit, mma.sync) at
/// M = 16 and 32.
fn gptq_gemm_tma(b: &mut Bench, stubs: &Stubs<gemm_tma::Kernels>, mma: &gemm::Kernels) -> Res<()> {
    let stream = b.stream.clone();
    w4a16_tma_case(
        b,
        stubs,
        mma,
        "gptq_gemm_tma",
        &[16, 32],
        &|ks, x, w, y| {
            done(
                ks.gptq_gemm_tma
                    .launch(&stream, gemm_tma::GptqGemmTmaArgs { x, w, y })?,
            )
        },
        None,
    )
}

/// gptq_gemm_wg (the weights as warpgroup MMA's register operand, stream-K over the spec's
/// BLOCKS) at M = 16, 32, 64 and 128, on one workspace an M (each launch leaves its
/// counters zero), and its twin (bench/twins/gemm.cu's twin_gptq_gemm_wg) on a workspace
/// of its own.
fn gptq_gemm_wg(b: &mut Bench, stubs: &Stubs<gemm_tma::Kernels>, mma: &gemm::Kernels) -> Res<()> {
    let stream = b.stream.clone();
    // A workspace an M (the blocks' slots, part [BLOCKS, 3, 8, 128, 4] f32, and arrivals
    // [ceil(M / 64), ceil(N / 64)] i32, zero).
    type Workspace = std::cell::RefCell<Option<(usize, Tensor<f32>, Tensor<i32>)>>;
    let workspace_of = |slot: &Workspace, m: usize, n: usize| -> Res<()> {
        if slot.borrow().as_ref().is_none_or(|(rows, ..)| *rows != m) {
            *slot.borrow_mut() = Some((
                m,
                Tensor::zeros(&stream, &[gemm_tma::BLOCKS as usize, 3, 8, 128, 4])?,
                Tensor::zeros(&stream, &[m.div_ceil(64), n.div_ceil(64)])?,
            ));
        }
        Ok(())
    };
    let workspace = Workspace::new(None);
    let twin_workspace = Workspace::new(None);
    // The spec's persistent(BLOCKS) block(512); 3 stages of W's tile (40 x 192 i32) and
    // x's (64 x 256 f16), and 1024 bytes of slack to align them.
    let (f, cfg) = twin_with_smem(
        b,
        "twin_gptq_gemm_wg",
        (gemm_tma::BLOCKS as usize, 1, 1),
        512,
        1024 + 3 * (40 * 192 * 4 + 64 * 256 * 2),
    )?;
    w4a16_tma_case(
        b,
        stubs,
        mma,
        "gptq_gemm_wg",
        &[16, 32, 64, 128],
        &|ks, x, w, y| {
            workspace_of(&workspace, x.shape()[0], w.n())?;
            let mut slot = workspace.borrow_mut();
            let (_, part, arrivals) = slot.as_mut().expect("allocated above");
            done(ks.gptq_gemm_wg.launch(
                &stream,
                gemm_tma::GptqGemmWgArgs {
                    x,
                    w,
                    part,
                    arrivals,
                    y,
                },
            )?)
        },
        Some(&|b, x, w, y| {
            workspace_of(&twin_workspace, x.shape()[0], w.n())?;
            let mut slot = twin_workspace.borrow_mut();
            let (_, part, arrivals) = slot.as_mut().expect("allocated above");
            wg_twin_launch(b, &f, cfg, 64, x, w, part, arrivals, y)
        }),
    )
}

/// One launch of a warpgroup W4A16 twin (bench/twins/gemm.cu's twin_gptq_gemm_wg and
/// twin_gptq_gemm_wg16) on its workspace, x's tensor map in boxes of `x_rows` rows.
#[allow(clippy::too_many_arguments)]
fn wg_twin_launch(
    b: &Bench,
    f: &CudaFunction,
    cfg: LaunchConfig,
    x_rows: usize,
    x: &Tensor<f16>,
    w: &QuantTensor<f16>,
    part: &mut Tensor<f32>,
    arrivals: &mut Tensor<i32>,
    y: &mut Tensor<f16>,
) -> Res<()> {
    use ima::DType::{F16, I32};
    use ima::cudarc::driver::DevicePtr;
    let (m, k, n, g) = (x.shape()[0], w.k(), w.n(), w.spec().group());
    let (qw, qz, sc) = packed(w)?;
    // The maps the runtime encodes for the spec's tma(x_rows, 64) on x and tma(256, 192)
    // on W: x in boxes of x_rows x 64 (128-byte swizzled), the words in boxes of 32
    // packed rows by 48 columns (plain, 4 a tile), the scales and zeros in boxes of 256 / G rows by
    // 192 and 24 columns. Encoded at each launch, on the host, while the bench's hold
    // keeps the GPU from starting (`Bench::time`).
    let map = |ptr, dtype, (rows, cols), (box_rows, box_cols): (usize, u32), swizzle| {
        let box_rows = u32::try_from(box_rows)?;
        let layout = MapLayout {
            rows,
            cols,
            box_rows,
            box_cols,
            swizzle,
        };
        tensor_map_of(ptr, dtype, layout)
    };
    let (px, pw) = (
        x.slice().device_ptr(&b.stream).0,
        qw.device_ptr(&b.stream).0,
    );
    let (ps, pz) = (sc.device_ptr(&b.stream).0, qz.device_ptr(&b.stream).0);
    let maps = [
        map(px, F16, (m, k), (x_rows, 64), true)?,
        map(pw, I32, (k / 8, n), (32, 48), false)?,
        map(ps, F16, (k / g, n), (256 / g, 192), false)?,
        map(pz, I32, (k / g, n / 8), (256 / g, 24), false)?,
    ];
    let (mi, ki, ni, gi) = (i32_of(m)?, i32_of(k)?, i32_of(n)?, i32_of(g)?);
    i32_of(m * n)?;
    let mut l = b.stream.launch_builder(f);
    let (mut part_view, mut arrivals_view, mut y_view) =
        (part.slice_mut(), arrivals.slice_mut(), y.slice_mut());
    l.arg(&maps[0]).arg(&maps[1]).arg(&maps[2]).arg(&maps[3]);
    l.arg(&mut part_view)
        .arg(&mut arrivals_view)
        .arg(&mut y_view);
    l.arg(&mi).arg(&ki).arg(&ni).arg(&gi);
    // SAFETY: the maps describe x [M, K] f16 and W's qweight [K / 8, N], scales [K / G, N]
    // f16 and qzeros [K / G, N / 8], alive for the launch; part [BLOCKS, 3, tiles, 128, 4],
    // the blocks' slots of the twin's accumulator tiles; arrivals [ceil(M / 64),
    // ceil(N / 64)] zero, as each launch leaves it; y [M, N]; M is a multiple of the
    // twin's accumulator rows (16, 32 or 64), N of 64, and G divides 256 (and is 128 or
    // 256 for twin_gptq_gemm_wg16), so the twin's unmasked stores and sums lie inside; the
    // shared memory it uses. Cooperative, as the spec's `persistent` launch is: its blocks
    // wait for each other.
    unsafe { l.launch_cooperative(cfg) }?;
    Ok(())
}

/// The workspace of gptq_gemm_wg16 or gptq_gemm_wg32 (or a twin), allocated at its first
/// launch and shared by the case's launches: the blocks' slots, part [BLOCKS, 3, tiles,
/// 128, 4] f32 (tiles: the kernel's rows / 8), and arrivals [1, ceil(N / 64)] i32, zero, as
/// each launch leaves them.
struct SmallWgWorkspace<'s> {
    stream: &'s Arc<CudaStream>,
    tiles: usize,
    slot: std::cell::RefCell<Option<WgSlots>>,
}

/// A warpgroup W4A16 kernel's blocks' slots and arrival counters.
type WgSlots = (Tensor<f32>, Tensor<i32>);

impl<'s> SmallWgWorkspace<'s> {
    fn new(stream: &'s Arc<CudaStream>, tiles: usize) -> Self {
        SmallWgWorkspace {
            stream,
            tiles,
            slot: std::cell::RefCell::new(None),
        }
    }

    /// The workspace (part, arrivals) for W's N columns, allocated at the first call.
    fn get(&self, n: usize) -> Res<std::cell::RefMut<'_, WgSlots>> {
        let mut slot = self.slot.borrow_mut();
        if slot.is_none() {
            *slot = Some((
                Tensor::zeros(
                    self.stream,
                    &[gemm_tma::BLOCKS as usize, 3, self.tiles, 128, 4],
                )?,
                Tensor::zeros(self.stream, &[1, n.div_ceil(64)])?,
            ));
        }
        Ok(std::cell::RefMut::map(slot, |s| {
            s.as_mut().expect("allocated above")
        }))
    }
}

/// gptq_gemm_wg16 (gptq_gemm_wg's units for up to 16 rows of x: 5 stages of x's 16 rows,
/// the group's scale after the MMA) at M = 1, 8 and 16, on one workspace (each launch
/// leaves its counters zero), and its twin (twin_gptq_gemm_wg16) on a workspace of its
/// own, at M = 16 only (its stores are unmasked).
fn gptq_gemm_wg16(b: &mut Bench, stubs: &Stubs<gemm_tma::Kernels>, mma: &gemm::Kernels) -> Res<()> {
    let stream = b.stream.clone();
    let workspace = SmallWgWorkspace::new(&stream, 2);
    let twin_workspace = SmallWgWorkspace::new(&stream, 2);
    // The spec's persistent(BLOCKS) block(512); 5 stages of W's tile (40 x 192 i32) and
    // x's (16 x 256 f16), and 1024 bytes of slack to align them.
    let (f, cfg) = twin_with_smem(
        b,
        "twin_gptq_gemm_wg16",
        (gemm_tma::BLOCKS as usize, 1, 1),
        512,
        1024 + 5 * (40 * 192 * 4 + 16 * 256 * 2),
    )?;
    w4a16_tma_case(
        b,
        stubs,
        mma,
        "gptq_gemm_wg16",
        &[1, 8, 16],
        &|ks, x, w, y| {
            let mut slot = workspace.get(w.n())?;
            let (part, arrivals) = &mut *slot;
            done(ks.gptq_gemm_wg16.launch(
                &stream,
                gemm_tma::GptqGemmWg16Args {
                    x,
                    w,
                    part,
                    arrivals,
                    y,
                },
            )?)
        },
        Some(&|b, x, w, y| {
            let mut slot = twin_workspace.get(w.n())?;
            let (part, arrivals) = &mut *slot;
            wg_twin_launch(b, &f, cfg, 16, x, w, part, arrivals, y)
        }),
    )
}

/// gptq_gemm_wg32 (gptq_gemm_wg16's body for up to 32 rows of x: 4 stages of x's 32 rows)
/// at M = 24 and 32, on one workspace (each launch leaves its counters zero); no twin.
fn gptq_gemm_wg32(b: &mut Bench, stubs: &Stubs<gemm_tma::Kernels>, mma: &gemm::Kernels) -> Res<()> {
    let stream = b.stream.clone();
    let workspace = SmallWgWorkspace::new(&stream, 4);
    w4a16_tma_case(
        b,
        stubs,
        mma,
        "gptq_gemm_wg32",
        &[24, 32],
        &|ks, x, w, y| {
            let mut slot = workspace.get(w.n())?;
            let (part, arrivals) = &mut *slot;
            done(ks.gptq_gemm_wg32.launch(
                &stream,
                gemm_tma::GptqGemmWg32Args {
                    x,
                    w,
                    part,
                    arrivals,
                    y,
                },
            )?)
        },
        None,
    )
}

fn rms_norm(b: &mut Bench, stubs: &Stubs<rmsnorm::Kernels>) -> Res<()> {
    let (n, d) = (16384, 8192);
    let eps = 1e-6f32;
    let mut x = Tensor::<bf16>::zeros(&b.stream, &[n, d])?;
    let mut w = Tensor::<bf16>::zeros(&b.stream, &[d])?;
    b.fill("fill_bf16", &mut x.slice_mut(), 60, -2.0, 2.0)?;
    b.fill("fill_bf16", &mut w.slice_mut(), 61, 0.5, 1.5)?;
    let mut y_rel = Tensor::<bf16>::zeros(&b.stream, &[n, d])?;
    let mut y_chk = Tensor::<bf16>::zeros(&b.stream, &[n, d])?;
    let mut y_twin = Tensor::<bf16>::zeros(&b.stream, &[n, d])?;
    let bytes = bytes_of(&x) + bytes_of(&w) + bytes_of(&y_rel);
    let shape = format!("[{n}, {d}] bf16 ({})", mb(bytes));
    let kernel = "rms_norm";
    let release = b.opts.variant("release").then(|| {
        b.time(&mut |_| {
            done(stubs.release.rms_norm.launch(
                &b.stream,
                rmsnorm::RmsNormArgs {
                    x: &x,
                    w: &w,
                    y: &mut y_rel,
                    eps,
                },
            )?)
        })
    });
    let checked = b.time_checked(&stubs.checked, &mut |_| {
        done(stubs.checked.rms_norm.launch(
            &b.stream,
            rmsnorm::RmsNormArgs {
                x: &x,
                w: &w,
                y: &mut y_chk,
                eps,
            },
        )?)
    });
    let twin = if b.opts.variant("twin") {
        let f = b.func("twin_rms_norm")?;
        let (ni, di) = (i32_of(n)?, i32_of(d)?);
        i32_of(n * d)?;
        if d % 8 != 0 {
            return Err("the rms_norm twin needs D % 8 == 0 (16-byte vectors)".into());
        }
        // `blocks over y[row, _] threads 256`: a block per row (N is far below the
        // runtime's grid cap, so its grid-stride loop runs once), `red: f32[32]` in dynamic
        // shared memory.
        let cfg = LaunchConfig {
            grid_dim: (u32::try_from(n)?, 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: (32 * std::mem::size_of::<f32>()) as u32,
        };
        Some(b.time(&mut |_| {
            let mut l = b.stream.launch_builder(&f);
            let mut y_twin_view = y_twin.slice_mut();
            l.arg(x.slice()).arg(w.slice()).arg(&mut y_twin_view);
            l.arg(&ni).arg(&di).arg(&eps);
            // SAFETY: x and y are [N, D], w is [D], contiguous with N*D below 2^31, and
            // D % 8 == 0: every 16-byte access is in bounds and aligned (device buffers
            // start at least 256-byte aligned). A block per row, 128 bytes of shared memory.
            unsafe { l.launch(cfg) }?;
            Ok(())
        }))
    } else {
        None
    };
    if let Some(st) = release {
        b.row(kernel, &shape, RELEASE, bytes, st);
    }
    for (variant, st) in checked {
        b.row(kernel, &shape, variant, bytes, st);
    }
    if let Some(st) = twin {
        b.row(kernel, &shape, TWIN, bytes, st);
        for (v, y) in [(RELEASE, &y_rel), (CHECKED, &y_chk), (DEFERRED, &y_chk)] {
            let text = b.verdict(
                "compare_bf16",
                y.slice(),
                y_twin.slice(),
                (1e-2, 1e-3),
                "twin",
            );
            b.output(kernel, &shape, v, text);
        }
    }
    Ok(())
}

fn rope(b: &mut Bench, stubs: &Stubs<rope::Kernels>) -> Res<()> {
    let (bb, s, h, d) = (8, 2048, 32, 128);
    // Held as [B, S, H, D], as checkpoints store it; the spec's `stored [B, S, H, D]` makes
    // the kernel read it as [B, H, S, D], so the caller passes it as it is.
    let mut x = Tensor::<f16>::zeros(&b.stream, &[bb, s, h, d])?;
    b.fill("fill_f16", &mut x.slice_mut(), 70, -1.0, 1.0)?;
    let mut cos_tab = Tensor::<f32>::zeros(&b.stream, &[s, d / 2])?;
    let mut sin_tab = Tensor::<f32>::zeros(&b.stream, &[s, d / 2])?;
    b.fill("fill_f32", &mut cos_tab.slice_mut(), 71, -1.0, 1.0)?;
    b.fill("fill_f32", &mut sin_tab.slice_mut(), 72, -1.0, 1.0)?;
    let mut y_rel = Tensor::<f16>::zeros(&b.stream, &[bb, s, h, d])?;
    let mut y_chk = Tensor::<f16>::zeros(&b.stream, &[bb, s, h, d])?;
    let mut y_twin = Tensor::<f16>::zeros(&b.stream, &[bb, s, h, d])?;
    let bytes = bytes_of(&x) + bytes_of(&cos_tab) + bytes_of(&sin_tab) + bytes_of(&y_rel);
    let shape = format!(
        "B={bb} S={s} H={h} D={d} f16, stored [B,S,H,D] ({})",
        mb(bytes)
    );
    let kernel = "rope";
    let release = b.opts.variant("release").then(|| {
        b.time(&mut |_| {
            done(stubs.release.rope.launch(
                &b.stream,
                rope::RopeArgs {
                    x: &x,
                    cos_tab: &cos_tab,
                    sin_tab: &sin_tab,
                    y: &mut y_rel,
                },
            )?)
        })
    });
    let checked = b.time_checked(&stubs.checked, &mut |_| {
        done(stubs.checked.rope.launch(
            &b.stream,
            rope::RopeArgs {
                x: &x,
                cos_tab: &cos_tab,
                sin_tab: &sin_tab,
                y: &mut y_chk,
            },
        )?)
    });
    let twin = if b.opts.variant("twin") {
        let f = b.func("twin_rope")?;
        let (bi, hi, si, di) = (i32_of(bb)?, i32_of(h)?, i32_of(s)?, i32_of(d)?);
        i32_of(bb * h * s * d)?;
        if d % 8 != 0 {
            return Err("the rope twin needs D % 8 == 0".into());
        }
        let cfg = per_element((bb * h * s * d).div_ceil(8))?;
        Some(b.time(&mut |_| {
            let mut l = b.stream.launch_builder(&f);
            let mut y_twin_view = y_twin.slice_mut();
            l.arg(x.slice())
                .arg(cos_tab.slice())
                .arg(sin_tab.slice())
                .arg(&mut y_twin_view);
            l.arg(&bi).arg(&hi).arg(&si).arg(&di);
            // SAFETY: x and y are contiguous [B, S, H, D] buffers (16-byte aligned
            // allocations, D % 8 == 0), the tables [S, D/2].
            unsafe { l.launch(cfg) }?;
            Ok(())
        }))
    } else {
        None
    };
    if let Some(st) = release {
        b.row(kernel, &shape, RELEASE, bytes, st);
    }
    for (variant, st) in checked {
        b.row(kernel, &shape, variant, bytes, st);
    }
    if let Some(st) = twin {
        b.row(kernel, &shape, TWIN, bytes, st);
        // Same physical layout: compare the buffers.
        for (v, y) in [(RELEASE, &y_rel), (CHECKED, &y_chk), (DEFERRED, &y_chk)] {
            let text = b.verdict(
                "compare_f16",
                y.slice(),
                y_twin.slice(),
                (1e-3, 1e-3),
                "twin",
            );
            b.output(kernel, &shape, v, text);
        }
    }
    Ok(())
}

/// Token ids in `0 .. v` into `ids`, by `bench_ids` (bench/twins/index.cu).
fn fill_ids(b: &Bench, ids: &mut Tensor<i32>, seed: u32, v: usize) -> Res<()> {
    let f = b.func("bench_ids")?;
    let (n, v, cfg) = (ids.numel() as i64, i32_of(v)?, grid_stride(ids.numel()));
    let mut l = b.stream.launch_builder(&f);
    let mut ids_view = ids.slice_mut();
    l.arg(&mut ids_view).arg(&n).arg(&seed).arg(&v);
    // SAFETY: bench_ids takes (int*, long long, unsigned, int) and writes elements 0..n.
    unsafe { l.launch(cfg) }?;
    Ok(())
}

fn embedding(b: &mut Bench, stubs: &Stubs<index::Kernels>) -> Res<()> {
    // A prefill of 8192 tokens through Llama 3's vocabulary of 128256 rows of 4096.
    let (t, v, d) = (8192, 128256, 4096);
    let mut ids = Tensor::<i32>::zeros(&b.stream, &[t])?;
    fill_ids(b, &mut ids, 80, v)?;
    let mut table = Tensor::<bf16>::zeros(&b.stream, &[v, d])?;
    b.fill("fill_bf16", &mut table.slice_mut(), 81, -1.0, 1.0)?;
    let mut y_rel = Tensor::<bf16>::zeros(&b.stream, &[t, d])?;
    let mut y_chk = Tensor::<bf16>::zeros(&b.stream, &[t, d])?;
    let mut y_twin = Tensor::<bf16>::zeros(&b.stream, &[t, d])?;
    // The ids, the T rows read and the T rows written.
    let bytes = bytes_of(&ids) + 2.0 * bytes_of(&y_rel);
    let shape = format!("T={t} V={v} D={d} bf16, i32 ids ({})", mb(bytes));
    let kernel = "embedding";
    let release = b.opts.variant("release").then(|| {
        b.time(&mut |_| {
            done(stubs.release.embedding.launch(
                &b.stream,
                index::EmbeddingArgs {
                    ids: &ids,
                    table: &table,
                    y: &mut y_rel,
                },
            )?)
        })
    });
    let checked = b.time_checked(&stubs.checked, &mut |_| {
        done(stubs.checked.embedding.launch(
            &b.stream,
            index::EmbeddingArgs {
                ids: &ids,
                table: &table,
                y: &mut y_chk,
            },
        )?)
    });
    // Release launches report a bad id at the next launch or here; the ids are good.
    stubs.release.check_deferred()?;
    let twin = if b.opts.variant("twin") {
        let f = b.func("twin_embedding")?;
        let (ti, d8) = (i32_of(t)?, i32_of(d / 8)?);
        i32_of(v * d)?;
        let cfg = per_element(t * d / 8)?;
        Some(b.time(&mut |_| {
            let mut l = b.stream.launch_builder(&f);
            let mut y_twin_view = y_twin.slice_mut();
            l.arg(ids.slice()).arg(table.slice()).arg(&mut y_twin_view);
            l.arg(&ti).arg(&d8);
            // SAFETY: ids holds T ids in 0 .. V (bench_ids), table is [V, D] and y [T, D],
            // contiguous, D % 8 == 0 and V * D below 2^31: every 16-byte access is in
            // bounds and aligned. A thread per 16 bytes of y.
            unsafe { l.launch(cfg) }?;
            Ok(())
        }))
    } else {
        None
    };
    if let Some(st) = release {
        b.row(kernel, &shape, RELEASE, bytes, st);
    }
    for (variant, st) in checked {
        b.row(kernel, &shape, variant, bytes, st);
    }
    if let Some(st) = twin {
        b.row(kernel, &shape, TWIN, bytes, st);
        b.copy_row(kernel, &shape, bytes)?;
        for (variant, y) in [(RELEASE, &y_rel), (CHECKED, &y_chk), (DEFERRED, &y_chk)] {
            let text = b.verdict(
                "compare_bf16",
                y.slice(),
                y_twin.slice(),
                (0.0, 0.0),
                "twin",
            );
            b.output(kernel, &shape, variant, text);
        }
    }
    Ok(())
}

/// The key and value caches of one variant, filled alike so that the variants compare.
fn caches(b: &Bench, shape: &[usize]) -> Res<(Tensor<f16>, Tensor<f16>)> {
    let mut k = Tensor::<f16>::zeros(&b.stream, shape)?;
    let mut v = Tensor::<f16>::zeros(&b.stream, shape)?;
    b.fill("fill_f16", &mut k.slice_mut(), 92, -1.0, 1.0)?;
    b.fill("fill_f16", &mut v.slice_mut(), 93, -1.0, 1.0)?;
    Ok((k, v))
}

fn reshape_and_cache(b: &mut Bench, stubs: &Stubs<index::Kernels>) -> Res<()> {
    // A prefill of 16384 tokens into Llama 3 8B's cache layout: 8 KV heads of 128, blocks
    // of 16 tokens, 4096 blocks.
    let (t, hkv, d, nb, bs) = (16384, 8, 128, 4096, 16);
    let mut key = Tensor::<f16>::zeros(&b.stream, &[t, hkv, d])?;
    let mut value = Tensor::<f16>::zeros(&b.stream, &[t, hkv, d])?;
    b.fill("fill_f16", &mut key.slice_mut(), 90, -1.0, 1.0)?;
    b.fill("fill_f16", &mut value.slice_mut(), 91, -1.0, 1.0)?;
    let mut slots = Tensor::<i64>::zeros(&b.stream, &[t])?;
    {
        let f = b.func("bench_slots")?;
        let (n, nbl, bsl) = (t as i64, nb as i64, bs as i64);
        let mut l = b.stream.launch_builder(&f);
        let mut slots_view = slots.slice_mut();
        l.arg(&mut slots_view).arg(&n).arg(&nbl).arg(&bsl);
        // SAFETY: bench_slots takes (long long*, long long, long long, long long) and
        // writes elements 0..n.
        unsafe { l.launch(grid_stride(t)) }?;
    }
    let cache = [nb, bs, hkv, d];
    let (mut k_rel, mut v_rel) = caches(b, &cache)?;
    let (mut k_chk, mut v_chk) = caches(b, &cache)?;
    let (mut k_twin, mut v_twin) = caches(b, &cache)?;
    // The slots, the key and value rows read and written.
    let bytes = bytes_of(&slots) + 2.0 * (bytes_of(&key) + bytes_of(&value));
    let shape = format!(
        "T={t} HKV={hkv} D={d} f16 into NB={nb} BS={bs}, i64 slots ({})",
        mb(bytes)
    );
    let kernel = "reshape_and_cache";
    let release = b.opts.variant("release").then(|| {
        b.time(&mut |_| {
            done(stubs.release.reshape_and_cache.launch(
                &b.stream,
                index::ReshapeAndCacheArgs {
                    key: &key,
                    value: &value,
                    slot_mapping: &slots,
                    k_cache: &mut k_rel,
                    v_cache: &mut v_rel,
                },
            )?)
        })
    });
    let checked = b.time_checked(&stubs.checked, &mut |_| {
        done(stubs.checked.reshape_and_cache.launch(
            &b.stream,
            index::ReshapeAndCacheArgs {
                key: &key,
                value: &value,
                slot_mapping: &slots,
                k_cache: &mut k_chk,
                v_cache: &mut v_chk,
            },
        )?)
    });
    stubs.release.check_deferred()?;
    let twin = if b.opts.variant("twin") {
        let f = b.func("twin_reshape_and_cache")?;
        let (ti, row8) = (i32_of(t)?, i32_of(hkv * d / 8)?);
        i32_of(nb * bs * hkv * d)?;
        let cfg = per_element(t * hkv * d / 8)?;
        Some(b.time(&mut |_| {
            let mut l = b.stream.launch_builder(&f);
            l.arg(key.slice()).arg(value.slice()).arg(slots.slice());
            let mut k_twin_view = k_twin.slice_mut();
            let mut v_twin_view = v_twin.slice_mut();
            l.arg(&mut k_twin_view).arg(&mut v_twin_view);
            l.arg(&ti).arg(&row8);
            // SAFETY: key and value are [T, HKV, D], the caches [NB, BS, HKV, D],
            // contiguous, D % 8 == 0 and the caches below 2^31 elements; every slot lies
            // in 0 .. NB * BS (bench_slots): each 16-byte access is in bounds and aligned.
            unsafe { l.launch(cfg) }?;
            Ok(())
        }))
    } else {
        None
    };
    if let Some(st) = release {
        b.row(kernel, &shape, RELEASE, bytes, st);
    }
    for (variant, st) in checked {
        b.row(kernel, &shape, variant, bytes, st);
    }
    if let Some(st) = twin {
        b.row(kernel, &shape, TWIN, bytes, st);
        b.copy_row(kernel, &shape, bytes)?;
        for (variant, k, v) in [
            (RELEASE, &k_rel, &v_rel),
            (CHECKED, &k_chk, &v_chk),
            (DEFERRED, &k_chk, &v_chk),
        ] {
            let text = [
                (k, &k_twin, "twin's k_cache"),
                (v, &v_twin, "twin's v_cache"),
            ]
            .map(|(a, t, what)| b.verdict("compare_f16", a.slice(), t.slice(), (0.0, 0.0), what))
            .join("; ");
            b.output(kernel, &shape, variant, text);
        }
    }
    Ok(())
}

// ----------------------------------------------------------------------------------------
// Paged attention (specs/paged.ima)

/// The decode shape of issue 18: B = 32 sequences of 1 to 4096 tokens, HQ = 32 query
/// heads sharing HKV = 8 KV heads, D = 128, pages of BS = 16 tokens in random order.
/// bench/torch_triton.py's `paged_attn` builds the same lengths.
fn paged_lens(b: usize) -> Vec<i32> {
    // Fixed and ragged: the shortest and the longest, then a multiplicative hash.
    (0..b as u64)
        .map(|i| match i {
            0 => 1,
            1 => 4096,
            _ => 1 + ((i * 2_654_435_761) % (1 << 32) % 4096) as i32,
        })
        .collect()
}

/// A deterministic permutation of 0..n (the LCG of the tests).
fn paged_permutation(n: usize, seed: u64) -> Vec<i32> {
    let mut v: Vec<i32> = (0..n as i32).collect();
    let mut s = seed;
    for i in (1..n).rev() {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        v.swap(i, ((s >> 33) % (i as u64 + 1)) as usize);
    }
    v
}

/// paged_attn's workspace and output, one set a variant.
struct Workspace {
    part_o: Tensor<f32>,
    part_lse: Tensor<f32>,
    arrivals: Tensor<i32>,
    out: Tensor<f16>,
}

/// paged_attn, one launch; the twin the same hand-written kernel (bench/twins/paged.cu).
/// Bytes: the K and V rows of every token in use (what the kernel must read), q, out,
/// seq_lens and block_tables; the workspace (f32 partials, a few MB, and the counters) is
/// not counted.
fn paged_attn(b: &mut Bench, stubs: &Stubs<paged::Kernels>) -> Res<()> {
    // Tokens of a run, the unit of the workspace's partitions: the spec's `PART`.
    const PART: usize = paged::PART as usize;
    // bench/twins/paged.cu's partitions: SPAN runs of PART, fixed (the spec chooses its own
    // from each sequence's length).
    const TWIN_PART: usize = 512;
    let (bb, hq, hkv, d, bs) = (32, 32, 8, 128, 16);
    let lens = paged_lens(bb);
    let p = 4096 / bs;
    let pages_of = |l: i32| (l as usize).div_ceil(bs);
    let nb: usize = lens.iter().map(|&l| pages_of(l)).sum();
    // Each sequence's pages drawn from a shuffled pool; entries past its length point at
    // page 0 (never read).
    let order = paged_permutation(nb, 18);
    let mut tables = vec![0i32; bb * p];
    let mut next = 0;
    for (s, &l) in lens.iter().enumerate() {
        for e in 0..pages_of(l) {
            tables[s * p + e] = order[next];
            next += 1;
        }
    }
    let scale = 1.0 / (d as f32).sqrt();
    let mut q = Tensor::<f16>::zeros(&b.stream, &[bb, hq, d])?;
    let mut k = Tensor::<f16>::zeros(&b.stream, &[nb, bs, hkv, d])?;
    let mut v = Tensor::<f16>::zeros(&b.stream, &[nb, bs, hkv, d])?;
    b.fill("fill_f16", &mut q.slice_mut(), 180, -1.0, 1.0)?;
    b.fill("fill_f16", &mut k.slice_mut(), 181, -1.0, 1.0)?;
    b.fill("fill_f16", &mut v.slice_mut(), 182, -1.0, 1.0)?;
    let tables_t = Tensor::from_host(&b.stream, &tables, &[bb, p])?;
    let lens_t = Tensor::from_host(&b.stream, &lens, &[bb])?;
    let np = (p * bs).div_ceil(PART);
    let tokens: usize = lens.iter().map(|&l| l as usize).sum();
    let kv_bytes = (2 * tokens * hkv * d * 2) as f64;
    let workspace = || -> Res<Workspace> {
        Ok(Workspace {
            part_o: Tensor::<f32>::zeros(&b.stream, &[bb, hq, np, d])?,
            part_lse: Tensor::<f32>::zeros(&b.stream, &[bb, hq, np])?,
            arrivals: Tensor::<i32>::zeros(&b.stream, &[bb, hq])?,
            out: Tensor::<f16>::zeros(&b.stream, &[bb, hq, d])?,
        })
    };
    let mut rel = workspace()?;
    let mut chk = workspace()?;
    let mut twin_ws = workspace()?;
    let bytes =
        kv_bytes + bytes_of(&q) + bytes_of(&rel.out) + bytes_of(&tables_t) + bytes_of(&lens_t);
    let shape = format!(
        "B={bb} HQ={hq} HKV={hkv} D={d} BS={bs}, lens 1..4096 ({} tokens; {} of K+V, {})",
        tokens,
        mb(kv_bytes),
        mb(bytes)
    );
    let kernel = "paged_attn";
    let launch = |s: &paged::Kernels, w: &mut Workspace| -> Res<()> {
        done(s.paged_attn.launch(
            &b.stream,
            paged::PagedAttnArgs {
                q: &q,
                k_cache: &k,
                v_cache: &v,
                block_tables: &tables_t,
                seq_lens: &lens_t,
                part_o: &mut w.part_o,
                part_lse: &mut w.part_lse,
                arrivals: &mut w.arrivals,
                out: &mut w.out,
                scale,
            },
        )?)
    };
    let release = b
        .opts
        .variant("release")
        .then(|| b.time(&mut |_| launch(&stubs.release, &mut rel)));
    let checked = b.time_checked(&stubs.checked, &mut |_| launch(&stubs.checked, &mut chk));
    let twin = if b.opts.variant("twin") {
        let (hqi, hkvi, di, bsi, pi) = (
            i32_of(hq)?,
            i32_of(hkv)?,
            i32_of(d)?,
            i32_of(bs)?,
            i32_of(p)?,
        );
        i32_of(nb * bs * hkv * d)?;
        // The twin's grid(ceil(P * BS / TWIN_PART), HKV * ceil(HQ / HKV / 8), B) block(128),
        // the spec's shared arrays at 16-byte boundaries: kv (f16 [4, 2, 2, 16, D]), qs (f16
        // [8, D]), red_o (f32 [2, D / 16, 32, 4]), red_ml (f32 [2, 2, 8]), pages (TWIN_PART / BS + 2
        // ints).
        let pad16 = |n: usize| n.div_ceil(16) * 16;
        let part_smem = pad16(4 * 2 * 2 * 16 * d * 2)
            + pad16(8 * d * 2)
            + pad16(2 * 8 * d * 4)
            + pad16(2 * 2 * 8 * 4)
            + (TWIN_PART / bs + 2) * 4;
        let (part_f, part_cfg) = twin_with_smem(
            b,
            "twin_paged_attn",
            (
                (p * bs).div_ceil(TWIN_PART),
                hkv * (hq / hkv).div_ceil(8),
                bb,
            ),
            128,
            part_smem,
        )?;
        Some(b.time(&mut |_| {
            let mut l = b.stream.launch_builder(&part_f);
            let mut po_view = twin_ws.part_o.slice_mut();
            let mut pl_view = twin_ws.part_lse.slice_mut();
            let mut arrivals_view = twin_ws.arrivals.slice_mut();
            let mut out_view = twin_ws.out.slice_mut();
            l.arg(q.slice())
                .arg(k.slice())
                .arg(v.slice())
                .arg(tables_t.slice())
                .arg(lens_t.slice())
                .arg(&mut po_view)
                .arg(&mut pl_view)
                .arg(&mut arrivals_view)
                .arg(&mut out_view);
            l.arg(&hqi)
                .arg(&hkvi)
                .arg(&di)
                .arg(&bsi)
                .arg(&pi)
                .arg(&scale);
            // SAFETY: q [B, HQ, D], k and v [NB, BS, HKV, D] (D = 128, 16-byte aligned
            // rows), block_tables [B, P] with every entry a sequence's length needs in
            // 0 .. NB, seq_lens [B] in 1 ..= P * BS, the workspace [B, HQ, NP(, D)], arrivals
            // [B, HQ] zeroed (each launch leaves it zero), out [B, HQ, D]; all contiguous,
            // below 2^31 elements; the shared memory the kernel uses.
            unsafe { l.launch(part_cfg) }?;
            Ok(())
        }))
    } else {
        None
    };
    if let Some(st) = release {
        b.row(kernel, &shape, RELEASE, bytes, st);
    }
    for (variant, st) in checked {
        b.row(kernel, &shape, variant, bytes, st);
    }
    if let Some(st) = twin {
        b.row(kernel, &shape, TWIN, bytes, st);
        for (v, o) in [
            (RELEASE, &rel.out),
            (CHECKED, &chk.out),
            (DEFERRED, &chk.out),
        ] {
            let text = b.verdict(
                "compare_f16",
                o.slice(),
                twin_ws.out.slice(),
                (1e-3, 1e-3),
                "twin",
            );
            b.output(kernel, &shape, v, text);
        }
    }
    Ok(())
}

/// Microseconds per call of `f`, `n` calls after `warmup`: the host's time to make them,
/// and the time until the stream finished their work.
fn per_call(
    stream: &CudaStream,
    warmup: usize,
    n: usize,
    f: &mut dyn FnMut() -> Res<()>,
) -> Res<(f64, f64)> {
    for _ in 0..warmup {
        f()?;
    }
    stream.synchronize()?;
    let start = Instant::now();
    for _ in 0..n {
        f()?;
    }
    let host = start.elapsed();
    stream.synchronize()?;
    let total = start.elapsed();
    let us = |d: std::time::Duration| d.as_secs_f64() * 1e6 / n as f64;
    Ok((us(host), us(total)))
}

/// A step of 10 small launches (rms_norm over [8, 1024] bf16, back and forth between two
/// buffers) through the stub, against one replay of the same 10 launches as a graph; and
/// what an update of one node costs the host, with the arguments of its last check (the
/// kernel's plan memo answers) and with a new eps (the checks run in full). Each direction
/// is launched through a kernel loaded for it (`there`, `back`), so that each launch finds
/// its plan in its kernel's memo, as the launches of a decode loop do.
fn graph_replay(b: &mut Bench, there: &rmsnorm::Kernels, back: &rmsnorm::Kernels) -> Res<()> {
    let (n, d, chain) = (8, 1024, 10);
    let steps = 100 * b.opts.iters;
    let stream = b.stream.clone();
    let mut x = Tensor::<bf16>::zeros(&stream, &[n, d])?;
    let mut w = Tensor::<bf16>::zeros(&stream, &[d])?;
    let mut y = Tensor::<bf16>::zeros(&stream, &[n, d])?;
    b.fill("fill_bf16", &mut x.slice_mut(), 70, -2.0, 2.0)?;
    b.fill("fill_bf16", &mut w.slice_mut(), 71, 0.5, 1.5)?;
    let eps = 1e-6f32;
    let direct = per_call(&stream, b.opts.warmup, steps, &mut || {
        for i in 0..chain {
            if i % 2 == 0 {
                done(there.rms_norm.launch(
                    &stream,
                    rmsnorm::RmsNormArgs {
                        x: &x,
                        w: &w,
                        y: &mut y,
                        eps,
                    },
                )?)?;
            } else {
                done(back.rms_norm.launch(
                    &stream,
                    rmsnorm::RmsNormArgs {
                        x: &y,
                        w: &w,
                        y: &mut x,
                        eps,
                    },
                )?)?;
            }
        }
        Ok(())
    })?;
    let mut graph = Graph::new(&stream)?;
    let (xa, wa, ya) = (graph.write(&mut x), graph.read(&w), graph.write(&mut y));
    for i in 0..chain {
        let (kernel, args) = if i % 2 == 0 {
            (there.rms_norm.kernel(), [xa, wa, ya])
        } else {
            (back.rms_norm.kernel(), [ya, wa, xa])
        };
        graph.launch(kernel, &args, &[Scalar::F32(eps)])?;
    }
    // The first replay instantiates the graph: a warm-up step.
    let replay = per_call(&stream, b.opts.warmup.max(1), steps, &mut || {
        Ok(graph.replay(&stream)?)
    })?;
    let same = per_call(&stream, b.opts.warmup, steps, &mut || {
        Ok(graph.update(0, &[xa, wa, ya], &[Scalar::F32(eps)])?)
    })?;
    let mut flip = false;
    let fresh = per_call(&stream, b.opts.warmup, steps, &mut || {
        flip = !flip;
        let e = if flip { 2.0 * eps } else { eps };
        Ok(graph.update(0, &[xa, wa, ya], &[Scalar::F32(e)])?)
    })?;
    graph.replay(&stream)?;
    graph.check()?;
    drop(graph);
    let notes = &mut b.notes;
    notes.push(format!(
        "\n### CUDA graphs\n\nrms_norm over [{n}, {d}] bf16, {chain} launches a step, {steps} \
         steps after {} warm-up steps. Host: the time to enqueue a step (or to make an \
         update); end to end: until the GPU finished the steps, a step's share.\n",
        b.opts.warmup
    ));
    notes.push("| variant | µs per step, host | µs per step, end to end |".into());
    notes.push("|---|---:|---:|".into());
    for (what, (host, total)) in [
        (format!("{chain} launches through the stub"), direct),
        (format!("1 replay of a {chain}-node graph"), replay),
    ] {
        notes.push(format!("| {what} | {host:.2} | {total:.2} |"));
    }
    for (what, (host, _)) in [
        ("update of a node, its last arguments (plan memo)", same),
        ("update of a node, a new eps (checks in full)", fresh),
    ] {
        notes.push(format!("| {what} | {host:.2} | - |"));
    }
    Ok(())
}

fn main() -> Res<()> {
    // `.gpu/on-device test` runs every staged binary with the test harness's flags;
    // a benchmark is run on purpose instead (bench/run-on-device.sh).
    if std::env::args().any(|a| a == "--include-ignored") {
        println!("a benchmark, not a test: run it through bench/run-on-device.sh");
        return Ok(());
    }
    let opts = Opts::parse()?;
    let ctx = ima::context(0)?;
    let stream = ctx.new_stream()?;
    let (major, minor) = ctx.compute_capability()?;
    let compiled = ima::compile_cuda(HELPERS, "helpers.cu", &format!("sm_{major}{minor}"))?;
    if !compiled.log.is_empty() {
        eprintln!("NVRTC on the helpers:\n{}", compiled.log);
    }
    let aux = ctx.load_module(Ptx::from_src(compiled.ptx))?;
    let mut twin_files = Vec::new();
    for (file, source) in TWIN_FILES {
        let source = ima_codegen::cuda::splice_ima_cuh(source);
        let compiled = ima::compile_cuda(&source, file, &ima::arch_for(major, minor))?;
        if !compiled.log.is_empty() {
            eprintln!("NVRTC on bench/twins/{file}:\n{}", compiled.log);
        }
        twin_files.push(ctx.load_module(Ptx::from_src(compiled.ptx))?);
    }
    let mut b = Bench {
        ctx: ctx.clone(),
        stream,
        aux,
        twin_files,
        opts,
        rows: Vec::new(),
        notes: Vec::new(),
    };
    let started = Instant::now();

    let wants = |c: &[&str], b: &Bench| c.iter().any(|c| b.opts.wants(c));
    macro_rules! stubs_of {
        ($m:ident, $($field:ident),*) => {{
            let release = $m::Kernels::load(&ctx)?;
            let mut checked = $m::Kernels::load(&ctx)?;
            $(checked.$field.kernel_mut().set_checked(true);)*
            Stubs { release, checked }
        }};
    }
    macro_rules! case {
        ($name:literal, $e:expr) => {
            if b.opts.wants($name) {
                let t = Instant::now();
                if let Err(e) = $e {
                    eprintln!("{}: {e}", $name);
                    b.notes.push(format!("- {}: failed: {e}", $name));
                }
                eprintln!("{}: {:.1} s", $name, t.elapsed().as_secs_f64());
            }
        };
    }
    if wants(&CASES[..5], &b) {
        let stubs = stubs_of!(quant, gptq_dequant, awq_dequant, gptq_gemv);
        case!("gptq_dequant", dequant(&mut b, &stubs, false, false));
        case!("gptq_dequant_ragged", dequant(&mut b, &stubs, false, true));
        case!("awq_dequant", dequant(&mut b, &stubs, true, false));
        case!("awq_dequant_ragged", dequant(&mut b, &stubs, true, true));
        case!("gptq_gemv", gemv(&mut b, &stubs));
    }
    if b.opts.wants("attn_scores") || b.opts.wants("attn_scores_tiled") {
        let stubs = stubs_of!(attn, attn_scores, attn_scores_tiled);
        case!("attn_scores", attn_scores(&mut b, &stubs, false));
        case!("attn_scores_tiled", attn_scores(&mut b, &stubs, true));
    }
    if b.opts.wants("rms_norm") {
        let stubs = stubs_of!(rmsnorm, rms_norm);
        case!("rms_norm", rms_norm(&mut b, &stubs));
    }
    if b.opts.wants("rope") {
        let stubs = stubs_of!(rope, rope);
        case!("rope", rope(&mut b, &stubs));
    }
    if b.opts.wants("embedding") || b.opts.wants("reshape_and_cache") {
        let stubs = stubs_of!(index, embedding, reshape_and_cache);
        case!("embedding", embedding(&mut b, &stubs));
        case!("reshape_and_cache", reshape_and_cache(&mut b, &stubs));
    }
    if b.opts.wants("paged_attn") {
        let stubs = stubs_of!(paged, paged_attn);
        case!("paged_attn", paged_attn(&mut b, &stubs));
    }
    if wants(&["attn_scores_mma", "gemm", "gptq_gemm"], &b) {
        let stubs = stubs_of!(
            gemm,
            attn_scores_mma,
            attn_scores_mma_f32,
            gemm_f16,
            gemm_bf16,
            gptq_gemm
        );
        case!("attn_scores_mma", attn_scores_mma(&mut b, &stubs));
        case!("gemm", dense_gemm(&mut b, &stubs));
        case!("gptq_gemm", gptq_gemm(&mut b, &stubs));
    }
    if wants(
        &[
            "gemm_tma",
            "attn_scores_tma",
            "gptq_gemm_tma",
            "gptq_gemm_wg",
            "gptq_gemm_wg16",
            "gptq_gemm_wg32",
        ],
        &b,
    ) {
        let stubs = stubs_of!(
            gemm_tma,
            gemm_tma_f16,
            gemm_tma_bf16,
            attn_scores_tma,
            attn_scores_tma_f32,
            gptq_gemm_tma,
            gptq_gemm_wg,
            gptq_gemm_wg16,
            gptq_gemm_wg32
        );
        case!("gemm_tma", gemm_tma(&mut b, &stubs));
        let mma = gemm::Kernels::load(&ctx)?;
        case!("attn_scores_tma", attn_scores_tma(&mut b, &stubs, &mma));
        case!("gptq_gemm_tma", gptq_gemm_tma(&mut b, &stubs, &mma));
        case!("gptq_gemm_wg", gptq_gemm_wg(&mut b, &stubs, &mma));
        case!("gptq_gemm_wg16", gptq_gemm_wg16(&mut b, &stubs, &mma));
        case!("gptq_gemm_wg32", gptq_gemm_wg32(&mut b, &stubs, &mma));
    }
    if b.opts.wants("graph_replay") {
        let (there, back) = (rmsnorm::Kernels::load(&ctx)?, rmsnorm::Kernels::load(&ctx)?);
        case!("graph_replay", graph_replay(&mut b, &there, &back));
    }
    let mut md = b.markdown();
    let _ = writeln!(md, "\n(bench ran {:.1} s)", started.elapsed().as_secs_f64());
    print!("{md}");
    if let Some(p) = &b.opts.out {
        std::fs::write(p, &md).map_err(|e| format!("writing {}: {e}", p.display()))?;
        eprintln!("wrote {}", p.display());
    }
    if let Some(p) = &b.opts.tsv {
        std::fs::write(p, b.tsv()).map_err(|e| format!("writing {}: {e}", p.display()))?;
    }
    // The context is poisoned after a fault; say so through the exit status.
    ctx.check_err()?;
    Ok(())
}
