// Hand-written twins of specs/quant.ima, attn.ima, rmsnorm.ima and rope.ima
// (examples/bench.rs): no accessors, no checks. Compiled with the same NVRTC as the
// generated modules.
#include <cuda_fp16.h>
#include <cuda_bf16.h>

// The twins below mirror the spec bodies of specs/quant.ima and specs/rmsnorm.ima, launch
// shape included (grid, block, dynamic shared bytes, __launch_bounds__(256, 1)), with the
// accessors written out as fixed row-major pointer arithmetic on 32-bit indices.

// 2^23 + v as a float: the difference of two is the exact difference of the integers.
__device__ __forceinline__ float twin_biased(unsigned int v) { return __uint_as_float(0x4B000000u | v); }

// Element (k, n) of a GPTQ weight (zeros stored minus one, word-wise as GPTQModel writes
// them: the word plus 0x11111111, with carries), for tiles at an edge.
__device__ __forceinline__ float twin_gptq_at(
        const int* __restrict__ qweight, const int* __restrict__ qzeros,
        const __half* __restrict__ scales, int k, int n, int N, int G) {
    const int g = k / G;
    const int q = (qweight[(k / 8) * N + n] >> (4 * (k % 8))) & 0xF;
    const int z = ((unsigned(qzeros[g * (N / 8) + n / 8]) + 0x11111111u) >> (4 * (n % 8))) & 0xF;
    return float(q - z) * __half2float(scales[g * N + n]);
}

// Element (k, n) of an AWQ weight (interleave [0, 2, 4, 6, 1, 3, 5, 7], zeros plain).
__device__ __forceinline__ float twin_awq_at(
        const int* __restrict__ qweight, const int* __restrict__ qzeros,
        const __half* __restrict__ scales, int k, int n, int N, int G) {
    const int g = k / G, col = n % 8, shift = 4 * (col / 2 + col % 2 * 4);
    const int q = (qweight[k * (N / 8) + n / 8] >> shift) & 0xF;
    const int z = (qzeros[g * (N / 8) + n / 8] >> shift) & 0xF;
    return float(q - z) * __half2float(scales[g * N + n]);
}

// C scales from 16-byte-aligned rows (C = 4 or 8).
template <int C>
__device__ __forceinline__ void twin_scales(const __half* __restrict__ p, float (&s)[C]) {
    __half h[C];
    if constexpr (C == 8) {
        const int4 v = __ldg(reinterpret_cast<const int4*>(p));
        memcpy(h, &v, 16);
    } else {
        const int2 v = __ldg(reinterpret_cast<const int2*>(p));
        memcpy(h, &v, 8);
    }
#pragma unroll
    for (int c = 0; c < C; ++c) s[c] = __half2float(h[c]);
}

struct __align__(16) TwinHalf8 {
    __half v[8];
};

// A GPTQ tile: rows k0..k0+7 (k0 % 8 == 0) by columns n..n+C-1 (n % C == 0, N % 8 == 0),
// loaded branch-free (a tile that is not whole loads the first tile instead), then decoded.
template <int C>
struct TwinTile {
    int k0, n;
    bool whole;
    unsigned int w[C];
    __half s[C];
    unsigned int zw;
};

template <int C>
__device__ __forceinline__ TwinTile<C> twin_gptq_load(
        const int* __restrict__ qweight, const int* __restrict__ qzeros,
        const __half* __restrict__ scales, int k0, int n, int K, int N, int G) {
    TwinTile<C> t;
    t.k0 = k0;
    t.n = n;
    const int g0 = (G & (G - 1)) == 0 ? k0 >> (__ffs(G) - 1) : k0 / G;
    t.whole = k0 + 8 <= K && k0 + 8 <= (g0 + 1) * G;
    const int lk = t.whole ? k0 : 0, ln = t.whole ? n : 0, lg = t.whole ? g0 : 0;
    if constexpr (C == 8) {
        const int4 v = __ldg(reinterpret_cast<const int4*>(&scales[lg * N + ln]));
        memcpy(t.s, &v, 16);
    } else {
        const int2 v = __ldg(reinterpret_cast<const int2*>(&scales[lg * N + ln]));
        memcpy(t.s, &v, 8);
    }
    t.zw = qzeros[lg * (N / 8) + ln / 8];
#pragma unroll
    for (int i = 0; i < C / 4; ++i) {
        const int4 v = __ldg(reinterpret_cast<const int4*>(&qweight[(lk / 8) * N + ln]) + i);
        memcpy(&t.w[4 * i], &v, 16);
    }
    return t;
}

