//! A graph cannot outlive a tensor it captured: the tensor would be freed under its next
//! replay.

use std::sync::Arc;

use ima_runtime::cudarc::driver::CudaStream;
use ima_runtime::{Graph, Kernel, Tensor};

fn outlive(stream: &Arc<CudaStream>, kernel: &Kernel, mut y: Tensor<f32>) {
    let mut graph = Graph::new(stream).unwrap();
    let ya = graph.write(&mut y);
    {
        let x = Tensor::<f32>::zeros(stream, &[4]).unwrap();
        let xa = graph.read(&x);
        graph.launch(kernel, &[xa, ya], &[]).unwrap();
    }
    graph.replay(stream).unwrap();
}

fn main() {
    let _ = outlive;
}
