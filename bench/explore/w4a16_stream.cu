// Prototypes (not part of the build; bench/RESULTS.md, "W4A16 on TMA", has what each
// measured): W4A16 GPTQ GEMMs for up to 64 rows of x on Hopper whose packed words, scales,
// zeros and x the TMA unit streams through a pipeline of stages, a producer warpgroup
// issuing the copies and consumer warps decoding the words (LOP3) into mma.sync m16n8k16
// B fragments:
// - w4a16_stream<MT>: stream-K over units of (a strip of 128 columns, 512 / MT rows of
//   K), partial strips added into an f32 workspace, the last block of a strip to arrive
//   writing y; consumer warp (wn, wk) takes columns 32 wn .. and half wk of a stage's rows.
// - w4a16_stream3: the same for M <= 16 with three consumer warpgroups and (q - z)
//   decoded unscaled into low- and high-nibble accumulators, scaled per group in f32.
// - w4a16_strips<MT>: whole strips of 32 columns a block over all of K (the design of
//   specs/gemm_tma.ima's gptq_gemm_tma).
// `./w M K N GRID MODE`: MODE 0 stream-K, 2 its stream alone (no consumer work), 3 without
// x's copies; +10 w4a16_stream3, +20 w4a16_strips. (The variants with W read from L2, or
// as one unswizzled box, were earlier revisions of this file: see its git history.) Each
// output is checked against a one-thread-an-output reference kernel, and again after two
// more launches.
//
// nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -o w w4a16_stream.cu -lcuda
// (-DXR=32: w4a16_strips with x tiles of 32 rows whatever M)
#include <cuda.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "graph_time.cuh"
#include "tma_ring.cuh"

constexpr int BN = 128;
// Per m-tiles of 16 rows of x (MT): rows of K a step, stages.
template <int MT>
struct Cfg {
    static constexpr int KS = 512 / MT, PR = KS / 8, STAGES = MT == 1 ? 4 : MT == 2 ? 6 : 7, GS = KS / 128 > 0 ? KS / 128 : 1;
    static constexpr int W_BYTES = PR * BN * 4, X_BYTES = 16 * MT * KS * 2, S_BYTES = GS * BN * 2, Z_BYTES = GS * BN / 8 * 4;
    static constexpr int STAGE_BYTES = (W_BYTES + X_BYTES + S_BYTES + Z_BYTES + 1023) / 1024 * 1024;
    static constexpr int SMEM = STAGES * STAGE_BYTES + 1024;
};

__device__ __forceinline__ uint4 lds128(unsigned a) {
    uint4 v;
    asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(a));
    return v;
}
__device__ __forceinline__ void mma(float (&c)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
__device__ __forceinline__ void mma0(float (&c)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %10, %10, %10};"
        : "=f"(c[0]), "=f"(c[1]), "=f"(c[2]), "=f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1), "f"(0.f));
}
template <unsigned MASK>
__device__ __forceinline__ unsigned nibbles(unsigned a) {
    unsigned r;
    asm("lop3.b32 %0, %1, %2, %3, 0xEA;" : "=r"(r) : "r"(a), "n"(MASK), "r"(0x64006400u));
    return r;
}
__device__ __forceinline__ __half2 h2(unsigned b) {
    __half2 h;
    memcpy(&h, &b, 4);
    return h;
}
__device__ __forceinline__ unsigned u32(__half2 h) {
    unsigned b;
    memcpy(&b, &h, 4);
    return b;
}
// A word's 8 rows as (j, j + 4) pairs, (q - z) * s; lo = 1024 + z, hi = -(64 + z).
__device__ __forceinline__ void decode(unsigned w, __half2 lo, __half2 hi, __half2 s, unsigned (&b)[4]) {
    const __half2 sixteenth = __float2half2_rn(0.0625f);
    const unsigned w8 = w >> 8;
    b[0] = u32(__hmul2(__hsub2(h2(nibbles<0x000F000Fu>(w)), lo), s));
    b[1] = u32(__hmul2(__hfma2(h2(nibbles<0x00F000F0u>(w)), sixteenth, hi), s));
    b[2] = u32(__hmul2(__hsub2(h2(nibbles<0x000F000Fu>(w8)), lo), s));
    b[3] = u32(__hmul2(__hfma2(h2(nibbles<0x00F000F0u>(w8)), sixteenth, hi), s));
}
__device__ __forceinline__ void row_pairs(uint4 v, unsigned (&p)[4]) {
    p[0] = __byte_perm(v.x, v.z, 0x5410);
    p[1] = __byte_perm(v.x, v.z, 0x7632);
    p[2] = __byte_perm(v.y, v.w, 0x5410);
    p[3] = __byte_perm(v.y, v.w, 0x7632);
}

