// Throwaway (issue 22, B = 32): a W4A16 GPTQ product for up to 32 rows of x whose K is split
// across the blocks of a thread-block cluster, each block holding its rows of x for its part
// of K in shared memory and streaming its weights straight into registers, the cluster's
// partial sums added through distributed shared memory (no workspace in global memory, no
// counter, no gpu-scope fence). Loaded by time_cl.py through ctypes.
//
// Why: at the decode layer's 32 rows the small projections take 10 to 12 µs in the graph
// for 2 to 3 µs of weights (docs/decode-layer.md's table: QKV 11.9, O 10.3, down 18.4 for
// 12.6, 8.4 and 29.4 MB). gptq_gemm at O's shape runs 256 blocks of 32 columns by 16 rows,
// each reading its 16 rows of x for all of K from L2: 32 MB of x through L2 for 8.4 MB of
// weights (read twice, once a block of rows); gptq_gemm_wg32 streams x in tiles beside the
// weights but pays its pipeline's fill and its shared tiles' fix-ups at 2 to 4 stages a
// block. Here a block of the O projection reads 64 KB of x once and 64 KB of weights, 128
// blocks in one wave, each warp's 16 steps of words issued D steps ahead.
//
// The product: a warp takes 32 columns of W (lane (g, t): columns 4g .. 4g + 3, packed row t
// of each 32 rows of K: one 16-byte load a step) by its part of the block's K. Its words
// decode (LOP3 into 1024 + q or 1024 + 16 q, less the zero, times the scale: Marlin's 13
// instructions a word) straight into mma.sync m16n8k16 A fragments, W's columns as A's
// rows: m-tile i's row g is column 4g + 2i, row g + 8 column 4g + 2i + 1; nibbles (j, j + 4)
// of the lane's word are the pair of k slots (2t, 2t + 1) or (2t + 8, 2t + 9) of k16 step
// j / 2, so that x's B fragments, in the same k order, are one 16-byte shared-memory load of
// a row's 8 elements 8t .. 8t + 7, stored in the order (0, 4, 1, 5, 2, 6, 3, 7) when the
// block stages x. Each warp's sums go to shared memory; after a cluster barrier each block
// adds up a CK-th of the tile's columns from every block of its cluster
// (ld.shared::cluster) and stores them as f16; a barrier keeps every block's shared memory
// alive until the others have read it.
//
// Build (on the GPU machine, or here to read ptxas's registers with -Xptxas -v):
//   nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -shared -Xcompiler -fPIC \
//        -o bench/explore/cl/libcl.so bench/explore/cl/cl_gemm.cu
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace {

constexpr int G = 128;  // the group size of every weight here

__device__ __forceinline__ uint4 ldg_stream(const int* p) {
    uint4 v;
    asm("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
        : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
        : "l"(p));
    return v;
}
__device__ __forceinline__ uint2 ldg_u2(const __half* p) {
    uint2 v;
    asm("ld.global.nc.v2.u32 {%0, %1}, [%2];" : "=r"(v.x), "=r"(v.y) : "l"(p));
    return v;
}
__device__ __forceinline__ uint32_t ldg_u1(const int* p) {
    uint32_t v;
    asm("ld.global.nc.u32 %0, [%1];" : "=r"(v) : "l"(p));
    return v;
}
// 16 bytes from global to shared memory, zeros where `bytes` is 0.
__device__ __forceinline__ void cp_async16(void* dst, const void* src, int bytes) {
    const unsigned d = unsigned(__cvta_generic_to_shared(dst));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(d), "l"(src), "r"(bytes) : "memory");
}
__device__ __forceinline__ void cluster_sync() {
    asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}
__device__ __forceinline__ unsigned cluster_rank() {
    unsigned r;
    asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}
