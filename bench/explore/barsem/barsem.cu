// Throwaway (session 60): does a named barrier of 32 + 128 k threads, met by warp 1 with
// bar.sync and by k consumer warpgroups with bar.arrive, hold warp 1 until the consumers
// arrive, in a block shaped as ima_wg_w4_pairs_gemm's (512 threads, setmaxnreg, the
// producer warpgroup's other warps exiting early)? wgstamp's call 9 at 7bb01dc put warp 1's
// pass 6 µs before the consumers' slots, its timer read right after the barrier. Prints, per
// form, how often warp 1 read a consumer's arrival time unwritten after the barrier (an early
// pass), and the spread of (warp 1's timer - the last consumer's arrival), ns.
//   on the GPU machine: nvcc -gencode arch=compute_90a,code=sm_90a -O3 -o /tmp/barsem barsem.cu && /tmp/barsem
#include <cstdio>
#include <cuda_runtime.h>

// A consumer's arrival time not yet written where warp 1 read it after the barrier: the
// barrier let warp 1 through early (what matters for the slots' order, whatever the timer).
constexpr long long UNSEEN = -(1LL << 40);

__device__ __forceinline__ long long now() {
    long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
__device__ __forceinline__ void spin(long long ns) {
    const long long t0 = now();
    while (now() - t0 < ns) {}
}

// form 0: one barrier of 416 for three warpgroups; 1: one of 160 per warpgroup (6 + wg);
// 2: form 0 without setmaxnreg and with no early exits; 3: form 0 with the timer read
// right after the barrier, before the shared loads.
__global__ void __launch_bounds__(512, 1) kernel(int form, long long* out) {
    __shared__ long long arrived[3];
    const int warp = threadIdx.x / 32, wg = threadIdx.x / 128 - 1;
    if (threadIdx.x < 3) arrived[threadIdx.x] = 0;
    __syncthreads();
    if (wg < 0) {
        if (form != 2) asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
        if (warp == 0) {
            if (form != 2 && threadIdx.x != 0) return;
            spin(3000);
            return;
        }
        if (warp >= 2) {
            spin(2000);
            return;
        }
        if (form == 1) {
            for (int w = 0; w < 3; ++w) {
                asm volatile("bar.sync %0, 160;" ::"r"(6 + w) : "memory");
                // The shared load first: a timer read right after BAR.SYNC.DEFER_BLOCKING
                // may issue before the warp blocks (form 3 reads it so).
                const long long a = *(volatile long long*)&arrived[w];
                const long long t = now();
                if (threadIdx.x % 32 == 0) out[blockIdx.x * 3 + w] = a == 0 ? UNSEEN : t - a;
            }
        } else {
            asm volatile("bar.sync 6, 416;" ::: "memory");
            long long last = 0;
            const long long early = now();
            bool unseen = false;
            for (int w = 0; w < 3; ++w) {
                const long long a = *(volatile long long*)&arrived[w];
                unseen |= a == 0;
                last = a > last ? a : last;
            }
            const long long t = form == 3 ? early : now();
            if (unseen) last = t - UNSEEN;
            if (threadIdx.x % 32 == 0) {
                out[blockIdx.x * 3] = t - last;
                out[blockIdx.x * 3 + 1] = t - last;
                out[blockIdx.x * 3 + 2] = t - last;
            }
        }
        return;
    }
    if (form != 2) asm volatile("setmaxnreg.inc.sync.aligned.u32 152;");
    // Each consumer warpgroup arrives after its own delay (5, 7, 9 µs).
    spin(5000 + 2000 * wg);
    __syncwarp();
    if (threadIdx.x % 128 == 0) {
        arrived[wg] = now();
        __threadfence_block();
    }
    asm volatile("bar.sync %0, 128;" ::"r"(1 + wg) : "memory");
    if (form == 1) asm volatile("bar.arrive %0, 160;" ::"r"(6 + wg) : "memory");
    else asm volatile("bar.arrive 6, 416;" ::: "memory");
    spin(1000);
}

int main() {
    const int blocks = 132;
    long long* out;
    cudaMalloc(&out, blocks * 3 * sizeof(long long));
    long long host[blocks * 3];
    for (int form = 0; form < 4; ++form) {
        kernel<<<blocks, 512>>>(form, out);
        const cudaError_t e = cudaDeviceSynchronize();
        cudaMemcpy(host, out, sizeof host, cudaMemcpyDeviceToHost);
        long long lo = 1LL << 60, hi = -(1LL << 60);
        int unseen = 0;
        for (long long v : host) {
            if (v == UNSEEN) {
                ++unseen;
                continue;
            }
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
        }
        printf("form %d (%s): an arrival unseen after the barrier in %d of %d; warp 1's timer - the consumers' arrival, ns: min %lld max %lld\n",
               form, cudaGetErrorString(e), unseen, blocks * 3, lo, hi);
    }
    return 0;
}
