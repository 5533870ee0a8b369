//! A Llama-style decoder layer's decode step from imac specs: the shapes, the host data
//! (weights quantized by the runtime's GPTQ quantizer, a paged KV cache with block tables
//! in random order), the tensors on the device, and the layer launched kernel by kernel or
//! captured once into an `ima::Graph`. Shared by examples/decode_layer/main.rs and
//! tests/decode_gpu.rs; docs/decode-layer.md walks through it.

use std::sync::Arc;

use ima::cudarc::driver::CudaStream;
use ima::cudarc::driver::sys::CUdevice_attribute;
use ima::half::f16;
use ima::{
    Error, Graph, GraphArg, Kernel, QuantFormat, QuantHost, QuantTensor, Scalar, Tensor, ZeroStyle,
    ima_kernel, quantize_gptq,
};

/// RMSNorm with the residual add and the W4A16 GEMV of 16-column blocks.
#[ima_kernel("specs/decode.ima")]
pub mod decode {}

/// The W4A16 GEMV of 128-column blocks, for the gate/up projection of one row.
#[ima_kernel("specs/quant.ima")]
pub mod quant {}

/// Paged attention decode with GQA, RoPE and the KV-cache write fused in front
/// (`paged_attn_rope`).
#[ima_kernel("specs/paged.ima")]
pub mod paged {}

/// The W4A16 tensor-core GEMM, for more rows.
#[ima_kernel("specs/gemm.ima")]
pub mod gemm {}

/// The W4A16 GEMM on Hopper's warpgroup MMA for up to 32 rows, for the larger projections
/// of 17 to 32 rows (compute capability 9.0 only).
#[ima_kernel("specs/gemm_tma.ima")]
pub mod gemm_tma {}

/// A Llama 3 8B layer's shapes.
#[derive(Debug, Clone, Copy)]
pub struct Config {
    pub hidden: usize,
    pub heads: usize,
    pub kv_heads: usize,
    pub head_dim: usize,
    pub intermediate: usize,
    /// GPTQ group size.
    pub group: usize,
    /// Tokens a KV-cache page.
    pub block_size: usize,
    /// Positions the RoPE table covers: the longest context.
    pub max_positions: usize,
    pub rope_theta: f64,
    pub eps: f32,
}

impl Config {
    pub const LLAMA_8B: Config = Config {
        hidden: 4096,
        heads: 32,
        kv_heads: 8,
        head_dim: 128,
        intermediate: 14336,
        group: 128,
        block_size: 16,
        max_positions: 4096,
        rope_theta: 500_000.0,
        eps: 1e-5,
    };

    /// Columns of the fused QKV projection.
    pub fn qkv_width(&self) -> usize {
        (self.heads + 2 * self.kv_heads) * self.head_dim
    }

    /// The layer's four projections as (name, K, N); gate_up's N columns are gate's and
    /// up's in turn, [`GATE_UP_UNIT`] of each.
    pub fn projections(&self) -> [(&'static str, usize, usize); 4] {
        [
            ("qkv", self.hidden, self.qkv_width()),
            ("o", self.heads * self.head_dim, self.hidden),
            ("gate_up", self.hidden, 2 * self.intermediate),
            ("down", self.intermediate, self.hidden),
        ]
    }
}

/// A deterministic stream of values in [-1, 1).
pub struct Lcg(u64);

impl Lcg {
    pub fn new(seed: u64) -> Lcg {
        Lcg(seed)
    }

    pub fn next_f32(&mut self) -> f32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    }

    /// An integer in `0 .. n`.
    pub fn below(&mut self, n: usize) -> usize {
        (((self.next_f32() + 1.0) / 2.0) * n as f32) as usize % n
    }

    pub fn f16s(&mut self, n: usize, scale: f32) -> Vec<f16> {
        (0..n)
            .map(|_| f16::from_f32(self.next_f32() * scale))
            .collect()
    }
}

/// The layer's weights on the host: the four projections in GPTQ int4 (v1 zeros, as
/// GPTQModel writes them), the two RMSNorm weights, and the RoPE table.
pub struct HostWeights {
    pub config: Config,
    /// qkv, o, gate_up, down, in [`Config::projections`] order.
    pub projections: Vec<QuantHost<f16>>,
    pub norm1: Vec<f16>,
    pub norm2: Vec<f16>,
    /// `[max_positions, head_dim]`: cos of each position's angles in the first half, sin
    /// in the second (vLLM's cos_sin_cache).
    pub cos_sin: Vec<f32>,
}

