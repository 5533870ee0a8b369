// Throwaway (issue 21): what slows a tensor-map weight stream when its consumers work?
// Session 28 found gptq_gemm_wg's 16-row pipeline (rp16b_s5) streaming its weights at
// 3.2 TB/s with idle consumers (38.0 us at K = 8192, N = 28672) and its stages arriving
// far more slowly with the consumers at work (51.7 us), though the consumers waited
// 625 cycles a stage for data: the TMA unit's copies themselves took longer. Candidates:
// the consumers' shared-memory reads beside the TMA unit's writes, the SM's clock under
// arithmetic (1.77 against 1.97 GHz), the tensor cores' power. This streams the same
// matrix (GPTQ's qweight of K = 8192, N = 28672: 1024 x 28672 words, 117 MB; 4 copies
// cycled, past L2) through a ring of 6 stages of 32 rows x 192 words (24 KB), one block
// an SM of 1 producer warp and 12 consumer warps, the units (32-row tiles of a 192-column
// strip, K fastest) dealt as equal runs, and varies what the consumers do a stage:
//   idle   wait for the stage, free it
//   lds    read the stage's 24 KB from shared memory (64 bytes a thread, LDS.128)
//   fma    SPIN iterations of 4 independent FFMA chains a thread (no shared memory)
//   mma    32 mma.sync m16n8k16 a warp on registers (what gptq_gemm_wg's 16 wgmma a
//          warpgroup a stage are in tensor-core work), 4 accumulators
//   all    lds, fma and mma
// and how the stage is copied: one box of a tensor map (tma), or 16-byte cp.async by the
// producer warp's 32 lanes, each lane's copies signalled by cp.async.mbarrier.arrive
// (cpa). Each row: µs a launch (CUDA graphs over the 4 copies, median of 50 replays),
// TB/s of qweight, and block 0's SM clock over the launch (clock64 over %globaltimer).
// Session 31 ran the forms above: one box a stage streams at 3.90 TB/s (30.1 us), where
// session 28's idle pipelines of gptq_gemm_wg's stage (W's words as six boxes of 32 words
// under the 128-byte swizzle, then a box of scales and one of zeros; 3 or 6 stages) took
// 37.3 to 38.1 us. `interf boxes` separates why, all idle and with `all` at SPIN 40:
//   tma6s  the stage as six boxes of 32 x 32 words, 128-byte swizzled (gptq_gemm_wg's)
//   tma6   the same six boxes unswizzled
//   +sz    with a box of the stage's 2 groups' scales (2 x 192 f16) and one of its zeros
//          (2 x 24 words), as gptq_gemm_wg's stage has at G = 128
//   s3     3 stages instead of 6 (gptq_gemm_wg's)
// Build here:
//   source scripts/cuda-env && nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a \
//     -L"$IMA_CUDA_ROOT/lib" -o bench/explore/interf/interf bench/explore/interf/interf.cu
// Run there: bench/explore/interf/interf [SPIN] (default 100).
#include <cuda.h>
#include <cuda_fp16.h>

#include <string>

#include "../graph_time.cuh"

constexpr int ROWS = 1024, COLS = 28672, TILE_R = 32, TILE_C = 192, STAGES = 6, CONSUMERS = 12;
constexpr int STAGE_BYTES = TILE_R * TILE_C * 4, THREADS = 32 * (1 + CONSUMERS);
constexpr int KT = ROWS / TILE_R, CT = (COLS + TILE_C - 1) / TILE_C, UNITS = KT * CT;
enum Work { IDLE = 0, LDS = 1, FMA = 2, MMA = 4 };
// How a stage is copied: one box (TMA), six 32-word boxes 128-byte swizzled (TMA6S) or not
// (TMA6), or by cp.async (CPA); SZ adds the scales' and zeros' boxes.
enum Copy { TMA = 0, CPA = 1, TMA6S = 2, TMA6 = 3, SZ = 8 };
constexpr int GROUPS = ROWS / 16, SCALE_BYTES = 2 * TILE_C * 2, ZERO_BYTES = 2 * (TILE_C / 8) * 4;
// A stage's scales and zeros, after the ring's words: SZ_BYTES a stage, in SZ_STRIDE (a
// box's shared-memory address is a multiple of 128).
constexpr int SZ_BYTES = SCALE_BYTES + ZERO_BYTES, SZ_STRIDE = 1024;
// The tensor maps a launch reads: the words as one box, as six swizzled, as six plain; the
// scales; the zeros.
struct Maps {
    CUtensorMap words, words6s, words6, scales, zeros;
};

