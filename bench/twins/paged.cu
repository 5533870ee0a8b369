// Hand-written twin of specs/paged.ima (examples/bench.rs, case paged_attn): the same
// algorithm and launch shape, raw pointers, contiguous row-major 32-bit index arithmetic,
// and no checks: seq_lens and block_tables entries are used as they are read. Compiled
// with the same NVRTC as the generated module.
#include <cuda_fp16.h>

// NVRTC has no <math.h>.
#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif

#define TWIN_PART 512

struct __align__(16) TwinPagedHalf8 {
    __half v[8];
};

__device__ __forceinline__ float twin_ex2(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

// paged_attn_partition: grid(ceil(P * BS / 512), HKV * ceil(HQ / HKV / 4), B) block(256)
// under __launch_bounds__(256, 2); dynamic shared memory: pages (513 ints, padded to 2064
// bytes), red_o (8192 floats), red_ml (2 x 4 x 32 floats).
template <int DD>
__device__ __forceinline__ void twin_attend(const __half* __restrict__ q, const __half* __restrict__ k_cache,
                                            const __half* __restrict__ v_cache, float* __restrict__ part_o,
                                            float* __restrict__ part_lse, const int* pages, float* red_o,
                                            float* red_ml, int b, int h, int G, int g0, int gn, int part,
                                            int start, int end, int first_page, int HQ, int HKV, int BS,
                                            int NPART, float scale) {
    constexpr int GC = 4, NT = 2;
    constexpr int LPT = DD / 8, SLOTS = 256 / LPT;
    const int lane = threadIdx.x % LPT, slot = threadIdx.x / LPT, d0 = lane * 8;
    float qf[GC][8];
#pragma unroll
    for (int g = 0; g < GC; ++g) {
#pragma unroll
        for (int j = 0; j < 8; ++j) qf[g][j] = 0.f;
        if (g < gn) {
            const TwinPagedHalf8 v =
                *reinterpret_cast<const TwinPagedHalf8*>(&q[((long long)b * HQ + h * G + g0 + g) * DD + d0]);
#pragma unroll
            for (int j = 0; j < 8; ++j) qf[g][j] = __half2float(v.v[j]) * (scale * 1.4426950408889634f);
        }
    }
    float m[GC], l[GC], acc[GC][8];
#pragma unroll
    for (int g = 0; g < GC; ++g) {
        m[g] = -INFINITY;
        l[g] = 0.f;
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[g][j] = 0.f;
    }
    const int nchunks = (end - start + NT - 1) / NT;
    constexpr int STEP = SLOTS * NT;
    const int step_pg = STEP / BS, step_row = STEP % BS;
    int t0 = start + slot * NT;
    int pg = t0 / BS - first_page, row = t0 % BS;
    const long long page_stride = (long long)BS * HKV * DD;
    for (int c0 = 0; c0 < nchunks; c0 += SLOTS) {
        TwinPagedHalf8 kv[NT], vv[NT];
        bool ok[NT];
        {
            int p = pg, r = row;
#pragma unroll
            for (int i = 0; i < NT; ++i) {
                ok[i] = t0 + i < end;
                if (ok[i]) {
                    const long long at = pages[p] * page_stride + (r * HKV + h) * DD + d0;
                    kv[i] = *reinterpret_cast<const TwinPagedHalf8*>(&k_cache[at]);
                    vv[i] = *reinterpret_cast<const TwinPagedHalf8*>(&v_cache[at]);
                } else {
#pragma unroll
                    for (int j = 0; j < 8; ++j) kv[i].v[j] = vv[i].v[j] = __float2half(0.f);
                }
                if (++r == BS) {
                    r = 0;
                    ++p;
                }
            }
        }
        float s[NT][GC];
#pragma unroll
        for (int i = 0; i < NT; ++i) {
            float kf[8];
#pragma unroll
            for (int j = 0; j < 8; j += 2) {
                const float2 f = __half22float2(*reinterpret_cast<const __half2*>(&kv[i].v[j]));
                kf[j] = f.x;
                kf[j + 1] = f.y;
            }
#pragma unroll
            for (int g = 0; g < GC; ++g) {
                float a = 0.f;
#pragma unroll
                for (int j = 0; j < 8; ++j) a = fmaf(qf[g][j], kf[j], a);
                s[i][g] = a;
            }
        }
#pragma unroll
        for (int o = LPT / 2; o > 0; o /= 2)
#pragma unroll
            for (int i = 0; i < NT; ++i)
#pragma unroll
                for (int g = 0; g < GC; ++g) s[i][g] += __shfl_xor_sync(0xffffffffu, s[i][g], o);
        float p[NT][GC];
#pragma unroll
        for (int g = 0; g < GC; ++g) {
            float mx = m[g];
#pragma unroll
            for (int i = 0; i < NT; ++i) mx = ok[i] ? fmaxf(mx, s[i][g]) : mx;
            const float base = mx == -INFINITY ? 0.f : mx;
            const float corr = twin_ex2(m[g] - base);
            m[g] = mx;
            l[g] *= corr;
#pragma unroll
            for (int j = 0; j < 8; ++j) acc[g][j] *= corr;
#pragma unroll
            for (int i = 0; i < NT; ++i) {
                p[i][g] = ok[i] ? twin_ex2(s[i][g] - base) : 0.f;
                l[g] += p[i][g];
            }
        }
#pragma unroll
        for (int i = 0; i < NT; ++i) {
#pragma unroll
            for (int j = 0; j < 8; j += 2) {
                const float2 f = __half22float2(*reinterpret_cast<const __half2*>(&vv[i].v[j]));
#pragma unroll
                for (int g = 0; g < GC; ++g) {
                    acc[g][j] = fmaf(p[i][g], f.x, acc[g][j]);
                    acc[g][j + 1] = fmaf(p[i][g], f.y, acc[g][j + 1]);
                }
            }
        }
        t0 += STEP;
        pg += step_pg;
        row += step_row;
        if (row >= BS) {
            row -= BS;
            ++pg;
        }
    }
    if (lane == 0) {
#pragma unroll
        for (int g = 0; g < GC; ++g) {
            red_ml[(0 * 4 + g) * 32 + slot] = m[g];
            red_ml[(1 * 4 + g) * 32 + slot] = l[g];
        }
    }
#pragma unroll
    for (int g = 0; g < GC; ++g)
#pragma unroll
        for (int j = 0; j < 8; ++j) red_o[slot * (GC * DD) + (g * 8 + j) * LPT + lane] = acc[g][j];
    __syncthreads();
    for (int o = threadIdx.x; o < GC * DD; o += 256) {
        const int g = o / DD, j = o / LPT % 8, ln = o % LPT;
        if (g >= gn) break;
        float mx = -INFINITY;
#pragma unroll
        for (int sl = 0; sl < SLOTS; ++sl) mx = fmaxf(mx, red_ml[g * 32 + sl]);
        float sum = 0.f, o_sum = 0.f;
#pragma unroll 8
        for (int sl = 0; sl < SLOTS; ++sl) {
            const float w = twin_ex2(red_ml[g * 32 + sl] - mx);
            sum += w * red_ml[(4 + g) * 32 + sl];
            o_sum += w * red_o[sl * (GC * DD) + o];
        }
        const long long row_at = ((long long)b * HQ + h * G + g0 + g) * NPART + part;
        part_o[row_at * DD + ln * 8 + j] = o_sum / sum;
        if (j == 0 && ln == 0) part_lse[row_at] = mx + __log2f(sum);
    }
}

extern "C" __global__ void __launch_bounds__(256, 2) twin_paged_attn_partition(
        const __half* __restrict__ q, const __half* __restrict__ k_cache, const __half* __restrict__ v_cache,
        const int* __restrict__ block_tables, const int* __restrict__ seq_lens, float* __restrict__ part_o,
        float* __restrict__ part_lse, int HQ, int HKV, int D, int BS, int P, float scale) {
    extern __shared__ __align__(16) unsigned char twin_smem[];
    int* pages = reinterpret_cast<int*>(twin_smem);
    float* red_o = reinterpret_cast<float*>(twin_smem + 2064);
    float* red_ml = red_o + 8192;
    const int NPART = (P * BS + TWIN_PART - 1) / TWIN_PART;
    const int part = blockIdx.x, b = blockIdx.z;
    const int G = HQ / HKV, chunks_of_g = (G + 3) / 4;
    const int h = blockIdx.y / chunks_of_g, g0 = blockIdx.y % chunks_of_g * 4;
    const int gn = min(4, G - g0);
    const int len = seq_lens[b];
    const int start = part * TWIN_PART;
    if (start >= len) return;
    const int end = min(start + TWIN_PART, len);
    const int first_page = start / BS, npages = (end - 1) / BS - first_page + 1;
    for (int j = threadIdx.x; j < npages; j += 256) pages[j] = block_tables[b * P + first_page + j];
    __syncthreads();
#define TWIN_ATTEND(DD)                                                                                  \
    twin_attend<DD>(q, k_cache, v_cache, part_o, part_lse, pages, red_o, red_ml, b, h, G, g0, gn, part, \
                    start, end, first_page, HQ, HKV, BS, NPART, scale)
    if (D == 64) {
        TWIN_ATTEND(64);
    } else if (D == 128) {
        TWIN_ATTEND(128);
    } else {
        TWIN_ATTEND(256);
    }
#undef TWIN_ATTEND
}

// paged_attn_reduce: grid(HQ, B) block(128).
extern "C" __global__ void __launch_bounds__(128) twin_paged_attn_reduce(
        const float* __restrict__ part_o, const float* __restrict__ part_lse, const int* __restrict__ seq_lens,
        __half* __restrict__ out, int HQ, int NP, int D) {
    const int h = blockIdx.x, b = blockIdx.y;
    const int n = (seq_lens[b] + TWIN_PART - 1) / TWIN_PART;
    const long long row = (long long)b * HQ + h;
    float mx = -INFINITY;
    for (int p = 0; p < n; ++p) mx = fmaxf(mx, part_lse[row * NP + p]);
    for (int d = threadIdx.x; d < D; d += 128) {
        float sum = 0.f, o_sum = 0.f;
        for (int p = 0; p < n; ++p) {
            const float w = exp2f(part_lse[row * NP + p] - mx);
            sum += w;
            o_sum += w * part_o[(row * NP + p) * D + d];
        }
        out[row * D + d] = __float2half(n == 0 ? 0.f : o_sum / sum);
    }
}
