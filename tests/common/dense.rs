//! Dense products on the GPU against f64: the operands, the reference and the comparisons
//! (GEMMs, attention scores) that tests/gemm_gpu.rs and tests/gemm_tma_gpu.rs share.

use super::lcg;
use ima::cudarc::driver::CudaStream;
use ima::half::{bf16, f16};
use ima::{Error, Launched, Tensor};
use std::sync::Arc;

/// Deterministic values in [-1, 1), exactly representable in f16.
pub fn f16s(n: usize, seed: u64) -> Vec<f16> {
    lcg(seed).take(n).map(f16::from_f32).collect()
}

/// The element `got` of `what` against the f64 value `want`: within `rel` of it, plus
/// `rel` times `scale`, the 2-norm of its products (the scale of a sum's rounding error,
/// where the sum itself is small).
pub fn assert_near(got: f64, want: f64, scale: f64, rel: f64, what: &dyn Fn() -> String) {
    assert!(got.is_finite(), "{} was not written: {got}", what());
    assert!(
        (got - want).abs() <= rel * (want.abs() + scale) + 1e-6,
        "{} = {got}, expected {want} (products' 2-norm {scale})",
        what()
    );
}

/// c[m, n] = the sum over k of a(m, k) * b(k, n), in f64, with each sum's products'
/// 2-norm.
pub fn matmul_f64(
    a: impl Fn(usize, usize) -> f64,
    b: impl Fn(usize, usize) -> f64,
    (m, k, n): (usize, usize, usize),
) -> Vec<(f64, f64)> {
    let mut out = vec![(0f64, 0f64); m * n];
    for r in 0..m {
        for kk in 0..k {
            let av = a(r, kk);
            for c in 0..n {
                let p = av * b(kk, c);
                out[r * n + c].0 += p;
                out[r * n + c].1 += p * p;
            }
        }
    }
    out.into_iter().map(|(s, q)| (s, q.sqrt())).collect()
}

/// One GEMM of `name` through `launch(a, b, c)` on host operands `ab`, against the f64
/// product, each element within `rel` (see `assert_near`); c starts as `nan`, so an element
/// left unwritten fails.
pub type GemmLaunch<'a, T> =
    dyn Fn(&Tensor<T>, &Tensor<T>, &mut Tensor<T>) -> Result<Launched, Error> + 'a;
pub fn gemm_matches<T: ima::Element + Into<f64> + Copy>(
    stream: &Arc<CudaStream>,
    name: &str,
    (ah, bh): (&[T], &[T]),
    (m, k, n): (usize, usize, usize),
    rel: f64,
    nan: T,
    launch: &GemmLaunch<'_, T>,
) {
    let a = Tensor::from_host(stream, ah, &[m, k]).unwrap();
    let b = Tensor::from_host(stream, bh, &[k, n]).unwrap();
    let mut c = Tensor::full(stream, nan, &[m, n]).unwrap();
    let launched = launch(&a, &b, &mut c).unwrap();
    assert!(matches!(launched, Launched::Done { .. }), "{launched:?}");
    let want = matmul_f64(
        |r, kk| ah[r * k + kk].into(),
        |kk, col| bh[kk * n + col].into(),
        (m, k, n),
    );
    for (e, (got, &(want, norm))) in c.to_host(stream).unwrap().iter().zip(&want).enumerate() {
        let what = || format!("{name} {m}x{k}x{n}: c[{}, {}]", e / n, e % n);
        assert_near((*got).into(), want, norm, rel, &what);
    }
}

/// Shapes [B, H, S, T, D] for the attention-score kernels: partial tiles each way (the
/// mma.sync kernels take 128 x 128 and D 64 a stage, the TMA ones 128 x 256), with several
/// heads, so that a tile past S or T must not reach the next head's rows; several key
/// tiles, the last partial, and D of one partial chunk; D of three chunks, the last
/// partial (136 = 64 + 64 + 8); D = 0, whose scores are the empty sums, zeros, written
/// apart from the steps (there are none).
pub const SCORE_SHAPES: [[usize; 5]; 4] = [
    [2, 3, 77, 200, 64],
    [1, 2, 130, 264, 40],
    [1, 1, 129, 136, 136],
    [2, 3, 130, 264, 0],
];

/// One launch of an attention-score kernel pair on q `[B, H, S, D]` and k `[B, H, T, D]`:
/// `launch(q, k, o16, o32)` fills scores with f16 and f32 out, and both are held to the f64
/// product times `scale`: f16 within one rounding (2^-11) of an f32 sum, f32 within the
/// sum's own. The outputs start as NaN, so an element left unwritten fails.
pub type ScoresLaunch<'a> = dyn Fn(&Tensor<f16>, &Tensor<f16>, &mut Tensor<f16>, &mut Tensor<f32>) -> Result<(), Error>
    + 'a;
pub fn scores_match(
    stream: &Arc<CudaStream>,
    what: &str,
    [b, h, s, t, d]: [usize; 5],
    scale: f32,
    launch: &ScoresLaunch<'_>,
) {
    let qh = f16s(b * h * s * d, 1);
    let kh = f16s(b * h * t * d, 2);
    let q = Tensor::from_host(stream, &qh, &[b, h, s, d]).unwrap();
    let k = Tensor::from_host(stream, &kh, &[b, h, t, d]).unwrap();
    let mut o16 = Tensor::full(stream, f16::NAN, &[b, h, s, t]).unwrap();
    let mut o32 = Tensor::full(stream, f32::NAN, &[b, h, s, t]).unwrap();
    launch(&q, &k, &mut o16, &mut o32).unwrap();
    let (got16, got32) = (o16.to_host(stream).unwrap(), o32.to_host(stream).unwrap());
    for bh in 0..b * h {
        let want = matmul_f64(
            |i, dd| f64::from(qh[(bh * s + i) * d + dd]),
            |dd, j| f64::from(kh[(bh * t + j) * d + dd]),
            (s, d, t),
        );
        for (e, &(sum, norm)) in want.iter().enumerate() {
            let (want, norm) = (sum * f64::from(scale), norm * f64::from(scale));
            let at = bh * s * t + e;
            let name = || format!("{what} {b}x{h}x{s}x{t}x{d}: o[{bh}, {}, {}]", e / t, e % t);
            assert_near(f64::from(got16[at]), want, norm, 1e-3, &name);
            assert_near(f64::from(got32[at]), want, norm, 1e-5, &name);
        }
    }
}

/// A GEMM in f16 and in bf16 on the same shape, each against the f64 product within one
/// rounding of its output (2^-11 and 2^-8): operands from seeds 3 and 4, the bf16 ones the
/// f16 values rounded. `names` label the failures.
pub fn gemm_pair_matches(
    stream: &Arc<CudaStream>,
    names: (&str, &str),
    (m, k, n): (usize, usize, usize),
    f16_launch: &GemmLaunch<'_, f16>,
    bf16_launch: &GemmLaunch<'_, bf16>,
) {
    let (ah, bh) = (f16s(m * k, 3), f16s(k * n, 4));
    gemm_matches::<f16>(
        stream,
        names.0,
        (&ah, &bh),
        (m, k, n),
        1e-3,
        f16::NAN,
        f16_launch,
    );
    let a16: Vec<bf16> = ah.iter().map(|v| bf16::from_f32(v.to_f32())).collect();
    let b16: Vec<bf16> = bh.iter().map(|v| bf16::from_f32(v.to_f32())).collect();
    gemm_matches::<bf16>(
        stream,
        names.1,
        (&a16, &b16),
        (m, k, n),
        8e-3,
        bf16::NAN,
        bf16_launch,
    );
}
