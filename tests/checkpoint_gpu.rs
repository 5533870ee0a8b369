//! Checkpoints written as GPTQModel, AutoGPTQ and AutoAWQ write them, loaded from disk and
//! uploaded straight from the mapped files, then run through the example dequant kernels
//! (bit-exact against the intended weights and the host reference) and GEMVs (against an
//! f64 reference) of specs/quant.ima and specs/checkpoint.ima, through their committed
//! generated stubs.

#[allow(dead_code)]
mod quant {
    include!("out/specs/quant.rs");
}

#[allow(dead_code)]
mod ckpt {
    include!("out/specs/checkpoint.rs");
}

#[path = "../runtime/tests/fixtures/checkpoints.rs"]
mod fixtures;

mod common;

use std::sync::Arc;

use common::lcg;
use fixtures::{Intended, PREFIX, Writer, write_checkpoint};
use ima::cudarc::driver::{CudaContext, CudaStream};
use ima::half::f16;
use ima::{
    Checkpoint, Error, Launched, QuantFormat, QuantTensor, Tensor, ZeroStyle, dequant_reference,
};

struct Gpu {
    _ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    quant: quant::Kernels,
    ckpt: ckpt::Kernels,
}

fn setup() -> Gpu {
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.new_stream().unwrap();
    let quant = quant::Kernels::load(&ctx).unwrap();
    let ckpt = ckpt::Kernels::load(&ctx).unwrap();
    Gpu {
        _ctx: ctx,
        stream,
        quant,
        ckpt,
    }
}

/// Every checkpoint of the host tests: (writer, K, N, G, sym, zeros of 0, desc_act).
const CASES: [(Writer, usize, usize, usize, bool, bool, bool); 14] = [
    (Writer::GptqModelV1, 256, 64, 64, false, true, false),
    (Writer::GptqModelV1, 256, 64, 128, false, false, false),
    (Writer::AutoGptq, 256, 64, 128, false, false, false),
    (Writer::GptqModelV2, 128, 48, 32, false, true, false),
    (Writer::GptqModelV1, 128, 64, 64, true, false, false),
    (Writer::GptqModelV2, 128, 64, 64, true, false, false),
    (Writer::GptqModelV1, 256, 32, 64, false, true, true),
    (Writer::GptqModelV2, 256, 32, 64, false, true, true),
    (Writer::GptqModelV1, 256, 32, 64, true, false, true),
    (Writer::GptqModelV1, 200, 64, 64, false, true, false),
    (Writer::GptqModelV2, 100, 16, 32, false, true, true),
    (Writer::GptqModelV1, 72, 8, 128, false, true, false),
    (Writer::AutoAwq, 256, 64, 128, false, true, false),
    (Writer::AutoAwq, 200, 64, 64, false, true, false),
];

/// The dequant kernel for the weight's format.
fn dequant(gpu: &Gpu, w: &QuantTensor<f16>, y: &mut Tensor<f16>) -> Result<Launched, Error> {
    let s = &gpu.stream;
    match (w.format(), w.g_idx().is_some()) {
        (QuantFormat::Gptq(ZeroStyle::MinusOne), false) => gpu
            .quant
            .gptq_dequant_any_n
            .launch(s, quant::GptqDequantAnyNArgs { w, y }),
        (QuantFormat::Gptq(ZeroStyle::MinusOne), true) => gpu
            .ckpt
            .gptq_v1_act_order_dequant
            .launch(s, ckpt::GptqV1ActOrderDequantArgs { w, y }),
        (QuantFormat::Gptq(ZeroStyle::Plain), false) => gpu
            .ckpt
            .gptq_v2_dequant
            .launch(s, ckpt::GptqV2DequantArgs { w, y }),
        (QuantFormat::Gptq(ZeroStyle::Plain), true) => gpu
            .quant
            .gptq_act_order_dequant
            .launch(s, quant::GptqActOrderDequantArgs { w, y }),
        (QuantFormat::Gptq(ZeroStyle::Symmetric), false) => gpu
            .ckpt
            .gptq_sym_dequant
            .launch(s, ckpt::GptqSymDequantArgs { w, y }),
        (QuantFormat::Gptq(ZeroStyle::Symmetric), true) => gpu
            .ckpt
            .gptq_sym_act_order_dequant
            .launch(s, ckpt::GptqSymActOrderDequantArgs { w, y }),
        (QuantFormat::Awq, _) => gpu
            .quant
            .awq_dequant_any_n
            .launch(s, quant::AwqDequantAnyNArgs { w, y }),
        (QuantFormat::Int8, _) => unreachable!("checkpoints load 4-bit formats only"),
    }
}

