//! Lifetimes across streams, on a GPU (see `kernel.rs`, "Lifetimes", and `graph.rs`):
//! `cargo test -p ima-runtime --test gpu_streams -- --ignored`, and under
//! `compute-sanitizer` to show that no buffer is used after it is freed.

use std::sync::Arc;

use ima_runtime::cudarc::driver::{CudaContext, CudaSlice, CudaStream};
use ima_runtime::{
    Binding, DType, EmptyPolicy, Expr, Extent, Graph, Kernel, KernelArg, KernelContract, Launch,
    Module, Param, Role, Scalar, Symbol, Tensor, TensorArg, TensorView, TensorViewMut,
};

const N_EXTENT: Extent = Extent {
    text: "N",
    expr: Expr::Sym(0),
};
const N_SYMBOL: Symbol = Symbol {
    name: "N",
    bound_by: Binding { arg: 0, dim: 0 },
};

const fn vector(name: &'static str, role: Role) -> TensorArg {
    TensorArg {
        name,
        role,
        dtype: DType::F32,
        dims: &[N_EXTENT],
        stored: &[0],
        strided: false,
        early: false,
        align: 4,
        values: None,
        tma: None,
    }
}

/// `spin(y: f32[N], value: f32, cycles: i64)`: each thread busy-waits `cycles` clocks,
/// then writes `value`.
static SPIN: KernelContract = KernelContract {
    name: "spin",
    signature: "spin(y: f32[N], value: f32, cycles: i64)",
    location: "tests/gpu_streams.rs:1",
    symbols: &[N_SYMBOL],
    args: &[vector("y", Role::Out)],
    params: &[
        Param {
            name: "value",
            dtype: DType::F32,
        },
        Param {
            name: "cycles",
            dtype: DType::I64,
        },
    ],
    constraints: &[],
    shared: &[],
    launch: Launch::Threads { arg: 0 },
    empty: EmptyPolicy::Skip,
    block: [128, 1, 1],
    block_from_occupancy: false,
    entry_i32: "spin_i32",
    entry_i64: "spin_i64",
};

/// `copy(x: f32[N], z: f32[N])`.
const COPY: KernelContract = KernelContract {
    name: "copy",
    signature: "copy(x: f32[N], z: f32[N])",
    location: "tests/gpu_streams.rs:2",
    symbols: &[N_SYMBOL],
    args: &[vector("x", Role::In), vector("z", Role::Out)],
    params: &[],
    constraints: &[],
    shared: &[],
    launch: Launch::Threads { arg: 1 },
    empty: EmptyPolicy::Skip,
    block: [128, 1, 1],
    block_from_occupancy: false,
    entry_i32: "copy_i32",
    entry_i64: "copy_i64",
};

/// `late_copy(x: f32[N], z: f32[N], cycles: i64)`: each thread busy-waits `cycles`
/// clocks, then copies.
const LATE_COPY: KernelContract = KernelContract {
    name: "late_copy",
    signature: "late_copy(x: f32[N], z: f32[N], cycles: i64)",
    location: "tests/gpu_streams.rs:3",
    params: &[Param {
        name: "cycles",
        dtype: DType::I64,
    }],
    entry_i32: "late_copy_i32",
    entry_i64: "late_copy_i64",
    ..COPY
};

const SOURCE: &str = r#"
template <typename I>
__device__ void spin(float* y, I y0, I N, float value, long long cycles) {
    long long start = clock64();
    while (clock64() - start < cycles) {}
    for (I i = (I)blockIdx.x * (I)blockDim.x + (I)threadIdx.x; i < N;
         i += (I)gridDim.x * (I)blockDim.x)
        y[i * y0] = value;
}
extern "C" __global__ void __launch_bounds__(128)
spin_i32(float* y, int y0, int N, float value, long long cycles) {
    spin<int>(y, y0, N, value, cycles);
}
extern "C" __global__ void __launch_bounds__(128)
spin_i64(float* y, long long y0, long long N, float value, long long cycles) {
    spin<long long>(y, y0, N, value, cycles);
}

template <typename I>
__device__ void copy(const float* x, I x0, float* z, I z0, I N) {
    for (I i = (I)blockIdx.x * (I)blockDim.x + (I)threadIdx.x; i < N;
         i += (I)gridDim.x * (I)blockDim.x)
        z[i * z0] = x[i * x0];
}
extern "C" __global__ void __launch_bounds__(128)
copy_i32(const float* x, int x0, float* z, int z0, int N) { copy<int>(x, x0, z, z0, N); }
extern "C" __global__ void __launch_bounds__(128)
copy_i64(const float* x, long long x0, float* z, long long z0, long long N) {
    copy<long long>(x, x0, z, z0, N);
}
extern "C" __global__ void __launch_bounds__(128)
late_copy_i32(const float* x, int x0, float* z, int z0, int N, long long cycles) {
    long long start = clock64();
    while (clock64() - start < cycles) {}
    copy<int>(x, x0, z, z0, N);
}
extern "C" __global__ void __launch_bounds__(128)
late_copy_i64(const float* x, long long x0, float* z, long long z0, long long N,
              long long cycles) {
    long long start = clock64();
    while (clock64() - start < cycles) {}
    copy<long long>(x, x0, z, z0, N);
}
"#;

