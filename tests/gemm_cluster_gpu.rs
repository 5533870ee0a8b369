//! specs/gemm_cluster.ima's W4A16 products, whose K is split across the blocks of a
//! thread-block cluster (compute capability 9.0), end to end on a GPU through the committed
//! generated stub, against an f64 reference, in release and in checked mode (where nothing
//! may be reported): the decode layer's four projections at 32 rows, few rows, the largest
//! K each kernel takes, more tiles than clusters (the clusters loop over them, their sums
//! in alternate buffers), and SiluAndMul fused; and the two with add_rms_norm fused in
//! front, against the norm in f64 (its rounding to f16 as specs/decode.ima's add_rms_norm
//! rounds) and the same product.

#[allow(dead_code)]
mod gemm_cluster {
    include!("out/specs/gemm_cluster.rs");
}

mod common;

use common::dense::f16s;
use common::w4a16::{
    MMA_FUSED, w4a16_fused_matches, w4a16_fused_matches_on, w4a16_matches, w4a16_matches_on,
};
use gemm_cluster::*;
use ima::cudarc::driver::{CudaContext, CudaStream};
use ima::half::f16;
use ima::{Error, Launched, QuantTensor, Tensor};
use std::cell::RefCell;
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
/// 40 tiles on 32 clusters (5120 columns), plain and fused.
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

/// The decode layer's QKV at 32 rows; one row at the largest K; 34 tiles on 32 clusters
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

/// The arguments of a kernel with add_rms_norm fused in front but w and y: h, residual,
/// residual_out and gamma.
struct Norm {
    h: Tensor<f16>,
    residual: Tensor<f16>,
    residual_out: Tensor<f16>,
    gamma: Tensor<f16>,
}

/// One launch of a kernel with add_rms_norm fused, on the norm's arguments, W, y and eps.
type NormLaunch = fn(
    &Kernels,
    &Arc<CudaStream>,
    &mut Norm,
    &QuantTensor<f16>,
    &mut Tensor<f16>,
    f32,
) -> Result<Launched, Error>;

const EPS: f32 = 1e-5;

/// A kernel with add_rms_norm fused, in both modes, on `plain` and `fused` shapes: h and
/// residual of M x K (seeds 3 and 7), gamma of K (seed 9); residual_out must be h +
/// residual rounded to f16, exactly; y must be x · W (or its SiluAndMul) for x the f64
/// norm of that sum, weighted by gamma and rounded to f16 (the kernel's rsqrtf and f32
/// sums may move an element of x by one f16 step, which the products' tolerance covers).
fn normed_matches(name: &str, plain: &[Shape], fused: &[Shape], launch: NormLaunch) {
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.new_stream().unwrap();
    let kernels = Kernels::load(&ctx).unwrap();
    let norm: RefCell<Option<Norm>> = RefCell::new(None);
    // x as the host computes it, the norm's arguments uploaded for the launch.
    let x = |m: usize, k: usize| {
        let (h, r, gamma) = (f16s(m * k, 3), f16s(m * k, 7), f16s(k, 9));
        let sum: Vec<f16> = h
            .iter()
            .zip(&r)
            .map(|(a, b)| f16::from_f32(a.to_f32() + b.to_f32()))
            .collect();
        let mut x = vec![f16::ZERO; m * k];
        for row in 0..m {
            let sum = &sum[row * k..(row + 1) * k];
            let ss: f64 = sum.iter().map(|v| f64::from(*v).powi(2)).sum();
            let inv = 1.0 / (ss / k as f64 + f64::from(EPS)).sqrt();
            for (c, v) in sum.iter().enumerate() {
                x[row * k + c] = f16::from_f64(f64::from(*v) * inv * f64::from(gamma[c]));
            }
        }
        *norm.borrow_mut() = Some(Norm {
            h: Tensor::from_host(&stream, &h, &[m, k]).unwrap(),
            residual: Tensor::from_host(&stream, &r, &[m, k]).unwrap(),
            residual_out: Tensor::full(&stream, f16::NAN, &[m, k]).unwrap(),
            gamma: Tensor::from_host(&stream, &gamma, &[k]).unwrap(),
        });
        x
    };
    // The launch takes its x from the norm, then residual_out is checked against the sum.
    let run = |_: &Tensor<f16>, w: &QuantTensor<f16>, y: &mut Tensor<f16>| {
        let mut guard = norm.borrow_mut();
        let n = guard.as_mut().unwrap();
        let launched = launch(&kernels, &stream, n, w, y, EPS)?;
        let (h, r) = (n.h.to_host(&stream)?, n.residual.to_host(&stream)?);
        let out = n.residual_out.to_host(&stream)?;
        for (i, ((a, b), o)) in h.iter().zip(&r).zip(&out).enumerate() {
            let want = f16::from_f32(a.to_f32() + b.to_f32());
            assert_eq!(
                o.to_bits(),
                want.to_bits(),
                "{name}: residual_out[{i}] = {o}, expected {want}"
            );
        }
        Ok(launched)
    };
    for checked in [false, true] {
        kernels.set_checked(checked);
        let name = format!("{name} checked={checked}");
        w4a16_matches_on(&stream, &name, plain, &x, &run);
        let unit = GATE_UP_UNIT as usize;
        w4a16_fused_matches_on(&stream, &name, fused, &x, unit, &MMA_FUSED, &run);
    }
}

/// The decode layer's first norm and QKV projection at 32 rows; 3 rows with 34 tiles on
/// 32 clusters; SiluAndMul fused at 5 rows.
#[test]
#[ignore = "needs a CUDA GPU"]
fn rms_gptq_gemm_cl4_n192_matches_an_f64_norm_and_product() {
    normed_matches(
        "rms_gptq_gemm_cl4_n192",
        &[(32, 4096, 6144, 128), (3, 2048, 6528, 128)],
        &[(5, 4096, 768, 128)],
        |k, s, n, w, y, eps| {
            let args = RmsGptqGemmCl4N192Args {
                h: &n.h,
                residual: &n.residual,
                residual_out: &mut n.residual_out,
                gamma: &n.gamma,
                w,
                y,
                eps,
            };
            k.rms_gptq_gemm_cl4_n192.launch(s, args)
        },
    );
}

/// The decode layer's second norm and gate/up projection (SiluAndMul fused) at 32 rows,
/// 36 tiles on 16 clusters (9216 columns); one row at K = 2048; plain at 7 rows.
#[test]
#[ignore = "needs a CUDA GPU"]
fn rms_gptq_gemm_cl8_n256_matches_an_f64_norm_and_product() {
    normed_matches(
        "rms_gptq_gemm_cl8_n256",
        &[(7, 4096, 1024, 128)],
        &[(32, 4096, 9216, 128), (1, 2048, 512, 128)],
        |k, s, n, w, y, eps| {
            let args = RmsGptqGemmCl8N256Args {
                h: &n.h,
                residual: &n.residual,
                residual_out: &mut n.residual_out,
                gamma: &n.gamma,
                w,
                y,
                eps,
            };
            k.rms_gptq_gemm_cl8_n256.launch(s, args)
        },
    );
}
