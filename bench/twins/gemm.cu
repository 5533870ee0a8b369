// Hand-written twins of specs/gemm.ima (examples/bench.rs, cases attn_scores_mma, gemm
// and gptq_gemm): the same algorithms, launch shapes and shared layouts, on raw pointers
// with contiguous row-major 32-bit index arithmetic, and none of the accessors' guards.
// Every tile is copied unconditionally (the spec's `tile_async` tests each tile against
// the tensor's edge and zero-fills one that crosses it), every accumulator stored
// unmasked (`store_acc` masks the elements past the output's edge), x read unmasked
// (`load8_or_zero`) and every weight tile decoded from its words (`load_tile` tests
// whether it lies inside K and N and in one group). So they hold only for shapes whose
// tiles are all whole, as the bench's are. What is not a guard comes from ima.cuh, spliced
// in below (ima_codegen::cuda::splice_ima_cuh, as examples/bench.rs and tests/nvrtc.rs
// compile it): the swizzled shared tiles, the warp's accumulators and ldmatrix, the
// pipeline, the m16n8k16 products, the fragment pairs, the weights' loads that skip L1.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
// <ima.cuh>

// The dynamic shared memory of every kernel here.
extern __shared__ __align__(128) unsigned char twin_smem[];

// Two adjacent accumulator tiles of one warp, stored as store_acc stores them (lanes l
// and l ^ 1 swap halves, 4 consecutive columns a lane), at row row0 and column col0 of a
// row-major matrix of ld columns: unmasked.
template <typename T>
__device__ __forceinline__ void twin_store_acc(T* p, int ld, int row0, int col0, const ImaAcc4& c0, const ImaAcc4& c1) {
    const int l = threadIdx.x % 32, odd = l & 1;
    T v[2][4];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const float s0 = odd ? c0.x[2 * h] : c1.x[2 * h], s1 = odd ? c0.x[2 * h + 1] : c1.x[2 * h + 1];
        const float r0 = __shfl_xor_sync(0xffffffffu, s0, 1), r1 = __shfl_xor_sync(0xffffffffu, s1, 1);
        const float w[4] = {odd ? r0 : c0.x[2 * h], odd ? r1 : c0.x[2 * h + 1], odd ? c1.x[2 * h] : r0,
                            odd ? c1.x[2 * h + 1] : r1};
#pragma unroll
        for (int x = 0; x < 4; ++x) v[h][x] = T(w[x]);
    }
    const int row = row0 + l / 4, col = col0 + (odd ? 8 + 2 * (l % 4) - 2 : 2 * (l % 4));
#pragma unroll
    for (int h = 0; h < 2; ++h)
        *reinterpret_cast<ImaQuad<T>*>(p + (row + 8 * h) * ld + col) = ImaQuad<T>{{v[h][0], v[h][1], v[h][2], v[h][3]}};
}

// Stage `st` of a shared array of [STAGES, ROWS, COLS] 16-bit elements at `base`.
template <typename T, int ROWS, int COLS>
__device__ __forceinline__ ImaSmemTile<T, ROWS, COLS, false> twin_tile(unsigned char* base, int st) {
    return ImaSmemTile<T, ROWS, COLS, false>{reinterpret_cast<ImaVec<T, 8>*>(base) + st * ROWS * COLS / 8, ImaRecorder{}, 0, true};
}

// The rows x COLS tile of a row-major matrix of ld columns at (r0, c0), copied by the
// block's 256 threads with cp.async, unconditionally.
template <typename T, int ROWS, int COLS>
__device__ __forceinline__ void twin_copy(const ImaSmemTile<T, ROWS, COLS, false>& t, const T* src, int ld, int r0, int c0) {
    constexpr int CPR = COLS / 8, EACH = ROWS * CPR / 256;
#pragma unroll
    for (int e = 0; e < EACH; ++e) {
        const int c = threadIdx.x + 256 * e, r = c / CPR, col = c % CPR * 8;
        ima_async_copy16(&t.raw_chunk(r, col), src + (r0 + r) * ld + c0 + col);
    }
}

// gemm_f16 and gemm_bf16: c = a b, [M, K] by [K, N], tiles of 128 x 128, K by 32, 4 stages;
// shared sa [4, 128, 32] then sb [4, 32, 128].
template <typename T>
__device__ __forceinline__ void twin_gemm(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c, int M,
                                          int N, int K) {
    unsigned char* sa = twin_smem;
    unsigned char* sb = twin_smem + 4 * 128 * 32 * 2;
    int tm, tn;
    ima_grouped_tile<8>(int(blockIdx.x), (M + 127) / 128, (N + 127) / 128, tm, tn);
    const int m0 = tm * 128, n0 = tn * 128;
    const int warp = threadIdx.x / 32, wm = warp / 4 * 64, wn = warp % 4 * 32;
    ImaWarpAcc<4, 4> acc;
    ima_pipeline<4>(
        (K + 31) / 32,
        [&](int st, int t) {
            twin_copy(twin_tile<T, 128, 32>(sa, st), a, K, m0, 32 * t);
            twin_copy(twin_tile<T, 32, 128>(sb, st), b, N, 32 * t, n0);
        },
        [&](int st, int) { acc.mma(twin_tile<T, 128, 32>(sa, st), wm, ImaConst<1>{}, twin_tile<T, 32, 128>(sb, st), wn); });
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; j += 2) twin_store_acc(c, N, m0 + wm + 16 * i, n0 + wn + 8 * j, acc.c[i][j], acc.c[i][j + 1]);
}