__device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity) {
    asm volatile(
        "{\n.reg .pred P;\nW:\nmbarrier.try_wait.parity.shared::cta.b64 P, [%0], %1;\n@!P bra.uni W;\n}\n" ::"r"(bar),
        "r"(parity)
        : "memory");
}
__device__ long long clocks[2], nanos[2];

__device__ __forceinline__ void tma2d(unsigned dst, const CUtensorMap& map, int x, int y, unsigned bar) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(
            dst),
        "l"(reinterpret_cast<unsigned long long>(&map)), "r"(x), "r"(y), "r"(bar)
        : "memory");
}

template <int WORK, int COPY, int STAGES = ::STAGES>
__global__ void __launch_bounds__(THREADS, 1)
    stream(const __grid_constant__ Maps maps, const int* __restrict__ w, int spin, float* sink) {
    extern __shared__ __align__(1024) unsigned char smem[];
    const unsigned base = unsigned(__cvta_generic_to_shared(smem));
    const unsigned sz = base + STAGES * STAGE_BYTES;
    const unsigned full = sz + STAGES * SZ_STRIDE, empty = full + 8 * STAGES;
    constexpr int COPIES = COPY & 7, TX = STAGE_BYTES + (COPY & SZ ? SZ_BYTES : 0);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int q = UNITS / gridDim.x, r = UNITS % gridDim.x, b = blockIdx.x;
    const int u0 = b * q + min(b, r), u1 = u0 + q + (b < r);
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(full + 8 * s), "r"(COPIES == CPA ? 32 : 1));
            asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(empty + 8 * s), "r"(CONSUMERS));
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    if (b == 0 && threadIdx.x == 0) {
        clocks[0] = clock64();
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(nanos[0]));
    }
    if (warp == 0) {
        for (int u = u0, i = 0; u < u1; ++u, ++i) {
            const int slot = i % STAGES, kt = u % KT, ct = u / KT;
            if (i >= STAGES) mbar_wait(empty + 8 * slot, unsigned((i / STAGES - 1) & 1));
            const unsigned dst = base + slot * STAGE_BYTES, bar = full + 8 * slot;
            if (COPIES != CPA) {
                if (lane == 0) {
                    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(TX) : "memory");
                    if (COPIES == TMA) tma2d(dst, maps.words, ct * TILE_C, kt * TILE_R, bar);
                    else
                        for (int j = 0; j < TILE_C / 32; ++j)
                            tma2d(dst + j * TILE_R * 128, COPIES == TMA6S ? maps.words6s : maps.words6, ct * TILE_C + 32 * j,
                                  kt * TILE_R, bar);
                    if (COPY & SZ) {
                        const unsigned at = sz + slot * SZ_STRIDE;
                        tma2d(at, maps.scales, ct * TILE_C, 2 * kt, bar);
                        tma2d(at + SCALE_BYTES, maps.zeros, ct * (TILE_C / 8), 2 * kt, bar);
                    }
                }
            } else {
                // 48 16-byte chunks a row; columns past COLS skipped (the last strip's).
                for (int c = lane; c < TILE_R * (TILE_C / 4); c += 32) {
                    const int row = c / (TILE_C / 4), col = ct * TILE_C + c % (TILE_C / 4) * 4;
                    if (col < COLS)
                        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst + 16 * c),
                                     "l"(w + size_t(kt * TILE_R + row) * COLS + col)
                                     : "memory");
                }
                asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(bar) : "memory");
            }
        }
        return;
    }
    const int ct = threadIdx.x - 32;
    unsigned acc = 0;
    float f[4] = {1.f, 2.f, 3.f, 4.f};
    float d[4][4] = {};
    unsigned a[4] = {0x3c003c00u, 0x3c003c00u, 0x3c003c00u, 0x3c003c00u}, bb[2] = {0x3c003c00u, 0x3c003c00u};
    for (int u = u0, i = 0; u < u1; ++u, ++i) {
        const int slot = i % STAGES;
        mbar_wait(full + 8 * slot, unsigned((i / STAGES) & 1));
        if (WORK & LDS) {
#pragma unroll
            for (int k = 0; k < STAGE_BYTES / 16 / (32 * CONSUMERS); ++k) {
                unsigned v[4];
                asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                             : "=r"(v[0]), "=r"(v[1]), "=r"(v[2]), "=r"(v[3])
                             : "r"(base + slot * STAGE_BYTES + 16 * (ct + 32 * CONSUMERS * k)));
                acc ^= v[0] ^ v[1] ^ v[2] ^ v[3];
            }
        }
        if (WORK & FMA)
            for (int k = 0; k < spin; ++k)