// G = 128 here.
template <int MT>
__global__ void __launch_bounds__(384, 1)
    w4a16_stream(const __grid_constant__ CUtensorMap tm_w, const __grid_constant__ CUtensorMap tm_x,
                 const __grid_constant__ CUtensorMap tm_s, const __grid_constant__ CUtensorMap tm_z,
                 __half* __restrict__ y, float* __restrict__ work, int* __restrict__ arrivals, int M, int K, int N, int mode) {
    using C = Cfg<MT>;
    constexpr int STAGES = C::STAGES, KS = C::KS, PR = C::PR, QN = PR / 8;
    extern __shared__ __align__(1024) unsigned char smem_raw[];
    __shared__ __align__(8) unsigned long long bars[2 * STAGES];
    __shared__ float red[16 * MT][BN];
    __shared__ int last_flag;
    const unsigned base = (smem_u32(smem_raw) + 1023) & ~1023u;
    const unsigned full = smem_u32(bars), empty = full + 8 * STAGES;
    const int KSTEPS = (K + KS - 1) / KS, strips = (N + BN - 1) / BN;
    const int U = KSTEPS * strips;
    const int P = U < int(gridDim.x) ? U : int(gridDim.x);
    if (int(blockIdx.x) >= P) return;
    const int u0 = int((long long)blockIdx.x * U / P), u1 = int((long long)(blockIdx.x + 1) * U / P);
    const int steps = u1 - u0;
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(full + 8 * s, 1);
            mbar_init(empty + 8 * s, 8);
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    const int wg = threadIdx.x / 128;
    if (wg == 0) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
        if (threadIdx.x == 0) {
            int strip = u0 / KSTEPS, ks = u0 % KSTEPS;
            for (int t = 0; t < steps; ++t) {
                const int s = t % STAGES;
                if (t >= STAGES) mbar_wait(empty + 8 * s, (t / STAGES - 1) & 1);
                const unsigned wdst = base + s * C::STAGE_BYTES, xdst = wdst + C::W_BYTES, sdst = xdst + C::X_BYTES,
                               zdst = sdst + C::S_BYTES;
                mbar_expect_tx(full + 8 * s, C::W_BYTES + (mode == 3 ? 0 : C::X_BYTES) + C::S_BYTES + C::Z_BYTES);
#pragma unroll
                for (int j = 0; j < BN / 32; ++j) tma_load_2d(wdst + j * PR * 128, &tm_w, full + 8 * s, strip * BN + 32 * j, ks * PR);
                if (mode != 3) {
#pragma unroll
                    for (int j = 0; j < KS / 64; ++j) tma_load_2d(xdst + j * (16 * MT * 128), &tm_x, full + 8 * s, ks * KS + 64 * j, 0);
                }
                tma_load_2d(sdst, &tm_s, full + 8 * s, strip * BN, ks * KS / 128);
                tma_load_2d(zdst, &tm_z, full + 8 * s, strip * BN / 8, ks * KS / 128);
                if (++ks == KSTEPS) {
                    ks = 0;
                    ++strip;
                }
            }
        }
        return;
    }
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
    const int cw = threadIdx.x / 32 - 4, wn = cw % 4, wk = cw / 4, lane = threadIdx.x % 32, g = lane / 4, t4 = lane % 4;
    float acc[MT][4][4];
    auto zero_acc = [&] {
#pragma unroll
        for (int i = 0; i < MT; ++i)
#pragma unroll
            for (int c = 0; c < 4; ++c)
#pragma unroll
                for (int e = 0; e < 4; ++e) acc[i][c][e] = 0.f;
    };
    zero_acc();
    int strip = u0 / KSTEPS, ks = u0 % KSTEPS;
    const __half2 k960 = __float2half2_rn(960.f);
    for (int t = 0; t < steps; ++t) {
        const int s = t % STAGES;
        mbar_wait(full + 8 * s, (t / STAGES) & 1);
        const unsigned wsrc = base + s * C::STAGE_BYTES + wn * PR * 128, xsrc = base + s * C::STAGE_BYTES + C::W_BYTES,
                       ssrc = xsrc + C::X_BYTES, zsrc = ssrc + C::S_BYTES;
        __half2 lo[4], hi[4], sv[4];
#pragma unroll
        for (int q = 0; q < QN; ++q) {
            if (mode == 2) break;
            // Lane t4 takes even packed rows (q even) or odd ones: with the 128-byte swizzle a
            // quarter warp's words and x then fall in distinct banks.
            const int p = wk * (PR / 2) + 8 * (q / 2) + 2 * t4 + q % 2;
            if (q % 2 == 0) {
                const int grp = (8 * p) / 128;
                uint2 sc;
                asm volatile("ld.shared.v2.u32 {%0, %1}, [%2];" : "=r"(sc.x), "=r"(sc.y) : "r"(ssrc + grp * BN * 2 + (32 * wn + 4 * g) * 2));
                unsigned zw;
                asm volatile("ld.shared.u32 %0, [%1];" : "=r"(zw) : "r"(zsrc + grp * (BN / 8) * 4 + (4 * wn + g / 2) * 4));
#pragma unroll
                for (int c = 0; c < 4; ++c) {
                    const unsigned z = (zw >> (4 * (4 * (g % 2) + c))) & 0xF;
                    lo[c] = h2(0x64006400u | z * 0x10001u);
                    hi[c] = __hsub2(k960, lo[c]);
                    const unsigned sw = c < 2 ? sc.x : sc.y;
                    sv[c] = c % 2 ? __high2half2(h2(sw)) : __low2half2(h2(sw));
                }
            }
            const uint4 wv = lds128(wsrc + p * 128 + ((g ^ (p % 8)) * 16));
            unsigned b[4][4];
            const unsigned wq[4] = {wv.x, wv.y, wv.z, wv.w};
#pragma unroll
            for (int c = 0; c < 4; ++c) decode(wq[c], lo[c], hi[c], sv[c], b[c]);
            const unsigned xa = xsrc + (p / 8) * (16 * MT * 128) + (((p % 8) ^ g) * 16);
#pragma unroll
            for (int i = 0; i < MT; ++i) {
                const uint4 x0 = lds128(xa + (16 * i + g) * 128), x1 = lds128(xa + (16 * i + g + 8) * 128);
                unsigned xl[4], xh[4];
                row_pairs(x0, xl);
                row_pairs(x1, xh);
                const unsigned a0[4] = {xl[0], xh[0], xl[1], xh[1]}, a1[4] = {xl[2], xh[2], xl[3], xh[3]};
#pragma unroll
                for (int c = 0; c < 4; ++c) {
                    mma(acc[i][c], a0, b[c][0], b[c][1]);
                    mma(acc[i][c], a1, b[c][2], b[c][3]);
                }
            }
        }
        // The stage is read: free it before the epilogue.
        __syncwarp();
        if (lane == 0) mbar_arrive(empty + 8 * s);
        const int cur_strip = strip, cur_ks = ks;
        if (++ks == KSTEPS) {
            ks = 0;
            ++strip;
        }
        if (cur_ks != KSTEPS - 1 && t != steps - 1) continue;
        // End of this block's part of the strip: the two k halves meet in `red`. Lane (g, t4)
        // holds columns 8 t4 + c + 4 (e % 2) of its warp's 32.
        asm volatile("bar.sync 1, 256;" ::: "memory");
        if (wk == 0) {
#pragma unroll
            for (int i = 0; i < MT; ++i)
#pragma unroll
                for (int c = 0; c < 4; ++c)
#pragma unroll
                    for (int e = 0; e < 4; ++e) red[16 * i + g + 8 * (e / 2)][32 * wn + 8 * t4 + c + 4 * (e % 2)] = acc[i][c][e];
        }
        asm volatile("bar.sync 1, 256;" ::: "memory");
        if (wk == 1) {
#pragma unroll
            for (int i = 0; i < MT; ++i)
#pragma unroll
                for (int c = 0; c < 4; ++c)
#pragma unroll
                    for (int e = 0; e < 4; ++e) red[16 * i + g + 8 * (e / 2)][32 * wn + 8 * t4 + c + 4 * (e % 2)] += acc[i][c][e];
        }
        zero_acc();
        asm volatile("bar.sync 1, 256;" ::: "memory");
        const bool whole = cur_ks == KSTEPS - 1 && t >= KSTEPS - 1;
        const int tid = threadIdx.x - 128;  // 0 .. 255
        const int rows = min(M, 16 * MT);
        if (whole) {
            for (int i = tid; i < rows * BN; i += 256) {
                const int r = i / BN, c = i % BN, col = cur_strip * BN + c;
                if (col < N) y[(long long)r * N + col] = __float2half_rn(red[r][c]);
            }
        } else {
            for (int i = tid; i < rows * BN; i += 256) {
                const int r = i / BN, c = i % BN, col = cur_strip * BN + c;
                if (col < N) atomicAdd(&work[(long long)r * N + col], red[r][c]);
            }
            asm volatile("bar.sync 1, 256;" ::: "memory");
            if (tid == 0) {
                // Blocks that hold units of this strip: the owners of its first and last.
                const long long f = (long long)cur_strip * KSTEPS, l = f + KSTEPS - 1;
                const int b0 = int(((f + 1) * P - 1) / U), b1 = int(((l + 1) * P - 1) / U);
                __threadfence();
                const int old = atomicAdd(&arrivals[cur_strip], 1);
                last_flag = old == b1 - b0;
                if (last_flag) arrivals[cur_strip] = 0;
            }
            asm volatile("bar.sync 1, 256;" ::: "memory");
            if (last_flag) {
                __threadfence();
                for (int i = tid; i < rows * BN; i += 256) {
                    const int r = i / BN, c = i % BN, col = cur_strip * BN + c;
                    if (col < N) {
                        float* pp = &work[(long long)r * N + col];
                        y[(long long)r * N + col] = __float2half_rn(__ldcg(pp));
                        __stcg(pp, 0.f);
                    }
                }
            }
        }
        asm volatile("bar.sync 1, 256;" ::: "memory");
    }
}

