//! One real refusal per violation class, on a GPU:
//! `cargo test -p ima-runtime --test gpu_refuse -- --ignored`.
//!
//! Each test launches a real kernel with one bad argument and asserts the typed error and
//! that the NaN-poisoned output buffer is untouched: the checker refused before anything
//! reached the GPU. (Index width is `gpu::past_two_billion_elements_uses_64_bit_indices`;
//! a tensor or a stream of another GPU is `fuzzer/tests/multi_gpu.rs`, on two GPUs.)
//! The kernels are hand-written in the ABI of `contract.rs`.

use std::sync::Arc;

use ima_runtime::cudarc::driver::{CudaContext, CudaStream};
use ima_runtime::half::f16;
use ima_runtime::{
    BinOp, Binding, Constraint, DType, DynTensor, EmptyPolicy, Error, Expr, Extent, Kernel,
    KernelArg, KernelContract, Launch, Launched, Module, Param, Role, Scalar, SharedArray,
    StrideFault, Symbol, Tensor, TensorArg, Violation,
};

const fn ext(text: &'static str, expr: Expr) -> Extent {
    Extent { text, expr }
}
const N: Expr = Expr::Sym(0);

/// `scale(x: f16[N] align(16), y: f32[N], s: f32) where N % 4 == 0`, refusing empty
/// launches.
static SCALE: KernelContract = KernelContract {
    name: "scale",
    signature: "scale(x: f16[N], y: f32[N], s: f32)",
    location: "tests/gpu_refuse.rs:1",
    symbols: &[Symbol {
        name: "N",
        bound_by: Binding { arg: 0, dim: 0 },
    }],
    args: &[
        TensorArg {
            name: "x",
            role: Role::In,
            dtype: DType::F16,
            dims: &[ext("N", N)],
            stored: &[0],
            strided: false,
            early: false,
            align: 16,
            values: None,
            tma: None,
        },
        TensorArg {
            name: "y",
            role: Role::Out,
            dtype: DType::F32,
            dims: &[ext("N", N)],
            stored: &[0],
            strided: false,
            early: false,
            align: 4,
            values: None,
            tma: None,
        },
    ],
    params: &[Param {
        name: "s",
        dtype: DType::F32,
    }],
    constraints: &[Constraint {
        text: "N % 4 == 0",
        expr: Expr::Bin(
            BinOp::Eq,
            &Expr::Bin(BinOp::Rem, &N, &Expr::Const(4)),
            &Expr::Const(0),
        ),
    }],
    shared: &[],
    launch: Launch::Threads { arg: 1 },
    empty: EmptyPolicy::Refuse,
    block: [128, 1, 1],
    block_from_occupancy: false,
    entry_i32: "scale_i32",
    entry_i64: "scale_i64",
};

/// `rowsum(x: f32[R, N], y: f32[R])`: a block per row, staging it in `shared tile: f32[N]`.
static ROWSUM: KernelContract = KernelContract {
    name: "rowsum",
    signature: "rowsum(x: f32[R, N], y: f32[R])",
    location: "tests/gpu_refuse.rs:2",
    symbols: &[
        Symbol {
            name: "R",
            bound_by: Binding { arg: 0, dim: 0 },
        },
        Symbol {
            name: "N",
            bound_by: Binding { arg: 0, dim: 1 },
        },
    ],
    args: &[
        TensorArg {
            name: "x",
            role: Role::In,
            dtype: DType::F32,
            dims: &[ext("R", Expr::Sym(0)), ext("N", Expr::Sym(1))],
            stored: &[0, 1],
            strided: false,
            early: false,
            align: 4,
            values: None,
            tma: None,
        },
        TensorArg {
            name: "y",
            role: Role::Out,
            dtype: DType::F32,
            dims: &[ext("R", Expr::Sym(0))],
            stored: &[0],
            strided: false,
            early: false,
            align: 4,
            values: None,
            tma: None,
        },
    ],
    params: &[],
    constraints: &[],
    shared: &[SharedArray {
        name: "tile",
        dtype: DType::F32,
        dims: &[ext("N", Expr::Sym(1))],
        align: 16,
    }],
    launch: Launch::Blocks { arg: 0, outer: 1 },
    empty: EmptyPolicy::Skip,
    block: [128, 1, 1],
    block_from_occupancy: false,
    entry_i32: "rowsum_i32",
    entry_i64: "rowsum_i64",
};

