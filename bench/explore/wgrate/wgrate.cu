// Throwaway, session 45 (issue 21): what a warpgroup MMA costs the SM at x's 16 or 32 rows,
// with nothing else to do. bench/explore/fold2 found that one more m64n16k16 a half stage
// costs gptq_gemm_wg16 about 1.9 µs a launch (about 190 cycles a stage for the SM's 6 more),
// and bench/explore/chains that shorter accumulator chains do not help. Here each block
// has 1 to 3 warpgroups (gptq_gemm_wg16's consumers), each issuing STEPS stages of 16
// m64nNk16 MMAs (f16 in, f32 accumulators) in quarters of 4, a commit a quarter, as
// ima_wg_w4_stage does: half 0's 8 into one accumulator, half 1's into another, waiting
// for the first two quarters after the fourth and for all at the stage's end (WAIT 2), for
// all but the last quarter's after each quarter (WAIT 1, a rolling window), or never
// within the run (WAIT 0, the tensor cores' throughput alone; A from shared memory only:
// with A in registers ptxas serialises such a run, C7511). A comes from
// registers (as the W4A16 kernels' decoded weights, REGA 1) or from shared memory by a
// descriptor (REGA 0); B is a 128-byte-swizzled [N, 256] tile of zeros (x's). Cycles an
// MMA an SM: the block's clock64 span over the MMAs all its warpgroups issued.
// nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -o wgrate wgrate.cu
// ./wgrate: one line a configuration.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#include "../../../codegen/include/ima.cuh"
#include "../graph_time.cuh"

// ima.cuh's Hopper part exists in the sm_90a device pass alone: so do these, and the
// kernel's body.
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
// The kernels' own descriptor and register-operand MMA (ima_wgmma_desc, ImaWgmmaRegA), so
// that what is timed is what they issue.
template <int N>
struct Acc {
    ImaAcc4 c[N / 8];
};
template <int N>
__device__ __forceinline__ void mma_reg(Acc<N>& d, const unsigned (&a)[4], unsigned long long b) {
    ImaWgmmaRegA<N>::mma(d.c, a, b);
}
template <int N>
__device__ __forceinline__ void mma_smem(Acc<N>& d, unsigned long long a, unsigned long long b);
template <>
__device__ __forceinline__ void mma_smem<16>(Acc<16>& d, unsigned long long a, unsigned long long b) {
    asm volatile("wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7}, %8, %9, 1, 1, 1, "
                 "0, 0;"
                 : "+f"(d.c[0].x[0]), "+f"(d.c[0].x[1]), "+f"(d.c[0].x[2]), "+f"(d.c[0].x[3]), "+f"(d.c[1].x[0]), "+f"(d.c[1].x[1]), "+f"(d.c[1].x[2]),
                   "+f"(d.c[1].x[3])
                 : "l"(a), "l"(b));
}
template <>
__device__ __forceinline__ void mma_smem<32>(Acc<32>& d, unsigned long long a, unsigned long long b) {
    asm volatile("wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, "
                 "%11, %12, %13, %14, %15}, %16, %17, 1, 1, 1, 0, 0;"
                 : "+f"(d.c[0].x[0]), "+f"(d.c[0].x[1]), "+f"(d.c[0].x[2]), "+f"(d.c[0].x[3]), "+f"(d.c[1].x[0]), "+f"(d.c[1].x[1]), "+f"(d.c[1].x[2]),
                   "+f"(d.c[1].x[3]), "+f"(d.c[2].x[0]), "+f"(d.c[2].x[1]), "+f"(d.c[2].x[2]), "+f"(d.c[2].x[3]), "+f"(d.c[3].x[0]),
                   "+f"(d.c[3].x[1]), "+f"(d.c[3].x[2]), "+f"(d.c[3].x[3])
                 : "l"(a), "l"(b));
}
template <int K>
__device__ __forceinline__ void wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(K) : "memory");
}

#endif