// M <= 16 with three consumer warpgroups: 12 warps, warp (wn, wk) columns 32 wn .. of the
// strip and group wk of the step's 3 (384 rows of K a step); (q - z) decoded unscaled into
// the low- and high-nibble accumulators gl, gh, scaled per group in f32.
constexpr int S3_KS = 384, S3_PR = 48, S3_STAGES = 5;
constexpr int S3_W = S3_PR * BN * 4, S3_X = 16 * S3_KS * 2, S3_S = 3 * BN * 2, S3_Z = 3 * BN / 8 * 4;
constexpr int S3_STAGE = (S3_W + S3_X + S3_S + S3_Z + 1023) / 1024 * 1024, S3_SMEM = S3_STAGES * S3_STAGE + 1024;
__global__ void __launch_bounds__(512, 1)
    w4a16_stream3(const __grid_constant__ CUtensorMap tm_w, const __grid_constant__ CUtensorMap tm_x,
                  const __grid_constant__ CUtensorMap tm_s, const __grid_constant__ CUtensorMap tm_z,
                  __half* __restrict__ y, float* __restrict__ work, int* __restrict__ arrivals, int M, int K, int N, int mode) {
    constexpr int STAGES = S3_STAGES, KS = S3_KS, PR = S3_PR;
    extern __shared__ __align__(1024) unsigned char smem_raw[];
    __shared__ __align__(8) unsigned long long bars[2 * STAGES];
    __shared__ float red[16][BN];
    __shared__ int last_flag;
    const unsigned base = (smem_u32(smem_raw) + 1023) & ~1023u;
    const unsigned full = smem_u32(bars), empty = full + 8 * STAGES;
    const int KSTEPS = (K + KS - 1) / KS, strips = (N + BN - 1) / BN;
    const int U = KSTEPS * strips;
    const int P = U < int(gridDim.x) ? U : int(gridDim.x);
    if (int(blockIdx.x) >= P) return;
    const int u0 = int((long long)blockIdx.x * U / P), u1 = int((long long)(blockIdx.x + 1) * U / P);
    const int steps = u1 - u0;
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(full + 8 * s, 1);
            mbar_init(empty + 8 * s, 12);
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    const int wg = threadIdx.x / 128;
    if (wg == 0) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
        if (threadIdx.x == 0) {
            int strip = u0 / KSTEPS, ks = u0 % KSTEPS;
            for (int t = 0; t < steps; ++t) {
                const int s = t % STAGES;
                if (t >= STAGES) mbar_wait(empty + 8 * s, (t / STAGES - 1) & 1);
                const unsigned wdst = base + s * S3_STAGE, xdst = wdst + S3_W, sdst = xdst + S3_X, zdst = sdst + S3_S;
                mbar_expect_tx(full + 8 * s, S3_W + S3_X + S3_S + S3_Z);
#pragma unroll
                for (int j = 0; j < BN / 32; ++j) tma_load_2d(wdst + j * PR * 128, &tm_w, full + 8 * s, strip * BN + 32 * j, ks * PR);
#pragma unroll
                for (int j = 0; j < KS / 64; ++j) tma_load_2d(xdst + j * 2048, &tm_x, full + 8 * s, ks * KS + 64 * j, 0);
                tma_load_2d(sdst, &tm_s, full + 8 * s, strip * BN, ks * 3);
                tma_load_2d(zdst, &tm_z, full + 8 * s, strip * BN / 8, ks * 3);
                if (++ks == KSTEPS) {
                    ks = 0;
                    ++strip;
                }
            }
        }
        return;
    }
    asm volatile("setmaxnreg.inc.sync.aligned.u32 152;");
    const int cw = threadIdx.x / 32 - 4, wn = cw % 4, wk = cw / 4, lane = threadIdx.x % 32, g = lane / 4, t4 = lane % 4;
    float acc[4][4];
    auto zero_acc = [&] {
#pragma unroll
        for (int c = 0; c < 4; ++c)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[c][e] = 0.f;
    };
    zero_acc();
    int strip = u0 / KSTEPS, ks = u0 % KSTEPS;
    for (int t = 0; t < steps; ++t) {
        const int s = t % STAGES;
        mbar_wait(full + 8 * s, (t / STAGES) & 1);
        const unsigned wsrc = base + s * S3_STAGE + wn * PR * 128, xsrc = base + s * S3_STAGE + S3_W, ssrc = xsrc + S3_X,
                       zsrc = ssrc + S3_S;
        float gl[4][4], gh[4][4];
        __half2 zl[4], zh[4];
        {
            unsigned zw;
            asm volatile("ld.shared.u32 %0, [%1];" : "=r"(zw) : "r"(zsrc + wk * (BN / 8) * 4 + (4 * wn + g / 2) * 4));
#pragma unroll
            for (int c = 0; c < 4; ++c) {
                const unsigned z = (zw >> (4 * (4 * (g % 2) + c))) & 0xF;
                zl[c] = h2(0x64006400u | z * 0x10001u);
                zh[c] = h2(0x64006400u | (z << 4) * 0x10001u);
            }
        }
#pragma unroll
        for (int q = 0; q < 4; ++q) {
            if (mode == 2) break;
            const int p = 16 * wk + 8 * (q / 2) + 2 * t4 + q % 2;
            const uint4 wv = lds128(wsrc + p * 128 + ((g ^ (p % 8)) * 16));
            const unsigned xa = xsrc + (p / 8) * 2048 + (((p % 8) ^ g) * 16);
            const uint4 x0 = lds128(xa + g * 128), x1 = lds128(xa + (g + 8) * 128);
            unsigned xl[4], xh[4];
            row_pairs(x0, xl);
            row_pairs(x1, xh);
            const unsigned al[4] = {xl[0], xh[0], xl[2], xh[2]}, ah[4] = {xl[1], xh[1], xl[3], xh[3]};
            const unsigned wq[4] = {wv.x, wv.y, wv.z, wv.w};
#pragma unroll
            for (int c = 0; c < 4; ++c) {
                const unsigned w = wq[c], w8 = w >> 8;
                const unsigned l0 = u32(__hsub2(h2(nibbles<0x000F000Fu>(w)), zl[c]));
                const unsigned l1 = u32(__hsub2(h2(nibbles<0x000F000Fu>(w8)), zl[c]));
                const unsigned h0 = u32(__hsub2(h2(nibbles<0x00F000F0u>(w)), zh[c]));
                const unsigned h1 = u32(__hsub2(h2(nibbles<0x00F000F0u>(w8)), zh[c]));
                if (q == 0) {
                    mma0(gl[c], al, l0, l1);
                    mma0(gh[c], ah, h0, h1);
                } else {
                    mma(gl[c], al, l0, l1);
                    mma(gh[c], ah, h0, h1);
                }
            }
        }
        if (mode != 2) {
            uint4 sc;
            asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(sc.x), "=r"(sc.y), "=r"(sc.z), "=r"(sc.w) : "r"(ssrc + wk * BN * 2 + (32 * wn + 8 * t4) * 2));
            const unsigned sw[4] = {sc.x, sc.y, sc.z, sc.w};
#pragma unroll
            for (int c = 0; c < 4; ++c)
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    const int j = c + 4 * (e % 2);
                    const __half2 pair = h2(sw[j / 2]);
                    const float sv = j % 2 ? __high2float(pair) : __low2float(pair);
                    acc[c][e] = fmaf(sv, gl[c][e], acc[c][e]);
                    acc[c][e] = fmaf(sv * 0.0625f, gh[c][e], acc[c][e]);
                }
        }
        __syncwarp();
        if (lane == 0) mbar_arrive(empty + 8 * s);
        const int cur_strip = strip, cur_ks = ks;
        if (++ks == KSTEPS) {
            ks = 0;
            ++strip;
        }
        if (cur_ks != KSTEPS - 1 && t != steps - 1) continue;
        asm volatile("bar.sync 1, 384;" ::: "memory");
        for (int part = 0; part < 3; ++part) {
            if (wk == part) {
#pragma unroll
                for (int c = 0; c < 4; ++c)
#pragma unroll
                    for (int e = 0; e < 4; ++e) {
                        float& r = red[g + 8 * (e / 2)][32 * wn + 8 * t4 + c + 4 * (e % 2)];
                        r = part == 0 ? acc[c][e] : r + acc[c][e];
                    }
            }
            asm volatile("bar.sync 1, 384;" ::: "memory");
        }
        zero_acc();
        const bool whole = cur_ks == KSTEPS - 1 && t >= KSTEPS - 1;
        const int tid = threadIdx.x - 128;  // 0 .. 383
        const int rows = min(M, 16);
        if (whole) {
            for (int i = tid; i < rows * BN; i += 384) {
                const int r = i / BN, c = i % BN, col = cur_strip * BN + c;
                if (col < N) y[(long long)r * N + col] = __float2half_rn(red[r][c]);
            }
        } else {
            for (int i = tid; i < rows * BN; i += 384) {
                const int r = i / BN, c = i % BN, col = cur_strip * BN + c;
                if (col < N) atomicAdd(&work[(long long)r * N + col], red[r][c]);
            }
            asm volatile("bar.sync 1, 384;" ::: "memory");
            if (tid == 0) {
                const long long f = (long long)cur_strip * KSTEPS, l = f + KSTEPS - 1;
                const int b0 = int(((f + 1) * P - 1) / U), b1 = int(((l + 1) * P - 1) / U);
                __threadfence();
                const int old = atomicAdd(&arrivals[cur_strip], 1);
                last_flag = old == b1 - b0;
                if (last_flag) arrivals[cur_strip] = 0;
            }
            asm volatile("bar.sync 1, 384;" ::: "memory");
            if (last_flag) {
                __threadfence();
                for (int i = tid; i < rows * BN; i += 384) {
                    const int r = i / BN, c = i % BN, col = cur_strip * BN + c;
                    if (col < N) {
                        float* pp = &work[(long long)r * N + col];
                        y[(long long)r * N + col] = __float2half_rn(__ldcg(pp));
                        __stcg(pp, 0.f);
                    }
                }
            }
        }
        asm volatile("bar.sync 1, 384;" ::: "memory");
    }
}

