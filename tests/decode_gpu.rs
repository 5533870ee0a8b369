//! The Llama 3 8B decoder layer of examples/decode_layer (specs/decode.ima, paged.ima,
//! quant.ima and gemm.ima chained; GPTQ int4 weights from the runtime's quantizer; a paged
//! KV cache with block tables in random order) against the f64 host reference of
//! examples/decode_layer/reference.rs, which dequantizes the same int4 data: batches of
//! 1, 8 and 32 sequences with contexts from 1 to 4096 and padding rows (slot -1), kernel
//! by kernel and as a replayed `ima::Graph`, in release, checked and deferred modes.
//! `decode_layer_at_b8_context_512` is the one to run under compute-sanitizer memcheck
//! with `--padding` (the configuration).

#[path = "../examples/decode_layer/layer.rs"]
#[allow(dead_code)]
mod layer;
#[path = "../examples/decode_layer/reference.rs"]
mod reference;

use ima::CheckedMode;
use ima::half::f16;
use layer::{Config, HostBatch, HostWeights, Kernels, Weights};

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
