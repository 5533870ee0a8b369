//! specs/gemm.ima's tensor-core kernels end to end on a GPU, through the committed
//! generated stub: attention scores (f16 and f32 out), dense GEMM (f16 and bf16) and the
//! W4A16 GPTQ GEMM, each on shapes that are no multiple of its tiles (so that edge tiles
//! are zero-filled on the way in and masked on the way out), against an f64 reference,
//! in release and in checked mode, where nothing may be reported.

#[allow(dead_code)]
mod gemm {
    include!("out/specs/gemm.rs");
}

mod common;

use common::dense::{SCORE_SHAPES, f16s, gemm_pair_matches, scores_match};
use common::lcg;
use common::w4a16::{MMA_FUSED, w4a16_fused_matches, w4a16_matches};
use ima::cudarc::driver::{CudaContext, CudaStream};
use ima::half::f16;
use ima::{Error, Launched, QuantTensor, Tensor, Violation, ZeroStyle, quantize_gptq};
use std::sync::Arc;

fn setup() -> (Arc<CudaContext>, Arc<CudaStream>, gemm::Kernels) {
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.new_stream().unwrap();
    let kernels = gemm::Kernels::load(&ctx).unwrap();
    (ctx, stream, kernels)
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn attn_scores_mma_matches_f64_reference_on_ragged_shapes_f16_and_f32_out() {
    let (_ctx, stream, kernels) = setup();
    let scale = 0.125f32;
    for checked in [false, true] {
        kernels.set_checked(checked);
        for shape in SCORE_SHAPES {
            let what = format!("attn_scores_mma checked={checked}");
            scores_match(&stream, &what, shape, scale, &|q, k, o16, o32| {
                let launched = kernels.attn_scores_mma.launch(
                    &stream,
                    gemm::AttnScoresMmaArgs {
                        q,
                        k,
                        o: o16,
                        scale,
                    },
                )?;
                assert!(matches!(launched, Launched::Done { .. }), "{launched:?}");
                let launched = kernels.attn_scores_mma_f32.launch(
                    &stream,
                    gemm::AttnScoresMmaF32Args {
                        q,
                        k,
                        o: o32,
                        scale,
                    },
                )?;
                assert!(matches!(launched, Launched::Done { .. }), "{launched:?}");
                Ok(())
            });
        }
    }
}

/// (M, K, N): partial tiles in M and N and a partial last stage of K; one row of tiles
/// down and a K of one stage; more than the 8 rows of tiles a group takes, with N of
/// one 8-column chunk; a single element.
const GEMM_SHAPES: [(usize, usize, usize); 4] =
    [(77, 200, 136), (130, 32, 264), (1100, 72, 8), (1, 8, 8)];

#[test]
#[ignore = "needs a CUDA GPU"]
fn gemm_f16_and_bf16_match_f64_reference_on_ragged_shapes() {
    let (_ctx, stream, kernels) = setup();
    for checked in [false, true] {
        kernels.set_checked(checked);
        for shape in GEMM_SHAPES {
            gemm_pair_matches(
                &stream,
                (
                    &format!("gemm_f16 checked={checked}"),
                    &format!("gemm_bf16 checked={checked}"),
                ),
                shape,
                &|a, b, c| {
                    kernels
                        .gemm_f16
                        .launch(&stream, gemm::GemmF16Args { a, b, c })
                },
                &|a, b, c| {
                    kernels
                        .gemm_bf16
                        .launch(&stream, gemm::GemmBf16Args { a, b, c })
                },
            );
        }
    }
}

/// (M, K, N, G): one row of x; K no multiple of 32 nor of G (1000), so that the last
/// steps of K are partial; groups of 20, so that most tiles cross a group and decode
/// element by element; M of two and of three 64-row blocks with a partial last one, and
/// N no multiple of the 32-column strips. Groups of 128 let every row-block's lanes take
/// 4 or 2 spread packed rows a step; groups of 64 only blocks of more than 16 rows (M =
/// 130's last block of 2 takes one packed row a step); groups of 32 neither (M = 48: 32
/// rows, then 16). Blocks take 16 rows of x where that makes at most 264 blocks (every
/// shape above N = 264 here), 32 otherwise: M = 40 and 33 with N = 4352 and 8480 (408 and
/// 795 blocks of 16 rows), so a block of 32 rows with spread packed rows (groups of 128,
/// then of 64) and a last block of 8 rows, then 1. A block's warps split 2 ways across
/// columns at N = 8480 (two row blocks of 133 strips of 64 columns, the last one half
/// past N) and 4 ways at N = 25608 (one row block of 201 strips of 128, the last one
/// 8 columns wide); 1 way below.
const GPTQ_SHAPES: [(usize, usize, usize, usize); 10] = [
    (1, 256, 64, 128),
    (16, 1000, 72, 128),
    (17, 328, 40, 20),
    (48, 512, 64, 32),
    (64, 4096, 136, 128),
    (100, 520, 264, 128),
    (130, 256, 32, 64),
    (40, 512, 4352, 128),
    (33, 256, 8480, 64),
    (20, 264, 25608, 128),
];

#[test]
#[ignore = "needs a CUDA GPU"]
fn gptq_gemm_matches_f64_reference_on_ragged_shapes() {
    let (_ctx, stream, kernels) = setup();
    for checked in [false, true] {
        kernels.set_checked(checked);
        w4a16_matches(
            &stream,
            &format!("gptq_gemm checked={checked}"),
            &GPTQ_SHAPES,
            &|x, w, y| {
                kernels
                    .gptq_gemm
                    .launch(&stream, gemm::GptqGemmArgs { x, w, y })
            },
        );
    }
}

/// gptq_gemm with y half as wide as W: SiluAndMul fused, release and checked, on
/// (M, K, N, G) of GPTQ_SHAPES' kinds with N a multiple of two units: one row; ragged M,
/// K across groups; a last 32-column strip with one unit pair (N = 144); several M-blocks
/// of 16 rows; blocks of 32 rows (N = 8480: 795 blocks of 16 rows would be too many),
/// their warps 2 ways across columns; warps 4 ways across (N = 25616).
#[test]
#[ignore = "needs a CUDA GPU"]
fn gptq_gemm_fuses_silu_and_mul_when_y_is_half_as_wide() {
    let (_ctx, stream, kernels) = setup();
    for checked in [false, true] {
        kernels.set_checked(checked);
        w4a16_fused_matches(
            &stream,
            &format!("gptq_gemm checked={checked}"),
            &[
                (1, 256, 64, 128),
                (17, 328, 48, 20),
                (64, 4096, 144, 128),
                (130, 256, 32, 64),
                (40, 256, 8480, 128),
                (9, 512, 25616, 128),
            ],
            gemm::GATE_UP_UNIT as usize,
            &MMA_FUSED,
            &|x, w, y| {
                kernels
                    .gptq_gemm
                    .launch(&stream, gemm::GptqGemmArgs { x, w, y })
            },
        );
    }
}

/// y neither as wide as W nor half as wide: refused before the launch, naming the
/// constraint.
#[test]
#[ignore = "needs a CUDA GPU"]
fn gptq_gemm_refuses_a_y_of_another_width() {
    let (_ctx, stream, kernels) = setup();
    let (m, k, n) = (2, 256, 64);
    let x = Tensor::from_host(&stream, &f16s(m * k, 3), &[m, k]).unwrap();
    let weights: Vec<f32> = lcg(5).take(k * n).collect();
    let host = quantize_gptq::<f16>(&weights, k, n, 128, ZeroStyle::MinusOne, None).unwrap();
    let w = QuantTensor::upload(&stream, &host).unwrap();
    let mut y = Tensor::full(&stream, f16::NAN, &[m, 40]).unwrap();
    let err = kernels
        .gptq_gemm
        .launch(
            &stream,
            gemm::GptqGemmArgs {
                x: &x,
                w: &w,
                y: &mut y,
            },
        )
        .unwrap_err();
    let text = err.to_string();
    assert!(text.contains("NY == N || 2 * NY == N"), "{text}");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gemm_refuses_a_b_of_another_k_before_launching() {
    let (_ctx, stream, kernels) = setup();
    let a = Tensor::from_host(&stream, &f16s(16 * 32, 1), &[16, 32]).unwrap();
    // b carries K = 24: the product would read a's rows past b's end.
    let b = Tensor::from_host(&stream, &f16s(24 * 8, 2), &[24, 8]).unwrap();
    let mut c = Tensor::full(&stream, f16::NAN, &[16, 8]).unwrap();
    let err = kernels
        .gemm_f16
        .launch(
            &stream,
            gemm::GemmF16Args {
                a: &a,
                b: &b,
                c: &mut c,
            },
        )
        .unwrap_err();
    let Error::Launch(launch) = &err else {
        panic!("expected a launch error, got {err}")
    };
    assert!(
        launch.violations.iter().any(|v| matches!(
            v,
            Violation::Dim {
                arg: "b",
                position: 0,
                expected: 32,
                actual: 24,
                ..
            }
        )),
        "{err}"
    );
    assert!(err.to_string().starts_with("gemm_f16(a: f16[M,K]"), "{err}");
    assert!(
        c.to_host(&stream).unwrap().iter().all(|v| v.is_nan()),
        "c was written"
    );
}
