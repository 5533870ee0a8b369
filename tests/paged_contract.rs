//! specs/paged.ima's contract checked on the CPU with fake tensors: paged_attn's grid has,
//! for each (sequence, head block) pair, blocks for the partitions its tables' capacity
//! allows, at most BLOCKS over the pairs but no fewer than SPAN runs a partition need; a
//! batch of no sequences is an empty launch, skipped.

#[allow(dead_code)]
mod paged {
    include!("out/specs/paged.rs");
}

#[allow(dead_code)]
#[path = "../runtime/tests/common/fake.rs"]
mod fake;

use fake::{Fake, run, spread};
use ima::{DType, Scalar};

/// paged_attn's arguments for B sequences of HQ query heads over HKV KV heads of D = 128,
/// pages of BS = 16 tokens, tables of P pages a sequence, 64 pages in the caches.
fn paged_attn_args(b: usize, hq: usize, hkv: usize, p: usize) -> Vec<Fake> {
    let (d, bs, nb) = (128, 16, 64);
    let parts = (p * bs).div_ceil(paged::PART as usize);
    spread(vec![
        Fake::new(DType::F16, &[b, hq, d], 0),
        Fake::new(DType::F16, &[nb, bs, hkv, d], 0),
        Fake::new(DType::F16, &[nb, bs, hkv, d], 0),
        Fake::new(DType::I32, &[b, p], 0),
        Fake::new(DType::I32, &[b], 0),
        Fake::new(DType::F32, &[b, hq, parts, d], 0),
        Fake::new(DType::F32, &[b, hq, parts], 0),
        Fake::new(DType::I32, &[b, hq], 0),
        Fake::new(DType::F16, &[b, hq, d], 0),
    ])
}

#[test]
fn paged_attn_s_grid_caps_a_pair_s_blocks_at_blocks_over_the_pairs() {
    assert_eq!((paged::PART, paged::SPAN, paged::BLOCKS), (128, 4, 1024));
    // (B, HQ, HKV, P) and the grid, worked out by hand: x = min(ceil(P * 16 / 128),
    // max(ceil(P * 16 / 512), ceil(1024 / pairs))), pairs = HKV * ceil(HQ / HKV / 8) * B;
    // y = HKV * ceil(HQ / HKV / 8); z = B.
    for (b, hq, hkv, p, grid) in [
        // The decode layer's heads on tables of 4096 tokens (32 runs): 256 pairs at B = 32
        // take ceil(1024 / 256) = 4, raised to the 8 that 32 runs over SPAN need.
        (32, 32, 8, 256, [8, 8, 32]),
        // One sequence: 8 pairs, 128 blocks each allowed, the capacity's 32 runs taken.
        (1, 32, 8, 256, [32, 8, 1]),
        // Tables of 1024 tokens (8 runs) at B = 32: 4 blocks a pair, above the 2 of SPAN.
        (32, 32, 8, 64, [4, 8, 32]),
        // A group of 16 query heads takes two head blocks a KV head: 2 x 4 x 16 = 128
        // pairs, 8 blocks each, as many as 8 runs allow.
        (16, 64, 4, 64, [8, 8, 16]),
        // Tables shorter than a run: one block a pair.
        (4, 8, 8, 1, [1, 8, 4]),
    ] {
        let plan = run(
            paged::PagedAttn::CONTRACT,
            &paged_attn_args(b, hq, hkv, p),
            &[Scalar::F32(0.125)],
        )
        .unwrap_or_else(|v| panic!("B = {b}, HQ = {hq}, HKV = {hkv}, P = {p}: {v:?}"));
        assert_eq!(plan.grid, grid, "B = {b}, HQ = {hq}, HKV = {hkv}, P = {p}");
        assert_eq!(plan.block, [128, 1, 1]);
    }
}

/// A batch of no sequences: the cap's division by the pairs must not refuse it; the
/// launch is empty and skipped (a grid of zeros), as any other empty grid.
#[test]
fn a_batch_of_no_sequences_is_an_empty_launch() {
    let plan = run(
        paged::PagedAttn::CONTRACT,
        &paged_attn_args(0, 32, 8, 256),
        &[Scalar::F32(0.125)],
    )
    .unwrap_or_else(|v| panic!("B = 0: {v:?}"));
    assert_eq!(plan.grid, [0, 0, 0]);
}