// Rows k0..k0+7 by columns n..n+C-1 element by element (rows past K give 0): a tile at an
// edge or across groups. Out of line, as the accessor's edge path, so that its loads do not
// set the register budget of the whole kernel.
template <int C>
__device__ __noinline__ void twin_gptq_edge(
        const int* __restrict__ qweight, const int* __restrict__ qzeros,
        const __half* __restrict__ scales, int k0, int n, int K, int N, int G, float (&out)[8][C]) {
#pragma unroll
    for (int r = 0; r < 8; ++r)
#pragma unroll
        for (int c = 0; c < C; ++c)
            out[r][c] = k0 + r < K ? twin_gptq_at(qweight, qzeros, scales, k0 + r, n + c, N, G) : 0.f;
}

template <int C>
__device__ __forceinline__ void twin_gptq_decode(
        const int* __restrict__ qweight, const int* __restrict__ qzeros,
        const __half* __restrict__ scales, const TwinTile<C>& t, int K, int N, int G,
        float (&out)[8][C]) {
    if (t.whole) {
        const int col0 = C == 8 ? 0 : t.n % 8;
        float s[C], z[C];
#pragma unroll
        for (int c = 0; c < C; ++c) {
            s[c] = __half2float(t.s[c]);
            z[c] = twin_biased(((t.zw + 0x11111111u) >> (4 * (col0 + c))) & 0xF);
        }
#pragma unroll
        for (int r = 0; r < 8; ++r)
#pragma unroll
            for (int c = 0; c < C; ++c) out[r][c] = (twin_biased((t.w[c] >> (4 * r)) & 0xF) - z[c]) * s[c];
        return;
    }
    // Through an array of its own: `out` passed to the call would live in local memory on
    // the whole-tile path too.
    float edge[8][C];
    twin_gptq_edge<C>(qweight, qzeros, scales, t.k0, t.n, K, N, G, edge);
#pragma unroll
    for (int r = 0; r < 8; ++r)
#pragma unroll
        for (int c = 0; c < C; ++c) out[r][c] = edge[r][c];
}

template <int C>
struct TwinSum {
    float v[C];
};

// An edge tile's column sums, in f32, out of line (as the spec's accessor does).
template <int C>
__device__ __noinline__ TwinSum<C> twin_gptq_dot_edge(
        const int* __restrict__ qweight, const int* __restrict__ qzeros,
        const __half* __restrict__ scales, int k0, int n, const TwinHalf8 x, int K, int N, int G) {
    float v[8][C];
    twin_gptq_edge<C>(qweight, qzeros, scales, k0, n, K, N, G, v);
    TwinSum<C> sum;
#pragma unroll
    for (int c = 0; c < C; ++c) sum.v[c] = 0.f;
#pragma unroll
    for (int r = 0; r < 8; ++r)
#pragma unroll
        for (int c = 0; c < C; ++c) sum.v[c] += __half2float(x.v[r]) * v[r][c];
    return sum;
}

// The GEMV's tiles, as the spec's accessor decodes them: a word's 8 nibbles become 4 half2
// (q - z) pairs, masks 0x000F000F and 0x00F000F0 or'ed into 1024.0 (the second holds
// 1024 + 16q, scaled by 1/16 in the same FMA that takes the zero off), then a shift by 8
// for the other four. Exact, as (q - z) is in f16.
__device__ __forceinline__ __half2 twin_h2(unsigned int bits) {
    __half2 h;
    memcpy(&h, &bits, 4);
    return h;
}

// (a & mask) | 0x64006400 in one LOP3: written in C, ptxas splits it in two (one
// immediate an instruction).
template <unsigned int MASK>
__device__ __forceinline__ unsigned int twin_lop3(unsigned int a) {
    unsigned int r;
    asm("lop3.b32 %0, %1, %2, %3, 0xEA;" : "=r"(r) : "r"(a), "n"(MASK), "r"(0x64006400u));
    return r;
}

// sum + word w's (q - z) times x pairs xp (lo: 1024 + z, hi: -(64 + z)), as the accessor's
// `ima_dot_word`.
__device__ __forceinline__ __half2 twin_dot_word_h(unsigned int w, __half2 lo, __half2 hi,
                                                   const __half2* xp, __half2 sum) {
    const __half2 sixteenth = __float2half2_rn(0.0625f);
    const unsigned int w8 = w >> 8;
    sum = __hfma2(__hsub2(twin_h2(twin_lop3<0x000F000Fu>(w)), lo), xp[0], sum);
    sum = __hfma2(__hfma2(twin_h2(twin_lop3<0x00F000F0u>(w)), sixteenth, hi), xp[1], sum);
    sum = __hfma2(__hsub2(twin_h2(twin_lop3<0x000F000Fu>(w8)), lo), xp[2], sum);
    sum = __hfma2(__hfma2(twin_h2(twin_lop3<0x00F000F0u>(w8)), sixteenth, hi), xp[3], sum);
    return sum;
}

