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

__device__ __forceinline__ float twin_ex2(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}
__device__ __forceinline__ unsigned twin_smem(const void* p) { return unsigned(__cvta_generic_to_shared(p)); }
__device__ __forceinline__ void twin_ldsm(unsigned at, unsigned (&f)[4], bool trans) {
    if (trans)
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                     : "=r"(f[0]), "=r"(f[1]), "=r"(f[2]), "=r"(f[3]) : "r"(at));
    else
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                     : "=r"(f[0]), "=r"(f[1]), "=r"(f[2]), "=r"(f[3]) : "r"(at));
}
// m16n8k16, A rows 8..15 zero, D rows 8..15 dropped: c0, c1 accumulate in place.
__device__ __forceinline__ void twin_mma(unsigned a0, unsigned a2, unsigned b0, unsigned b1, float& c0, float& c1) {
    float d[4];
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
                 "{%10, %11, %12, %13};"
                 : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
                 : "r"(a0), "r"(0u), "r"(a2), "r"(0u), "r"(b0), "r"(b1), "f"(c0), "f"(c1), "f"(0.f), "f"(0.f));
    c0 = d[0];
    c1 = d[1];
}
__device__ __forceinline__ unsigned twin_pack(float lo, float hi) {
    unsigned r;
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}

// paged_attn: grid(ceil(P * BS / 512), HKV * ceil(HQ / HKV / 8), B) block(128)
// under __launch_bounds__(128, 3); dynamic shared memory in the spec's order, each at a
// 16-byte boundary: kv (f16 [4, 2, 2, 16, D]), qs (f16 [8, D]), red_o (f32 [2, D / 16, 32, 4]),
// red_ml (f32 [2, 2, 8]), pages (PART / BS + 2 ints).
template <int DD>
__device__ __forceinline__ void twin_attend(const __half* __restrict__ q, const __half* __restrict__ k_cache,
                                            const __half* __restrict__ v_cache, float* __restrict__ part_o,
                                            float* __restrict__ part_lse, int* __restrict__ arrivals,
                                            __half* __restrict__ out, int len, const int* pages, __half* kv,
                                            __half* qs, float* red_o, float* red_ml, int b, int h, int G,
                                            int g0, int gn, int part, int start, int end, int first_page,
                                            int HQ, int HKV, int BS, int NPART, float scale) {
    constexpr int W = 4, ST = 2, TILE = 16, KSTEPS = DD / 16, CPR = DD / 8, RPP = 32 / CPR;
    constexpr int DS = DD > 128 ? 2 : 1, DH = DD / DS, DTILES = DH / 8, PAIRS = W / DS;
    constexpr bool Q_SHARED = DD > 128;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, gid = lane / 4, t4 = lane % 4;
    const int pw = warp / DS, half_d = warp % DS;
    const float scale_log2 = scale * 1.4426950408889634f;
    // kv [pair, stage, K or V, row, dimension], chunk c of row r at c ^ (r % 8).
    auto kv_at = [&](int slot, int stage, int which, int r, int c) {
        return kv + ((((slot * ST + stage) * 2 + which) * TILE + r) * DD + (c ^ (r % 8)) * 8);
    };
    auto sync = [] {
        if constexpr (DS == 1) {
            __syncwarp();
        } else {
            __syncthreads();
        }
    };
    unsigned qa[Q_SHARED ? 1 : KSTEPS][2];
    if constexpr (Q_SHARED) {
        for (int i = threadIdx.x; i < 8 * CPR; i += 128) {
            const int r = i / CPR, c = i % CPR;
            int4 v = make_int4(0, 0, 0, 0);
            if (r < gn) v = *reinterpret_cast<const int4*>(&q[((long long)b * HQ + h * G + g0 + r) * DD + c * 8]);
            *reinterpret_cast<int4*>(&qs[r * DD + (c ^ r) * 8]) = v;
        }
        __syncthreads();
    } else {
        const bool has = gid < gn;
        const __half* qr = q + ((long long)b * HQ + h * G + g0 + (has ? gid : 0)) * DD;
#pragma unroll
        for (int kk = 0; kk < KSTEPS; ++kk) {
            qa[kk][0] = has ? *reinterpret_cast<const unsigned*>(qr + 16 * kk + 2 * t4) : 0u;
            qa[kk][1] = has ? *reinterpret_cast<const unsigned*>(qr + 16 * kk + 8 + 2 * t4) : 0u;
        }
    }
    const int ntiles = (end - start + TILE - 1) / TILE;
    const int niter = (ntiles + PAIRS - 1) / PAIRS;
    const long long page_stride = (long long)BS * HKV * DD;
    auto issue = [&](int it) {
        const int t0 = start + (it * PAIRS + pw) * TILE;
        const int stage = it % ST, c = lane % CPR;
        // With BS a multiple of 16 a tile lies in one page: one page id a tile.
        const bool one_page = BS % TILE == 0;
        long long at0 = 0;
        if (one_page && t0 < end) {
            const int rel = t0 - first_page * BS;
            at0 = pages[rel / BS] * page_stride + ((long long)(rel % BS) * HKV + h) * DD + c * 8;
        }
        constexpr int UNROLL = DS == 1 ? TILE / RPP : 2;
#pragma unroll UNROLL
        for (int k = 0; k < TILE / DS / RPP; ++k) {
            const int r = half_d * (TILE / DS) + lane / CPR + RPP * k, t = t0 + r;
            __half* kd = kv_at(pw, stage, 0, r, c);
            __half* vd = kv_at(pw, stage, 1, r, c);
            if (t < end) {
                long long at = at0 + (long long)r * HKV * DD;
                if (!one_page) {
                    const int rel = t - first_page * BS;
                    at = pages[rel / BS] * page_stride + ((long long)(rel % BS) * HKV + h) * DD + c * 8;
                }
                asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(twin_smem(kd)), "l"(k_cache + at) : "memory");
                asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(twin_smem(vd)), "l"(v_cache + at) : "memory");
            } else {
                *reinterpret_cast<int4*>(kd) = make_int4(0, 0, 0, 0);
                *reinterpret_cast<int4*>(vd) = make_int4(0, 0, 0, 0);
            }
        }
    };
    float m = -INFINITY, l = 0.f, acc[DTILES][2];