// Whole strips of 32 columns a block (no stream-K): block b takes strips b, b + grid, ...
// over all of K; 8 warps split a step's 64 packed rows, 8 each; the 8 partial sums of a
// strip meet in shared memory at its end. MT m-tiles of 16 rows of x.
#ifndef XR
#define XR 0
#endif
template <int MT>
struct StripCfg {
    static constexpr int XROWS = XR ? XR : 16 * MT;
    static constexpr int KS = 512, PR = 64, STAGES = XROWS == 16 ? 8 : 4;
    static constexpr int W_BYTES = PR * 32 * 4, X_BYTES = XROWS * KS * 2, S_BYTES = 4 * 32 * 2, Z_BYTES = 4 * 4 * 4;
    static constexpr int STAGE_BYTES = (W_BYTES + X_BYTES + S_BYTES + Z_BYTES + 1023) / 1024 * 1024;
    static constexpr int SMEM = STAGES * STAGE_BYTES + 1024;
};
template <int MT>
__global__ void __launch_bounds__(384, 1)
    w4a16_strips(const __grid_constant__ CUtensorMap tm_w, const __grid_constant__ CUtensorMap tm_x,
                 const __grid_constant__ CUtensorMap tm_s, const __grid_constant__ CUtensorMap tm_z,
                 __half* __restrict__ y, int M, int K, int N) {
    using C = StripCfg<MT>;
    constexpr int STAGES = C::STAGES, KS = C::KS, PR = C::PR;
    extern __shared__ __align__(1024) unsigned char smem_raw[];
    __shared__ __align__(8) unsigned long long bars[2 * STAGES];
    __shared__ __align__(16) float red[8][16 * MT][32];
    const unsigned base = (smem_u32(smem_raw) + 1023) & ~1023u;
    const unsigned full = smem_u32(bars), empty = full + 8 * STAGES;
    const int KSTEPS = (K + KS - 1) / KS, strips = (N + 31) / 32;
    const int mine = strips > int(blockIdx.x) ? (strips - 1 - int(blockIdx.x)) / int(gridDim.x) + 1 : 0;
    const int steps = mine * KSTEPS;
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(full + 8 * s, 1);
            mbar_init(empty + 8 * s, 8);
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    const int wg = threadIdx.x / 128;
    if (wg == 0) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
        if (threadIdx.x == 0) {
            int strip = blockIdx.x, ks = 0;
            for (int t = 0; t < steps; ++t) {
                const int s = t % STAGES;
                if (t >= STAGES) mbar_wait(empty + 8 * s, (t / STAGES - 1) & 1);
                const unsigned wdst = base + s * C::STAGE_BYTES, xdst = wdst + C::W_BYTES, sdst = xdst + C::X_BYTES,
                               zdst = sdst + C::S_BYTES;
                mbar_expect_tx(full + 8 * s, C::W_BYTES + C::X_BYTES + C::S_BYTES + C::Z_BYTES);
                tma_load_2d(wdst, &tm_w, full + 8 * s, strip * 32, ks * PR);
#pragma unroll
                for (int j = 0; j < KS / 64; ++j) tma_load_2d(xdst + j * (C::XROWS * 128), &tm_x, full + 8 * s, ks * KS + 64 * j, 0);
                tma_load_2d(sdst, &tm_s, full + 8 * s, strip * 32, ks * 4);
                tma_load_2d(zdst, &tm_z, full + 8 * s, strip * 4, ks * 4);
                if (++ks == KSTEPS) {
                    ks = 0;
                    strip += gridDim.x;
                }
            }
        }
        return;
    }
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
    const int w = threadIdx.x / 32 - 4, lane = threadIdx.x % 32, g = lane / 4, t4 = lane % 4;
    float acc[MT][4][4];
    auto zero_acc = [&] {
#pragma unroll
        for (int i = 0; i < MT; ++i)
#pragma unroll
            for (int c = 0; c < 4; ++c)
#pragma unroll
                for (int e = 0; e < 4; ++e) acc[i][c][e] = 0.f;
    };
    zero_acc();
    const __half2 k960 = __float2half2_rn(960.f);
    int strip = blockIdx.x, ks = 0;
    const int grp = w / 2;
    for (int t = 0; t < steps; ++t) {
        const int s = t % STAGES;
        mbar_wait(full + 8 * s, (t / STAGES) & 1);
        const unsigned wsrc = base + s * C::STAGE_BYTES, xsrc = wsrc + C::W_BYTES, ssrc = xsrc + C::X_BYTES, zsrc = ssrc + C::S_BYTES;
        __half2 lo[4], hi[4], sv[4];
        {
            uint2 sc;
            asm volatile("ld.shared.v2.u32 {%0, %1}, [%2];" : "=r"(sc.x), "=r"(sc.y) : "r"(ssrc + grp * 64 + 8 * g));
            unsigned zw;
            asm volatile("ld.shared.u32 %0, [%1];" : "=r"(zw) : "r"(zsrc + grp * 16 + (g / 2) * 4));
#pragma unroll
            for (int c = 0; c < 4; ++c) {
                const unsigned z = (zw >> (4 * (4 * (g % 2) + c))) & 0xF;
                lo[c] = h2(0x64006400u | z * 0x10001u);
                hi[c] = __hsub2(k960, lo[c]);
                const unsigned sw = c < 2 ? sc.x : sc.y;
                sv[c] = c % 2 ? __high2half2(h2(sw)) : __low2half2(h2(sw));
            }
        }
#pragma unroll
        for (int q = 0; q < 2; ++q) {
            const int p = 8 * w + 2 * t4 + q;
            const uint4 wv = lds128(wsrc + p * 128 + ((g ^ (p % 8)) * 16));
            unsigned b[4][4];
            const unsigned wq[4] = {wv.x, wv.y, wv.z, wv.w};
#pragma unroll
            for (int c = 0; c < 4; ++c) decode(wq[c], lo[c], hi[c], sv[c], b[c]);
            const unsigned xa = xsrc + w * (C::XROWS * 128) + (((p % 8) ^ g) * 16);
#pragma unroll
            for (int i = 0; i < MT; ++i) {
                const uint4 x0 = lds128(xa + (16 * i + g) * 128), x1 = lds128(xa + (16 * i + g + 8) * 128);
                unsigned xl[4], xh[4];
                row_pairs(x0, xl);
                row_pairs(x1, xh);
                const unsigned a0[4] = {xl[0], xh[0], xl[1], xh[1]}, a1[4] = {xl[2], xh[2], xl[3], xh[3]};
#pragma unroll
                for (int c = 0; c < 4; ++c) {
                    mma(acc[i][c], a0, b[c][0], b[c][1]);
                    mma(acc[i][c], a1, b[c][2], b[c][3]);
                }
            }
        }
        __syncwarp();
        if (lane == 0) mbar_arrive(empty + 8 * s);
        if (++ks != KSTEPS) continue;
        ks = 0;
        // The strip is done: the 8 warps' sums meet. Lane (g, t4) holds columns 8 t4 + j.
#pragma unroll
        for (int i = 0; i < MT; ++i)
#pragma unroll
            for (int hh = 0; hh < 2; ++hh)
#pragma unroll
                for (int j = 0; j < 8; ++j) red[w][16 * i + g + 8 * hh][8 * t4 + j] = acc[i][j % 4][2 * hh + j / 4];
        zero_acc();
        asm volatile("bar.sync 1, 256;" ::: "memory");
        const int tid = threadIdx.x - 128;
        for (int o = tid; o < 16 * MT * 32; o += 256) {
            const int r = o / 32, c = o % 32, col = strip * 32 + c;
            float sum = 0.f;
#pragma unroll
            for (int k = 0; k < 8; ++k) sum += red[k][r][c];
            if (r < M && col < N) y[(long long)r * N + col] = __float2half_rn(sum);
        }
        asm volatile("bar.sync 1, 256;" ::: "memory");
        strip += gridDim.x;
    }
}

