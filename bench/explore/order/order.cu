// Throwaway, session 45 (issue 21): does the order in which gptq_gemm_wg16's blocks walk
// their units change what DRAM gives the weights' stream? The consumers here do no work:
// one producer thread a block copies each unit's tile of GPTQ words ([32 rows of words,
// 192 columns], 24 KB, evict_first as tma_load's) and x's box ([16, 256] f16, from L2)
// through a ring of 5 stages, and one consumer thread frees each stage once it lands.
//   mode 0: copy rate (an f16 elementwise copy, 2 x 1 GiB counted)
//   mode 1: the words' bytes read contiguously (1-D bulk copies of 24 KB, a slab a block)
//   mode 2: stream-K runs over units in column-then-K order (gptq_gemm_wg16's order today):
//           the 132 blocks at once read 132 (tile, k) places far apart
//   mode 3: each block first streams its own whole tile (tiles 0..131, all of K, in step
//           with the others: at a time they read the same rows of words, side by side),
//           then its share of the 18 tiles left as stream-K runs
//   mode 4: the leftover runs first, then the block's whole tile
//   mode 5: the words alone, mode 2's order, no x
//   mode 6: the words alone, mode 3's order, no x
//   mode 7: the words read contiguously by 16-byte loads (4 in flight a thread, 8 blocks
//           of 512 an SM), for a read-only rate without TMA
// nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -o order order.cu
// ./order [K N]: µs a launch (events around 40 launches alternating two weight sets past
// L2), and TB/s of the words.
#include <cuda.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#include "../graph_time.cuh"
#include "../tma_ring.cuh"

constexpr int STAGES = 5, WROWS = 32, WCOLS = 192, XR = 16, XC = 256;
constexpr int WBYTES = WROWS * WCOLS * 4, XBYTES = XR * XC * 2, STAGE = WBYTES + XBYTES;

__device__ __forceinline__ void tma_2d(unsigned dst, const CUtensorMap* map, unsigned bar, int c0, int c1,
                                       unsigned long long pol) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1, {%3, %4}], "
        "[%2], %5;" ::"r"(dst),
        "l"(reinterpret_cast<unsigned long long>(map)), "r"(bar), "r"(c0), "r"(c1), "l"(pol)
        : "memory");
}
__device__ __forceinline__ void bulk_1d(unsigned dst, const void* src, unsigned bytes, unsigned bar, unsigned long long pol) {
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, [%3], %4;" ::"r"(dst),
        "l"(src), "r"(bytes), "r"(bar), "l"(pol)
        : "memory");
}

// The unit a block streams at its step t: (tile, k of 256 rows), or the contiguous chunk.
struct Plan {
    int NS, KS, G, mode;
    // Block b's first unit of `units` shared out over the G blocks in runs.
    __device__ long long start(int b, long long units) const { return b * units / G; }
    __device__ int run(int b, long long units) const { return int(start(b + 1, units) - start(b, units)); }
    __device__ int count(int b) const {
        if (mode == 2 || mode == 5) return run(b, (long long)NS * KS);
        return KS + run(b, (long long)(NS - G) * KS);
    }
    __device__ void unit(int b, int t, int& tile, int& kc) const {
        if (mode == 2 || mode == 5) {
            const long long u = start(b, (long long)NS * KS) + t;
            tile = int(u / KS), kc = int(u % KS);
            return;
        }
        const long long R = (long long)(NS - G) * KS;
        const int rest = run(b, R);
        const bool own = mode == 4 ? t >= rest : t < KS;
        if (own) {
            tile = b, kc = mode == 4 ? t - rest : t;
        } else {
            const long long u = start(b, R) + (mode == 4 ? t : t - KS);
            tile = G + int(u / KS), kc = int(u % KS);
        }
    }
};

__global__ void __launch_bounds__(64, 1) stream(const __grid_constant__ CUtensorMap tw, const __grid_constant__ CUtensorMap tx,
                                                const char* words, long long bytes, Plan plan) {
    extern __shared__ __align__(1024) unsigned char smem[];
    __shared__ __align__(8) unsigned long long bars[2 * STAGES];
    const unsigned base = (smem_u32(smem) + 1023) & ~1023u, full = smem_u32(bars), empty = full + 8 * STAGES;
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(full + 8 * s, 1);
            mbar_init(empty + 8 * s, 1);
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    const int b = blockIdx.x;
    const bool contiguous = plan.mode == 1;
    const long long chunks = (bytes + WBYTES - 1) / WBYTES;
    const long long c0 = plan.start(b, chunks), c1 = plan.start(b + 1, chunks);
    const int n = contiguous ? int(c1 - c0) : plan.count(b);
    const bool with_x = plan.mode >= 2 && plan.mode <= 4;
    if (threadIdx.x == 0) {
        unsigned long long pol;
        asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
        for (int t = 0; t < n; ++t) {
            const int s = t % STAGES;
            if (t >= STAGES) mbar_wait(empty + 8 * s, (t / STAGES - 1) & 1);
            const unsigned dst = base + s * STAGE, bar = full + 8 * s;
            if (contiguous) {
                const long long off = (c0 + t) * WBYTES;
                const unsigned len = unsigned(bytes - off < WBYTES ? bytes - off : WBYTES);
                mbar_expect_tx(bar, len);
                bulk_1d(dst, words + off, len, bar, pol);
                continue;
            }
            int tile, kc;
            plan.unit(b, t, tile, kc);
            mbar_expect_tx(bar, with_x ? STAGE : WBYTES);
            tma_2d(dst, &tw, bar, tile * WCOLS, kc * WROWS, pol);
            if (with_x) {
                tma_load_2d(dst + WBYTES, &tx, bar, kc * XC, 0);  // x stays in L2: no hint
            }
        }
    } else if (threadIdx.x == 32) {
        for (int t = 0; t < n; ++t) {
            const int s = t % STAGES;
            mbar_wait(full + 8 * s, (t / STAGES) & 1);
            mbar_arrive(empty + 8 * s);
        }
    }
}