#pragma unroll
    for (int j = 0; j < DTILES; ++j) acc[j][0] = acc[j][1] = 0.f;
#pragma unroll
    for (int s = 0; s < ST - 1; ++s) {
        if (s < niter) issue(s);
        asm volatile("cp.async.commit_group;" ::: "memory");
    }
    for (int it = 0; it < niter; ++it) {
        if (it + ST - 1 < niter) issue(it + ST - 1);
        asm volatile("cp.async.commit_group;" ::: "memory");
        asm volatile("cp.async.wait_group %0;" ::"n"(ST - 1) : "memory");
        sync();
        const int stage = it % ST, t0 = start + (it * PAIRS + pw) * TILE;
        float s0[2] = {0.f, 0.f}, s1[2] = {0.f, 0.f};
        {
            const int mi = lane / 8, r = mi / 2 * 8 + lane % 8;
            unsigned qf[4];
#pragma unroll
            for (int kk = 0; kk < KSTEPS; ++kk) {
                unsigned f[4], a0, a2;
                twin_ldsm(twin_smem(kv_at(pw, stage, 0, r, 2 * kk + mi % 2)), f, false);
                if constexpr (Q_SHARED) {
                    const int qc = 4 * (kk / 2) + lane / 8, qr = lane % 8;
                    if (kk % 2 == 0) twin_ldsm(twin_smem(&qs[qr * DD + (qc ^ qr) * 8]), qf, false);
                    a0 = qf[kk % 2 * 2];
                    a2 = qf[kk % 2 * 2 + 1];
                } else {
                    a0 = qa[kk][0];
                    a2 = qa[kk][1];
                }
                twin_mma(a0, a2, f[0], f[1], s0[0], s0[1]);
                twin_mma(a0, a2, f[2], f[3], s1[0], s1[1]);
            }
        }
        float sc[4] = {s0[0], s0[1], s1[0], s1[1]}, mx = m;
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            sc[i] = t0 + 8 * (i / 2) + 2 * t4 + i % 2 < end ? sc[i] * scale_log2 : -INFINITY;
            mx = fmaxf(mx, sc[i]);
        }
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
        const float base = mx == -INFINITY ? 0.f : mx;
        const float corr = twin_ex2(m - base);
        m = mx;
        l *= corr;
        float p[4];
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            p[i] = twin_ex2(sc[i] - base);
            l += p[i];
        }
