// Hand-written twins of specs/index.ima's embedding and reshape_and_cache for the bench
// (examples/bench.rs): the same launch shape (a thread per 16 bytes of a row, blocks of
// 256), raw pointers, 32-bit row-major index arithmetic, and no check of the index
// entries: an id or slot out of range is an out-of-bounds access here. Plus the
// generators of the bench's index tensors. Compiled by NVRTC as a module of its own.

// A random 32-bit word for element i (splitmix64's finaliser).
__device__ __forceinline__ unsigned int index_hash(unsigned long long i, unsigned int seed) {
    unsigned long long x = i * 0x9E3779B97F4A7C15ull + (unsigned long long)(seed + 1) * 0xD1B54A32D192ED03ull;
    x ^= x >> 31; x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 27; x *= 0x94D049BB133111EBull;
    x ^= x >> 31;
    return (unsigned int)(x >> 32);
}

// Token ids in 0 .. v, uniform.
extern "C" __global__ void bench_ids(int* p, long long n, unsigned int seed, int v) {
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        p[i] = int(index_hash(i, seed) % (unsigned int)v);
}

// Slots as a paged cache hands them out: token t takes row t % bs of block
// (t / bs) * 7919 % nb, a permutation of the blocks (7919 is prime), so that each block's
// bs rows are written together and the blocks lie scattered.
extern "C" __global__ void bench_slots(long long* p, long long n, long long nb, long long bs) {
    for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < n; t += (long long)gridDim.x * blockDim.x)
        p[t] = (t / bs * 7919 % nb) * bs + t % bs;
}

// y[t] = table[ids[t]]: rows of d8 16-byte vectors.
extern "C" __global__ void twin_embedding(const int* __restrict__ ids, const uint4* __restrict__ table,
                                          uint4* __restrict__ y, int T, int d8) {
    const int g = blockIdx.x * 256 + threadIdx.x;
    const int t = g / d8, d = g - t * d8;
    if (t >= T) return;
    y[g] = table[ids[t] * d8 + d];
}

// Token t's key and value rows (row8 16-byte vectors: HKV * D / 8) to slot slot_mapping[t]
// of the caches, [NB * BS, HKV * D] as rows; a slot of -1 writes nothing.
extern "C" __global__ void twin_reshape_and_cache(const uint4* __restrict__ key, const uint4* __restrict__ value,
                                                  const long long* __restrict__ slot_mapping,
                                                  uint4* __restrict__ k_cache, uint4* __restrict__ v_cache, int T,
                                                  int row8) {
    const int g = blockIdx.x * 256 + threadIdx.x;
    const int t = g / row8, r = g - t * row8;
    if (t >= T) return;
    const long long slot = slot_mapping[t];
    if (slot < 0) return;
    const int o = int(slot) * row8 + r;
    k_cache[o] = key[g];
    v_cache[o] = value[g];
}