extern "C" __global__ void __launch_bounds__(256, 2)
    twin_gemm_f16(const __half* a, const __half* b, __half* c, int M, int N, int K) {
    twin_gemm(a, b, c, M, N, K);
}

extern "C" __global__ void __launch_bounds__(256, 2)
    twin_gemm_bf16(const __nv_bfloat16* a, const __nv_bfloat16* b, __nv_bfloat16* c, int M, int N, int K) {
    twin_gemm(a, b, c, M, N, K);
}

// attn_scores_mma (f16 out) and attn_scores_mma_f32: o = q kᵀ scale, q [B, H, S, D], k
// [B, H, T, D], o [B, H, S, T]; a block per 128 rows of q, key tiles of 128, D by 64,
// 3 stages (with D <= 64, q's rows of the first step stay in stage 0); shared qs
// [3, 128, 64] then ks [3, 128, 64].
template <typename O>
__device__ __forceinline__ void twin_attn_scores(const __half* __restrict__ q, const __half* __restrict__ k,
                                                 O* __restrict__ o, int H, int S, int T, int D, float scale) {
    unsigned char* qs = twin_smem;
    unsigned char* ks = twin_smem + 3 * 128 * 64 * 2;
    const int bh = blockIdx.y, i0 = blockIdx.x * 128;
    const int warp = threadIdx.x / 32, wi = warp / 2 * 32, wj = warp % 2 * 64;
    const int DC = (D + 63) / 64;
    const __half* qb = q + bh * S * D;
    const __half* kb = k + bh * T * D;
    O* ob = o + bh * S * T;
    ImaWarpAcc<2, 8> acc;
    ima_pipeline<3>(
        (T + 127) / 128 * DC,
        [&](int st, int u) {
            const int j0 = u / DC * 128, d0 = u % DC * 64;
            if (DC > 1 || u == 0) twin_copy(twin_tile<__half, 128, 64>(qs, st), qb, D, i0, d0);
            twin_copy(twin_tile<__half, 128, 64>(ks, st), kb, D, j0, d0);
        },
        [&](int st, int u) {
            acc.mma(twin_tile<__half, 128, 64>(qs, DC > 1 ? st : 0), wi, ImaConst<0>{}, twin_tile<__half, 128, 64>(ks, st), wj);
            if (u % DC != DC - 1) return;
            const int j0 = u / DC * 128;
            acc.scale(scale);
#pragma unroll
            for (int i = 0; i < 2; ++i)
#pragma unroll
                for (int j = 0; j < 8; j += 2)
                    twin_store_acc(ob, T, i0 + wi + 16 * i, j0 + wj + 8 * j, acc.c[i][j], acc.c[i][j + 1]);
            acc = {};
        });
}

extern "C" __global__ void __launch_bounds__(256, 2)
    twin_attn_scores_mma(const __half* q, const __half* k, __half* o, int H, int S, int T, int D, float scale) {
    twin_attn_scores(q, k, o, H, S, T, D, scale);
}

extern "C" __global__ void __launch_bounds__(256, 2)
    twin_attn_scores_mma_f32(const __half* q, const __half* k, float* o, int H, int S, int T, int D, float scale) {
    twin_attn_scores(q, k, o, H, S, T, D, scale);
}

// (a & MASK) | 0x64006400 as one LOP3, as the quantized accessor's ima_nibbles.
template <unsigned MASK>
__device__ __forceinline__ __half2 twin_nibbles(unsigned a) {
    unsigned r;
    asm("lop3.b32 %0, %1, %2, %3, 0xEA;" : "=r"(r) : "r"(a), "n"(MASK), "r"(0x64006400u));
    __half2 h;
    memcpy(&h, &r, 4);
    return h;
}

// The zero at nibble i of the zero word zw: GPTQ v1 stores zero - 1, read word-wise as the
// accessor reads it (+ 0x11111111 on the word).
__device__ __forceinline__ unsigned twin_zero(unsigned zw, int i) { return ((zw + 0x11111111u) >> (4 * i)) & 0xFu; }

// 1024 + z in both halves of an f16 pair, z = twin_zero(zw, i).
__device__ __forceinline__ __half2 twin_biased_zero(unsigned zw, int i) {
    const unsigned bits = 0x64006400u | twin_zero(zw, i) * 0x10001u;
    __half2 h;
    memcpy(&h, &bits, 4);
    return h;
}

