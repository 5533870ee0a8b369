//! specs/index.ima end to end on a GPU, through the committed generated stubs
//! (`tests/out/specs/index.rs`): embedding, reshape_and_cache, moe_route and
//! mean_pool_varlen at ragged shapes against host references, in release, checked (wait)
//! and deferred mode; and planted bad index entries (one past the bound, a negative value,
//! the type's maximum, a tensor of random bits, and for offsets unsorted entries and a
//! wrong first or last one), each reported as `Error::IndexValue` naming the argument, the
//! entry's position, its value and the rule it broke: by the launch itself in checked mode,
//! by `check_deferred` after it in release and deferred mode. The host's `validate` refuses
//! the same entries before any launch. Outputs that the design defines for bad entries
//! (skipped, read as the contract's lower bound, an empty span) are checked too; under
//! compute-sanitizer memcheck with `--padding` no access lands outside a buffer.

#[allow(dead_code)]
mod index_spec {
    include!("out/specs/index.rs");
}

mod common;

use common::lcg;
use std::sync::Arc;

use ima::cudarc::driver::{CudaContext, CudaStream};
use ima::half::{bf16, f16};
use ima::{CheckedMode, Error, IndexValue, Kernel, KernelArg, Launched, Tensor, ValueFault};
use index_spec::Kernels;

const MODES: [CheckedMode; 3] = [CheckedMode::Off, CheckedMode::Wait, CheckedMode::Deferred];

fn setup() -> (Arc<CudaContext>, Arc<CudaStream>, Kernels) {
    let ctx = CudaContext::new(0).expect("a CUDA device");
    let stream = ctx.new_stream().expect("a CUDA stream");
    let kernels = Kernels::load(&ctx).expect("specs/index.ima loads");
    (ctx, stream, kernels)
}

/// splitmix64: random integers for ids, slots and shuffles.
struct Ints(u64);

