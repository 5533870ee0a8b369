//! CUDA graphs of checked launches on a GPU (runtime/src/graph.rs, docs/graphs.md), through
//! the committed generated stubs' kernels: a chain embedding → rms_norm replayed many
//! times against a host f64 reference, with updates of its tensors and of a scalar between
//! replays; ten transposes replayed on other streams than the graph's; an empty launch
//! switched off and given work by an update; updates that break the contract refused with
//! the kernel, node and argument named, the graph left as it was; a planted bad index and
//! a planted out-of-bounds read inside a replayed graph reported with the kernel's name and
//! its node, deferred to the next replay or `check`, or at the replay in wait mode; copies
//! and fills with zeros between kernels, in node order, updated, in sync mode, and refused
//! when they break their checks; launches captured through the stubs' `launch_in`; kernels
//! with `early` arguments started early by programmatic edges, waiting for the slow kernel
//! ahead in every replay, and kept to ordinary edges where a node ahead writes what they
//! read early.
//! (A device fault in a sync-mode replay: runtime/tests/gpu_graph_fault.rs.)
//! `cargo test --test graph_gpu -- --ignored`, and under compute-sanitizer memcheck with
//! `--padding`.

#[allow(dead_code)]
mod index_spec {
    include!("out/specs/index.rs");
}
#[allow(dead_code)]
mod rmsnorm_spec {
    include!("out/specs/rmsnorm.rs");
}
#[allow(dead_code)]
mod transpose_spec {
    include!("out/specs/transpose.rs");
}
#[allow(dead_code)]
mod planted {
    include!("out/planted_bugs.rs");
}
#[allow(dead_code)]
mod early_spec {
    include!("out/early.rs");
}

mod common;

use common::lcg;
use std::sync::Arc;

use ima::cudarc::driver::{CudaContext, CudaStream};
use ima::half::bf16;
use ima::{
    Access, CheckedMode, Error, Graph, IndexValue, OutOfBounds, Scalar, Tensor, ValueFault,
    Violation,
};

fn setup() -> (Arc<CudaContext>, Arc<CudaStream>) {
    let ctx = CudaContext::new(0).expect("a CUDA device");
    let stream = ctx.new_stream().expect("a CUDA stream");
    (ctx, stream)
}

fn f32s(n: usize, seed: u64) -> Vec<f32> {
    lcg(seed).take(n).collect()
}

fn bf16s(n: usize, seed: u64) -> Vec<bf16> {
    lcg(seed).take(n).map(bf16::from_f32).collect()
}

/// `t` token ids in `0 .. v`.
fn ids(t: usize, v: usize, seed: u64) -> Vec<i32> {
    lcg(seed)
        .take(t)
        .map(|x| ((x + 1.0) / 2.0 * v as f32) as i32 % v as i32)
        .collect()
}

/// The node error's kernel, node and source, or a panic naming what came instead.
fn in_graph(e: Error) -> (usize, &'static str, Error) {
    match e {
        Error::InGraph {
            node,
            kernel,
            source,
        } => (node, kernel, *source),
        e => panic!("expected an error naming a graph node, got {e}"),
    }
}

fn index_value(e: Error) -> IndexValue {
    match e {
        Error::IndexValue(v) => *v,
        e => panic!("expected an IndexValue report, got {e}"),
    }
}

fn out_of_bounds(e: Error) -> OutOfBounds {
    match e {
        Error::OutOfBounds(r) => *r,
        e => panic!("expected an out-of-bounds report, got {e}"),
    }
}

/// The rows `ids` picks from `table` (rows of `d`), as the embedding copies them: an id
/// outside the table reads row 0, the accessor's documented fallback.
fn embedded(ids: &[i32], table: &[bf16], d: usize) -> Vec<bf16> {
    let v = table.len() / d;
    ids.iter()
        .flat_map(|&id| {
            let row = if (0..v as i32).contains(&id) {
                id as usize
            } else {
                0
            };
            table[row * d..(row + 1) * d].to_vec()
        })
        .collect()
}

/// Each row of `rows` normalised by RMSNorm with `w` and `eps`, in f64.
fn rms_normed(rows: &[bf16], w: &[bf16], eps: f32) -> Vec<f64> {
    rows.chunks(w.len())
        .flat_map(|x| {
            let ss: f64 = x.iter().map(|v| v.to_f64() * v.to_f64()).sum();
            let inv = 1.0 / (ss / w.len() as f64 + f64::from(eps)).sqrt();
            x.iter()
                .zip(w)
                .map(move |(v, g)| v.to_f64() * inv * g.to_f64())
        })
        .collect()
}

