// A tensor captured into a graph through a stub's `launch_in` stays borrowed for the graph's
// life, like one bound with `Graph::read`: dropping it while the graph can still be
// replayed does not compile, and neither does writing an output the graph captured.
use ima::cudarc::driver::CudaStream;
use ima::{Graph, Tensor};
use std::sync::Arc;

#[ima::ima_kernel(
    r#"
kernel scale {
    in  x: f32[N]
    out y: f32[N]
    param s: f32
    launch over y[i]
    body { y(i) = s * x(i); }
}
"#
)]
mod k {}

fn drop_input(kernels: &k::Kernels, stream: &Arc<CudaStream>, x: Tensor<f32>, mut y: Tensor<f32>) {
    let mut graph = Graph::new(stream).unwrap();
    kernels.scale.launch_in(&mut graph, k::ScaleArgs { x: &x, y: &mut y, s: 2.0 }).unwrap();
    drop(x);
    graph.replay(stream).unwrap();
}

fn write_output(kernels: &k::Kernels, stream: &Arc<CudaStream>, x: &Tensor<f32>, y: &mut Tensor<f32>) {
    let mut graph = Graph::new(stream).unwrap();
    kernels.scale.launch_in(&mut graph, k::ScaleArgs { x, y: &mut *y, s: 2.0 }).unwrap();
    kernels.scale.launch(stream, k::ScaleArgs { x, y: &mut *y, s: 3.0 }).unwrap();
    graph.replay(stream).unwrap();
}

fn main() {
    let _ = (drop_input, write_output);
}
