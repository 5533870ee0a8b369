// Marlin (IST-DASLab/marlin at 2f6d7c1, Apache-2.0; marlin_cuda_kernel.cu beside this file,
// changed in one place, marked `imac:`, its weights' copies without their L2 policy, which
// nvcc 13.0 miscompiled) as a C entry point that bench/explore/marlin/time_marlin.py loads with ctypes:
// the best published W4A16 kernel for small batches, as a reference for issue 21's
// gptq_gemm. Build (here, then carry the .so):
//   nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -shared -Xcompiler -fPIC --expt-relaxed-constexpr \
//        -L"$IMA_CUDA_ROOT/lib" -o bench/explore/marlin/libmarlin.so bench/explore/marlin/marlin_lib.cu
#include "marlin_cuda_kernel.cu"

extern "C" int marlin_mul(const void* a, const void* b, void* c, void* s, int m, int n, int k,
                          void* workspace, int groupsize, cudaStream_t stream) {
    int err = marlin_cuda(a, b, c, s, m, n, k, workspace, groupsize, 0, stream);
    if (err) return 100 + err;
    return static_cast<int>(cudaGetLastError());
}