#pragma unroll
                for (int j = 0; j < 4; ++j) f[j] = fmaf(f[j], 0.999f, 1e-3f);
        if (WORK & MMA)
#pragma unroll
            for (int k = 0; k < 32; ++k) {
                float* c = d[k % 4];
                asm volatile(
                    "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
                    "{%0, %1, %2, %3};"
                    : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                    : "r"(a[0] ^ acc), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(bb[0]), "r"(bb[1]));
            }
        __syncwarp();
        if (lane == 0) asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(empty + 8 * slot) : "memory");
    }
    float s = float(acc & 1u) + f[0] + f[1] + f[2] + f[3];
    for (int j = 0; j < 4; ++j) s += d[j][0] + d[j][1] + d[j][2] + d[j][3];
    if (s == -1.f) sink[threadIdx.x] = s;  // never: keeps the work
    if (b == 0 && ct == 0) {
        clocks[1] = clock64();
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(nanos[1]));
    }
}

typedef CUresult (*EncodeTiled)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

int main(int argc, char** argv) {
    const bool boxes = argc > 1 && std::string(argv[1]) == "boxes";
    const int spin = boxes ? 40 : argc > 1 ? std::atoi(argv[1]) : 100;
    constexpr int SETS = 4;
    const size_t bytes = size_t(ROWS) * COLS * 4;
    EncodeTiled encode;
    {
        void* f = nullptr;
        cudaDriverEntryPointQueryResult q;
        CHECK(cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", &f, cudaEnableDefault, &q));
        encode = reinterpret_cast<EncodeTiled>(f);
    }
    // A 2-D map of `base` (rows x cols elements of `size` bytes), boxes of box_rows x box_cols.
    auto map_of = [&](void* base, CUtensorMapDataType type, int size, int rows, int cols, int box_rows, int box_cols,
                      CUtensorMapSwizzle swizzle) {
        CUtensorMap m;
        const cuuint64_t dims[2] = {cuuint64_t(cols), cuuint64_t(rows)}, strides[1] = {cuuint64_t(cols) * size};
        const cuuint32_t box[2] = {cuuint32_t(box_cols), cuuint32_t(box_rows)}, steps[2] = {1, 1};
        if (encode(&m, type, 2, base, dims, strides, box, steps, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                   CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS) {
            std::fprintf(stderr, "cuTensorMapEncodeTiled failed (%d x %d, box %d x %d)\n", rows, cols, box_rows, box_cols);
            std::exit(1);
        }
        return m;
    };
    int* w[SETS];
    Maps maps[SETS];
    for (int i = 0; i < SETS; ++i) {
        CHECK(cudaMalloc(&w[i], bytes));
        CHECK(cudaMemset(w[i], i + 1, bytes));
        void *scales, *zeros;
        CHECK(cudaMalloc(&scales, size_t(GROUPS) * COLS * 2));
        CHECK(cudaMemset(scales, 0, size_t(GROUPS) * COLS * 2));
        CHECK(cudaMalloc(&zeros, size_t(GROUPS) * COLS / 2));
        CHECK(cudaMemset(zeros, 0, size_t(GROUPS) * COLS / 2));
        const auto u32 = CU_TENSOR_MAP_DATA_TYPE_UINT32;
        maps[i].words = map_of(w[i], u32, 4, ROWS, COLS, TILE_R, TILE_C, CU_TENSOR_MAP_SWIZZLE_NONE);
        maps[i].words6s = map_of(w[i], u32, 4, ROWS, COLS, TILE_R, 32, CU_TENSOR_MAP_SWIZZLE_128B);
        maps[i].words6 = map_of(w[i], u32, 4, ROWS, COLS, TILE_R, 32, CU_TENSOR_MAP_SWIZZLE_NONE);
        maps[i].scales = map_of(scales, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, GROUPS, COLS, 2, TILE_C, CU_TENSOR_MAP_SWIZZLE_NONE);
        maps[i].zeros = map_of(zeros, u32, 4, GROUPS, COLS / 8, 2, TILE_C / 8, CU_TENSOR_MAP_SWIZZLE_NONE);
    }
    float* sink;
    CHECK(cudaMalloc(&sink, THREADS * sizeof(float)));
    int sms;
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    std::printf("qweight %d x %d words (%.1f MB), %d copies; ring of %d stages of %d KB; %d blocks of %d threads; spin %d\n",
                ROWS, COLS, bytes / 1e6, SETS, STAGES, STAGE_BYTES / 1024, sms, THREADS, spin);
    auto form = [&](const char* name, auto kernel, int stages = STAGES) {
        const int smem = stages * (STAGE_BYTES + SZ_STRIDE + 16);
        CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
        const float us = graph_us_a_layer(s, SETS, [&](int l) { kernel<<<sms, THREADS, smem, s>>>(maps[l], w[l], spin, sink); });
        long long c[2], n[2];
        CHECK(cudaMemcpyFromSymbol(c, clocks, sizeof c));
        CHECK(cudaMemcpyFromSymbol(n, nanos, sizeof n));
        std::printf("%-10s %6.1f us  %.2f TB/s  block 0 at %.2f GHz\n", name, us, bytes / (us * 1e-6) / 1e12,
                    double(c[1] - c[0]) / double(n[1] - n[0]));
    };
    if (boxes) {
        for (int rep = 0; rep < 2; ++rep) {
            form("tma idle", stream<IDLE, TMA>);
            form("tma6s idle", stream<IDLE, TMA6S>);
            form("tma6 idle", stream<IDLE, TMA6>);
            form("tma+sz idle", stream<IDLE, TMA | SZ>);
            form("tma6s+sz idle", stream<IDLE, TMA6S | SZ>);
            form("tma6s+sz s3 idle", stream<IDLE, TMA6S | SZ, 3>, 3);
            form("tma+sz s3 idle", stream<IDLE, TMA | SZ, 3>, 3);
            form("tma+sz all", stream<LDS | FMA | MMA, TMA | SZ>);
            form("tma6s+sz all", stream<LDS | FMA | MMA, TMA6S | SZ>);
        }
        CHECK(cudaDeviceSynchronize());
        return 0;
    }
    for (int rep = 0; rep < 2; ++rep) {
        form("tma idle", stream<IDLE, TMA>);
        form("tma lds", stream<LDS, TMA>);
        form("tma fma", stream<FMA, TMA>);
        form("tma mma", stream<MMA, TMA>);
        form("tma all", stream<LDS | FMA | MMA, TMA>);
        form("cpa idle", stream<IDLE, CPA>);
        form("cpa lds", stream<LDS, CPA>);
        form("cpa all", stream<LDS | FMA | MMA, CPA>);
    }
    CHECK(cudaDeviceSynchronize());
    return 0;
}
