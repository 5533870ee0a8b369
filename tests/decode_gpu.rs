//! The Llama 3 8B decoder layer of examples/decode_layer (specs/decode.ima, quant.ima,
//! paged.ima and gemm.ima chained; GPTQ int4 weights from the runtime's quantizer; a paged
//! KV cache with block tables in random order) against the f64 host reference of
//! examples/decode_layer/reference.rs, which dequantizes the same int4 data: batches of
//! 1, 8 and 32 sequences with contexts from 1 to 4096 and padding rows (slot -1), kernel
//! by kernel and as a replayed `ima::Graph`, in release, checked and deferred modes.
//! `decode_layer_at_b8_context_512` is the one to run under compute-sanitizer memcheck
//! with `--padding` (the configuration). Two layers chained in one graph, as a
//! model's step runs them, are checked against the reference applied twice. The layer's
//! narrow GEMVs, gptq_gemv_narrow and gptq_gemv_narrow12, are also checked alone on shapes
//! the layer never has (quant's gptq_gemv in tests/quant_gpu.rs).

mod common;
#[path = "../examples/decode_layer/layer.rs"]
#[allow(dead_code)]
mod layer;
#[path = "../examples/decode_layer/reference.rs"]
mod reference;

use common::w4a16::{GEMV_FUSED, W4a16Launch, w4a16_and_f64, w4a16_fused_matches};
use ima::cudarc::driver::CudaStream;
use ima::half::f16;
use ima::{CheckedMode, Graph, Tensor};
use layer::{Config, HostBatch, HostWeights, Kernels, Lcg, State, Weights, decode};
use std::sync::Arc;

/// |imac - reference| <= TOLERANCE * (1 + |reference|) for every output. The kernels
/// accumulate in f32 in another order than the f64 reference, and paged attention rounds
/// its softmax weights to f16 before the second product, so an intermediate that lies
/// near an f16 rounding boundary can round the other way and carry one f16 step (about
/// 1e-3 relative) through the next projection.
const TOLERANCE: f64 = 2e-2;

fn assert_close(got: &[f16], want: &[f16], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let (g, w) = (f64::from(g), f64::from(w));
        assert!(
            (g - w).abs() <= TOLERANCE * (1.0 + w.abs()),
            "{what}: element {i} is {g}, the reference {w}"
        );
    }
}