// The zero point of columns col0..col0+C-1 as the pairs twin_dot_word_h takes off:
// lo = 1024 + z, hi = -(64 + z) (-(1024 + 16z) / 16, exact).
template <int C>
__device__ __forceinline__ void twin_zero_pairs(unsigned int zw, int col0, __half2 (&lo)[C], __half2 (&hi)[C]) {
#pragma unroll
    for (int c = 0; c < C; ++c) {
        const unsigned int z = ((zw + 0x11111111u) >> (4 * (col0 + c))) & 0xF;
        lo[c] = twin_h2(0x64006400u | z | (z << 16));
        hi[c] = __hsub2(__float2half2_rn(960.f), lo[c]);
    }
}

// 8 rows of x as (row j, row j + 4) pairs: one byte permute each.
__device__ __forceinline__ void twin_x_pairs(const uint4& xv, __half2 (&xp)[4]) {
    const unsigned int pv[4] = {__byte_perm(xv.x, xv.z, 0x5410), __byte_perm(xv.x, xv.z, 0x7632),
                                __byte_perm(xv.y, xv.w, 0x5410), __byte_perm(xv.y, xv.w, 0x7632)};
    memcpy(xp, pv, 16);
}

// acc[c] += the tile's column c dotted with x's 8 rows: a whole tile in half2 arithmetic on
// (q - z), exact in f16, with the scale applied in f32; any other tile in f32.
template <int C>
__device__ __forceinline__ void twin_gptq_dot(
        const int* __restrict__ qweight, const int* __restrict__ qzeros,
        const __half* __restrict__ scales, const TwinTile<C>& t, const TwinHalf8& x,
        int K, int N, int G, float (&acc)[C]) {
    if (t.whole) {
        uint4 xv;
        memcpy(&xv, &x, 16);
        __half2 xp[4], lo[C], hi[C];
        twin_x_pairs(xv, xp);
        twin_zero_pairs<C>(t.zw, C == 8 ? 0 : t.n % 8, lo, hi);
#pragma unroll
        for (int c = 0; c < C; ++c) {
            const float2 f = __half22float2(twin_dot_word_h(t.w[c], lo[c], hi[c], xp, __float2half2_rn(0.f)));
            acc[c] += (f.x + f.y) * __half2float(t.s[c]);
        }
        return;
    }
    const TwinSum<C> edge = twin_gptq_dot_edge<C>(qweight, qzeros, scales, t.k0, t.n, x, K, N, G);
#pragma unroll
    for (int c = 0; c < C; ++c) acc[c] += edge.v[c];
}

template <int C>
__device__ __forceinline__ void twin_gptq_tile(
        const int* __restrict__ qweight, const int* __restrict__ qzeros,
        const __half* __restrict__ scales, int k0, int n, int K, int N, int G, float (&out)[8][C]) {
    twin_gptq_decode<C>(qweight, qzeros, scales,
                        twin_gptq_load<C>(qweight, qzeros, scales, k0, n, K, N, G), K, N, G, out);
}

// An AWQ tile at an edge or across groups, element by element, out of line (rows past K
// give 0).
__device__ __noinline__ void twin_awq_edge(
        const int* __restrict__ qweight, const int* __restrict__ qzeros,
        const __half* __restrict__ scales, int k0, int n, int K, int N, int G, float (&out)[8][8]) {
#pragma unroll 1
    for (int r = 0; r < 8; ++r)
#pragma unroll
        for (int c = 0; c < 8; ++c)
            out[r][c] = k0 + r < K ? twin_awq_at(qweight, qzeros, scales, k0 + r, n + c, N, G) : 0.f;
}