impl Ints {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n`.
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn chance(&mut self, one_in: usize) -> bool {
        self.below(one_in) == 0
    }

    /// The first `k` of a random permutation of `0..n`.
    fn distinct(&mut self, n: usize, k: usize) -> Vec<usize> {
        let mut all: Vec<usize> = (0..n).collect();
        for i in 0..k {
            let j = i + self.below(n - i);
            all.swap(i, j);
        }
        all.truncate(k);
        all
    }
}

fn f16s(n: usize, seed: u64) -> Vec<f16> {
    lcg(seed).take(n).map(f16::from_f32).collect()
}

fn bf16s(n: usize, seed: u64) -> Vec<bf16> {
    lcg(seed).take(n).map(bf16::from_f32).collect()
}

/// A launch with good entries: Ok in every mode, and nothing to report after it.
fn clean(kernel: &Kernel, mode: CheckedMode, launched: Result<Launched, Error>, what: &str) {
    let launched = launched.unwrap_or_else(|e| panic!("{what}, {mode:?}: {e}"));
    assert!(
        matches!(launched, Launched::Done { .. }),
        "{what}: {launched:?}"
    );
    kernel
        .check_deferred()
        .unwrap_or_else(|e| panic!("{what}, {mode:?}: reported after a clean launch: {e}"));
}

/// The report of a launch that read a bad entry: the launch's own error in wait mode, else
/// `check_deferred`'s after an Ok launch.
fn reported(
    kernel: &Kernel,
    mode: CheckedMode,
    launched: Result<Launched, Error>,
    what: &str,
) -> IndexValue {
    let err = match mode {
        CheckedMode::Wait => launched.err(),
        _ => {
            launched.unwrap_or_else(|e| panic!("{what}, {mode:?}: the launch itself failed: {e}"));
            kernel.check_deferred().err()
        }
    };
    match err {
        Some(Error::IndexValue(report)) => {
            assert_eq!(
                report.deferred,
                mode != CheckedMode::Wait,
                "{what}: {report}"
            );
            assert!(report.found_at.is_some(), "{what}: {report}");
            *report
        }
        Some(e) => panic!("{what}, {mode:?}: expected an IndexValue report, got {e}"),
        None => panic!("{what}, {mode:?}: the bad entry went unreported"),
    }
}

/// The host's refusal: `validate`'s error.
fn refused(result: Result<(), Error>, what: &str) -> IndexValue {
    match result {
        Err(Error::IndexValue(report)) => {
            assert_eq!((report.count, report.deferred), (1, false), "{what}");
            assert_eq!(report.found_at, None, "{what}");
            *report
        }
        Err(e) => panic!("{what}: expected an IndexValue refusal, got {e}"),
        Ok(()) => panic!("{what}: validate accepted a bad entry"),
    }
}

/// The fields that name a bad entry: argument, position, value, fault.
fn entry(r: &IndexValue) -> (&str, &[i64], i64, ValueFault) {
    (r.arg.as_str(), r.position.as_slice(), r.value, r.fault)
}

/// For a tensor of random bits, where any bad entry may be the first a kernel meets: the
/// report names `arg`, a position inside `shape` holding a bad entry (by `bad`, row-major
/// over `shape`), and that entry's value.
fn names_a_bad_entry(
    r: &IndexValue,
    arg: &str,
    shape: &[usize],
    entries: &[i64],
    bad: impl Fn(usize) -> bool,
) -> usize {
    assert_eq!(r.arg, arg, "{r}");
    assert_eq!(r.position.len(), shape.len(), "{r}");
    let mut flat = 0usize;
    for (&p, &n) in r.position.iter().zip(shape) {
        assert!(
            (0..n as i64).contains(&p),
            "{r}: position outside {shape:?}"
        );
        flat = flat * n + p as usize;
    }
    assert!(bad(flat), "{r}: the entry at {:?} is good", r.position);
    assert_eq!(r.value, entries[flat], "{r}");
    flat
}

// ---------------------------------------------------------------------------------------
// embedding

/// (T, V, D): one token of one row, rows of one vector, and sizes that are multiples of no
/// block or tile (T * D / 8 threads against blocks of 256).
const EMBEDDING_SHAPES: [(usize, usize, usize); 5] = [
    (1, 1, 8),
    (1, 7, 8),
    (37, 50, 24),
    (301, 1000, 136),
    (1000, 3001, 776),
];

/// table[ids[t]] for each t, where an id outside 0 .. V reads row 0 (the accessor's
/// documented fallback, the contract's lower bound).
fn embedding_reference(ids: &[i32], table: &[bf16], v: usize, d: usize) -> Vec<bf16> {
    ids.iter()
        .flat_map(|&id| {
            let row = if (0..v as i32).contains(&id) {
                id as usize
            } else {
                0
            };
            table[row * d..(row + 1) * d].to_vec()
        })
        .collect()
}

fn assert_bits_eq<T: Copy + std::fmt::Debug>(
    got: &[T],
    want: &[T],
    bits: impl Fn(T) -> u16,
    what: &str,
) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        assert_eq!(
            bits(g),
            bits(w),
            "{what}: element {i}: {g:?}, expected {w:?}"
        );
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn embedding_copies_rows_exactly_on_ragged_shapes_in_every_mode() {
    let (_ctx, stream, kernels) = setup();
    let kernel = kernels.embedding.kernel();
    for (i, &(t, v, d)) in EMBEDDING_SHAPES.iter().enumerate() {
        let mut rng = Ints(i as u64);
        let ids: Vec<i32> = (0..t).map(|_| rng.below(v) as i32).collect();
        let table = bf16s(v * d, 10 + i as u64);
        let want = embedding_reference(&ids, &table, v, d);
        let ids_d = Tensor::from_host(&stream, &ids, &[t]).unwrap();
        let table_d = Tensor::from_host(&stream, &table, &[v, d]).unwrap();
        let what = format!("embedding T = {t}, V = {v}, D = {d}");
        let mut y = Tensor::full(&stream, bf16::NAN, &[t, d]).unwrap();
        kernels
            .embedding
            .validate(
                &stream,
                index_spec::EmbeddingArgs {
                    ids: &ids_d,
                    table: &table_d,
                    y: &mut y,
                },
            )
            .unwrap_or_else(|e| panic!("{what}: validate refused good ids: {e}"));
        for mode in MODES {
            kernel.set_checked_mode(mode);
            let mut y = Tensor::full(&stream, bf16::NAN, &[t, d]).unwrap();
            let launched = kernels.embedding.launch(
                &stream,
                index_spec::EmbeddingArgs {
                    ids: &ids_d,
                    table: &table_d,
                    y: &mut y,
                },
            );
            clean(kernel, mode, launched, &what);
            let got = y.to_host(&stream).unwrap();
            assert_bits_eq(&got, &want, bf16::to_bits, &format!("{what}, {mode:?}"));
        }
        kernel.set_checked_mode(CheckedMode::Off);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_bad_token_id_is_reported_in_every_mode_and_reads_row_zero() {
    let (_ctx, stream, kernels) = setup();
    let kernel = kernels.embedding.kernel();
    let (t, v, d) = (301, 1000, 136);
    let mut rng = Ints(7);
    let good: Vec<i32> = (0..t).map(|_| rng.below(v) as i32).collect();
    let table = bf16s(v * d, 11);
    let table_d = Tensor::from_host(&stream, &table, &[v, d]).unwrap();
    let at = 123;
    let garbage: Vec<i32> = (0..t).map(|_| rng.next() as i32).collect();
    let mut cases: Vec<(String, Vec<i32>)> = [v as i32, -1, i32::MAX]
        .into_iter()
        .map(|bad| {
            let mut ids = good.clone();
            ids[at] = bad;
            (format!("ids[{at}] = {bad}"), ids)
        })
        .collect();
    cases.push(("random bits".into(), garbage));
    for (what, ids) in &cases {
        let ids_d = Tensor::from_host(&stream, ids, &[t]).unwrap();
        let entries: Vec<i64> = ids.iter().map(|&x| i64::from(x)).collect();
        let is_bad = |i: usize| !(0..v as i64).contains(&entries[i]);
        let bad_count = (0..t).filter(|&i| is_bad(i)).count();
        let single = bad_count == 1;
        let fault = ValueFault::Range {
            lo: 0,
            hi: v as i64,
        };
        let first_bad = (0..t).find(|&i| is_bad(i)).unwrap();
        let mut y = Tensor::full(&stream, bf16::NAN, &[t, d]).unwrap();
        let host = refused(
            kernels.embedding.validate(
                &stream,
                index_spec::EmbeddingArgs {
                    ids: &ids_d,
                    table: &table_d,
                    y: &mut y,
                },
            ),
            what,
        );
        assert_eq!(
            entry(&host),
            ("ids", &[first_bad as i64][..], entries[first_bad], fault),
            "{what}: {host}"
        );
        // The kernel's own validate, with the ids passed writable: read all the same.
        let mut ids_w = Tensor::from_host(&stream, ids, &[t]).unwrap();
        let host = refused(
            kernel.validate(
                &stream,
                &mut [
                    KernelArg::write(&mut ids_w),
                    KernelArg::read(&table_d),
                    KernelArg::write(&mut y),
                ],
                &[],
            ),
            what,
        );
        assert_eq!(
            entry(&host),
            ("ids", &[first_bad as i64][..], entries[first_bad], fault),
            "{what}, ids passed writable: {host}"
        );
        let want = embedding_reference(ids, &table, v, d);
        for mode in MODES {
            kernel.set_checked_mode(mode);
            let mut y = Tensor::full(&stream, bf16::NAN, &[t, d]).unwrap();
            let launched = kernels.embedding.launch(
                &stream,
                index_spec::EmbeddingArgs {
                    ids: &ids_d,
                    table: &table_d,
                    y: &mut y,
                },
            );
            let r = reported(kernel, mode, launched, what);
            if single {
                assert_eq!(entry(&r), entry(&host), "{what}, {mode:?}: {r}");
            } else {
                names_a_bad_entry(&r, "ids", &[t], &entries, is_bad);
                assert_eq!(r.fault, fault, "{what}, {mode:?}: {r}");
            }
            // Each of the D / 8 threads of a row reads its id.
            assert_eq!(r.count as usize, bad_count * d / 8, "{what}, {mode:?}: {r}");
            let got = y.to_host(&stream).unwrap();
            assert_bits_eq(&got, &want, bf16::to_bits, &format!("{what}, {mode:?}"));
            if mode == CheckedMode::Off && single {
                println!("{r}");
            }
        }
        kernel.set_checked_mode(CheckedMode::Off);
    }
}

/// In release mode the report of a bad launch comes at the kernel's next launch, which
/// then does not run.
#[test]
#[ignore = "needs a CUDA GPU"]
fn a_bad_token_id_in_release_is_reported_by_the_next_launch_which_does_not_run() {
    let (_ctx, stream, kernels) = setup();
    let (t, v, d) = (5, 3, 16);
    let table_d = Tensor::from_host(&stream, &bf16s(v * d, 3), &[v, d]).unwrap();
    let bad = Tensor::from_host(&stream, &[0, 1, 3, 2, 0], &[t]).unwrap();
    let good = Tensor::from_host(&stream, &[0, 1, 2, 2, 0], &[t]).unwrap();
    let mut y = Tensor::full(&stream, bf16::NAN, &[t, d]).unwrap();
    kernels
        .embedding
        .launch(
            &stream,
            index_spec::EmbeddingArgs {
                ids: &bad,
                table: &table_d,
                y: &mut y,
            },
        )
        .unwrap();
    let mut y2 = Tensor::full(&stream, bf16::NAN, &[t, d]).unwrap();
    // The report comes with the first launch after the faulty one finished: wait for it
    // (under compute-sanitizer the kernel could still be running when the host got here,
    // and the next launch ran).
    stream.synchronize().unwrap();
    let err = kernels
        .embedding
        .launch(
            &stream,
            index_spec::EmbeddingArgs {
                ids: &good,
                table: &table_d,
                y: &mut y2,
            },
        )
        .unwrap_err();
    let Error::IndexValue(r) = &err else {
        panic!("expected the earlier launch's IndexValue, got {err}")
    };
    assert_eq!(
        (entry(r), r.deferred),
        (
            ("ids", &[2i64][..], 3, ValueFault::Range { lo: 0, hi: 3 }),
            true
        ),
        "{err}"
    );
    assert!(
        y2.to_host(&stream).unwrap().iter().all(|x| x.is_nan()),
        "the launch that reported ran"
    );
    // Reported once: the next launch runs.
    kernels
        .embedding
        .launch(
            &stream,
            index_spec::EmbeddingArgs {
                ids: &good,
                table: &table_d,
                y: &mut y2,
            },
        )
        .unwrap();
    kernels.embedding.kernel().check_deferred().unwrap();
}

// ---------------------------------------------------------------------------------------
// reshape_and_cache

/// (T, HKV, D, NB, BS).
const CACHE_SHAPES: [(usize, usize, usize, usize, usize); 5] = [
    (1, 1, 8, 1, 1),
    (1, 2, 64, 3, 16),
    (37, 3, 40, 5, 16),
    (250, 8, 128, 20, 16),
    (77, 1, 8, 10, 8),
];

struct CacheCase {
    t: usize,
    hkv: usize,
    d: usize,
    nb: usize,
    bs: usize,
    key: Vec<f16>,
    value: Vec<f16>,
    k_cache: Vec<f16>,
    v_cache: Vec<f16>,
}

impl CacheCase {
    fn new(shape: (usize, usize, usize, usize, usize), seed: u64) -> CacheCase {
        let (t, hkv, d, nb, bs) = shape;
        let row = t * hkv * d;
        let cache = nb * bs * hkv * d;
        CacheCase {
            t,
            hkv,
            d,
            nb,
            bs,
            key: f16s(row, seed),
            value: f16s(row, seed + 1),
            k_cache: f16s(cache, seed + 2),
            v_cache: f16s(cache, seed + 3),
        }
    }

    /// Distinct slots for the tokens, one in five -1 (padding).
    fn slots(&self, rng: &mut Ints) -> Vec<i64> {
        rng.distinct(self.nb * self.bs, self.t)
            .into_iter()
            .map(|s| if rng.chance(5) { -1 } else { s as i64 })
            .collect()
    }

    /// The caches after the write: each token with a slot in 0 .. NB * BS copies its rows
    /// there; -1 and every bad slot write nothing.
    fn reference(&self, slots: &[i64]) -> (Vec<f16>, Vec<f16>) {
        let (mut k, mut v) = (self.k_cache.clone(), self.v_cache.clone());
        let row = self.hkv * self.d;
        for (t, &s) in slots.iter().enumerate() {
            if (0..(self.nb * self.bs) as i64).contains(&s) {
                let s = s as usize;
                k[s * row..(s + 1) * row].copy_from_slice(&self.key[t * row..(t + 1) * row]);
                v[s * row..(s + 1) * row].copy_from_slice(&self.value[t * row..(t + 1) * row]);
            }
        }
        (k, v)
    }

    /// Launches in `mode` with fresh caches; returns the launch and the caches after it.
    fn launch(
        &self,
        stream: &Arc<CudaStream>,
        kernels: &Kernels,
        slots: &[i64],
        validate: bool,
    ) -> (Result<Launched, Error>, Vec<f16>, Vec<f16>) {
        let (t, hkv, d) = (self.t, self.hkv, self.d);
        let key = Tensor::from_host(stream, &self.key, &[t, hkv, d]).unwrap();
        let value = Tensor::from_host(stream, &self.value, &[t, hkv, d]).unwrap();
        let slot_mapping = Tensor::from_host(stream, slots, &[t]).unwrap();
        let shape = [self.nb, self.bs, hkv, d];
        let mut k_cache = Tensor::from_host(stream, &self.k_cache, &shape).unwrap();
        let mut v_cache = Tensor::from_host(stream, &self.v_cache, &shape).unwrap();
        let r = &kernels.reshape_and_cache;
        let result = if validate {
            r.validate(
                stream,
                index_spec::ReshapeAndCacheArgs {
                    key: &key,
                    value: &value,
                    slot_mapping: &slot_mapping,
                    k_cache: &mut k_cache,
                    v_cache: &mut v_cache,
                },
            )
            .map(|()| Launched::Skipped)
        } else {
            r.launch(
                stream,
                index_spec::ReshapeAndCacheArgs {
                    key: &key,
                    value: &value,
                    slot_mapping: &slot_mapping,
                    k_cache: &mut k_cache,
                    v_cache: &mut v_cache,
                },
            )
        };
        // In wait and deferred mode an error returns before the stream is done.
        let _ = stream.synchronize();
        (
            result,
            k_cache.to_host(stream).unwrap(),
            v_cache.to_host(stream).unwrap(),
        )
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn reshape_and_cache_writes_each_slot_exactly_on_ragged_shapes_in_every_mode() {
    let (_ctx, stream, kernels) = setup();
    let kernel = kernels.reshape_and_cache.kernel();
    for (i, &shape) in CACHE_SHAPES.iter().enumerate() {
        let case = CacheCase::new(shape, 20 + 4 * i as u64);
        let slots = case.slots(&mut Ints(100 + i as u64));
        let (want_k, want_v) = case.reference(&slots);
        let what = format!(
            "reshape_and_cache {shape:?}, slots {:?}..",
            &slots[..slots.len().min(6)]
        );
        let (validated, _, _) = case.launch(&stream, &kernels, &slots, true);
        validated.unwrap_or_else(|e| panic!("{what}: validate refused good slots: {e}"));
        for mode in MODES {
            kernel.set_checked_mode(mode);
            let (launched, k, v) = case.launch(&stream, &kernels, &slots, false);
            clean(kernel, mode, launched, &what);
            assert_bits_eq(
                &k,
                &want_k,
                f16::to_bits,
                &format!("{what}, {mode:?}: k_cache"),
            );
            assert_bits_eq(
                &v,
                &want_v,
                f16::to_bits,
                &format!("{what}, {mode:?}: v_cache"),
            );
        }
        kernel.set_checked_mode(CheckedMode::Off);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_bad_slot_is_reported_in_every_mode_and_writes_nothing() {
    let (_ctx, stream, kernels) = setup();
    let kernel = kernels.reshape_and_cache.kernel();
    let shape @ (t, hkv, d, nb, bs) = (37, 3, 40, 5, 16);
    let case = CacheCase::new(shape, 40);
    let mut rng = Ints(41);
    let good = case.slots(&mut rng);
    let at = 20;
    let slots_max = (nb * bs) as i64;
    let mut cases: Vec<(String, Vec<i64>)> = [slots_max, -2, i64::MAX]
        .into_iter()
        .map(|bad| {
            let mut s = good.clone();
            s[at] = bad;
            (format!("slot_mapping[{at}] = {bad}"), s)
        })
        .collect();
    cases.push((
        "random bits".into(),
        (0..t).map(|_| rng.next() as i64).collect(),
    ));
    for (what, slots) in &cases {
        let is_bad = |i: usize| slots[i] != -1 && !(0..slots_max).contains(&slots[i]);
        let bad_count = (0..t).filter(|&i| is_bad(i)).count();
        let first_bad = (0..t).find(|&i| is_bad(i)).unwrap();
        let fault = ValueFault::Range {
            lo: 0,
            hi: slots_max,
        };
        let (validated, k, v) = case.launch(&stream, &kernels, slots, true);
        let host = refused(validated.map(|_| ()), what);
        assert_eq!(
            entry(&host),
            (
                "slot_mapping",
                &[first_bad as i64][..],
                slots[first_bad],
                fault
            ),
            "{what}: {host}"
        );
        assert!(host.to_string().contains("NB * BS = 80"), "{host}");
        assert_eq!(
            (k, v),
            (case.k_cache.clone(), case.v_cache.clone()),
            "{what}: validate wrote"
        );
        let (want_k, want_v) = case.reference(slots);
        for mode in MODES {
            kernel.set_checked_mode(mode);
            let (launched, k, v) = case.launch(&stream, &kernels, slots, false);
            let r = reported(kernel, mode, launched, what);
            if bad_count == 1 {
                assert_eq!(entry(&r), entry(&host), "{what}, {mode:?}: {r}");
            } else {
                names_a_bad_entry(&r, "slot_mapping", &[t], slots, is_bad);
                assert_eq!(r.fault, fault, "{what}, {mode:?}: {r}");
            }
            // Each of the HKV * D / 8 threads of a token reads its slot.
            assert_eq!(
                r.count as usize,
                bad_count * hkv * d / 8,
                "{what}, {mode:?}: {r}"
            );
            assert_bits_eq(
                &k,
                &want_k,
                f16::to_bits,
                &format!("{what}, {mode:?}: k_cache"),
            );
            assert_bits_eq(
                &v,
                &want_v,
                f16::to_bits,
                &format!("{what}, {mode:?}: v_cache"),
            );
        }
        kernel.set_checked_mode(CheckedMode::Off);
    }
}

// ---------------------------------------------------------------------------------------
// moe_route

/// (T, K, E): one token with one choice of one expert, a single warp's worth, more entries
/// than the block's 1024 threads, and E at its bound 1024.
const MOE_SHAPES: [(usize, usize, usize); 6] = [
    (1, 1, 1),
    (1, 2, 8),
    (5, 2, 8),
    (301, 8, 64),
    (1000, 6, 160),
    (700, 8, 1024),
];

/// K distinct experts per token, one choice in ten dropped (-1).
fn topk(t: usize, k: usize, e: usize, rng: &mut Ints) -> Vec<i32> {
    let mut ids = Vec::with_capacity(t * k);
    for _ in 0..t {
        for x in rng.distinct(e, k) {
            ids.push(if rng.chance(10) { -1 } else { x as i32 });
        }
    }
    ids
}

/// Checks moe_route's outputs against its documented contract: offsets from the counts of
/// the entries in 0 .. E, each expert's segment the positions holding it (as a set), the
/// rest of `sorted` -1. Every other entry (-1, or bad) is left out.
fn assert_routed(topk_ids: &[i32], e: usize, offsets: &[i32], sorted: &[i32], what: &str) {
    let n = topk_ids.len();
    let mut lists = vec![Vec::new(); e];
    for (i, &x) in topk_ids.iter().enumerate() {
        if (0..e as i32).contains(&x) {
            lists[x as usize].push(i as i32);
        }
    }
    let mut want_offsets = vec![0i32];
    for l in &lists {
        want_offsets.push(want_offsets.last().unwrap() + l.len() as i32);
    }
    assert_eq!(offsets, want_offsets, "{what}: offsets");
    for (x, l) in lists.iter().enumerate() {
        let segment = &sorted[offsets[x] as usize..offsets[x + 1] as usize];
        let mut got = segment.to_vec();
        got.sort_unstable();
        assert_eq!(&got, l, "{what}: expert {x}'s segment");
    }
    let kept = offsets[e] as usize;
    assert!(
        sorted[kept..n].iter().all(|&s| s == -1),
        "{what}: the tail past {kept}"
    );
}

/// Launches moe_route with outputs poisoned (so that an element it never wrote shows).
fn route(
    stream: &Arc<CudaStream>,
    kernels: &Kernels,
    topk_ids: &Tensor<i32>,
    (t, k, e): (usize, usize, usize),
) -> (Result<Launched, Error>, Vec<i32>, Vec<i32>) {
    let mut offsets = Tensor::full(stream, 0x5eed_5eed, &[e + 1]).unwrap();
    let mut sorted = Tensor::full(stream, 0x5eed_5eed, &[t * k]).unwrap();
    let result = kernels.moe_route.launch(
        stream,
        index_spec::MoeRouteArgs {
            topk_ids,
            offsets: &mut offsets,
            sorted: &mut sorted,
            num_experts: e as i32,
        },
    );
    let _ = stream.synchronize();
    (
        result,
        offsets.to_host(stream).unwrap(),
        sorted.to_host(stream).unwrap(),
    )
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn moe_route_groups_every_choice_by_expert_on_ragged_shapes_in_every_mode() {
    let (_ctx, stream, kernels) = setup();
    let kernel = kernels.moe_route.kernel();
    for (i, &(t, k, e)) in MOE_SHAPES.iter().enumerate() {
        let ids = topk(t, k, e, &mut Ints(200 + i as u64));
        let ids_d = Tensor::from_host(&stream, &ids, &[t, k]).unwrap();
        let what = format!("moe_route T = {t}, K = {k}, E = {e}");
        let mut offsets = Tensor::zeros(&stream, &[e + 1]).unwrap();
        let mut sorted = Tensor::zeros(&stream, &[t * k]).unwrap();
        kernels
            .moe_route
            .validate(
                &stream,
                index_spec::MoeRouteArgs {
                    topk_ids: &ids_d,
                    offsets: &mut offsets,
                    sorted: &mut sorted,
                    num_experts: e as i32,
                },
            )
            .unwrap_or_else(|err| panic!("{what}: validate refused good ids: {err}"));
        for mode in MODES {
            kernel.set_checked_mode(mode);
            let (launched, offsets, sorted) = route(&stream, &kernels, &ids_d, (t, k, e));
            clean(kernel, mode, launched, &what);
            assert_routed(&ids, e, &offsets, &sorted, &format!("{what}, {mode:?}"));
        }
        kernel.set_checked_mode(CheckedMode::Off);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_bad_expert_id_is_reported_in_every_mode_and_left_out() {
    let (_ctx, stream, kernels) = setup();
    let kernel = kernels.moe_route.kernel();
    let shape @ (t, k, e) = (301, 8, 64);
    let mut rng = Ints(300);
    let good = topk(t, k, e, &mut rng);
    let (at_t, at_k) = (150, 5);
    let mut cases: Vec<(String, Vec<i32>)> = [e as i32, -2, i32::MAX]
        .into_iter()
        .map(|bad| {
            let mut ids = good.clone();
            ids[at_t * k + at_k] = bad;
            (format!("topk_ids[{at_t}, {at_k}] = {bad}"), ids)
        })
        .collect();
    cases.push((
        "random bits".into(),
        (0..t * k).map(|_| rng.next() as i32).collect(),
    ));
    for (what, ids) in &cases {
        let entries: Vec<i64> = ids.iter().map(|&x| i64::from(x)).collect();
        let is_bad = |i: usize| entries[i] != -1 && !(0..e as i64).contains(&entries[i]);
        let bad_count = (0..t * k).filter(|&i| is_bad(i)).count();
        let first_bad = (0..t * k).find(|&i| is_bad(i)).unwrap();
        let fault = ValueFault::Range {
            lo: 0,
            hi: e as i64,
        };
        let ids_d = Tensor::from_host(&stream, ids, &[t, k]).unwrap();
        let mut offsets = Tensor::zeros(&stream, &[e + 1]).unwrap();
        let mut sorted = Tensor::zeros(&stream, &[t * k]).unwrap();
        let host = refused(
            kernels.moe_route.validate(
                &stream,
                index_spec::MoeRouteArgs {
                    topk_ids: &ids_d,
                    offsets: &mut offsets,
                    sorted: &mut sorted,
                    num_experts: e as i32,
                },
            ),
            what,
        );
        let at = [(first_bad / k) as i64, (first_bad % k) as i64];
        assert_eq!(
            entry(&host),
            ("topk_ids", &at[..], entries[first_bad], fault),
            "{what}: {host}"
        );
        assert!(host.to_string().contains("num_experts = 64"), "{host}");
        for mode in MODES {
            kernel.set_checked_mode(mode);
            let (launched, offsets, sorted) = route(&stream, &kernels, &ids_d, shape);
            let r = reported(kernel, mode, launched, what);
            if bad_count == 1 {
                assert_eq!(entry(&r), entry(&host), "{what}, {mode:?}: {r}");
            } else {
                names_a_bad_entry(&r, "topk_ids", &[t, k], &entries, is_bad);
                assert_eq!(r.fault, fault, "{what}, {mode:?}: {r}");
            }
            // Both passes read every entry.
            assert_eq!(r.count as usize, 2 * bad_count, "{what}, {mode:?}: {r}");
            assert_routed(ids, e, &offsets, &sorted, &format!("{what}, {mode:?}"));
        }
        kernel.set_checked_mode(CheckedMode::Off);
    }
}

// ---------------------------------------------------------------------------------------
// mean_pool_varlen

/// (sequence lengths, D): one sequence of one token, empty sequences first, last and in
/// between, a long one, and widths that fill no block.
fn varlen_cases() -> Vec<(Vec<usize>, usize)> {
    let mut rng = Ints(400);
    vec![
        (vec![1], 1),
        (vec![0, 3, 1, 0, 17], 3),
        (vec![2, 0], 33),
        ((0..50).map(|_| rng.below(41)).collect(), 129),
        (vec![1000, 1, 333], 64),
    ]
}

fn cu_seqlens(lens: &[usize]) -> Vec<i32> {
    let mut cu = vec![0i32];
    for &l in lens {
        cu.push(cu.last().unwrap() + l as i32);
    }
    cu
}

/// Whether sequence b's span is good: both entries in 0 ..= T, in order, the first entry
/// 0 and the last T.
fn span_ok(cu: &[i32], b: usize, t: usize) -> bool {
    let (a, z) = (cu[b], cu[b + 1]);
    let inside = |v: i32| (0..=t as i32).contains(&v);
    inside(a) && inside(z) && a <= z && (b != 0 || a == 0) && (b + 2 != cu.len() || z == t as i32)
}

/// The f64 mean of each sequence's rows, with a bound on the error of the kernel's f32
/// one: a sum of n terms in f32 is within (n - 1)·u·Σ|terms| of the exact one (u = 2^-24),
/// which the mean divides by n, and the division rounds once more. 0 (exactly) for an
/// empty sequence and for one whose span is bad.
fn pool_reference(x: &[f32], cu: &[i32], t: usize, d: usize) -> Vec<(f64, f64)> {
    let b = cu.len() - 1;
    let mut out = vec![(0.0, 0.0); b * d];
    for s in 0..b {
        if !span_ok(cu, s, t) || cu[s] == cu[s + 1] {
            continue;
        }
        let (lo, hi) = (cu[s] as usize, cu[s + 1] as usize);
        for j in 0..d {
            let (mut sum, mut mag) = (0.0f64, 0.0f64);
            for r in lo..hi {
                sum += f64::from(x[r * d + j]);
                mag += f64::from(x[r * d + j]).abs();
            }
            let n = (hi - lo) as f64;
            let u = 2f64.powi(-24);
            out[s * d + j] = (sum / n, 1.01 * u * (mag + 2.0 * (sum / n).abs()) + 1e-12);
        }
    }
    out
}

fn pool(
    stream: &Arc<CudaStream>,
    kernels: &Kernels,
    x: &Tensor<f32>,
    cu: &Tensor<i32>,
    (b, d): (usize, usize),
) -> (Result<Launched, Error>, Vec<f32>) {
    let mut y = Tensor::full(stream, f32::NAN, &[b, d]).unwrap();
    let result = kernels.mean_pool_varlen.launch(
        stream,
        index_spec::MeanPoolVarlenArgs {
            x,
            cu_seqlens: cu,
            y: &mut y,
        },
    );
    let _ = stream.synchronize();
    (result, y.to_host(stream).unwrap())
}

fn assert_pooled(got: &[f32], want: &[(f64, f64)], d: usize, what: &str) {
    for (i, (&g, &(w, tol))) in got.iter().zip(want).enumerate() {
        let err = (f64::from(g) - w).abs();
        assert!(
            err <= tol,
            "{what}: y[{}, {}] = {g}, expected {w} (error {err:.3e} > {tol:.3e})",
            i / d,
            i % d
        );
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn mean_pool_varlen_matches_f64_reference_on_ragged_batches_in_every_mode() {
    let (_ctx, stream, kernels) = setup();
    let kernel = kernels.mean_pool_varlen.kernel();
    for (i, (lens, d)) in varlen_cases().into_iter().enumerate() {
        let cu = cu_seqlens(&lens);
        let (b, t) = (lens.len(), *cu.last().unwrap() as usize);
        let xh: Vec<f32> = lcg(500 + i as u64).take(t * d).collect();
        let want = pool_reference(&xh, &cu, t, d);
        let x = Tensor::from_host(&stream, &xh, &[t, d]).unwrap();
        let cu_d = Tensor::from_host(&stream, &cu, &[b + 1]).unwrap();
        let what = format!(
            "mean_pool_varlen lengths {:?}.., D = {d}",
            &lens[..lens.len().min(6)]
        );
        let mut y = Tensor::zeros(&stream, &[b, d]).unwrap();
        kernels
            .mean_pool_varlen
            .validate(
                &stream,
                index_spec::MeanPoolVarlenArgs {
                    x: &x,
                    cu_seqlens: &cu_d,
                    y: &mut y,
                },
            )
            .unwrap_or_else(|e| panic!("{what}: validate refused good offsets: {e}"));
        for mode in MODES {
            kernel.set_checked_mode(mode);
            let (launched, got) = pool(&stream, &kernels, &x, &cu_d, (b, d));
            clean(kernel, mode, launched, &what);
            assert_pooled(&got, &want, d, &format!("{what}, {mode:?}"));
        }
        kernel.set_checked_mode(CheckedMode::Off);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn bad_offsets_are_reported_in_every_mode_and_their_sequences_pool_to_zero() {
    let (_ctx, stream, kernels) = setup();
    let kernel = kernels.mean_pool_varlen.kernel();
    let lens = [4usize, 7, 3, 9, 5, 6];
    let good = cu_seqlens(&lens);
    let (b, t, d) = (lens.len(), *good.last().unwrap() as usize, 37);
    let range = ValueFault::Range {
        lo: 0,
        hi: t as i64 + 1,
    };
    let j = 3;
    let planted = |at: usize, v: i32| {
        let mut cu = good.clone();
        cu[at] = v;
        cu
    };
    // (what, offsets, the single bad entry's position and fault; None for random bits).
    type Planted = Option<(usize, ValueFault)>;
    let mut rng = Ints(600);
    let cases: Vec<(&str, Vec<i32>, Planted)> = vec![
        ("one past T", planted(j, t as i32 + 1), Some((j, range))),
        ("negative", planted(j, -1), Some((j, range))),
        ("i32::MAX", planted(j, i32::MAX), Some((j, range))),
        (
            "unsorted",
            planted(j, good[j - 1] - 1),
            Some((
                j,
                ValueFault::Order {
                    previous: i64::from(good[j - 1]),
                },
            )),
        ),
        (
            "first not 0",
            planted(0, 1),
            Some((0, ValueFault::First { expected: 0 })),
        ),
        (
            "last not T",
            planted(b, t as i32 - 1),
            Some((b, ValueFault::Last { expected: t as i64 })),
        ),
        (
            "random bits",
            (0..=b).map(|_| rng.next() as i32).collect(),
            None,
        ),
    ];
    let xh: Vec<f32> = lcg(601).take(t * d).collect();
    let x = Tensor::from_host(&stream, &xh, &[t, d]).unwrap();
    for (what, cu, single) in &cases {
        let cu_d = Tensor::from_host(&stream, cu, &[b + 1]).unwrap();
        let entries: Vec<i64> = cu.iter().map(|&v| i64::from(v)).collect();
        let bad_spans = (0..b).filter(|&s| !span_ok(cu, s, t)).count();
        let mut y = Tensor::zeros(&stream, &[b, d]).unwrap();
        let host = refused(
            kernels.mean_pool_varlen.validate(
                &stream,
                index_spec::MeanPoolVarlenArgs {
                    x: &x,
                    cu_seqlens: &cu_d,
                    y: &mut y,
                },
            ),
            what,
        );
        match single {
            Some((at, fault)) => assert_eq!(
                entry(&host),
                ("cu_seqlens", &[*at as i64][..], entries[*at], *fault),
                "{what}: {host}"
            ),
            // The host looks at every entry's range first.
            None => {
                let first = (0..=b).find(|&i| !(0..=t as i64).contains(&entries[i]));
                assert_eq!(host.position, [first.unwrap() as i64], "{what}: {host}");
                assert_eq!(
                    (host.value, host.fault),
                    (entries[first.unwrap()], range),
                    "{what}"
                );
            }
        }
        let want = pool_reference(&xh, cu, t, d);
        for mode in MODES {
            kernel.set_checked_mode(mode);
            let (launched, got) = pool(&stream, &kernels, &x, &cu_d, (b, d));
            let r = reported(kernel, mode, launched, what);
            match single {
                Some(_) => assert_eq!(entry(&r), entry(&host), "{what}, {mode:?}: {r}"),
                None => {
                    let at = names_a_bad_entry(&r, "cu_seqlens", &[b + 1], &entries, |_| true);
                    let v = entries[at];
                    let consistent = match r.fault {
                        ValueFault::Range { lo: 0, hi } => {
                            hi == t as i64 + 1 && !(0..hi).contains(&v)
                        }
                        ValueFault::Order { previous } => {
                            at > 0 && previous == entries[at - 1] && v < previous
                        }
                        ValueFault::First { expected: 0 } => at == 0 && v != 0,
                        ValueFault::Last { expected } => {
                            at == b && expected == t as i64 && v != expected
                        }
                        _ => false,
                    };
                    assert!(consistent, "{what}, {mode:?}: {r} does not hold for {cu:?}");
                }
            }
            // Each of a bad span's D threads reports it.
            assert_eq!(r.count as usize, bad_spans * d, "{what}, {mode:?}: {r}");
            assert_pooled(&got, &want, d, &format!("{what}, {mode:?}"));
            if mode == CheckedMode::Wait && *what == "unsorted" {
                println!("{r}");
            }
        }
        kernel.set_checked_mode(CheckedMode::Off);
    }
}
