//! Every plain example spec (`specs/*.ima` but `quant.ima`) end to end on a GPU, through the
//! committed generated stubs (`tests/out/specs/NAME.rs`).
//!
//! Each kernel runs at ragged shapes against an f64 CPU reference, with its outputs poisoned
//! with NaN before the launch so that an element the kernel never wrote fails the
//! comparison. Each kernel also gets wrong-shape launches, which must come back as
//! `Error::Launch` naming the right `Violation`, with the output still all NaN: nothing ran.
//!
//! Tolerances: an f16 or bf16 output is within 1e-2 of its reference, relative, plus a small
//! absolute term for values near 0; an f32 output is within 1e-5 relative to the magnitude
//! of what it sums (`Σ|terms|`, which is `|want|` when nothing cancels), since a dot product
//! that cancels to near 0 has no meaningful relative error of its own.

#[allow(dead_code)]
mod attn_spec {
    include!("out/specs/attn.rs");
}

#[allow(dead_code)]
mod rmsnorm_spec {
    include!("out/specs/rmsnorm.rs");
}

#[allow(dead_code)]
mod rope_spec {
    include!("out/specs/rope.rs");
}

#[allow(dead_code)]
mod transpose_spec {
    include!("out/specs/transpose.rs");
}

#[allow(dead_code)]
mod strided_spec {
    include!("out/specs/strided.rs");
}

mod common;

use common::{lcg, refused};
use std::sync::Arc;

use ima::cudarc::driver::{CudaContext, CudaStream};
use ima::half::{bf16, f16};
use ima::{Element, IndexWidth, LaunchError, Launched, StrideFault, Tensor, Violation};

// ---------------------------------------------------------------------------------------
// Helpers

fn gpu() -> (Arc<CudaContext>, Arc<CudaStream>) {
    let ctx = CudaContext::new(0).expect("a CUDA device");
    let stream = ctx.new_stream().expect("a CUDA stream");
    (ctx, stream)
}

fn f32s(n: usize, seed: u64) -> Vec<f32> {
    lcg(seed).take(n).collect()
}

/// Rounded to f16: the references read these rounded values back.
fn f16s(n: usize, seed: u64) -> Vec<f16> {
    lcg(seed).take(n).map(f16::from_f32).collect()
}

fn bf16s(n: usize, seed: u64) -> Vec<bf16> {
    lcg(seed).take(n).map(bf16::from_f32).collect()
}

/// Element types the tests poison with NaN and compare as f64.
trait Value: Element {
    fn f64(self) -> f64;
}

impl Value for f32 {
    fn f64(self) -> f64 {
        f64::from(self)
    }
}

impl Value for f16 {
    fn f64(self) -> f64 {
        self.to_f64()
    }
}

impl Value for bf16 {
    fn f64(self) -> f64 {
        self.to_f64()
    }
}

/// Asserts that `got` was written and lies within `tol` of `want`; returns the error.
fn close(got: f64, want: f64, tol: f64, at: impl Fn() -> String) -> f64 {
    assert!(
        got.is_finite(),
        "{} was not written (or is not finite): {got}",
        at()
    );
    let err = (got - want).abs();
    assert!(
        err <= tol,
        "{} = {got}, expected {want} (error {err:.3e} > tolerance {tol:.3e})",
        at()
    );
    err
}

/// f16/bf16 outputs: 1e-2 relative, plus `abs` for values near 0.
fn half_tol(want: f64, abs: f64) -> f64 {
    1e-2 * want.abs() + abs
}

/// Asserts that every element of `t`'s whole buffer (not only its view) is still NaN.
fn assert_untouched<T: Value>(stream: &Arc<CudaStream>, t: &Tensor<T>, what: &str) {
    let all = stream
        .clone_dtoh(t.slice())
        .expect("copying a buffer to the host");
    let written = all.iter().filter(|v| !v.f64().is_nan()).count();
    assert_eq!(
        written, 0,
        "the kernel ran: {written} elements of {what} changed"
    );
}

/// Asserts that one of `e`'s violations satisfies `found`.
fn expect(e: &LaunchError, what: &str, found: impl Fn(&Violation) -> bool) {
    assert!(
        e.violations.iter().any(found),
        "expected {what} among the violations:\n{e}"
    );
}

fn done(launched: Launched) -> ([u32; 3], [u32; 3], IndexWidth) {
    match launched {
        Launched::Done { grid, block, index } => (grid, block, index),
        Launched::Skipped => panic!("the launch was skipped"),
    }
}

/// Row-major index of `idx` in `shape`.
fn flat(idx: &[usize], shape: &[usize]) -> usize {
    idx.iter().zip(shape).fold(0, |acc, (&i, &n)| {
        assert!(i < n, "index {idx:?} outside {shape:?}");
        acc * n + i
    })
}

// ---------------------------------------------------------------------------------------
// attn.ima: softmax_rows, attn_pv, and scores → softmax → pv

/// Softmax of each row of `s` (rows of `t`), in f64.
fn softmax_ref(s: &[f64], t: usize) -> Vec<f64> {
    let mut out = Vec::with_capacity(s.len());
    for row in s.chunks(t) {
        let m = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let z: f64 = row.iter().map(|x| (x - m).exp()).sum();
        out.extend(row.iter().map(|x| (x - m).exp() / z));
    }
    out
}

