"""Host overhead of one kernel call from Python: imac's generated package (the direct
function and the torch custom op) against a Triton launch and a torch.utils.cpp_extension
load_inline launch of the same body (RMSNorm over rows of bf16, a block per row).

On the GPU machine, with the wheels of scripts/python-wheels installed:
    PYTHONPATH=/tmp/site python3 bench/python_overhead.py
Prints microseconds per call, timed on the host over many back-to-back calls of a tiny
problem (so that the GPU never holds the host back), then the same per call with a
synchronisation after each (launch plus kernel plus sync).
"""

import sys
import time

import torch

import rmsnorm_kernels as rk

dev = torch.device("cuda", 0)
N, D, EPS = 4, 1024, 1e-6
x = torch.randn(N, D, device=dev, dtype=torch.bfloat16)
w = torch.randn(D, device=dev, dtype=torch.bfloat16)
y = torch.empty_like(x)


def per_call(f, calls=20000, sync_each=False):
    for _ in range(200):
        f()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        f()
        if sync_each:
            torch.cuda.synchronize()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / calls * 1e6


candidates = {
    "imac direct (rk.rms_norm)": lambda: rk.rms_norm(x, w, y, EPS),
    "imac custom op (rk.ops.rms_norm_out)": lambda: rk.ops.rms_norm_out(x, w, y, EPS),
    "imac functional op (rk.ops.rms_norm)": lambda: rk.ops.rms_norm(x, w, EPS),
}

try:
    import triton
    import triton.language as tl

    @triton.jit
    def _rms(x_ptr, w_ptr, y_ptr, D: tl.constexpr, eps):
        row = tl.program_id(0)
        offs = tl.arange(0, D)
        v = tl.load(x_ptr + row * D + offs).to(tl.float32)
        r = tl.rsqrt(tl.sum(v * v, 0) / D + eps)
        wv = tl.load(w_ptr + offs).to(tl.float32)
        tl.store(y_ptr + row * D + offs, (v * r * wv).to(tl.bfloat16))

    candidates["triton"] = lambda: _rms[(N,)](x, w, y, D, EPS)
except Exception as e:  # noqa: BLE001
    print(f"triton unavailable: {e}", file=sys.stderr)

try:
    from torch.utils.cpp_extension import load_inline

    cuda_src = r"""
#include <torch/extension.h>
#include <cuda_bf16.h>
#include <c10/cuda/CUDAStream.h>
__global__ void rms(const __nv_bfloat16* x, const __nv_bfloat16* w, __nv_bfloat16* y, int D, float eps) {
    __shared__ float red[32];
    int row = blockIdx.x; float ss = 0.f;
    for (int d = threadIdx.x; d < D; d += blockDim.x) { float v = __bfloat162float(x[row * D + d]); ss += v * v; }
    for (int o = 16; o; o >>= 1) ss += __shfl_xor_sync(0xffffffff, ss, o);
    if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = ss;
    __syncthreads();
    if (threadIdx.x < 32) { ss = threadIdx.x < blockDim.x / 32 ? red[threadIdx.x] : 0.f;
        for (int o = 16; o; o >>= 1) ss += __shfl_xor_sync(0xffffffff, ss, o); if (threadIdx.x == 0) red[0] = ss; }
    __syncthreads();
    float r = rsqrtf(red[0] / D + eps);
    for (int d = threadIdx.x; d < D; d += blockDim.x)
        y[row * D + d] = __float2bfloat16(__bfloat162float(x[row * D + d]) * r * __bfloat162float(w[d]));
}
void rms_norm(torch::Tensor x, torch::Tensor w, torch::Tensor y, double eps) {
    int n = x.size(0), d = x.size(1);
    rms<<<n, 256, 0, c10::cuda::getCurrentCUDAStream()>>>(
        (const __nv_bfloat16*)x.data_ptr(), (const __nv_bfloat16*)w.data_ptr(),
        (__nv_bfloat16*)y.data_ptr(), d, (float)eps);
}
"""
    ext = load_inline(
        name="rms_inline",
        cpp_sources="void rms_norm(torch::Tensor x, torch::Tensor w, torch::Tensor y, double eps);",
        cuda_sources=cuda_src,
        functions=["rms_norm"],
        extra_cuda_cflags=["-O3", "-arch=sm_90"],
    )
    candidates["load_inline"] = lambda: ext.rms_norm(x, w, y, EPS)
except Exception as e:  # noqa: BLE001
    print(f"load_inline unavailable: {e}", file=sys.stderr)

print(f"rms_norm, x bf16[{N}, {D}]; microseconds per call")
print(f"{'launcher':40} {'enqueue':>10} {'with sync':>10}")
for name, f in candidates.items():
    print(f"{name:40} {per_call(f):10.2f} {per_call(f, 5000, True):10.2f}", flush=True)
