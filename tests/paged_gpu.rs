//! Paged attention decode (specs/paged.ima) end to end on a GPU, through the committed
//! generated stubs: the one kernel (partitions, then the last of them weighing them
//! together, counted in `arrivals`) against an f64 host reference
//! that gathers the pages itself, on ragged lengths (0, 1, BS - 1, BS, BS + 1, several
//! partitions), block tables in random order, D = 64, 128 and 256, GQA groups of 1, 3, 4
//! and 8, in release, checked and deferred modes; and bad block-table entries and
//! lengths, each reported as an `IndexValue` (in release too) and refused by `validate`.
//! paged_attn_rope (RoPE and the KV-cache write fused in front) against the same
//! reference over the caches as the step leaves them, and its caches against those.

#[allow(dead_code)]
mod paged {
    include!("out/specs/paged.rs");
}

mod common;

use common::lcg;
use ima::cudarc::driver::{CudaContext, CudaStream};
use ima::half::f16;
use ima::{CheckedMode, Error, IndexValue, Tensor, ValueFault};
use std::sync::Arc;

/// Tokens of a run, the unit of the workspace's partitions: the spec's `PART`.
const PART: usize = paged::PART as usize;

fn setup() -> (Arc<CudaContext>, Arc<CudaStream>, paged::Kernels) {
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.new_stream().unwrap();
    let kernels = paged::Kernels::load(&ctx).unwrap();
    (ctx, stream, kernels)
}

/// One problem on the host: shapes, data, and the table of pages.
struct Case {
    b: usize,
    hq: usize,
    hkv: usize,
    d: usize,
    bs: usize,
    /// Entries of each row of block_tables.
    p: usize,
    nb: usize,
    q: Vec<f16>,
    k: Vec<f16>,
    v: Vec<f16>,
    tables: Vec<i32>,
    lens: Vec<i32>,
    scale: f32,
}

/// A deterministic permutation of 0..n.
fn shuffled(n: usize, seed: u64) -> Vec<usize> {
    let mut v: Vec<usize> = (0..n).collect();
    let mut r = lcg(seed);
    for i in (1..n).rev() {
        let j = ((r.next().unwrap() + 1.0) * 0.5 * (i + 1) as f32) as usize;
        v.swap(i, j.min(i));
    }
    v
}

impl Case {
    /// Every sequence's pages distinct, drawn in random order from a pool with spare pages;
    /// the entries past a sequence's length are other valid page ids.
    fn new(hq: usize, hkv: usize, d: usize, bs: usize, lens: &[i32], seed: u64) -> Case {
        let longest = *lens.iter().max().unwrap() as usize;
        Case::with_width(hq, hkv, d, bs, lens, seed, longest.div_ceil(bs).max(1) + 2)
    }

    /// As `new`, with tables of `p` pages a sequence (a CUDA graph's, sized for a capacity).
    fn with_width(
        hq: usize,
        hkv: usize,
        d: usize,
        bs: usize,
        lens: &[i32],
        seed: u64,
        p: usize,
    ) -> Case {
        let b = lens.len();
        let used: usize = lens.iter().map(|&l| (l as usize).div_ceil(bs)).sum();
        let nb = used + 5;
        let order = shuffled(nb, seed);
        let mut tables = vec![0i32; b * p];
        let mut next = 0;
        for (s, &len) in lens.iter().enumerate() {
            for e in 0..p {
                tables[s * p + e] = if e < (len as usize).div_ceil(bs) {
                    next += 1;
                    order[next - 1] as i32
                } else {
                    ((s * 31 + e * 7) % nb) as i32
                };
            }
        }
        let half =
            |n: usize, seed: u64| -> Vec<f16> { lcg(seed).take(n).map(f16::from_f32).collect() };
        Case {
            b,
            hq,
            hkv,
            d,
            bs,
            p,
            nb,
            q: half(b * hq * d, seed + 1),
            k: half(nb * bs * hkv * d, seed + 2),
            v: half(nb * bs * hkv * d, seed + 3),
            tables,
            lens: lens.to_vec(),
            scale: 1.0 / (d as f32).sqrt(),
        }
    }

    fn parts(&self) -> usize {
        (self.p * self.bs).div_ceil(PART)
    }

