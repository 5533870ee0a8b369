// Throwaway: what a gpu-scope release costs on an SM that streams, and how long a signal
// takes from one SM to another while every SM streams (issue 22's B = 1 megakernel).
//
// bench/explore/mega's form 19 (a ring of tensor-map copies ahead of the layer's phases,
// a signalling warp counting consumed units with `red.release.gpu`) ran 47.2 us a layer
// against 37.8 with relaxed counts (form 28) and 34.0 with no counts (17): the releases
// cost 9.4 us, and a count was seen about 3 us after the last block issued it (form 23).
// Two explanations fit: the release's fence waits for the copies the SM has in flight
// (up to 8 slots of 16 KB, about 4 us of an SM's share of DRAM), or a signal's trip
// through a loaded memory system is slow whatever the fence. This separates them.
//
// One block an SM (132), each: warp 0 a producer streaming a 512 MB buffer through a
// ring of SLOTS x 16 KB of shared memory by 1-D `cp.async.bulk` (mode "tma"), or four
// consumer warps streaming it themselves by 16-byte `ld.global.nc`, 4 in flight a lane
// (mode "ldg"), or nothing (mode "idle"); warps 1-4 consume the ring's slots; warp 5's
// lane 0 times OP, R times, 1 us apart, once the stream runs (clock64 around the op):
//   0 nothing            1 fence.acq_rel.gpu      2 red.release.gpu (after a store)
//   3 red.relaxed.gpu    4 fence.sc.gpu           5 st.release.gpu (after a store)
//   6 fence.acq_rel.cta
//   7 ping-pong between blocks 0 and 66 (other SMs' signallers idle): block 0 stores a
//     flag relaxed and waits for block 66's answer, relaxed both ways; one sample is the
//     round trip
//   8 as 7 with st.release / ld.acquire
//   9 fence.acq_rel.cluster (each block its own cluster here): whether a cluster-scope
//     fence waits for the copies too (a design whose gpu-scope releases come only from
//     SMs that do not stream would pass the others' outputs at cluster scope)
// Streams: idle; "tma" with 2 to 12 slots; "ldg" with 4 or 8 loads in flight a lane; "pair":
// two blocks an SM (96 KB each), the first to start on an SM streaming by tma, the other
// timing (does a fence wait for the SM's copies or only for its own block's?); "cp.async"
// with 4 or 8 slots' groups in flight, copied by the consumers' threads.
// Prints, per mode and op, the median and the 10th and 90th percentiles over blocks and
// samples in ns (cycles over the block's own clock rate), and the stream's rate.
//
// Build here (scripts/cuda-env):
//   source scripts/cuda-env && nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a \
//     -L"$IMA_CUDA_ROOT/lib" -o bench/explore/fence/fence bench/explore/fence/fence.cu
// Run there with the (git-ignored) binary carried: bench/explore/fence/fence
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include "../graph_time.cuh"
#include "../tma_ring.cuh"

constexpr int SLOT = 16384, MAX_SLOTS = 12, CONSUMERS = 4, THREADS = 32 * (CONSUMERS + 2);
constexpr int R = 48, ITERS = 1536;  // a block's slots a launch: ~0.7 ms of streaming
constexpr long long BUF = 512ll << 20;
enum Mode { IDLE, TMA, LDG, PAIR, CPA };

// The same bytes a block as the ring's ITERS slots, read by the consumers' 128 threads,
// N 16-byte loads in flight a lane (a slot is 8 a thread).
template <int N>
__device__ unsigned ldg_stream(const int4* __restrict__ buf, int t) {
    const long long chunks = BUF / SLOT;
    unsigned acc = 0;
    for (int it = 0; it < ITERS; ++it) {
        const int4* p = buf + (blockIdx.x + (long long)it * gridDim.x) % chunks * (SLOT / 16);
#pragma unroll
        for (int k = 0; k < 8; k += N) {
            int4 v[N];
#pragma unroll
            for (int j = 0; j < N; ++j)
                asm volatile("ld.global.nc.v4.s32 {%0,%1,%2,%3}, [%4];"
                             : "=r"(v[j].x), "=r"(v[j].y), "=r"(v[j].z), "=r"(v[j].w)
                             : "l"(p + (k + j) * 32 * CONSUMERS + t));
#pragma unroll
            for (int j = 0; j < N; ++j) acc += v[j].x ^ v[j].w;
        }
    }
    return acc;
}