// An AWQ tile: rows k0..k0+7 by the 8 columns of packed word n / 8 (n % 8 == 0).
__device__ __forceinline__ void twin_awq_tile(
        const int* __restrict__ qweight, const int* __restrict__ qzeros,
        const __half* __restrict__ scales, int k0, int n, int K, int N, int G, float (&out)[8][8]) {
    const int g0 = k0 / G;
    if (k0 + 8 <= K && k0 + 8 <= (g0 + 1) * G) {
        float s[8], z[8];
        twin_scales<8>(&scales[g0 * N + n], s);
        const unsigned int zw = qzeros[g0 * (N / 8) + n / 8];
#pragma unroll
        for (int c = 0; c < 8; ++c) z[c] = twin_biased((zw >> (4 * (c / 2 + c % 2 * 4))) & 0xF);
#pragma unroll
        for (int r = 0; r < 8; ++r) {
            const unsigned int w = qweight[(k0 + r) * (N / 8) + n / 8];
#pragma unroll
            for (int c = 0; c < 8; ++c) out[r][c] = (twin_biased((w >> (4 * (c / 2 + c % 2 * 4))) & 0xF) - z[c]) * s[c];
        }
        return;
    }
    float edge[8][8];
    twin_awq_edge(qweight, qzeros, scales, k0, n, K, N, G, edge);
#pragma unroll
    for (int r = 0; r < 8; ++r)
#pragma unroll
        for (int c = 0; c < 8; ++c) out[r][c] = edge[r][c];
}

// gptq_dequant and awq_dequant (N % 8 == 0): grid(ceil(N / 2048), min(ceil(K / 8), 65535))
// block(256) under __launch_bounds__(256, 3) (the spec's `min_blocks 3`), a thread per 8 x 8
// tile, each row of it one 16-byte store.
#define TWIN_DEQUANT(NAME, TILE)                                                                \
extern "C" __global__ void __launch_bounds__(256, 3) NAME(                                     \
        const int* __restrict__ qweight, const int* __restrict__ qzeros,                       \
        const __half* __restrict__ scales, __half* __restrict__ y, int K, int N, int G) {      \
    const int n = (int(blockIdx.x) * 256 + threadIdx.x) * 8;                                   \
    if (n >= N) return;                                                                        \
    for (int k8 = int(blockIdx.y) * 8; k8 < K; k8 += int(gridDim.y) * 8) {                     \
        float v[8][8];                                                                         \
        TILE(qweight, qzeros, scales, k8, n, K, N, G, v);                                      \
        _Pragma("unroll")                                                                      \
        for (int r = 0; r < 8; ++r) {                                                          \
            if (k8 + r >= K) break;                                                            \
            TwinHalf8 row;                                                                     \
            _Pragma("unroll")                                                                  \
            for (int c = 0; c < 8; ++c) row.v[c] = __float2half_rn(v[r][c]);                   \
            *reinterpret_cast<TwinHalf8*>(&y[(k8 + r) * N + n]) = row;                         \
        }                                                                                      \
    }                                                                                          \
}
TWIN_DEQUANT(twin_gptq_dequant, twin_gptq_tile<8>)
TWIN_DEQUANT(twin_awq_dequant, twin_awq_tile)

template <int R>
struct TwinBatch {
    uint4 w[R];
    uint2 s;
    unsigned int zw;
};