// gptq_gemm, y = x W (not fused), W in GPTQ v1 int4 (qweight [K / 8, N], qzeros
// [K / G, N / 8] holding zero - 1, scales [K / G, N] f16): a block per 32 rows of x by
// 32 WN columns, its 8 warps WN across (32 columns each) by 8 / WN over K in steps of 128
// rows (64 above 16 rows of x), lane (g, t4) taking columns 4g .. 4g + 3 and packed rows
// t4, t4 + 4, ... of a step, the step's words (not allocating in L1) loaded a step ahead
// of its products as for_whole_tiles loads them, its x with its products, the words
// decoded into B fragments as dequant_frag does, the warps' sums meeting in shared part
// [8, 32, 32]. Needs G a multiple of 128, K of 1024 and N of 32 WN; WN is 1, 2 or 4.
extern "C" __global__ void __launch_bounds__(256, 2)
    twin_gptq_gemm(const __half* __restrict__ x, const unsigned* __restrict__ qweight, const unsigned* __restrict__ qzeros,
                   const __half* __restrict__ scales, __half* __restrict__ y, int M, int K, int N, int G, int WN) {
    float* part = reinterpret_cast<float*>(twin_smem);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t4 = lane % 4;
    const int KW = 8 / WN, wn = warp % WN, wk = warp / WN;
    const int m0 = blockIdx.x * 32, nb = blockIdx.y * 32 * WN, n = nb + 32 * wn + 4 * g;
    auto run = [&](auto tiles) {
        constexpr int MT = decltype(tiles)::value;
        constexpr int R = MT == 1 ? 4 : 2;
        ImaAcc4 acc[MT][4];
#pragma unroll
        for (int i = 0; i < MT; ++i)
#pragma unroll
            for (int c = 0; c < 4; ++c) acc[i][c] = ImaAcc4{{0.f, 0.f, 0.f, 0.f}};
        // A step's words, scales and zero word, loaded a step ahead of its products.
        struct Words {
            unsigned w[R][4];
            __half s[4];
            unsigned zw;
        };
        auto load = [&](int k0) {
            Words t;
            const int k = k0 + 8 * t4, grp = k / G;
#pragma unroll
            for (int r = 0; r < R; ++r) {
                const int4 v = ima_ldg_stream(reinterpret_cast<const int4*>(qweight + (k / 8 + 4 * r) * N + n));
                memcpy(t.w[r], &v, 16);
            }
            const uint2 v = __ldg(reinterpret_cast<const uint2*>(scales + grp * N + n));
            memcpy(t.s, &v, 8);
            t.zw = __ldg(qzeros + grp * (N / 8) + n / 8);
            return t;
        };
        int k0 = wk * 32 * R;
        Words cur = k0 < K ? load(k0) : Words{};
        for (; k0 < K; k0 += KW * 32 * R) {
            const int k = k0 + 8 * t4;
            const Words next = k0 + KW * 32 * R < K ? load(k0 + KW * 32 * R) : cur;
            const auto& w = cur.w;
            const auto& s = cur.s;
            const unsigned zw = cur.zw;
            ImaVec<__half, 8> xv[MT][2][R];
#pragma unroll
            for (int i = 0; i < MT; ++i)
#pragma unroll
                for (int hh = 0; hh < 2; ++hh)
#pragma unroll
                    for (int r = 0; r < R; ++r)
                        xv[i][hh][r] = *reinterpret_cast<const ImaVec<__half, 8>*>(x + (m0 + 16 * i + g + 8 * hh) * K + k + 32 * r);
#pragma unroll
            for (int r = 0; r < R; ++r) {
                unsigned bf[4][4];
                const __half2 sixteenth = __float2half2_rn(0.0625f);
#pragma unroll
                for (int c = 0; c < 4; ++c) {
                    const unsigned wd = w[r][c], w8 = wd >> 8;
                    const __half2 lo = twin_biased_zero(zw, n % 8 + c);
                    const __half2 hi = __hsub2(__float2half2_rn(960.f), lo);
                    const __half2 sc = __half2half2(s[c]);
                    const __half2 v[4] = {__hsub2(twin_nibbles<0x000F000Fu>(wd), lo), __hfma2(twin_nibbles<0x00F000F0u>(wd), sixteenth, hi),
                                          __hsub2(twin_nibbles<0x000F000Fu>(w8), lo), __hfma2(twin_nibbles<0x00F000F0u>(w8), sixteenth, hi)};
#pragma unroll
                    for (int j = 0; j < 4; ++j) {
                        const __half2 e = __hmul2(v[j], sc);
                        memcpy(&bf[c][j], &e, 4);
                    }
                }
#pragma unroll
                for (int i = 0; i < MT; ++i) {
                    const ImaFrag4 lo = ima_row_pairs(xv[i][0][r]);
                    const ImaFrag4 hi = ima_row_pairs(xv[i][1][r]);
                    const unsigned a0[4] = {lo.x[0], hi.x[0], lo.x[1], hi.x[1]};
                    const unsigned a1[4] = {lo.x[2], hi.x[2], lo.x[3], hi.x[3]};
#pragma unroll
                    for (int c = 0; c < 4; ++c) {
                        acc[i][c] = ima_mma_m16n8k16_f16(a0, bf[c][0], bf[c][1], acc[i][c]);
                        acc[i][c] = ima_mma_m16n8k16_f16(a1, bf[c][2], bf[c][3], acc[i][c]);
                    }
                }
            }
            cur = next;
        }
#pragma unroll
        for (int i = 0; i < MT; ++i)
#pragma unroll
            for (int hh = 0; hh < 2; ++hh)
#pragma unroll
                for (int j = 0; j < 8; ++j) part[(warp * 32 + 16 * i + g + 8 * hh) * 32 + 8 * t4 + j] = acc[i][j % 4].x[2 * hh + j / 4];
    };
    if (M - m0 > 16) run(ImaConst<2>{});
    else run(ImaConst<1>{});
    __syncthreads();
    for (int i = threadIdx.x; i < 32 * 4 * WN; i += 256) {
        const int r = i / (4 * WN), c8 = i % (4 * WN) * 8, cw = c8 / 32;
        if (m0 + r >= M) continue;
        float sum[8] = {};
        for (int s = 0; s < KW; ++s)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const float4 q4 = *reinterpret_cast<const float4*>(part + ((cw + WN * s) * 32 + r) * 32 + c8 % 32 + 4 * h);
                sum[4 * h] += q4.x, sum[4 * h + 1] += q4.y, sum[4 * h + 2] += q4.z, sum[4 * h + 3] += q4.w;
            }
        ImaVec<__half, 8> v;
#pragma unroll
        for (int j = 0; j < 8; ++j) v.v[j] = __float2half_rn(sum[j]);
        *reinterpret_cast<ImaVec<__half, 8>*>(y + (m0 + r) * N + nb + c8) = v;
    }
}

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
// gptq_gemm_wg of specs/gemm_tma.ima (sm_90a), y = x W (not fused), W in GPTQ v1 int4 as
// for twin_gptq_gemm: stream-K over the grid's blocks of units (64 rows of x, 192 columns
// of W, 256 rows of K), a producer warpgroup whose one thread copies each unit's words,
// scales, zeros and x by TMA into 3 stages (ima.cuh's ImaTmaPipeline, ima_tma_load), three
// consumer warpgroups of 64 columns decoding the words into warpgroup MMA's register A
// operand (W's columns as A's rows) against x's tile as B (ImaWgAcc's mma_regs), tiles that
// blocks share stored in each block's slot of the f32 workspace `part`, counted in
// `arrivals` (zero before a launch and after it) and added up by the last block to arrive,
// in the blocks' order. The stage's layout is the accessor's `tma(256, 192)`:
// 32 packed rows of 192 words in 4 boxes of 48 side by side, row after row within each
// (rows 192 bytes apart, so that a warp's reads of 4 rows spread over all the banks), then 8 groups' rows of
// 192 scales, then their rows of 24 zero words; x's tile is [64 rows, 256 of K] in 64-column
// panels. By hand here, and without the accessors' guards: the tensor maps' origins are not
// tested (the spec's tma_load tests each against an empty tensor, and a checked entry
// point against the extents), the decode reads the stage at its indices without wrapping
// them inside the tile, and the sums are stored and added unmasked (the spec masks each
// element at M and N), so M must be a multiple of the accumulator's rows (16, 32 or 64)
// and N of 64 (a warpgroup's columns past N, as in the spec, do nothing). G divides 256.
namespace twin_wg {
constexpr int STAGES = 3, TILE_K = 256, TILE_N = 192, PACKED = TILE_K / 8, GROUPS = TILE_K / 32;
constexpr int BOX_N = 48, BOXES = TILE_N / BOX_N;
constexpr unsigned WORD_BYTES = PACKED * 4 * TILE_N, SCALE_BYTES = GROUPS * TILE_N * 2,
                   W_STAGE = 40 * TILE_N * 4, X_STAGE = 64 * TILE_K * 2;

// The shared address of packed row r's word at column c of the stage's tile at `w`.
__device__ __forceinline__ unsigned word(unsigned w, int r, int c) {
    return w + unsigned(c / BOX_N * (PACKED * BOX_N * 4) + r * BOX_N * 4 + c % BOX_N * 4);
}
// -(1024 + z) and -(64 + z) in one f16 pair (bias), and the scale in both halves (s): what
// one column of a group decodes with, as the accessor's ImaWgColumn.
struct Column {
    __half2 bias, s;
};
// Columns c and c + 1 (c even) of the group of row k of the stage's tile at `w`.
__device__ __forceinline__ void group(unsigned w, int k, int c, int G, Column (&q)[2]) {
    const int g = k % TILE_K / G;
    unsigned sw[1], zw[1];
    ima_ld_shared(w + WORD_BYTES + unsigned(g * TILE_N + c) * 2, sw);
    ima_ld_shared(w + WORD_BYTES + SCALE_BYTES + unsigned(g * (TILE_N / 8) + c / 8) * 4, zw);
    __half s[2];
    memcpy(s, sw, 4);
#pragma unroll
    for (int j = 0; j < 2; ++j) {
        // f16 0xE400 + z and 0xD400 + 16 z in one IMAD, as the accessor's tma_wg_group.
        const unsigned bits = twin_zero(zw[0], (c + j) % 8) * 0x00100001u + 0xD400E400u;
        memcpy(&q[j].bias, &bits, 4);
        q[j].s = __half2half2(s[j]);
    }
}
// Rows 16 j .. 16 j + 15 of the stage's tile at `w`, columns c and c + 1, as lane 4 g + t's
// register A fragment of one k step (the accessor's tma_wg_frag): byte t of the step's two
// packed words, each nibble pair (q - z) exact times the scale, rounded once; or, not
// SCALED, q - z alone (tma_wg_frag_unscaled).
template <bool SCALED>
__device__ __forceinline__ void frag(unsigned w, const Column (&q)[2], int j, int c, unsigned (&a)[4]) {
    const unsigned byte = threadIdx.x % 4, pick = 0x4040u | byte | byte << 8;
    const __half2 scale = __floats2half2_rn(1.f, 0.0625f);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        unsigned wd[2];
        ima_ld_shared(word(w, 2 * j + h, c), wd);
#pragma unroll
        for (int e = 0; e < 2; ++e) {
            const __half2 v = twin_nibbles<0x00F0000Fu>(__byte_perm(wd[e], 0u, pick));
            __half2 d = __hfma2(v, scale, q[e].bias);
            if constexpr (SCALED) d = __hmul2(d, q[e].s);
            memcpy(&a[2 * h + e], &d, 4);
        }
    }
}
// Rows 32 b .. 32 b + 31 of the stage's tile at `w`, columns c and c + 1, as lane 4 g + t's
// register A fragments of k steps 2 b (a0) and 2 b + 1 (a1), q - z alone, for x's tile in
// ima_wg_pairs_order (the accessor's tma_wg_pairs_unscaled): packed row 4 b + t of both
// columns, each word's nibbles in pairs (i, i + 4).
__device__ __forceinline__ void pairs(unsigned w, const Column (&q)[2], int b, int c, unsigned (&a0)[4],
                                      unsigned (&a1)[4]) {
    const __half2 sixteenth = __float2half2_rn(0.0625f);
    unsigned wd[2];
    ima_ld_shared(word(w, 4 * b + int(threadIdx.x % 4), c), wd);
#pragma unroll
    for (int e = 0; e < 2; ++e) {
        const __half2 lo = __low2half2(q[e].bias), hi = __high2half2(q[e].bias);
        const __half2 d[4] = {__hadd2(twin_nibbles<0x000F000Fu>(wd[e]), lo),
                              __hfma2(twin_nibbles<0x00F000F0u>(wd[e]), sixteenth, hi),
                              __hadd2(twin_nibbles<0x000F000Fu>(wd[e] >> 8), lo),
                              __hfma2(twin_nibbles<0x00F000F0u>(wd[e] >> 8), sixteenth, hi)};
        memcpy(&a0[e], &d[0], 4);
        memcpy(&a0[2 + e], &d[1], 4);
        memcpy(&a1[e], &d[2], 4);
        memcpy(&a1[2 + e], &d[3], 4);
    }
}
// Thread tid's first float4 in block b's slot for consumer warpgroup wg, of TILES
// accumulator tiles; its accumulator tile j's is 128 float4 on.
template <int TILES>
__device__ __forceinline__ float4* float4_slot(float* part, int b, int wg, int tid) {
    return reinterpret_cast<float4*>(part) + (b * 3 + wg) * TILES * 128 + tid;
}
}  // namespace twin_wg