// The same by 16-byte `cp.async` from the consumers' threads into the ring (Marlin's way),
// S slots' groups in flight; each thread reads back a word of its own copies.
template <int S>
__device__ unsigned cpa_stream(const int4* __restrict__ buf, int t, unsigned char* ring) {
    const long long chunks = BUF / SLOT;
    unsigned acc = 0;
    for (int it = 0; it < ITERS + S - 1; ++it) {
        if (it < ITERS) {
            const int4* p = buf + (blockIdx.x + (long long)it * gridDim.x) % chunks * (SLOT / 16);
            unsigned char* slot = ring + (it % S) * SLOT;
#pragma unroll
            for (int j = 0; j < 8; ++j)
                asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(smem_u32(slot + (j * 32 * CONSUMERS + t) * 16)),
                             "l"(p + j * 32 * CONSUMERS + t)
                             : "memory");
        }
        asm volatile("cp.async.commit_group;" ::: "memory");
        asm volatile("cp.async.wait_group %0;" ::"n"(S - 1) : "memory");
        const int done = it - (S - 1);
        if (done >= 0) acc += reinterpret_cast<const unsigned*>(ring + (done % S) * SLOT)[t * 4];
    }
    return acc;
}

__device__ __forceinline__ unsigned long long gtimer() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t));
    return t;
}

__device__ __forceinline__ void bulk_load(unsigned dst, const void* src, unsigned bytes, unsigned bar) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(dst),
                 "l"(src), "r"(bytes), "r"(bar)
                 : "memory");
}

__device__ __forceinline__ void op_once(int op, unsigned* counter, int r) {
    switch (op) {
        case 1: asm volatile("fence.acq_rel.gpu;" ::: "memory"); break;
        case 2:
            asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(counter) : "memory");
            break;
        case 3: asm volatile("red.relaxed.gpu.global.add.u32 [%0], 1;" ::"l"(counter) : "memory"); break;
        case 4: asm volatile("fence.sc.gpu;" ::: "memory"); break;
        case 5: asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(counter), "r"(r) : "memory"); break;
        case 6: asm volatile("fence.acq_rel.cta;" ::: "memory"); break;
        case 9: asm volatile("fence.acq_rel.cluster;" ::: "memory"); break;
        default: break;
    }
}