// x's [N, 256] tile, then A's [64, 256]: K-major, 128-byte swizzled panels of 64 columns.
template <int N, bool REGA, int WAIT>
__global__ void __launch_bounds__(384, 1) rate(int steps, unsigned long long* cycles, float* sink) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    extern __shared__ __align__(1024) unsigned char smem[];
    const unsigned base = (unsigned(__cvta_generic_to_shared(smem)) + 1023) & ~1023u;
    for (int i = threadIdx.x; i < (N + 64) * 256 / 2; i += blockDim.x)
        asm volatile("st.shared.b32 [%0], %1;" ::"r"(base + 4 * i), "r"(0u));
    __syncthreads();
    const unsigned xb = base, ab = base + N * 256 * 2;
    Acc<N> half[2] = {};
    unsigned a[4] = {0x3c003c00u, 0x3c003c00u, 0x3c003c00u, 0x3c003c00u};
    const unsigned long long t0 = clock64();
    for (int s = 0; s < steps; ++s) {
#pragma unroll
        for (int h = 0; h < 4; ++h) {
            asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
            for (int j = 4 * h; j < 4 * h + 4; ++j) {
                const int k = 16 * j;
                const unsigned long long db = ima_wgmma_desc(xb + (k / 64) * N * 128 + (k % 64) * 2, 16, 1024);
                if constexpr (REGA) {
                    mma_reg<N>(half[h / 2], a, db);
                } else {
                    const unsigned long long da = ima_wgmma_desc(ab + (k / 64) * 64 * 128 + (k % 64) * 2, 16, 1024);
                    mma_smem<N>(half[h / 2], da, db);
                }
            }
            asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
            if (WAIT == 2 && h == 3) wait<2>();
            if (WAIT == 1) wait<1>();
        }
        if (WAIT == 2) wait<0>();
    }
    wait<0>();
    __syncthreads();
    const unsigned long long t1 = clock64();
    float v = 0.f;
#pragma unroll
    for (int i = 0; i < N / 2; ++i) v += half[0].c[i / 4].x[i % 4] + half[1].c[i / 4].x[i % 4];
    if (v != 0.f) *sink = v;  // zeros: never, but it keeps the MMAs
    if (threadIdx.x == 0) cycles[blockIdx.x] = t1 - t0;
#endif
}


template <int N, bool REGA, int WAIT>
void one(int wgs, unsigned long long* cycles, float* sink) {
    const int steps = 2000, blocks = 132, smem = (N + 64) * 256 * 2 + 1024;
    CHECK(cudaFuncSetAttribute(rate<N, REGA, WAIT>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    rate<N, REGA, WAIT><<<blocks, 128 * wgs, smem>>>(steps, cycles, sink);  // warm
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    CHECK(cudaEventRecord(e0));
    rate<N, REGA, WAIT><<<blocks, 128 * wgs, smem>>>(steps, cycles, sink);
    CHECK(cudaEventRecord(e1));
    CHECK(cudaEventSynchronize(e1));
    CHECK(cudaGetLastError());
    float ms;
    CHECK(cudaEventElapsedTime(&ms, e0, e1));
    unsigned long long h[132];
    CHECK(cudaMemcpy(h, cycles, sizeof h, cudaMemcpyDeviceToHost));
    double mean = 0;
    for (int b = 0; b < blocks; ++b) mean += double(h[b]) / blocks;
    const double mmas = double(steps) * 16 * wgs;
    printf("m64n%dk16, A from %s, %s, %d warpgroups: %.1f cycles an MMA an SM (%.1f a warpgroup's), %.2f ns an MMA "
           "an SM by the events\n",
           N, REGA ? "registers" : "shared", WAIT == 2 ? "stage waits" : WAIT == 1 ? "rolling waits" : "no waits", wgs, mean / mmas, mean / steps / 16,
           1e6 * ms / mmas);
}

int main() {
    unsigned long long* cycles;
    float* sink;
    CHECK(cudaMalloc(&cycles, 132 * sizeof(unsigned long long)));
    CHECK(cudaMalloc(&sink, 4));
    for (int wgs = 1; wgs <= 3; ++wgs) {
        one<16, true, 2>(wgs, cycles, sink);
        one<16, true, 1>(wgs, cycles, sink);
        one<16, false, 2>(wgs, cycles, sink);
        one<16, false, 0>(wgs, cycles, sink);
        one<32, true, 2>(wgs, cycles, sink);
        one<32, false, 0>(wgs, cycles, sink);
    }
    return 0;
}
