//! Dense products on the GPU against f64: the operands, the reference and the comparison
//! that tests/gemm_gpu.rs and tests/gemm_tma_gpu.rs share.

use super::lcg;
use ima::cudarc::driver::CudaStream;
use ima::half::f16;
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