/// About 0.1 s on a 2 GHz GPU: long enough that an unordered reader would run first.
const CYCLES: i64 = 200_000_000;

/// No GPU needed: the kernels compile cleanly.
#[test]
fn the_stream_kernels_compile() {
    let ptx = ima_runtime::compile_ptx_checked(SOURCE, "tests/gpu_streams.rs", "sm_90")
        .unwrap_or_else(|e| panic!("{e}"));
    for entry in [
        "spin_i32",
        "spin_i64",
        "copy_i32",
        "copy_i64",
        "late_copy_i32",
        "late_copy_i64",
    ] {
        assert!(ptx.contains(&format!(".entry {entry}(")), "{entry}");
    }
}

struct Kernels {
    spin: Kernel,
    copy: Kernel,
    late_copy: Kernel,
}

fn setup() -> (Arc<CudaContext>, Kernels) {
    let ctx = CudaContext::new(0).unwrap_or_else(|e| panic!("{e}"));
    let module =
        Module::compile(&ctx, "tests/gpu_streams.rs", SOURCE).unwrap_or_else(|e| panic!("{e}"));
    let kernel = |c| module.kernel(c).unwrap_or_else(|e| panic!("{e}"));
    let kernels = Kernels {
        spin: kernel(&SPIN),
        copy: kernel(&COPY),
        late_copy: kernel(&LATE_COPY),
    };
    (ctx, kernels)
}