extern "C" __global__ void __launch_bounds__(512, 1)
    twin_gptq_gemm_wg(const __grid_constant__ ImaTensorMap x_map, const __grid_constant__ ImaTensorMap qweight_map,
                      const __grid_constant__ ImaTensorMap scales_map, const __grid_constant__ ImaTensorMap qzeros_map,
                      float* __restrict__ part, int* __restrict__ arrivals, __half* __restrict__ y, int M, int K, int N,
                      int G) {
    using namespace twin_wg;
    // The stages on a 1024-byte boundary (the 128-byte swizzle's period): ws [3, 40, 192]
    // i32, xs [3, 64, 256] f16.
    const unsigned smem = unsigned(__cvta_generic_to_shared(twin_smem)), pad = (1024u - smem % 1024u) % 1024u;
    const unsigned ws = smem + pad, xs = ws + STAGES * W_STAGE;
    const int KS = (K + TILE_K - 1) / TILE_K, NS = (N + TILE_N - 1) / TILE_N, NB = (N + 63) / 64;
    const int units = (M + 63) / 64 * NS * KS;
    const ImaStreamK<int> sk(units);
    const int u0 = sk.start(blockIdx.x), u1 = sk.start(blockIdx.x + 1);
    const ImaTmaPipeline<STAGES, 3> pipe;
    if (pipe.consumer() < 0) {
        int kc = u0 % KS, tile = u0 / KS;
        const int group_rows = TILE_K / G;
        pipe.produce(u1 - u0, [&](int st, int, ImaBarrier bar) {
            const unsigned wdst = ws + st * W_STAGE;
            const int n0 = tile % NS * TILE_N, k0 = TILE_K * kc;
            const int cw[2] = {n0, k0 / 8}, cs[2] = {n0, k0 / G}, cz[2] = {n0 / 8, k0 / G}, cx[2] = {k0, tile / NS * 64};
            ima_tma_load<2, BOXES, true>(wdst, &qweight_map, bar, cw, BOX_N, WORD_BYTES / BOXES, true, true);
            ima_tma_load<2, 1, true>(wdst + WORD_BYTES, &scales_map, bar, cs, TILE_N, group_rows * TILE_N * 2, true, true);
            ima_tma_load<2, 1, true>(wdst + WORD_BYTES + SCALE_BYTES, &qzeros_map, bar, cz, TILE_N / 8, group_rows * TILE_N / 2,
                               true, true);
            ima_tma_load<2, TILE_K / 64>(xs + st * X_STAGE, &x_map, bar, cx, 64, 64 * 128, true, true);
            if (++kc == KS) {
                kc = 0;
                ++tile;
            }
        });
        // The spec's delegate warps: warp 1 + w counts consumer warpgroup w's units of the
        // block's first tile where another block sums it.
        const int w = int(threadIdx.x / 32) - 1;
        if (w >= 0 && u0 % KS != 0) {
            const int tile = u0 / KS, m0 = tile / NS * 64, n0 = tile % NS * TILE_N;
            if (n0 + 64 * w < N) {
                ima_bar_sync(6 + w, 160);
                if (threadIdx.x % 32 == 0) {
                    const int mine = (u1 < (tile + 1) * KS ? u1 : (tile + 1) * KS) - u0;
                    ImaStreamK<int>::arrive(&arrivals[m0 / 64 * NB + n0 / 64 + w], mine, KS);
                }
            }
        }
        return;
    }
    const int wg = pipe.consumer(), lane = threadIdx.x % 32;
    const int c0 = 64 * wg + 16 * (threadIdx.x / 32 % 4) + 2 * (lane / 4);
    const int group_steps = G / 16 - 1;
    const auto run = [&](auto nx) {
        constexpr int NX = decltype(nx)::value;
        ImaWgAcc<NX> acc;
        // f(j, e, m, n) for each of the lane's accumulators, as the spec's `each`.
        const auto each = [&](int m0, int n0, auto&& f) {
#pragma unroll
            for (int j = 0; j < NX / 8; ++j)
#pragma unroll
                for (int e = 0; e < 4; ++e) f(j, e, m0 + 8 * j + 2 * (lane % 4) + e % 2, n0 + c0 + e / 2);
        };
        int next_kc = u0 % KS, next_tile = u0 / KS;
        pipe.consume(u1 - u0, [&](int st, int t) {
            const int kc = next_kc, tile = next_tile;
            if (++next_kc == KS) {
                next_kc = 0;
                ++next_tile;
            }
            const unsigned wt = ws + st * W_STAGE;
            const ImaTmaTile<__half, 64, TILE_K, false> xt{xs + st * X_STAGE, ImaRecorder{}, 0, true};
            unsigned a[2][4][4];
            Column q[2];
            group(wt, 0, c0, G, q);
#pragma unroll
            for (int h = 0; h < 4; ++h) {
                if (h >= 2) acc.template wait<1>();
#pragma unroll
                for (int j = 4 * h; j < 4 * h + 4; ++j) {
                    if (j % 2 == 0 && j > 0 && (j & group_steps) == 0) group(wt, 16 * j, c0, G, q);
                    frag<true>(wt, q, j, c0, a[h % 2][j % 4]);
                }
                acc.fence();
#pragma unroll
                for (int j = 4 * h; j < 4 * h + 4; ++j) acc.mma_regs(a[h % 2][j % 4], xt, 16 * j);
                acc.commit();
            }
            acc.template wait<0>();
            if (kc != KS - 1 && t != u1 - u0 - 1) return;
            const int m0 = tile / NS * 64, n0 = tile % NS * TILE_N;
            if (n0 + 64 * wg < N) {
                if (tile * KS >= u0 && kc == KS - 1) {
                    each(m0, n0, [&](int j, int e, int m, int n) { y[m * N + n] = __float2half(acc.c[j].x[e]); });
                } else if (tile * KS < u0) {
                    // The spec's slots: part [BLOCKS = 132, 3, 8, 128, 4] f32,
                    // [block, wg, j, thread, e]; counted by the delegate warp.
                    const int tid = threadIdx.x % 128;
#pragma unroll
                    for (int j = 0; j < NX / 8; ++j)
                        float4_slot<8>(part, blockIdx.x, wg, tid)[128 * j] =
                            make_float4(acc.c[j].x[0], acc.c[j].x[1], acc.c[j].x[2], acc.c[j].x[3]);
                    ima_bar_arrive(6 + wg, 160);
                } else {
                    // lo: waits for its followers' count, then adds their slots to its sums.
                    const int tid = threadIdx.x % 128, hi = sk.owner(tile * KS + KS - 1);
                    const int mine = u0 + t + 1 - tile * KS;
                    ImaStreamK<int>::wait(&arrivals[m0 / 64 * NB + n0 / 64 + wg], KS - mine);
                    ima_warpgroup_sync();
                    ImaAcc4 sum[NX / 8];
#pragma unroll
                    for (int j = 0; j < NX / 8; ++j) sum[j] = acc.c[j];
#pragma unroll 2
                    for (int b = int(blockIdx.x) + 1; b <= hi; ++b) {
#pragma unroll
                        for (int j = 0; j < NX / 8; ++j) {
                            const float4 v = float4_slot<8>(part, b, wg, tid)[128 * j];
                            sum[j].x[0] += v.x;
                            sum[j].x[1] += v.y;
                            sum[j].x[2] += v.z;
                            sum[j].x[3] += v.w;
                        }
                    }
                    each(m0, n0, [&](int j, int e, int m, int n) { y[m * N + n] = __float2half(sum[j].x[e]); });
                    if (threadIdx.x % 128 == 0) arrivals[m0 / 64 * NB + n0 / 64 + wg] = 0;
                }
            }
            acc = ImaWgAcc<NX>{};
        });
    };
    if (M <= 16) run(ImaConst<16>{});
    else if (M <= 32) run(ImaConst<32>{});
    else run(ImaConst<64>{});
}
// gptq_gemm_wg16 of specs/gemm_tma.ima (sm_90a), y = x W (not fused) for M <= 16, G 128 or
// 256: twin_gptq_gemm_wg's units, slots and counts over units of (16 rows of x, 192
// columns, 256 rows of K), in 5 stages whose x tile is [16 rows, 256 of K] (16-row boxes
// of 64 columns) that the producer's warps 2 and 3 put in the pair order, the words decoded
// in nibble pairs to q - z alone, up to two quarters ahead of the MMAs, and each half
// stage's product scaled once by its group's scale; the weights' loads hinted evict_first
// and lo's slots dropped from L2 once read, as the spec's. Unguarded as twin_gptq_gemm_wg:
// M must be 16 and N a multiple of 64.
namespace twin_wg16 {
constexpr int STAGES = 5;
constexpr unsigned X_STAGE = 16 * twin_wg::TILE_K * 2;
}  // namespace twin_wg16