// 8 floats of block `rank`'s shared memory at the address `local` has in this block.
__device__ __forceinline__ void ld_cluster8(const float* local, unsigned rank, float (&v)[8]) {
    unsigned a;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(a) : "r"(unsigned(__cvta_generic_to_shared(local))), "r"(rank));
    asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];"
                 : "=f"(v[0]), "=f"(v[1]), "=f"(v[2]), "=f"(v[3])
                 : "r"(a)
                 : "memory");
    asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];"
                 : "=f"(v[4]), "=f"(v[5]), "=f"(v[6]), "=f"(v[7])
                 : "r"(a + 16)
                 : "memory");
}
__device__ __forceinline__ void mma16816(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
// Nibbles (j, j + 4) of q as an f16 pair, Marlin's way: 1024 + n for even j, 1024 + 16 n for
// odd j (masked in place: one shift a word, for j = 2 and 3, instead of one a pair).
__device__ __forceinline__ uint32_t nibble_pair(uint32_t q, uint32_t q8, int j) {
    uint32_t r;
    asm("lop3.b32 %0, %1, %2, %3, 0xea;"
        : "=r"(r)
        : "r"(j < 2 ? q : q8), "r"(j % 2 == 0 ? 0x000F000Fu : 0x00F000F0u), "r"(0x64006400u));
    return r;
}
__device__ __forceinline__ uint32_t h2u(__half2 h) { return *reinterpret_cast<uint32_t*>(&h); }
__device__ __forceinline__ __half2 u2h(uint32_t u) { return *reinterpret_cast<__half2*>(&u); }

// MODE 0: the product; 1: the same loads and staging with no decode or MMA (the words
// folded by XOR into what the epilogue stores), for the floor of this access. FUSED: W's
// columns are gate's and up's in alternate units of 8 (GATE_UP_UNIT, as the tree's kernels
// read them) and y, N / 2 wide, is silu(x · W_gate) · (x · W_up). A cluster takes the tiles
// of COLS columns cluster, cluster + clusters, ...: its rows of x are staged once for all of
// them, and each warp's words for the next tile load under the last steps of this one.
template <int WN, int KW, int CK, int KS, int NT, int D, int MODE, bool FUSED, int BUFS>
__global__ void __launch_bounds__(32 * WN * KW, 1)
    cl_gemm(const __half* __restrict__ x, const int* __restrict__ qw, const int* __restrict__ qz,
            const __half* __restrict__ sc, __half* __restrict__ y, int M, int K, int N) {
    constexpr int COLS = 32 * WN, ROWS = 8 * NT, KWARP = KS / KW, SW = KWARP / 32;
    constexpr int XS = KS + 32;  // halves a staged row of x: 64 bytes past a multiple of 128
    static_assert(KWARP % G == 0, "a warp's part of K is whole groups");
    static_assert(D < SW, "the steps ahead fit in a tile's");
    static_assert(COLS % ((FUSED ? 16 : 8) * CK) == 0, "each block of a cluster stores whole chunks");
    extern __shared__ __align__(128) unsigned char smem[];
    __half* const xs = reinterpret_cast<__half*>(smem);  // [ROWS][XS]
    // BUFS buffers of the warps' sums, [buffer][KW][ROWS][COLS]: with two, a tile's are read
    // by the cluster while the next tile's are written; one serves a launch whose clusters
    // take one tile each.
    float* const part = reinterpret_cast<float*>(smem + ROWS * XS * 2);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    const int wn = warp % WN, wk = warp / WN;
    const unsigned rank = cluster_rank();
    const int tiles = N / COLS, stride = int(gridDim.x) / CK, kb0 = int(rank) * KS;
    const int kw0 = kb0 + wk * KWARP;  // the warp's first row of K
    int tile = int(blockIdx.x) / CK;
    // The lane's first column in `tile`.
    auto lane_col = [&](int tl) { return tl * COLS + 32 * wn + 4 * g; };

    // The warp's words of step s of tile tl, with the scales and zeros of a group's first
    // step, into the registers of step s (loaded D steps ahead).
    uint4 wq[SW];
    uint2 sq[SW / 4];
    uint32_t zq[SW / 4];
    auto load_step = [&](int s, int tl) {
        const int nl = lane_col(tl);
        wq[s] = ldg_stream(qw + size_t(kw0 / 8 + 4 * s + t) * N + nl);
        if (s % 4 == 0) {
            const int grp = (kw0 + 32 * s) / G;
            sq[s / 4] = ldg_u2(sc + size_t(grp) * N + nl);
            zq[s / 4] = ldg_u1(qz + size_t(grp) * (N / 8) + nl / 8);
        }
    };
    if (tile < tiles) {
#pragma unroll
        for (int s = 0; s < D; ++s) load_step(s, tile);
    }

    // The block's rows of x for its part of K, zeros past M, then each 8 elements put in the
    // order (0, 4, 1, 5, 2, 6, 3, 7): a B fragment's pairs.
    constexpr int CH = KS / 8;
    for (int i = threadIdx.x; i < ROWS * CH; i += blockDim.x) {
        const int r = i / CH, c = i % CH;
        cp_async16(xs + r * XS + 8 * c, x + size_t(r < M ? r : 0) * K + kb0 + 8 * c, r < M ? 16 : 0);
    }
    asm volatile("cp.async.commit_group;\ncp.async.wait_group 0;" ::: "memory");
    __syncthreads();
    for (int i = threadIdx.x; i < ROWS * CH; i += blockDim.x) {
        uint4* p = reinterpret_cast<uint4*>(xs + (i / CH) * XS + 8 * (i % CH));
        const uint4 v = *p;
        *p = uint4{__byte_perm(v.x, v.z, 0x5410), __byte_perm(v.x, v.z, 0x7632), __byte_perm(v.y, v.w, 0x5410),
                   __byte_perm(v.y, v.w, 0x7632)};
    }
    __syncthreads();

    const __half* const xl = xs + g * XS + wk * KWARP + 8 * t;
    for (int buf = 0; tile < tiles; tile += stride, buf = (buf + 1) % BUFS) {
        const int next = tile + stride, nl = lane_col(tile);
        float acc[2][NT][4];
#pragma unroll
        for (int i = 0; i < 2; ++i)
#pragma unroll
            for (int j = 0; j < NT; ++j)
#pragma unroll
                for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.f;
        uint32_t fold = 0;
        // A column's 1024 + z (for even pairs) and 64 + z (odd ones, 1024 + 16 n times 1/16),
        // both negated, and its scale: q - z exact in f16, then one rounding by the scale.
        __half2 zp[4], zp16[4], s2[4];
        const __half2 sixteenth = __float2half2_rn(0.0625f);
#pragma unroll
        for (int s = 0; s < SW; ++s) {
            if (s + D < SW) {
                load_step(s + D, tile);
            } else if (next < tiles) {
                // The next tile's first steps, into registers this tile has used.
                load_step(s + D - SW, next);
            }
            if constexpr (MODE == 1) {
                fold ^= wq[s].x ^ wq[s].y ^ wq[s].z ^ wq[s].w;
                if (s % 4 == 0) fold ^= sq[s / 4].x ^ sq[s / 4].y ^ zq[s / 4];
                continue;
            }
            if (s % 4 == 0) {
                const uint32_t zw = zq[s / 4] + 0x11111111u;
                const __half2 sa = u2h(sq[s / 4].x), sb = u2h(sq[s / 4].y);
                const __half sv[4] = {__low2half(sa), __high2half(sa), __low2half(sb), __high2half(sb)};
#pragma unroll
                for (int c = 0; c < 4; ++c) {
                    const int z = int(zw >> (4 * (nl % 8 + c)) & 0xF);
                    zp[c] = __float2half2_rn(-1024.f - float(z));
                    zp16[c] = __float2half2_rn(-64.f - float(z));
                    s2[c] = __half2half2(sv[c]);
                }
            }
            const uint32_t wv[4] = {wq[s].x, wq[s].y, wq[s].z, wq[s].w};
            // a[i][h]: m-tile i's A fragment for k16 step h.
            uint32_t a[2][2][4];
#pragma unroll
            for (int c = 0; c < 4; ++c) {
                const uint32_t q8 = wv[c] >> 8;
#pragma unroll
                for (int j = 0; j < 4; ++j) {
                    const __half2 h = u2h(nibble_pair(wv[c], q8, j));
                    const __half2 qz = j % 2 == 0 ? __hadd2(h, zp[c]) : __hfma2(h, sixteenth, zp16[c]);
                    a[c / 2][j / 2][2 * (j % 2) + c % 2] = h2u(__hmul2(qz, s2[c]));
                }
            }
#pragma unroll
            for (int jn = 0; jn < NT; ++jn) {
                const uint4 b = *reinterpret_cast<const uint4*>(xl + 8 * jn * XS + 32 * s);
#pragma unroll
                for (int i = 0; i < 2; ++i) {
                    mma16816(acc[i][jn], a[i][0], b.x, b.y);
                    mma16816(acc[i][jn], a[i][1], b.z, b.w);
                }
            }
        }

        // The warp's sums: lane (g, t) holds columns 4g + 2i (+ 1 in registers 2, 3) of rows
        // 8 jn + 2t (+ 1 in registers 1, 3).
        float* const pb = part + buf * KW * ROWS * COLS;
        float* const pw = pb + wk * ROWS * COLS;
#pragma unroll
        for (int i = 0; i < 2; ++i)
#pragma unroll
            for (int jn = 0; jn < NT; ++jn) {
                const int col = 32 * wn + 4 * g + 2 * i, row = 8 * jn + 2 * t;
                if constexpr (MODE == 1) {
                    pw[row * COLS + col] = __uint_as_float(fold);
                    continue;
                }
                pw[row * COLS + col] = acc[i][jn][0];
                pw[(row + 1) * COLS + col] = acc[i][jn][1];
                pw[row * COLS + col + 1] = acc[i][jn][2];
                pw[(row + 1) * COLS + col + 1] = acc[i][jn][3];
            }
        // Every block's sums of this tile are written; the barrier of the tile before also
        // kept this buffer from being written while the cluster still read it two tiles ago.
        cluster_sync();
        // This block's CK-th of the tile's columns (units of 8, or of 16 when fused: a
        // unit of gate and the unit of up after it): every block's and warp's sums added.
        constexpr int U = FUSED ? 16 : 8, UPB = COLS / CK / U;
        for (int i = threadIdx.x; i < ROWS * UPB; i += blockDim.x) {
            const int r = i / UPB, c = (int(rank) * UPB + i % UPB) * U;
            if (r >= M) continue;  // a row past M is zeros: nothing to add or store
            float sum[U] = {};
#pragma unroll
            for (int q = 0; q < CK; ++q)
#pragma unroll
                for (int w = 0; w < KW; ++w)
#pragma unroll
                    for (int h = 0; h < U; h += 8) {
                        float v[8];
                        ld_cluster8(pb + (w * ROWS + r) * COLS + c + h, unsigned(q), v);
#pragma unroll
                        for (int e = 0; e < 8; ++e) sum[h + e] += v[e];
                    }
            float o[8];
#pragma unroll
            for (int e = 0; e < 8; ++e) {
                if constexpr (FUSED) {
                    o[e] = sum[e] / (1.f + __expf(-sum[e])) * sum[8 + e];
                } else {
                    o[e] = sum[e];
                }
            }
            const uint4 v = {h2u(__floats2half2_rn(o[0], o[1])), h2u(__floats2half2_rn(o[2], o[3])),
                             h2u(__floats2half2_rn(o[4], o[5])), h2u(__floats2half2_rn(o[6], o[7]))};
            if constexpr (FUSED) {
                *reinterpret_cast<uint4*>(y + size_t(r) * (N / 2) + (tile * COLS + c) / 2) = v;
            } else {
                *reinterpret_cast<uint4*>(y + size_t(r) * N + tile * COLS + c) = v;
            }
        }
    }
    // No block leaves while another may still read its shared memory.
    cluster_sync();
}

struct Config {
    const char* name;
    int k, n, rows;  // the shape it takes: K, N, and at most `rows` rows of x
    bool fused;      // y is silu(gate) · up, N / 2 wide
    cudaError_t (*prepare)();
    cudaError_t (*launch)(const __half*, const int*, const int*, const __half*, __half*, int, int, int, cudaStream_t);
};

// A form of cl_gemm and its launch: CL clusters (0: one a tile of COLS columns).
template <int WN, int KW, int CK, int KS, int NT, int D, int MODE, bool FUSED = false, int CL = 0>
struct Form {
    static constexpr int COLS = 32 * WN, ROWS = 8 * NT;
    static constexpr int BUFS = CL == 0 ? 1 : 2;
    static constexpr size_t SMEM = size_t(ROWS) * (KS + 32) * 2 + size_t(BUFS) * KW * ROWS * COLS * 4;
    static_assert(SMEM <= 227 * 1024, "a block's shared memory fits");
    static constexpr auto KERNEL = cl_gemm<WN, KW, CK, KS, NT, D, MODE, FUSED, BUFS>;
    static cudaError_t prepare() {
        return cudaFuncSetAttribute(KERNEL, cudaFuncAttributeMaxDynamicSharedMemorySize, int(SMEM));
    }
    static cudaError_t launch(const __half* x, const int* qw, const int* qz, const __half* sc, __half* y, int m, int k,
                              int n, cudaStream_t st) {
        const int tiles = n / COLS;
        cudaLaunchConfig_t cfg = {};
        cfg.gridDim = dim3(unsigned((CL == 0 || tiles < CL ? tiles : CL) * CK));
        cfg.blockDim = dim3(32 * WN * KW);
        cfg.dynamicSmemBytes = SMEM;
        cfg.stream = st;
        cudaLaunchAttribute at[1];
        at[0].id = cudaLaunchAttributeClusterDimension;
        at[0].val.clusterDim.x = CK;
        at[0].val.clusterDim.y = 1;
        at[0].val.clusterDim.z = 1;
        cfg.attrs = at;
        cfg.numAttrs = 1;
        return cudaLaunchKernelEx(&cfg, KERNEL, x, qw, qz, sc, y, m, k, n);
    }
    static Config config(const char* name, int k, int n) { return {name, k, n, ROWS, FUSED, prepare, launch}; }
};

// The forms time_cl.py times: (warps across N, warps along K, blocks a cluster along K, K a
// block, 8-row tiles of x, steps of words ahead, mode, fused, clusters). QKV, O and down
// launch 128 blocks, one a tile; gate/up's clusters take 3 or 4 tiles of 128 columns, or 6 or
// 7 of 64, each.
const Config CONFIGS[] = {
    Form<4, 2, 4, 1024, 4, 8, 0>::config("O: 128 cols, 2 warps along K, cluster 4", 4096, 4096),
    Form<4, 4, 4, 1024, 4, 4, 0>::config("O: 128 cols, 4 warps along K, cluster 4", 4096, 4096),
    Form<4, 2, 4, 1024, 4, 12, 0>::config("O: as the first, 12 steps ahead", 4096, 4096),
    Form<6, 2, 4, 1024, 4, 8, 0>::config("QKV: 192 cols, 2 warps along K, cluster 4", 4096, 6144),
    Form<6, 2, 4, 1024, 4, 9, 0>::config("QKV: as above, 9 steps ahead", 4096, 6144),
    Form<8, 2, 8, 1792, 4, 4, 0>::config("down: 256 cols, 2 warps along K, cluster 8", 14336, 4096),
    Form<8, 1, 8, 1792, 4, 8, 0>::config("down: 256 cols, 1 warp along K, cluster 8", 14336, 4096),
    Form<8, 1, 8, 1792, 4, 12, 0>::config("down: as above, 12 steps ahead", 14336, 4096),
    Form<4, 2, 2, 2048, 4, 8, 0, true, 66>::config("gate/up fused: 66 clusters of 2, 128-col tiles", 4096, 28672),
    Form<2, 4, 2, 2048, 4, 8, 0, true, 66>::config("gate/up fused: 66 clusters of 2, 64-col tiles", 4096, 28672),
    Form<4, 2, 4, 1024, 4, 8, 1>::config("O, stream only", 4096, 4096),
    Form<6, 2, 4, 1024, 4, 8, 1>::config("QKV, stream only", 4096, 6144),
    Form<8, 2, 8, 1792, 4, 4, 1>::config("down, stream only", 14336, 4096),
    Form<4, 2, 2, 2048, 4, 8, 1, true, 66>::config("gate/up, stream only (128-col tiles)", 4096, 28672),
    // Up to 8 rows (the decode layer's B = 1 and 8): the same products with one 8-row tile
    // of x, where the tree has GEMVs (B = 1) and gptq_gemm (B = 8).
    Form<4, 2, 4, 1024, 1, 12, 0>::config("O at 8 rows: 128 cols, 2 warps along K, cluster 4", 4096, 4096),
    Form<6, 2, 4, 1024, 1, 9, 0>::config("QKV at 8 rows: 192 cols, 2 warps along K, cluster 4", 4096, 6144),
    Form<8, 1, 8, 1792, 1, 12, 0>::config("down at 8 rows: 256 cols, 1 warp along K, cluster 8", 14336, 4096),
    Form<4, 2, 2, 2048, 1, 12, 0, true, 66>::config("gate/up fused at 8 rows: 66 clusters of 2, 128-col tiles", 4096,
                                                     28672),
};
constexpr int NCONFIGS = int(sizeof(CONFIGS) / sizeof(CONFIGS[0]));

}  // namespace