/// `fill(y: f32[N], gx: i32, gy: i32)` on the raw grid `(gx, gy)` of 32-thread blocks:
/// `y[i] = blockIdx.y` for the thread's flat index `i`.
static FILL: KernelContract = KernelContract {
    name: "fill",
    signature: "fill(y: f32[N], gx: i32, gy: i32)",
    location: "tests/gpu_refuse.rs:3",
    symbols: &[Symbol {
        name: "N",
        bound_by: Binding { arg: 0, dim: 0 },
    }],
    args: &[TensorArg {
        name: "y",
        role: Role::Out,
        dtype: DType::F32,
        dims: &[ext("N", N)],
        stored: &[0],
        strided: false,
        early: false,
        align: 4,
        values: None,
        tma: None,
    }],
    params: &[
        Param {
            name: "gx",
            dtype: DType::I32,
        },
        Param {
            name: "gy",
            dtype: DType::I32,
        },
    ],
    constraints: &[],
    shared: &[],
    launch: Launch::Grid {
        dims: &[Expr::Param(0), Expr::Param(1)],
        resident: ima_runtime::Resident::No,
        cluster: None,
    },
    empty: EmptyPolicy::Skip,
    block: [32, 1, 1],
    block_from_occupancy: false,
    entry_i32: "fill_i32",
    entry_i64: "fill_i64",
};

const SOURCE: &str = r#"
#include <cuda_fp16.h>
template <typename I>
__device__ void scale(const __half* x, I x0, float* y, I y0, I N, float s) {
    for (I i = (I)blockIdx.x * (I)blockDim.x + (I)threadIdx.x; i < N;
         i += (I)gridDim.x * (I)blockDim.x)
        y[i * y0] = __half2float(x[i * x0]) * s;
}
extern "C" __global__ void __launch_bounds__(128)
scale_i32(const __half* x, int x0, float* y, int y0, int N, float s) {
    scale<int>(x, x0, y, y0, N, s);
}
extern "C" __global__ void __launch_bounds__(128)
scale_i64(const __half* x, long long x0, float* y, long long y0, long long N, float s) {
    scale<long long>(x, x0, y, y0, N, s);
}

template <typename I>
__device__ void rowsum(const float* x, I x0, I x1, float* y, I y0, I R, I N) {
    extern __shared__ __align__(16) unsigned char ima_shared[];
    float* tile = reinterpret_cast<float*>(ima_shared);
    for (I r = (I)blockIdx.x; r < R; r += (I)gridDim.x) {
        for (I j = (I)threadIdx.x; j < N; j += (I)blockDim.x) tile[j] = x[r * x0 + j * x1];
        __syncthreads();
        if (threadIdx.x == 0) {
            float acc = 0.f;
            for (I j = 0; j < N; ++j) acc += tile[j];
            y[r * y0] = acc;
        }
        __syncthreads();
    }
}
extern "C" __global__ void __launch_bounds__(128)
rowsum_i32(const float* x, int x0, int x1, float* y, int y0, int R, int N) {
    rowsum<int>(x, x0, x1, y, y0, R, N);
}
extern "C" __global__ void __launch_bounds__(128)
rowsum_i64(const float* x, long long x0, long long x1, float* y, long long y0, long long R,
           long long N) {
    rowsum<long long>(x, x0, x1, y, y0, R, N);
}

