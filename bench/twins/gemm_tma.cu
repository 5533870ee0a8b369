// The twin of specs/gemm_tma.ima's gemm_tma_f16 and gemm_tma_bf16: the same algorithm,
// written by hand without ima.cuh or any accessor. C = A B with A row-major [M, K], B
// row-major [K, N], f32 accumulation, f16 or bf16 out, in the structure of
// pranjalssh/fast.cu's kernel 4 (H100: 635 TFLOP/s at 8192^3): a block of three
// warpgroups, the first the producer (one thread issues the TMA copies of a stage and arms
// its "full" barrier with the bytes), the two others consumers of 64 rows each by 256
// columns (one m64n256k16 a 16-deep k step, 128 f32 accumulators a thread), 4 stages of A
// (128 x 64) and B (64 x 256, four 64 x 64 boxes) in 128-byte-swizzled shared memory. A is
// K-major (tnspA = 0); B, row-major, is N-major (tnspB = 1): its descriptor's leading byte
// offset steps between 64-column chunks (8 KB) and its stride byte offset between 8-row
// groups of K (1024 bytes); a k16 step moves 16 rows of K, 2048 bytes. The bench encodes
// the tensor maps (examples/bench.rs) and compiles this for sm_90a. Its stores are
// unmasked: the bench's shapes are multiples of the tiles.

#include <cuda_bf16.h>
#include <cuda_fp16.h>

// NVRTC has no cuda.h: the tensor map is 128 opaque bytes, 64-byte aligned.
struct alignas(64) CUtensorMap {
    unsigned long long opaque[16];
};

constexpr int BM = 128, BN = 256, BK = 64, STAGES = 4;
constexpr int A_BYTES = BM * BK * 2, B_BYTES = BK * BN * 2, STAGE_BYTES = A_BYTES + B_BYTES;

__device__ __forceinline__ unsigned smem_u32(const void* p) { return unsigned(__cvta_generic_to_shared(p)); }

// The 64-bit shared-memory matrix descriptor of wgmma (PTX ISA 9.7.15.5.1.2.2): start
// address, leading and stride byte offsets (each >> 4, 14 bits), 128-byte swizzle (1 << 62).
__device__ __forceinline__ unsigned long long desc_encode(unsigned long long x) { return (x & 0x3FFFF) >> 4; }
__device__ __forceinline__ unsigned long long smem_desc(unsigned addr, unsigned lbo, unsigned sbo) {
    return desc_encode(addr) | desc_encode(lbo) << 16 | desc_encode(sbo) << 32 | 1ull << 62;
}