// acc[col] += tile t (rows k0 .. k0 + 8R - 1 of one group, columns n .. n + 3) dotted with
// x, H packed rows summed in half2 before each conversion to f32.
template <int R, int H>
__device__ __forceinline__ void twin_gemv_batch_dot(const __half* __restrict__ x, const TwinBatch<R>& t,
                                                    int k0, int n, float (&acc)[4]) {
    __half sh[4];
    memcpy(sh, &t.s, 8);
    __half2 lo[4], hi[4];
    twin_zero_pairs<4>(t.zw, n % 8, lo, hi);
    float part[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
    for (int r0 = 0; r0 < R; r0 += H) {
        __half2 sum[4];
#pragma unroll
        for (int col = 0; col < 4; ++col) sum[col] = __float2half2_rn(0.f);
#pragma unroll
        for (int r = r0; r < r0 + H; ++r) {
            __half2 xp[4];
            twin_x_pairs(__ldg(reinterpret_cast<const uint4*>(&x[k0 + 8 * r])), xp);
            const unsigned int w[4] = {t.w[r].x, t.w[r].y, t.w[r].z, t.w[r].w};
#pragma unroll
            for (int col = 0; col < 4; ++col) sum[col] = twin_dot_word_h(w[col], lo[col], hi[col], xp, sum[col]);
        }
#pragma unroll
        for (int col = 0; col < 4; ++col) {
            const float2 f = __half22float2(sum[col]);
            part[col] += f.x + f.y;
        }
    }
#pragma unroll
    for (int col = 0; col < 4; ++col) acc[col] += part[col] * __half2float(sh[col]);
}

// Rows past the whole tiles of R packed rows, 8 at a time: every slices-th from slice.
__device__ __forceinline__ void twin_gemv_rest(
        const __half* __restrict__ x, const int* __restrict__ qweight,
        const int* __restrict__ qzeros, const __half* __restrict__ scales,
        float (&acc)[4], int k_from, int n, int K, int N, int G, int slice, int slices) {
    for (int k8 = k_from + slice * 8; k8 < K; k8 += slices * 8) {
        const TwinHalf8 xs = *reinterpret_cast<const TwinHalf8*>(&x[k8]);
        twin_gptq_dot<4>(qweight, qzeros, scales, twin_gptq_load<4>(qweight, qzeros, scales, k8, n, K, N, G),
                         xs, K, N, G, acc);
    }
}

// M = 1: every slices-th tile of R packed rows (8R rows of K, one group when G % 8R == 0),
// one scale and zero load per tile, the R rows' weights loaded before the first is used.
// Rows past the tiles go 8 at a time.
template <int R, int H>
__device__ __forceinline__ void twin_gemv_tiles(
        const __half* __restrict__ x, const int* __restrict__ qweight,
        const int* __restrict__ qzeros, const __half* __restrict__ scales,
        float (&acc)[4], int n, int K, int N, int G, int slice, int slices) {
    const int nb = G % (8 * R) == 0 ? K / (8 * R) : 0;
    for (int b = slice; b < nb; b += slices) {
        const int k0 = b * 8 * R, g = k0 / G;
        TwinBatch<R> t;
        const uint4* p = reinterpret_cast<const uint4*>(&qweight[(k0 / 8) * N + n]);
#pragma unroll
        for (int r = 0; r < R; ++r) t.w[r] = __ldg(p + r * (N / 4));
        t.s = __ldg(reinterpret_cast<const uint2*>(&scales[g * N + n]));
        t.zw = __ldg(&qzeros[g * (N / 8) + n / 8]);
        twin_gemv_batch_dot<R, H>(x, t, k0, n, acc);
    }
    twin_gemv_rest(x, qweight, qzeros, scales, acc, nb * 8 * R, n, K, N, G, slice, slices);
}

// Rows m0 .. m0 + MR - 1 of x (M > 1) into part[slice][m][column]: every 64th 8-row
// tile, each dotted with every row.
template <int MR>
__device__ __forceinline__ void twin_gemv_rows(
        const __half* __restrict__ x, const int* __restrict__ qweight,
        const int* __restrict__ qzeros, const __half* __restrict__ scales,
        float* part, int n, int m0, int M, int K, int N, int G) {
    float acc[MR][4];
#pragma unroll
    for (int m = 0; m < MR; ++m)
#pragma unroll
        for (int c = 0; c < 4; ++c) acc[m][c] = 0.f;
    if (n < N) {
        for (int k8 = int(threadIdx.y) * 8; k8 < K; k8 += 64) {
            const TwinTile<4> t = twin_gptq_load<4>(qweight, qzeros, scales, k8, n, K, N, G);
#pragma unroll
            for (int m = 0; m < MR; ++m) {
                if (m0 + m >= M) break;
                const TwinHalf8 xs = *reinterpret_cast<const TwinHalf8*>(&x[(m0 + m) * K + k8]);
                twin_gptq_dot<4>(qweight, qzeros, scales, t, xs, K, N, G, acc[m]);
            }
        }
    }
#pragma unroll
    for (int m = 0; m < MR; ++m) {
        if (m0 + m >= M) break;
#pragma unroll
        for (int c = 0; c < 4; ++c) part[(threadIdx.y * 8 + m0 + m) * 128 + threadIdx.x * 4 + c] = acc[m][c];
    }
}

// gptq_gemv (M <= 8, K % 8 == 0, N % 8 == 0): grid(ceil(N / 128)) block(32, 8) under
// __launch_bounds__(256, 2) (the spec's `min_blocks 2`), 32 KiB of dynamic shared memory
// for part[8][8][128] (slice of K, row of x, column). Each thread takes 4 columns; for M = 1
// every 8th tile of 8 packed rows (twin_gemv_tiles), for M > 1 rows of x 4 at a time.
extern "C" __global__ void __launch_bounds__(256, 2) twin_gptq_gemv(
        const __half* __restrict__ x, const int* __restrict__ qweight,
        const int* __restrict__ qzeros, const __half* __restrict__ scales,
        __half* __restrict__ y, int M, int K, int N, int G) {
    extern __shared__ __align__(16) unsigned char twin_smem[];
    float* part = reinterpret_cast<float*>(twin_smem);
    const int n = int(blockIdx.x) * 128 + threadIdx.x * 4;
    if (M == 1) {
        float acc[4] = {0.f, 0.f, 0.f, 0.f};
        if (n < N) twin_gemv_tiles<8, 2>(x, qweight, qzeros, scales, acc, n, K, N, G, threadIdx.y, 8);
#pragma unroll
        for (int c = 0; c < 4; ++c) part[threadIdx.y * 8 * 128 + threadIdx.x * 4 + c] = acc[c];
    } else {
        for (int m0 = 0; m0 < M; m0 += 4) twin_gemv_rows<4>(x, qweight, qzeros, scales, part, n, m0, M, K, N, G);
    }
    __syncthreads();
    for (int o = threadIdx.y * 32 + threadIdx.x; o < M * 128; o += 256) {
        const int m = o / 128, c = o % 128, col = int(blockIdx.x) * 128 + c;
        if (col < N) {
            float sum = 0.f;
#pragma unroll
            for (int s = 0; s < 8; ++s) sum += part[(s * 8 + m) * 128 + c];
            y[m * N + col] = __float2half(sum);
        }
    }
}

// Variants of twin_gptq_gemv for `bench --variants explore` (M = 1 only): a block of BX
// threads across (4 columns each: 4 BX columns, so that a warp reads 4 * min(BX, 32)
// columns of a packed row at once) by TY slices of K, R packed rows a tile, H rows summed
// in half2, __launch_bounds__(BX TY, MB). The twin is BX = 32, TY = 8, R = 8, H = 2, MB 2.
#define TWIN_GEMV_EXPLORE(NAME, MB, BX, TY, R, H)                                               \
extern "C" __global__ void __launch_bounds__(BX * TY, MB) NAME(                                \
        const __half* __restrict__ x, const int* __restrict__ qweight,                         \
        const int* __restrict__ qzeros, const __half* __restrict__ scales,                     \
        __half* __restrict__ y, int M, int K, int N, int G) {                                  \
    extern __shared__ __align__(16) unsigned char twin_smem[];                                 \
    float* part = reinterpret_cast<float*>(twin_smem);                                         \
    if (M != 1) __trap();                                                                      \
    const int n = int(blockIdx.x) * 4 * BX + threadIdx.x * 4;                                  \
    float acc[4] = {0.f, 0.f, 0.f, 0.f};                                                       \
    if (n < N) twin_gemv_tiles<R, H>(x, qweight, qzeros, scales, acc, n, K, N, G, threadIdx.y, TY); \
    _Pragma("unroll") for (int c = 0; c < 4; ++c) part[threadIdx.y * 4 * BX + threadIdx.x * 4 + c] = acc[c]; \
    __syncthreads();                                                                           \
    const int t = threadIdx.y * BX + threadIdx.x, col = int(blockIdx.x) * 4 * BX + t;          \
    if (t < 4 * BX && col < N) {                                                               \
        float sum = 0.f;                                                                       \
        for (int s = 0; s < TY; ++s) sum += part[s * 4 * BX + t];                              \
        y[col] = __float2half(sum);                                                            \
    }                                                                                          \
}
TWIN_GEMV_EXPLORE(explore_gemv_r4_ty32_mb3_h2, 3, 8, 32, 4, 2)
TWIN_GEMV_EXPLORE(explore_gemv_r4_ty32_mb4_h2, 4, 8, 32, 4, 2)
TWIN_GEMV_EXPLORE(explore_gemv_bx32_ty16_r4_mb2, 2, 32, 16, 4, 2)
TWIN_GEMV_EXPLORE(explore_gemv_bx16_ty8_r8_mb4, 4, 16, 8, 8, 2)
// Probes of the memory system alone (`--variants explore`; their output is a checksum, not
// y): the weights, scales and zeros read in the twin's order (block (8, 32), every 32nd
// tile of 4 packed rows) with no arithmetic but an XOR; and the same qweight bytes read in
// address order, a block a contiguous stretch. What the GEMV could reach if it cost nothing
// to compute, in its order and in the best one.
extern "C" __global__ void __launch_bounds__(256, 3) probe_read_gemv_order(
        const __half* __restrict__ x, const int* __restrict__ qweight,
        const int* __restrict__ qzeros, const __half* __restrict__ scales,
        __half* __restrict__ y, int M, int K, int N, int G) {
    const int n = int(blockIdx.x) * 32 + threadIdx.x * 4;
    uint4 acc = make_uint4(0, 0, 0, 0);
    for (int b = threadIdx.y; b < K / 32; b += 32) {
        const int k0 = b * 32, g = k0 / G;
        const uint4* p = reinterpret_cast<const uint4*>(&qweight[(k0 / 8) * N + n]);
#pragma unroll
        for (int r = 0; r < 4; ++r) {
            const uint4 w = __ldg(p + r * (N / 4));
            acc.x ^= w.x; acc.y ^= w.y; acc.z ^= w.z; acc.w ^= w.w;
        }
        const uint2 sc = __ldg(reinterpret_cast<const uint2*>(&scales[g * N + n]));
        acc.x ^= sc.x ^ __ldg(&qzeros[g * (N / 8) + n / 8]);
        acc.y ^= sc.y;
    }
    const unsigned int h = acc.x ^ acc.y ^ acc.z ^ acc.w;
    if (h == 0x12345678u) y[n] = __float2half(1.f);
}
extern "C" __global__ void __launch_bounds__(256, 3) probe_read_address_order(
        const __half* __restrict__ x, const int* __restrict__ qweight,
        const int* __restrict__ qzeros, const __half* __restrict__ scales,
        __half* __restrict__ y, int M, int K, int N, int G) {
    const int vectors = (K / 8) * (N / 4), per_block = vectors / gridDim.x;
    const uint4* p = reinterpret_cast<const uint4*>(qweight) + blockIdx.x * per_block;
    const int t = threadIdx.y * 8 + threadIdx.x;
    uint4 acc = make_uint4(0, 0, 0, 0);
#pragma unroll 4
    for (int i = t; i < per_block; i += 256) {
        const uint4 w = __ldg(p + i);
        acc.x ^= w.x; acc.y ^= w.y; acc.z ^= w.z; acc.w ^= w.w;
    }
    const unsigned int h = acc.x ^ acc.y ^ acc.z ^ acc.w;
    if (h == 0x12345678u) y[blockIdx.x] = __float2half(1.f);
}


// attn_scores: o[b, h, i, j] = q[b, h, i, :] . k[b, h, j, :] * scale.
extern "C" __global__ void __launch_bounds__(256) twin_attn_scores(
        const __half* __restrict__ q, const __half* __restrict__ k, float* __restrict__ o,
        int B, int H, int S, int T, int D, float scale) {
    const int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= B * H * S * T) return;
    const int j = idx % T, rest = idx / T, i = rest % S, bh = rest / S;
    const __half* qr = q + ((long long)bh * S + i) * D;
    const __half* kr = k + ((long long)bh * T + j) * D;
    float acc = 0.f;
    for (int d = 0; d < D; ++d) acc += __half2float(qr[d]) * __half2float(kr[d]);
    o[idx] = acc * scale;
}