template <typename I>
__device__ void fill(float* y, I y0, I N) {
    I i = ((I)blockIdx.y * (I)gridDim.x + (I)blockIdx.x) * (I)blockDim.x + (I)threadIdx.x;
    if (i < N) y[i * y0] = (float)blockIdx.y;
}
extern "C" __global__ void __launch_bounds__(32)
fill_i32(float* y, int y0, int N, int, int) { fill<int>(y, y0, N); }
extern "C" __global__ void __launch_bounds__(32)
fill_i64(float* y, long long y0, long long N, int, int) { fill<long long>(y, y0, N); }
"#;

struct Gpu {
    stream: Arc<CudaStream>,
    scale: Kernel,
    rowsum: Kernel,
    fill: Kernel,
}

fn setup() -> Gpu {
    let ctx = CudaContext::new(0).unwrap_or_else(|e| panic!("{e}"));
    let stream = ctx.default_stream();
    let module =
        Module::compile(&ctx, "tests/gpu_refuse.rs", SOURCE).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(module.log(), "");
    let kernel = |c| module.kernel(c).unwrap_or_else(|e| panic!("{e}"));
    Gpu {
        scale: kernel(&SCALE),
        rowsum: kernel(&ROWSUM),
        fill: kernel(&FILL),
        stream,
    }
}

fn halves(n: usize) -> Vec<f16> {
    (0..n).map(|i| f16::from_f32(i as f32)).collect()
}

fn poisoned(stream: &Arc<CudaStream>, n: usize) -> Tensor<f32> {
    Tensor::full(stream, f32::NAN, &[n]).unwrap()
}

/// The violations of a refused launch.
fn refused(result: Result<Launched, Error>) -> Vec<Violation> {
    match result {
        Err(Error::Launch(e)) => {
            eprintln!("{e}");
            e.violations
        }
        Err(e) => panic!("not a launch error: {e}"),
        Ok(done) => panic!("launched: {done:?}"),
    }
}

/// Every element of the output's whole buffer is still NaN.
fn untouched(stream: &Arc<CudaStream>, y: &Tensor<f32>) {
    let all = stream.clone_dtoh(y.slice()).unwrap();
    assert!(all.iter().all(|v| v.is_nan()), "{all:?}");
}

impl Gpu {
    fn run_scale<'a>(
        &self,
        x: KernelArg<'a>,
        y: &'a mut Tensor<f32>,
        s: Scalar,
    ) -> Result<Launched, Error> {
        self.scale
            .launch(&self.stream, &mut [x, KernelArg::write(y)], &[s])
    }
}

