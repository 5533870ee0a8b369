//! The layer on the host in f64, from the same int4 data (dequantized by the runtime's
//! host reference), rounding to f16 where the kernels store f16: the oracle of
//! tests/decode_gpu.rs and of `decode_layer check`.

use ima::dequant_reference;
use ima::half::f16;

use crate::layer::{Config, GATE_UP_UNIT, HostBatch, HostWeights, attention_scale};

/// The layer's outputs: the MLP's output and the residual stream after the attention
/// block's add, both `[B, hidden]`.
pub struct Outputs {
    pub out: Vec<f16>,
    pub residual: Vec<f16>,
}

fn round(x: f64) -> f64 {
    f64::from(f16::from_f64(x))
}

/// `x [rows, k] · w [k, n]` in f64, rounded to f16 (a projection's stored output).
fn matmul(x: &[f64], w: &[f32], rows: usize, k: usize, n: usize) -> Vec<f64> {
    product(x, w, rows, k, n).into_iter().map(round).collect()
}

/// `x [rows, k] · w [k, n]` in f64; the columns split over the host's threads.
fn product(x: &[f64], w: &[f32], rows: usize, k: usize, n: usize) -> Vec<f64> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |t| t.get())
        .min(32);
    let chunk = n.div_ceil(threads);
    let mut y = vec![0f64; rows * n];
    let parts: Vec<Vec<f64>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                scope.spawn(move || {
                    let (n0, n1) = (t * chunk, ((t + 1) * chunk).min(n));
                    let width = n1.saturating_sub(n0);
                    let mut acc = vec![0f64; rows * width];
                    for kk in 0..k {
                        let wr = &w[kk * n + n0..kk * n + n0 + width];
                        for r in 0..rows {
                            let a = x[r * k + kk];
                            if a == 0.0 {
                                continue;
                            }
                            let out = &mut acc[r * width..(r + 1) * width];
                            for (o, &wv) in out.iter_mut().zip(wr) {
                                *o += a * f64::from(wv);
                            }
                        }
                    }
                    acc
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (t, acc) in parts.iter().enumerate() {
        let n0 = t * chunk;
        let width = acc.len() / rows.max(1);
        for r in 0..rows {
            for j in 0..width {
                y[r * n + n0 + j] = acc[r * width + j];
            }
        }
    }
    y
}

/// residual += x, then the normalised residual times `w`, both rounded to f16.
fn add_rms_norm(x: &[f64], residual: &mut [f64], w: &[f16], eps: f32, d: usize) -> Vec<f64> {
    let mut y = vec![0f64; x.len()];
    for (row, (xr, rr)) in x.chunks(d).zip(residual.chunks_mut(d)).enumerate() {
        for (r, &a) in rr.iter_mut().zip(xr) {
            *r = round(*r + a);
        }
        let ms = rr.iter().map(|v| v * v).sum::<f64>() / d as f64;
        let inv = 1.0 / (ms + f64::from(eps)).sqrt();
        for (j, &r) in rr.iter().enumerate() {
            y[row * d + j] = round(r * inv * f64::from(w[j]));
        }
    }
    y
}

pub fn reference(w: &HostWeights, h: &HostBatch) -> Outputs {
    let c: &Config = &w.config;
    let b = h.b;
    let dq: Vec<Vec<f32>> = w
        .projections
        .iter()
        .map(|p| dequant_reference(p).into_iter().map(f32::from).collect())
        .collect();
    let wide = |v: &[f16]| -> Vec<f64> { v.iter().map(|&x| f64::from(x)).collect() };
    let (hd, half) = (c.head_dim, c.head_dim / 2);
    let kv_row = c.kv_heads * hd;

    let mut residual = wide(&h.residual);
    let normed = add_rms_norm(&wide(&h.hidden), &mut residual, &w.norm1, c.eps, c.hidden);
    let qkv = matmul(&normed, &dq[0], b, c.hidden, c.qkv_width());

    // RoPE on the queries and the new keys; the new keys and values into the cache.
    let mut k_cache = wide(&h.k_cache);
    let mut v_cache = wide(&h.v_cache);
    let mut q = vec![0f64; b * c.heads * hd];
    for s in 0..b {
        let pos = h.positions[s] as usize;
        let row = &qkv[s * c.qkv_width()..(s + 1) * c.qkv_width()];
        let rotate = |head: &[f64]| -> Vec<f64> {
            let mut out = vec![0f64; hd];
            for p in 0..half {
                let cs = f64::from(w.cos_sin[pos * hd + p]);
                let sn = f64::from(w.cos_sin[pos * hd + half + p]);
                let (x0, x1) = (head[p], head[p + half]);
                out[p] = round(x0 * cs - x1 * sn);
                out[p + half] = round(x1 * cs + x0 * sn);
            }
            out
        };
        for hq in 0..c.heads {
            q[(s * c.heads + hq) * hd..][..hd].copy_from_slice(&rotate(&row[hq * hd..][..hd]));
        }
        if h.slots[s] < 0 {
            continue;
        }
        let slot = h.slots[s] as usize;
        for kh in 0..c.kv_heads {
            let k = rotate(&row[(c.heads + kh) * hd..][..hd]);
            k_cache[slot * kv_row + kh * hd..][..hd].copy_from_slice(&k);
            let v = &row[(c.heads + c.kv_heads + kh) * hd..][..hd];
            v_cache[slot * kv_row + kh * hd..][..hd].copy_from_slice(v);
        }
    }

    // Attention over each sequence's pages, GQA: query head hq reads KV head hq / group.
    let group = c.heads / c.kv_heads;
    let scale = f64::from(attention_scale(c));
    let mut attn = vec![0f64; b * c.heads * hd];
    for s in 0..b {
        let len = h.lens[s] as usize;
        let slot_of = |t: usize| {
            h.block_tables[s * h.pages_per_seq + t / c.block_size] as usize * c.block_size
                + t % c.block_size
        };
        for hq in 0..c.heads {
            if len == 0 {
                continue;
            }
            let kh = hq / group;
            let qv = &q[(s * c.heads + hq) * hd..][..hd];
            let scores: Vec<f64> = (0..len)
                .map(|t| {
                    let k = &k_cache[slot_of(t) * kv_row + kh * hd..][..hd];
                    qv.iter().zip(k).map(|(a, b)| a * b).sum::<f64>() * scale
                })
                .collect();
            let max = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let p: Vec<f64> = scores.iter().map(|x| (x - max).exp()).collect();
            let sum: f64 = p.iter().sum();
            let out = &mut attn[(s * c.heads + hq) * hd..][..hd];
            for (t, pt) in p.iter().enumerate() {
                let v = &v_cache[slot_of(t) * kv_row + kh * hd..][..hd];
                for (o, vv) in out.iter_mut().zip(v) {
                    *o += pt / sum * vv;
                }
            }
            for o in out.iter_mut() {
                *o = round(*o);
            }
        }
    }

    let o = matmul(&attn, &dq[1], b, c.heads * hd, c.hidden);
    let normed = add_rms_norm(&o, &mut residual, &w.norm2, c.eps, c.hidden);
    // SiluAndMul fused into the projection: gate and up in f64, interleaved in the weights'
    // columns by GATE_UP_UNIT, one rounding.
    let gu = product(&normed, &dq[2], b, c.hidden, 2 * c.intermediate);
    let unit = GATE_UP_UNIT;
    let mut act = vec![0f64; b * c.intermediate];
    for s in 0..b {
        for j in 0..c.intermediate {
            let gate = 2 * unit * (j / unit) + j % unit;
            let g = gu[s * 2 * c.intermediate + gate];
            let u = gu[s * 2 * c.intermediate + gate + unit];
            act[s * c.intermediate + j] = round(g / (1.0 + (-g).exp()) * u);
        }
    }
    let out = matmul(&act, &dq[3], b, c.intermediate, c.hidden);
    let narrow = |v: Vec<f64>| -> Vec<f16> { v.into_iter().map(f16::from_f64).collect() };
    Outputs {
        out: narrow(out),
        residual: narrow(residual),
    }
}