// rms_norm (D % 8 == 0, 16-byte aligned rows): a block of 256 threads per row, 128 bytes
// of dynamic shared memory for red[32], 16-byte loads and stores of 8 bf16.
struct __align__(16) TwinBf16x8 {
    __nv_bfloat16 v[8];
};
extern "C" __global__ void __launch_bounds__(256, 1) twin_rms_norm(
        const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w,
        __nv_bfloat16* __restrict__ y, int N, int D, float eps) {
    extern __shared__ __align__(16) unsigned char twin_smem[];
    float* red = reinterpret_cast<float*>(twin_smem);
    const int row = blockIdx.x;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
    float ss = 0.f;
    for (int d = threadIdx.x * 8; d < D; d += blockDim.x * 8) {
        const TwinBf16x8 v = *reinterpret_cast<const TwinBf16x8*>(&x[row * D + d]);
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            const float f = __bfloat162float(v.v[j]);
            ss += f * f;
        }
    }
    for (int o = 16; o > 0; o /= 2) ss += __shfl_xor_sync(0xffffffffu, ss, o);
    if (lane == 0) red[warp] = ss;
    __syncthreads();
    ss = 0.f;
    for (int i = 0; i < warps; ++i) ss += red[i];
    const float inv = rsqrtf(ss / float(D) + eps);
    for (int d = threadIdx.x * 8; d < D; d += blockDim.x * 8) {
        const TwinBf16x8 v = *reinterpret_cast<const TwinBf16x8*>(&x[row * D + d]);
        const TwinBf16x8 g = *reinterpret_cast<const TwinBf16x8*>(&w[d]);
        TwinBf16x8 out;
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            out.v[j] = __float2bfloat16(__bfloat162float(v.v[j]) * inv * __bfloat162float(g.v[j]));
        }
        *reinterpret_cast<TwinBf16x8*>(&y[row * D + d]) = out;
    }
}

