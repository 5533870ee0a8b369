//! Real launches, on a GPU: `cargo test -p ima-runtime --test gpu -- --ignored`.
//!
//! The kernel is hand-written in the ABI of `contract.rs` (what codegen emits), so these
//! tests pin the runtime's half of that ABI: argument order, logical strides under
//! `stored`, index width, stream-ordered borrows.

#[path = "common/attn.rs"]
mod attn;

use std::sync::Arc;

use attn::ATTN;
use ima_runtime::cudarc::driver::DevicePtr;
use ima_runtime::cudarc::driver::{CudaContext, CudaStream};
use ima_runtime::half::f16;
use ima_runtime::{
    DType, DeviceId, Error, IndexWidth, Kernel, KernelArg, Launched, Module, RawTensor, Scalar,
    Tensor, TensorView, TensorViewMut, Violation,
};

/// What codegen would emit for `ATTN`, by hand.
const SOURCE: &str = r#"
#include <cuda_fp16.h>
template <typename I>
__device__ void attn(const __half* q, I q0, I q1, I q2, I q3,
                     const __half* k, I k0, I k1, I k2, I k3,
                     float* o, I o0, I o1, I o2, I o3,
                     I B, I H, I S, I D, I T, float scale) {
    I n = B * H * S * T;
    for (I idx = (I)blockIdx.x * (I)blockDim.x + (I)threadIdx.x; idx < n;
         idx += (I)gridDim.x * (I)blockDim.x) {
        I j = idx % T, r = idx / T;
        I i = r % S; r /= S;
        I h = r % H, b = r / H;
        float acc = 0.f;
        for (I d = 0; d < D; ++d)
            acc += __half2float(q[b * q0 + h * q1 + i * q2 + d * q3]) *
                   __half2float(k[b * k0 + h * k1 + j * k2 + d * k3]);
        o[b * o0 + h * o1 + i * o2 + j * o3] = acc * scale;
    }
}
#define ARGS(I) const __half* q, I q0, I q1, I q2, I q3, const __half* k, I k0, I k1, I k2, \
    I k3, float* o, I o0, I o1, I o2, I o3, I B, I H, I S, I D, I T, float scale
#define CALL q, q0, q1, q2, q3, k, k0, k1, k2, k3, o, o0, o1, o2, o3, B, H, S, D, T, scale
extern "C" __global__ void __launch_bounds__(256) attn_scores_i32(ARGS(int)) { attn<int>(CALL); }
extern "C" __global__ void __launch_bounds__(256) attn_scores_i64(ARGS(long long)) {
    attn<long long>(CALL);
}
"#;

fn setup() -> (Arc<CudaStream>, Kernel) {
    let ctx = CudaContext::new(0).unwrap_or_else(|e| panic!("{e}"));
    let stream = ctx.default_stream();
    let module = Module::compile(&ctx, "specs/attn.ima", SOURCE).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(module.log(), "");
    let kernel = module.kernel(&ATTN).unwrap_or_else(|e| panic!("{e}"));
    (stream, kernel)
}

fn values(n: usize, seed: usize) -> Vec<f16> {
    (0..n)
        .map(|i| f16::from_f32(((i * 7 + seed) % 13) as f32 / 8.0 - 0.75))
        .collect()
}

/// The reference on the host, with k given physically as `[B, T, H, D]`.
#[allow(clippy::too_many_arguments)]
fn reference(
    q: &[f16],
    k: &[f16],
    b: usize,
    h: usize,
    s: usize,
    t: usize,
    d: usize,
    scale: f32,
) -> Vec<f32> {
    let mut o = vec![0f32; b * h * s * t];
    for bi in 0..b {
        for hi in 0..h {
            for i in 0..s {
                for j in 0..t {
                    let acc: f32 = (0..d)
                        .map(|x| {
                            q[((bi * h + hi) * s + i) * d + x].to_f32()
                                * k[((bi * t + j) * h + hi) * d + x].to_f32()
                        })
                        .sum();
                    o[((bi * h + hi) * s + i) * t + j] = acc * scale;
                }
            }
        }
    }
    o
}

