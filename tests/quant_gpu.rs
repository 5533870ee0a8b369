//! Quantized weights end to end on a GPU, through the committed generated stubs of
//! specs/quant.ima: dequant is bit-exact against the host reference for every format, on
//! aligned and ragged shapes; the GEMVs match an f64 reference; wrong buffers are refused
//! before launch with the derived shape; bad g_idx values are caught.

#[allow(dead_code)]
mod quant {
    include!("out/specs/quant.rs");
}

mod common;

use common::lcg;
use common::w4a16::{GEMV_FUSED, w4a16_fused_matches};
use ima::cudarc::driver::{CudaContext, CudaStream};
use ima::half::f16;
use ima::{
    CheckedMode, Error, QuantError, QuantHost, QuantTensor, Tensor, ValueFault, Violation,
    ZeroStyle, dequant_reference, quantize_awq, quantize_gptq, quantize_int8,
};
use std::sync::Arc;

/// Deterministic weights in [-1, 1).
fn weights(n: usize, seed: u64) -> Vec<f32> {
    lcg(seed).take(n).collect()
}

/// (K, N, G): aligned; K no multiple of G; K no multiple of 8; neither; N ragged; G = K.
const SHAPES: [(usize, usize, usize); 6] = [
    (256, 64, 128),
    (300, 64, 128),
    (132, 40, 64),
    (77, 45, 32),
    (64, 13, 16),
    (50, 24, 50),
];

fn setup() -> (Arc<CudaContext>, Arc<CudaStream>, quant::Kernels) {
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.new_stream().unwrap();
    let kernels = quant::Kernels::load(&ctx).unwrap();
    (ctx, stream, kernels)
}

/// Launches a dequant stub and compares every output bit with the host reference.
fn assert_bit_exact(
    stream: &Arc<CudaStream>,
    host: &QuantHost<f16>,
    launch: impl FnOnce(&QuantTensor<f16>, &mut Tensor<f16>) -> Result<ima::Launched, Error>,
) {
    let (k, n) = (host.k(), host.n());
    let w = QuantTensor::upload(stream, host).unwrap();
    let mut y = Tensor::full(stream, f16::NAN, &[k, n]).unwrap();
    launch(&w, &mut y).unwrap();
    let got = y.to_host(stream).unwrap();
    let want = dequant_reference(host);
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(
            g.to_bits(),
            w.to_bits(),
            "K={k} N={n} G={}: y[{}, {}] = {g}, reference {w}",
            host.group(),
            i / n,
            i % n
        );
    }
}

/// The tiled kernels' shapes (`N % 8 == 0`): aligned; K no multiple of G; K no multiple
/// of 8 with G no multiple of 8 (tiles that span two groups); G = K; one tile.
const TILED_SHAPES: [(usize, usize, usize); 6] = [
    (256, 64, 128),
    (300, 64, 128),
    (132, 40, 64),
    (77, 48, 12),
    (50, 24, 50),
    (8, 8, 8),
];