extern "C" __global__ void __launch_bounds__(512, 1)
    twin_gptq_gemm_wg16(const __grid_constant__ ImaTensorMap x_map, const __grid_constant__ ImaTensorMap qweight_map,
                        const __grid_constant__ ImaTensorMap scales_map, const __grid_constant__ ImaTensorMap qzeros_map,
                        float* __restrict__ part, int* __restrict__ arrivals, __half* __restrict__ y, int M, int K,
                        int N, int G) {
    using namespace twin_wg;
    using twin_wg16::STAGES;
    using twin_wg16::X_STAGE;
    // ws [5, 40, 192] i32, xs [5, 16, 256] f16, on a 1024-byte boundary.
    const unsigned smem = unsigned(__cvta_generic_to_shared(twin_smem)), pad = (1024u - smem % 1024u) % 1024u;
    const unsigned ws = smem + pad, xs = ws + STAGES * W_STAGE;
    const int KS = (K + TILE_K - 1) / TILE_K, NS = (N + TILE_N - 1) / TILE_N;
    const ImaStreamK<int> sk(NS * KS);
    const int u0 = sk.start(blockIdx.x), u1 = sk.start(blockIdx.x + 1);
    const ImaTmaPipeline<STAGES, 3, false, 2> pipe;
    if (pipe.consumer() < 0) {
        int kc = u0 % KS, tile = u0 / KS;
        const int group_rows = TILE_K / G;
        pipe.produce(u1 - u0, [&](int st, int, ImaBarrier bar) {
            const unsigned wdst = ws + st * W_STAGE;
            const int n0 = tile * TILE_N, k0 = TILE_K * kc;
            const int cw[2] = {n0, k0 / 8}, cs[2] = {n0, k0 / G}, cz[2] = {n0 / 8, k0 / G}, cx[2] = {k0, 0};
            ima_tma_load<2, BOXES, true>(wdst, &qweight_map, bar, cw, BOX_N, WORD_BYTES / BOXES, true, true);
            ima_tma_load<2, 1, true>(wdst + WORD_BYTES, &scales_map, bar, cs, TILE_N, group_rows * TILE_N * 2, true, true);
            ima_tma_load<2, 1, true>(wdst + WORD_BYTES + SCALE_BYTES, &qzeros_map, bar, cz, TILE_N / 8, group_rows * TILE_N / 2,
                               true, true);
            ima_tma_load<2, TILE_K / 64>(xs + st * X_STAGE, &x_map, bar, cx, 64, 16 * 128, true, true);
            if (++kc == KS) {
                kc = 0;
                ++tile;
            }
        });
        const int warp = int(threadIdx.x / 32);
        if (warp >= 2) {
            pipe.transform(u1 - u0, [&](int st, int) {
                const ImaTmaTile<__half, 16, TILE_K, false> xt{xs + st * X_STAGE, ImaRecorder{}, 0, true};
                ima_wg_pairs_order(xt, int(threadIdx.x) - 64);
                ima_wg_pairs_order(xt, int(threadIdx.x));
            });
        } else if (warp == 1 && u0 % KS != 0) {
            const int tile = u0 / KS, n0 = tile * TILE_N;
            for (int wg = 0; wg < 3; ++wg)
                if (n0 + 64 * wg < N) {
                    ima_bar_sync(6 + wg, 160);
                    if (threadIdx.x % 32 == 0) {
                        const int mine = (u1 < (tile + 1) * KS ? u1 : (tile + 1) * KS) - u0;
                        ImaStreamK<int>::arrive(&arrivals[n0 / 64 + wg], mine, KS);
                    }
                }
        }
        return;
    }
    const int wg = pipe.consumer(), lane = threadIdx.x % 32;
    const int c0 = 64 * wg + 16 * (threadIdx.x / 32 % 4) + 2 * (lane / 4);
    ImaWgAcc<16> acc;
    // y's tile from a lane's accumulators: e and e + 2 are one row's columns n and n + 1,
    // stored as one f16 pair (the spec's store_pair).
    const auto emit = [&](const ImaAcc4 (&c)[2], int n0) {
#pragma unroll
        for (int j = 0; j < 2; ++j)
#pragma unroll
            for (int e = 0; e < 2; ++e)
                *reinterpret_cast<__half2*>(&y[(8 * j + 2 * (lane % 4) + e) * N + n0 + c0]) =
                    __floats2half2_rn(c[j].x[e], c[j].x[e + 2]);
    };
    int next_kc = u0 % KS, next_tile = u0 / KS;
    pipe.consume(u1 - u0, [&](int st, int t) {
        const int kc = next_kc, tile = next_tile;
        if (++next_kc == KS) {
            next_kc = 0;
            ++next_tile;
        }
        const unsigned wt = ws + st * W_STAGE;
        const ImaTmaTile<__half, 16, TILE_K, false> xt{xs + st * X_STAGE, ImaRecorder{}, 0, true};
        Column q[2][2];
        group(wt, 0, c0, G, q[0]);
        group(wt, 128, c0, G, q[1]);
        ImaWgAcc<16> half[2];
        const auto fold = [&](int h) { acc.fma_rows(half[h], __low2float(q[h][0].s), __low2float(q[h][1].s)); };
        // Four quarters' registers, the decode never waiting for an MMA within the stage
        // (ima.cuh's ima_wg_w4_stage with SETS = 4).
        unsigned a[4][4][4];
#pragma unroll
        for (int h = 0; h < 4; ++h) {
#pragma unroll
            for (int b = 2 * h; b < 2 * h + 2; ++b)
                pairs(wt, q[h / 2], b, c0, a[h][2 * (b % 2)], a[h][2 * (b % 2) + 1]);
            acc.fence();
#pragma unroll
            for (int j = 4 * h; j < 4 * h + 4; ++j) half[h / 2].mma_regs(a[h][j % 4], xt, 16 * j);
            acc.commit();
        }
        acc.wait<2>();
        fold(0);
        acc.wait<0>();
        fold(1);
        if (kc != KS - 1 && t != u1 - u0 - 1) return;
        const int n0 = tile * TILE_N;
        if (n0 + 64 * wg < N) {
            if (tile * KS >= u0 && kc == KS - 1) {
                emit(acc.c, n0);
            } else if (tile * KS < u0) {
                // The spec's slots: part [BLOCKS = 132, 3, 2, 128, 4] f32.
                const int tid = threadIdx.x % 128;
#pragma unroll
                for (int j = 0; j < 2; ++j)
                    float4_slot<2>(part, blockIdx.x, wg, tid)[128 * j] =
                        make_float4(acc.c[j].x[0], acc.c[j].x[1], acc.c[j].x[2], acc.c[j].x[3]);
                ima_bar_arrive(6 + wg, 160);
            } else {
                const int tid = threadIdx.x % 128, hi = sk.owner(tile * KS + KS - 1);
                const int mine = u0 + t + 1 - tile * KS;
                ImaStreamK<int>::wait(&arrivals[n0 / 64 + wg], KS - mine);
                ima_warpgroup_sync();
                ImaAcc4 sum[2] = {acc.c[0], acc.c[1]};
#pragma unroll 2
                for (int b = int(blockIdx.x) + 1; b <= hi; ++b) {
#pragma unroll
                    for (int j = 0; j < 2; ++j) {
                        const float4 v = float4_slot<2>(part, b, wg, tid)[128 * j];
                        sum[j].x[0] += v.x;
                        sum[j].x[1] += v.y;
                        sum[j].x[2] += v.z;
                        sum[j].x[3] += v.w;
                    }
                }
                emit(sum, n0);
                if (threadIdx.x % 128 == 0) arrivals[n0 / 64 + wg] = 0;
                // The slots dropped from L2 once read, as the spec's (its `part` is aligned).
                __syncwarp();
                if (threadIdx.x % 8 == 0)
#pragma unroll 1
                    for (int b = int(blockIdx.x) + 1; b <= hi; ++b)
#pragma unroll
                        for (int j = 0; j < 2; ++j) ima_l2_discard(&float4_slot<2>(part, b, wg, tid)[128 * j]);
            }
        }
        acc = ImaWgAcc<16>{};
    });
}
#endif