impl HostWeights {
    /// Random weights, uniform with variance 1/K (so activations keep their scale),
    /// quantized with group size `config.group`.
    pub fn random(config: Config, seed: u64) -> Result<HostWeights, Error> {
        let mut rng = Lcg::new(seed);
        let projections = config
            .projections()
            .iter()
            .map(|&(_, k, n)| {
                let a = (3.0 / k as f32).sqrt();
                let w: Vec<f32> = (0..k * n).map(|_| rng.next_f32() * a).collect();
                quantize_gptq::<f16>(&w, k, n, config.group, ZeroStyle::MinusOne, None)
                    .map_err(Error::from)
            })
            .collect::<Result<_, _>>()?;
        let norm = |rng: &mut Lcg| -> Vec<f16> {
            (0..config.hidden)
                .map(|_| f16::from_f32(1.0 + 0.25 * rng.next_f32()))
                .collect()
        };
        let (norm1, norm2) = (norm(&mut rng), norm(&mut rng));
        let half = config.head_dim / 2;
        let mut cos_sin = vec![0f32; config.max_positions * config.head_dim];
        for pos in 0..config.max_positions {
            for p in 0..half {
                let freq = config
                    .rope_theta
                    .powf(-((2 * p) as f64) / config.head_dim as f64);
                let angle = pos as f64 * freq;
                cos_sin[pos * config.head_dim + p] = angle.cos() as f32;
                cos_sin[pos * config.head_dim + half + p] = angle.sin() as f32;
            }
        }
        Ok(HostWeights {
            config,
            projections,
            norm1,
            norm2,
            cos_sin,
        })
    }

    /// Bytes of the quantized weights (qweight, qzeros, scales) of the four projections.
    pub fn quantized_bytes(&self) -> usize {
        self.projections
            .iter()
            .map(|w| {
                (w.qweight().len() + w.qzeros().map_or(0, <[i32]>::len)) * 4 + w.scales().len() * 2
            })
            .sum()
    }
}

/// One decode step's batch on the host: B sequences, each decoding the token at position
/// `lens[b] - 1`, with the tokens before it already in the paged cache.
#[derive(Clone)]
pub struct HostBatch {
    pub b: usize,
    /// Each sequence's context length, the new token included; 0 for a padding row.
    pub lens: Vec<i32>,
    /// The new token's position (0 for a padding row).
    pub positions: Vec<i64>,
    /// The cache slot of the new token; -1 for a padding row.
    pub slots: Vec<i64>,
    /// `[B, P]`: each sequence's pages, in random order over the cache; past a sequence's
    /// pages, entries of 0.
    pub block_tables: Vec<i32>,
    pub pages_per_seq: usize,
    /// Pages in the cache.
    pub blocks: usize,
    /// `[blocks, block_size, kv_heads, head_dim]`, random where a sequence's earlier
    /// tokens lie, zero elsewhere.
    pub k_cache: Vec<f16>,
    pub v_cache: Vec<f16>,
    /// `[B, hidden]`: the previous layer's output, and the residual stream.
    pub hidden: Vec<f16>,
    pub residual: Vec<f16>,
}

impl HostBatch {
    /// A batch of `lens.len()` sequences; a length of 0 makes a padding row (slot -1).
    pub fn new(config: &Config, lens: &[i32], seed: u64) -> HostBatch {
        let (b, bs) = (lens.len(), config.block_size);
        let mut rng = Lcg::new(seed);
        let pages: Vec<usize> = lens.iter().map(|&l| (l as usize).div_ceil(bs)).collect();
        let pages_per_seq = pages.iter().copied().max().unwrap_or(0).max(1);
        let blocks: usize = pages.iter().sum::<usize>().max(1);
        // A random permutation of the cache's pages, dealt out in order.
        let mut order: Vec<usize> = (0..blocks).collect();
        for i in (1..blocks).rev() {
            order.swap(i, rng.below(i + 1));
        }
        let mut block_tables = vec![0i32; b * pages_per_seq];
        let mut next = 0;
        for (s, &n) in pages.iter().enumerate() {
            for p in 0..n {
                block_tables[s * pages_per_seq + p] = order[next] as i32;
                next += 1;
            }
        }
        let row = config.kv_heads * config.head_dim;
        let mut k_cache = vec![f16::ZERO; blocks * bs * row];
        let mut v_cache = k_cache.clone();
        let mut positions = vec![0i64; b];
        let mut slots = vec![-1i64; b];
        for (s, &len) in lens.iter().enumerate() {
            let len = len as usize;
            if len == 0 {
                continue;
            }
            for t in 0..len {
                let slot = block_tables[s * pages_per_seq + t / bs] as usize * bs + t % bs;
                if t + 1 == len {
                    positions[s] = t as i64;
                    slots[s] = slot as i64;
                } else {
                    for cache in [&mut k_cache, &mut v_cache] {
                        for v in &mut cache[slot * row..(slot + 1) * row] {
                            *v = f16::from_f32(rng.next_f32());
                        }
                    }
                }
            }
        }
        HostBatch {
            b,
            lens: lens.to_vec(),
            positions,
            slots,
            block_tables,
            pages_per_seq,
            blocks,
            k_cache,
            v_cache,
            hidden: rng.f16s(b * config.hidden, 1.0),
            residual: rng.f16s(b * config.hidden, 1.0),
        }
    }

