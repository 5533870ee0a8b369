//! specs/gemm.ima's contracts checked on the CPU with fake tensors: gptq_gemm's grid takes
//! blocks of 16 rows of x while they number at most 264 (two on each of the H200's 132
//! SMs), and of 32 rows otherwise, and blocks of 32, 64 or 128 columns (its warps 1, 2 or
//! 4 ways across) by the shape (its body reads both back from the grid); the
//! attention scores with D = 0 launch, so that their body writes the empty sums' zeros.

#[allow(dead_code)]
mod gemm {
    include!("out/specs/gemm.rs");
}

#[allow(dead_code)]
#[path = "../runtime/tests/common/fake.rs"]
mod fake;

use fake::{Fake, run, spread};
use ima::DType;

/// gptq_gemm's arguments for x `[M, K]`, a `K x N` GPTQ weight with groups of 128 (the
/// logical `[K, N, G]`, qweight, qzeros, scales) and y `[M, N]`.
fn gptq_gemm_args(m: usize, k: usize, n: usize) -> Vec<Fake> {
    let g = 128;
    spread(vec![
        Fake::new(DType::F16, &[m, k], 0),
        Fake::new(DType::F16, &[k, n, g], 0),
        Fake::new(DType::I32, &[k / 8, n], 0),
        Fake::new(DType::I32, &[k / g, n / 8], 0),
        Fake::new(DType::F16, &[k / g, n], 0),
        Fake::new(DType::F16, &[m, n], 0),
    ])
}

#[test]
fn gptq_gemm_takes_16_rows_a_block_while_that_makes_at_most_264_blocks() {
    // (M, N) and the grid, worked out by hand: ceil(M / 16) * ceil(N / 32) blocks of 16
    // rows if that is at most 264, else ceil(M / 32) of 32; by ceil(N / (32 WN)) strips,
    // WN 4 where ceil(N / 32) >= 800 and M <= 32, else 2 where ceil(M / 32) * ceil(N / 64)
    // >= 224, else 1.
    for (m, n, grid) in [
        // The decode layer's O and down at B = 32: 2 x 128 = 256 blocks of 16 rows.
        (32, 4096, [2, 128, 1]),
        // QKV at B = 32: 2 x 192 = 384 would be too many; 192 blocks of 32 rows.
        (32, 6144, [1, 192, 1]),
        // gate/up at B = 32: 896 strips of 32 columns, so 224 of 128.
        (32, 28672, [1, 224, 1]),
        (16, 28672, [1, 224, 1]),
        // Two row blocks of 32: 2 x 448 strips of 64 columns.
        (33, 28672, [2, 448, 1]),
        (128, 28672, [4, 448, 1]),
        // 224 strips of 64 exactly; 265 of 32 are fewer than 800.
        (32, 14336, [1, 224, 1]),
        (33, 8480, [2, 133, 1]),
        // 801 strips of 32: 201 of 128, the last one 8 columns wide.
        (20, 25608, [1, 201, 1]),
        // One row block either way.
        (16, 4096, [1, 128, 1]),
        // 264 blocks of 16 rows exactly (3 x 88), then one row more: 4 x 88 = 352.
        (48, 2816, [3, 88, 1]),
        (49, 2816, [2, 88, 1]),
        // A ragged M with few columns: 7 x 9.
        (100, 264, [7, 9, 1]),
    ] {
        let plan = run(gemm::GptqGemm::CONTRACT, &gptq_gemm_args(m, 4096, n), &[])
            .unwrap_or_else(|v| panic!("M = {m}, N = {n}: {v:?}"));
        assert_eq!(plan.grid, grid, "M = {m}, N = {n}");
        assert_eq!(plan.block, [256, 1, 1], "M = {m}, N = {n}");
    }
}

/// q `[B, H, S, 0]` and k `[B, H, T, 0]` are empty, o `[B, H, S, T]` is not: the launch
/// goes ahead on o's grid (a skipped launch would leave o as it was), for both outputs.
#[test]
fn attention_scores_of_an_empty_d_launch_on_the_output_s_grid() {
    let (b, h, s, t) = (2, 3, 130, 264);
    for (contract, out) in [
        (gemm::AttnScoresMma::CONTRACT, DType::F16),
        (gemm::AttnScoresMmaF32::CONTRACT, DType::F32),
    ] {
        let args = spread(vec![
            Fake::new(DType::F16, &[b, h, s, 0], 0),
            Fake::new(DType::F16, &[b, h, t, 0], 0),
            Fake::new(out, &[b, h, s, t], 0),
        ]);
        let plan = run(contract, &args, &[ima::Scalar::F32(0.125)])
            .unwrap_or_else(|v| panic!("{}: {v:?}", contract.name));
        assert!(!plan.skip, "{}", contract.name);
        assert_eq!(
            plan.grid,
            [2, 6, 1],
            "{}: ceil(S / 128) by B * H",
            contract.name
        );
    }
}