__device__ __forceinline__ unsigned ld_flag(const unsigned* p, bool acquire) {
    unsigned v;
    if (acquire) asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    else asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ void st_flag(unsigned* p, unsigned v, bool release) {
    if (release) asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
    else asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

__global__ void __launch_bounds__(THREADS, 1)
    probe(const int4* __restrict__ buf, int mode, int slots, int op, unsigned* counters, unsigned* flags,
          unsigned* data, long long* cycles, double* ghz, unsigned* sink, unsigned* roles) {
    extern __shared__ __align__(128) unsigned char ring[];
    __shared__ unsigned role_word;
    __shared__ __align__(8) unsigned long long full[MAX_SLOTS], empty[MAX_SLOTS];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const long long chunks = BUF / SLOT;
    if (threadIdx.x == 0) {
        for (int s = 0; s < MAX_SLOTS; ++s) {
            mbar_init(smem_u32(&full[s]), 1);
            mbar_init(smem_u32(&empty[s]), CONSUMERS);
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        // PAIR: two blocks an SM, the first to arrive streams (as TMA), the other times.
        unsigned smid;
        asm volatile("mov.u32 %0, %smid;" : "=r"(smid));
        role_word = mode == PAIR ? atomicAdd(roles + smid, 1) : 1;
    }
    __syncthreads();
    // The timing blocks number themselves: ping-pong runs between timer 0 and timer tcount / 2.
    const unsigned tcount = mode == PAIR ? gridDim.x / 2 : gridDim.x;
    const bool streams = role_word == 0;
    if (mode == PAIR) mode = streams ? TMA : IDLE;
    __shared__ unsigned timer;
    if (threadIdx.x == 0) timer = role_word == 1 ? atomicAdd(roles + 1024, 1) : ~0u;
    __syncthreads();
    unsigned acc = 0;
    if (mode == TMA && warp == 0 && lane == 0) {
        for (int it = 0; it < ITERS; ++it) {
            int s = it % slots;
            if (it >= slots) mbar_wait(smem_u32(&empty[s]), ((it / slots) - 1) & 1);
            mbar_expect_tx(smem_u32(&full[s]), SLOT);
            long long c = (blockIdx.x + (long long)it * gridDim.x) % chunks;
            bulk_load(smem_u32(ring + s * SLOT), reinterpret_cast<const char*>(buf) + c * SLOT, SLOT,
                      smem_u32(&full[s]));
        }
    } else if (mode == TMA && warp >= 1 && warp <= CONSUMERS) {
        for (int it = 0; it < ITERS; ++it) {
            int s = it % slots;
            mbar_wait(smem_u32(&full[s]), (it / slots) & 1);
            acc += reinterpret_cast<const unsigned*>(ring + s * SLOT)[threadIdx.x];
            __syncwarp();
            if (lane == 0) mbar_arrive(smem_u32(&empty[s]));
        }
    } else if (mode == LDG && warp >= 1 && warp <= CONSUMERS) {
        acc = slots == 8 ? ldg_stream<8>(buf, threadIdx.x - 32) : ldg_stream<4>(buf, threadIdx.x - 32);
    } else if (mode == CPA && warp >= 1 && warp <= CONSUMERS) {
        acc = slots == 8 ? cpa_stream<8>(buf, threadIdx.x - 32, ring) : cpa_stream<4>(buf, threadIdx.x - 32, ring);
    } else if (warp == CONSUMERS + 1 && lane == 0 && timer != ~0u) {
        __nanosleep(20000);  // the stream runs by now
        long long* out = cycles + (long long)timer * R;
        unsigned long long g0 = gtimer();
        long long c0 = clock64();
        bool pingpong = op == 7 || op == 8, strong = op == 8;
        for (int r = 0; r < R; ++r) {
            long long t0 = 0, t1 = 0;
            if (pingpong) {
                if (timer == 0) {
                    t0 = clock64();
                    st_flag(flags, r + 1, strong);
                    while (ld_flag(flags + 32, strong) != unsigned(r + 1)) {
                    }
                    t1 = clock64();
                } else if (timer == tcount / 2) {
                    while (ld_flag(flags, strong) != unsigned(r + 1)) {
                    }
                    st_flag(flags + 32, r + 1, strong);
                }
            } else {
                data[timer * 32] = r;  // an output the release must order
                t0 = clock64();
                op_once(op, counters + timer * 32, r);
                t1 = clock64();
            }
            out[r] = t1 - t0;
            __nanosleep(1000);
        }
        long long c1 = clock64();
        unsigned long long g1 = gtimer();
        ghz[timer] = double(c1 - c0) / double(g1 - g0);
    }
    if (acc == 0x9e3779b9u) sink[0] = acc;  // keeps the consumers' reads
}

int main(int argc, char** argv) {
    int4* buf;
    CHECK(cudaMalloc(&buf, BUF));
    CHECK(cudaMemset(buf, 1, BUF));
    int sms;
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    unsigned *counters, *flags, *data, *sink, *roles;
    CHECK(cudaMalloc(&roles, 2048 * 4));
    long long* cycles;
    double* ghz;
    CHECK(cudaMalloc(&counters, sms * 32 * 4));
    CHECK(cudaMalloc(&flags, 64 * 4));
    CHECK(cudaMalloc(&data, sms * 32 * 4));
    CHECK(cudaMalloc(&sink, 4));
    CHECK(cudaMalloc(&cycles, sms * R * 8));
    CHECK(cudaMalloc(&ghz, sms * 8));
    const int smem = MAX_SLOTS * SLOT;  // the same occupancy (one block an SM) in every mode
    CHECK(cudaFuncSetAttribute(probe, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    struct Run {
        const char* name;
        int mode, slots;
    } runs[] = {{"idle", IDLE, 1}, {"tma, 2 slots", TMA, 2},   {"tma, 4 slots", TMA, 4},
                {"tma, 8 slots", TMA, 8}, {"tma, 12 slots", TMA, 12}, {"ldg, 4 in flight a lane", LDG, 4},
                {"ldg, 8 in flight a lane", LDG, 8},
                {"cp.async from 128 threads, 4 slots", CPA, 4},
                {"cp.async from 128 threads, 8 slots", CPA, 8},
                {"tma, 4 slots in another block of the SM", PAIR, 4},
                {"tma, 6 slots in another block of the SM", PAIR, 6}};
    const char* ops[] = {"nothing",          "fence.acq_rel.gpu", "red.release.gpu", "red.relaxed.gpu",
                         "fence.sc.gpu",     "st.release.gpu",    "fence.acq_rel.cta",
                         "ping-pong relaxed", "ping-pong release/acquire", "fence.acq_rel.cluster"};
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    std::printf("| stream | op | ns: median | p10 | p90 | max | SM GHz | stream TB/s |\n|---|---|---:|---:|---:|---:|---:|---:|\n");
    for (const Run& run : runs) {
        for (int op = 0; op < 10; ++op) {
            CHECK(cudaMemset(flags, 0, 64 * 4));
            CHECK(cudaMemset(cycles, 0, sms * R * 8));
            const bool pair = run.mode == PAIR;
            const int grid = pair ? 2 * sms : sms, bytes_smem = pair ? 6 * SLOT : smem;
            CHECK(cudaMemset(roles, 0, 2048 * 4));
            probe<<<grid, THREADS, bytes_smem>>>(buf, run.mode, run.slots, op, counters, flags, data, cycles, ghz, sink,
                                                 roles);
            CHECK(cudaGetLastError());
            CHECK(cudaDeviceSynchronize());
            CHECK(cudaMemset(roles, 0, 2048 * 4));
            CHECK(cudaEventRecord(e0));
            probe<<<grid, THREADS, bytes_smem>>>(buf, run.mode, run.slots, op, counters, flags, data, cycles, ghz, sink,
                                                 roles);
            CHECK(cudaEventRecord(e1));
            CHECK(cudaDeviceSynchronize());
            float ms;
            CHECK(cudaEventElapsedTime(&ms, e0, e1));
            std::vector<long long> c(sms * R);
            std::vector<double> g(sms);
            CHECK(cudaMemcpy(c.data(), cycles, c.size() * 8, cudaMemcpyDeviceToHost));
            CHECK(cudaMemcpy(g.data(), ghz, g.size() * 8, cudaMemcpyDeviceToHost));
            std::vector<double> ns;
            bool pingpong = op == 7 || op == 8;
            for (int b = 0; b < sms; ++b) {
                if (pingpong && b != 0) continue;
                for (int r = 2; r < R; ++r) ns.push_back(c[b * R + r] / g[b]);
            }
            std::sort(ns.begin(), ns.end());
            std::vector<double> gs = g;
            std::sort(gs.begin(), gs.end());
            double bytes = run.mode == IDLE ? 0 : double(ITERS) * SLOT * sms;  // PAIR: one streaming block an SM
            auto q = [&](double f) { return ns[std::min(ns.size() - 1, size_t(f * ns.size()))]; };
            std::printf("| %s | %s | %.0f | %.0f | %.0f | %.0f | %.2f | %.2f |\n", run.name, ops[op], q(0.5), q(0.1),
                        q(0.9), ns.back(), gs[sms / 2], bytes / (ms * 1e-3) / 1e12);
            std::fflush(stdout);
        }
    }
    return 0;
}
