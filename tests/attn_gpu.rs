//! attn_scores and attn_scores_tiled end to end on a GPU, through the committed generated
//! stub: ragged shapes against an f64 reference, and a wrong argument refused before any
//! launch.

#[allow(dead_code)]
mod attn {
    include!("out/specs/attn.rs");
}

mod common;

use common::lcg;
use ima::cudarc::driver::CudaContext;
use ima::half::f16;
use ima::{Error, Launched, Tensor, Violation};

/// Deterministic values in [-1, 1), exactly representable in f16.
fn data(n: usize, seed: u64) -> Vec<f16> {
    lcg(seed).take(n).map(f16::from_f32).collect()
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn attn_scores_matches_f64_reference_on_a_ragged_shape() {
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.new_stream().unwrap();
    let kernels = attn::Kernels::load(&ctx).unwrap();
    scores_match_reference(&stream, &kernels, false, [2, 3, 77, 45, 64]);
}

/// The tiled kernel: one partial tile each way (S = 77, T = 45), several tiles with partial
/// last ones (S = 200, T = 300), and D of one chunk and a half (40) and of a partial
/// first chunk (8); in release and in checked mode, where every staged read and write of
/// its shared tiles is checked and none may be reported.
#[test]
#[ignore = "needs a CUDA GPU"]
fn attn_scores_tiled_matches_f64_reference_on_ragged_shapes() {
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.new_stream().unwrap();
    let kernels = attn::Kernels::load(&ctx).unwrap();
    for checked in [false, true] {
        kernels.set_checked(checked);
        for shape in [
            [2, 3, 77, 45, 64],
            [1, 2, 200, 300, 40],
            [1, 1, 130, 129, 8],
        ] {
            scores_match_reference(&stream, &kernels, true, shape);
        }
    }
}

fn scores_match_reference(
    stream: &std::sync::Arc<ima::cudarc::driver::CudaStream>,
    kernels: &attn::Kernels,
    tiled: bool,
    [b, h, s, t, d]: [usize; 5],
) {
    let qh = data(b * h * s * d, 1);
    let kh = data(b * h * t * d, 2);
    let q = Tensor::from_host(stream, &qh, &[b, h, s, d]).unwrap();
    let k = Tensor::from_host(stream, &kh, &[b, h, t, d]).unwrap();
    let mut o = Tensor::full(stream, f32::NAN, &[b, h, s, t]).unwrap();
    let scale = 0.125f32;

    let launched = if tiled {
        kernels.attn_scores_tiled.launch(
            stream,
            attn::AttnScoresTiledArgs {
                q: &q,
                k: &k,
                o: &mut o,
                scale,
            },
        )
    } else {
        kernels.attn_scores.launch(
            stream,
            attn::AttnScoresArgs {
                q: &q,
                k: &k,
                o: &mut o,
                scale,
            },
        )
    }
    .unwrap();
    assert!(matches!(launched, Launched::Done { .. }), "{launched:?}");
    let worst = assert_scores(
        &o.to_host(stream).unwrap(),
        &qh,
        &kh,
        [b, h, s, t, d],
        scale,
    );
    let name = if tiled {
        "attn_scores_tiled"
    } else {
        "attn_scores"
    };
    println!(
        "{name} {:?}: worst relative error {worst:.2e}",
        [b, h, s, t, d]
    );
}

/// Asserts that every score o[b, h, i, j] was written and equals scale · Σ_d q[b, h, i, d]
/// k[b, h, j, d], computed in f64 from the host copies, to 1e-3 relative; returns the
/// worst relative error.
fn assert_scores(
    out: &[f32],
    qh: &[f16],
    kh: &[f16],
    [b, h, s, t, d]: [usize; 5],
    scale: f32,
) -> f64 {
    assert_eq!(out.len(), b * h * s * t);
    let mut worst = 0f64;
    for (idx, &got) in out.iter().enumerate() {
        let (jj, rest) = (idx % t, idx / t);
        let (ii, rest) = (rest % s, rest / s);
        let (hh, bb) = (rest % h, rest / h);
        let mut acc = 0f64;
        for dd in 0..d {
            let qv = f64::from(qh[((bb * h + hh) * s + ii) * d + dd]);
            let kv = f64::from(kh[((bb * h + hh) * t + jj) * d + dd]);
            acc += qv * kv;
        }
        let want = acc * f64::from(scale);
        assert!(
            got.is_finite(),
            "o[{bb},{hh},{ii},{jj}] was not written: {got}"
        );
        let rel = (f64::from(got) - want).abs() / want.abs().max(1e-2);
        worst = worst.max(rel);
        assert!(
            rel < 1e-3,
            "o[{bb},{hh},{ii},{jj}] = {got}, expected {want}"
        );
    }
    worst
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn attn_scores_refuses_a_wrong_t_before_launching() {
    let (b, h, s, t, d) = (2, 3, 77, 45, 64);
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.new_stream().unwrap();
    let kernels = attn::Kernels::load(&ctx).unwrap();

    let q = Tensor::from_host(&stream, &data(b * h * s * d, 1), &[b, h, s, d]).unwrap();
    // k carries T = 44, the output T = 45: the output would be read past k's end.
    let k = Tensor::from_host(&stream, &data(b * h * (t - 1) * d, 2), &[b, h, t - 1, d]).unwrap();
    let mut o = Tensor::full(&stream, f32::NAN, &[b, h, s, t]).unwrap();

    let err = kernels
        .attn_scores
        .launch(
            &stream,
            attn::AttnScoresArgs {
                q: &q,
                k: &k,
                o: &mut o,
                scale: 1.0,
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
                arg: "o",
                position: 3,
                expected: 44,
                actual: 45,
                ..
            }
        )),
        "{err}"
    );
    let message = err.to_string();
    assert!(
        message.starts_with("attn_scores(q: f16[B,H,S,D], k: f16[B,H,T,D]"),
        "{message}"
    );
    assert!(message.contains("bound by k.shape[2]"), "{message}");
    println!("{message}");

    let out = o.to_host(&stream).unwrap();
    assert!(
        out.iter().all(|v| v.is_nan()),
        "the kernel ran: the output changed"
    );
}

