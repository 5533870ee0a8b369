//! A tensor bound into a graph cannot be dropped while the graph can still be replayed: a
//! replay would read freed memory.

use std::sync::Arc;

use ima_runtime::cudarc::driver::CudaStream;
use ima_runtime::{Graph, Kernel, Tensor};

fn drop_while_captured(
    stream: &Arc<CudaStream>,
    kernel: &Kernel,
    x: Tensor<f32>,
    mut y: Tensor<f32>,
) {
    let mut graph = Graph::new(stream).unwrap();
    let xa = graph.read(&x);
    let ya = graph.write(&mut y);
    graph.launch(kernel, &[xa, ya], &[]).unwrap();
    drop(x);
    graph.replay(stream).unwrap();
}

fn main() {
    let _ = drop_while_captured;
}