__global__ void read_only(const int4* __restrict__ a, long long n, int* out) {
    int acc = 0;
    const long long stride = (long long)gridDim.x * blockDim.x;
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    for (; i + 3 * stride < n; i += 4 * stride) {
        int4 v[4];
#pragma unroll
        for (int u = 0; u < 4; ++u) v[u] = __ldcs(a + i + u * stride);
#pragma unroll
        for (int u = 0; u < 4; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
    }
    for (; i < n; i += stride) {
        const int4 v = __ldcs(a + i);
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x7fffffff) *out = acc;  // never: keeps the loads
}

__global__ void copy(const __half2* __restrict__ a, __half2* __restrict__ b, long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) b[i] = a[i];
}


int main(int argc, char** argv) {
    const int K = argc > 2 ? atoi(argv[1]) : 8192, N = argc > 2 ? atoi(argv[2]) : 28672, G = 132, SETS = 2, REPS = 40;
    const long long wbytes = (long long)(K / 8) * N * 4;
    void *w[SETS], *x;
    for (int i = 0; i < SETS; ++i) {
        CHECK(cudaMalloc(&w[i], wbytes));
        CHECK(cudaMemset(w[i], 1, wbytes));
    }
    CHECK(cudaMalloc(&x, (size_t)XR * K * 2));
    CHECK(cudaMemset(x, 0, (size_t)XR * K * 2));
    CUtensorMap tw[SETS], tx = map2d(x, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, XR, K, XR, XC, CU_TENSOR_MAP_SWIZZLE_NONE);
    for (int i = 0; i < SETS; ++i) tw[i] = map2d(w[i], CU_TENSOR_MAP_DATA_TYPE_INT32, 4, K / 8, N, WROWS, WCOLS, CU_TENSOR_MAP_SWIZZLE_NONE);
    const long long cn = 1ll << 28;  // half2s: 1 GiB each way
    __half2 *ca, *cb;
    CHECK(cudaMalloc(&ca, cn * 4));
    CHECK(cudaMalloc(&cb, cn * 4));
    CHECK(cudaMemset(ca, 0, cn * 4));
    const int smem = STAGES * STAGE + 1024;
    CHECK(cudaFuncSetAttribute(stream, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    const int NS = (N + WCOLS - 1) / WCOLS, KS = (K + 255) / 256;
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    const char* names[] = {"copy rate (read + write)", "words contiguous (1-D bulk)", "stream-K runs (today's order)",
                           "own tile in step, then the rest", "the rest, then own tile in step", "words alone, stream-K runs",
                           "words alone, own tile in step", "words contiguous (16-byte loads)"};
    printf("K = %d, N = %d: words %.1f MB, %d tiles of %d columns x %d units\n", K, N, wbytes / 1e6, NS, WCOLS, KS);
    for (int pass = 0; pass < 3; ++pass)
        for (int mode = 0; mode <= 7; ++mode) {
            if (NS < G && (mode == 3 || mode == 4 || mode == 6)) continue;
            const Plan plan{NS, KS, G, mode};
            auto launch = [&](int i) {
                if (mode == 0)
                    copy<<<132 * 8, 512>>>(ca, cb, cn);
                else if (mode == 7)
                    read_only<<<132 * 4, 512>>>((const int4*)w[i % SETS], wbytes / 16, (int*)cb);
                else
                    stream<<<G, 64, smem>>>(tw[i % SETS], tx, (const char*)w[i % SETS], wbytes, plan);
            };
            for (int i = 0; i < 3; ++i) launch(i);
            CHECK(cudaEventRecord(e0));
            const int reps = mode == 0 ? 10 : REPS;
            for (int i = 0; i < reps; ++i) launch(i);
            CHECK(cudaEventRecord(e1));
            CHECK(cudaEventSynchronize(e1));
            CHECK(cudaGetLastError());
            float ms;
            CHECK(cudaEventElapsedTime(&ms, e0, e1));
            const double us = 1e3 * ms / reps, moved = mode == 0 ? 2.0 * cn * 4 : double(wbytes);
            printf("pass %d mode %d %-34s %8.2f us  %.3f TB/s\n", pass, mode, names[mode], us, moved / us / 1e6);
        }
    return 0;
}