__device__ __forceinline__ void mbar_init(unsigned bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count));
}
__device__ __forceinline__ void mbar_expect_tx(unsigned bar, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_arrive(unsigned bar) {
    asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}
// Until the phase of parity `parity` of the barrier has completed.
__device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity) {
    asm volatile(
        "{\n"
        ".reg .pred P1;\n"
        "WAIT:\n"
        "mbarrier.try_wait.parity.shared::cta.b64 P1, [%0], %1;\n"
        "@P1 bra.uni DONE;\n"
        "bra.uni WAIT;\n"
        "DONE:\n"
        "}\n" ::"r"(bar),
        "r"(parity)
        : "memory");
}
// A 2-D box of the tensor map at (c0 innermost, c1) into shared memory, completing bytes on
// the barrier.
__device__ __forceinline__ void tma_load_2d(unsigned dst, const CUtensorMap* map, unsigned bar, int c0, int c1) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];" ::"r"(dst),
        "l"(reinterpret_cast<unsigned long long>(map)), "r"(bar), "r"(c0), "r"(c1)
        : "memory");
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wgmma_wait0() { asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory"); }

// d += A B for one m64n256k16 step, A K-major and B N-major, both in shared memory; the
// element type's instruction.
#define TWIN_D128 "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
#define TWIN_WGMMA(TY)                                                                                      \
    asm volatile("{\n"                                                                                     \
                 "wgmma.mma_async.sync.aligned.m64n256k16.f32." TY "." TY " " "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, %128, %129, 1, 1, 1, 0, 1;\n" \
                 "}\n"                                                                                     \
                 : TWIN_D128                                                                               \
                 : "l"(da), "l"(db))
template <typename T>
__device__ __forceinline__ void wgmma_m64n256k16(float (&d)[128], unsigned long long da, unsigned long long db);
template <>
__device__ __forceinline__ void wgmma_m64n256k16<__nv_bfloat16>(float (&d)[128], unsigned long long da,
                                                                unsigned long long db) {
    TWIN_WGMMA("bf16");
}
template <>
__device__ __forceinline__ void wgmma_m64n256k16<__half>(float (&d)[128], unsigned long long da, unsigned long long db) {
    TWIN_WGMMA("f16");
}

template <typename T>
__device__ __forceinline__ void gemm_tma(const CUtensorMap& tm_a, const CUtensorMap& tm_b, T* __restrict__ c, int M,
                                         int N, int K) {
    extern __shared__ __align__(1024) unsigned char smem_raw[];
    // The 128-byte swizzle repeats every 1024 bytes: the stages start on such a boundary.
    const unsigned base = (smem_u32(smem_raw) + 1023) & ~1023u;
    const unsigned full = base + STAGES * STAGE_BYTES, empty = full + 8 * STAGES;
    const int wg = threadIdx.x / 128, tid = threadIdx.x % 128;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN, kb = (K + BK - 1) / BK;
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(full + 8 * s, 1);
            mbar_init(empty + 8 * s, 2);
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    if (wg == 0) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
        if (tid == 0) {
            for (int t = 0; t < kb; ++t) {
                const int s = t % STAGES;
                // Round t / STAGES of stage s: the consumers freed it (round 0: at once).
                if (t >= STAGES) mbar_wait(empty + 8 * s, (t / STAGES - 1) & 1);
                const unsigned a = base + s * STAGE_BYTES, b = a + A_BYTES;
                mbar_expect_tx(full + 8 * s, STAGE_BYTES);
                tma_load_2d(a, &tm_a, full + 8 * s, t * BK, m0);
#pragma unroll
                for (int j = 0; j < BN / 64; ++j) tma_load_2d(b + j * 64 * 64 * 2, &tm_b, full + 8 * s, n0 + 64 * j, t * BK);
            }
        }
        return;
    }
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
    const int cw = wg - 1;  // consumer: rows 64 cw .. 64 cw + 63 of the block's tile
    float d[128];
#pragma unroll
    for (int i = 0; i < 128; ++i) d[i] = 0.f;
    for (int t = 0; t < kb; ++t) {
        const int s = t % STAGES;
        mbar_wait(full + 8 * s, (t / STAGES) & 1);
        const unsigned a = base + s * STAGE_BYTES + cw * 64 * 128, b = base + s * STAGE_BYTES + A_BYTES;
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BK / 16; ++kk)
            wgmma_m64n256k16<T>(d, smem_desc(a + 32 * kk, 16, 1024), smem_desc(b + 2048 * kk, 64 * 64 * 2, 1024));
        wgmma_commit();
        wgmma_wait0();
        if (tid == 0) mbar_arrive(empty + 8 * s);
    }
    // Thread (warp w, lane l) of the consumer holds rows 16 w + l / 4 (+ 8) and column pairs
    // 8 j + 2 (l % 4) of the 64 x 256 tile: d[4 j .. 4 j + 3] = (r, c), (r, c + 1),
    // (r + 8, c), (r + 8, c + 1). Lanes l and l ^ 1 swap halves of tiles j and j + 1 first,
    // so that each lane stores 4 consecutive columns as one 8-byte access (as the spec's
    // `store_acc` does, without its masks).
    const int w = tid / 32, l = tid % 32, odd = l & 1;
#pragma unroll
    for (int j = 0; j < 32; j += 2) {
        const int col = n0 + 8 * j + (odd ? 8 + 2 * (l % 4) - 2 : 2 * (l % 4));
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            // Tile j's pair (a0, a1) and tile j + 1's (b0, b1), by constant index, so that the
            // accumulators stay registers.
            const float a0 = d[4 * j + 2 * h], a1 = d[4 * j + 2 * h + 1];
            const float b0 = d[4 * j + 4 + 2 * h], b1 = d[4 * j + 4 + 2 * h + 1];
            const float s0 = odd ? a0 : b0, s1 = odd ? a1 : b1;
            const float r0 = __shfl_xor_sync(0xffffffffu, s0, 1), r1 = __shfl_xor_sync(0xffffffffu, s1, 1);
            const T v[4] = {T(odd ? r0 : a0), T(odd ? r1 : a1), T(odd ? b0 : r0), T(odd ? b1 : r1)};
            const int row = m0 + 64 * cw + 16 * w + l / 4 + 8 * h;
            uint2 packed;
            memcpy(&packed, v, 8);
            *reinterpret_cast<uint2*>(c + (long long)row * N + col) = packed;
        }
    }
}

extern "C" __global__ void __launch_bounds__(384, 1)
    twin_gemm_tma_bf16(const __grid_constant__ CUtensorMap tm_a, const __grid_constant__ CUtensorMap tm_b,
                       __nv_bfloat16* __restrict__ c, int M, int N, int K) {
    gemm_tma(tm_a, tm_b, c, M, N, K);
}
extern "C" __global__ void __launch_bounds__(384, 1)
    twin_gemm_tma_f16(const __grid_constant__ CUtensorMap tm_a, const __grid_constant__ CUtensorMap tm_b,
                      __half* __restrict__ c, int M, int N, int K) {
    gemm_tma(tm_a, tm_b, c, M, N, K);
}
