//! specs/gemm_cluster.ima's W4A16 products, whose K is split across the blocks of a
//! thread-block cluster (compute capability 9.0), end to end on a GPU through the committed
//! generated stub, against an f64 reference, in release and in checked mode (where nothing
//! may be reported): the decode layer's four projections at 32 rows, few rows, the largest
//! K each kernel takes, more tiles than clusters (the clusters loop over them, their sums
//! in alternate buffers), and SiluAndMul fused.

#[allow(dead_code)]
mod gemm_cluster {
    include!("out/specs/gemm_cluster.rs");
}

mod common;

use common::w4a16::{MMA_FUSED, w4a16_fused_matches, w4a16_matches};
use gemm_cluster::*;
use ima::cudarc::driver::{CudaContext, CudaStream};
use ima::half::f16;
use ima::{Error, Launched, QuantTensor, Tensor};
use std::sync::Arc;

/// One kernel's launch on x, W and y.
type Launch = fn(
    &Kernels,
    &Arc<CudaStream>,
    &Tensor<f16>,
    &QuantTensor<f16>,
    &mut Tensor<f16>,
) -> Result<Launched, Error>;

/// (M, K, N, G).
type Shape = (usize, usize, usize, usize);

/// A kernel in both modes on `plain` shapes (y as wide as W) and `fused` ones (y half as
/// wide: SiluAndMul fused, gate and up in alternate units of GATE_UP_UNIT columns).
fn matches(name: &str, plain: &[Shape], fused: &[Shape], launch: Launch) {
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.new_stream().unwrap();
    let kernels = Kernels::load(&ctx).unwrap();
    let run = |x: &Tensor<f16>, w: &QuantTensor<f16>, y: &mut Tensor<f16>| {
        launch(&kernels, &stream, x, w, y)
    };
    for checked in [false, true] {
        kernels.set_checked(checked);
        let name = format!("{name} checked={checked}");
        w4a16_matches(&stream, &name, plain, &run);
        let unit = GATE_UP_UNIT as usize;
        w4a16_fused_matches(&stream, &name, fused, unit, &MMA_FUSED, &run);
    }
}

/// The decode layer's O at 32 rows; one row and one tile; 7 rows at the largest K (8192);
/// 40 tiles on 33 clusters (5120 columns), plain and fused.
#[test]
#[ignore = "needs a CUDA GPU"]
fn gptq_gemm_cl4_n128_matches_f64_reference() {
    matches(
        "gptq_gemm_cl4_n128",
        &[
            (32, 4096, 4096, 128),
            (1, 2048, 128, 128),
            (7, 8192, 256, 128),
            (5, 2048, 5120, 128),
        ],
        &[(32, 2048, 1024, 128), (3, 2048, 5120, 128)],
        |k, s, x, w, y| {
            k.gptq_gemm_cl4_n128
                .launch(s, GptqGemmCl4N128Args { x, w, y })
        },
    );
}

/// The decode layer's QKV at 32 rows; one row at the largest K; 34 tiles on 33 clusters
/// (6528 columns), plain and fused.
#[test]
#[ignore = "needs a CUDA GPU"]
fn gptq_gemm_cl4_n192_matches_f64_reference() {
    matches(
        "gptq_gemm_cl4_n192",
        &[
            (32, 4096, 6144, 128),
            (1, 8192, 192, 128),
            (9, 2048, 6528, 128),
        ],
        &[(32, 2048, 384, 128), (2, 2048, 6528, 128)],
        |k, s, x, w, y| {
            k.gptq_gemm_cl4_n192
                .launch(s, GptqGemmCl4N192Args { x, w, y })
        },
    );
}

/// The decode layer's down at 32 rows; one row at the largest K (16384); 17 tiles on 16
/// clusters (4352 columns), plain and fused.
#[test]
#[ignore = "needs a CUDA GPU"]
fn gptq_gemm_cl8_n256_matches_f64_reference() {
    matches(
        "gptq_gemm_cl8_n256",
        &[
            (32, 14336, 4096, 128),
            (1, 16384, 256, 128),
            (9, 2048, 4352, 128),
        ],
        &[(32, 2048, 512, 128), (4, 2048, 4352, 128)],
        |k, s, x, w, y| {
            k.gptq_gemm_cl8_n256
                .launch(s, GptqGemmCl8N256Args { x, w, y })
        },
    );
}

/// The decode layer's gate/up shape at 32 rows, fused, with 72 tiles on 66 clusters
/// (9216 columns; the layer's 28672 take an f64 reference too long to be worth it); one
/// row and one tile; 5 rows at the largest K (4096), plain.
#[test]
#[ignore = "needs a CUDA GPU"]
fn gptq_gemm_cl2_n128_matches_f64_reference() {
    matches(
        "gptq_gemm_cl2_n128",
        &[
            (1, 1024, 128, 128),
            (5, 4096, 9216, 128),
            (32, 1024, 256, 128),
        ],
        &[(32, 4096, 9216, 128), (1, 1024, 128, 128)],
        |k, s, x, w, y| {
            k.gptq_gemm_cl2_n128
                .launch(s, GptqGemmCl2N128Args { x, w, y })
        },
    );
}