    /// Where token t of sequence s lies for KV head kvh in the caches (k and v alike): a
    /// table entry outside `0 .. NB` counts as page 0, as the value contract makes the
    /// kernel read it.
    fn row_at(&self, s: usize, t: usize, kvh: usize) -> usize {
        let entry = self.tables[s * self.p + t / self.bs];
        let page = usize::try_from(entry)
            .ok()
            .filter(|&p| p < self.nb)
            .unwrap_or(0);
        ((page * self.bs + t % self.bs) * self.hkv + kvh) * self.d
    }

    /// softmax(q kᵀ · scale) v per query head, in f64, over the pages gathered here
    /// (`row_at`); zeros for a sequence of length 0.
    fn reference(&self) -> Vec<f64> {
        let (d, g) = (self.d, self.hq / self.hkv);
        let mut out = vec![0.0; self.b * self.hq * d];
        for s in 0..self.b {
            let len = self.lens[s] as usize;
            for h in 0..self.hq {
                let kvh = h / g;
                let at = |t: usize| self.row_at(s, t, kvh);
                let q = &self.q[(s * self.hq + h) * d..][..d];
                let scores: Vec<f64> = (0..len)
                    .map(|t| {
                        let k = &self.k[at(t)..][..d];
                        q.iter()
                            .zip(k)
                            .map(|(a, b)| a.to_f64() * b.to_f64())
                            .sum::<f64>()
                            * f64::from(self.scale)
                    })
                    .collect();
                let mx = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let w: Vec<f64> = scores.iter().map(|s| (s - mx).exp()).collect();
                let sum: f64 = w.iter().sum();
                for (t, w) in w.iter().enumerate() {
                    let v = &self.v[at(t)..][..d];
                    for (o, v) in out[(s * self.hq + h) * d..][..d].iter_mut().zip(v) {
                        *o += w / sum * v.to_f64();
                    }
                }
            }
        }
        out
    }
}

/// The case's tensors on the device, and the workspace.
struct Device {
    q: Tensor<f16>,
    k: Tensor<f16>,
    v: Tensor<f16>,
    tables: Tensor<i32>,
    lens: Tensor<i32>,
    part_o: Tensor<f32>,
    part_lse: Tensor<f32>,
    arrivals: Tensor<i32>,
    out: Tensor<f16>,
}

impl Device {
    fn upload(stream: &Arc<CudaStream>, c: &Case) -> Device {
        let np = c.parts();
        Device {
            q: Tensor::from_host(stream, &c.q, &[c.b, c.hq, c.d]).unwrap(),
            k: Tensor::from_host(stream, &c.k, &[c.nb, c.bs, c.hkv, c.d]).unwrap(),
            v: Tensor::from_host(stream, &c.v, &[c.nb, c.bs, c.hkv, c.d]).unwrap(),
            tables: Tensor::from_host(stream, &c.tables, &[c.b, c.p]).unwrap(),
            lens: Tensor::from_host(stream, &c.lens, &[c.b]).unwrap(),
            // NaN: a partition the last block reads that no block wrote shows.
            part_o: Tensor::full(stream, f32::NAN, &[c.b, c.hq, np, c.d]).unwrap(),
            part_lse: Tensor::full(stream, f32::NAN, &[c.b, c.hq, np]).unwrap(),
            arrivals: Tensor::zeros(stream, &[c.b, c.hq]).unwrap(),
            out: Tensor::full(stream, f16::NAN, &[c.b, c.hq, c.d]).unwrap(),
        }
    }

    fn launch(
        &mut self,
        stream: &Arc<CudaStream>,
        k: &paged::Kernels,
        scale: f32,
    ) -> Result<(), Error> {
        k.paged_attn
            .launch(
                stream,
                paged::PagedAttnArgs {
                    q: &self.q,
                    k_cache: &self.k,
                    v_cache: &self.v,
                    block_tables: &self.tables,
                    seq_lens: &self.lens,
                    part_o: &mut self.part_o,
                    part_lse: &mut self.part_lse,
                    arrivals: &mut self.arrivals,
                    out: &mut self.out,
                    scale,
                },
            )
            .map(|_| ())
    }

    fn validate(
        &mut self,
        stream: &Arc<CudaStream>,
        k: &paged::Kernels,
        scale: f32,
    ) -> Result<(), Error> {
        k.paged_attn.validate(
            stream,
            paged::PagedAttnArgs {
                q: &self.q,
                k_cache: &self.k,
                v_cache: &self.v,
                block_tables: &self.tables,
                seq_lens: &self.lens,
                part_o: &mut self.part_o,
                part_lse: &mut self.part_lse,
                arrivals: &mut self.arrivals,
                out: &mut self.out,
                scale,
            },
        )
    }
}

