//! Checked mode on a GPU: planted bugs (tests/in/planted_bugs.ima) are reported with the
//! kernel, argument, dimension, index and extent; the process and its context stay
//! healthy, so a correct kernel runs right after; and with no violation, checked outputs
//! equal release outputs.

#[allow(dead_code)]
mod planted {
    include!("out/planted_bugs.rs");
}
#[allow(dead_code)]
mod attn {
    include!("out/specs/attn.rs");
}
#[allow(dead_code)]
mod transpose {
    include!("out/specs/transpose.rs");
}

mod common;

use common::lcg;
use ima::cudarc::driver::{CudaContext, CudaStream};
use ima::half::f16;
use ima::{Access, Error, OutOfBounds, Tensor};
use std::sync::Arc;

fn data(n: usize, seed: u64) -> Vec<f32> {
    lcg(seed).take(n).collect()
}

fn halves(n: usize, seed: u64) -> Vec<f16> {
    data(n, seed).into_iter().map(f16::from_f32).collect()
}

fn setup() -> (Arc<CudaContext>, Arc<CudaStream>) {
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.new_stream().unwrap();
    (ctx, stream)
}

fn report(result: Result<ima::Launched, Error>) -> OutOfBounds {
    match result {
        Err(Error::OutOfBounds(r)) => *r,
        other => panic!("expected an out-of-bounds report, got {other:?}"),
    }
}

/// A random K x N weight quantized to GPTQ with groups of `g`, on the host and uploaded.
fn gptq_weight(
    stream: &Arc<CudaStream>,
    k: usize,
    n: usize,
    g: usize,
    seed: u64,
) -> (ima::QuantHost<f16>, ima::QuantTensor<f16>) {
    let host =
        ima::quantize_gptq::<f16>(&data(k * n, seed), k, n, g, ima::ZeroStyle::MinusOne, None)
            .unwrap();
    let w = ima::QuantTensor::upload(stream, &host).unwrap();
    (host, w)
}