/// Launches `kernel` on a case of 2 x 3 x 17 x 29 scores of 16 dimensions and compares
/// them with the host's reference.
fn launch_and_compare(stream: &Arc<CudaStream>, kernel: &Kernel) -> Launched {
    let (b, h, s, t, d) = (2, 3, 17, 29, 16);
    let (qh, kh) = (values(b * h * s * d, 1), values(b * t * h * d, 5));
    let q = Tensor::from_host(stream, &qh, &[b, h, s, d]).unwrap();
    let k = Tensor::from_host(stream, &kh, &[b, t, h, d]).unwrap();
    let mut o = Tensor::<f32>::zeros(stream, &[b, h, s, t]).unwrap();
    let launched = kernel
        .launch(
            stream,
            &mut [
                KernelArg::read(&q),
                KernelArg::read(&k),
                KernelArg::write(&mut o),
            ],
            &[Scalar::F32(0.5)],
        )
        .unwrap_or_else(|e| panic!("{e}"));
    let got = o.to_host(stream).unwrap();
    let want = reference(&qh, &kh, b, h, s, t, d, 0.5);
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert!((g - w).abs() < 1e-3, "o[{i}] = {g}, expected {w}");
    }
    launched
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn launches_and_matches_the_reference() {
    let (stream, kernel) = setup();
    assert_eq!(
        launch_and_compare(&stream, &kernel),
        Launched::Done {
            grid: [12, 1, 1],
            block: [256, 1, 1],
            index: IndexWidth::I32
        }
    );
}