#pragma unroll
        for (int j = 0; j < DTILES; ++j) {
            acc[j][0] *= corr;
            acc[j][1] *= corr;
        }
        const unsigned pa0 = twin_pack(p[0], p[1]), pa2 = twin_pack(p[2], p[3]);
        {
            const int mi = lane / 8, r = mi % 2 * 8 + lane % 8;
#pragma unroll
            for (int j = 0; j < DTILES; j += 2) {
                unsigned f[4];
                twin_ldsm(twin_smem(kv_at(pw, stage, 1, r, half_d * (DH / 8) + j + mi / 2)), f, true);
                twin_mma(pa0, pa2, f[0], f[1], acc[j][0], acc[j][1]);
                twin_mma(pa0, pa2, f[2], f[3], acc[j + 1][0], acc[j + 1][1]);
            }
        }
        sync();
    }
    asm volatile("cp.async.wait_group 0;" ::: "memory");
    l += __shfl_xor_sync(0xffffffffu, l, 1);
    l += __shfl_xor_sync(0xffffffffu, l, 2);
#pragma unroll
    for (int half = PAIRS / 2; half >= 1; half /= 2) {
        if (pw >= half && pw < 2 * half) {
            const int sl = pw - half;
            if (t4 == 0 && half_d == 0) {
                red_ml[(0 * 2 + sl) * 8 + gid] = m;
                red_ml[(1 * 2 + sl) * 8 + gid] = l;
            }
// [slot, pair of n-tiles, lane, 4]: a warp's 16-byte stores fill 512 contiguous bytes.
#pragma unroll
            for (int j = 0; j < DTILES; j += 2) {
                *reinterpret_cast<float4*>(&red_o[((sl * (DD / 16) + half_d * DTILES / 2 + j / 2) * 32 + lane) * 4]) =
                    make_float4(acc[j][0], acc[j][1], acc[j + 1][0], acc[j + 1][1]);
            }
        }
        __syncthreads();
        if (pw < half) {
            const float mo = red_ml[(0 * 2 + pw) * 8 + gid], lo = red_ml[(1 * 2 + pw) * 8 + gid];
            const float mm = fmaxf(m, mo), base = mm == -INFINITY ? 0.f : mm;
            const float wa = twin_ex2(m - base), wb = twin_ex2(mo - base);
            m = mm;
            l = l * wa + lo * wb;
#pragma unroll
            for (int j = 0; j < DTILES; j += 2) {
                const float4 o = *reinterpret_cast<const float4*>(&red_o[((pw * (DD / 16) + half_d * DTILES / 2 + j / 2) * 32 + lane) * 4]);
                acc[j][0] = acc[j][0] * wa + o.x * wb;
                acc[j][1] = acc[j][1] * wa + o.y * wb;
                acc[j + 1][0] = acc[j + 1][0] * wa + o.z * wb;
                acc[j + 1][1] = acc[j + 1][1] * wa + o.w * wb;
            }
        }
        __syncthreads();
    }
    if (pw == 0 && gid < gn) {
        const long long row_at = ((long long)b * HQ + h * G + g0 + gid) * NPART + part;
        const float inv = 1.f / l;
#pragma unroll
        for (int j = 0; j < DTILES; ++j) {
            part_o[row_at * DD + half_d * DH + 8 * j + 2 * t4] = acc[j][0] * inv;
            part_o[row_at * DD + half_d * DH + 8 * j + 2 * t4 + 1] = acc[j][1] * inv;
        }
        if (t4 == 0 && half_d == 0) part_lse[row_at] = m + __log2f(l);
    }
    const int parts = (len + TWIN_PART - 1) / TWIN_PART;
    __syncthreads();
    bool last = false;
    int arrived;
    const long long counter = (long long)b * HQ + h * G + g0;
    if (threadIdx.x == 0) {
        asm volatile("atom.add.acq_rel.gpu.global.s32 %0, [%1], 1;" : "=r"(arrived) : "l"(&arrivals[counter]) : "memory");
        last = arrived == parts - 1;
    }
    if (!__syncthreads_or(last)) return;
    constexpr int CHUNKS = DD / 8;
    for (int i = threadIdx.x; i < gn * CHUNKS; i += 128) {
        const long long row = (long long)b * HQ + h * G + g0 + i / CHUNKS;
        const int d = i % CHUNKS * 8;
        // One pass, the running maximum rescaling the sums (the spec's weighing).
        float mx = -INFINITY, sum = 0.f, o[8] = {};
#pragma unroll 4
        for (int p = 0; p < parts; ++p) {
            const float lse = part_lse[row * NPART + p], mm = fmaxf(mx, lse);
            const float corr = exp2f(mx - mm), w = exp2f(lse - mm);
            const float4 lo = *reinterpret_cast<const float4*>(&part_o[(row * NPART + p) * DD + d]);
            const float4 hi = *reinterpret_cast<const float4*>(&part_o[(row * NPART + p) * DD + d + 4]);
            mx = mm;
            sum = sum * corr + w;
            o[0] = o[0] * corr + w * lo.x; o[1] = o[1] * corr + w * lo.y; o[2] = o[2] * corr + w * lo.z; o[3] = o[3] * corr + w * lo.w;
            o[4] = o[4] * corr + w * hi.x; o[5] = o[5] * corr + w * hi.y; o[6] = o[6] * corr + w * hi.z; o[7] = o[7] * corr + w * hi.w;
        }
        __align__(16) __half r[8];
#pragma unroll
        for (int j = 0; j < 8; ++j) r[j] = __float2half(o[j] / sum);
        *reinterpret_cast<uint4*>(&out[row * DD + d]) = *reinterpret_cast<const uint4*>(r);
    }
    if (threadIdx.x == 0) arrivals[counter] = 0;
}