fn bits(v: &[bf16]) -> Vec<u16> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// RMSNorm's output equals the reference within bf16's rounding.
fn assert_normed(y: &[bf16], want: &[f64], what: &str) {
    assert_eq!(y.len(), want.len(), "{what}");
    for (i, (&got, &w)) in y.iter().zip(want).enumerate() {
        let got = got.to_f64();
        assert!(
            got.is_finite() && (got - w).abs() <= 1e-2 * w.abs() + 1e-6,
            "{what}: y[{i}] = {got}, expected {w}"
        );
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_captured_chain_replays_many_times_equal_to_the_host_reference() {
    let (ctx, stream) = setup();
    let index = index_spec::Kernels::load(&ctx).unwrap();
    let norm = rmsnorm_spec::Kernels::load(&ctx).unwrap();
    let (t, v, d) = (37, 50, 264);
    let (table_h, w_h) = (bf16s(v * d, 1), bf16s(d, 2));
    let ids_h = [ids(t, v, 3), ids(t, v, 4)];
    let table = Tensor::from_host(&stream, &table_h, &[v, d]).unwrap();
    let w = Tensor::from_host(&stream, &w_h, &[d]).unwrap();
    let ids_a = Tensor::from_host(&stream, &ids_h[0], &[t]).unwrap();
    let ids_b = Tensor::from_host(&stream, &ids_h[1], &[t]).unwrap();
    let mut h = Tensor::full(&stream, bf16::NAN, &[t, d]).unwrap();
    let mut y = Tensor::full(&stream, bf16::NAN, &[t, d]).unwrap();

    let mut graph = Graph::new(&stream).unwrap();
    let id_args = [graph.read(&ids_a), graph.read(&ids_b)];
    let (tab, wa) = (graph.read(&table), graph.read(&w));
    // Written by the first node and read by the second: bound once, named twice.
    let (ha, ya) = (graph.write(&mut h), graph.write(&mut y));
    let embed = graph
        .launch(index.embedding.kernel(), &[id_args[0], tab, ha], &[])
        .unwrap();
    let normed = graph
        .launch(norm.rms_norm.kernel(), &[ha, wa, ya], &[Scalar::F32(1e-5)])
        .unwrap();
    assert_eq!((embed, normed, graph.len()), (0, 1, 2));

    let read = |graph: &Graph<'_>| {
        (
            graph.to_host::<bf16>(ha, &stream).unwrap(),
            graph.to_host::<bf16>(ya, &stream).unwrap(),
        )
    };
    for step in 0..100 {
        graph.replay(&stream).unwrap();
        if step % 33 == 0 {
            let (hv, yv) = read(&graph);
            let rows = embedded(&ids_h[0], &table_h, d);
            assert_eq!(bits(&hv), bits(&rows), "replay {step}: the embedded rows");
            assert_normed(
                &yv,
                &rms_normed(&rows, &w_h, 1e-5),
                &format!("replay {step}"),
            );
        }
    }
    // New ids and a new eps between replays, each update checked.
    for step in 0..40 {
        let which = step % 2;
        let eps = if step % 3 == 0 { 1e-5 } else { 0.5 };
        graph
            .update(embed, &[id_args[which], tab, ha], &[])
            .unwrap();
        graph
            .update(normed, &[ha, wa, ya], &[Scalar::F32(eps)])
            .unwrap();
        graph.replay(&stream).unwrap();
        let (hv, yv) = read(&graph);
        let rows = embedded(&ids_h[which], &table_h, d);
        let what = format!("updated replay {step}");
        assert_eq!(bits(&hv), bits(&rows), "{what}: the embedded rows");
        assert_normed(&yv, &rms_normed(&rows, &w_h, eps), &what);
    }
    graph.check().unwrap();
    drop(graph);
    // The graph is gone: its tensors are the caller's again.
    assert_eq!(h.shape(), [t, d]);
    ctx.check_err().unwrap();
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn ten_transposes_replay_on_any_stream_of_the_graphs_context() {
    let (ctx, stream) = setup();
    let (other, reader) = (ctx.new_stream().unwrap(), ctx.new_stream().unwrap());
    let kernels = transpose_spec::Kernels::load(&ctx).unwrap();
    let (m, n) = (37, 19);
    let xh = f32s(m * n, 5);
    let mut a = Tensor::from_host(&stream, &xh, &[m, n]).unwrap();
    let mut b = Tensor::full(&stream, f32::NAN, &[n, m]).unwrap();
    let mut graph = Graph::new(&stream).unwrap();
    let (aa, ba) = (graph.write(&mut a), graph.write(&mut b));
    for i in 0..10 {
        let (from, to) = if i % 2 == 0 { (aa, ba) } else { (ba, aa) };
        assert_eq!(
            graph
                .launch(kernels.transpose.kernel(), &[from, to], &[])
                .unwrap(),
            i
        );
    }
    // Replayed on a stream other than the graph's, read on a third: each waits for the
    // work before it through the tensors' events.
    for _ in 0..100 {
        graph.replay(&other).unwrap();
    }
    assert_eq!(graph.to_host::<f32>(aa, &reader).unwrap(), xh);
    let bt = graph.to_host::<f32>(ba, &reader).unwrap();
    for i in 0..m {
        for j in 0..n {
            assert_eq!(bt[j * m + i], xh[i * n + j], "b[{j}, {i}]");
        }
    }
    graph.check().unwrap();
    ctx.check_err().unwrap();
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn an_empty_launch_is_a_node_switched_off_until_an_update_gives_it_work() {
    let (ctx, stream) = setup();
    let kernels = transpose_spec::Kernels::load(&ctx).unwrap();
    let (m, n) = (5, 3);
    let xh = f32s(m * n, 6);
    let x = Tensor::from_host(&stream, &xh, &[m, n]).unwrap();
    let mut y = Tensor::full(&stream, f32::NAN, &[n, m]).unwrap();
    let empty_x = Tensor::<f32>::zeros(&stream, &[0, n]).unwrap();
    let mut empty_y = Tensor::<f32>::zeros(&stream, &[n, 0]).unwrap();
    let mut graph = Graph::new(&stream).unwrap();
    let (xa, ya) = (graph.read(&x), graph.write(&mut y));
    let (ex, ey) = (graph.read(&empty_x), graph.write(&mut empty_y));
    let node = graph
        .launch(kernels.transpose.kernel(), &[ex, ey], &[])
        .unwrap();
    graph.replay(&stream).unwrap();
    let untouched = graph.to_host::<f32>(ya, &stream).unwrap();
    assert!(untouched.iter().all(|v| v.is_nan()), "{untouched:?}");
    graph.update(node, &[xa, ya], &[]).unwrap();
    graph.replay(&stream).unwrap();
    let yt = graph.to_host::<f32>(ya, &stream).unwrap();
    for i in 0..m {
        for j in 0..n {
            assert_eq!(yt[j * m + i], xh[i * n + j], "y[{j}, {i}]");
        }
    }
    // And off again.
    graph.update(node, &[ex, ey], &[]).unwrap();
    graph.replay(&stream).unwrap();
    graph.check().unwrap();
    ctx.check_err().unwrap();
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn an_update_that_breaks_the_contract_is_refused_and_the_node_keeps_its_launch() {
    let (ctx, stream) = setup();
    let norm = rmsnorm_spec::Kernels::load(&ctx).unwrap();
    let (n, d) = (9, 64);
    let (xh, wh) = (bf16s(n * d, 7), bf16s(d, 8));
    let x = Tensor::from_host(&stream, &xh, &[n, d]).unwrap();
    let w = Tensor::from_host(&stream, &wh, &[d]).unwrap();
    let w_short = Tensor::from_host(&stream, &wh[..d - 8], &[d - 8]).unwrap();
    let x_f32 = Tensor::<f32>::zeros(&stream, &[n, d]).unwrap();
    let stranger = Tensor::from_host(&stream, &xh, &[n, d]).unwrap();
    let mut y = Tensor::full(&stream, bf16::NAN, &[n, d]).unwrap();
    let mut other = Graph::new(&stream).unwrap();
    let foreign = other.read(&stranger);

    let mut graph = Graph::new(&stream).unwrap();
    let (xa, wa, ya) = (graph.read(&x), graph.read(&w), graph.write(&mut y));
    let (short, wide) = (graph.read(&w_short), graph.read(&x_f32));
    let eps = [Scalar::F32(1e-5)];
    graph
        .launch(norm.rms_norm.kernel(), &[xa, wa, ya], &eps)
        .unwrap();

    // A weight of another length: the checker's error, naming the kernel and argument.
    let e = graph.update(0, &[xa, short, ya], &eps).unwrap_err();
    let text = e.to_string();
    let (node, kernel, source) = in_graph(e);
    assert_eq!((node, kernel), (0, "rms_norm"), "{text}");
    let Error::Launch(refused) = source else {
        panic!("not the checker's refusal: {text}")
    };
    assert_eq!(refused.kernel, "rms_norm");
    assert!(
        refused.violations.iter().any(|v| matches!(
            v,
            Violation::Dim { arg: "w", expected, actual, .. } if *expected == d as i64 && *actual == d - 8
        )),
        "{text}"
    );
    assert!(text.starts_with("graph node 0 (rms_norm): "), "{text}");
    // Another element type, an input where the kernel writes, a param of another type.
    let e = graph.update(0, &[wide, wa, ya], &eps).unwrap_err();
    assert!(
        matches!(in_graph(e).2, Error::Launch(l) if l.violations.iter().any(|v| matches!(v, Violation::DType { arg: "x", .. })))
    );
    let e = graph.update(0, &[xa, wa, xa], &eps).unwrap_err();
    assert!(
        matches!(in_graph(e).2, Error::Launch(l) if l.violations.contains(&Violation::Access { arg: "y" }))
    );
    assert!(matches!(
        in_graph(
            graph
                .update(0, &[xa, wa, ya], &[Scalar::I32(1)])
                .unwrap_err()
        )
        .2,
        Error::Launch(_)
    ));
    // A tensor bound into another graph, and a node the graph does not have.
    let e = graph.update(0, &[foreign, wa, ya], &eps).unwrap_err();
    assert!(
        matches!(in_graph(e).2, Error::GraphUsage { ref what, .. } if what.contains("argument x"))
    );
    assert!(matches!(
        graph.update(1, &[xa, wa, ya], &eps),
        Err(Error::GraphUsage { .. })
    ));

    // The node kept its launch.
    graph.replay(&stream).unwrap();
    let yv = graph.to_host::<bf16>(ya, &stream).unwrap();
    assert_normed(
        &yv,
        &rms_normed(&xh, &wh, 1e-5),
        "after the refused updates",
    );
    // And reading a tensor as another type is refused, not reinterpreted.
    assert!(matches!(
        graph.to_host::<f32>(ya, &stream),
        Err(Error::GraphUsage { .. })
    ));
    graph.check().unwrap();
    ctx.check_err().unwrap();
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_bad_index_in_a_replayed_graph_is_reported_with_its_kernel_and_node() {
    let (ctx, stream) = setup();
    let index = index_spec::Kernels::load(&ctx).unwrap();
    let transpose = transpose_spec::Kernels::load(&ctx).unwrap();
    let (t, v, d) = (40, 32, 16);
    let table_h = bf16s(v * d, 9);
    let good_h = ids(t, v, 10);
    let mut bad_h = good_h.clone();
    bad_h[17] = v as i32;
    let table = Tensor::from_host(&stream, &table_h, &[v, d]).unwrap();
    let good = Tensor::from_host(&stream, &good_h, &[t]).unwrap();
    let bad = Tensor::from_host(&stream, &bad_h, &[t]).unwrap();
    let x = Tensor::from_host(&stream, &f32s(6, 11), &[2, 3]).unwrap();
    let mut xt = Tensor::<f32>::zeros(&stream, &[3, 2]).unwrap();
    let mut y = Tensor::full(&stream, bf16::NAN, &[t, d]).unwrap();

    // Release mode: the embedding's value contract fills the node's record.
    index.embedding.kernel().set_checked_mode(CheckedMode::Off);
    let mut graph = Graph::new(&stream).unwrap();
    let (xa, xta) = (graph.read(&x), graph.write(&mut xt));
    let (ga, ba, ta, ya) = (
        graph.read(&good),
        graph.read(&bad),
        graph.read(&table),
        graph.write(&mut y),
    );
    graph
        .launch(transpose.transpose.kernel(), &[xa, xta], &[])
        .unwrap();
    let embed = graph
        .launch(index.embedding.kernel(), &[ga, ta, ya], &[])
        .unwrap();
    graph.replay(&stream).unwrap();
    graph.check().unwrap();

    // The entries are not metadata: the update passes, the replay reports.
    graph.update(embed, &[ba, ta, ya], &[]).unwrap();
    graph.replay(&stream).unwrap();
    let e = graph.check().unwrap_err();
    let text = e.to_string();
    let (node, kernel, source) = in_graph(e);
    assert_eq!((node, kernel), (1, "embedding"), "{text}");
    let r = index_value(source);
    assert_eq!(
        (r.kernel, r.arg.as_str(), r.position.as_slice(), r.value),
        ("embedding", "ids", &[17i64][..], v as i64),
        "{text}"
    );
    assert_eq!(
        r.fault,
        ValueFault::Range {
            lo: 0,
            hi: v as i64
        },
        "{text}"
    );
    assert!(r.deferred, "{text}");
    assert!(
        text.starts_with("graph node 1 (embedding): embedding: ids[17] = 32"),
        "{text}"
    );
    println!("{text}");
    // The bad entry read row 0, the contract's lower bound; the report cleaned the record.
    let got = graph.to_host::<bf16>(ya, &stream).unwrap();
    assert_eq!(bits(&got), bits(&embedded(&bad_h, &table_h, d)));
    graph.check().unwrap();

    // Deferred to the next replay, which then does not replay (once the faulty one has
    // finished: a replay enqueued before it raised the record's flag runs, and the count
    // then covers both).
    graph.replay(&stream).unwrap();
    stream.synchronize().unwrap();
    let (node, _, source) = in_graph(graph.replay(&stream).unwrap_err());
    assert_eq!(node, 1);
    // Each of the row's D / 8 threads read the bad id.
    assert_eq!(index_value(source).count, d as u32 / 8);

    // Good entries again: clean.
    graph.update(embed, &[ga, ta, ya], &[]).unwrap();
    graph.replay(&stream).unwrap();
    graph.check().unwrap();
    drop(graph);

    // Wait mode: the replay itself waits and reports, not deferred.
    index.embedding.kernel().set_checked_mode(CheckedMode::Wait);
    let mut waiting = Graph::new(&stream).unwrap();
    let (ba, ta, ya) = (
        waiting.read(&bad),
        waiting.read(&table),
        waiting.write(&mut y),
    );
    waiting
        .launch(index.embedding.kernel(), &[ba, ta, ya], &[])
        .unwrap();
    let (node, kernel, source) = in_graph(waiting.replay(&stream).unwrap_err());
    assert_eq!((node, kernel), (0, "embedding"));
    let r = index_value(source);
    assert_eq!((r.position.as_slice(), r.deferred), (&[17i64][..], false));
    drop(waiting);
    index.embedding.kernel().set_checked_mode(CheckedMode::Off);
    ctx.check_err().unwrap();
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_planted_out_of_bounds_read_in_a_replayed_graph_names_its_kernel_and_node() {
    let (ctx, stream) = setup();
    let kernels = planted::Kernels::load(&ctx).unwrap();
    let transpose = transpose_spec::Kernels::load(&ctx).unwrap();
    kernels.set_checked_mode(CheckedMode::Deferred);
    let (m, n) = (45, 20);
    let x = Tensor::from_host(&stream, &f32s(m * n, 12), &[m, n]).unwrap();
    let mut y = Tensor::full(&stream, f32::NAN, &[n, m]).unwrap();
    let mut z = Tensor::full(&stream, f32::NAN, &[n, m]).unwrap();
    let mut graph = Graph::new(&stream).unwrap();
    let (xa, ya, za) = (graph.read(&x), graph.write(&mut y), graph.write(&mut z));
    graph
        .launch(transpose.transpose.kernel(), &[xa, za], &[])
        .unwrap();
    graph
        .launch(kernels.transpose_swapped.kernel(), &[xa, ya], &[])
        .unwrap();
    graph.replay(&stream).unwrap();
    let e = graph.check().unwrap_err();
    let text = e.to_string();
    let (node, kernel, source) = in_graph(e);
    assert_eq!((node, kernel), (1, "transpose_swapped"), "{text}");
    let r = out_of_bounds(source);
    assert_eq!(
        (r.arg.as_str(), r.access, r.deferred),
        ("x", Access::Read, true)
    );
    // x(j, i) with j < N = 20 and i < M = 45: column indices past N fail, in the replay.
    assert_eq!(
        (r.failed_dim, r.dims[1], r.extent[1]),
        (1, "N", 20),
        "{text}"
    );
    assert_eq!(r.count as usize, n * (m - n), "{text}");
    println!("{text}");
    graph.check().unwrap();
    ctx.check_err().unwrap();
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn copies_and_fills_run_between_kernels_in_node_order() {
    let (ctx, stream) = setup();
    let (other, reader) = (ctx.new_stream().unwrap(), ctx.new_stream().unwrap());
    let kernels = transpose_spec::Kernels::load(&ctx).unwrap();
    let (m, n) = (37, 19);
    let xh = f32s(m * n, 11);
    let x = Tensor::from_host(&stream, &xh, &[m, n]).unwrap();
    let mut staged = Tensor::full(&stream, f32::NAN, &[m, n]).unwrap();
    let mut y = Tensor::full(&stream, f32::NAN, &[n, m]).unwrap();
    // Flat: a copy needs the same element type and count, not the same shape.
    let mut kept_a = Tensor::full(&stream, f32::NAN, &[n * m]).unwrap();
    let mut kept_b = Tensor::full(&stream, f32::NAN, &[n * m]).unwrap();
    // Fills of 2-byte and 1-byte units: 6 and 5 bytes.
    let mut halves = Tensor::full(&stream, bf16::ONE, &[3]).unwrap();
    let mut bytes = Tensor::from_host(&stream, &[7u8; 5], &[5]).unwrap();

    let mut graph = Graph::new(&stream).unwrap();
    let xa = graph.read(&x);
    let (sa, ya) = (graph.write(&mut staged), graph.write(&mut y));
    let (ka, kb) = (graph.write(&mut kept_a), graph.write(&mut kept_b));
    let (ha, ba) = (graph.write(&mut halves), graph.write(&mut bytes));
    // Each node depends on the one before: a fill before the transpose would leave y
    // zero, a copy before it would keep NaN.
    let nodes = [
        graph.copy(xa, sa),
        graph.launch(kernels.transpose.kernel(), &[sa, ya], &[]),
        graph.copy(ya, ka),
        graph.zero(sa),
        graph.zero(ha),
        graph.zero(ba),
    ]
    .map(Result::unwrap);
    assert_eq!(nodes, [0, 1, 2, 3, 4, 5]);
    assert_eq!(graph.args(2).unwrap(), [ya, ka]);

    let transposed: Vec<f32> = (0..n * m).map(|k| xh[k % m * n + k / m]).collect();
    let check = |graph: &Graph<'_>, kept, what: &str| {
        let read = |a| graph.to_host::<f32>(a, &reader).unwrap();
        assert_eq!(read(ya), transposed, "{what}: y");
        assert_eq!(read(kept), transposed, "{what}: the copy of y");
        assert!(read(sa).iter().all(|&v| v == 0.0), "{what}: the staged x");
        let halves = graph.to_host::<bf16>(ha, &reader).unwrap();
        assert!(
            halves.iter().all(|v| v.to_bits() == 0),
            "{what}: {halves:?}"
        );
        assert_eq!(graph.to_host::<u8>(ba, &reader).unwrap(), [0; 5], "{what}");
    };
    // On a stream other than the graph's, read on a third: ordered by the tensors' events.
    for _ in 0..50 {
        graph.replay(&other).unwrap();
    }
    check(&graph, ka, "50 replays");
    // The copy's destination moved: checked, then the next replays write there.
    graph.update(nodes[2], &[ya, kb], &[]).unwrap();
    graph.replay(&other).unwrap();
    check(&graph, kb, "after the update");
    // A sync-mode replay runs each node alone, copies and fills too.
    graph.set_sync(true);
    graph.replay(&stream).unwrap();
    check(&graph, kb, "in sync mode");
    graph.check().unwrap();
    drop(graph);
    assert_eq!(kept_a.to_host(&stream).unwrap(), transposed);
    ctx.check_err().unwrap();
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn copies_and_fills_that_break_their_checks_are_refused_naming_the_node() {
    let (ctx, stream) = setup();
    let xh = f32s(64, 12);
    let x = Tensor::from_host(&stream, &xh, &[64]).unwrap();
    let h = Tensor::<bf16>::zeros(&stream, &[64]).unwrap();
    let mut y = Tensor::full(&stream, f32::NAN, &[64]).unwrap();
    let mut short = Tensor::full(&stream, f32::NAN, &[32]).unwrap();
    let mut graph = Graph::new(&stream).unwrap();
    let (xa, ha) = (graph.read(&x), graph.read(&h));
    let (ya, sa) = (graph.write(&mut y), graph.write(&mut short));
    let copy = graph.copy(xa, ya).unwrap();

    let refused = |e| {
        let (node, kernel, source) = in_graph(e);
        (node, kernel, source.to_string())
    };
    assert_eq!(
        refused(graph.copy(ha, ya).unwrap_err()),
        (
            1,
            "copy",
            "copying a tensor into another: the source holds bf16 elements, the destination \
             f32"
            .to_string()
        )
    );
    assert_eq!(
        refused(graph.copy(xa, sa).unwrap_err()).2,
        "copying a tensor into another: the source holds 64 elements (f32 [64]), the \
         destination 32 (f32 [32])"
    );
    assert_eq!(
        refused(graph.zero(xa).unwrap_err()),
        (
            1,
            "zero",
            "filling a tensor with zeros: the tensor is written, but was bound for reading \
             (bind it with Graph::write)"
                .to_string()
        )
    );
    assert_eq!(graph.len(), 1);
    // Refused updates name the node and leave it as it was.
    let (node, kernel, _) = refused(graph.update(copy, &[xa, sa], &[]).unwrap_err());
    assert_eq!((node, kernel), (0, "copy"));
    let (_, _, params) = refused(
        graph
            .update(copy, &[xa, ya], &[Scalar::F32(1.0)])
            .unwrap_err(),
    );
    assert_eq!(
        params,
        "updating a copy node with 1 params: a copy or fill takes none"
    );
    graph.replay(&stream).unwrap();
    assert_eq!(graph.to_host::<f32>(ya, &stream).unwrap(), xh);
    assert!(
        graph
            .to_host::<f32>(sa, &stream)
            .unwrap()
            .iter()
            .all(|v| v.is_nan())
    );
    graph.check().unwrap();
    ctx.check_err().unwrap();
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn launches_captured_through_the_stubs_replay_equal_to_the_host_reference() {
    let (ctx, stream) = setup();
    let index = index_spec::Kernels::load(&ctx).unwrap();
    let norm = rmsnorm_spec::Kernels::load(&ctx).unwrap();
    let (t, v, d) = (37, 50, 264);
    let (table_h, w_h, ids_h, x_h) = (
        bf16s(v * d, 13),
        bf16s(d, 14),
        ids(t, v, 15),
        bf16s(t * d, 16),
    );
    let table = Tensor::from_host(&stream, &table_h, &[v, d]).unwrap();
    let w = Tensor::from_host(&stream, &w_h, &[d]).unwrap();
    let ids_t = Tensor::from_host(&stream, &ids_h, &[t]).unwrap();
    let x = Tensor::from_host(&stream, &x_h, &[t, d]).unwrap();
    let mut h = Tensor::full(&stream, bf16::NAN, &[t, d]).unwrap();
    let mut y = Tensor::full(&stream, bf16::NAN, &[t, d]).unwrap();
    let mut h_kept = Tensor::full(&stream, bf16::NAN, &[t, d]).unwrap();
    // For a launch the checks refuse: a weight too short.
    let w_short = Tensor::from_host(&stream, &w_h[..d - 8], &[d - 8]).unwrap();
    let mut y_spare = Tensor::full(&stream, bf16::NAN, &[t, d]).unwrap();
    // Borrowed views pass through the stubs as owned tensors do.
    let (table_v, x_v) = (table.view(), x.view());
    let mut y_v = y.view_mut();

    let mut graph = Graph::new(&stream).unwrap();
    let embed = index
        .embedding
        .launch_in(
            &mut graph,
            index_spec::EmbeddingArgs {
                ids: &ids_t,
                table: &table_v,
                y: &mut h,
            },
        )
        .unwrap();
    let normed = norm
        .rms_norm
        .launch_in(
            &mut graph,
            rmsnorm_spec::RmsNormArgs {
                x: &x_v,
                w: &w,
                y: &mut y_v,
                eps: 1e-5,
            },
        )
        .unwrap();
    // A node's tensors, as the stub bound them: `y` of each is its last argument.
    let (ha, ya) = (
        graph.args(embed).unwrap()[2],
        graph.args(normed).unwrap()[2],
    );
    let kept = graph.write(&mut h_kept);
    let copied = graph.copy(ha, kept).unwrap();
    assert_eq!((embed, normed, copied), (0, 1, 2));
    // A stub's launch refused by the checks binds nothing and adds no node.
    let (node, kernel, _) = in_graph(
        norm.rms_norm
            .launch_in(
                &mut graph,
                rmsnorm_spec::RmsNormArgs {
                    x: &x,
                    w: &w_short,
                    y: &mut y_spare,
                    eps: 1e-5,
                },
            )
            .unwrap_err(),
    );
    assert_eq!((node, kernel, graph.len()), (3, "rms_norm", 3));

    let rows = embedded(&ids_h, &table_h, d);
    for step in 0..20 {
        let eps = if step % 2 == 0 { 1e-5 } else { 0.5 };
        // A new scalar for the stub's node: its own tensors again, with the new eps.
        let args = graph.args(normed).unwrap().to_vec();
        graph.update(normed, &args, &[Scalar::F32(eps)]).unwrap();
        graph.replay(&stream).unwrap();
        let what = format!("replay {step}");
        assert_eq!(
            bits(&graph.to_host::<bf16>(ha, &stream).unwrap()),
            bits(&rows),
            "{what}"
        );
        assert_eq!(
            bits(&graph.to_host::<bf16>(kept, &stream).unwrap()),
            bits(&rows),
            "{what}"
        );
        assert_normed(
            &graph.to_host::<bf16>(ya, &stream).unwrap(),
            &rms_normed(&x_h, &w_h, eps),
            &what,
        );
    }
    graph.check().unwrap();
    drop(graph);
    // The graph is gone: its tensors are the caller's again.
    drop(y_v);
    assert_eq!(bits(&h.to_host(&stream).unwrap()), bits(&rows));
    assert_normed(
        &y.to_host(&stream).unwrap(),
        &rms_normed(&x_h, &w_h, 0.5),
        "after the graph",
    );
    ctx.check_err().unwrap();
}

/// Programmatic edges are on: a device of sm_90 or later, and `IMA_PROGRAMMATIC_LAUNCH`
/// not 0 (runtime/src/programmatic.rs).
fn programmatic_launch(ctx: &CudaContext) -> bool {
    ctx.compute_capability().unwrap().0 >= 9
        && std::env::var("IMA_PROGRAMMATIC_LAUNCH").map_or(true, |v| v.trim() != "0")
}

/// tests/in/early.ima's chain on the host: each step x + 1, then halved plus the table.
/// Small integers, halves and quarters: exact in f32.
fn early_chain(x: &[f32], table: &[f32], steps: usize) -> Vec<f32> {
    let mut v = x.to_vec();
    for _ in 0..steps {
        for (e, t) in v.iter_mut().zip(table) {
            *e = (*e + 1.0) * 0.5 + t;
        }
    }
    v
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn kernels_that_start_early_wait_for_the_slow_kernel_ahead_in_every_replay() {
    let (ctx, stream) = setup();
    let k = early_spec::Kernels::load(&ctx).unwrap();
    let (n, steps) = (5000, 4);
    let xs_h: [Vec<f32>; 2] = [
        (0..n).map(|i| (i % 97) as f32).collect(),
        (0..n).map(|i| (i % 31) as f32 + 7.0).collect(),
    ];
    let table_h: Vec<f32> = (0..n).map(|i| (i % 13) as f32 * 0.25).collect();
    let xs = [
        Tensor::from_host(&stream, &xs_h[0], &[n]).unwrap(),
        Tensor::from_host(&stream, &xs_h[1], &[n]).unwrap(),
    ];
    let table = Tensor::from_host(&stream, &table_h, &[n]).unwrap();
    let mut bufs: Vec<Tensor<f32>> = (0..2 * steps)
        .map(|_| Tensor::full(&stream, f32::NAN, &[n]).unwrap())
        .collect();
    // About 10 µs a block of the slow kernel: the kernel after it starts long before.
    let cycles = [Scalar::I64(20_000)];

    let mut graph = Graph::new(&stream).unwrap();
    let x_args = [graph.read(&xs[0]), graph.read(&xs[1])];
    let tab = graph.read(&table);
    let b: Vec<_> = bufs.iter_mut().map(|t| graph.write(t)).collect();
    // Every intermediate zeroed first: a kernel that read one before the kernel ahead
    // wrote it would read zeros, not the last replay's values.
    for &t in &b {
        graph.zero(t).unwrap();
    }
    let mut first = None;
    let mut input = x_args[0];
    for s in 0..steps {
        let slow = graph
            .launch(k.add_one_slowly.kernel(), &[input, b[2 * s]], &cycles)
            .unwrap();
        first.get_or_insert(slow);
        let halve = graph
            .launch(
                k.halve_and_add.kernel(),
                &[tab, b[2 * s], b[2 * s + 1]],
                &[],
            )
            .unwrap();
        // Only the kernel with early arguments starts early, after a kernel node.
        assert!(
            !graph.starts_early(slow).unwrap(),
            "step {s}: add_one_slowly"
        );
        assert_eq!(
            graph.starts_early(halve).unwrap(),
            programmatic_launch(&ctx),
            "step {s}: halve_and_add"
        );
        input = b[2 * s + 1];
    }
    let first = first.unwrap();
    for replay in 0..60 {
        let which = replay % 2;
        graph
            .update(first, &[x_args[which], b[0]], &cycles)
            .unwrap();
        graph.replay(&stream).unwrap();
        let got = graph.to_host::<f32>(b[2 * steps - 1], &stream).unwrap();
        let want = early_chain(&xs_h[which], &table_h, steps);
        let bad = got
            .iter()
            .zip(&want)
            .position(|(g, w)| g.to_bits() != w.to_bits());
        assert!(
            bad.is_none(),
            "replay {replay}: element {bad:?} of {n}: got {got:?}"
        );
    }
    graph.check().unwrap();
    drop(graph);
    ctx.check_err().unwrap();
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_kernel_whose_early_argument_a_node_ahead_writes_keeps_an_ordinary_edge() {
    let (ctx, stream) = setup();
    let k = early_spec::Kernels::load(&ctx).unwrap();
    let n = 3000;
    let x_h: Vec<f32> = (0..n).map(|i| (i % 53) as f32).collect();
    let table_h: Vec<f32> = (0..n).map(|i| (i % 5) as f32 * 0.5).collect();
    let x = Tensor::from_host(&stream, &x_h, &[n]).unwrap();
    let table_src = Tensor::from_host(&stream, &table_h, &[n]).unwrap();
    let mut table = Tensor::full(&stream, f32::NAN, &[n]).unwrap();
    let mut mid = Tensor::full(&stream, f32::NAN, &[n]).unwrap();
    let mut out = Tensor::full(&stream, f32::NAN, &[n]).unwrap();
    let cycles = [Scalar::I64(20_000)];

    let mut graph = Graph::new(&stream).unwrap();
    let (xa, src) = (graph.read(&x), graph.read(&table_src));
    let (tab, m, o) = (
        graph.write(&mut table),
        graph.write(&mut mid),
        graph.write(&mut out),
    );
    // The table is written by a copy ahead: the kernel that reads it early must not start
    // before that copy, or any node after it, has finished.
    graph.copy(src, tab).unwrap();
    graph
        .launch(k.add_one_slowly.kernel(), &[xa, m], &cycles)
        .unwrap();
    let halve = graph
        .launch(k.halve_and_add.kernel(), &[tab, m, o], &[])
        .unwrap();
    assert!(!graph.starts_early(halve).unwrap());
    for replay in 0..20 {
        graph.replay(&stream).unwrap();
        let got = graph.to_host::<f32>(o, &stream).unwrap();
        assert_eq!(got, early_chain(&x_h, &table_h, 1), "replay {replay}");
    }
    drop(graph);

    // Started early at capture, then an update makes the slow kernel ahead write the
    // table: the edge turns ordinary, and the next replays read the table it wrote.
    let mut table = Tensor::from_host(&stream, &table_h, &[n]).unwrap();
    let mut graph = Graph::new(&stream).unwrap();
    let xa = graph.read(&x);
    let (tab, m, o) = (
        graph.write(&mut table),
        graph.write(&mut mid),
        graph.write(&mut out),
    );
    let slow = graph
        .launch(k.add_one_slowly.kernel(), &[xa, m], &cycles)
        .unwrap();
    let halve = graph
        .launch(k.halve_and_add.kernel(), &[tab, m, o], &[])
        .unwrap();
    assert_eq!(
        graph.starts_early(halve).unwrap(),
        programmatic_launch(&ctx)
    );
    graph.replay(&stream).unwrap();
    assert_eq!(
        graph.to_host::<f32>(o, &stream).unwrap(),
        early_chain(&x_h, &table_h, 1)
    );
    graph.update(slow, &[xa, tab], &cycles).unwrap();
    assert!(!graph.starts_early(halve).unwrap());
    for replay in 0..20 {
        graph.replay(&stream).unwrap();
        // table = x + 1 (this replay's), mid = x + 1 (the first replay's).
        let want: Vec<f32> = x_h.iter().map(|v| (v + 1.0) * 0.5 + (v + 1.0)).collect();
        assert_eq!(
            graph.to_host::<f32>(o, &stream).unwrap(),
            want,
            "replay {replay}"
        );
    }
    drop(graph);
    ctx.check_err().unwrap();
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_checked_launch_reports_a_read_before_the_wait_of_an_argument_that_is_not_early() {
    let (ctx, stream) = setup();
    let k = early_spec::Kernels::load(&ctx).unwrap();
    let n = 600;
    let x_h: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let table_h: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
    let x = Tensor::from_host(&stream, &x_h, &[n]).unwrap();
    let table = Tensor::from_host(&stream, &table_h, &[n]).unwrap();
    let mut y = Tensor::full(&stream, f32::NAN, &[n]).unwrap();
    // A launch of `kernel` on (table, x, y), directly: never started early.
    let launch = |kernel: &ima::Kernel, y: &mut Tensor<f32>| {
        kernel.launch(
            &stream,
            &mut [
                ima::KernelArg::read(&table),
                ima::KernelArg::read(&x),
                ima::KernelArg::write(y),
            ],
            &[],
        )
    };
    let kernel = k.reads_too_soon.kernel();
    // Release: it reads x as it is.
    kernel.set_checked_mode(CheckedMode::Off);
    launch(kernel, &mut y).unwrap();
    let want: Vec<f32> = x_h.iter().zip(&table_h).map(|(a, b)| a + b).collect();
    assert_eq!(y.to_host(&stream).unwrap(), want);
    // Checked: every thread's read of x before its wait is refused and reported.
    kernel.set_checked_mode(CheckedMode::Wait);
    let e = launch(kernel, &mut y).unwrap_err();
    let text = e.to_string();
    let r = out_of_bounds(e);
    assert_eq!(
        (r.arg.as_str(), r.access),
        ("x", Access::BeforeWait { write: false }),
        "{text}"
    );
    assert_eq!(r.count as usize, n, "{text}");
    assert!(text.contains("before ima_wait_for_inputs()"), "{text}");
    println!("{text}");
    // halve_and_add reads only its early table before the wait: no report.
    let halve = k.halve_and_add.kernel();
    halve.set_checked_mode(CheckedMode::Wait);
    launch(halve, &mut y).unwrap();
    let want: Vec<f32> = x_h.iter().zip(&table_h).map(|(a, b)| a * 0.5 + b).collect();
    assert_eq!(y.to_host(&stream).unwrap(), want);
    ctx.check_err().unwrap();
}