/// Every batch in every mode, kernel by kernel and as a graph (wait mode: kernel by
/// kernel only, as a graph's nodes report at `check`).
fn matches_reference(batches: &[Vec<i32>]) {
    let ctx = ima::context(0).unwrap();
    let stream = ctx.new_stream().unwrap();
    let kernels = Kernels::load(&ctx).unwrap();
    let host = HostWeights::random(Config::LLAMA_8B, 1).unwrap();
    let w = Weights::upload(&stream, &host).unwrap();
    for lens in batches {
        let batch = HostBatch::new(&host.config, lens, 7);
        let want = reference::reference(&host, &batch);
        for (mode, graphs) in [
            (CheckedMode::Off, &[false, true][..]),
            (CheckedMode::Wait, &[false][..]),
            (CheckedMode::Deferred, &[false, true][..]),
        ] {
            kernels.set_checked_mode(mode);
            for &graphed in graphs {
                let s = kernels.step(&stream, &w, &batch, graphed).unwrap();
                let out = s.out.to_host(&stream).unwrap();
                let residual = s.residual.to_host(&stream).unwrap();
                let what = format!("B={} lens {lens:?}, {mode:?}, graph {graphed}", lens.len());
                assert_close(&out, &want.out, &format!("{what}: out"));
                assert_close(&residual, &want.residual, &format!("{what}: residual"));
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn decode_layer_matches_the_reference_for_b1_b8_b32_and_contexts_to_4096() {
    matches_reference(&layer::ragged_batches());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn decode_layer_at_b8_context_512() {
    matches_reference(&[vec![512, 512, 512, 512, 512, 512, 512, 0]]);
}

/// Two layers in one graph (`Kernels::capture_stack`), as a model's step runs them, each
/// with weights (other random values) and a KV cache of its own, the second reading the
/// first's `out` and updating its `residual`: against the host reference applied twice, in
/// release and deferred modes, at B = 8 with ragged contexts and a padding row. A graph
/// that bound the first layer's weights, cache or output where the second's belong would
/// give the second layer's output of other inputs.
#[test]
#[ignore = "needs a CUDA GPU"]
fn two_layers_in_one_graph_match_the_reference_applied_twice() {
    let ctx = ima::context(0).unwrap();
    let stream = ctx.new_stream().unwrap();
    let kernels = Kernels::load(&ctx).unwrap();
    let hosts = [1, 2].map(|seed| HostWeights::random(Config::LLAMA_8B, seed).unwrap());
    let weights = hosts
        .each_ref()
        .map(|h| Weights::upload(&stream, h).unwrap());
    let lens = [1, 17, 4096, 513, 1000, 16, 2048, 0];
    let batch = HostBatch::new(&hosts[0].config, &lens, 7);
    let first = reference::reference(&hosts[0], &batch);
    let second_in = HostBatch {
        hidden: first.out,
        residual: first.residual,
        ..batch.clone()
    };
    let want = reference::reference(&hosts[1], &second_in);
    for mode in [CheckedMode::Off, CheckedMode::Deferred] {
        kernels.set_checked_mode(mode);
        let mut states = [0, 1].map(|_| State::upload(&stream, &hosts[0].config, &batch).unwrap());
        {
            let mut graph = Graph::new(&stream).unwrap();
            let layers = weights.iter().zip(states.iter_mut());
            kernels.capture_stack(&mut graph, layers).unwrap();
            graph.replay(&stream).unwrap();
            graph.check().unwrap();
        }
        let out = states[1].out.to_host(&stream).unwrap();
        let residual = states[0].residual.to_host(&stream).unwrap();
        assert_close(&out, &want.out, &format!("two layers, {mode:?}: out"));
        assert_close(
            &residual,
            &want.residual,
            &format!("two layers, {mode:?}: residual"),
        );
    }
}

/// decode.ima's narrow GEMVs, each by name with its launch: gptq_gemv_narrow and the same
/// body in blocks of 12 warps, gptq_gemv_narrow12.
fn narrow_gemvs<'a>(
    kernels: &'a decode::Kernels,
    stream: &'a Arc<CudaStream>,
) -> [(&'static str, Box<W4a16Launch<'a>>); 2] {
    [
        (
            "gptq_gemv_narrow",
            Box::new(|x, w, y| {
                kernels
                    .gptq_gemv_narrow
                    .launch(stream, decode::GptqGemvNarrowArgs { x, w, y })
            }),
        ),
        (
            "gptq_gemv_narrow12",
            Box::new(|x, w, y| {
                kernels
                    .gptq_gemv_narrow12
                    .launch(stream, decode::GptqGemvNarrow12Args { x, w, y })
            }),
        ),
    ]
}

/// Each narrow GEMV against y = x · dequant(W) in f64, in release and checked modes, on
/// (M, K, N, G): whole 32-row tiles then 8-row ones (K = 328); 8-row tiles only, across
/// groups (G = 20) or in groups too small for a whole tile (G = 24); several tiles a
/// thread and a last block of 8 of its 16 columns (K = 4104, N = 136); M > 1 four rows at
/// a time, in two passes for M = 5 and 8. Its whole tiles sum 8 products a lane in f16
/// (the accessor's `dot_tile`): allowed 0.8% of the products' 2-norm, beside 1% of y.
#[test]
#[ignore = "needs a CUDA GPU"]
fn the_narrow_gemvs_match_an_f64_reference_on_ragged_shapes() {
    let ctx = ima::context(0).unwrap();
    let stream = ctx.new_stream().unwrap();
    let kernels = decode::Kernels::load(&ctx).unwrap();
    for checked in [false, true] {
        kernels.set_checked(checked);
        for (name, launch) in narrow_gemvs(&kernels, &stream) {
            for (m, k, n, g) in [
                (1, 256, 64, 128),
                (1, 328, 40, 128),
                (1, 104, 16, 20),
                (1, 192, 24, 24),
                (1, 4104, 136, 128),
                (3, 328, 40, 128),
                (5, 104, 16, 20),
                (8, 1048, 72, 24),
            ] {
                let (want, got) = w4a16_and_f64(&stream, (m, k, n, g), n, &*launch);
                for (i, (&(v, norm), &y)) in want.iter().zip(&got).enumerate() {
                    let y = f64::from(y);
                    assert!(
                        (y - v).abs() <= 1e-2 * v.abs() + 1e-2 + 8e-3 * norm,
                        "{name} M={m} K={k} N={n} G={g} checked={checked}: y[{}, {}] = {y}, expected {v}",
                        i / n,
                        i % n
                    );
                }
            }
        }
    }
}

/// Each narrow GEMV with y half as wide as W: SiluAndMul fused, W's columns gate's and
/// up's in turn by GATE_UP_UNIT, against silu(g) · u of the f64 products within the
/// GEMVs' tolerance, release and checked, on (M, K, N, G) with N a multiple of two units:
/// whole tiles then 8-row ones; groups of 20; several tiles a thread (K = 4104); M of 5.
#[test]
#[ignore = "needs a CUDA GPU"]
fn the_narrow_gemvs_fuse_silu_and_mul_when_y_is_half_as_wide() {
    let ctx = ima::context(0).unwrap();
    let stream = ctx.new_stream().unwrap();
    let kernels = decode::Kernels::load(&ctx).unwrap();
    for checked in [false, true] {
        kernels.set_checked(checked);
        for (name, launch) in narrow_gemvs(&kernels, &stream) {
            w4a16_fused_matches(
                &stream,
                &format!("{name} checked={checked}"),
                &[
                    (1, 328, 48, 128),
                    (1, 104, 16, 20),
                    (1, 4104, 144, 128),
                    (5, 104, 32, 20),
                ],
                decode::GATE_UP_UNIT as usize,
                &GEMV_FUSED,
                &*launch,
            );
        }
    }
}

/// add_rms_norm against f64, release and checked, on (N, D): one vector a row (D = 8);
/// the layer's width (4096, all of it in the vectors the threads keep in registers); one
/// vector past them (D = 4104), and many (D = 20488), read again in the second pass. residual + x of two f16 values is exact in f32, so the stored residual must
/// equal the f64 sum rounded to f16; y may differ from the f64 normalisation by its own
/// rounding and f32's (0.2% beside 1e-3).
#[test]
#[ignore = "needs a CUDA GPU"]
fn add_rms_norm_matches_an_f64_reference() {
    let ctx = ima::context(0).unwrap();
    let stream = ctx.new_stream().unwrap();
    let kernels = decode::Kernels::load(&ctx).unwrap();
    let eps = 1e-5f32;
    for checked in [false, true] {
        kernels.set_checked(checked);
        for (n, d) in [(1, 8), (3, 4096), (2, 4104), (1, 20488)] {
            let xh = Lcg::new(7).f16s(n * d, 1.0);
            let rh = Lcg::new(8).f16s(n * d, 2.0);
            let wh = Lcg::new(9).f16s(d, 1.0);
            let x = Tensor::from_host(&stream, &xh, &[n, d]).unwrap();
            let mut residual = Tensor::from_host(&stream, &rh, &[n, d]).unwrap();
            let w = Tensor::from_host(&stream, &wh, &[d]).unwrap();
            let mut y = Tensor::full(&stream, f16::NAN, &[n, d]).unwrap();
            kernels
                .add_rms_norm
                .launch(
                    &stream,
                    decode::AddRmsNormArgs {
                        x: &x,
                        residual: &mut residual,
                        w: &w,
                        y: &mut y,
                        eps,
                    },
                )
                .unwrap();
            let (got_r, got_y) = (
                residual.to_host(&stream).unwrap(),
                y.to_host(&stream).unwrap(),
            );
            for row in 0..n {
                let sums: Vec<f16> = (0..d)
                    .map(|i| {
                        let at = row * d + i;
                        f16::from_f64(f64::from(xh[at]) + f64::from(rh[at]))
                    })
                    .collect();
                let ss: f64 = sums.iter().map(|&v| f64::from(v) * f64::from(v)).sum();
                let inv = 1.0 / (ss / d as f64 + f64::from(eps)).sqrt();
                for i in 0..d {
                    let at = row * d + i;
                    let what = format!("add_rms_norm N={n} D={d} checked={checked}, [{row}, {i}]");
                    assert_eq!(got_r[at].to_bits(), sums[i].to_bits(), "{what}: residual");
                    let want = f64::from(sums[i]) * inv * f64::from(wh[i]);
                    let got = f64::from(got_y[at]);
                    assert!(
                        (got - want).abs() <= 2e-3 * want.abs() + 1e-3,
                        "{what}: y = {got}, expected {want}"
                    );
                }
            }
        }
    }
    kernels.set_checked(false);
}
