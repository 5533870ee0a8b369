// Throwaway: does programmatic dependent launch (PDL) shorten a chain of launches shaped
// like the decode layer's at B = 1, if each kernel lets its dependents launch only when
// its main loop is done (the reverted attempt, 9833ecc, let them launch at the start of
// every block, and its waiting blocks could take the slots of later waves)?
//
// Eight kernels a "layer": three small ones (one block, as add_rms_norm and rope_cache at
// B = 1), one of 64 blocks reading 4 MB (paged_attn's KV), and four that only read int32
// matrices of the projections' shapes (QKV 512 x 6144, O 512 x 4096, gate/up 512 x 28672,
// down 1792 x 4096 words) in 32-column strips (bench/explore/stream's s8_u4_b2: no
// arithmetic, so the chain's time is memory and launch boundaries alone). Each kernel
// reads the activation vector the one before wrote, and writes its own. Four layers a
// CUDA graph (stream capture), each on its own copy of the weights (about 440 MB, so
// nothing stays in L2); µs a layer, median of 50 replays, for each mode:
//   0  plain launches
//   1  griddepcontrol.wait, then launch_dependents, at each block's start (9833ecc)
//   2  wait at the start, launch_dependents after the block's main loop
//   3  as 2, with the block's first weight loads issued before the wait (weights do not
//      depend on the kernel before)
//
// Build here (the pip CUDA wheels of scripts/cuda-env have a static CUDA runtime):
//   source scripts/cuda-env && nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a \
//     -L"$IMA_CUDA_ROOT/lib" -o bench/explore/pdl/pdl_chain bench/explore/pdl/pdl_chain.cu
// Run there, with the (git-ignored) binary carried: run with carry ["bench/explore/pdl/pdl_chain"]
// and the command bench/explore/pdl/pdl_chain.
// Written in session 20 and compiled, not yet run: the session had no device time left.
#include "../graph_time.cuh"

constexpr int ACT = 4096;  // activation vector: f32 words

__device__ __forceinline__ void pdl_wait() { asm volatile("griddepcontrol.wait;" ::: "memory"); }
__device__ __forceinline__ void pdl_trigger() { asm volatile("griddepcontrol.launch_dependents;" ::: "memory"); }

// One block: reads the activation and writes the next (a norm or RoPE at B = 1).
template <int MODE>
__global__ void __launch_bounds__(256) small(const float* __restrict__ in, float* __restrict__ out) {
    if (MODE != 0) pdl_wait();
    if (MODE == 1) pdl_trigger();
    float acc = 0.f;
    for (int i = threadIdx.x; i < ACT; i += 256) acc += in[i];
    __shared__ float red[256];
    red[threadIdx.x] = acc;
    __syncthreads();
    if (MODE >= 2) pdl_trigger();
    for (int i = threadIdx.x; i < ACT; i += 256) out[i] = in[i] + red[i % 256] * 1e-9f;
}

// 32-column strips of a rows x cols int32 matrix, 8 warps a block splitting the rows, 4
// 16-byte loads in flight a lane; the activation read after the wait, the sum written.
template <int MODE>
__global__ void __launch_bounds__(256, 2)
    strip(const int4* __restrict__ w, int rows, int cols4, const float* __restrict__ in, float* __restrict__ out) {
    constexpr int U = 4, LD = 4;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int c = blockIdx.x * 8 + lane % 8;
    const int r0 = warp * LD + lane / 8;
    unsigned acc = 0;
    int4 first[U];
    if (MODE == 3) {
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const int r = r0 + 8 * LD * u;
            first[u] = c < cols4 && r < rows ? w[size_t(r) * cols4 + c] : make_int4(0, 0, 0, 0);
        }
    }
    if (MODE != 0) pdl_wait();
    if (MODE == 1) pdl_trigger();
    const float a = in[(blockIdx.x * 256 + threadIdx.x) % ACT];
    if (c < cols4) {
        int start = r0;
        if (MODE == 3) {
#pragma unroll
            for (int u = 0; u < U; ++u) acc ^= unsigned(first[u].x ^ first[u].y ^ first[u].z ^ first[u].w);
            start += 8 * LD * U;
        }
        for (int r = start; r < rows; r += 8 * LD * U) {
            int4 v[U];
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const int rr = r + 8 * LD * u;
                v[u] = rr < rows ? w[size_t(rr) * cols4 + c] : make_int4(0, 0, 0, 0);
            }
#pragma unroll
            for (int u = 0; u < U; ++u) acc ^= unsigned(v[u].x ^ v[u].y ^ v[u].z ^ v[u].w);
        }
    }
    if (MODE >= 2) pdl_trigger();
    if (blockIdx.x * 256 + threadIdx.x < ACT) out[blockIdx.x * 256 + threadIdx.x] = a + float(acc & 1u) * 1e-9f;
}