/// No GPU needed: the kernels compile cleanly and hold every entry point.
#[test]
fn the_test_kernels_compile() {
    let ptx = ima_runtime::compile_ptx_checked(SOURCE, "tests/gpu_refuse.rs", "sm_90")
        .unwrap_or_else(|e| panic!("{e}"));
    for c in [&SCALE, &ROWSUM, &FILL] {
        for entry in [c.entry_i32, c.entry_i64] {
            assert!(ptx.contains(&format!(".entry {entry}(")), "{entry}");
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_valid_launch_overwrites_the_poison() {
    let g = setup();
    let x = Tensor::from_host(&g.stream, &halves(8), &[8]).unwrap();
    let mut y = poisoned(&g.stream, 8);
    g.run_scale(KernelArg::read(&x), &mut y, Scalar::F32(2.0))
        .unwrap_or_else(|e| panic!("{e}"));
    let want: Vec<f32> = (0..8).map(|i| 2.0 * i as f32).collect();
    assert_eq!(y.to_host(&g.stream).unwrap(), want);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn rank() {
    let g = setup();
    let x = Tensor::from_host(&g.stream, &halves(8), &[2, 4]).unwrap();
    let mut y = poisoned(&g.stream, 8);
    let v = refused(g.run_scale(KernelArg::read(&x), &mut y, Scalar::F32(1.0)));
    assert!(
        matches!(
            v[..],
            [Violation::Rank {
                arg: "x",
                actual: 2,
                ..
            }]
        ),
        "{v:?}"
    );
    untouched(&g.stream, &y);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn dim() {
    let g = setup();
    let x = Tensor::from_host(&g.stream, &halves(8), &[8]).unwrap();
    let mut y = poisoned(&g.stream, 12);
    let v = refused(g.run_scale(KernelArg::read(&x), &mut y, Scalar::F32(1.0)));
    assert!(
        matches!(
            v[..],
            [Violation::Dim {
                arg: "y",
                expected: 8,
                actual: 12,
                ..
            }]
        ),
        "{v:?}"
    );
    untouched(&g.stream, &y);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn constraint() {
    let g = setup();
    let x = Tensor::from_host(&g.stream, &halves(6), &[6]).unwrap();
    let mut y = poisoned(&g.stream, 6);
    let v = refused(g.run_scale(KernelArg::read(&x), &mut y, Scalar::F32(1.0)));
    assert!(
        matches!(
            v[..],
            [Violation::Constraint {
                text: "N % 4 == 0",
                ..
            }]
        ),
        "{v:?}"
    );
    untouched(&g.stream, &y);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn dtype_of_an_untyped_tensor() {
    let g = setup();
    // Eight f32 where the kernel reads f16.
    let bytes: Vec<u8> = (0..8).flat_map(|i| (i as f32).to_le_bytes()).collect();
    let x = DynTensor::from_bytes(&g.stream, DType::F32, &bytes, &[8]).unwrap();
    let mut y = poisoned(&g.stream, 8);
    let v = refused(g.run_scale(KernelArg::read_dyn(&x), &mut y, Scalar::F32(1.0)));
    assert_eq!(
        v,
        [Violation::DType {
            arg: "x",
            expected: DType::F16,
            actual: DType::F32
        }]
    );
    untouched(&g.stream, &y);

    // The same values as f16, read from bytes, and an untyped output: accepted.
    let bytes: Vec<u8> = halves(8).iter().flat_map(|h| h.to_le_bytes()).collect();
    let x = DynTensor::from_bytes(&g.stream, DType::F16, &bytes, &[8]).unwrap();
    let mut y = DynTensor::zeros(&g.stream, DType::F32, &[8]).unwrap();
    g.scale
        .launch(
            &g.stream,
            &mut [KernelArg::read_dyn(&x), KernelArg::write_dyn(&mut y)],
            &[Scalar::F32(3.0)],
        )
        .unwrap_or_else(|e| panic!("{e}"));
    let got: Vec<f32> = y
        .to_bytes(&g.stream)
        .unwrap()
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    assert_eq!(got, (0..8).map(|i| 3.0 * i as f32).collect::<Vec<_>>());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn stride() {
    let g = setup();
    // Every other element of a buffer of 16.
    let x = Tensor::from_host(&g.stream, &halves(16), &[16])
        .unwrap()
        .with_layout(&[8], &[2], 0)
        .unwrap();
    let mut y = poisoned(&g.stream, 8);
    let v = refused(g.run_scale(KernelArg::read(&x), &mut y, Scalar::F32(1.0)));
    assert!(
        matches!(
            v[..],
            [Violation::Stride {
                arg: "x",
                fault: StrideFault::NotContiguous {
                    position: 0,
                    expected: 1,
                    actual: 2
                },
                ..
            }]
        ),
        "{v:?}"
    );
    untouched(&g.stream, &y);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn alignment_of_an_offset_view() {
    let g = setup();
    // One f16 (2 bytes) into the buffer: not the 16 bytes a vector load needs.
    let x = Tensor::from_host(&g.stream, &halves(12), &[12])
        .unwrap()
        .with_layout(&[8], &[1], 1)
        .unwrap();
    let mut y = poisoned(&g.stream, 8);
    let v = refused(g.run_scale(KernelArg::read(&x), &mut y, Scalar::F32(1.0)));
    assert!(
        matches!(
            v[..],
            [Violation::Align {
                arg: "x",
                align: 16,
                offset: 1,
                ..
            }]
        ),
        "{v:?}"
    );
    untouched(&g.stream, &y);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn empty_refused() {
    let g = setup();
    let x = Tensor::<f16>::from_host(&g.stream, &[], &[0]).unwrap();
    let mut y = poisoned(&g.stream, 4).with_layout(&[0], &[1], 0).unwrap();
    let v = refused(g.run_scale(KernelArg::read(&x), &mut y, Scalar::F32(1.0)));
    assert_eq!(
        v,
        [Violation::Empty {
            arg: "y",
            shape: vec![0]
        }]
    );
    untouched(&g.stream, &y);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn overlap_of_an_output_with_an_input_view() {
    let g = setup();
    let mut y = poisoned(&g.stream, 8);
    // x: eight f16 over the first 16 bytes of y's buffer, as a pointer from another
    // library would alias it.
    // SAFETY: y's buffer holds 32 bytes; the alias is leaked below, never freed.
    let alias = unsafe { g.stream.upgrade_device_ptr::<f16>(y.meta().base_ptr, 8) };
    let x = Tensor::from_slice(alias, &[8]).unwrap();
    let v = refused(g.run_scale(KernelArg::read(&x), &mut y, Scalar::F32(1.0)));
    assert!(
        matches!(
            v[..],
            [Violation::Overlap {
                arg: "y",
                other: "x",
                ..
            }]
        ),
        "{v:?}"
    );
    x.into_slice().leak();
    untouched(&g.stream, &y);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn grid_past_the_device_limit() {
    let g = setup();
    let mut y = poisoned(&g.stream, 32 * 2 * 3);
    let launch = |y: &mut Tensor<f32>, gx, gy| {
        g.fill.launch(
            &g.stream,
            &mut [KernelArg::write(y)],
            &[Scalar::I32(gx), Scalar::I32(gy)],
        )
    };
    let v = refused(launch(&mut y, 2, 70_000));
    assert!(
        matches!(&v[..], [Violation::Grid { grid, .. }] if grid == &[2, 70_000]),
        "{v:?}"
    );
    untouched(&g.stream, &y);

    let done = launch(&mut y, 2, 3).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        matches!(
            done,
            Launched::Done {
                grid: [2, 3, 1],
                block: [32, 1, 1],
                ..
            }
        ),
        "{done:?}"
    );
    let got = y.to_host(&g.stream).unwrap();
    let want: Vec<f32> = (0..192).map(|i| (i / 64) as f32).collect();
    assert_eq!(got, want);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn shared_memory_over_the_limit() {
    let g = setup();
    let limit = g.rowsum.limits().shared_bytes as usize;
    let n = limit / 4 + 1;
    let x = Tensor::<f32>::zeros(&g.stream, &[2, n]).unwrap();
    let mut y = poisoned(&g.stream, 2);
    let launch = |x: &Tensor<f32>, y: &mut Tensor<f32>| {
        g.rowsum.launch(
            &g.stream,
            &mut [KernelArg::read(x), KernelArg::write(y)],
            &[],
        )
    };
    let v = refused(launch(&x, &mut y));
    assert!(
        matches!(&v[..], [Violation::SharedMemory { bytes, limit: l, arrays }]
            if *bytes == 4 * n as u64 && *l as usize == limit && arrays.len() == 1),
        "{v:?}"
    );
    untouched(&g.stream, &y);

    // 64 KiB: past the 48 KiB default, within the opt-in limit.
    let n = 16 * 1024;
    let data: Vec<f32> = (0..3 * n).map(|i| (i % 4) as f32).collect();
    let x = Tensor::from_host(&g.stream, &data, &[3, n]).unwrap();
    let mut y = poisoned(&g.stream, 3);
    launch(&x, &mut y).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(y.to_host(&g.stream).unwrap(), [1.5 * n as f32; 3]);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn param_type() {
    let g = setup();
    let x = Tensor::from_host(&g.stream, &halves(8), &[8]).unwrap();
    let mut y = poisoned(&g.stream, 8);
    let v = refused(g.run_scale(KernelArg::read(&x), &mut y, Scalar::F64(1.0)));
    assert_eq!(
        v,
        [Violation::ParamType {
            param: "s",
            expected: DType::F32,
            actual: DType::F64
        }]
    );
    untouched(&g.stream, &y);
}