extern "C" int cl_configs() { return NCONFIGS; }

extern "C" const char* cl_name(int c) { return c >= 0 && c < NCONFIGS ? CONFIGS[c].name : nullptr; }

// The shape form c takes: K, N, most rows, and whether y is gate/up's fused product.
extern "C" int cl_shape(int c, int* k, int* n, int* rows, int* fused) {
    if (c < 0 || c >= NCONFIGS) return -1;
    *k = CONFIGS[c].k;
    *n = CONFIGS[c].n;
    *rows = CONFIGS[c].rows;
    *fused = CONFIGS[c].fused;
    return 0;
}

// Once a form, before any launch (and outside a graph's capture): its shared memory.
extern "C" int cl_prepare(int c) {
    if (c < 0 || c >= NCONFIGS) return -1;
    return int(CONFIGS[c].prepare());
}

// y[m, n] = x[m, k] · W (or y[m, n / 2], its SiluAndMul, for a fused form), W in GPTQ int4
// (qweight [k / 8, n], qzeros [k / 128, n / 8], v1 zeros, scales [k / 128, n]), through form
// c, which must take the shape: -1 otherwise.
extern "C" int cl_gemm(int c, const void* x, const void* qweight, const void* qzeros, const void* scales, void* y, int m,
                       int k, int n, cudaStream_t stream) {
    if (c < 0 || c >= NCONFIGS || k != CONFIGS[c].k || n != CONFIGS[c].n || m < 1 || m > CONFIGS[c].rows) return -1;
    const cudaError_t e = CONFIGS[c].launch(static_cast<const __half*>(x), static_cast<const int*>(qweight),
                                            static_cast<const int*>(qzeros), static_cast<const __half*>(scales),
                                            static_cast<__half*>(y), m, k, n, stream);
    return int(e);
}