/// Compares out with the reference for every sequence but `skip`.
fn assert_close(c: &Case, got: &[f16], skip: Option<usize>, what: &str) {
    let want = c.reference();
    let row = c.hq * c.d;
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        let s = i / row;
        if Some(s) == skip {
            continue;
        }
        let g = g.to_f64();
        assert!(
            (g - w).abs() <= 2e-3 + 1e-2 * w.abs(),
            "{what}: out[{s}, {}, {}] = {g}, reference {w} (len {})",
            i % row / c.d,
            i % c.d,
            c.lens[s]
        );
    }
}

/// Lengths: 0, 1, BS - 1, BS, BS + 1, one partition exactly, one past it, and a long one.
fn ragged(bs: i32) -> Vec<i32> {
    let part = PART as i32;
    vec![1, bs - 1, bs, bs + 1, 0, part, part + 1, 2000]
}

const MODES: [CheckedMode; 3] = [CheckedMode::Off, CheckedMode::Wait, CheckedMode::Deferred];

fn set_mode(k: &paged::Kernels, mode: CheckedMode) {
    k.set_checked_mode(mode);
}

fn run_against_reference(hq: usize, hkv: usize, d: usize, bs: usize, seed: u64) {
    run_lens_against_reference(hq, hkv, d, bs, &ragged(bs as i32), seed);
}

/// As run_against_reference, on the given lengths (the fifth 0).
fn run_lens_against_reference(hq: usize, hkv: usize, d: usize, bs: usize, lens: &[i32], seed: u64) {
    run_case_against_reference(&Case::new(hq, hkv, d, bs, lens, seed));
}

