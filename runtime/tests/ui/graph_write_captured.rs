//! A tensor a graph writes cannot be written by a launch outside it while the graph lives:
//! the two writes would race.

use std::sync::Arc;

use ima_runtime::cudarc::driver::CudaStream;
use ima_runtime::{Graph, Kernel, KernelArg, Tensor};

fn write_while_captured(
    stream: &Arc<CudaStream>,
    kernel: &Kernel,
    x: Tensor<f32>,
    mut y: Tensor<f32>,
) {
    let mut graph = Graph::new(stream).unwrap();
    let xa = graph.read(&x);
    let ya = graph.write(&mut y);
    graph.launch(kernel, &[xa, ya], &[]).unwrap();
    kernel
        .launch(stream, &mut [KernelArg::read(&x), KernelArg::write(&mut y)], &[])
        .unwrap();
    graph.replay(stream).unwrap();
}

fn main() {
    let _ = write_while_captured;
}
