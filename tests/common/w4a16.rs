//! W4A16 GPTQ GEMMs on the GPU against f64: the operands, the reference and the
//! comparisons (plain, and with SiluAndMul fused) that tests/gemm_gpu.rs's gptq_gemm and
//! tests/gemm_tma_gpu.rs's gptq_gemm_tma share.

use super::dense::{assert_near, f16s, matmul_f64};
use super::{gate_up_columns, lcg, silu_and_mul};
use ima::cudarc::driver::CudaStream;
use ima::half::f16;
use ima::{Error, Launched, QuantTensor, Tensor, ZeroStyle, dequant_reference, quantize_gptq};
use std::sync::Arc;

/// A launch of the kernel under test on x, W and y.
pub type W4a16Launch<'a> =
    dyn Fn(&Tensor<f16>, &QuantTensor<f16>, &mut Tensor<f16>) -> Result<Launched, Error> + 'a;

/// One launch on x `[M, K]` and weights `[K, N]` quantized with group G, into a y `width`
/// columns wide (starting as NaN, so that an element left unwritten fails): x · W in f64
/// with each sum's products' 2-norm (the kernels' B operands are the dequantized weights
/// exactly, each (q - z) times its scale rounded once to f16, as the host reference rounds
/// them), and y.
pub fn w4a16_and_f64(
    stream: &Arc<CudaStream>,
    shape: (usize, usize, usize, usize),
    width: usize,
    launch: &W4a16Launch<'_>,
) -> (Vec<(f64, f64)>, Vec<f16>) {
    w4a16_and_f64_of(stream, &f16s(shape.0 * shape.1, 3), shape, width, launch)
}

/// `w4a16_and_f64` on the given x (`[M, K]`, row-major).
pub fn w4a16_and_f64_of(
    stream: &Arc<CudaStream>,
    xh: &[f16],
    (m, k, n, g): (usize, usize, usize, usize),
    width: usize,
    launch: &W4a16Launch<'_>,
) -> (Vec<(f64, f64)>, Vec<f16>) {
    let x = Tensor::from_host(stream, xh, &[m, k]).unwrap();
    let weights: Vec<f32> = lcg(5).take(k * n).collect();
    let host = quantize_gptq::<f16>(&weights, k, n, g, ZeroStyle::MinusOne, None).unwrap();
    let w = QuantTensor::upload(stream, &host).unwrap();
    let mut y = Tensor::full(stream, f16::NAN, &[m, width]).unwrap();
    let launched = launch(&x, &w, &mut y).unwrap();
    assert!(matches!(launched, Launched::Done { .. }), "{launched:?}");
    let wd = dequant_reference(&host);
    let want = matmul_f64(
        |r, kk| f64::from(xh[r * k + kk]),
        |kk, col| f64::from(wd[kk * n + col]),
        (m, k, n),
    );
    (want, y.to_host(stream).unwrap())
}

/// `name` (the kernel and mode) on each (M, K, N, G) of `shapes`: every element of y within
/// 1e-3 of x · W (see `assert_near`).
pub fn w4a16_matches(
    stream: &Arc<CudaStream>,
    name: &str,
    shapes: &[(usize, usize, usize, usize)],
    launch: &W4a16Launch<'_>,
) {
    w4a16_matches_on(stream, name, shapes, &|m, k| f16s(m * k, 3), launch);
}

/// `w4a16_matches` with x (`[M, K]`, row-major) made by `x(M, K)`.
pub fn w4a16_matches_on(
    stream: &Arc<CudaStream>,
    name: &str,
    shapes: &[(usize, usize, usize, usize)],
    x: &dyn Fn(usize, usize) -> Vec<f16>,
    launch: &W4a16Launch<'_>,
) {
    for &(m, k, n, g) in shapes {
        let (want, got) = w4a16_and_f64_of(stream, &x(m, k), (m, k, n, g), n, launch);
        for (e, (got, &(want, norm))) in got.iter().zip(&want).enumerate() {
            let what = || format!("{name} M={m} K={k} N={n} G={g}: y[{}, {}]", e / n, e % n);
            assert_near(f64::from(*got), want, norm, 1e-3, &what);
        }
    }
}

/// How far a fused gate/up output may land from silu(g) · u: each of g and u may be off by
/// `rel` of its value, `normwise` of its products' 2-norm and `abs`, which silu'(g) (below
/// 1.1) and silu(g) carry into the product; the output's own rounding adds `rel` of it and
/// `out_abs`.
pub struct FusedTolerance {
    pub rel: f64,
    pub normwise: f64,
    pub abs: f64,
    pub out_abs: f64,
}

/// The tensor-core kernels (f32 sums): 0.1% of each product's value and 2-norm.
pub const MMA_FUSED: FusedTolerance = FusedTolerance {
    rel: 1e-3,
    normwise: 1e-3,
    abs: 1e-6,
    out_abs: 1e-4,
};

/// The GEMVs, whose whole tiles sum 8 products a lane in f16 (the accessor's `dot_tile`):
/// 1% of each product's value (and 0.01) and 0.8% of its 2-norm.
pub const GEMV_FUSED: FusedTolerance = FusedTolerance {
    rel: 1e-2,
    normwise: 8e-3,
    abs: 1e-2,
    out_abs: 0.0,
};

/// `name` with y half as wide as W: SiluAndMul fused, W's columns gate's and up's in turn
/// by `unit` columns, against silu(g) · u of the f64 products, within `tol`.
pub fn w4a16_fused_matches(
    stream: &Arc<CudaStream>,
    name: &str,
    shapes: &[(usize, usize, usize, usize)],
    unit: usize,
    tol: &FusedTolerance,
    launch: &W4a16Launch<'_>,
) {
    for &(m, k, n, g) in shapes {
        let (gu, got) = w4a16_and_f64(stream, (m, k, n, g), n / 2, launch);
        for r in 0..m {
            for j in 0..n / 2 {
                let (gate, up) = gate_up_columns(j, unit);
                let ((gv, gn), (uv, un)) = (gu[r * n + gate], gu[r * n + up]);
                let off = |v: f64, norm: f64| tol.rel * v.abs() + tol.normwise * norm + tol.abs;
                let (want, carried) = silu_and_mul(gv, uv, off(gv, gn), off(uv, un));
                let bound = carried + tol.rel * want.abs() + tol.out_abs;
                let y_ = f64::from(got[r * n / 2 + j]);
                assert!(
                    (y_ - want).abs() <= bound,
                    "{name} fused M={m} K={k} N={n} G={g}: y[{r}, {j}] = {y_}, expected {want}"
                );
            }
        }
    }
}