// 16-byte multiples, as the generated code places shared arrays.
__device__ __forceinline__ int twin_pad16(int bytes) { return (bytes + 15) / 16 * 16; }

extern "C" __global__ void __launch_bounds__(128, 3) twin_paged_attn(
        const __half* __restrict__ q, const __half* __restrict__ k_cache, const __half* __restrict__ v_cache,
        const int* __restrict__ block_tables, const int* __restrict__ seq_lens, float* __restrict__ part_o,
        float* __restrict__ part_lse, int* __restrict__ arrivals, __half* __restrict__ out, int HQ, int HKV,
        int D, int BS, int P, float scale) {
    extern __shared__ __align__(16) unsigned char twin_smem_base[];
    unsigned char* at = twin_smem_base;
    __half* kv = reinterpret_cast<__half*>(at);
    at += twin_pad16(4 * 2 * 2 * 16 * D * 2);
    __half* qs = reinterpret_cast<__half*>(at);
    at += twin_pad16(8 * D * 2);
    float* red_o = reinterpret_cast<float*>(at);
    at += twin_pad16(2 * 8 * D * 4);
    float* red_ml = reinterpret_cast<float*>(at);
    at += twin_pad16(2 * 2 * 8 * 4);
    int* pages = reinterpret_cast<int*>(at);
    const int NPART = (P * BS + TWIN_PART - 1) / TWIN_PART;
    const int part = blockIdx.x, b = blockIdx.z;
    const int G = HQ / HKV, chunks_of_g = (G + 7) / 8;
    const int h = blockIdx.y / chunks_of_g, g0 = blockIdx.y % chunks_of_g * 8;
    const int gn = min(8, G - g0);
    const int len = seq_lens[b];
    const int start = part * TWIN_PART;
    if (start >= len) {
        if (part == 0) {
            for (int i = threadIdx.x; i < gn * D; i += 128) out[((long long)b * HQ + h * G + g0 + i / D) * D + i % D] = __float2half(0.f);
        }
        return;
    }
    const int end = min(start + TWIN_PART, len);
    const int first_page = start / BS, npages = (end - 1) / BS - first_page + 1;
    for (int j = threadIdx.x; j < npages; j += 128) pages[j] = block_tables[b * P + first_page + j];
    __syncthreads();
#define TWIN_ATTEND(DD)                                                                                    \
    twin_attend<DD>(q, k_cache, v_cache, part_o, part_lse, arrivals, out, len, pages, kv, qs, red_o, red_ml, b, h, G, g0, gn, \
                    part, start, end, first_page, HQ, HKV, BS, NPART, scale)
    if (D == 64) {
        TWIN_ATTEND(64);
    } else if (D == 128) {
        TWIN_ATTEND(128);
    } else {
        TWIN_ATTEND(256);
    }
#undef TWIN_ATTEND
}