// The reference: one thread an output, f32.
__global__ void reference(const __half* x, const unsigned* qw, const __half* scales, const unsigned* qzeros, float* y,
                          int M, int K, int N, int G) {
    const int n = blockIdx.x * blockDim.x + threadIdx.x, m = blockIdx.y;
    if (n >= N) return;
    float sum = 0.f;
    for (int k = 0; k < K; ++k) {
        const int q = (qw[(long long)(k / 8) * N + n] >> (4 * (k % 8))) & 0xF;
        const int z = (qzeros[(long long)(k / G) * (N / 8) + n / 8] >> (4 * (n % 8))) & 0xF;
        const float w = float(q - z) * __half2float(scales[(long long)(k / G) * N + n]);
        sum += w * __half2float(x[(long long)m * K + k]);
    }
    y[(long long)m * N + n] = sum;
}


static unsigned rng = 12345;
static unsigned next() {
    rng = rng * 1664525u + 1013904223u;
    return rng;
}

int main(int argc, char** argv) {
    const int M = atoi(argv[1]), K = atoi(argv[2]), N = atoi(argv[3]), G = 128, SETS = 3;
    const int grid = argc > 4 ? atoi(argv[4]) : 132;
    int mode = argc > 5 ? atoi(argv[5]) : 0;
    const int groups = (K + G - 1) / G;
    const size_t qw_n = (size_t)(K / 8) * N, sc_n = (size_t)groups * N, qz_n = (size_t)groups * N / 8;
    std::vector<unsigned> hq(qw_n), hz(qz_n);
    std::vector<__half> hs(sc_n), hx((size_t)M * K);
    for (auto& v : hq) v = next();
    for (auto& v : hz) v = next();
    for (auto& v : hs) v = __float2half(0.001f + (next() % 1000) * 1e-5f);
    for (auto& v : hx) v = __float2half(((int)(next() % 2001) - 1000) * 1e-3f);
    unsigned *dq[SETS], *dz[SETS];
    __half *ds[SETS], *dx, *dy;
    float *dref, *work;
    int* arr;
    for (int i = 0; i < SETS; ++i) {
        CHECK(cudaMalloc(&dq[i], qw_n * 4));
        CHECK(cudaMalloc(&dz[i], qz_n * 4));
        CHECK(cudaMalloc(&ds[i], sc_n * 2));
        CHECK(cudaMemcpy(dq[i], hq.data(), qw_n * 4, cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(dz[i], hz.data(), qz_n * 4, cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(ds[i], hs.data(), sc_n * 2, cudaMemcpyHostToDevice));
    }
    CHECK(cudaMalloc(&dx, (size_t)M * K * 2));
    CHECK(cudaMemcpy(dx, hx.data(), (size_t)M * K * 2, cudaMemcpyHostToDevice));
    CHECK(cudaMalloc(&dy, (size_t)M * N * 2));
    CHECK(cudaMalloc(&dref, (size_t)M * N * 4));
    CHECK(cudaMalloc(&work, (size_t)64 * N * 4));
    CHECK(cudaMemset(work, 0, (size_t)64 * N * 4));
    CHECK(cudaMalloc(&arr, (size_t)(N / BN + 1) * 4));
    CHECK(cudaMemset(arr, 0, (size_t)(N / BN + 1) * 4));
    const int MT = M <= 16 ? 1 : M <= 32 ? 2 : 4;
    const int PR = 64 / MT, KS = 512 / MT, GS = KS / 128 > 0 ? KS / 128 : 1;
    CUtensorMap mw[SETS], msc[SETS], mz[SETS];
    for (int i = 0; i < SETS; ++i) {
        mw[i] = map2d(dq[i], CU_TENSOR_MAP_DATA_TYPE_INT32, 4, K / 8, N, PR, 32);
        msc[i] = map2d(ds[i], CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, groups, N, GS, BN, CU_TENSOR_MAP_SWIZZLE_NONE);
        mz[i] = map2d(dz[i], CU_TENSOR_MAP_DATA_TYPE_INT32, 4, groups, N / 8, GS, BN / 8, CU_TENSOR_MAP_SWIZZLE_NONE);
    }
    const CUtensorMap mx = map2d(dx, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, M, K, XR && mode >= 20 ? XR : 16 * MT, 64);
    CHECK(cudaFuncSetAttribute(w4a16_stream<1>, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg<1>::SMEM));
    CHECK(cudaFuncSetAttribute(w4a16_stream<2>, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg<2>::SMEM));
    CHECK(cudaFuncSetAttribute(w4a16_stream<4>, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg<4>::SMEM));
    CUtensorMap m3w[SETS], m3s[SETS], m3z[SETS];
    for (int i = 0; i < SETS; ++i) {
        m3w[i] = map2d(dq[i], CU_TENSOR_MAP_DATA_TYPE_INT32, 4, K / 8, N, S3_PR, 32);
        m3s[i] = map2d(ds[i], CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, groups, N, 3, BN, CU_TENSOR_MAP_SWIZZLE_NONE);
        m3z[i] = map2d(dz[i], CU_TENSOR_MAP_DATA_TYPE_INT32, 4, groups, N / 8, 3, BN / 8, CU_TENSOR_MAP_SWIZZLE_NONE);
    }
    CHECK(cudaFuncSetAttribute(w4a16_stream3, cudaFuncAttributeMaxDynamicSharedMemorySize, S3_SMEM));
    CUtensorMap msw[SETS], mss[SETS], msz[SETS];
    for (int i = 0; i < SETS; ++i) {
        msw[i] = map2d(dq[i], CU_TENSOR_MAP_DATA_TYPE_INT32, 4, K / 8, N, 64, 32);
        mss[i] = map2d(ds[i], CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, groups, N, 4, 32, CU_TENSOR_MAP_SWIZZLE_NONE);
        msz[i] = map2d(dz[i], CU_TENSOR_MAP_DATA_TYPE_INT32, 4, groups, N / 8, 4, 4, CU_TENSOR_MAP_SWIZZLE_NONE);
    }
    CHECK(cudaFuncSetAttribute(w4a16_strips<1>, cudaFuncAttributeMaxDynamicSharedMemorySize, StripCfg<1>::SMEM));
    CHECK(cudaFuncSetAttribute(w4a16_strips<2>, cudaFuncAttributeMaxDynamicSharedMemorySize, StripCfg<2>::SMEM));
    const bool strips = mode >= 20;
    if (strips) mode -= 20;
    const bool three = mode >= 10;
    if (three) mode -= 10;
    auto launch = [&](int i) {
        if (strips) {
            if (MT == 1) w4a16_strips<1><<<grid, 384, StripCfg<1>::SMEM>>>(msw[i], mx, mss[i], msz[i], dy, M, K, N);
            else w4a16_strips<2><<<grid, 384, StripCfg<2>::SMEM>>>(msw[i], mx, mss[i], msz[i], dy, M, K, N);
            return;
        }
        if (three) {
            w4a16_stream3<<<grid, 512, S3_SMEM>>>(m3w[i], mx, m3s[i], m3z[i], dy, work, arr, M, K, N, mode);
            return;
        }
        if (MT == 1) w4a16_stream<1><<<grid, 384, Cfg<1>::SMEM>>>(mw[i], mx, msc[i], mz[i], dy, work, arr, M, K, N, mode);
        if (MT == 2) w4a16_stream<2><<<grid, 384, Cfg<2>::SMEM>>>(mw[i], mx, msc[i], mz[i], dy, work, arr, M, K, N, mode);
        if (MT == 4) w4a16_stream<4><<<grid, 384, Cfg<4>::SMEM>>>(mw[i], mx, msc[i], mz[i], dy, work, arr, M, K, N, mode);
    };
    launch(0);
    CHECK(cudaGetLastError());
    reference<<<dim3((N + 127) / 128, M), 128>>>(dx, dq[0], ds[0], dz[0], dref, M, K, N, G);
    CHECK(cudaDeviceSynchronize());
    std::vector<__half> hy((size_t)M * N);
    std::vector<float> hr((size_t)M * N);
    CHECK(cudaMemcpy(hy.data(), dy, hy.size() * 2, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(hr.data(), dref, hr.size() * 4, cudaMemcpyDeviceToHost));
    double worst = 0, scale = 0;
    for (size_t i = 0; i < hr.size(); ++i) scale = fmax(scale, fabs(hr[i]));
    for (size_t i = 0; i < hr.size(); ++i) worst = fmax(worst, fabs(__half2float(hy[i]) - hr[i]));
    // Launch twice more: the workspace and counters must be back to zero.
    launch(1);
    launch(0);
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(hy.data(), dy, hy.size() * 2, cudaMemcpyDeviceToHost));
    double worst2 = 0;
    for (size_t i = 0; i < hr.size(); ++i) worst2 = fmax(worst2, fabs(__half2float(hy[i]) - hr[i]));
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    const int iters = 30;
    for (int i = 0; i < 6; ++i) launch(i % SETS);
    cudaEventRecord(e0);
    for (int i = 0; i < iters; ++i) launch(i % SETS);
    cudaEventRecord(e1);
    CHECK(cudaEventSynchronize(e1));
    float ms;
    cudaEventElapsedTime(&ms, e0, e1);
    const double us = ms * 1000 / iters, bytes = qw_n * 4.0 + sc_n * 2.0 + qz_n * 4.0;
    printf("M %d K %d N %d grid %d: %.1f us, %.2f TB/s of weights (%.1f MB); max err %.3g, relaunch %.3g, scale %.3g\n", M, K,
           N, grid, us, bytes / us * 1e-6, bytes * 1e-6, worst, worst2, scale);
    return 0;
}