#[test]
#[ignore = "needs a CUDA GPU"]
fn gptq_dequant_is_bit_exact_on_aligned_and_ragged_shapes() {
    let (_ctx, stream, kernels) = setup();
    for (k, n, g) in TILED_SHAPES {
        let host =
            quantize_gptq::<f16>(&weights(k * n, 7), k, n, g, ZeroStyle::MinusOne, None).unwrap();
        assert_bit_exact(&stream, &host, |w, y| {
            kernels
                .gptq_dequant
                .launch(&stream, quant::GptqDequantArgs { w, y })
        });
    }
    for (k, n, g) in SHAPES {
        let host =
            quantize_gptq::<f16>(&weights(k * n, 8), k, n, g, ZeroStyle::MinusOne, None).unwrap();
        assert_bit_exact(&stream, &host, |w, y| {
            kernels
                .gptq_dequant_any_n
                .launch(&stream, quant::GptqDequantAnyNArgs { w, y })
        });
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_tiled_dequant_refuses_n_that_is_no_multiple_of_8() {
    let (_ctx, stream, kernels) = setup();
    let (k, n, g) = (64, 45, 32);
    let host =
        quantize_gptq::<f16>(&weights(k * n, 4), k, n, g, ZeroStyle::MinusOne, None).unwrap();
    let w = QuantTensor::upload(&stream, &host).unwrap();
    let mut y = Tensor::full(&stream, f16::NAN, &[k, n]).unwrap();
    let err = kernels
        .gptq_dequant
        .launch(&stream, quant::GptqDequantArgs { w: &w, y: &mut y })
        .unwrap_err();
    let message = err.to_string();
    assert!(
        message.contains("N % 8 == 0") && message.contains("N = 45"),
        "{message}"
    );
    assert!(
        y.to_host(&stream).unwrap().iter().all(|v| v.is_nan()),
        "the kernel ran"
    );
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gptq_act_order_dequant_is_bit_exact() {
    let (_ctx, stream, kernels) = setup();
    for (k, n, g) in SHAPES {
        let groups = k.div_ceil(g);
        // A permuted group assignment, as act-order checkpoints have.
        let g_idx: Vec<i32> = (0..k).map(|r| ((r * 7 + 3) % groups) as i32).collect();
        let host =
            quantize_gptq::<f16>(&weights(k * n, 11), k, n, g, ZeroStyle::Plain, Some(&g_idx))
                .unwrap();
        assert_bit_exact(&stream, &host, |w, y| {
            kernels
                .gptq_act_order_dequant
                .launch(&stream, quant::GptqActOrderDequantArgs { w, y })
        });
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn awq_dequant_is_bit_exact_on_aligned_and_ragged_shapes() {
    let (_ctx, stream, kernels) = setup();
    for (k, n, g) in TILED_SHAPES {
        let host = quantize_awq::<f16>(&weights(k * n, 13), k, n, g).unwrap();
        assert_bit_exact(&stream, &host, |w, y| {
            kernels
                .awq_dequant
                .launch(&stream, quant::AwqDequantArgs { w, y })
        });
    }
    for (k, n, g) in SHAPES {
        let host = quantize_awq::<f16>(&weights(k * n, 14), k, n, g).unwrap();
        assert_bit_exact(&stream, &host, |w, y| {
            kernels
                .awq_dequant_any_n
                .launch(&stream, quant::AwqDequantAnyNArgs { w, y })
        });
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn int8_dequant_is_bit_exact_on_aligned_and_ragged_shapes() {
    let (_ctx, stream, kernels) = setup();
    for (k, n, g) in SHAPES {
        let host = quantize_int8::<f16>(&weights(k * n, 17), k, n, g).unwrap();
        assert_bit_exact(&stream, &host, |w, y| {
            kernels
                .int8_dequant
                .launch(&stream, quant::Int8DequantArgs { w, y })
        });
    }
}

/// y = x · dequant(W) in f64, from the exact dequantized weights.
/// y = x · w in f64, and for each output the 2-norm of its products x[r, k] * w[k, c]: the
/// scale of a dot product's rounding error.
fn gemv_reference(x: &[f16], w: &[f16], m: usize, k: usize, n: usize) -> (Vec<f64>, Vec<f64>) {
    let mut y = vec![0f64; m * n];
    let mut norm = vec![0f64; m * n];
    for r in 0..m {
        for kk in 0..k {
            let xv = f64::from(x[r * k + kk]);
            for c in 0..n {
                let p = xv * f64::from(w[kk * n + c]);
                y[r * n + c] += p;
                norm[r * n + c] += p * p;
            }
        }
    }
    (y, norm.into_iter().map(f64::sqrt).collect())
}

/// Within 1% (and 0.01) of the reference, plus `normwise` times the 2-norm of the
/// products: the error of a dot product summed in f16 grows with that norm, not with y.
fn assert_close(got: &[f16], want: &(Vec<f64>, Vec<f64>), normwise: f64, what: &str) {
    for (i, ((g, w), norm)) in got.iter().zip(&want.0).zip(&want.1).enumerate() {
        let g = f64::from(*g);
        assert!(
            (g - w).abs() <= 1e-2 * w.abs() + 1e-2 + normwise * norm,
            "{what}: y[{i}] = {g}, expected {w} (products' 2-norm {norm})"
        );
    }
}

/// gptq_gemv through its stub: y = x · w, or with y half as wide the fused SiluAndMul.
fn gptq_gemv(
    kernels: &quant::Kernels,
    stream: &Arc<CudaStream>,
    x: &Tensor<f16>,
    w: &QuantTensor<f16>,
    y: &mut Tensor<f16>,
) -> Result<ima::Launched, Error> {
    kernels
        .gptq_gemv
        .launch(stream, quant::GptqGemvArgs { x, w, y })
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gemvs_match_an_f64_reference() {
    let (_ctx, stream, kernels) = setup();
    // gptq_gemv needs K and N multiples of 8: the last shape is awq_gemv's alone. For
    // gptq_gemv at M = 1: 64-row tiles with 8-row ones after them (K = 328), 8-row tiles
    // only, some across groups (G = 20) or in groups too small for a 64-row tile (G = 32),
    // many tiles per thread and a last block of 8 of its 128 columns (K = 4096, N = 136);
    // for M > 1, rows 4 at a time, in two passes for M = 5 and 8.
    for (m, k, n, g) in [
        (1, 256, 64, 128),
        (1, 328, 40, 128),
        (1, 104, 16, 20),
        (1, 192, 24, 32),
        (1, 4096, 136, 128),
        (3, 328, 40, 128),
        (5, 104, 16, 20),
        (8, 1048, 72, 24),
        (8, 77, 13, 32),
    ] {
        let xh: Vec<f16> = weights(m * k, 3)
            .iter()
            .map(|&v| f16::from_f32(v))
            .collect();
        let x = Tensor::from_host(&stream, &xh, &[m, k]).unwrap();

        let host =
            quantize_gptq::<f16>(&weights(k * n, 5), k, n, g, ZeroStyle::MinusOne, None).unwrap();
        let w = QuantTensor::upload(&stream, &host).unwrap();
        let mut y = Tensor::full(&stream, f16::NAN, &[m, n]).unwrap();
        if k % 8 == 0 && n % 8 == 0 {
            gptq_gemv(&kernels, &stream, &x, &w, &mut y).unwrap();
            let want = gemv_reference(&xh, &dequant_reference(&host), m, k, n);
            // Its whole tiles sum 8 products a lane in f16 (the accessor's `dot_tile`):
            // about 0.1% of the norm at K = 4096; allowed 0.8%.
            let what = format!("gptq_gemv M={m} K={k} N={n} G={g}");
            assert_close(&y.to_host(&stream).unwrap(), &want, 8e-3, &what);
        } else {
            let unmet: Vec<&str> = [(k, "K % 8 == 0"), (n, "N % 8 == 0")]
                .into_iter()
                .filter(|&(e, _)| e % 8 != 0)
                .map(|(_, c)| c)
                .collect();
            let what = format!("gptq_gemv M={m} K={k} N={n} G={g}");
            let refused = gptq_gemv(&kernels, &stream, &x, &w, &mut y);
            common::assert_refused_by(refused, "gptq_gemv", &unmet);
            let untouched = y.to_host(&stream).unwrap();
            assert!(
                untouched.iter().all(|v| v.is_nan()),
                "{what}: the refused launch wrote y"
            );
        }

        let host = quantize_awq::<f16>(&weights(k * n, 9), k, n, g).unwrap();
        let w = QuantTensor::upload(&stream, &host).unwrap();
        let mut y = Tensor::full(&stream, f16::NAN, &[m, n]).unwrap();
        kernels
            .awq_gemv
            .launch(
                &stream,
                quant::AwqGemvArgs {
                    x: &x,
                    w: &w,
                    y: &mut y,
                },
            )
            .unwrap();
        let want = gemv_reference(&xh, &dequant_reference(&host), m, k, n);
        let what = format!("awq_gemv M={m} K={k} N={n} G={g}");
        assert_close(&y.to_host(&stream).unwrap(), &want, 0.0, &what);
    }
}

/// gptq_gemv with y half as wide as W: SiluAndMul fused, W's columns gate's and up's in
/// turn by GATE_UP_UNIT, against silu(g) · u of the f64 products within the GEMVs'
/// tolerance, release and checked, on (M, K, N, G): two blocks of 128 columns and one of 16
/// (N = 272) over 64-row tiles then 8-row ones; groups of 20 (8-row tiles only); many tiles
/// a thread (K = 4096); M of 5 (rows 4 at a time, in two passes).
#[test]
#[ignore = "needs a CUDA GPU"]
fn gptq_gemv_fuses_silu_and_mul_when_y_is_half_as_wide() {
    let (_ctx, stream, kernels) = setup();
    for checked in [false, true] {
        kernels.set_checked(checked);
        w4a16_fused_matches(
            &stream,
            &format!("gptq_gemv checked={checked}"),
            &[
                (1, 328, 272, 128),
                (1, 104, 32, 20),
                (1, 4096, 144, 128),
                (5, 104, 160, 20),
            ],
            quant::GATE_UP_UNIT as usize,
            &GEMV_FUSED,
            &|x, w, y| gptq_gemv(&kernels, &stream, x, w, y),
        );
    }
    kernels.set_checked(false);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_wrong_sized_qzeros_is_refused_with_the_derived_shape() {
    let (_ctx, stream, kernels) = setup();
    let (k, n, g) = (5000, 4096, 128);
    let host =
        quantize_gptq::<f16>(&weights(k * n, 1), k, n, g, ZeroStyle::MinusOne, None).unwrap();
    let good = QuantTensor::upload(&stream, &host).unwrap();
    let (spec, qweight, _, scales, g_idx) = good.into_parts();
    // 39 groups of zeros, where ceil(5000 / 128) = 40 are needed.
    let short = Tensor::from_host(&stream, &vec![0i32; 39 * 512], &[39, 512]).unwrap();
    let w = QuantTensor::from_parts(spec, qweight, Some(short), scales, g_idx);
    let mut y = Tensor::full(&stream, f16::NAN, &[k, n]).unwrap();
    let err = kernels
        .gptq_dequant
        .launch(&stream, quant::GptqDequantArgs { w: &w, y: &mut y })
        .unwrap_err();
    let Error::Launch(e) = &err else {
        panic!("expected a launch error, got {err}")
    };
    assert!(
        e.violations.iter().any(|v| matches!(
            v,
            Violation::Dim {
                arg: "w.qzeros",
                position: 0,
                expected: 40,
                actual: 39,
                ..
            }
        )),
        "{err}"
    );
    let message = err.to_string();
    assert!(
        message.contains("ceil(K / G)")
            && message.contains("K = 5000")
            && message.contains("G = 128"),
        "{message}"
    );
    println!("{message}");
    assert!(
        y.to_host(&stream).unwrap().iter().all(|v| v.is_nan()),
        "the kernel ran"
    );
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_weight_of_another_format_is_refused() {
    let (_ctx, stream, kernels) = setup();
    let host = quantize_awq::<f16>(&weights(64 * 16, 1), 64, 16, 32).unwrap();
    let w = QuantTensor::upload(&stream, &host).unwrap();
    let mut y = Tensor::full(&stream, f16::NAN, &[64, 16]).unwrap();
    let err = kernels
        .gptq_dequant
        .launch(&stream, quant::GptqDequantArgs { w: &w, y: &mut y })
        .unwrap_err();
    assert!(
        matches!(err, Error::Quant(QuantError::FormatMismatch { .. })),
        "{err}"
    );
}

/// The act-order case of issue 18: a g_idx entry outside `0 .. ceil(K / G)` (one past the
/// last group, 2^22, -1, i32::MAX) is refused by `validate`, and in release, checked and
/// deferred mode alike the kernel reports it as an `IndexValue` and never reads the group
/// it names: every other row comes out bit-exact (under memcheck with `--padding`, no
/// access lands outside the buffers either).
#[test]
#[ignore = "needs a CUDA GPU"]
fn an_out_of_range_g_idx_is_reported_in_every_mode_and_never_read() {
    let (_ctx, stream, kernels) = setup();
    let (k, n, g) = (1024, 16, 128);
    let groups = (k / g) as i64;
    let good_g_idx: Vec<i32> = (0..k).map(|r| ((r * 7) % k / g) as i32).collect();
    let host = quantize_gptq::<f16>(
        &weights(k * n, 2),
        k,
        n,
        g,
        ZeroStyle::Plain,
        Some(&good_g_idx),
    )
    .unwrap();
    let want = dequant_reference(&host);
    let kernel = kernels.gptq_act_order_dequant.kernel();
    for bad_value in [groups as i32, 1 << 22, -1, i32::MAX] {
        let mut g_idx = good_g_idx.clone();
        g_idx[37] = bad_value;
        assert!(ima::validate_g_idx(&g_idx, k, g).is_err());
        let (spec, qweight, qzeros, scales, _) =
            QuantTensor::upload(&stream, &host).unwrap().into_parts();
        let bad = Tensor::from_host(&stream, &g_idx, &[k]).unwrap();
        let w = QuantTensor::from_parts(spec, qweight, qzeros, scales, Some(bad));
        let refused = w.validate(&stream).unwrap_err();
        assert!(
            matches!(refused, Error::Quant(QuantError::GIdxValue { row: 37, .. })),
            "{refused}"
        );
        for mode in [CheckedMode::Off, CheckedMode::Wait, CheckedMode::Deferred] {
            kernel.set_checked_mode(mode);
            let mut y = Tensor::full(&stream, f16::NAN, &[k, n]).unwrap();
            let launched = kernels
                .gptq_act_order_dequant
                .launch(&stream, quant::GptqActOrderDequantArgs { w: &w, y: &mut y });
            let err = match mode {
                CheckedMode::Wait => launched.unwrap_err(),
                _ => {
                    launched.unwrap();
                    kernel.check_deferred().unwrap_err()
                }
            };
            let Error::IndexValue(report) = &err else {
                panic!(
                    "{mode:?}, g_idx[37] = {bad_value}: expected an IndexValue report, got {err}"
                )
            };
            assert_eq!(
                (
                    report.arg.as_str(),
                    report.position.as_slice(),
                    report.value,
                    report.fault
                ),
                (
                    "w.g_idx",
                    &[37i64][..],
                    i64::from(bad_value),
                    ValueFault::Range { lo: 0, hi: groups }
                ),
                "{mode:?}: {err}"
            );
            assert_eq!(report.count, n as u32, "every column of row 37 reads it");
            let got = y.to_host(&stream).unwrap();
            for (i, (got, want)) in got.iter().zip(&want).enumerate() {
                if i / n != 37 {
                    assert_eq!(
                        got.to_bits(),
                        want.to_bits(),
                        "{mode:?}: y[{}, {}]",
                        i / n,
                        i % n
                    );
                }
            }
            if mode == CheckedMode::Wait && bad_value == 1 << 22 {
                println!("{err}");
            }
        }
        kernel.set_checked_mode(CheckedMode::Off);
    }
}
