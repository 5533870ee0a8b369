//! specs/gemm_tma.ima's dense GEMMs and attention scores (TMA and warpgroup MMA, compute
//! capability 9.0) end to end on a GPU, through the committed generated stub, on shapes that are no multiple of
//! their tiles (the TMA unit zero-fills what lies past the tensor's extents, and the
//! stores are masked), against an f64 reference, in release and in checked mode, where
//! nothing may be reported.

#[allow(dead_code)]
mod gemm_tma {
    include!("out/specs/gemm_tma.rs");
}

mod common;

use common::dense::{SCORE_SHAPES, gemm_pair_matches, scores_match};
use gemm_tma as gemm;
use ima::cudarc::driver::{CudaContext, CudaStream};
use ima::half::bf16;
use ima::{Launched, Tensor};
use std::sync::Arc;

fn setup() -> (Arc<CudaContext>, Arc<CudaStream>, gemm::Kernels) {
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.new_stream().unwrap();
    let kernels = gemm::Kernels::load(&ctx).unwrap();
    (ctx, stream, kernels)
}

/// (M, K, N) for the TMA GEMMs (128 x 256 block tiles, 64-deep stages, 4 of them):
/// partial tiles in every dimension; two row tiles and two column tiles with K of 16
/// stages, so that each stage's barriers go round four times; three by three tiles with a
/// K of one partial stage; a single row with a K that is one eighth of a box.
const GEMM_TMA_SHAPES: [(usize, usize, usize); 4] =
    [(77, 200, 136), (130, 1000, 264), (300, 72, 520), (1, 8, 8)];

#[test]
#[ignore = "needs a CUDA GPU"]
fn gemm_tma_f16_and_bf16_match_f64_reference_on_ragged_shapes() {
    let (_ctx, stream, kernels) = setup();
    for checked in [false, true] {
        kernels.set_checked(checked);
        for shape in GEMM_TMA_SHAPES {
            gemm_pair_matches(
                &stream,
                (
                    &format!("gemm_tma_f16 checked={checked}"),
                    &format!("gemm_tma_bf16 checked={checked}"),
                ),
                shape,
                &|a, b, c| {
                    kernels
                        .gemm_tma_f16
                        .launch(&stream, gemm::GemmTmaF16Args { a, b, c })
                },
                &|a, b, c| {
                    kernels
                        .gemm_tma_bf16
                        .launch(&stream, gemm::GemmTmaBf16Args { a, b, c })
                },
            );
        }
    }
}

/// K = 0: a and b are empty, so their tensor maps are never used (the runtime encodes
/// zeros for them), and c is the empty sum, zeros, in both modes.
#[test]
#[ignore = "needs a CUDA GPU"]
fn gemm_tma_of_an_empty_k_writes_zeros() {
    let (_ctx, stream, kernels) = setup();
    for checked in [false, true] {
        kernels.set_checked(checked);
        let a = Tensor::<bf16>::zeros(&stream, &[5, 0]).unwrap();
        let b = Tensor::<bf16>::zeros(&stream, &[0, 16]).unwrap();
        let mut c = Tensor::full(&stream, bf16::NAN, &[5, 16]).unwrap();
        let launched = kernels
            .gemm_tma_bf16
            .launch(
                &stream,
                gemm::GemmTmaBf16Args {
                    a: &a,
                    b: &b,
                    c: &mut c,
                },
            )
            .unwrap();
        assert!(matches!(launched, Launched::Done { .. }), "{launched:?}");
        let got = c.to_host(&stream).unwrap();
        assert!(
            got.iter().all(|v| v.to_f32() == 0.0),
            "checked={checked}: {got:?}"
        );
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn attn_scores_tma_matches_f64_reference_on_ragged_shapes_f16_and_f32_out() {
    let (_ctx, stream, kernels) = setup();
    let scale = 0.125f32;
    for checked in [false, true] {
        kernels.set_checked(checked);
        for shape in SCORE_SHAPES {
            let what = format!("attn_scores_tma checked={checked}");
            scores_match(&stream, &what, shape, scale, &|q, k, o16, o32| {
                let launched = kernels.attn_scores_tma.launch(
                    &stream,
                    gemm::AttnScoresTmaArgs {
                        q,
                        k,
                        o: o16,
                        scale,
                    },
                )?;
                assert!(matches!(launched, Launched::Done { .. }), "{launched:?}");
                let launched = kernels.attn_scores_tma_f32.launch(
                    &stream,
                    gemm::AttnScoresTmaF32Args {
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