// attn_scores_tiled (D % 8 == 0): grid(B * H, ceil(S / 128), ceil(T / 128)) block(256)
// under __launch_bounds__(256, 2), 32 KiB of dynamic shared memory for qs and ks
// ([32][128] f32 each): a 128 x 128 tile of o a block, 8 x 8 a thread, D in chunks of 32.
extern "C" __global__ void __launch_bounds__(256, 2) twin_attn_scores_tiled(
        const __half* __restrict__ q, const __half* __restrict__ k, float* __restrict__ o,
        int B, int H, int S, int T, int D, float scale) {
    extern __shared__ __align__(16) unsigned char twin_smem[];
    float* qs = reinterpret_cast<float*>(twin_smem);
    float* ks = qs + 32 * 128;
    const int bh = blockIdx.x, i0 = blockIdx.y * 128, j0 = blockIdx.z * 128;
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    const __half* qb = q + (long long)bh * S * D;
    const __half* kb = k + (long long)bh * T * D;
    float acc[8][8];
#pragma unroll
    for (int r = 0; r < 8; ++r)
#pragma unroll
        for (int c = 0; c < 8; ++c) acc[r][c] = 0.f;
    for (int d0 = 0; d0 < D; d0 += 32) {
#pragma unroll
        for (int e = 0; e < 2; ++e) {
            const int row = threadIdx.x / 4 + 64 * e, dd = threadIdx.x % 4 * 8;
            float qf[8], kf[8];
#pragma unroll
            for (int x = 0; x < 8; ++x) qf[x] = kf[x] = 0.f;
            if (i0 + row < S && d0 + dd < D) {
                const TwinHalf8 v = *reinterpret_cast<const TwinHalf8*>(&qb[(i0 + row) * D + d0 + dd]);
#pragma unroll
                for (int x = 0; x < 8; ++x) qf[x] = __half2float(v.v[x]);
            }
            if (j0 + row < T && d0 + dd < D) {
                const TwinHalf8 v = *reinterpret_cast<const TwinHalf8*>(&kb[(j0 + row) * D + d0 + dd]);
#pragma unroll
                for (int x = 0; x < 8; ++x) kf[x] = __half2float(v.v[x]);
            }
#pragma unroll
            for (int x = 0; x < 8; ++x) {
                qs[(dd + x) * 128 + row] = qf[x];
                ks[(dd + x) * 128 + row] = kf[x];
            }
        }
        __syncthreads();
#pragma unroll
        for (int dd = 0; dd < 32; ++dd) {
            float a[8], bk[8];
#pragma unroll
            for (int r = 0; r < 8; ++r) a[r] = qs[dd * 128 + ty + 16 * r];
#pragma unroll
            for (int c = 0; c < 8; ++c) bk[c] = ks[dd * 128 + tx + 16 * c];
#pragma unroll
            for (int r = 0; r < 8; ++r)
#pragma unroll
                for (int c = 0; c < 8; ++c) acc[r][c] = fmaf(a[r], bk[c], acc[r][c]);
        }
        __syncthreads();
    }
    float* ob = o + (long long)bh * S * T;
#pragma unroll
    for (int r = 0; r < 8; ++r) {
        const int i = i0 + ty + 16 * r;
        if (i >= S) break;
#pragma unroll
        for (int c = 0; c < 8; ++c) {
            const int j = j0 + tx + 16 * c;
            if (j < T) ob[(long long)i * T + j] = acc[r][c] * scale;
        }
    }
}