    /// Bytes of the KV cache the step reads: every token's keys and values.
    pub fn kv_bytes_read(&self, config: &Config) -> usize {
        let tokens: usize = self.lens.iter().map(|&l| l as usize).sum();
        tokens * 2 * config.kv_heads * config.head_dim * 2
    }
}

/// The weights on the device.
pub struct Weights {
    pub config: Config,
    pub qkv: QuantTensor<f16>,
    pub o: QuantTensor<f16>,
    pub gate_up: QuantTensor<f16>,
    pub down: QuantTensor<f16>,
    pub norm1: Tensor<f16>,
    pub norm2: Tensor<f16>,
    pub cos_sin: Tensor<f32>,
}

impl Weights {
    pub fn upload(stream: &Arc<CudaStream>, host: &HostWeights) -> Result<Weights, Error> {
        let c = host.config;
        let q = |i: usize| QuantTensor::upload(stream, &host.projections[i]);
        Ok(Weights {
            config: c,
            qkv: q(0)?,
            o: q(1)?,
            gate_up: q(2)?,
            down: q(3)?,
            norm1: Tensor::from_host(stream, &host.norm1, &[c.hidden])?,
            norm2: Tensor::from_host(stream, &host.norm2, &[c.hidden])?,
            cos_sin: Tensor::from_host(stream, &host.cos_sin, &[c.max_positions, c.head_dim])?,
        })
    }
}

/// A batch's tensors on the device: its inputs, the KV cache, the layer's intermediate
/// activations, and its outputs (`out`, and `residual` updated in place).
pub struct State {
    pub b: usize,
    pub hidden: Tensor<f16>,
    pub residual: Tensor<f16>,
    pub positions: Tensor<i64>,
    pub slots: Tensor<i64>,
    pub block_tables: Tensor<i32>,
    pub seq_lens: Tensor<i32>,
    pub k_cache: Tensor<f16>,
    pub v_cache: Tensor<f16>,
    /// The normalised input of a projection, `[B, hidden]`.
    pub normed: Tensor<f16>,
    pub qkv: Tensor<f16>,
    pub part_o: Tensor<f32>,
    pub part_lse: Tensor<f32>,
    pub arrivals: Tensor<i32>,
    /// Attention's output, `[B, heads, head_dim]`.
    pub attn: Tensor<f16>,
    pub o: Tensor<f16>,
    /// silu(gate) · up, `[B, intermediate]`: the gate/up projection's output, SiluAndMul
    /// fused.
    pub act: Tensor<f16>,
    /// The layer's output, `[B, hidden]` (the MLP's; the residual stream is `residual`).
    pub out: Tensor<f16>,
    /// gptq_gemm_wg32's workspace: the blocks' slots for the tiles they share (scratch,
    /// shared by its launches, which run one after another) and, for each projection in
    /// [`Config::projections`] order, its counters (zero, and left zero by each launch).
    pub wg_part: Tensor<f32>,
    pub wg_arrivals: [Tensor<i32>; 4],
}

/// The gate/up projection's weights hold gate's columns and up's interleaved in units of
/// this many (specs/decode.ima's, quant.ima's, gemm.ima's and gemm_tma.ima's
/// `GATE_UP_UNIT`, which must agree): columns 2u·j .. 2u·j + u - 1 are gate's u·j .., the
/// next u up's. With its output half as wide as the weights, each W4A16 kernel then fuses
/// SiluAndMul.
pub const GATE_UP_UNIT: usize = decode::GATE_UP_UNIT as usize;
const _: () = assert!(decode::GATE_UP_UNIT == gemm::GATE_UP_UNIT);
const _: () = assert!(decode::GATE_UP_UNIT == quant::GATE_UP_UNIT);
const _: () = assert!(decode::GATE_UP_UNIT == gemm_tma::GATE_UP_UNIT);

/// Tokens of a run, the unit of paged_attn's partitions and its workspace: specs/paged.ima's
/// `PART`.
const PART: usize = paged::PART as usize;