/// What a generated crate ships for `--arch`: the SASS of the device's architecture loads
/// and runs; SASS the device cannot run (sm_80's on a 9.0 device) falls back to the PTX
/// beside it, which the driver compiles.
#[test]
#[ignore = "needs a CUDA GPU"]
fn shipped_sass_loads_and_sass_of_another_architecture_falls_back_to_ptx() {
    let ctx = CudaContext::new(0).unwrap_or_else(|e| panic!("{e}"));
    let stream = ctx.default_stream();
    let (major, minor) = ctx.compute_capability().unwrap();
    // SASS of another major version (CUDA 13 compiles for sm_75 and later).
    let other = if major == 8 { "sm_75" } else { "sm_80" };
    for arch in [ima_runtime::arch_for(major, minor), other.to_string()] {
        let image = ima_runtime::compile_cuda(SOURCE, "specs/attn.ima", &arch)
            .unwrap_or_else(|e| panic!("{arch}: {e}"));
        let module = Module::load_cubin(&ctx, "specs/attn.ima", &image.cubin, &image.ptx)
            .unwrap_or_else(|e| panic!("{arch}: {e}"));
        let kernel = module
            .kernel(&ATTN)
            .unwrap_or_else(|e| panic!("{arch}: {e}"));
        launch_and_compare(&stream, &kernel);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn refuses_before_launching() {
    let (stream, kernel) = setup();
    let q = Tensor::<f16>::zeros(&stream, &[1, 2, 4, 64]).unwrap();
    let k = Tensor::<f16>::zeros(&stream, &[1, 8, 2, 32]).unwrap();
    let mut o = Tensor::<f32>::zeros(&stream, &[1, 2, 4, 8]).unwrap();
    let e = kernel
        .launch(
            &stream,
            &mut [
                KernelArg::read(&q),
                KernelArg::read(&k),
                KernelArg::write(&mut o),
            ],
            &[Scalar::F32(1.0)],
        )
        .unwrap_err();
    let Error::Launch(launch) = &e else {
        panic!("{e}")
    };
    assert!(matches!(
        launch.violations[..],
        [Violation::Dim {
            arg: "k",
            position: 3,
            ..
        }]
    ));
    assert!(
        e.to_string()
            .ends_with("argument k: shape[3] is 32, expected D = 64 (bound by q.shape[3])"),
        "{e}"
    );

    // A transposed view of q is not contiguous.
    let qt = Tensor::<f16>::zeros(&stream, &[1, 2, 64, 4])
        .unwrap()
        .permute(&[0, 1, 3, 2])
        .unwrap();
    let k = Tensor::<f16>::zeros(&stream, &[1, 8, 2, 64]).unwrap();
    let e = kernel
        .launch(
            &stream,
            &mut [
                KernelArg::read(&qt),
                KernelArg::read(&k),
                KernelArg::write(&mut o),
            ],
            &[Scalar::F32(1.0)],
        )
        .unwrap_err();
    assert!(e.to_string().contains("argument q: not contiguous"), "{e}");

    // An output passed read-only.
    let q = Tensor::<f16>::zeros(&stream, &[1, 2, 4, 64]).unwrap();
    let e = kernel
        .launch(
            &stream,
            &mut [
                KernelArg::read(&q),
                KernelArg::read(&k),
                KernelArg::read(&o),
            ],
            &[Scalar::F32(1.0)],
        )
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("argument o: the kernel writes it, but it was passed read-only"),
        "{e}"
    );
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn empty_domain_is_skipped_and_sync_mode_runs() {
    let (stream, kernel) = setup();
    let q = Tensor::<f16>::zeros(&stream, &[1, 2, 0, 8]).unwrap();
    let k = Tensor::<f16>::zeros(&stream, &[1, 3, 2, 8]).unwrap();
    let mut o = Tensor::<f32>::zeros(&stream, &[1, 2, 0, 3]).unwrap();
    let mut args = [
        KernelArg::read(&q),
        KernelArg::read(&k),
        KernelArg::write(&mut o),
    ];
    assert_eq!(
        kernel
            .launch(&stream, &mut args, &[Scalar::F32(1.0)])
            .unwrap(),
        Launched::Skipped
    );

    kernel.set_sync(true);
    let q = Tensor::full(&stream, f16::from_f32(1.0), &[1, 2, 3, 8]).unwrap();
    let mut o = Tensor::<f32>::zeros(&stream, &[1, 2, 3, 3]).unwrap();
    let mut args = [
        KernelArg::read(&q),
        KernelArg::read(&k),
        KernelArg::write(&mut o),
    ];
    let done = kernel
        .launch(&stream, &mut args, &[Scalar::F32(1.0)])
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(matches!(
        done,
        Launched::Done {
            grid: [1, 1, 1],
            ..
        }
    ));
    assert_eq!(o.to_host(&stream).unwrap(), vec![0.0; 18]);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn views_gather_in_logical_order() {
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.default_stream();
    let data: Vec<i32> = (0..24).collect();
    let t = Tensor::from_host(&stream, &data, &[2, 3, 4]).unwrap();
    assert_eq!(t.strides(), [12, 4, 1]);
    let p = t.permute(&[2, 0, 1]).unwrap();
    assert_eq!((p.shape(), p.strides()), (&[4, 2, 3][..], &[1, 12, 4][..]));
    let host = p.to_host(&stream).unwrap();
    assert_eq!(&host[..6], [0, 4, 8, 12, 16, 20]);
    // A reversed view of the first row, through a negative stride.
    let r = p.with_layout(&[4], &[-1], 3).unwrap();
    assert_eq!(r.to_host(&stream).unwrap(), [3, 2, 1, 0]);
    let meta = r.meta();
    assert_eq!(
        (meta.dtype, meta.buffer_len, meta.device.ordinal),
        (DType::I32, 24, 0)
    );
    // Views outside the buffer are refused.
    let e = r.with_layout(&[4], &[-1], 2).unwrap_err();
    assert!(e.to_string().contains("reaches outside its buffer"), "{e}");
    let e = Tensor::from_host(&stream, &data, &[5, 5]).unwrap_err();
    assert!(
        matches!(
            e,
            Error::HostLen {
                expected: 25,
                actual: 24,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_tensor_whose_bytes_overflow_is_refused_not_allocated_short() {
    // (2^62 + 1) f32s: cudarc's unchecked byte count would wrap to 4 bytes, a buffer that
    // records 2^62 + 1 elements and that any launch past its first would overrun.
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.default_stream();
    let huge = [(1usize << 62) + 1];
    let e = Tensor::<f32>::zeros(&stream, &huge).unwrap_err();
    assert!(e.to_string().contains("size in bytes overflows"), "{e}");
    // One element broadcast to as many: a valid view, whose contiguous copy is refused
    // before its allocation, and whose host copy cannot be made.
    let one = Tensor::<f32>::zeros(&stream, &[1]).unwrap();
    let wide = one.with_layout(&huge, &[0], 0).unwrap();
    let e = wide.contiguous(&stream).unwrap_err();
    assert!(e.to_string().contains("size in bytes overflows"), "{e}");
    let e = wide.to_host(&stream).unwrap_err();
    assert!(e.to_string().contains("does not fit in memory"), "{e}");
}

/// Needs 8 GiB of the GPU's memory: an output of 2^31 f32s.
#[test]
#[ignore = "needs a CUDA GPU"]
fn past_two_billion_elements_uses_64_bit_indices() {
    let (stream, kernel) = setup();
    let (s, t, d) = (1 << 16, 1 << 15, 8);
    let one = f16::from_f32(1.0);
    let q = Tensor::full(&stream, one, &[1, 1, s, d]).unwrap();
    let k = Tensor::full(&stream, one, &[1, t, 1, d]).unwrap();
    let mut o = Tensor::<f32>::zeros(&stream, &[1, 1, s, t]).unwrap();
    let mut args = [
        KernelArg::read(&q),
        KernelArg::read(&k),
        KernelArg::write(&mut o),
    ];
    let done = kernel
        .launch(&stream, &mut args, &[Scalar::F32(0.5)])
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        done,
        Launched::Done {
            grid: [65536, 1, 1],
            block: [256, 1, 1],
            index: IndexWidth::I64
        }
    );
    let n = s * t;
    for range in [0..1024, n - 1024..n] {
        let part = stream.clone_dtoh(&o.slice().slice(range)).unwrap();
        assert!(part.iter().all(|&x| x == 4.0), "{:?}", &part[..8]);
    }
}

/// Borrowed views of cudarc buffers pass the same launch as owned tensors: q and k are two
/// views into one buffer, o a mutable view of another; the result matches the reference,
/// and a partial read copies only the view.
#[test]
#[ignore = "needs a CUDA GPU"]
fn borrowed_views_launch_like_owned_tensors() {
    let (stream, kernel) = setup();
    let (b, h, s, t, d) = (2, 3, 17, 29, 16);
    let (qh, kh) = (values(b * h * s * d, 1), values(b * t * h * d, 5));
    let both: Vec<f16> = qh.iter().chain(&kh).copied().collect();
    let buf = stream.clone_htod(&both).unwrap();
    let mut out = stream.alloc_zeros::<f32>(b * h * s * t + 100).unwrap();
    let (qs, ks) = buf.split_at(qh.len());
    let q = TensorView::new(qs, &[b, h, s, d]).unwrap();
    let k = TensorView::new(ks, &[b, t, h, d]).unwrap();
    let mut o = TensorViewMut::new(out.slice_mut(100..), &[b, h, s, t]).unwrap();
    kernel
        .launch(
            &stream,
            &mut [
                KernelArg::read(&q),
                KernelArg::read(&k),
                KernelArg::write(&mut o),
            ],
            &[Scalar::F32(0.5)],
        )
        .unwrap_or_else(|e| panic!("{e}"));
    let want = reference(&qh, &kh, b, h, s, t, d, 0.5);
    let got = o.to_host(&stream).unwrap();
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert!((g - w).abs() < 1e-3, "o[{i}] = {g}, expected {w}");
    }
    // A partial read: the last row of the last head, through a narrower view.
    drop(o);
    let last = TensorView::new(out.slice(100..), &[b, h, s, t])
        .unwrap()
        .with_layout(&[t], &[1], (b * h * s - 1) * t)
        .unwrap();
    let row = last.to_host(&stream).unwrap();
    assert_eq!(row, want[want.len() - t..]);
}

/// A view made from a raw pointer launches, and is refused like an owned tensor when its
/// output overlaps an input.
#[test]
#[ignore = "needs a CUDA GPU"]
fn raw_pointer_views_launch_and_are_checked() {
    let (stream, kernel) = setup();
    let (b, h, s, t, d) = (1, 2, 8, 8, 16);
    let (qh, kh) = (values(b * h * s * d, 2), values(b * t * h * d, 3));
    let q_buf = stream.clone_htod(&qh).unwrap();
    let k_buf = stream.clone_htod(&kh).unwrap();
    let o_buf = stream.alloc_zeros::<f32>(b * h * s * t).unwrap();
    let addr = |p: &dyn DevicePtr<f16>| p.device_ptr(&stream).0;
    let (qp, kp) = (addr(&q_buf), addr(&k_buf));
    let op = o_buf.device_ptr(&stream).0;
    let dev = DeviceId::of(stream.context());
    let contiguous = |shape: &[usize]| -> Vec<isize> {
        let mut st = vec![1isize; shape.len()];
        for i in (0..shape.len() - 1).rev() {
            st[i] = st[i + 1] * shape[i + 1] as isize;
        }
        st
    };
    // SAFETY: the buffers outlive the views and every launch is on their stream.
    let (q, k, mut o) = unsafe {
        let shape = [b, h, s, d];
        let q = RawTensor::borrowing(
            &q_buf,
            qp,
            qh.len(),
            DType::F16,
            &shape,
            &contiguous(&shape),
            0,
            dev,
        )
        .unwrap();
        let shape = [b, t, h, d];
        let k = RawTensor::borrowing(
            &k_buf,
            kp,
            kh.len(),
            DType::F16,
            &shape,
            &contiguous(&shape),
            0,
            dev,
        )
        .unwrap();
        let shape = [b, h, s, t];
        let o = RawTensor::borrowing(
            &o_buf,
            op,
            b * h * s * t,
            DType::F32,
            &shape,
            &contiguous(&shape),
            0,
            dev,
        )
        .unwrap();
        (q, k, o)
    };
    kernel
        .launch(
            &stream,
            &mut [
                KernelArg::read_raw(&q),
                KernelArg::read_raw(&k),
                KernelArg::write_raw(&mut o),
            ],
            &[Scalar::F32(1.0)],
        )
        .unwrap_or_else(|e| panic!("{e}"));
    let bytes = o.to_bytes(&stream).unwrap();
    let got: Vec<f32> = bytes
        .chunks(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let want = reference(&qh, &kh, b, h, s, t, d, 1.0);
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert!((g - w).abs() < 1e-3, "o[{i}] = {g}, expected {w}");
    }
    // An output written over q's memory is refused before anything launches.
    // SAFETY: refused, never launched.
    let mut over = unsafe {
        let shape = [b, h, s, t];
        RawTensor::from_raw(
            qp,
            qh.len() / 2,
            DType::F32,
            &shape,
            &contiguous(&shape),
            0,
            dev,
        )
        .unwrap()
    };
    let e = kernel
        .launch(
            &stream,
            &mut [
                KernelArg::read_raw(&q),
                KernelArg::read_raw(&k),
                KernelArg::write_raw(&mut over),
            ],
            &[Scalar::F32(1.0)],
        )
        .unwrap_err();
    assert!(e.to_string().contains("overlap"), "{e}");
    // A view two bytes into q's f16s, read as f32: refused by a launch and by a device-side
    // copy alike, before a misaligned load could fault the context.
    // SAFETY: refused, never launched.
    let odd = unsafe { RawTensor::from_raw(qp + 2, 8, DType::F32, &[8], &[1], 0, dev).unwrap() };
    let e = odd.contiguous(&stream).unwrap_err();
    assert!(
        e.to_string().contains("not a multiple of its element size"),
        "{e}"
    );
    stream.synchronize().unwrap();
}

/// `contiguous()` copies a transposed view on the device into a row-major tensor.
#[test]
#[ignore = "needs a CUDA GPU"]
fn contiguous_copies_a_strided_view_on_the_device() {
    let (stream, _kernel) = setup();
    let host: Vec<f16> = (0..6 * 5).map(|i| f16::from_f32(i as f32)).collect();
    let t = Tensor::from_host(&stream, &host, &[6, 5])
        .unwrap()
        .permute(&[1, 0])
        .unwrap();
    let c = t.contiguous(&stream).unwrap();
    assert_eq!(c.shape(), [5, 6]);
    assert_eq!(c.strides(), [6, 1]);
    // Element (j, i) of the transpose is the original's (i, j), i * 5 + j.
    let want: Vec<f16> = (0..5)
        .flat_map(|j| (0..6).map(move |i| f16::from_f32((i * 5 + j) as f32)))
        .collect();
    assert_eq!(c.to_host(&stream).unwrap(), want);
    // A reversed, offset view of bytes (f64, 8 bytes an element), through a borrowed view.
    let wide: Vec<f64> = (0..10).map(f64::from).collect();
    let w = Tensor::from_host(&stream, &wide, &[10]).unwrap();
    let v = w.view().with_layout(&[4], &[-2], 9).unwrap();
    let c = v.contiguous(&stream).unwrap();
    assert_eq!(c.to_host(&stream).unwrap(), [9.0, 7.0, 5.0, 3.0]);
    assert_eq!(w.read_range(&stream, 2..4).unwrap(), [2.0, 3.0]);
}