fn softmax_case(shape: [usize; 4], seed: u64) {
    let [b, h, s, t] = shape;
    let (ctx, stream) = gpu();
    let kernels = attn_spec::Kernels::load(&ctx).unwrap();

    // Scores in [-4, 4), so that the exponentials span e^8.
    let sh: Vec<f32> = lcg(seed).take(b * h * s * t).map(|v| v * 4.0).collect();
    let scores = Tensor::from_host(&stream, &sh, &shape).unwrap();
    let mut p = Tensor::full(&stream, f16::NAN, &shape).unwrap();

    let launched = kernels
        .softmax_rows
        .launch(
            &stream,
            attn_spec::SoftmaxRowsArgs {
                s: &scores,
                p: &mut p,
            },
        )
        .unwrap();
    let (grid, block, _) = done(launched);
    assert_eq!(block, [256, 1, 1]);
    // A block per row, capped at 2^24 threads per grid (the rest is a block-stride loop).
    assert_eq!(grid, [(b * h * s).min(1 << 16) as u32, 1, 1]);
    let out = p.to_host(&stream).unwrap();

    let want = softmax_ref(&sh.iter().map(|&v| f64::from(v)).collect::<Vec<_>>(), t);
    let mut worst = 0f64;
    for (row, (got_row, want_row)) in out.chunks(t).zip(want.chunks(t)).enumerate() {
        let mut sum = 0f64;
        for (j, (&g, &w)) in got_row.iter().zip(want_row).enumerate() {
            let at = || format!("p[row {row}, {j}] of {shape:?}");
            worst = worst.max(close(g.f64(), w, half_tol(w, 1e-6), at));
            sum += g.f64();
        }
        assert!(
            (sum - 1.0).abs() < 5e-3,
            "row {row} of {shape:?} sums to {sum}"
        );
    }
    println!("softmax_rows {shape:?}: worst error {worst:.2e}");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn softmax_rows_matches_f64_reference_on_ragged_rows() {
    // T below a warp, ragged T, T past one block of 256 threads.
    softmax_case([1, 1, 4, 5], 21);
    softmax_case([2, 3, 7, 45], 22);
    softmax_case([1, 2, 3, 1000], 23);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn softmax_rows_loops_over_more_rows_than_blocks() {
    // 80,000 rows > 65,536 blocks: each block handles several rows, reusing its shared
    // memory between them.
    softmax_case([2, 1, 40_000, 7], 24);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn softmax_rows_refuses_a_wrong_shape_before_launching() {
    let (b, h, s, t) = (2, 3, 7, 45);
    let (ctx, stream) = gpu();
    let kernels = attn_spec::Kernels::load(&ctx).unwrap();
    let scores = Tensor::from_host(&stream, &f32s(b * h * s * t, 25), &[b, h, s, t]).unwrap();

    // p one column short.
    let mut p = Tensor::full(&stream, f16::NAN, &[b, h, s, t - 1]).unwrap();
    let e = refused(
        kernels.softmax_rows.launch(
            &stream,
            attn_spec::SoftmaxRowsArgs {
                s: &scores,
                p: &mut p,
            },
        ),
        "softmax_rows",
    );
    expect(&e, "Dim p[3] = T", |v| {
        matches!(v, Violation::Dim { arg: "p", position: 3, logical: 3, extent: "T", expected, actual, .. }
            if *expected == t as i64 && *actual == t - 1)
    });
    assert!(e.to_string().contains("bound by s.shape[3]"), "{e}");
    assert_untouched(&stream, &p, "p");

    // p with B and H merged: rank 3 for a rank-4 argument.
    let mut p = Tensor::full(&stream, f16::NAN, &[b * h, s, t]).unwrap();
    let e = refused(
        kernels.softmax_rows.launch(
            &stream,
            attn_spec::SoftmaxRowsArgs {
                s: &scores,
                p: &mut p,
            },
        ),
        "softmax_rows",
    );
    expect(&e, "Rank p", |v| {
        matches!(
            v,
            Violation::Rank {
                arg: "p",
                expected: 4,
                actual: 3,
                ..
            }
        )
    });
    assert_untouched(&stream, &p, "p");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn attn_pv_matches_f64_reference_on_a_ragged_shape() {
    let (b, h, s, t, d) = (2, 3, 77, 45, 40);
    let (ctx, stream) = gpu();
    let kernels = attn_spec::Kernels::load(&ctx).unwrap();

    let ph = f16s(b * h * s * t, 31);
    let vh = f16s(b * h * t * d, 32);
    let p = Tensor::from_host(&stream, &ph, &[b, h, s, t]).unwrap();
    let v = Tensor::from_host(&stream, &vh, &[b, h, t, d]).unwrap();
    let mut o = Tensor::full(&stream, f32::NAN, &[b, h, s, d]).unwrap();

    let launched = kernels
        .attn_pv
        .launch(
            &stream,
            attn_spec::AttnPvArgs {
                p: &p,
                v: &v,
                o: &mut o,
            },
        )
        .unwrap();
    // No `threads N`: the block is the occupancy API's pick at load, whole warps and at
    // most the 256 of `__launch_bounds__`, and the kernel's contract says so.
    let block = done(launched).1;
    assert_eq!(block, kernels.attn_pv.kernel().contract().block);
    assert!(
        block[0].is_multiple_of(32) && (32..=256).contains(&block[0]) && block[1..] == [1, 1],
        "{block:?}"
    );
    let out = o.to_host(&stream).unwrap();
    assert_eq!(out.len(), b * h * s * d);

    let mut worst = 0f64;
    for (idx, &got) in out.iter().enumerate() {
        let (dd, row) = (idx % d, idx / d); // row = (bb * h + hh) * s + ii
        let bh = row / s;
        let (mut acc, mut mag) = (0f64, 0f64);
        for j in 0..t {
            let term = ph[row * t + j].f64() * vh[(bh * t + j) * d + dd].f64();
            acc += term;
            mag += term.abs();
        }
        let at = || format!("o[row {row}, {dd}]");
        worst = worst.max(close(f64::from(got), acc, 1e-5 * mag, at) / mag.max(1e-30));
    }
    println!("attn_pv [2,3,77,45,40]: worst error {worst:.2e} of Σ|p·v|");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn attn_pv_refuses_a_wrong_shape_before_launching() {
    let (b, h, s, t, d) = (2, 3, 77, 45, 40);
    let (ctx, stream) = gpu();
    let kernels = attn_spec::Kernels::load(&ctx).unwrap();
    let p = Tensor::from_host(&stream, &f16s(b * h * s * t, 33), &[b, h, s, t]).unwrap();

    // v one key longer than p has columns: T is bound by p.shape[3].
    let v = Tensor::from_host(&stream, &f16s(b * h * (t + 1) * d, 34), &[b, h, t + 1, d]).unwrap();
    let mut o = Tensor::full(&stream, f32::NAN, &[b, h, s, d]).unwrap();
    let e = refused(
        kernels.attn_pv.launch(
            &stream,
            attn_spec::AttnPvArgs {
                p: &p,
                v: &v,
                o: &mut o,
            },
        ),
        "attn_pv",
    );
    expect(&e, "Dim v[2] = T", |x| {
        matches!(x, Violation::Dim { arg: "v", position: 2, extent: "T", expected, actual, .. }
            if *expected == t as i64 && *actual == t + 1)
    });
    assert!(e.to_string().contains("bound by p.shape[3]"), "{e}");
    assert_untouched(&stream, &o, "o");

    // o one column wider than v: D is bound by v.shape[3].
    let v = Tensor::from_host(&stream, &f16s(b * h * t * d, 34), &[b, h, t, d]).unwrap();
    let mut o = Tensor::full(&stream, f32::NAN, &[b, h, s, d + 1]).unwrap();
    let e = refused(
        kernels.attn_pv.launch(
            &stream,
            attn_spec::AttnPvArgs {
                p: &p,
                v: &v,
                o: &mut o,
            },
        ),
        "attn_pv",
    );
    expect(&e, "Dim o[3] = D", |x| {
        matches!(x, Violation::Dim { arg: "o", position: 3, extent: "D", expected, actual, .. }
            if *expected == d as i64 && *actual == d + 1)
    });
    assert!(e.to_string().contains("bound by v.shape[3]"), "{e}");
    assert_untouched(&stream, &o, "o");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn attention_pipeline_matches_f64_reference() {
    // S != T, so a transposed score matrix cannot pass.
    let (b, h, s, t, d) = (2, 3, 77, 45, 64);
    let scale = 1.0 / (d as f32).sqrt();
    let (ctx, stream) = gpu();
    let kernels = attn_spec::Kernels::load(&ctx).unwrap();

    let (qh, kh, vh) = (
        f16s(b * h * s * d, 41),
        f16s(b * h * t * d, 42),
        f16s(b * h * t * d, 43),
    );
    let q = Tensor::from_host(&stream, &qh, &[b, h, s, d]).unwrap();
    let k = Tensor::from_host(&stream, &kh, &[b, h, t, d]).unwrap();
    let v = Tensor::from_host(&stream, &vh, &[b, h, t, d]).unwrap();
    let mut scores = Tensor::full(&stream, f32::NAN, &[b, h, s, t]).unwrap();
    let mut p = Tensor::full(&stream, f16::NAN, &[b, h, s, t]).unwrap();
    let mut o = Tensor::full(&stream, f32::NAN, &[b, h, s, d]).unwrap();

    done(
        kernels
            .attn_scores
            .launch(
                &stream,
                attn_spec::AttnScoresArgs {
                    q: &q,
                    k: &k,
                    o: &mut scores,
                    scale,
                },
            )
            .unwrap(),
    );
    done(
        kernels
            .softmax_rows
            .launch(
                &stream,
                attn_spec::SoftmaxRowsArgs {
                    s: &scores,
                    p: &mut p,
                },
            )
            .unwrap(),
    );
    done(
        kernels
            .attn_pv
            .launch(
                &stream,
                attn_spec::AttnPvArgs {
                    p: &p,
                    v: &v,
                    o: &mut o,
                },
            )
            .unwrap(),
    );
    let out = o.to_host(&stream).unwrap();
    let probs = p.to_host(&stream).unwrap();
    assert!(
        probs.iter().all(|x| x.is_finite()),
        "softmax_rows left a probability unwritten"
    );

    // The whole pipeline in f64 from the f16 inputs.
    let mut sc = vec![0f64; b * h * s * t];
    for bh in 0..b * h {
        for i in 0..s {
            for j in 0..t {
                let dot: f64 = (0..d)
                    .map(|x| qh[(bh * s + i) * d + x].f64() * kh[(bh * t + j) * d + x].f64())
                    .sum();
                sc[(bh * s + i) * t + j] = dot * f64::from(scale);
            }
        }
    }
    let pr = softmax_ref(&sc, t);
    let mut worst = 0f64;
    for bh in 0..b * h {
        for i in 0..s {
            for x in 0..d {
                let (mut acc, mut mag) = (0f64, 0f64);
                for j in 0..t {
                    let (pj, vj) = (pr[(bh * s + i) * t + j], vh[(bh * t + j) * d + x].f64());
                    acc += pj * vj;
                    mag += pj * vj.abs();
                }
                let got = f64::from(out[(bh * s + i) * d + x]);
                // p is rounded to f16 between the kernels: 1e-2 of Σ p·|v|.
                let at = || format!("o[bh {bh}, {i}, {x}]");
                worst = worst.max(close(got, acc, 1e-2 * mag + 1e-6, at));
            }
        }
    }
    println!("attention [2,3,77,45,64]: worst absolute error {worst:.2e}");
}

// ---------------------------------------------------------------------------------------
// rmsnorm.ima: rms_norm

/// y[row, :] of rms_norm in f64.
fn rms_row(x: &[bf16], w: &[bf16], eps: f32) -> Vec<f64> {
    let d = x.len();
    let ss: f64 = x.iter().map(|v| v.f64() * v.f64()).sum();
    let inv = 1.0 / (ss / d as f64 + f64::from(eps)).sqrt();
    x.iter()
        .zip(w)
        .map(|(v, g)| v.f64() * inv * g.f64())
        .collect()
}

fn rms_case(n: usize, d: usize, seed: u64) {
    let eps = 1e-5f32;
    let (ctx, stream) = gpu();
    let kernels = rmsnorm_spec::Kernels::load(&ctx).unwrap();

    let xh = bf16s(n * d, seed);
    let wh = bf16s(d, seed + 1);
    let x = Tensor::from_host(&stream, &xh, &[n, d]).unwrap();
    let w = Tensor::from_host(&stream, &wh, &[d]).unwrap();
    let mut y = Tensor::full(&stream, bf16::NAN, &[n, d]).unwrap();

    let (grid, block, _) = done(
        kernels
            .rms_norm
            .launch(
                &stream,
                rmsnorm_spec::RmsNormArgs {
                    x: &x,
                    w: &w,
                    y: &mut y,
                    eps,
                },
            )
            .unwrap(),
    );
    assert_eq!(
        (grid, block),
        ([n as u32, 1, 1], [256, 1, 1]),
        "a block per row"
    );
    let out = y.to_host(&stream).unwrap();

    let mut worst = 0f64;
    for row in 0..n {
        let want = rms_row(&xh[row * d..(row + 1) * d], &wh, eps);
        for (col, &wv) in want.iter().enumerate() {
            let at = || format!("y[{row}, {col}] of [{n}, {d}]");
            let got = out[row * d + col].f64();
            worst = worst.max(close(got, wv, half_tol(wv, 1e-6), at) / wv.abs().max(1e-3));
        }
    }
    println!("rms_norm [{n}, {d}]: worst relative error {worst:.2e}");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn rms_norm_matches_f64_reference_on_ragged_shapes() {
    // D = 1000 is a multiple of 8 but not of the 256 threads; D = 24 leaves most threads
    // of the block without an element.
    rms_case(37, 1000, 51);
    rms_case(3, 24, 52);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn rms_norm_big_shape_on_sampled_rows() {
    let (n, d) = (16384, 8192);
    let eps = 1e-6f32;
    let (ctx, stream) = gpu();
    let kernels = rmsnorm_spec::Kernels::load(&ctx).unwrap();

    let xh = bf16s(n * d, 53);
    let wh = bf16s(d, 54);
    let x = Tensor::from_host(&stream, &xh, &[n, d]).unwrap();
    let w = Tensor::from_host(&stream, &wh, &[d]).unwrap();
    let mut y = Tensor::full(&stream, bf16::NAN, &[n, d]).unwrap();

    let launched = kernels
        .rms_norm
        .launch(
            &stream,
            rmsnorm_spec::RmsNormArgs {
                x: &x,
                w: &w,
                y: &mut y,
                eps,
            },
        )
        .unwrap();
    // 2^27 elements: 32-bit indexing still fits.
    assert_eq!(
        done(launched),
        ([n as u32, 1, 1], [256, 1, 1], IndexWidth::I32)
    );
    // The whole buffer (y is contiguous from offset 0), without a per-element gather.
    let out = stream.clone_dtoh(y.slice()).unwrap();
    assert_eq!(out.len(), n * d);
    let unwritten = out.iter().filter(|v| v.is_nan()).count();
    assert_eq!(unwritten, 0, "{unwritten} elements of y were not written");

    let mut rows: Vec<usize> = vec![0, 1, 255, 256, 8191, 8192, n - 1];
    rows.extend(
        lcg(55)
            .take(25)
            .map(|r| ((r + 1.0) / 2.0 * n as f32) as usize % n),
    );
    for &row in &rows {
        let want = rms_row(&xh[row * d..(row + 1) * d], &wh, eps);
        for (col, &wv) in want.iter().enumerate() {
            let at = || format!("y[{row}, {col}] of [{n}, {d}]");
            close(out[row * d + col].f64(), wv, half_tol(wv, 1e-6), at);
        }
    }
    println!("rms_norm [{n}, {d}]: {} sampled rows match", rows.len());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn rms_norm_refuses_a_wrong_shape_before_launching() {
    let (n, d) = (37, 1000);
    let (ctx, stream) = gpu();
    let kernels = rmsnorm_spec::Kernels::load(&ctx).unwrap();
    let x = Tensor::from_host(&stream, &bf16s(n * d, 56), &[n, d]).unwrap();

    // w of another length than x's rows: D is bound by x.shape[1].
    let w = Tensor::from_host(&stream, &bf16s(d + 8, 57), &[d + 8]).unwrap();
    let mut y = Tensor::full(&stream, bf16::NAN, &[n, d]).unwrap();
    let e = refused(
        kernels.rms_norm.launch(
            &stream,
            rmsnorm_spec::RmsNormArgs {
                x: &x,
                w: &w,
                y: &mut y,
                eps: 1e-5,
            },
        ),
        "rms_norm",
    );
    expect(&e, "Dim w[0] = D", |v| {
        matches!(v, Violation::Dim { arg: "w", position: 0, extent: "D", expected, actual, .. }
            if *expected == d as i64 && *actual == d + 8)
    });
    assert!(e.to_string().contains("bound by x.shape[1]"), "{e}");
    assert_untouched(&stream, &y, "y");

    // D = 1004 breaks `where D % 8 == 0`, with every shape consistent.
    let d2 = 1004;
    let x2 = Tensor::from_host(&stream, &bf16s(n * d2, 58), &[n, d2]).unwrap();
    let w2 = Tensor::from_host(&stream, &bf16s(d2, 59), &[d2]).unwrap();
    let mut y2 = Tensor::full(&stream, bf16::NAN, &[n, d2]).unwrap();
    let e = refused(
        kernels.rms_norm.launch(
            &stream,
            rmsnorm_spec::RmsNormArgs {
                x: &x2,
                w: &w2,
                y: &mut y2,
                eps: 1e-5,
            },
        ),
        "rms_norm",
    );
    expect(&e, "Constraint D % 8 == 0", |v| {
        matches!(v, Violation::Constraint { text: "D % 8 == 0", values }
            if values.iter().any(|(k, val)| *k == "D" && val == "1004"))
    });
    assert_untouched(&stream, &y2, "y");

    // x one element into its buffer: 2 bytes past a 16-byte boundary, against align(16).
    let w = Tensor::from_host(&stream, &bf16s(d, 57), &[d]).unwrap();
    let x3 = Tensor::from_host(&stream, &bf16s(n * d + 8, 60), &[n * d + 8])
        .unwrap()
        .with_layout(&[n, d], &[d as isize, 1], 1)
        .unwrap();
    let mut y3 = Tensor::full(&stream, bf16::NAN, &[n, d]).unwrap();
    let e = refused(
        kernels.rms_norm.launch(
            &stream,
            rmsnorm_spec::RmsNormArgs {
                x: &x3,
                w: &w,
                y: &mut y3,
                eps: 1e-5,
            },
        ),
        "rms_norm",
    );
    expect(&e, "Align x to 16", |v| {
        matches!(
            v,
            Violation::Align {
                arg: "x",
                align: 16,
                offset: 1,
                ..
            }
        )
    });
    assert_untouched(&stream, &y3, "y");
}

// ---------------------------------------------------------------------------------------
// rope.ima: rope, x and y held as [B, S, H, D] and read as [B, H, S, D]

/// cos and sin tables `[S, D/2]` of the usual angles s / 10000^(2p / D).
fn rope_tables(s: usize, d: usize) -> (Vec<f32>, Vec<f32>) {
    let (mut c, mut sn) = (Vec::new(), Vec::new());
    for pos in 0..s {
        for p in 0..d / 2 {
            let angle = pos as f64 / 10000f64.powf(2.0 * p as f64 / d as f64);
            c.push(angle.cos() as f32);
            sn.push(angle.sin() as f32);
        }
    }
    (c, sn)
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn rope_matches_f64_reference_through_the_stored_layout() {
    // H != S, so reading [B, S, H, D] as if it were [B, H, S, D] cannot pass.
    let (b, s, h, d) = (2, 37, 5, 64);
    let (ctx, stream) = gpu();
    let kernels = rope_spec::Kernels::load(&ctx).unwrap();

    let phys = [b, s, h, d];
    let xh = f16s(b * s * h * d, 61);
    let (ch, sh) = rope_tables(s, d);
    let x = Tensor::from_host(&stream, &xh, &phys).unwrap();
    let cos_tab = Tensor::from_host(&stream, &ch, &[s, d / 2]).unwrap();
    let sin_tab = Tensor::from_host(&stream, &sh, &[s, d / 2]).unwrap();
    let mut y = Tensor::full(&stream, f16::NAN, &phys).unwrap();

    done(
        kernels
            .rope
            .launch(
                &stream,
                rope_spec::RopeArgs {
                    x: &x,
                    cos_tab: &cos_tab,
                    sin_tab: &sin_tab,
                    y: &mut y,
                },
            )
            .unwrap(),
    );
    let out = y.to_host(&stream).unwrap(); // physical [B, S, H, D] order
    assert_eq!(y.shape(), &phys);

    // The reference works on the logical [B, H, S, D] view, copied out of the physical data.
    let logical = [b, h, s, d];
    let mut xl = vec![0f64; xh.len()];
    for bb in 0..b {
        for hh in 0..h {
            for ss in 0..s {
                for dd in 0..d {
                    xl[flat(&[bb, hh, ss, dd], &logical)] =
                        xh[flat(&[bb, ss, hh, dd], &phys)].f64();
                }
            }
        }
    }
    let mut worst = 0f64;
    for bb in 0..b {
        for hh in 0..h {
            for ss in 0..s {
                for dd in 0..d {
                    let p = dd / 2;
                    let (c, sn) = (
                        f64::from(ch[ss * (d / 2) + p]),
                        f64::from(sh[ss * (d / 2) + p]),
                    );
                    let x0 = xl[flat(&[bb, hh, ss, 2 * p], &logical)];
                    let x1 = xl[flat(&[bb, hh, ss, 2 * p + 1], &logical)];
                    let want = if dd % 2 == 0 {
                        x0 * c - x1 * sn
                    } else {
                        x1 * c + x0 * sn
                    };
                    let got = out[flat(&[bb, ss, hh, dd], &phys)].f64();
                    let at = || format!("y[b {bb}, h {hh}, s {ss}, d {dd}] (logical)");
                    worst = worst.max(close(got, want, half_tol(want, 1e-4), at));
                }
            }
        }
    }
    println!("rope [B,S,H,D] = {phys:?}: worst absolute error {worst:.2e}");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn rope_refuses_a_wrong_shape_before_launching() {
    let (b, s, h, d) = (2, 37, 5, 64);
    let (ctx, stream) = gpu();
    let kernels = rope_spec::Kernels::load(&ctx).unwrap();
    let x = Tensor::from_host(&stream, &f16s(b * s * h * d, 62), &[b, s, h, d]).unwrap();
    let (ch, sh) = rope_tables(s, d);
    let cos_tab = Tensor::from_host(&stream, &ch, &[s, d / 2]).unwrap();
    let sin_tab = Tensor::from_host(&stream, &sh, &[s, d / 2]).unwrap();

    // y in the logical [B, H, S, D] layout instead of the stored [B, S, H, D]: both middle
    // dimensions are reported, each with its logical dimension.
    let mut y = Tensor::full(&stream, f16::NAN, &[b, h, s, d]).unwrap();
    let e = refused(
        kernels.rope.launch(
            &stream,
            rope_spec::RopeArgs {
                x: &x,
                cos_tab: &cos_tab,
                sin_tab: &sin_tab,
                y: &mut y,
            },
        ),
        "rope",
    );
    expect(&e, "Dim y[1] = S (logical 2)", |v| {
        matches!(v, Violation::Dim { arg: "y", position: 1, logical: 2, extent: "S", expected, actual, .. }
            if *expected == s as i64 && *actual == h)
    });
    expect(&e, "Dim y[2] = H (logical 1)", |v| {
        matches!(v, Violation::Dim { arg: "y", position: 2, logical: 1, extent: "H", expected, actual, .. }
            if *expected == h as i64 && *actual == s)
    });
    assert!(e.to_string().contains("logical dim"), "{e}");
    assert_untouched(&stream, &y, "y");

    // Tables one position short (cos) and a full D wide (sin): both reported at once.
    let cos_short = Tensor::from_host(&stream, &ch[..(s - 1) * (d / 2)], &[s - 1, d / 2]).unwrap();
    let sin_wide = Tensor::from_host(&stream, &f32s(s * d, 63), &[s, d]).unwrap();
    let mut y = Tensor::full(&stream, f16::NAN, &[b, s, h, d]).unwrap();
    let e = refused(
        kernels.rope.launch(
            &stream,
            rope_spec::RopeArgs {
                x: &x,
                cos_tab: &cos_short,
                sin_tab: &sin_wide,
                y: &mut y,
            },
        ),
        "rope",
    );
    expect(&e, "Dim cos_tab[0] = S", |v| {
        matches!(v, Violation::Dim { arg: "cos_tab", position: 0, extent: "S", expected, actual, .. }
            if *expected == s as i64 && *actual == s - 1)
    });
    expect(&e, "Dim sin_tab[1] = D / 2", |v| {
        matches!(v, Violation::Dim { arg: "sin_tab", position: 1, extent: "D / 2", expected, actual, .. }
            if *expected == (d / 2) as i64 && *actual == d)
    });
    assert_untouched(&stream, &y, "y");

    // D = 60 breaks `where D % 8 == 0` (the tables match D / 2 = 30).
    let d3 = 60;
    let x3 = Tensor::from_host(&stream, &f16s(b * s * h * d3, 64), &[b, s, h, d3]).unwrap();
    let (c3, s3) = (f32s(s * (d3 / 2), 65), f32s(s * (d3 / 2), 66));
    let cos3 = Tensor::from_host(&stream, &c3, &[s, d3 / 2]).unwrap();
    let sin3 = Tensor::from_host(&stream, &s3, &[s, d3 / 2]).unwrap();
    let mut y3 = Tensor::full(&stream, f16::NAN, &[b, s, h, d3]).unwrap();
    let e = refused(
        kernels.rope.launch(
            &stream,
            rope_spec::RopeArgs {
                x: &x3,
                cos_tab: &cos3,
                sin_tab: &sin3,
                y: &mut y3,
            },
        ),
        "rope",
    );
    expect(&e, "Constraint D % 8 == 0", |v| {
        matches!(
            v,
            Violation::Constraint {
                text: "D % 8 == 0",
                ..
            }
        )
    });
    assert_untouched(&stream, &y3, "y");
}

// ---------------------------------------------------------------------------------------
// transpose.ima: transpose and transpose_tiled

const TRANSPOSE_SHAPES: [(usize, usize); 5] =
    [(77, 45), (1, 1000), (1000, 1), (33, 31), (300, 257)];

fn transpose_case(tiled: bool, m: usize, n: usize, seed: u64) {
    let (ctx, stream) = gpu();
    let kernels = transpose_spec::Kernels::load(&ctx).unwrap();
    let xh = f32s(m * n, seed);
    let x = Tensor::from_host(&stream, &xh, &[m, n]).unwrap();
    let mut y = Tensor::full(&stream, f32::NAN, &[n, m]).unwrap();

    let (grid, block, _) = if tiled {
        done(
            kernels
                .transpose_tiled
                .launch(
                    &stream,
                    transpose_spec::TransposeTiledArgs { x: &x, y: &mut y },
                )
                .unwrap(),
        )
    } else {
        done(
            kernels
                .transpose
                .launch(&stream, transpose_spec::TransposeArgs { x: &x, y: &mut y })
                .unwrap(),
        )
    };
    if tiled {
        // The spec's raw grid: ceil(N / 32) by ceil(M / 32) tiles of 32 x 8 threads.
        assert_eq!(grid, [n.div_ceil(32) as u32, m.div_ceil(32) as u32, 1]);
        assert_eq!(block, [32, 8, 1]);
    }
    let out = y.to_host(&stream).unwrap();
    let name = if tiled {
        "transpose_tiled"
    } else {
        "transpose"
    };
    for j in 0..n {
        for i in 0..m {
            let (got, want) = (out[j * m + i], xh[i * n + j]);
            // A copy: exact.
            assert!(
                got.to_bits() == want.to_bits(),
                "{name} [{m}, {n}]: y[{j}, {i}] = {got}, expected x[{i}, {j}] = {want}"
            );
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn transpose_matches_reference_on_ragged_shapes() {
    for (k, &(m, n)) in TRANSPOSE_SHAPES.iter().enumerate() {
        transpose_case(false, m, n, 70 + k as u64);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn transpose_tiled_matches_reference_on_ragged_shapes() {
    for (k, &(m, n)) in TRANSPOSE_SHAPES.iter().enumerate() {
        transpose_case(true, m, n, 80 + k as u64);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn transposes_refuse_an_untransposed_output_before_launching() {
    let (m, n) = (77, 45);
    let (ctx, stream) = gpu();
    let kernels = transpose_spec::Kernels::load(&ctx).unwrap();
    let x = Tensor::from_host(&stream, &f32s(m * n, 90), &[m, n]).unwrap();

    for tiled in [false, true] {
        let name = if tiled {
            "transpose_tiled"
        } else {
            "transpose"
        };
        // y as [M, N]: the shape of x, not of its transpose.
        let mut y = Tensor::full(&stream, f32::NAN, &[m, n]).unwrap();
        let result = if tiled {
            kernels.transpose_tiled.launch(
                &stream,
                transpose_spec::TransposeTiledArgs { x: &x, y: &mut y },
            )
        } else {
            kernels
                .transpose
                .launch(&stream, transpose_spec::TransposeArgs { x: &x, y: &mut y })
        };
        let e = refused(result, name);
        expect(&e, "Dim y[0] = N", |v| {
            matches!(v, Violation::Dim { arg: "y", position: 0, extent: "N", expected, actual, .. }
                if *expected == n as i64 && *actual == m)
        });
        expect(&e, "Dim y[1] = M", |v| {
            matches!(v, Violation::Dim { arg: "y", position: 1, extent: "M", expected, actual, .. }
                if *expected == m as i64 && *actual == n)
        });
        assert_untouched(&stream, &y, "y");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn transpose_tiled_refuses_a_non_contiguous_input_before_launching() {
    let (m, n) = (77, 45);
    let (ctx, stream) = gpu();
    let kernels = transpose_spec::Kernels::load(&ctx).unwrap();
    // A transposed view [M, N] with strides [1, M]; the spec does not say `strided`.
    let x = Tensor::from_host(&stream, &f32s(m * n, 91), &[n, m])
        .unwrap()
        .permute(&[1, 0])
        .unwrap();
    assert_eq!(
        (x.shape(), x.strides()),
        (&[m, n][..], &[1, m as isize][..])
    );
    let mut y = Tensor::full(&stream, f32::NAN, &[n, m]).unwrap();
    let e = refused(
        kernels.transpose_tiled.launch(
            &stream,
            transpose_spec::TransposeTiledArgs { x: &x, y: &mut y },
        ),
        "transpose_tiled",
    );
    expect(&e, "Stride x not contiguous at 0", |v| {
        matches!(v, Violation::Stride { arg: "x", fault: StrideFault::NotContiguous { position: 0, expected, actual: 1 }, .. }
            if *expected == n as isize)
    });
    assert_untouched(&stream, &y, "y");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn transposes_skip_an_empty_launch() {
    // Unlike affine_view, both say nothing of empty launches: the default skips them.
    let (ctx, stream) = gpu();
    let kernels = transpose_spec::Kernels::load(&ctx).unwrap();
    for (m, n) in [(0, 45), (45, 0)] {
        let x = Tensor::<f32>::from_host(&stream, &[], &[m, n]).unwrap();
        // An empty view of a poisoned buffer (an empty tensor's own buffer is one zero).
        let mut y = Tensor::full(&stream, f32::NAN, &[4])
            .unwrap()
            .with_layout(&[n, m], &[m.max(1) as isize, 1], 0)
            .unwrap();
        let plain = kernels
            .transpose
            .launch(&stream, transpose_spec::TransposeArgs { x: &x, y: &mut y })
            .unwrap();
        assert_eq!(plain, Launched::Skipped, "transpose [{m}, {n}]");
        let tiled = kernels
            .transpose_tiled
            .launch(
                &stream,
                transpose_spec::TransposeTiledArgs { x: &x, y: &mut y },
            )
            .unwrap();
        assert_eq!(tiled, Launched::Skipped, "transpose_tiled [{m}, {n}]");
        assert_untouched(&stream, &y, "y's buffer");
    }
}

// ---------------------------------------------------------------------------------------
// strided.ima: affine_view over views of x, and `empty refuse`

const A: f32 = 1.5;
const B: f32 = -0.25;

/// Launches affine_view on the view `x` of `[m, n]`; `x_at(i, j)` is the reference x[i, j].
fn affine_case(
    what: &str,
    x: &Tensor<f32>,
    x_at: impl Fn(usize, usize) -> f32,
    stream: &Arc<CudaStream>,
    kernels: &strided_spec::Kernels,
) {
    let (m, n) = (x.shape()[0], x.shape()[1]);
    let mut y = Tensor::full(stream, f32::NAN, &[m, n]).unwrap();
    done(
        kernels
            .affine_view
            .launch(
                stream,
                strided_spec::AffineViewArgs {
                    x,
                    y: &mut y,
                    a: A,
                    b: B,
                },
            )
            .unwrap(),
    );
    let out = y.to_host(stream).unwrap();
    for i in 0..m {
        for j in 0..n {
            let xv = f64::from(x_at(i, j));
            let want = f64::from(A) * xv + f64::from(B);
            let tol = 1e-5 * (f64::from(A) * xv.abs() + f64::from(B).abs());
            let at = || format!("{what}: y[{i}, {j}]");
            close(f64::from(out[i * n + j]), want, tol, at);
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn affine_view_reads_a_transposed_view() {
    let (m, n) = (77, 45);
    let (ctx, stream) = gpu();
    let kernels = strided_spec::Kernels::load(&ctx).unwrap();
    // Held as [N, M], seen as [M, N] with strides [1, M].
    let xh = f32s(n * m, 101);
    let x = Tensor::from_host(&stream, &xh, &[n, m])
        .unwrap()
        .permute(&[1, 0])
        .unwrap();
    assert_eq!(x.strides(), &[1, m as isize]);
    affine_case("transposed", &x, |i, j| xh[j * m + i], &stream, &kernels);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn affine_view_reads_an_offset_strided_slice() {
    let (m, n) = (77, 45);
    let (rows, cols) = (m + 5, 2 * n + 7);
    let (ctx, stream) = gpu();
    let kernels = strided_spec::Kernels::load(&ctx).unwrap();
    // x = base[3 .. 3 + M, 5 .. 5 + 2N : 2]: an offset, a row pitch wider than the row, and
    // every other column.
    let xh = f32s(rows * cols, 102);
    let offset = 3 * cols + 5;
    let x = Tensor::from_host(&stream, &xh, &[rows, cols])
        .unwrap()
        .with_layout(&[m, n], &[cols as isize, 2], offset)
        .unwrap();
    affine_case(
        "slice",
        &x,
        |i, j| xh[offset + i * cols + 2 * j],
        &stream,
        &kernels,
    );
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn affine_view_reads_broadcast_and_flipped_views() {
    let (m, n) = (77, 45);
    let (ctx, stream) = gpu();
    let kernels = strided_spec::Kernels::load(&ctx).unwrap();

    // One row broadcast to M rows (row stride 0).
    let row = f32s(n, 103);
    let x = Tensor::from_host(&stream, &row, &[n])
        .unwrap()
        .with_layout(&[m, n], &[0, 1], 0)
        .unwrap();
    affine_case("broadcast", &x, |_, j| row[j], &stream, &kernels);

    // Rows in reverse order (a negative row stride from the last row).
    let xh = f32s(m * n, 104);
    let x = Tensor::from_host(&stream, &xh, &[m, n])
        .unwrap()
        .with_layout(&[m, n], &[-(n as isize), 1], (m - 1) * n)
        .unwrap();
    affine_case(
        "flipped",
        &x,
        |i, j| xh[(m - 1 - i) * n + j],
        &stream,
        &kernels,
    );
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn affine_view_refuses_an_empty_view() {
    let n = 45;
    let (ctx, stream) = gpu();
    let kernels = strided_spec::Kernels::load(&ctx).unwrap();
    let x = Tensor::<f32>::from_host(&stream, &[], &[0, n]).unwrap();
    // An empty view of a poisoned 4-row buffer: whatever ran would find the buffer there.
    let mut y = Tensor::full(&stream, f32::NAN, &[4, n])
        .unwrap()
        .with_layout(&[0, n], &[n as isize, 1], 0)
        .unwrap();
    let e = refused(
        kernels.affine_view.launch(
            &stream,
            strided_spec::AffineViewArgs {
                x: &x,
                y: &mut y,
                a: A,
                b: B,
            },
        ),
        "affine_view",
    );
    expect(
        &e,
        "Empty y [0, N]",
        |v| matches!(v, Violation::Empty { arg: "y", shape } if shape == &[0, n]),
    );
    assert_eq!(
        e.violations.len(),
        1,
        "the empty view is the only fault:\n{e}"
    );
    assert!(e.to_string().contains("refuses empty launches"), "{e}");
    assert_untouched(&stream, &y, "y's buffer");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn affine_view_refuses_a_wrong_output_before_launching() {
    let (m, n) = (77, 45);
    let (ctx, stream) = gpu();
    let kernels = strided_spec::Kernels::load(&ctx).unwrap();
    let x = Tensor::from_host(&stream, &f32s(m * n, 105), &[m, n]).unwrap();

    // y one column wider than x.
    let mut y = Tensor::full(&stream, f32::NAN, &[m, n + 1]).unwrap();
    let e = refused(
        kernels.affine_view.launch(
            &stream,
            strided_spec::AffineViewArgs {
                x: &x,
                y: &mut y,
                a: A,
                b: B,
            },
        ),
        "affine_view",
    );
    expect(&e, "Dim y[1] = N", |v| {
        matches!(v, Violation::Dim { arg: "y", position: 1, extent: "N", expected, actual, .. }
            if *expected == n as i64 && *actual == n + 1)
    });
    assert!(e.to_string().contains("bound by x.shape[1]"), "{e}");
    assert_untouched(&stream, &y, "y");

    // A transposed output view: x may be strided, y may not.
    let mut y = Tensor::full(&stream, f32::NAN, &[n, m])
        .unwrap()
        .permute(&[1, 0])
        .unwrap();
    let e = refused(
        kernels.affine_view.launch(
            &stream,
            strided_spec::AffineViewArgs {
                x: &x,
                y: &mut y,
                a: A,
                b: B,
            },
        ),
        "affine_view",
    );
    expect(&e, "Stride y not contiguous", |v| {
        matches!(v, Violation::Stride { arg: "y", fault: StrideFault::NotContiguous { position: 0, expected, actual: 1 }, .. }
            if *expected == n as isize)
    });
    assert_untouched(&stream, &y, "y");
}