/// After a report, a correct kernel in the same context gives correct results.
fn context_still_healthy(ctx: &Arc<CudaContext>, stream: &Arc<CudaStream>) {
    let kernels = transpose::Kernels::load(ctx).unwrap();
    let (m, n) = (33, 17);
    let xh = data(m * n, 99);
    let x = Tensor::from_host(stream, &xh, &[m, n]).unwrap();
    let mut y = Tensor::full(stream, f32::NAN, &[n, m]).unwrap();
    kernels
        .transpose
        .launch(stream, transpose::TransposeArgs { x: &x, y: &mut y })
        .unwrap();
    let got = y.to_host(stream).unwrap();
    for i in 0..m {
        for j in 0..n {
            assert_eq!(got[j * m + i], xh[i * n + j]);
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn an_off_by_one_loop_bound_is_reported_at_its_first_bad_read() {
    let (ctx, stream) = setup();
    let kernels = planted::Kernels::load(&ctx).unwrap();
    kernels.set_checked(true);
    let (b, h, s, t, d) = (2, 3, 7, 5, 64);
    let q = Tensor::from_host(&stream, &halves(b * h * s * d, 1), &[b, h, s, d]).unwrap();
    let k = Tensor::from_host(&stream, &halves(b * h * t * d, 2), &[b, h, t, d]).unwrap();
    let mut o = Tensor::full(&stream, f32::NAN, &[b, h, s, t]).unwrap();
    let r = report(kernels.scores_off_by_one.launch(
        &stream,
        planted::ScoresOffByOneArgs {
            q: &q,
            k: &k,
            o: &mut o,
        },
    ));
    println!("{r}");
    assert_eq!(r.kernel, "scores_off_by_one");
    assert_eq!(r.access, Access::Read);
    assert!(r.arg == "q" || r.arg == "k", "{r}");
    assert_eq!(
        (r.failed_dim, r.index[3], r.extent[3], r.dims[3]),
        (3, 64, 64, "D"),
        "{r}"
    );
    // Every thread reads q and k once past the end.
    assert_eq!(r.count as usize, 2 * b * h * s * t, "{r}");
    assert!(r.to_string().contains("index 3 is 64 >= D = 64"), "{r}");
    context_still_healthy(&ctx, &stream);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn swapped_indices_are_reported() {
    let (ctx, stream) = setup();
    let kernels = planted::Kernels::load(&ctx).unwrap();
    kernels.set_checked(true);
    let (m, n) = (45, 20);
    let x = Tensor::from_host(&stream, &data(m * n, 3), &[m, n]).unwrap();
    let mut y = Tensor::full(&stream, f32::NAN, &[n, m]).unwrap();
    let r = report(
        kernels
            .transpose_swapped
            .launch(&stream, planted::TransposeSwappedArgs { x: &x, y: &mut y }),
    );
    println!("{r}");
    assert_eq!(
        (r.kernel, r.arg.as_str(), r.access),
        ("transpose_swapped", "x", Access::Read)
    );
    // x(j, i) with j < N = 20 and i < M = 45: only column indices past N fail.
    assert_eq!((r.failed_dim, r.dims[1], r.extent[1]), (1, "N", 20), "{r}");
    assert!(r.index[1] >= 20, "{r}");
    assert_eq!(r.count as usize, n * (m - n), "{r}");
    context_still_healthy(&ctx, &stream);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_shared_memory_overrun_is_reported() {
    let (ctx, stream) = setup();
    let kernels = planted::Kernels::load(&ctx).unwrap();
    kernels.set_checked(true);
    let (r_, c) = (5, 100);
    let x = Tensor::from_host(&stream, &data(r_ * c, 4), &[r_, c]).unwrap();
    let mut s = Tensor::full(&stream, f32::NAN, &[r_, 1]).unwrap();
    let r = report(
        kernels
            .shared_overrun
            .launch(&stream, planted::SharedOverrunArgs { x: &x, s: &mut s }),
    );
    println!("{r}");
    assert_eq!(
        (r.arg.as_str(), r.access, r.extent[0]),
        ("shared red", Access::Write, 32),
        "{r}"
    );
    assert!(r.index[0] >= 32, "{r}");
    // Threads 32..63 of each of the 5 blocks write past the end.
    assert_eq!(r.count, 5 * 32, "{r}");
    context_still_healthy(&ctx, &stream);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_wrong_group_index_is_reported() {
    let (ctx, stream) = setup();
    let kernels = planted::Kernels::load(&ctx).unwrap();
    kernels.set_checked(true);
    let (k, n, g) = (300, 16, 128);
    let (_, w) = gptq_weight(&stream, k, n, g, 5);
    let mut y = Tensor::full(&stream, f16::NAN, &[k, n]).unwrap();
    let r = report(
        kernels
            .dequant_wrong_group
            .launch(&stream, planted::DequantWrongGroupArgs { w: &w, y: &mut y }),
    );
    println!("{r}");
    assert_eq!(
        (r.arg.as_str(), r.failed_dim, r.dims[0], r.extent[0]),
        ("w", 0, "K", 300),
        "{r}"
    );
    assert!(r.index[0] >= 300, "{r}");
    // Rows 172..299 look 128 rows down, past K.
    assert_eq!(r.count as usize, (k - (k - g)) * n, "{r}");
    context_still_healthy(&ctx, &stream);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_tile_across_groups_taken_as_whole_is_reported() {
    let (ctx, stream) = setup();
    let kernels = planted::Kernels::load(&ctx).unwrap();
    kernels.set_checked(true);
    // Groups of 48 rows: tiles of 32 rows 1 (32..63), 4 (128..159) and 7 (224..255) cross
    // a group boundary.
    let (k, n, g) = (288, 16, 48);
    let (host, w) = gptq_weight(&stream, k, n, g, 8);
    let mut y = Tensor::full(&stream, f32::NAN, &[n]).unwrap();
    let r = report(kernels.sum_tiles_across_groups.launch(
        &stream,
        planted::SumTilesAcrossGroupsArgs { w: &w, y: &mut y },
    ));
    println!("{r}");
    assert_eq!(
        (r.arg.as_str(), r.access),
        ("w", Access::NotWholeTile),
        "{r}"
    );
    assert!([32, 128, 224].contains(&r.index[0]), "{r}");
    assert_eq!((r.extent[0], r.extent[1]), (288, 16), "{r}");
    assert_eq!(r.count as usize, 3 * n / 4, "{r}");
    assert!(r.to_string().contains("not one of the whole tiles"), "{r}");
    // Checked mode decoded those tiles row by row: the sums are right.
    let reference: Vec<f32> = ima::dequant_reference(&host)
        .iter()
        .map(|v| v.to_f32())
        .collect();
    let got = y.to_host(&stream).unwrap();
    for c in 0..n {
        let column = (0..k).map(|row| reference[row * n + c]);
        let (want, size): (f32, f32) = column.fold((0.0, 0.0), |(s, a), v| (s + v, a + v.abs()));
        assert!(
            (got[c] - want).abs() <= 1e-3 * size + 1e-6,
            "column {c}: {} vs {want}",
            got[c]
        );
    }
    context_still_healthy(&ctx, &stream);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn checked_outputs_equal_release_outputs() {
    let (ctx, stream) = setup();
    let kernels = attn::Kernels::load(&ctx).unwrap();
    let (b, h, s, t, d) = (2, 3, 77, 45, 64);
    let (qh, kh) = (halves(b * h * s * d, 6), halves(b * h * t * d, 7));
    let q = Tensor::from_host(&stream, &qh, &[b, h, s, d]).unwrap();
    let k = Tensor::from_host(&stream, &kh, &[b, h, t, d]).unwrap();
    let mut release = Tensor::full(&stream, f32::NAN, &[b, h, s, t]).unwrap();
    let mut checked = Tensor::full(&stream, f32::NAN, &[b, h, s, t]).unwrap();
    let mut p_release = Tensor::full(&stream, f16::NAN, &[b, h, s, t]).unwrap();
    let mut p_checked = Tensor::full(&stream, f16::NAN, &[b, h, s, t]).unwrap();

    kernels
        .attn_scores
        .launch(
            &stream,
            attn::AttnScoresArgs {
                q: &q,
                k: &k,
                o: &mut release,
                scale: 0.125,
            },
        )
        .unwrap();
    kernels
        .softmax_rows
        .launch(
            &stream,
            attn::SoftmaxRowsArgs {
                s: &release,
                p: &mut p_release,
            },
        )
        .unwrap();
    kernels.set_checked(true);
    kernels
        .attn_scores
        .launch(
            &stream,
            attn::AttnScoresArgs {
                q: &q,
                k: &k,
                o: &mut checked,
                scale: 0.125,
            },
        )
        .unwrap();
    kernels
        .softmax_rows
        .launch(
            &stream,
            attn::SoftmaxRowsArgs {
                s: &checked,
                p: &mut p_checked,
            },
        )
        .unwrap();

    // Release against an f64 reference (so that two unwritten outputs cannot agree), then
    // checked against release, bit for bit.
    let (a, c) = (
        release.to_host(&stream).unwrap(),
        checked.to_host(&stream).unwrap(),
    );
    let (pa, pc) = (
        p_release.to_host(&stream).unwrap(),
        p_checked.to_host(&stream).unwrap(),
    );
    for row in 0..b * h * s {
        let (bh, i) = (row / s, row % s);
        let scores: Vec<f64> = (0..t)
            .map(|j| {
                let dot: f64 = (0..d)
                    .map(|dd| {
                        f64::from(qh[(bh * s + i) * d + dd]) * f64::from(kh[(bh * t + j) * d + dd])
                    })
                    .sum();
                0.125 * dot
            })
            .collect();
        let max = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let sum: f64 = scores.iter().map(|v| (v - max).exp()).sum();
        for (j, want) in scores.iter().enumerate() {
            let got = f64::from(a[row * t + j]);
            assert!(
                (got - want).abs() <= 1e-3 * want.abs().max(1e-2),
                "score [{row}, {j}] = {got}, expected {want}"
            );
            let p_want = (want - max).exp() / sum;
            let p_got = f64::from(pa[row * t + j]);
            assert!(
                (p_got - p_want).abs() <= 2e-3 * p_want + 1e-4,
                "probability [{row}, {j}] = {p_got}, expected {p_want}"
            );
        }
    }
    assert!(
        a.iter().zip(&c).all(|(x, y)| x.to_bits() == y.to_bits()),
        "scores differ"
    );
    assert!(
        pa.iter().zip(&pc).all(|(x, y)| x.to_bits() == y.to_bits()),
        "probabilities differ"
    );
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_deferred_violation_is_reported_by_the_next_launch_in_any_mode_which_does_not_run() {
    let (ctx, stream) = setup();
    let kernels = planted::Kernels::load(&ctx).unwrap();
    let (m, n) = (45, 20);
    let x = Tensor::from_host(&stream, &data(m * n, 3), &[m, n]).unwrap();
    for next in [
        ima::CheckedMode::Deferred,
        ima::CheckedMode::Off,
        ima::CheckedMode::Wait,
    ] {
        kernels.set_checked_mode(ima::CheckedMode::Deferred);
        let mut y = Tensor::full(&stream, f32::NAN, &[n, m]).unwrap();
        // The faulty launch returns once enqueued.
        kernels
            .transpose_swapped
            .launch(&stream, planted::TransposeSwappedArgs { x: &x, y: &mut y })
            .unwrap();
        stream.synchronize().unwrap();
        // The next launch, in deferred mode or switched out of it, returns what the
        // deferred one left.
        kernels.set_checked_mode(next);
        let mut z = Tensor::full(&stream, 7.0f32, &[n, m]).unwrap();
        let r = report(
            kernels
                .transpose_swapped
                .launch(&stream, planted::TransposeSwappedArgs { x: &x, y: &mut z }),
        );
        println!("{next:?}: {r}");
        assert!(r.deferred, "{next:?}: {r}");
        assert_eq!(
            (r.kernel, r.arg.as_str(), r.access, r.failed_dim),
            ("transpose_swapped", "x", Access::Read, 1),
            "{next:?}"
        );
        assert_eq!(r.count as usize, n * (m - n), "{next:?}: {r}");
        assert!(r.to_string().contains("(deferred)"), "{next:?}: {r}");
        // The reporting launch did not run.
        assert!(
            z.to_host(&stream).unwrap().iter().all(|&v| v == 7.0),
            "{next:?}"
        );
        // Reported once: the record is clean again, and a clean kernel has nothing to
        // report.
        kernels.check_deferred().unwrap();
    }
    context_still_healthy(&ctx, &stream);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn check_deferred_waits_for_the_launches_and_counts_them_all() {
    let (ctx, stream) = setup();
    let kernels = planted::Kernels::load(&ctx).unwrap();
    kernels.set_checked_mode(ima::CheckedMode::Deferred);
    let (m, n) = (45, 20);
    let x = Tensor::from_host(&stream, &data(m * n, 3), &[m, n]).unwrap();
    let mut y = Tensor::full(&stream, f32::NAN, &[n, m]).unwrap();
    // Enqueued back to back: whether a launch finds an earlier one's flag raised depends on
    // how far the GPU has got; every faulty launch is counted in exactly one report.
    let mut accepted = 0;
    for _ in 0..3 {
        match kernels
            .transpose_swapped
            .launch(&stream, planted::TransposeSwappedArgs { x: &x, y: &mut y })
        {
            Ok(_) => accepted += 1,
            Err(e) => {
                let Error::OutOfBounds(r) = e else {
                    panic!("{e}")
                };
                assert!(r.deferred);
                assert_eq!(r.count as usize, accepted * n * (m - n), "{r}");
                accepted = 0;
            }
        }
    }
    // What the loop did not report (nothing, when its last launch reported instead of
    // running), check_deferred does, once.
    match kernels.check_deferred() {
        Ok(()) => assert_eq!(accepted, 0),
        Err(Error::OutOfBounds(r)) => {
            assert!(accepted >= 1 && r.deferred, "{r}");
            assert_eq!(r.count as usize, accepted * n * (m - n), "{r}");
        }
        Err(e) => panic!("{e}"),
    }
    kernels.check_deferred().unwrap();
    // A correct kernel in deferred mode reports nothing and computes the right values.
    let kernels = transpose::Kernels::load(&ctx).unwrap();
    kernels.set_checked_mode(ima::CheckedMode::Deferred);
    let xh = data(m * n, 5);
    let x = Tensor::from_host(&stream, &xh, &[m, n]).unwrap();
    let mut y = Tensor::full(&stream, f32::NAN, &[n, m]).unwrap();
    kernels
        .transpose
        .launch(&stream, transpose::TransposeArgs { x: &x, y: &mut y })
        .unwrap();
    kernels
        .transpose
        .launch(&stream, transpose::TransposeArgs { x: &x, y: &mut y })
        .unwrap();
    kernels.check_deferred().unwrap();
    let got = y.to_host(&stream).unwrap();
    for i in 0..m {
        for j in 0..n {
            assert_eq!(got[j * m + i], xh[i * n + j]);
        }
    }
}