impl State {
    pub fn upload(stream: &Arc<CudaStream>, c: &Config, h: &HostBatch) -> Result<State, Error> {
        let b = h.b;
        let cache = [h.blocks, c.block_size, c.kv_heads, c.head_dim];
        let parts = (h.pages_per_seq * c.block_size).div_ceil(PART);
        let nan = |shape: &[usize]| Tensor::full(stream, f16::NAN, shape);
        let [qkv_counts, o_counts, gate_up_counts, down_counts] = c
            .projections()
            .map(|(_, _, n)| Tensor::zeros(stream, &[b.div_ceil(64), n.div_ceil(64)]));
        Ok(State {
            b,
            hidden: Tensor::from_host(stream, &h.hidden, &[b, c.hidden])?,
            residual: Tensor::from_host(stream, &h.residual, &[b, c.hidden])?,
            positions: Tensor::from_host(stream, &h.positions, &[b])?,
            slots: Tensor::from_host(stream, &h.slots, &[b])?,
            block_tables: Tensor::from_host(stream, &h.block_tables, &[b, h.pages_per_seq])?,
            seq_lens: Tensor::from_host(stream, &h.lens, &[b])?,
            k_cache: Tensor::from_host(stream, &h.k_cache, &cache)?,
            v_cache: Tensor::from_host(stream, &h.v_cache, &cache)?,
            normed: nan(&[b, c.hidden])?,
            qkv: nan(&[b, c.qkv_width()])?,
            part_o: Tensor::zeros(stream, &[b, c.heads, parts, c.head_dim])?,
            part_lse: Tensor::zeros(stream, &[b, c.heads, parts])?,
            arrivals: Tensor::zeros(stream, &[b, c.heads])?,
            attn: nan(&[b, c.heads, c.head_dim])?,
            o: nan(&[b, c.hidden])?,
            act: nan(&[b, c.intermediate])?,
            out: nan(&[b, c.hidden])?,
            wg_part: Tensor::full(stream, f32::NAN, &[gemm_tma::BLOCKS as usize, 3, 4, 128, 4])?,
            wg_arrivals: [qkv_counts?, o_counts?, gate_up_counts?, down_counts?],
        })
    }
}

/// The layer's kernels, loaded once per context.
pub struct Kernels {
    pub decode: decode::Kernels,
    pub quant: quant::Kernels,
    pub paged: paged::Kernels,
    pub gemm: gemm::Kernels,
    /// On a device of compute capability 9.0 (the only one its module loads on).
    pub gemm_tma: Option<gemm_tma::Kernels>,
    /// The device's SMs, for `projection_of`.
    sms: usize,
}

/// The W4A16 kernel of a projection: a GEMV for one row of x, a tensor-core GEMM for
/// more (the GEMVs' paths for 2 to 8 rows read the weights once for each 4 rows, and
/// from 2 rows on gptq_gemm was 1.3 to 5 times faster on the layer's shapes:
/// bench/RESULTS.md, "The W4A16 kernels by rows of x"). Of the GEMVs, blocks of
/// `quant::GEMV_COLUMNS` (128; quant's `gptq_gemv`) when they number at least the device's
/// SMs, one each (the gate/up projection: 224 blocks on an H200's 132 SMs, 20.0 us against
/// 22.5 for 16-column blocks), else of `decode::NARROW_COLUMNS` (16; `gptq_gemv_narrow`:
/// QKV, O and down, whose 32 to 48 blocks of 128 columns would leave most SMs idle), in
/// blocks of 12 warps (`gptq_gemv_narrow12`) where those fill at most one wave of
/// `decode::NARROW12_BLOCKS_AN_SM` (2, its `min_blocks`) an SM (O and down: 256 blocks on
/// 132 SMs, which blocks of 8 warps would leave 16 warps an SM). Of the GEMMs, gemm_tma's
/// `gptq_gemm_wg32` for 17 to 32 rows of weights of at least [`WARPGROUP_MIN_WEIGHTS`]
/// where it loads, else gemm's `gptq_gemm`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProjectionKernel {
    /// decode.ima's `gptq_gemv_narrow`.
    Narrow,
    /// decode.ima's `gptq_gemv_narrow12`.
    Narrow12,
    /// quant.ima's `gptq_gemv`.
    Wide,
    /// gemm.ima's `gptq_gemm`.
    Gemm,
    /// gemm_tma.ima's `gptq_gemm_wg32`.
    Warpgroup,
}

impl ProjectionKernel {
    /// The kernel for `rows` rows of x and weights of `k` x `n` on a device of `sms` SMs,
    /// where gptq_gemm_wg32 loads (`warpgroup`) or not. decode_layer.py's
    /// `projection_kernel` is the same rule for the Python layer (tests/decode_contract.rs
    /// holds the two equal).
    pub fn pick(rows: usize, k: usize, n: usize, sms: usize, warpgroup: bool) -> Self {
        if rows > 1 {
            if warpgroup && (17..=32).contains(&rows) && k * n >= WARPGROUP_MIN_WEIGHTS {
                ProjectionKernel::Warpgroup
            } else {
                ProjectionKernel::Gemm
            }
        } else if n.div_ceil(quant::GEMV_COLUMNS as usize) >= sms {
            ProjectionKernel::Wide
        } else if n.div_ceil(decode::NARROW_COLUMNS as usize)
            <= decode::NARROW12_BLOCKS_AN_SM as usize * sms
        {
            ProjectionKernel::Narrow12
        } else {
            ProjectionKernel::Narrow
        }
    }
}