struct Matrix {
    int rows, cols;  // int32 words
};

template <typename K, typename... Args>
void launch(int mode, K kernel, dim3 grid, cudaStream_t s, Args... args) {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = grid;
    cfg.blockDim = dim3(256);
    cfg.stream = s;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = attr;
    cfg.numAttrs = mode == 0 ? 0 : 1;
    CHECK(cudaLaunchKernelEx(&cfg, kernel, args...));
}

template <int MODE>
void layer(cudaStream_t s, const std::vector<int4*>& w, const Matrix* m, float* const* act, const int4* kv) {
    // norm1, QKV, rope, attention (64 blocks over 4 MB), O, norm2, gate/up, down.
    launch(MODE, small<MODE>, dim3(1), s, (const float*)act[0], act[1]);
    launch(MODE, strip<MODE>, dim3((m[0].cols / 4 + 7) / 8), s, (const int4*)w[0], m[0].rows, m[0].cols / 4, (const float*)act[1], act[2]);
    launch(MODE, small<MODE>, dim3(1), s, (const float*)act[2], act[3]);
    launch(MODE, strip<MODE>, dim3(64), s, kv, 512, 512, (const float*)act[3], act[4]);
    launch(MODE, strip<MODE>, dim3((m[1].cols / 4 + 7) / 8), s, (const int4*)w[1], m[1].rows, m[1].cols / 4, (const float*)act[4], act[5]);
    launch(MODE, small<MODE>, dim3(1), s, (const float*)act[5], act[6]);
    launch(MODE, strip<MODE>, dim3((m[2].cols / 4 + 7) / 8), s, (const int4*)w[2], m[2].rows, m[2].cols / 4, (const float*)act[6], act[7]);
    launch(MODE, strip<MODE>, dim3((m[3].cols / 4 + 7) / 8), s, (const int4*)w[3], m[3].rows, m[3].cols / 4, (const float*)act[7], act[0]);
}

int main() {
    const Matrix m[4] = {{512, 6144}, {512, 4096}, {512, 28672}, {1792, 4096}};
    constexpr int LAYERS = 4;
    std::vector<std::vector<int4*>> weights(LAYERS);
    std::vector<int4*> kvs(LAYERS);
    size_t bytes = 0;
    for (int l = 0; l < LAYERS; ++l) {
        for (const Matrix& x : m) {
            int4* p;
            const size_t n = size_t(x.rows) * x.cols * 4;
            CHECK(cudaMalloc(&p, n));
            CHECK(cudaMemset(p, l + 1, n));
            weights[l].push_back(p);
            bytes += n;
        }
        CHECK(cudaMalloc(&kvs[l], 512 * 512 * 16));
        CHECK(cudaMemset(kvs[l], 3, 512 * 512 * 16));
    }
    float* act[8];
    for (auto& a : act) {
        CHECK(cudaMalloc(&a, ACT * sizeof(float)));
        CHECK(cudaMemset(a, 0, ACT * sizeof(float)));
    }
    std::printf("weights %.0f MB over %d layers; us a layer (median of 50 replays of %d layers)\n", bytes / 1e6, LAYERS, LAYERS);
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    auto run = [&](int mode, auto body) { std::printf("mode %d: %.1f us a layer\n", mode, graph_us_a_layer(s, LAYERS, body)); };
    for (int rep = 0; rep < 2; ++rep) {
        run(0, [&](int l) { layer<0>(s, weights[l], m, act, kvs[l]); });
        run(1, [&](int l) { layer<1>(s, weights[l], m, act, kvs[l]); });
        run(2, [&](int l) { layer<2>(s, weights[l], m, act, kvs[l]); });
        run(3, [&](int l) { layer<3>(s, weights[l], m, act, kvs[l]); });
    }
    return 0;
}
