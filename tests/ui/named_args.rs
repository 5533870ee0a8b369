// A launch stub takes its arguments by name, in a struct of its kernel's: tensors passed in
// order (where `k` could land in `q`'s place unseen), a missing argument, and a tensor of
// the wrong element type do not compile.
use ima::Tensor;
use ima::cudarc::driver::CudaStream;
use ima::half::f16;
use std::sync::Arc;

#[ima::ima_kernel(
    r#"
kernel scores {
    in  q: f16[S, D]
    in  k: f16[T, D]
    out o: f32[S, T]
    launch over o[i, j]
    body { o(i, j) = __half2float(q(i, 0)) * __half2float(k(j, 0)); }
}
"#
)]
mod attn {}

fn in_order(kernels: &attn::Kernels, stream: &Arc<CudaStream>, q: &Tensor<f16>, k: &Tensor<f16>, o: &mut Tensor<f32>) {
    let _ = kernels.scores.launch(stream, k, q, o);
}

fn missing(kernels: &attn::Kernels, stream: &Arc<CudaStream>, q: &Tensor<f16>, o: &mut Tensor<f32>) {
    let _ = kernels.scores.launch(stream, attn::ScoresArgs { q, o });
}

fn wrong_element_type(kernels: &attn::Kernels, stream: &Arc<CudaStream>, x: &Tensor<f32>, k: &Tensor<f16>, o: &mut Tensor<f32>) {
    let _ = kernels.scores.launch(stream, attn::ScoresArgs { q: x, k, o });
}

fn main() {
    let _ = (in_order, missing, wrong_element_type);
}