/// A [`ProjectionKernel`] with the module that holds it.
#[derive(Clone, Copy)]
enum Projection<'k> {
    Narrow,
    Narrow12,
    Wide,
    Gemm,
    Warpgroup(&'k gemm_tma::Kernels),
}

/// The layer's seven launches (docs/decode-layer.md's table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    Norm,
    Qkv,
    Attention,
    O,
    SecondNorm,
    GateUp,
    Down,
}

impl Step {
    /// In the order the layer launches them.
    pub const ALL: [Step; 7] = [
        Step::Norm,
        Step::Qkv,
        Step::Attention,
        Step::O,
        Step::SecondNorm,
        Step::GateUp,
        Step::Down,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Step::Norm => "add_rms_norm",
            Step::Qkv => "QKV projection",
            Step::Attention => "paged_attn_rope",
            Step::O => "O projection",
            Step::SecondNorm => "add_rms_norm (second)",
            Step::GateUp => "gate/up projection",
            Step::Down => "down projection",
        }
    }
}

/// The weights' elements (K N) from which gptq_gemm_wg32 takes a projection of 17 to 32
/// rows (2^24, O's 4096 x 4096: all four of the layer's projections). At the layer's 32
/// rows, captured from Python on an H200 (session 46), it was faster than gptq_gemm on
/// gate/up (4096 x 28672, fused: 30.1 against 42.6 us), down (14336 x 4096: 20.3 against
/// 26.0) and QKV (14.8 against 15.6), and slower on O (13.9 against 12.7), whose runs of 2
/// to 4 stages a block left its pipeline's fill unpaid (bench/RESULTS.md, "The decode
/// layer's projections on gptq_gemm_wg32"). Once a shared tile's three warpgroups were
/// released together (9187b5c), O on it took 0.1 to 1.2 us (session 60, within the passes'
/// spread) and 1.3 to 1.4 (session 61) off the layer's graph at B = 32 on an H100, 1.6 to
/// 2.5 off its deferred graph (bench/RESULTS.md); no H200 has been lent since to time it.
pub const WARPGROUP_MIN_WEIGHTS: usize = 1 << 24;