/// Launches `c` twice in each mode against the reference; its fifth sequence has length 0.
fn run_case_against_reference(c: &Case) {
    let (hq, hkv, d, bs) = (c.hq, c.hkv, c.d, c.bs);
    let (_ctx, stream, kernels) = setup();
    for mode in MODES {
        set_mode(&kernels, mode);
        let mut dev = Device::upload(&stream, c);
        dev.validate(&stream, &kernels, c.scale).unwrap();
        // Twice on the same counters: each launch leaves them zero for the next.
        for launch in 0..2 {
            dev.out = Tensor::full(&stream, f16::NAN, &[c.b, c.hq, c.d]).unwrap();
            dev.launch(&stream, &kernels, c.scale).unwrap();
            kernels.check_deferred().unwrap();
            let what = format!("{mode:?} HQ={hq} HKV={hkv} D={d} BS={bs}, launch {launch}");
            assert_close(c, &dev.out.to_host(&stream).unwrap(), None, &what);
            let arrivals = dev.arrivals.to_host(&stream).unwrap();
            assert!(arrivals.iter().all(|&a| a == 0), "{what}: {arrivals:?}");
        }
        let got = dev.out.to_host(&stream).unwrap();
        // A length-0 sequence (index 4) comes out as zeros.
        assert!(
            got[4 * hq * d..][..hq * d]
                .iter()
                .all(|x| x.to_f32() == 0.0)
        );
    }
    set_mode(&kernels, CheckedMode::Off);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn paged_attention_d128_gqa4_matches_the_reference_in_every_mode() {
    run_against_reference(8, 2, 128, 16, 10);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn paged_attention_d64_mha_matches_the_reference_in_every_mode() {
    run_against_reference(4, 4, 64, 16, 20);
}

/// A group of 8 (two blocks per KV head) and pages of 7 tokens, which neither divide a
/// partition nor align with the slots' chunks.
#[test]
#[ignore = "needs a CUDA GPU"]
fn paged_attention_gqa8_and_odd_pages_match_the_reference() {
    run_against_reference(16, 2, 128, 7, 30);
}

/// Partitions of three runs: 16 sequences by 8 KV heads make 128 (sequence, head block)
/// pairs, so a sequence of 8 runs of PART tokens or more (1000, 3000) takes partitions of
/// 3 runs, one of 5 to 7 (768, 767) of 2, and one of at most SPAN runs a partition of its
/// own (specs/paged.ima's rule, from each sequence's length); 4096 (32 runs) takes 4, as
/// the grid's 9 blocks a pair (the tables' 33 runs over SPAN) hold no more partitions: all
/// in one launch. Lengths at and past one partition, two, and a run.
#[test]
#[ignore = "needs a CUDA GPU"]
fn paged_attention_with_partitions_of_three_runs_matches_the_reference() {
    let part = 3 * PART as i32;
    let lens = [
        1,
        part,
        part + 1,
        PART as i32 + 1,
        0,
        2 * part,
        2 * part - 1,
        3000,
        17,
        16,
        15,
        1000,
        511,
        4096,
        2,
        100,
    ];
    run_lens_against_reference(8, 8, 128, 16, &lens, 50);
}

/// Partitions of one run: 5 sequences by 8 KV heads (40 pairs), the longest of 6 runs:
/// 240 runs by pairs, below the 256 that take partitions of two.
#[test]
#[ignore = "needs a CUDA GPU"]
fn paged_attention_with_partitions_of_one_run_matches_the_reference() {
    run_lens_against_reference(8, 8, 128, 16, &[700, PART as i32 + 1, 1, 768, 0], 70);
}

/// Partitions whose log-sum-exps lie far apart: in each KV head one key is its group's
/// first query times 8 (a score near 30 against about 1 elsewhere), in the last partition of
/// one sequence and the first of another. The last block weighs the partitions in one pass,
/// rescaling what it has added whenever the running maximum grows: the sums of the first
/// sequence's early partitions shrink by about 2^-40 when the last one comes, and the
/// second sequence's later partitions add about as little; neither may overflow or lose the
/// dominant one. 6 sequences by 8 KV heads of 2000 tokens take partitions of 2 runs (8 a
/// sequence).
#[test]
#[ignore = "needs a CUDA GPU"]
fn partitions_far_apart_in_scale_are_weighed_together() {
    let (hq, hkv, d) = (32, 8, 128);
    let mut c = Case::new(hq, hkv, d, 16, &[2000, 2000, 700, 1, 0, 2000], 80);
    for (s, t) in [(0, 1990), (1, 3)] {
        for kvh in 0..hkv {
            let (k, q) = (c.row_at(s, t, kvh), (s * hq + kvh * (hq / hkv)) * d);
            for i in 0..d {
                c.k[k + i] = f16::from_f32(8.0 * c.q[q + i].to_f32());
            }
        }
    }
    run_case_against_reference(&c);
}

/// A partition a sequence: 128 pairs as above, and no length past SPAN runs, so each
/// block attends a whole sequence and is the only one to arrive.
#[test]
#[ignore = "needs a CUDA GPU"]
fn paged_attention_with_a_partition_a_sequence_matches_the_reference() {
    let span = PART as i32 * paged::SPAN as i32;
    let lens = [
        1,
        span,
        span - 1,
        PART as i32 + 1,
        0,
        3 * PART as i32,
        17,
        16,
        15,
        300,
        2,
        100,
        128,
        257,
        500,
        64,
    ];
    run_lens_against_reference(8, 8, 128, 16, &lens, 60);
}

/// Launches `c` and checks its output against the reference and the partitions each
/// sequence was split into: exactly the first `expected[s]` of sequence s's log-sum-exps
/// are written, for every head (the rest of the workspace keeps its NaN).
fn assert_partitions(c: &Case, expected: &[usize]) {
    let (_ctx, stream, kernels) = setup();
    let mut dev = Device::upload(&stream, c);
    dev.launch(&stream, &kernels, c.scale).unwrap();
    let what = format!("P = {}", c.p);
    assert_close(c, &dev.out.to_host(&stream).unwrap(), None, &what);
    let np = c.parts();
    let lse = dev.part_lse.to_host(&stream).unwrap();
    for (s, &want) in expected.iter().enumerate() {
        for h in 0..c.hq {
            let row = &lse[(s * c.hq + h) * np..][..np];
            let written = row.iter().filter(|x| !x.is_nan()).count();
            assert!(
                row[..want].iter().all(|x| x.is_finite()) && written == want,
                "{what}, sequence {s} (length {}), head {h}: {written} partitions written, expected {want}: {row:?}",
                c.lens[s]
            );
        }
    }
}

/// A sequence's partitions follow its length, not the width of the tables, which a CUDA
/// graph sizes for the longest sequence it may see: tables of 4096 tokens (P = 256, 32
/// runs), 3 sequences by 8 KV heads (24 pairs), so the grid has 32 blocks a pair. 1024
/// tokens are 8 runs, by pairs 192: 8 partitions of one run; 3000 are 24 runs, 576: 12 of
/// two; 100 one run, 1 partition (from the grid's 32 runs a sequence, 768 by pairs, each
/// would have taken 2 runs).
#[test]
#[ignore = "needs a CUDA GPU"]
fn partitions_follow_each_sequence_s_length_not_the_tables_width() {
    let c = Case::with_width(32, 8, 128, 16, &[1024, 3000, 100], 80, 256);
    assert_partitions(&c, &[8, 12, 1]);
}

/// The grid's cap: 32 sequences by 8 KV heads (256 pairs) take ceil(BLOCKS / 256) = 4
/// blocks a pair, raised to the 8 that SPAN runs a partition need for tables of 32 runs
/// (P = 256). 4096 tokens (32 runs) then take partitions of 4 runs, 8 of them, where the
/// rule alone gives 3; 3000 (24 runs) 3, 8 partitions; 1024 3, 3 partitions; a sequence of
/// one token (one run, with 256 pairs) a partition.
#[test]
#[ignore = "needs a CUDA GPU"]
fn a_pair_s_partitions_fit_the_grid_s_blocks() {
    assert_eq!((paged::BLOCKS, paged::SPAN), (1024, 4));
    let mut lens = vec![4096, 3000, 1024];
    lens.resize(32, 1);
    let c = Case::with_width(8, 8, 128, 16, &lens, 90, 256);
    let mut expected = vec![8, 8, 3];
    expected.resize(32, 1);
    assert_partitions(&c, &expected);
}

/// D = 256 with a group of 3 (one query head of each block's 4 unused) and pages of 32.
#[test]
#[ignore = "needs a CUDA GPU"]
fn paged_attention_d256_gqa3_matches_the_reference() {
    run_against_reference(6, 2, 256, 32, 40);
}

/// Entries past the ones a sequence's length needs are never read: garbage there (out of
/// the contract) raises no report in any mode, and the output is the reference's.
#[test]
#[ignore = "needs a CUDA GPU"]
fn table_entries_past_a_sequence_are_never_read() {
    let (_ctx, stream, kernels) = setup();
    let mut c = Case::new(8, 2, 128, 16, &ragged(16), 50);
    for s in 0..c.b {
        let needed = (c.lens[s] as usize).div_ceil(c.bs);
        for e in needed..c.p {
            c.tables[s * c.p + e] = [-1, c.nb as i32, i32::MAX, i32::MIN][(s + e) % 4];
        }
    }
    for mode in MODES {
        set_mode(&kernels, mode);
        let mut dev = Device::upload(&stream, &c);
        assert!(matches!(
            dev.validate(&stream, &kernels, c.scale),
            Err(Error::IndexValue(_))
        ));
        dev.launch(&stream, &kernels, c.scale).unwrap();
        kernels.check_deferred().unwrap();
        assert_close(
            &c,
            &dev.out.to_host(&stream).unwrap(),
            None,
            &format!("{mode:?}"),
        );
    }
    set_mode(&kernels, CheckedMode::Off);
}

/// Launches with bad data in `mode` and returns the report: from the launch itself in wait
/// mode, from `check_deferred` otherwise.
fn report(
    stream: &Arc<CudaStream>,
    kernels: &paged::Kernels,
    dev: &mut Device,
    scale: f32,
    mode: CheckedMode,
) -> Box<IndexValue> {
    set_mode(kernels, mode);
    let launched = dev.launch(stream, kernels, scale);
    let err = match mode {
        CheckedMode::Wait => launched.unwrap_err(),
        _ => {
            launched.unwrap();
            kernels.check_deferred().unwrap_err()
        }
    };
    match err {
        Error::IndexValue(r) => r,
        other => panic!("{mode:?}: expected an IndexValue report, got {other}"),
    }
}

/// A needed entry of the long sequence (index 7, entry 37: tokens 592 .. 607, the second
/// partition) set to NB, -1 and i32::MAX: `validate` refuses it, every mode reports it
/// with its argument, position and value, it reads as page 0, and every other sequence
/// comes out right.
#[test]
#[ignore = "needs a CUDA GPU"]
fn a_bad_block_table_entry_is_reported_in_every_mode() {
    let (_ctx, stream, kernels) = setup();
    let mut c = Case::new(8, 2, 128, 16, &ragged(16), 60);
    let nb = c.nb as i64;
    for bad in [c.nb as i32, -1, i32::MAX] {
        c.tables[7 * c.p + 37] = bad;
        for mode in MODES {
            let mut dev = Device::upload(&stream, &c);
            let Err(Error::IndexValue(refused)) = dev.validate(&stream, &kernels, c.scale) else {
                panic!("validate accepted block_tables[7, 37] = {bad}")
            };
            let r = report(&stream, &kernels, &mut dev, c.scale, mode);
            for r in [&refused, &r] {
                assert_eq!(
                    (r.arg.as_str(), r.position.as_slice(), r.value, r.fault),
                    (
                        "block_tables",
                        &[7i64, 37][..],
                        i64::from(bad),
                        ValueFault::Range { lo: 0, hi: nb }
                    ),
                    "{mode:?}: {r}"
                );
            }
            assert_eq!(r.kernel, "paged_attn");
            if mode != CheckedMode::Wait {
                // Every sequence but the damaged one is right.
                assert_close(
                    &c,
                    &dev.out.to_host(&stream).unwrap(),
                    Some(7),
                    &format!("{mode:?}"),
                );
            }
            if mode == CheckedMode::Wait && bad == -1 {
                println!("{}", Error::IndexValue(r));
            }
        }
    }
    set_mode(&kernels, CheckedMode::Off);
}

/// A table of garbage (every entry a large or negative value): reported, never followed.
#[test]
#[ignore = "needs a CUDA GPU"]
fn a_garbage_block_table_is_reported_in_every_mode() {
    let (_ctx, stream, kernels) = setup();
    let mut c = Case::new(8, 2, 128, 16, &ragged(16), 70);
    let mut r = lcg(71);
    for e in c.tables.iter_mut() {
        let x = r.next().unwrap();
        *e = if x < 0.0 {
            (x * 2e9) as i32
        } else {
            c.nb as i32 + (x * 2e9) as i32
        };
    }
    let nb = c.nb as i64;
    for mode in MODES {
        let mut dev = Device::upload(&stream, &c);
        assert!(matches!(
            dev.validate(&stream, &kernels, c.scale),
            Err(Error::IndexValue(_))
        ));
        let rep = report(&stream, &kernels, &mut dev, c.scale, mode);
        assert_eq!(rep.arg, "block_tables", "{mode:?}: {rep}");
        assert!(!(0..nb).contains(&rep.value), "{mode:?}: {rep}");
        assert_eq!(rep.fault, ValueFault::Range { lo: 0, hi: nb });
        let (s, e) = (rep.position[0] as usize, rep.position[1] as usize);
        assert!(
            e < (c.lens[s] as usize).div_ceil(c.bs),
            "{mode:?}: entry {e} of sequence {s} is past its length {}",
            c.lens[s]
        );
        assert_eq!(i64::from(c.tables[s * c.p + e]), rep.value);
    }
    set_mode(&kernels, CheckedMode::Off);
}

/// A length past P * BS (what the row of block_tables holds): reported by the partition
/// kernel, read as 0, so that sequence reads no page at all.
#[test]
#[ignore = "needs a CUDA GPU"]
fn a_seq_len_past_the_table_is_reported_in_every_mode() {
    let (_ctx, stream, kernels) = setup();
    let mut c = Case::new(8, 2, 128, 16, &ragged(16), 80);
    let max = (c.p * c.bs) as i64;
    for bad in [max as i32 + 1, -1, i32::MAX] {
        c.lens[2] = bad;
        for mode in MODES {
            let mut dev = Device::upload(&stream, &c);
            let Err(Error::IndexValue(refused)) = dev.validate(&stream, &kernels, c.scale) else {
                panic!("validate accepted seq_lens[2] = {bad}")
            };
            let r = report(&stream, &kernels, &mut dev, c.scale, mode);
            for r in [&refused, &r] {
                assert_eq!(
                    (r.arg.as_str(), r.position.as_slice(), r.value, r.fault),
                    (
                        "seq_lens",
                        &[2i64][..],
                        i64::from(bad),
                        ValueFault::Range { lo: 0, hi: max + 1 }
                    ),
                    "{mode:?}: {r}"
                );
            }
        }
    }
    set_mode(&kernels, CheckedMode::Off);
}

/// paged_attn_rope's inputs for `c` (its q and caches as they stand before the step): the
/// QKV projection's rows (c's queries unrotated, then new keys and values), each
/// sequence's position (its last token's, len - 1) and slot (the table's slot of that
/// token; for a sequence of no tokens the first row of a spare page of its own, or -1 for
/// `padding`), and a cos/sin table of base 10000.
struct Rope {
    qkv: Vec<f16>,
    positions: Vec<i64>,
    slots: Vec<i64>,
    maxpos: usize,
    cos_sin: Vec<f32>,
}

impl Rope {
    fn new(c: &Case, padding: usize, seed: u64) -> Rope {
        let (d, heads) = (c.d, c.hq + 2 * c.hkv);
        let mut qkv: Vec<f16> = lcg(seed).take(c.b * heads * d).map(f16::from_f32).collect();
        for s in 0..c.b {
            qkv[s * heads * d..][..c.hq * d].copy_from_slice(&c.q[s * c.hq * d..][..c.hq * d]);
        }
        let used: Vec<i32> = (0..c.b)
            .flat_map(|s| (0..(c.lens[s] as usize).div_ceil(c.bs)).map(move |e| (s, e)))
            .map(|(s, e)| c.tables[s * c.p + e])
            .collect();
        let mut spare = (0..c.nb as i64).filter(|&p| !used.contains(&(p as i32)));
        let positions: Vec<i64> = c.lens.iter().map(|&l| i64::from(l.max(1) - 1)).collect();
        let slots = (0..c.b)
            .map(|s| match c.lens[s] as usize {
                _ if s == padding => -1,
                0 => spare.next().expect("Case::new leaves 5 pages spare") * c.bs as i64,
                len => {
                    let t = len - 1;
                    i64::from(c.tables[s * c.p + t / c.bs]) * c.bs as i64 + (t % c.bs) as i64
                }
            })
            .collect();
        let maxpos = *positions.iter().max().unwrap() as usize + 3;
        let mut cos_sin = vec![0f32; maxpos * d];
        for p in 0..maxpos {
            for j in 0..d / 2 {
                let angle = p as f64 * 10000f64.powf(-2.0 * j as f64 / d as f64);
                cos_sin[p * d + j] = angle.cos() as f32;
                cos_sin[p * d + d / 2 + j] = angle.sin() as f32;
            }
        }
        Rope {
            qkv,
            positions,
            slots,
            maxpos,
            cos_sin,
        }
    }

    /// Head `head` of sequence s's row of qkv rotated to its position in f64, rounded to f16.
    fn rotated(&self, c: &Case, s: usize, head: usize) -> Vec<f16> {
        let d = c.d;
        let x = &self.qkv[(s * (c.hq + 2 * c.hkv) + head) * d..][..d];
        let p = self.positions[s] as usize;
        (0..d)
            .map(|i| {
                let j = i % (d / 2);
                let (cs, sn) = (
                    f64::from(self.cos_sin[p * d + j]),
                    f64::from(self.cos_sin[p * d + d / 2 + j]),
                );
                let (lo, hi) = (x[j].to_f64(), x[j + d / 2].to_f64());
                f16::from_f64(if i < d / 2 {
                    lo * cs - hi * sn
                } else {
                    hi * cs + lo * sn
                })
            })
            .collect()
    }

    /// c as the step leaves it: rotated queries, and each slot's rotated key and value
    /// written for every KV head (what rope_cache, then paged_attn, would read).
    fn stepped(&self, c: &Case) -> Case {
        let (d, hq, hkv) = (c.d, c.hq, c.hkv);
        let (mut q, mut k, mut v) = (c.q.clone(), c.k.clone(), c.v.clone());
        for s in 0..c.b {
            for h in 0..hq {
                q[(s * hq + h) * d..][..d].copy_from_slice(&self.rotated(c, s, h));
            }
            let Ok(slot) = usize::try_from(self.slots[s]) else {
                continue;
            };
            for kvh in 0..hkv {
                let at = (slot * hkv + kvh) * d;
                k[at..][..d].copy_from_slice(&self.rotated(c, s, hq + kvh));
                let value = (s * (hq + 2 * hkv) + hq + hkv + kvh) * d;
                v[at..][..d].copy_from_slice(&self.qkv[value..][..d]);
            }
        }
        Case {
            q,
            k,
            v,
            tables: c.tables.clone(),
            lens: c.lens.clone(),
            ..*c
        }
    }
}

/// paged_attn_rope against the reference of the step: its output against attention over
/// the caches with the new tokens written and the queries rotated (in f64), its caches
/// against those caches (the values exact, the keys within an f16 rounding of the f64
/// rotation, every other row untouched), twice in each mode; `padding` is a sequence of no
/// tokens whose slot is -1, and every other sequence of no tokens writes a spare page.
fn run_rope_against_reference(
    hq: usize,
    hkv: usize,
    bs: usize,
    lens: &[i32],
    padding: usize,
    seed: u64,
) {
    let c = Case::new(hq, hkv, 128, bs, lens, seed);
    let rope = Rope::new(&c, padding, seed + 7);
    let want = rope.stepped(&c);
    let (_ctx, stream, kernels) = setup();
    let qkv = Tensor::from_host(&stream, &rope.qkv, &[c.b, (hq + 2 * hkv) * c.d]).unwrap();
    let positions = Tensor::from_host(&stream, &rope.positions, &[c.b]).unwrap();
    let slots = Tensor::from_host(&stream, &rope.slots, &[c.b]).unwrap();
    let cos_sin = Tensor::from_host(&stream, &rope.cos_sin, &[rope.maxpos, c.d]).unwrap();
    for mode in MODES {
        set_mode(&kernels, mode);
        let mut dev = Device::upload(&stream, &c);
        for launch in 0..2 {
            let what = format!("{mode:?} HQ={hq} HKV={hkv} BS={bs}, launch {launch}");
            dev.out = Tensor::full(&stream, f16::NAN, &[c.b, hq, c.d]).unwrap();
            kernels
                .paged_attn_rope
                .launch(
                    &stream,
                    paged::PagedAttnRopeArgs {
                        qkv: &qkv,
                        positions: &positions,
                        cos_sin: &cos_sin,
                        slot_mapping: &slots,
                        k_cache: &mut dev.k,
                        v_cache: &mut dev.v,
                        block_tables: &dev.tables,
                        seq_lens: &dev.lens,
                        part_o: &mut dev.part_o,
                        part_lse: &mut dev.part_lse,
                        arrivals: &mut dev.arrivals,
                        out: &mut dev.out,
                        scale: c.scale,
                    },
                )
                .unwrap();
            kernels.check_deferred().unwrap();
            assert_close(&want, &dev.out.to_host(&stream).unwrap(), None, &what);
            let arrivals = dev.arrivals.to_host(&stream).unwrap();
            assert!(arrivals.iter().all(|&a| a == 0), "{what}: {arrivals:?}");
            let (k, v) = (
                dev.k.to_host(&stream).unwrap(),
                dev.v.to_host(&stream).unwrap(),
            );
            assert!(v == want.v, "{what}: the value cache");
            for (i, (g, w)) in k.iter().zip(&want.k).enumerate() {
                let (g, w) = (g.to_f64(), w.to_f64());
                assert!(
                    (g - w).abs() <= w.abs() * 2f64.powi(-10) + 2f64.powi(-24),
                    "{what}: k_cache element {i} = {g}, reference {w}"
                );
            }
        }
    }
    set_mode(&kernels, CheckedMode::Off);
}

/// The layer's group of 4 on pages of 16: ragged lengths, a sequence of no tokens that
/// writes its slot and a padding one that writes nothing.
#[test]
#[ignore = "needs a CUDA GPU"]
fn paged_attn_rope_matches_rope_then_attention_in_every_mode() {
    let mut lens = ragged(16);
    lens.push(0);
    run_rope_against_reference(8, 2, 16, &lens, 8, 90);
}

/// A group of 8 (one block a KV head still) on pages of 7, whose tiles cross pages, with
/// partitions of three runs (16 sequences by 8 KV heads) so that the last token's block is
/// not the first.
#[test]
#[ignore = "needs a CUDA GPU"]
fn paged_attn_rope_with_a_group_of_8_odd_pages_and_long_partitions() {
    let lens: Vec<i32> = (0..16).map(|i| [1000, 7, 0, 3000, 385, 6][i % 6]).collect();
    run_rope_against_reference(64, 8, 7, &lens, 2, 100);
}
