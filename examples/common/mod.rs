//! What the attention examples share: the inputs, uploaded, and a CPU reference to compare
//! the GPU's result with.

use ima::cudarc::driver::CudaStream;
use ima::half::f16;
use ima::{Error, Tensor};
use std::sync::Arc;

/// Batch, heads, queries, keys, head size: ragged on purpose.
pub const SHAPE: [usize; 5] = [2, 4, 77, 45, 64];

/// Deterministic values in [-1, 1), exactly representable in f16.
pub fn data(n: usize, seed: u64) -> Vec<f16> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            f16::from_f32(((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0)
        })
        .collect()
}

/// Queries, keys and values on the host and on the device.
pub struct Inputs {
    pub host: [Vec<f16>; 3],
    pub q: Tensor<f16>,
    pub k: Tensor<f16>,
    pub v: Tensor<f16>,
    pub scale: f32,
}

impl Inputs {
    pub fn upload(stream: &Arc<CudaStream>) -> Result<Inputs, Error> {
        let [b, h, s, t, d] = SHAPE;
        let host = [
            data(b * h * s * d, 1),
            data(b * h * t * d, 2),
            data(b * h * t * d, 3),
        ];
        Ok(Inputs {
            q: Tensor::from_host(stream, &host[0], &[b, h, s, d])?,
            k: Tensor::from_host(stream, &host[1], &[b, h, t, d])?,
            v: Tensor::from_host(stream, &host[2], &[b, h, t, d])?,
            host,
            scale: 1.0 / (d as f32).sqrt(),
        })
    }

    /// softmax(q · kᵀ · scale) · v in f64, `[B, H, S, D]`.
    pub fn reference(&self) -> Vec<f64> {
        let [b, h, s, t, d] = SHAPE;
        let [q, k, v] = self
            .host
            .each_ref()
            .map(|x| x.iter().map(|&e| f64::from(e)).collect::<Vec<_>>());
        let mut out = vec![0.0; b * h * s * d];
        for bh in 0..b * h {
            for i in 0..s {
                let row = &q[(bh * s + i) * d..][..d];
                let scores: Vec<f64> = (0..t)
                    .map(|j| {
                        let key = &k[(bh * t + j) * d..][..d];
                        row.iter().zip(key).map(|(a, b)| a * b).sum::<f64>() * f64::from(self.scale)
                    })
                    .collect();
                let max = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let exps: Vec<f64> = scores.iter().map(|x| (x - max).exp()).collect();
                let sum: f64 = exps.iter().sum();
                for (j, e) in exps.iter().enumerate() {
                    for dd in 0..d {
                        out[(bh * s + i) * d + dd] += e / sum * v[(bh * t + j) * d + dd];
                    }
                }
            }
        }
        out
    }
}

/// The largest absolute difference from the reference; an error past `tolerance`.
pub fn compare(got: &[f32], want: &[f64], tolerance: f64) -> Result<f64, String> {
    if got.len() != want.len() {
        return Err(format!("{} outputs, expected {}", got.len(), want.len()));
    }
    let worst = got
        .iter()
        .zip(want)
        .map(|(&g, &w)| {
            if g.is_finite() {
                (f64::from(g) - w).abs()
            } else {
                f64::INFINITY
            }
        })
        .fold(0.0, f64::max);
    if worst > tolerance {
        return Err(format!(
            "worst absolute error {worst:.2e}, past {tolerance:.0e}"
        ));
    }
    Ok(worst)
}