/// A scoped thread's result, its panic passed on.
fn joined<T>(thread: std::thread::ScopedJoinHandle<'_, T>) -> T {
    thread
        .join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

impl Kernels {
    /// Compiles the layer's modules with NVRTC into the cache directory `dir` for a device
    /// of compute `capability` (`ima::Module::precompile`), with no device, at once: what
    /// [`Kernels::load`] then finds there, without compiling, on such a device in a process
    /// whose `IMA_PTX_CACHE` is `dir` (on a fresh machine NVRTC takes it about a minute,
    /// for gemm_tma.ima's). gemm_tma's module only for 9.0, the one `load` takes it on.
    pub fn precompile(
        dir: &std::path::Path,
        capability: (i32, i32),
    ) -> Result<Vec<std::path::PathBuf>, Error> {
        let mut modules = vec![
            (decode::SPEC_FILE, decode::CUDA_SOURCE),
            (quant::SPEC_FILE, quant::CUDA_SOURCE),
            (paged::SPEC_FILE, paged::CUDA_SOURCE),
            (gemm::SPEC_FILE, gemm::CUDA_SOURCE),
        ];
        if capability == (9, 0) {
            modules.push((gemm_tma::SPEC_FILE, gemm_tma::CUDA_SOURCE));
        }
        std::thread::scope(|s| {
            let threads: Vec<_> = modules
                .iter()
                .map(|&(file, source)| {
                    s.spawn(move || ima::Module::precompile(dir, file, source, capability))
                })
                .collect();
            threads.into_iter().map(joined).collect()
        })
    }

    pub fn load(ctx: &Arc<ima::cudarc::driver::CudaContext>) -> Result<Kernels, Error> {
        let attribute = |a, what: &str| {
            ctx.attribute(a).map_err(|source| Error::Driver {
                what: format!("reading the device's {what}"),
                source,
            })
        };
        let major = attribute(
            CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
            "compute capability",
        )?;
        let minor = attribute(
            CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
            "compute capability",
        )?;
        // Each module loads on a thread of its own: on a machine whose cache holds none of
        // them, NVRTC compiles the five at once, and the first load waits for the longest
        // (gemm_tma.ima's), not for their sum.
        let (decode, quant, paged, gemm, gemm_tma) = std::thread::scope(|s| {
            let decode = s.spawn(|| decode::Kernels::load(ctx));
            let quant = s.spawn(|| quant::Kernels::load(ctx));
            let paged = s.spawn(|| paged::Kernels::load(ctx));
            let gemm = s.spawn(|| gemm::Kernels::load(ctx));
            let gemm_tma =
                ((major, minor) == (9, 0)).then(|| s.spawn(|| gemm_tma::Kernels::load(ctx)));
            (
                joined(decode),
                joined(quant),
                joined(paged),
                joined(gemm),
                gemm_tma.map(joined),
            )
        });
        Ok(Kernels {
            decode: decode?,
            quant: quant?,
            paged: paged?,
            gemm: gemm?,
            gemm_tma: gemm_tma.transpose()?,
            sms: attribute(
                CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                "SM count",
            )? as usize,
        })
    }

    /// Every kernel's mode.
    pub fn set_checked_mode(&self, mode: ima::CheckedMode) {
        for k in self.all() {
            k.set_checked_mode(mode);
        }
    }

    /// The kernels the layer may launch.
    pub fn all(&self) -> Vec<&Kernel> {
        let mut all = vec![
            self.decode.add_rms_norm.kernel(),
            self.paged.paged_attn_rope.kernel(),
            self.decode.gptq_gemv_narrow.kernel(),
            self.decode.gptq_gemv_narrow12.kernel(),
            self.quant.gptq_gemv.kernel(),
            self.gemm.gptq_gemm.kernel(),
        ];
        all.extend(self.gemm_tma.as_ref().map(|t| t.gptq_gemm_wg32.kernel()));
        all
    }

    /// The projection's kernel for `rows` rows of x and weights of `k` x `n`.
    fn projection_of(&self, rows: usize, k: usize, n: usize) -> Projection<'_> {
        let warpgroup = self.gemm_tma.is_some();
        match (
            ProjectionKernel::pick(rows, k, n, self.sms, warpgroup),
            &self.gemm_tma,
        ) {
            (ProjectionKernel::Narrow, _) => Projection::Narrow,
            (ProjectionKernel::Narrow12, _) => Projection::Narrow12,
            (ProjectionKernel::Wide, _) => Projection::Wide,
            (ProjectionKernel::Warpgroup, Some(t)) => Projection::Warpgroup(t),
            // `pick` takes the warpgroup kernel only where it loaded.
            (ProjectionKernel::Gemm | ProjectionKernel::Warpgroup, _) => Projection::Gemm,
        }
    }

    /// The W4A16 kernel `p` names.
    fn kernel_of<'k>(&'k self, p: Projection<'k>) -> &'k Kernel {
        match p {
            Projection::Narrow => self.decode.gptq_gemv_narrow.kernel(),
            Projection::Narrow12 => self.decode.gptq_gemv_narrow12.kernel(),
            Projection::Wide => self.quant.gptq_gemv.kernel(),
            Projection::Gemm => self.gemm.gptq_gemm.kernel(),
            Projection::Warpgroup(t) => t.gptq_gemm_wg32.kernel(),
        }
    }

    /// y = x · w through the kernel for x's rows and w's weights; gptq_gemm_wg32's
    /// workspace is `(part, arrivals)`, the state's slots and the projection's counters.
    fn project(
        &self,
        stream: &Arc<CudaStream>,
        x: &impl ima::ReadTensor<f16>,
        w: &QuantTensor<f16>,
        y: &mut impl ima::WriteTensor<f16>,
        rows: usize,
        (part, arrivals): (&mut Tensor<f32>, &mut Tensor<i32>),
    ) -> Result<(), Error> {
        match self.projection_of(rows, w.k(), w.n()) {
            Projection::Narrow => self
                .decode
                .gptq_gemv_narrow
                .launch(stream, decode::GptqGemvNarrowArgs { x, w, y })?,
            Projection::Narrow12 => self
                .decode
                .gptq_gemv_narrow12
                .launch(stream, decode::GptqGemvNarrow12Args { x, w, y })?,
            Projection::Wide => self
                .quant
                .gptq_gemv
                .launch(stream, quant::GptqGemvArgs { x, w, y })?,
            Projection::Gemm => self
                .gemm
                .gptq_gemm
                .launch(stream, gemm::GptqGemmArgs { x, w, y })?,
            Projection::Warpgroup(t) => t.gptq_gemm_wg32.launch(
                stream,
                gemm_tma::GptqGemmWg32Args {
                    x,
                    w,
                    part,
                    arrivals,
                    y,
                },
            )?,
        };
        Ok(())
    }

    /// The layer, kernel by kernel: each launch checks its arguments against its spec.
    pub fn forward(
        &self,
        stream: &Arc<CudaStream>,
        w: &Weights,
        s: &mut State,
    ) -> Result<(), Error> {
        let c = &w.config;
        let (b, eps) = (s.b, c.eps);
        let d = &self.decode;
        d.add_rms_norm.launch(
            stream,
            decode::AddRmsNormArgs {
                x: &s.hidden,
                residual: &mut s.residual,
                w: &w.norm1,
                y: &mut s.normed,
                eps,
            },
        )?;
        let part = &mut s.wg_part;
        let [qkv_counts, o_counts, gate_up_counts, down_counts] = &mut s.wg_arrivals;
        let qkv_wg = (&mut *part, qkv_counts);
        self.project(stream, &s.normed, &w.qkv, &mut s.qkv, b, qkv_wg)?;
        self.paged.paged_attn_rope.launch(
            stream,
            paged::PagedAttnRopeArgs {
                qkv: &s.qkv,
                positions: &s.positions,
                cos_sin: &w.cos_sin,
                slot_mapping: &s.slots,
                k_cache: &mut s.k_cache,
                v_cache: &mut s.v_cache,
                block_tables: &s.block_tables,
                seq_lens: &s.seq_lens,
                part_o: &mut s.part_o,
                part_lse: &mut s.part_lse,
                arrivals: &mut s.arrivals,
                out: &mut s.attn,
                scale: attention_scale(c),
            },
        )?;
        let attn_rows = s.attn.view().with_layout(
            &[b, c.heads * c.head_dim],
            &[(c.heads * c.head_dim) as isize, 1],
            0,
        )?;
        let o_wg = (&mut *part, o_counts);
        self.project(stream, &attn_rows, &w.o, &mut s.o, b, o_wg)?;
        d.add_rms_norm.launch(
            stream,
            decode::AddRmsNormArgs {
                x: &s.o,
                residual: &mut s.residual,
                w: &w.norm2,
                y: &mut s.normed,
                eps,
            },
        )?;
        // y half as wide as W: the kernels fuse SiluAndMul (GATE_UP_UNIT).
        let gate_up_wg = (&mut *part, gate_up_counts);
        self.project(stream, &s.normed, &w.gate_up, &mut s.act, b, gate_up_wg)?;
        self.project(stream, &s.act, &w.down, &mut s.out, b, (part, down_counts))
    }

    /// One step on a fresh upload of `batch`: kernel by kernel, or captured into a graph
    /// and replayed once; then any deferred report is collected. Returns the state, whose
    /// `out` and `residual` hold the layer's outputs.
    pub fn step(
        &self,
        stream: &Arc<CudaStream>,
        w: &Weights,
        batch: &HostBatch,
        graphed: bool,
    ) -> Result<State, Error> {
        let mut s = State::upload(stream, &w.config, batch)?;
        if graphed {
            let mut graph = Graph::new(stream)?;
            self.capture(&mut graph, w, &mut s)?;
            graph.replay(stream)?;
            graph.check()?;
        } else {
            self.forward(stream, w, &mut s)?;
            for k in self.all() {
                k.check_deferred()?;
            }
        }
        Ok(s)
    }

    /// The layer captured into `graph` as seven nodes, each launch checked once, here. The
    /// graph borrows the weights and the state for its life; replay it with
    /// `graph.replay(&stream)`.
    pub fn capture<'a>(
        &'a self,
        graph: &mut Graph<'a>,
        w: &'a Weights,
        s: &'a mut State,
    ) -> Result<(), Error> {
        self.capture_omitting(graph, w, s, None)
    }

    /// `capture` with step `omit` left out of the graph, for
    /// timing what each step adds to a replay (`decode_layer ablate`). The steps after
    /// it read what an earlier replay left in its outputs: the timing is the layer's, the
    /// outputs are not.
    pub fn capture_omitting<'a>(
        &'a self,
        graph: &mut Graph<'a>,
        w: &'a Weights,
        s: &'a mut State,
        omit: Option<Step>,
    ) -> Result<(), Error> {
        self.capture_layer(graph, w, s, None, omit).map(|_| ())
    }

    /// Layers captured into `graph` one after another, as a model's decode step runs its
    /// decoder layers: each with weights and a state (KV cache, activations, workspaces)
    /// of its own. The first reads its state's `hidden` and `residual`; each later one
    /// reads the layer before's `out` as its `hidden` and updates that layer's `residual`
    /// (its own state's two are not bound). The last layer's `out` and the first's
    /// `residual` hold the stack's outputs.
    pub fn capture_stack<'a>(
        &'a self,
        graph: &mut Graph<'a>,
        layers: impl IntoIterator<Item = (&'a Weights, &'a mut State)>,
    ) -> Result<(), Error> {
        let mut stream_args = None;
        for (w, s) in layers {
            stream_args = Some(self.capture_layer(graph, w, s, stream_args, None)?);
        }
        Ok(())
    }

    /// The layer's launches into `graph`, but `omit`, reading `hidden` and updating
    /// `residual` as `stream_args` binds them ([hidden, residual]; None: the state's own).
    /// Returns the handles of the layer's `out` and `residual`, the next layer's two.
    fn capture_layer<'a>(
        &'a self,
        graph: &mut Graph<'a>,
        w: &'a Weights,
        s: &'a mut State,
        stream_args: Option<[GraphArg; 2]>,
        omit: Option<Step>,
    ) -> Result<[GraphArg; 2], Error> {
        let c = &w.config;
        let b = s.b;
        let format = QuantFormat::Gptq(ZeroStyle::MinusOne);
        let weight =
            |graph: &mut Graph<'a>, q: &'a QuantTensor<f16>| -> Result<Vec<GraphArg>, Error> {
                Ok(q.kernel_args(format, false)?
                    .into_iter()
                    .map(|a| graph.bind(a))
                    .collect())
            };
        let (qkv_w, o_w) = (weight(graph, &w.qkv)?, weight(graph, &w.o)?);
        let (gu_w, down_w) = (weight(graph, &w.gate_up)?, weight(graph, &w.down)?);
        let (norm1, norm2, cos_sin) = (
            graph.read(&w.norm1),
            graph.read(&w.norm2),
            graph.read(&w.cos_sin),
        );
        let [hidden, residual] = match stream_args {
            Some(args) => args,
            None => [graph.read(&s.hidden), graph.write(&mut s.residual)],
        };
        let (positions, slots) = (graph.read(&s.positions), graph.read(&s.slots));
        let (tables, lens) = (graph.read(&s.block_tables), graph.read(&s.seq_lens));
        let (k_cache, v_cache) = (graph.write(&mut s.k_cache), graph.write(&mut s.v_cache));
        let normed = graph.write(&mut s.normed);
        let qkv = graph.write(&mut s.qkv);
        let (part_o, part_lse) = (graph.write(&mut s.part_o), graph.write(&mut s.part_lse));
        let arrivals = graph.write(&mut s.arrivals);
        let attn = graph.write(&mut s.attn);
        let attn_rows = graph.reshape(attn, &[b, c.heads * c.head_dim])?;
        let o = graph.write(&mut s.o);
        let act = graph.write(&mut s.act);
        let out = graph.write(&mut s.out);
        let wg_part = graph.write(&mut s.wg_part);
        let [qkv_counts, o_counts, gate_up_counts, down_counts] =
            s.wg_arrivals.each_mut().map(|a| graph.write(a));

        let eps = [Scalar::F32(c.eps)];
        // x, the weight (its tensor, and its parts' handles), gptq_gemm_wg32's counters, y.
        let project = |graph: &mut Graph<'a>,
                       x: GraphArg,
                       (q, w): (&QuantTensor<f16>, &[GraphArg]),
                       counts: GraphArg,
                       y: GraphArg| {
            let p = self.projection_of(b, q.k(), q.n());
            // gptq_gemm_wg32's workspace comes between the weights and y.
            let workspace = match p {
                Projection::Warpgroup(_) => vec![wg_part, counts],
                _ => vec![],
            };
            let args: Vec<GraphArg> = std::iter::once(x)
                .chain(w.iter().copied())
                .chain(workspace)
                .chain([y])
                .collect();
            graph.launch(self.kernel_of(p), &args, &[]).map(|_| ())
        };
        let d = &self.decode;
        // Step::ALL, in order, each but `omit`.
        let keep = |step: Step| omit != Some(step);
        if keep(Step::Norm) {
            let args = [hidden, residual, norm1, normed];
            graph.launch(d.add_rms_norm.kernel(), &args, &eps)?;
        }
        if keep(Step::Qkv) {
            project(graph, normed, (&w.qkv, &qkv_w), qkv_counts, qkv)?;
        }
        if keep(Step::Attention) {
            let args = [
                qkv, positions, cos_sin, slots, k_cache, v_cache, tables, lens, part_o, part_lse,
                arrivals, attn,
            ];
            let scale = [Scalar::F32(attention_scale(c))];
            graph.launch(self.paged.paged_attn_rope.kernel(), &args, &scale)?;
        }
        if keep(Step::O) {
            project(graph, attn_rows, (&w.o, &o_w), o_counts, o)?;
        }
        if keep(Step::SecondNorm) {
            let args = [o, residual, norm2, normed];
            graph.launch(d.add_rms_norm.kernel(), &args, &eps)?;
        }
        if keep(Step::GateUp) {
            project(graph, normed, (&w.gate_up, &gu_w), gate_up_counts, act)?;
        }
        if keep(Step::Down) {
            project(graph, act, (&w.down, &down_w), down_counts, out)?;
        }
        Ok([out, residual])
    }
}

/// The ragged batches the layer is checked on: B = 1 at the shortest and longest
/// contexts, then B = 8 and B = 32 with lengths from 1 to 4096 and a padding row (length
/// 0, slot -1) each.
pub fn ragged_batches() -> Vec<Vec<i32>> {
    let mut rng = Lcg::new(11);
    let mut b32: Vec<i32> = (0..29).map(|_| 1 + rng.below(4096) as i32).collect();
    b32.extend([1, 4096, 0]);
    vec![
        vec![1],
        vec![4096],
        vec![1, 17, 4096, 513, 1000, 16, 2048, 0],
        b32,
    ]
}

/// Softmax scale: 1 / sqrt(head_dim).
pub fn attention_scale(c: &Config) -> f32 {
    1.0 / (c.head_dim as f32).sqrt()
}