/// The generated stubs take borrowed views as they take owned tensors: two views into one
/// tensor's buffer as q and k, a mutable view as the output, the same checks.
#[test]
#[ignore = "needs a CUDA GPU"]
fn stubs_take_borrowed_views() {
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.new_stream().unwrap();
    let kernels = attn::Kernels::load(&ctx).unwrap();
    let [b, h, s, t, d] = [1, 2, 16, 16, 64];
    let n = b * h * s * d;
    let host = data(2 * n, 3);
    let both = Tensor::from_host(&stream, &host, &[2 * n]).unwrap();
    let (qs, ks) = both.slice().split_at(n);
    let q = ima::TensorView::new(qs, &[b, h, s, d]).unwrap();
    let k = ima::TensorView::new(ks, &[b, h, t, d]).unwrap();
    let mut owned = Tensor::full(&stream, f32::NAN, &[b, h, s, t]).unwrap();
    let mut o = owned.view_mut();
    kernels
        .attn_scores
        .launch(
            &stream,
            attn::AttnScoresArgs {
                q: &q,
                k: &k,
                o: &mut o,
                scale: 0.125,
            },
        )
        .unwrap_or_else(|e| panic!("{e}"));
    let got = o.to_host(&stream).unwrap();
    assert_scores(&got, &host[..n], &host[n..], [b, h, s, t, d], 0.125);
    // A transposed view where the spec wants a contiguous output is refused, and the
    // output is left as it was.
    let err = kernels
        .attn_scores
        .launch(
            &stream,
            attn::AttnScoresArgs {
                q: &q,
                k: &k,
                o: &mut owned.view_mut().permute(&[0, 1, 3, 2]).unwrap(),
                scale: 1.0,
            },
        )
        .unwrap_err();
    let Error::Launch(launch) = &err else {
        panic!("expected a launch error, got {err}")
    };
    assert!(
        matches!(launch.violations[..], [Violation::Stride { arg: "o", .. }]),
        "{err}"
    );
    assert_eq!(
        owned.to_host(&stream).unwrap(),
        got,
        "the refused launch wrote o"
    );
}