fn spin(kernel: &Kernel, stream: &Arc<CudaStream>, y: &mut Tensor<f32>, value: f32) {
    kernel
        .launch(
            stream,
            &mut [KernelArg::write(y)],
            &[Scalar::F32(value), Scalar::I64(CYCLES)],
        )
        .unwrap_or_else(|e| panic!("{e}"));
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_reader_on_another_stream_waits_for_the_writer() {
    let (ctx, k) = setup();
    // Two streams put the context in multi-stream mode: cudarc's events are live.
    let (a, b) = (ctx.new_stream().unwrap(), ctx.new_stream().unwrap());
    assert!(ctx.is_managing_stream_synchronization());
    let n = 4096;
    let mut y = Tensor::<f32>::zeros(&a, &[n]).unwrap();
    let mut z = Tensor::<f32>::zeros(&b, &[n]).unwrap();
    a.synchronize().unwrap();
    b.synchronize().unwrap();

    spin(&k.spin, &a, &mut y, 7.0);
    // Enqueued at once on b; without the event wait it would copy zeros.
    k.copy
        .launch(
            &b,
            &mut [KernelArg::read(&y), KernelArg::write(&mut z)],
            &[],
        )
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(z.to_host(&b).unwrap(), vec![7.0; n]);
    ctx.check_err().unwrap();
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_tensor_dropped_right_after_its_launch_outlives_the_kernel() {
    let (ctx, k) = setup();

    // After each drop a tensor of the same size is allocated on the freeing stream and
    // filled with 9: the stream-ordered pool hands it y's memory as soon as the free is
    // done in that stream's order, so a free not ordered after the kernel would let the
    // kernel's late writes land in it (memcheck also sees the write into freed memory).
    let n = 1 << 16;
    // Default stream only: the free is enqueued behind the kernel on the same stream.
    let stream = ctx.default_stream();
    let mut y = Tensor::<f32>::zeros(&stream, &[n]).unwrap();
    spin(&k.spin, &stream, &mut y, 1.0);
    drop(y);
    let z = Tensor::full(&stream, 9.0f32, &[n]).unwrap();
    assert_eq!(z.to_host(&stream).unwrap(), vec![9.0; n]);
    ctx.check_err().unwrap();

    // Allocated on stream b, written on stream a, dropped at once: the free on b waits
    // for a's write event.
    let (a, b) = (ctx.new_stream().unwrap(), ctx.new_stream().unwrap());
    let mut y = Tensor::<f32>::zeros(&b, &[n]).unwrap();
    spin(&k.spin, &a, &mut y, 2.0);
    drop(y);
    let z = Tensor::full(&b, 9.0f32, &[n]).unwrap();
    a.synchronize().unwrap();
    assert_eq!(z.to_host(&b).unwrap(), vec![9.0; n]);
    ctx.check_err().unwrap();
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_read_on_another_stream_waits_for_a_replay_that_wrote_the_tensor() {
    let (ctx, k) = setup();
    let (a, b) = (ctx.new_stream().unwrap(), ctx.new_stream().unwrap());
    let n = 4096;
    let mut y = Tensor::<f32>::zeros(&b, &[n]).unwrap();
    b.synchronize().unwrap();
    let mut graph = Graph::new(&a).unwrap();
    let ya = graph.write(&mut y);
    graph
        .launch(&k.spin, &[ya], &[Scalar::F32(7.0), Scalar::I64(CYCLES)])
        .unwrap_or_else(|e| panic!("{e}"));
    graph.replay(&a).unwrap_or_else(|e| panic!("{e}"));
    // Enqueued at once on b; without the replay's write event it would copy zeros.
    assert_eq!(graph.to_host::<f32>(ya, &b).unwrap(), vec![7.0; n]);
    drop(graph);
    ctx.check_err().unwrap();
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_replay_waits_for_a_launch_on_another_stream_that_wrote_its_input() {
    let (ctx, k) = setup();
    let (a, b) = (ctx.new_stream().unwrap(), ctx.new_stream().unwrap());
    let n = 4096;
    let mut x = Tensor::<f32>::zeros(&a, &[n]).unwrap();
    let mut z = Tensor::<f32>::zeros(&b, &[n]).unwrap();
    a.synchronize().unwrap();
    b.synchronize().unwrap();
    spin(&k.spin, &a, &mut x, 3.0);
    let mut graph = Graph::new(&b).unwrap();
    let (xa, za) = (graph.read(&x), graph.write(&mut z));
    graph
        .launch(&k.copy, &[xa, za], &[])
        .unwrap_or_else(|e| panic!("{e}"));
    // Replayed on b while a still spins: the replay waits for x's write event.
    graph.replay(&b).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(graph.to_host::<f32>(za, &b).unwrap(), vec![3.0; n]);
    ctx.check_err().unwrap();
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_graph_dropped_right_after_its_replay_outlives_it_and_so_do_its_tensors() {
    let (ctx, k) = setup();
    let (a, b) = (ctx.new_stream().unwrap(), ctx.new_stream().unwrap());
    // Allocated on b, written by a replay on a, dropped at once: the graph's drop waits for
    // its replay, and the free on b waits for the replay's write event.
    let mut y = Tensor::<f32>::zeros(&b, &[1 << 16]).unwrap();
    b.synchronize().unwrap();
    let mut graph = Graph::new(&a).unwrap();
    let ya = graph.write(&mut y);
    graph
        .launch(&k.spin, &[ya], &[Scalar::F32(2.0), Scalar::I64(CYCLES)])
        .unwrap_or_else(|e| panic!("{e}"));
    graph.replay(&a).unwrap_or_else(|e| panic!("{e}"));
    drop(graph);
    drop(y);
    // y's memory, if freed before the replay's write, goes to this tensor (as in
    // a_tensor_dropped_right_after_its_launch_outlives_the_kernel).
    let z = Tensor::full(&b, 9.0f32, &[1 << 16]).unwrap();
    a.synchronize().unwrap();
    assert_eq!(z.to_host(&b).unwrap(), vec![9.0; 1 << 16]);
    ctx.check_err().unwrap();
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_view_made_while_another_stream_reads_the_buffer_keeps_a_writer_waiting() {
    let (ctx, k) = setup();
    let (a, b) = (ctx.new_stream().unwrap(), ctx.new_stream().unwrap());
    let n = 4096;
    let mut z = Tensor::<f32>::zeros(&a, &[n]).unwrap();
    // A late reader on a copies x (whose own stream is b) into z.
    let late_copy = |x: &TensorView<'_, f32>, z: &mut Tensor<f32>| {
        k.late_copy
            .launch(
                &a,
                &mut [KernelArg::read(x), KernelArg::write(z)],
                &[Scalar::I64(CYCLES)],
            )
            .unwrap_or_else(|e| panic!("{e}"));
    };
    // A writer of 5s on b, at once.
    let fill = |x: KernelArg<'_>| {
        k.spin
            .launch(&b, &mut [x], &[Scalar::F32(5.0), Scalar::I64(0)])
            .unwrap_or_else(|e| panic!("{e}"));
    };
    let mut x: CudaSlice<f32> = b.clone_htod(&vec![1.0f32; n]).unwrap();
    a.synchronize().unwrap();
    b.synchronize().unwrap();
    late_copy(&TensorView::of_slice(&x, &[n]).unwrap(), &mut z);
    // Views made after that read only x's address: they must not stand for a's read, or
    // the write below, on b, would not wait for the copy and the copy would read 5.
    drop(TensorView::of_slice(&x, &[n]).unwrap());
    let mut xm = TensorViewMut::of_slice(&mut x, &[n]).unwrap();
    fill(KernelArg::write(&mut xm));
    assert_eq!(z.to_host(&a).unwrap(), vec![1.0; n]);
    // The owned tensor made over a buffer that a kernel is reading does the same.
    let y: CudaSlice<f32> = b.clone_htod(&vec![2.0f32; n]).unwrap();
    b.synchronize().unwrap();
    late_copy(&TensorView::of_slice(&y, &[n]).unwrap(), &mut z);
    let mut y = Tensor::from_slice(y, &[n]).unwrap();
    fill(KernelArg::write(&mut y));
    assert_eq!(z.to_host(&a).unwrap(), vec![2.0; n]);
    ctx.check_err().unwrap();
}