/// The GEMV for the weight's format: the fast gptq_gemv for v1 without act-order where
/// its shape constraints hold.
fn gemv(
    gpu: &Gpu,
    x: &Tensor<f16>,
    w: &QuantTensor<f16>,
    y: &mut Tensor<f16>,
) -> Result<Launched, Error> {
    let s = &gpu.stream;
    match (w.format(), w.g_idx().is_some()) {
        (QuantFormat::Gptq(ZeroStyle::MinusOne), false) => gpu
            .quant
            .gptq_gemv
            .launch(s, quant::GptqGemvArgs { x, w, y }),
        (QuantFormat::Gptq(ZeroStyle::MinusOne), true) => gpu
            .ckpt
            .gptq_v1_act_order_gemv
            .launch(s, ckpt::GptqV1ActOrderGemvArgs { x, w, y }),
        (QuantFormat::Gptq(ZeroStyle::Plain), false) => gpu
            .ckpt
            .gptq_v2_gemv
            .launch(s, ckpt::GptqV2GemvArgs { x, w, y }),
        (QuantFormat::Gptq(ZeroStyle::Plain), true) => gpu
            .ckpt
            .gptq_v2_act_order_gemv
            .launch(s, ckpt::GptqV2ActOrderGemvArgs { x, w, y }),
        (QuantFormat::Gptq(ZeroStyle::Symmetric), false) => gpu
            .ckpt
            .gptq_sym_gemv
            .launch(s, ckpt::GptqSymGemvArgs { x, w, y }),
        (QuantFormat::Gptq(ZeroStyle::Symmetric), true) => gpu
            .ckpt
            .gptq_sym_act_order_gemv
            .launch(s, ckpt::GptqSymActOrderGemvArgs { x, w, y }),
        (QuantFormat::Awq, _) => gpu.quant.awq_gemv.launch(s, quant::AwqGemvArgs { x, w, y }),
        (QuantFormat::Int8, _) => unreachable!("checkpoints load 4-bit formats only"),
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn loaded_checkpoints_dequantize_bit_exact_on_the_gpu() {
    let gpu = setup();
    for (i, &(writer, k, n, g, sym, zeros_of_0, desc_act)) in CASES.iter().enumerate() {
        let intended = Intended::new(k, n, g, 100 + i as u64, sym, zeros_of_0, desc_act);
        let dir = tempfile::tempdir().unwrap();
        write_checkpoint(dir.path(), &intended, writer);
        let ckpt = Checkpoint::open(dir.path()).unwrap();
        let layer = ckpt.layer(PREFIX).unwrap();
        let w = layer.upload::<f16>(&gpu.stream).unwrap();
        let mut y = Tensor::full(&gpu.stream, f16::NAN, &[k, n]).unwrap();
        dequant(&gpu, &w, &mut y).unwrap();
        let got = y.to_host(&gpu.stream).unwrap();
        let host = dequant_reference(&layer.to_host::<f16>().unwrap());
        let want = intended.weights();
        for (j, ((gv, hv), wv)) in got.iter().zip(&host).zip(&want).enumerate() {
            assert!(
                gv.to_bits() == wv.to_bits() && hv.to_bits() == wv.to_bits(),
                "{writer:?} K={k} N={n} G={g} sym={sym} desc_act={desc_act} as {}: y[{}, {}] = \
                 {gv} on the GPU, {hv} on the host, intended {wv}",
                w_format(&layer.format(), layer.has_g_idx()),
                j / n,
                j % n
            );
        }
        // The tiled dequants too, where they apply.
        if n % 8 == 0 && !layer.has_g_idx() {
            let mut y = Tensor::full(&gpu.stream, f16::NAN, &[k, n]).unwrap();
            let tiled = match layer.format() {
                QuantFormat::Gptq(ZeroStyle::MinusOne) => Some(
                    gpu.quant
                        .gptq_dequant
                        .launch(&gpu.stream, quant::GptqDequantArgs { w: &w, y: &mut y }),
                ),
                QuantFormat::Awq => Some(
                    gpu.quant
                        .awq_dequant
                        .launch(&gpu.stream, quant::AwqDequantArgs { w: &w, y: &mut y }),
                ),
                _ => None,
            };
            if let Some(launched) = tiled {
                launched.unwrap();
                let got = y.to_host(&gpu.stream).unwrap();
                assert!(
                    got.iter()
                        .zip(&want)
                        .all(|(a, b)| a.to_bits() == b.to_bits()),
                    "{writer:?} K={k} N={n} G={g}: the tiled dequant differs"
                );
            }
        }
    }
}

fn w_format(format: &QuantFormat, g_idx: bool) -> String {
    format!("{format}{}", if g_idx { " with g_idx" } else { "" })
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn loaded_checkpoints_run_the_gemv() {
    let gpu = setup();
    for (i, &(writer, k, n, g, sym, zeros_of_0, desc_act)) in CASES.iter().enumerate() {
        let intended = Intended::new(k, n, g, 200 + i as u64, sym, zeros_of_0, desc_act);
        let dir = tempfile::tempdir().unwrap();
        write_checkpoint(dir.path(), &intended, writer);
        let ckpt = Checkpoint::open(dir.path()).unwrap();
        let w = ckpt
            .layer(PREFIX)
            .unwrap()
            .upload::<f16>(&gpu.stream)
            .unwrap();
        let weights = intended.weights();
        for m in [1, 3] {
            let xh: Vec<f16> = lcg(7 + m as u64).take(m * k).map(f16::from_f32).collect();
            let x = Tensor::from_host(&gpu.stream, &xh, &[m, k]).unwrap();
            let mut y = Tensor::full(&gpu.stream, f16::NAN, &[m, n]).unwrap();
            let fast_unfit = matches!(w.format(), QuantFormat::Gptq(ZeroStyle::MinusOne))
                && w.g_idx().is_none()
                && k % 8 != 0;
            let launched = gemv(&gpu, &x, &w, &mut y);
            if fast_unfit {
                common::assert_refused_by(launched, "gptq_gemv", &["K % 8 == 0"]);
                let untouched = y.to_host(&gpu.stream).unwrap();
                assert!(
                    untouched.iter().all(|v| v.is_nan()),
                    "the refused launch wrote y"
                );
                continue;
            }
            launched.unwrap();
            let got = y.to_host(&gpu.stream).unwrap();
            for r in 0..m {
                for c in 0..n {
                    let (mut want, mut norm) = (0f64, 0f64);
                    for kk in 0..k {
                        let p = f64::from(xh[r * k + kk]) * f64::from(weights[kk * n + c]);
                        want += p;
                        norm += p * p;
                    }
                    let got = f64::from(got[r * n + c]);
                    // gptq_gemv sums 8 products a lane in f16 (docs/quantized.md).
                    assert!(
                        (got - want).abs() <= 1e-2 * want.abs() + 1e-2 + 8e-3 * norm.sqrt(),
                        "{writer:?} K={k} N={n} G={g} M={m}: y[{r}, {c}] = {got}, expected {want}"
                    );
                }
            }
        }
        // The bias beside the layer, as stored.
        let bias = ckpt
            .upload_tensor::<f16>(&gpu.stream, &format!("{PREFIX}.bias"))
            .unwrap();
        assert_eq!(bias.shape(), &[n]);
    }
}
