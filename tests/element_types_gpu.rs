//! Every element type of the spec language, through generated stubs, on a GPU.

#[allow(dead_code)]
mod types {
    include!("out/element_types.rs");
}

use ima::cudarc::driver::CudaContext;
use ima::half::{bf16, f16};
use ima::{F8E4M3, F8E5M2, Tensor};

#[test]
#[ignore = "needs a CUDA GPU"]
fn fp8_inputs_widen_exactly() {
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.new_stream().unwrap();
    let kernels = types::Kernels::load(&ctx).unwrap();
    let values = [0.0f32, 1.0, -2.5, 0.125, 448.0, -0.0625, 3.0];
    let a: Vec<F8E4M3> = values.iter().map(|&v| F8E4M3::from_f32(v)).collect();
    let b: Vec<F8E5M2> = values.iter().map(|&v| F8E5M2::from_f32(v / 2.0)).collect();
    let n = values.len();
    let at = Tensor::from_host(&stream, &a, &[n]).unwrap();
    let bt = Tensor::from_host(&stream, &b, &[n]).unwrap();
    let mut y = Tensor::full(&stream, f32::NAN, &[n]).unwrap();
    kernels
        .widen_fp8
        .launch(
            &stream,
            types::WidenFp8Args {
                a: &at,
                b: &bt,
                y: &mut y,
            },
        )
        .unwrap();
    let got = y.to_host(&stream).unwrap();
    for i in 0..n {
        assert_eq!(got[i], a[i].to_f32() + b[i].to_f32(), "element {i}");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn every_other_element_type_reads_back_exactly() {
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.new_stream().unwrap();
    let kernels = types::Kernels::load(&ctx).unwrap();
    let n = 37;
    let up = |i: usize| i as f64;
    let t = |v: Vec<_>| v;
    let a = Tensor::from_host(
        &stream,
        &t((0..n).map(|i| -(i as i8)).collect::<Vec<i8>>()),
        &[n],
    )
    .unwrap();
    let b =
        Tensor::from_host(&stream, &(0..n).map(|i| i as u8).collect::<Vec<u8>>(), &[n]).unwrap();
    let c = Tensor::from_host(
        &stream,
        &(0..n).map(|i| -300 * i as i16).collect::<Vec<i16>>(),
        &[n],
    )
    .unwrap();
    let d = Tensor::from_host(
        &stream,
        &(0..n).map(|i| 1000 * i as u16).collect::<Vec<u16>>(),
        &[n],
    )
    .unwrap();
    let e = Tensor::from_host(
        &stream,
        &(0..n).map(|i| -70000 * i as i32).collect::<Vec<i32>>(),
        &[n],
    )
    .unwrap();
    let f = Tensor::from_host(
        &stream,
        &(0..n).map(|i| 90000 * i as u32).collect::<Vec<u32>>(),
        &[n],
    )
    .unwrap();
    let g = Tensor::from_host(
        &stream,
        &(0..n)
            .map(|i| -(1i64 << 40) * i as i64)
            .collect::<Vec<i64>>(),
        &[n],
    )
    .unwrap();
    let h = Tensor::from_host(
        &stream,
        &(0..n)
            .map(|i| (1u64 << 41) * i as u64)
            .collect::<Vec<u64>>(),
        &[n],
    )
    .unwrap();
    let p = Tensor::from_host(
        &stream,
        &(0..n)
            .map(|i| f16::from_f64(up(i) / 4.0))
            .collect::<Vec<f16>>(),
        &[n],
    )
    .unwrap();
    let q = Tensor::from_host(
        &stream,
        &(0..n)
            .map(|i| bf16::from_f64(up(i) * 2.0))
            .collect::<Vec<bf16>>(),
        &[n],
    )
    .unwrap();
    let r = Tensor::from_host(
        &stream,
        &(0..n).map(|i| up(i) as f32 * 0.5).collect::<Vec<f32>>(),
        &[n],
    )
    .unwrap();
    let s = Tensor::from_host(
        &stream,
        &(0..n).map(|i| up(i) * 1e-3).collect::<Vec<f64>>(),
        &[n],
    )
    .unwrap();
    let mut y = Tensor::full(&stream, f64::NAN, &[n]).unwrap();
    kernels
        .sum_all
        .launch(
            &stream,
            types::SumAllArgs {
                a: &a,
                b: &b,
                c: &c,
                d: &d,
                e: &e,
                f: &f,
                g: &g,
                h: &h,
                p: &p,
                q: &q,
                r: &r,
                s: &s,
                y: &mut y,
            },
        )
        .unwrap();
    let got = y.to_host(&stream).unwrap();
    for (i, &v) in got.iter().enumerate() {
        let x = i as f64;
        let want = -x + x - 300.0 * x + 1000.0 * x - 70000.0 * x + 90000.0 * x
            - (1u64 << 40) as f64 * x
            + (1u64 << 41) as f64 * x
            + x / 4.0
            + x * 2.0
            + x * 0.5
            + x * 1e-3;
        assert!(
            (v - want).abs() <= 1e-9 * want.abs().max(1.0),
            "element {i}: {v}, expected {want}"
        );
    }
}

/// `store_pair` on an output of every element type: each pair of f32 values lands at
/// elements j and j + 1 of its row, converted as C++'s static_cast does (integers truncate
/// toward zero; the values are exact in every floating type, fp8 included). ce576e3 made
/// the multi-word types compile; this runs them.
#[test]
#[ignore = "needs a CUDA GPU"]
fn pairs_of_every_element_type_store_both_elements_converted() {
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.new_stream().unwrap();
    let kernels = types::Kernels::load(&ctx).unwrap();
    let (m, n) = (3, 32);
    let exact = [
        0.0f32, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 5.0, 6.0, 7.0,
    ];
    let values: Vec<f32> = (0..m * n)
        .map(|k| exact[(7 * k + k / 5) % exact.len()])
        .collect();
    let x = Tensor::from_host(&stream, &values, &[m, n]).unwrap();
    let mut a = Tensor::full(&stream, 99i8, &[m, n]).unwrap();
    let mut b = Tensor::full(&stream, 99u8, &[m, n]).unwrap();
    let mut c = Tensor::full(&stream, 99i16, &[m, n]).unwrap();
    let mut d = Tensor::full(&stream, 99u16, &[m, n]).unwrap();
    let mut e = Tensor::full(&stream, 99i32, &[m, n]).unwrap();
    let mut f = Tensor::full(&stream, 99u32, &[m, n]).unwrap();
    let mut g = Tensor::full(&stream, 99i64, &[m, n]).unwrap();
    let mut h = Tensor::full(&stream, 99u64, &[m, n]).unwrap();
    let mut p = Tensor::full(&stream, f16::NAN, &[m, n]).unwrap();
    let mut q = Tensor::full(&stream, bf16::NAN, &[m, n]).unwrap();
    let mut r = Tensor::full(&stream, f32::NAN, &[m, n]).unwrap();
    let mut s = Tensor::full(&stream, f64::NAN, &[m, n]).unwrap();
    let mut t = Tensor::full(&stream, F8E4M3::from_f32(f32::NAN), &[m, n]).unwrap();
    let mut u = Tensor::full(&stream, F8E5M2::from_f32(f32::NAN), &[m, n]).unwrap();
    kernels
        .pairs_of_every_type
        .launch(
            &stream,
            types::PairsOfEveryTypeArgs {
                x: &x,
                a: &mut a,
                b: &mut b,
                c: &mut c,
                d: &mut d,
                e: &mut e,
                f: &mut f,
                g: &mut g,
                h: &mut h,
                p: &mut p,
                q: &mut q,
                r: &mut r,
                s: &mut s,
                t: &mut t,
                u: &mut u,
            },
        )
        .unwrap();
    let got: Vec<[f64; 14]> = {
        let (a, b, c, d) = (
            a.to_host(&stream).unwrap(),
            b.to_host(&stream).unwrap(),
            c.to_host(&stream).unwrap(),
            d.to_host(&stream).unwrap(),
        );
        let (e, f, g, h) = (
            e.to_host(&stream).unwrap(),
            f.to_host(&stream).unwrap(),
            g.to_host(&stream).unwrap(),
            h.to_host(&stream).unwrap(),
        );
        let (p, q, r, s) = (
            p.to_host(&stream).unwrap(),
            q.to_host(&stream).unwrap(),
            r.to_host(&stream).unwrap(),
            s.to_host(&stream).unwrap(),
        );
        let (t, u) = (t.to_host(&stream).unwrap(), u.to_host(&stream).unwrap());
        (0..m * n)
            .map(|k| {
                [
                    a[k] as f64,
                    b[k] as f64,
                    c[k] as f64,
                    d[k] as f64,
                    e[k] as f64,
                    f[k] as f64,
                    g[k] as f64,
                    h[k] as f64,
                    p[k].to_f64(),
                    q[k].to_f64(),
                    r[k] as f64,
                    s[k],
                    t[k].to_f32() as f64,
                    u[k].to_f32() as f64,
                ]
            })
            .collect()
    };
    for (k, row) in got.iter().enumerate() {
        let v = values[k] as f64;
        for (ty, &y) in row.iter().enumerate() {
            let want = if ty < 8 { v.trunc() } else { v };
            assert_eq!(
                y,
                want,
                "element ({}, {}) of output {ty} (a .. u in order): x = {v}",
                k / n,
                k % n
            );
        }
    }
}