// rope: x and y stored [B, S, H, D]; grid(ceil(B * S * H * D / 2048)) block(256), a thread
// per 8 elements in the stored order, one 16-byte load and store each (D % 8 == 0).
extern "C" __global__ void __launch_bounds__(256) twin_rope(
        const __half* __restrict__ x, const float* __restrict__ cos_tab,
        const float* __restrict__ sin_tab, __half* __restrict__ y, int B, int H, int S, int D) {
    const int t = int(blockIdx.x) * 256 + threadIdx.x;
    const int d = t % (D / 8) * 8, row = t / (D / 8);
    const int h = row % H, s = row / H % S, b = row / H / S;
    if (b >= B) return;
    const long long at = (((long long)b * S + s) * H + h) * D + d;
    const TwinHalf8 v = *reinterpret_cast<const TwinHalf8*>(&x[at]);
    TwinHalf8 out;
#pragma unroll
    for (int j = 0; j < 8; j += 2) {
        const int p = d / 2 + j / 2;
        const float c = cos_tab[s * (D / 2) + p], sn = sin_tab[s * (D / 2) + p];
        const float x0 = __half2float(v.v[j]), x1 = __half2float(v.v[j + 1]);
        out.v[j] = __float2half(x0 * c - x1 * sn);
        out.v[j + 1] = __float2half(x1 * c + x0 * sn);
    }
    *reinterpret_cast<TwinHalf8*>(&y[at]) = out;
}
