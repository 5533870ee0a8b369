//! `launch grid(...) block(...) cluster(...)` on a GPU: `cluster_row_sums` of
//! `tests/in/clusters.ima`, through its committed stubs, splits each row of x across the
//! four blocks of a cluster and adds their sums through distributed shared memory
//! (`part.in_block(rank)`). Its sums match an f64 sum on the host, in release and checked
//! modes and in a graph; a checked launch whose block 0 asks for a block past the
//! cluster's last is reported, with the rank and the cluster's size, and the context
//! stays healthy.

mod common;

#[allow(dead_code)]
mod clusters {
    include!("out/clusters.rs");
}

use std::sync::Arc;

use ima::cudarc::driver::{CudaContext, CudaStream};
use ima::{Access, CheckedMode, Error, Graph, Tensor};

use clusters::ClusterRowSumsArgs;
use common::lcg;

fn setup() -> (Arc<CudaContext>, Arc<CudaStream>, clusters::Kernels) {
    let ctx = CudaContext::new(0).expect("a CUDA device");
    let stream = ctx.new_stream().expect("a CUDA stream");
    let kernels = clusters::Kernels::load(&ctx).expect("clusters' module (compute capability 9.0)");
    (ctx, stream, kernels)
}

/// R x K values in [-1, 1), the tests' shared sequence (`common::lcg`).
fn rows(r: usize, k: usize) -> Vec<f32> {
    lcg(0x2545_f491).take(r * k).collect()
}

/// Each row's sum in f64.
fn sums(x: &[f32], k: usize) -> Vec<f64> {
    x.chunks(k)
        .map(|row| row.iter().map(|&v| f64::from(v)).sum())
        .collect()
}

fn assert_sums(got: &[f32], want: &[f64], what: &str) {
    for (r, (&g, &w)) in got.iter().zip(want).enumerate() {
        assert!(
            (f64::from(g) - w).abs() <= 1e-3 * (1.0 + w.abs()),
            "{what}: row {r}: {g} against {w}"
        );
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_cluster_adds_its_blocks_sums_through_distributed_shared_memory() {
    let (ctx, stream, kernels) = setup();
    let k = kernels.cluster_row_sums.kernel();
    for (r, kk) in [(1, 4), (37, 4096), (300, 1000)] {
        let host = rows(r, kk);
        let want = sums(&host, kk);
        let x = Tensor::from_host(&stream, &host, &[r, kk]).unwrap();
        for mode in [CheckedMode::Off, CheckedMode::Wait] {
            k.set_checked_mode(mode);
            let mut y = Tensor::full(&stream, f32::NAN, &[r]).unwrap();
            kernels
                .cluster_row_sums
                .launch(
                    &stream,
                    ClusterRowSumsArgs {
                        x: &x,
                        y: &mut y,
                        shift: 0,
                    },
                )
                .unwrap();
            assert_sums(
                &y.to_host(&stream).unwrap(),
                &want,
                &format!("{mode:?}, R = {r}, K = {kk}"),
            );
        }
    }
    ctx.check_err().unwrap();
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_block_past_the_clusters_last_is_reported_in_checked_mode() {
    let (ctx, stream, kernels) = setup();
    let (r, kk) = (8, 256);
    let x = Tensor::from_host(&stream, &rows(r, kk), &[r, kk]).unwrap();
    let mut y = Tensor::<f32>::zeros(&stream, &[r]).unwrap();
    kernels
        .cluster_row_sums
        .kernel()
        .set_checked_mode(CheckedMode::Wait);
    // Block 0 reads blocks 1 to 4 of its cluster of 4: rank 4 does not exist.
    let e = kernels
        .cluster_row_sums
        .launch(
            &stream,
            ClusterRowSumsArgs {
                x: &x,
                y: &mut y,
                shift: 1,
            },
        )
        .unwrap_err();
    let Error::OutOfBounds(report) = e else {
        panic!("expected an out-of-bounds report, got {e}");
    };
    assert_eq!(
        (
            report.access,
            report.arg.as_str(),
            &report.index[..],
            &report.extent[..]
        ),
        (Access::ClusterRank, "shared part", &[4][..], &[4][..]),
        "{report}"
    );
    // One read a cluster (block 0's thread 0), R clusters.
    assert_eq!(report.count, r as u32, "{report}");
    let text = report.to_string();
    assert!(
        text.starts_with(
            "cluster_row_sums: shared part of block 4 of the cluster: the cluster has 4 blocks"
        ),
        "{text}"
    );
    // The read stayed in block 0's own array: the context is healthy.
    ctx.check_err().unwrap();
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_clustered_kernel_replays_in_a_graph() {
    let (ctx, stream, kernels) = setup();
    let (r, kk) = (64, 2048);
    let host = rows(r, kk);
    let want = sums(&host, kk);
    let x = Tensor::from_host(&stream, &host, &[r, kk]).unwrap();
    let mut y = Tensor::full(&stream, f32::NAN, &[r]).unwrap();
    let mut graph = Graph::new(&stream).unwrap();
    let xi = graph.read(&x);
    let yo = graph.write(&mut y);
    graph
        .launch(
            kernels.cluster_row_sums.kernel(),
            &[xi, yo],
            &[ima::Scalar::I32(0)],
        )
        .unwrap();
    for replay in 0..3 {
        graph.replay(&stream).unwrap();
        let got = graph.to_host::<f32>(yo, &stream).unwrap();
        assert_sums(&got, &want, &format!("graph, replay {replay}"));
    }
    drop(graph);
    ctx.check_err().unwrap();
}
