// Throwaway: can one persistent kernel a layer, its phases separated by grid barriers,
// stream the decode layer's bytes at B = 1 closer to the roofline than eight launches?
// bench/explore/pdl/pdl_chain measured the chain of eight launches (no arithmetic) at
// 41.4 us a layer against the layer's roofline of 27.6 us: launch boundaries alone cost
// more than the 30% that issue 22's goal leaves. This is the same work (the four
// projections' int32 matrices read in 32-column strips, 8 warps a block splitting the
// rows, 4 16-byte loads in flight a lane; 4 MB of KV in 64 strips; the two norms' and
// RoPE's reads of the activation) as one launch a layer, 2 blocks on each of the SMs,
// each block taking the strips blockIdx, blockIdx + grid, ... of a phase. Barriers only
// where the layer has a dependency that crosses blocks: after QKV (attention needs every
// head's q, k, v), after attention (O needs every head's output), after O (norm2 needs
// the whole row), after gate/up (down needs the whole row). The norms and RoPE run
// redundantly in every block that needs their result (each reads the 16 KB row), so they
// need no barrier of their own. Modes:
//   0  eight launches (pdl_chain's mode 0, for the same run)
//   4  one launch a layer, grid barriers, strips as above
//   7  as 4, each block asking the L2 for its first unit of the next phase (every row's
//      128 bytes, prefetch.global.L2) before it waits at a barrier: weights depend on
//      nothing, so a block with no work left in a phase can start the next one's reads
//   8  as 7, the block's first two units
//   9  as 4, in wide units: 128-column strips (512 contiguous bytes a warp's load) cut
//      into row chunks to make about two units a block
//  10  eight launches of wide units (a launch's grid: about 528 units)
//  11  as 4 with no barriers (wrong as a layer: what the phases' reads cost with no
//      dependency between them)
//  12  one launch, the phases' units dealt round-robin in the layer's order, each unit
//      waiting for the phase before it to be done (flow, below), its first loads issued
//      before it waits
//  13  as 12, no loads before the wait
//  14  one block an SM: a producer warp streams the block's units (128 rows by 32 columns)
//      through a ring of 8 slots of shared memory by cp.async.bulk, ahead of the phases'
//      dependencies, which the 8 consumer warps wait for (ring_flow, below)
//  15  as 14 without the phase waits
//  16  as 14, a unit copied as one box of a 2-D tensor map (128 rows by 32 words) where 14
//      issues 128 bulk copies of a row's 128 bytes: forms 14 and 15 streamed 0.55 TB/s
//      with or without the phase waits, so their copies were the limit
//  17  as 16 without the phase waits
//  18  as 16, each block counting its units of a phase once, after the last of them (one
//      `red.release` a phase where 16 has one a unit: about 52 a block, each a fence that
//      waits for the block's memory operations; 16 ran at half of 17's rate)
//  19  as 16, the counts made by a signalling warp, off the consumers' path: it waits for
//      each unit's consumers (the slot's `consumed` barrier), frees the slot for the
//      producer, and adds up the units it has seen in one `red.release` when the next
//      one is not yet consumed or counts elsewhere (18 ran 47.8 us against 17's 34.2:
//      what is left of 16's loss is the skew between phases, and what fences remain)
//  21  as 19 with a ring of 13 slots (208 KB) where the others have 8: whether what 19
//      loses to 17 is the dependencies' waits outlasting what the ring holds beyond the
//      bytes it needs in flight to stream
//  22  as 17 with 13 slots (the deeper ring's reads alone)
//  23  as 19, stamped (`%globaltimer` into ring_stamps): each block's wait for the phase
//      before each phase's first unit (start, end), the time its consumers got that unit's
//      data, and the time the signalling warp saw the phase's last unit consumed: which
//      SMs finish a phase late, and how long the others wait for them
//  24  as 23, the signalling warp releasing a block's count once a phase (at its last unit
//      there) where 19 releases whenever the next unit is not yet consumed: 23 found the
//      signalling warp 3 to 4 us behind the consumers at each phase's end, a fence a
//      release; its last-unit stamp is taken before the release
//  25  as 24 with a ring of 4 slots: whether a release's latency (24: about 3 us from the
//      last block's last unit to the count seen) grows with the copies the SM has in flight
//  26  as 24 with relaxed counts (`red.relaxed.gpu`, no release): what a signal costs that
//      waits for nothing before it, as a flag stored with its data would (NCCL's LL
//      protocol); not a correct layer by itself, since nothing orders the phase's outputs
//      before its count
//  27  as 23 (19 stamped) with relaxed counts
//  28  as 19 with relaxed counts, not stamped; 29 as 24 (a count released once a phase),
//      not stamped. Forms 23 to 27 are stamped in their graph runs too, and 19 is not:
//      session 30 read 27's graph time (56.4 us) against 19's (47.2) as relaxed counts not
//      helping, while the single stamped launches put 27's end 4 us before 23's. 28 and 29
//      against 19, all unstamped, in one run, twice (`mega_chain 28`), say what a relaxed
//      count and a count a phase cost in a layer's time
//  30  as 17 (no counts), the phases' outputs passed as NCCL's LL protocol passes data: a
//      record of 8 bytes holds a value and the launch's epoch (flag), stored and loaded
//      relaxed, so that no fence waits for anything (session 31: forms 28 and 29 put a
//      release's cost at 9.4 us a layer against relaxed counts). Each unit's consumers
//      store its strip's 32 partial sums; a reducer warp in the block that consumes a
//      strip's last chunk waits for the strip's partials (their flags), adds them and
//      stores the strip's 32 outputs; a unit of phase p waits, before its first use of
//      them, for the outputs it reads of phase p - 1 (its chunk's 32 strips, as many rows
//      as the chunk's 1024; gate/up after the norm: all of O's), remembering what it has
//      seen. A correct layer's dependencies, with the reads of its inputs
//  31  as 30 with no waiting: the same records loaded once whatever their flags (what the
//      records' traffic costs without the waits)
//  32  as 30, an input warp waiting for each unit's inputs up to the ring's depth ahead of
//      the consumers (they wait for its arrival on the slot's `inputs` barrier), its lanes
//      32 records' loads in flight each; the polls of 32 and its reducer back off 64 ns
//      (30 put every input's wait on the consumers' path, and 31, with no waiting, still
//      lost 15 us to 17: each group's loads a round trip to L2 behind a unit)
//  33  as 32 with no waiting (31's loads, off the consumers' path)
//  34 to 37  17, 19, 28 and 29 with a ring of 2 slots; 38 to 41 with 3 (session 51: a
//      gpu-scope fence waits for the SM's bulk copies in flight, bench/explore/fence)
//  42 to 45  17, 19, 28 and 29 with the ring filled by 16-byte cp.async (LDGSTS) instead
//      of tensor-map boxes
//  46 to 51  17, 19, 28, 42, 43 and 44 with a B = 1 GEMV's arithmetic in the consumers
//      (`mega_chain 34` runs 17 to 51 of these, twice)
//  52 to 56  the dependencies through a hub block a cluster that streams nothing, so that
//      no streaming SM releases at gpu scope, 55 and 56 with 46's arithmetic (hub_flow,
//      below; `mega_chain 52`)
//  57 to 60  46 (the arithmetic in 8 consumer warps: 57.2 us a layer against 17's 34.0) with
//      each unit's x loaded before its slot's wait (57), with 16 consumer warps (58), both
//      (59), and 59 with released counts (60); 61 is the hub form 55 with 16 consumer warps
//      (`mega_chain 57`, with 17, 46, 19, 47, 52 and 55 beside them)
//  62 to 66  17, 52, 59, 61 and 60 (ring forms 62, 64, 66; hub forms 63, 65) with each
//      matrix stored unit by unit, a unit one 16 KB bulk copy instead of a box of 128 rows
//      a matrix's row apart (also `mega_chain 57`)
//  20  as 19 with dependencies as narrow as the layer's: O's 128-row chunk h waits for the
//      16 of attention's 64 strips that make its rows (2 KV heads' outputs), down's chunk h
//      for the 64 of gate/up's strips that make its rows, in counters of their own; only
//      attention (on QKV) and gate/up (on O, through the norm) wait for a whole phase. O's
//      and down's units are dealt chunk by chunk (all strips of chunk 0 first), so that
//      their first units need the strips that finish first
// (A first form of 7 that loaded the next unit's first tiles into registers held them in
// local memory, through a pointer, and ran 47.5 us: not a measurement, removed.)
//
// Build here (scripts/cuda-env's static CUDA runtime; cuTensorMapEncodeTiled comes through
// cudaGetDriverEntryPoint, so no -lcuda):
//   source scripts/cuda-env && nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a \
//     -L"$IMA_CUDA_ROOT/lib" -o bench/explore/mega/mega_chain bench/explore/mega/mega_chain.cu
// Run there with the (git-ignored) binary carried.
#include <cuda.h>
#include <cuda_fp16.h>

#include <string>
#include <type_traits>

#include "../graph_time.cuh"

constexpr int ACT = 4096;  // activation vector: f32 words
constexpr int U = 4, LD = 4;

struct Matrix {
    const int4* w;
    int rows, cols4;
};

// --- eight launches (pdl_chain's mode 0) ---
__global__ void __launch_bounds__(256) small(const float* __restrict__ in, float* __restrict__ out) {
    float acc = 0.f;
    for (int i = threadIdx.x; i < ACT; i += 256) acc += in[i];
    __shared__ float red[256];
    red[threadIdx.x] = acc;
    __syncthreads();
    for (int i = threadIdx.x; i < ACT; i += 256) out[i] = in[i] + red[i % 256] * 1e-9f;
}

// Rows r, r + step, ..., r + (U - 1) step of int4 column c of m, those at or past hi as
// zeros: one lane's U 16-byte loads in flight.
__device__ __forceinline__ void load_rows(const Matrix& m, int c, int r, int step, int hi, int4 (&v)[U]) {
#pragma unroll
    for (int k = 0; k < U; ++k) {
        const int rr = r + step * k;
        v[k] = rr < hi ? m.w[size_t(rr) * m.cols4 + c] : make_int4(0, 0, 0, 0);
    }
}
// What a lane keeps of its loads: their XOR (the reads, and no arithmetic to speak of).
__device__ __forceinline__ unsigned xor_of(const int4 (&v)[U]) {
    unsigned acc = 0;
#pragma unroll
    for (int k = 0; k < U; ++k) acc ^= unsigned(v[k].x ^ v[k].y ^ v[k].z ^ v[k].w);
    return acc;
}

// 32-column strip `s` of m: XOR of its words, as pdl_chain's strip reads them (lane % 8
// an int4 column, lane / 8 and the warp the rows). With `first`, the caller has loaded
// the strip's first U rows a lane into v already (flow's form 12).
__device__ __forceinline__ unsigned strip_rows(const Matrix& m, int s, int4 (&v)[U], bool first = false) {
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int c = s * 8 + lane % 8;
    if (c >= m.cols4) return 0;
    unsigned acc = 0;
    int r = warp * LD + lane / 8;
    if (first) {
        acc ^= xor_of(v);
        r += 8 * LD * U;
    }
    for (; r < m.rows; r += 8 * LD * U) {
        load_rows(m, c, r, 8 * LD, m.rows, v);
        acc ^= xor_of(v);
    }
    return acc;
}
__device__ __forceinline__ unsigned strip_rows(const Matrix& m, int s) {
    int4 v[U];
    return strip_rows(m, s, v);
}

// Wide units: 128-column strips (a warp's load reads 512 contiguous bytes of one row)
// cut into row chunks, so that the 4096-column matrices make blocks enough as well.
// Unit u of m: strip u % strips, rows [chunk * rows / chunks, ...) of chunk u / strips.
struct Wide {
    int strips, chunks;
    __host__ __device__ int units() const { return strips * chunks; }
};
__host__ __device__ inline Wide wide_of(const Matrix& m, int target) {
    const int strips = (m.cols4 + 31) / 32;
    int chunks = (target + strips / 2) / strips;
    chunks = chunks < 1 ? 1 : chunks > m.rows / 32 ? m.rows / 32 : chunks;
    return {strips, chunks};
}
__device__ __forceinline__ unsigned wide_rows(const Matrix& m, Wide wd, int u) {
    const int warp = threadIdx.x / 32, c = u % wd.strips * 32 + threadIdx.x % 32, h = u / wd.strips;
    const int lo = m.rows * h / wd.chunks, hi = m.rows * (h + 1) / wd.chunks;
    unsigned acc = 0;
    if (c >= m.cols4) return 0;
    for (int r = lo + warp; r < hi; r += 8 * U) {
        int4 v[U];
        load_rows(m, c, r, 8, hi, v);
        acc ^= xor_of(v);
    }
    return acc;
}

__global__ void __launch_bounds__(256, 2) wide(Matrix m, Wide wd, const float* __restrict__ in, float* __restrict__ out) {
    const float a = in[(blockIdx.x * 256 + threadIdx.x) % ACT];
    const unsigned acc = wide_rows(m, wd, blockIdx.x);
    if (blockIdx.x * 256 + threadIdx.x < ACT) out[blockIdx.x * 256 + threadIdx.x] = a + float(acc & 1u) * 1e-9f;
}

__global__ void __launch_bounds__(256, 2) strip(Matrix m, const float* __restrict__ in, float* __restrict__ out) {
    const float a = in[(blockIdx.x * 256 + threadIdx.x) % ACT];
    const unsigned acc = strip_rows(m, blockIdx.x);
    if (blockIdx.x * 256 + threadIdx.x < ACT) out[blockIdx.x * 256 + threadIdx.x] = a + float(acc & 1u) * 1e-9f;
}

// --- one launch a layer ---
struct Layer {
    Matrix m[5];  // QKV, KV (attention), O, gate/up, down
    const __half* x;  // forms 46 to 51, and 55 and 56's phase 0: x, K values (the widest K)
};

// Every block arrives; the last resets the count and advances the generation.
template <int MODE>
__device__ __forceinline__ void grid_barrier(unsigned* count, unsigned* gen) {
    if (MODE == 11) return;
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned g;
        asm volatile("ld.acquire.gpu.u32 %0, [%1];" : "=r"(g) : "l"(gen) : "memory");
        if (atomicAdd(count, 1u) == gridDim.x - 1) {
            *count = 0;
            asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(gen) : "memory");
        } else {
            unsigned now;
            do {
                asm volatile("ld.acquire.gpu.u32 %0, [%1];" : "=r"(now) : "l"(gen) : "memory");
            } while (now == g);
        }
    }
    __syncthreads();
}

// The block's sum of the row (a norm's or RoPE's read), redundantly in every block.
__device__ __forceinline__ float row_sum(const float* in) {
    float acc = 0.f;
    for (int i = threadIdx.x; i < ACT; i += 256) acc += in[i];
    return acc;
}

template <int MODE>
__global__ void __launch_bounds__(256, 2) mega(Layer L, float* act, unsigned* bar) {
    unsigned acc = 0;
    float a = row_sum(act);  // norm1
    auto strips = [&](int p) { return (L.m[p].cols4 + 7) / 8; };
    // Phase p: the block's strips of matrix p.
    auto run = [&](int p) {
        if (MODE == 9) {
            const Wide wd = wide_of(L.m[p], 2 * gridDim.x);
            for (int u = blockIdx.x; u < wd.units(); u += gridDim.x) acc ^= wide_rows(L.m[p], wd, u);
        } else {
            for (int u = blockIdx.x; u < strips(p); u += gridDim.x) acc ^= strip_rows(L.m[p], u);
        }
    };
    // Modes 7 and 8: the L2 asked for the block's first units of phase p, a 128-byte row
    // segment a request.
    auto prefetch = [&](int p) {
        if (MODE < 7) return;
        const Matrix& m = L.m[p];
        for (int k = 0; k < MODE - 6; ++k) {
            const int u = blockIdx.x + k * gridDim.x;
            if (u >= strips(p)) return;
            for (int r = threadIdx.x; r < m.rows; r += 256)
                asm volatile("prefetch.global.L2 [%0];" ::"l"(m.w + size_t(r) * m.cols4 + 8 * u));
        }
    };
    run(0);  // QKV
    prefetch(1);
    grid_barrier<MODE>(bar, bar + 1);
    a += row_sum(act);  // RoPE's read of q and k
    run(1);             // attention
    prefetch(2);
    grid_barrier<MODE>(bar, bar + 1);
    run(2);  // O
    prefetch(3);
    grid_barrier<MODE>(bar, bar + 1);
    a += row_sum(act);  // norm2
    run(3);             // gate/up
    prefetch(4);
    grid_barrier<MODE>(bar, bar + 1);
    run(4);  // down
    if (blockIdx.x * 256 + threadIdx.x < ACT) act[blockIdx.x * 256 + threadIdx.x] = a * 1e-9f + float(acc & 1u) * 1e-9f;
}


// Forms 12 and 13: the phases' units concatenated in the layer's order (QKV, KV, O,
// gate/up, down) and dealt round-robin to the blocks, so that a block's units rise in that
// order; a unit of phase p waits for phase p - 1 to be done (a count a phase), which cannot
// deadlock with every block resident: no unit waits on a later one. Form 12 issues the
// unit's first U loads a lane (weights depend on nothing) before it waits, so that blocks
// done with a phase start reading the next while its last units run elsewhere. The last
// block out resets the counts for the next launch.
template <int MODE>
__global__ void __launch_bounds__(256, 2) flow(Layer L, float* act, unsigned* done) {
    int first[6] = {0};
    for (int p = 0; p < 5; ++p) first[p + 1] = first[p] + (L.m[p].cols4 + 7) / 8;
    unsigned acc = 0;
    float a = row_sum(act);  // norm1
    int read_for = 0;        // phases whose row this block has read (RoPE's, norm2's)
    int ready = 0;           // phases before this one are known done
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    for (int u = blockIdx.x; u < first[5]; u += gridDim.x) {
        int p = 0;
        while (u >= first[p + 1]) ++p;
        const Matrix& m = L.m[p];
        const int strip = u - first[p], c = strip * 8 + lane % 8;
        int4 v[U];
        if (MODE == 12 && c < m.cols4) load_rows(m, c, warp * LD + lane / 8, 8 * LD, m.rows, v);
        if (p > ready) {  // once a phase: a done phase stays done
            ready = p;
            if (threadIdx.x == 0) {
                unsigned n;
                do {
                    asm volatile("ld.acquire.gpu.u32 %0, [%1];" : "=r"(n) : "l"(done + p - 1) : "memory");
                } while (n < unsigned(first[p] - first[p - 1]));
            }
            __syncthreads();
        }
        if ((p == 1 || p == 3) && !(read_for & (1 << p))) {
            a += row_sum(act);
            read_for |= 1 << p;
        }
        acc ^= strip_rows(m, strip, v, MODE == 12);
        __syncthreads();
        if (threadIdx.x == 0) asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(done + p) : "memory");
    }
    if (blockIdx.x * 256 + threadIdx.x < ACT) act[blockIdx.x * 256 + threadIdx.x] = a * 1e-9f + float(acc & 1u) * 1e-9f;
    __syncthreads();
    if (threadIdx.x == 0 && atomicAdd(done + 5, 1u) == gridDim.x - 1) {
        for (int p = 0; p < 6; ++p) done[p] = 0;
        __threadfence();
    }
}


// Forms 14 to 17: the same persistent order as flow's (units dealt round-robin in the
// layer's order), but each SM's block streams its units' weights through a ring of shared
// memory, so that reads run ahead across the phases' dependencies: a producer warp copies
// unit after unit (cp.async.bulk of each row's 128 bytes, counted on the slot's mbarrier)
// as soon as a slot is free, whatever phase the consumers wait on; 8 consumer warps wait
// for the phase before a unit's (form 14; a real layer's activations) and for the slot,
// read it, and free it. A unit: 128 rows of K by a 32-column strip (16 KB). Form 15 skips
// the phase waits (not a layer: the ring's reads alone). Forms 16 and 17 copy a unit as one
// box of its matrix's 2-D tensor map (rows past the matrix arrive as zeros, and count).
namespace ring {
constexpr int ROWS = 128, UNIT_BYTES = ROWS * 128;
// Forms 34 to 41 are 17, 19, 28 and 29 with a ring of 2 slots (34 to 37) or 3 (38 to 41):
// bench/explore/fence found that a gpu-scope fence waits for every bulk copy its SM has in
// flight (2.3 us with 4 slots of 16 KB, 6.5 with 8, 0.36 idle), and that 2 slots stream
// at 4.16 TB/s.
__host__ __device__ constexpr bool shallow(int mode) { return mode >= 34 && mode <= 41; }
// Forms 42 to 45 are 17, 19, 28 and 29 with the producer's copies made by 16-byte
// `cp.async` (LDGSTS: 32 a lane a unit, each lane's arrival on the slot's full barrier
// when its copies land) where theirs are tensor-map boxes: whether a release waits for
// those copies too (fence.cu's "cp.async" streams ask the same alone).
// Forms 46 to 51 give the consumers a B = 1 GEMV's arithmetic on the projections' units
// (each word's 8 nibbles dequantised by the magic-number LOP3s and HFMA2s, as
// FasterTransformer's and Marlin's do, and multiplied by x's 8 values; the KV phase keeps
// its XOR): 46, 47 and 48 are 17, 19 and 28 so; 49, 50 and 51 are 42, 43 and 44 so (the
// ring filled by cp.async). A group's scale and zero are a register here, where a kernel
// would load them (1/32 of the weights' bytes).
// Forms 57 to 60 ask why 46's consumers decode at 57 us a layer where the reads take 34:
// 57 is 46 with each unit's x (16 bytes a piece) loaded before the consumers wait for the
// unit's slot, where 46 loads it after, on the decode's path, and all of a thread's pieces
// loaded from the slot before it decodes the first (46 loads and decodes a piece at a
// time); 58 is 46 with 16 consumer
// warps (2 pieces of 16 bytes a thread a unit, where 8 warps take 4): more warps to hide
// the decode's latency, as the tree's GEMVs keep 24 an SM; 59 is both; 60 is 59 with
// form 19's released counts (a correct layer's dependencies, as 47 is 46's).
// Forms 62, 64 and 66 ask what the strips' layout costs: form 17 reads the layer in 34.0 us
// (3.33 TB/s), each unit a box of 128 rows of 128 bytes, a row apart in memory, where
// bench/explore/fence streamed 16 KB slots of one buffer at 4.16 TB/s. Here each matrix is
// taken as stored unit by unit (strip-major, the order the units are dealt in: the 16 KB
// of strip s and chunk h at (s * chunks + h) * 16 KB), as a layout prepared once at load
// time would store it, and a unit comes by one 1-D bulk copy of 16 KB: 62 is 17 so, 64 is
// 59 so (the arithmetic, 16 consumer warps, x ahead), 66 is 60 so (64 with released
// counts). The buffers hold constants, so the layout changes what is read, not the times'
// meaning.
__host__ __device__ constexpr bool cpasync(int mode) { return (mode >= 42 && mode <= 45) || (mode >= 49 && mode <= 51); }
__host__ __device__ constexpr bool contiguous(int mode) { return mode == 62 || mode == 64 || mode == 66; }
__host__ __device__ constexpr bool math(int mode) {
    return (mode >= 46 && mode <= 51) || (mode >= 57 && mode <= 60) || mode == 64 || mode == 66;
}
__host__ __device__ constexpr bool x_ahead(int mode) { return mode == 57 || mode == 59 || mode == 60 || mode == 64 || mode == 66; }
__host__ __device__ constexpr int consumers(int mode) { return (mode >= 58 && mode <= 60) || mode == 64 || mode == 66 ? 16 : 8; }
__host__ __device__ constexpr int like(int mode) {
    return shallow(mode)             ? ((mode - 34) % 4 == 0 ? 17 : (mode - 34) % 4 == 1 ? 19 : (mode - 34) % 4 == 2 ? 28 : 29)
           : mode >= 42 && mode <= 45 ? (mode == 42 ? 17 : mode == 43 ? 19 : mode == 44 ? 28 : 29)
           : mode >= 57              ? (mode == 60 || mode == 66 ? 19 : 17)
           : math(mode)              ? ((mode - 46) % 3 == 0 ? 17 : (mode - 46) % 3 == 1 ? 19 : 28)
                                     : mode;
}
// The form that a later one varies: 21 and 23 to 27 vary 19, 22 varies 17.
// Whether a form passes the phases' outputs as flagged records (30, 31), and whether it
// waits for their flags (30).
__host__ __device__ constexpr bool ll(int mode) { return mode >= 30 && mode <= 33; }
__host__ __device__ constexpr bool ll_waits(int mode) { return mode == 30 || mode == 32; }
// Whether an input warp waits for the units' inputs ahead of the consumers (32, 33).
__host__ __device__ constexpr bool prefetches(int mode) { return mode == 32 || mode == 33; }
__host__ __device__ constexpr int base_form(int mode) {
    return shallow(mode) || cpasync(mode) || math(mode) ? (like(mode) == 17 ? 17 : 19) : ll(mode) ? 17 : mode == 21 || mode >= 23 ? 19 : mode == 22 ? 17 : mode;
}
__host__ __device__ constexpr int slots(int mode) {
    return shallow(mode) ? (mode < 38 ? 2 : 3) : mode == 21 || mode == 22 ? 13 : mode == 25 ? 4 : 8;
}
__host__ __device__ constexpr bool stamps(int mode) { return mode >= 23 && mode <= 27; }
// Whether the signalling warp releases a count only at the last unit of it (24 to 26, 29).
__host__ __device__ constexpr bool releases_once(int mode) {
    return mode == 24 || mode == 25 || mode == 26 || like(mode) == 29;
}
// Whether the counts are relaxed (26 to 28) rather than released.
__host__ __device__ constexpr bool relaxed(int mode) { return mode == 26 || mode == 27 || like(mode) == 28; }
// Forms 23 to 27's stamps, [block, phase, 4] (see form 23's line above): wait start, wait end,
// the phase's last unit consumed, its first unit's data there; 0 where the block has none.
constexpr int MAX_BLOCKS = 1024, STAMPS = 4;
__device__ long long ring_stamps[MAX_BLOCKS * 5 * STAMPS];
__device__ __forceinline__ long long now_ns() {
    long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
// The producer warp, the consumers and, in forms 19 and 20, the signalling warp.
// Forms 30 to 33 add a reducer warp, 32 and 33 an input warp.
__host__ __device__ constexpr int threads(int mode) {
    return 32 * (1 + consumers(mode) + (base_form(mode) >= 19) + ll(mode) + prefetches(mode));
}
// Each slot's full, empty and consumed barriers, and in 32 and 33 its inputs barrier.
__host__ __device__ constexpr size_t smem(int mode) { return size_t(slots(mode)) * UNIT_BYTES + 4 * slots(mode) * 8 + 128; }
// Whether a form waits for the phase before a unit's, and whether it copies by tensor map.
__host__ __device__ constexpr bool waits(int mode) {
    return base_form(mode) == 14 || base_form(mode) == 16 || base_form(mode) >= 18;
}
// Whether a form counts a block's units of a phase once (18) rather than each unit.
__host__ __device__ constexpr bool counts_a_phase(int mode) { return base_form(mode) == 18; }
// Whether a signalling warp counts the units (19, 20), and whether O and down wait only for
// the strips that make their rows (20).
__host__ __device__ constexpr bool signals(int mode) { return base_form(mode) >= 19; }
__host__ __device__ constexpr bool narrow(int mode) { return base_form(mode) == 20; }
// `done`: the phases' counts [0, 5), the blocks' exits [5], attention's groups of 16
// strips [6, 10) and gate/up's groups of 64 [10, 24).
constexpr int EXITS = 5, ATTN_GROUPS = 6, GATE_UP_GROUPS = 10, COUNTERS = 24;
__host__ __device__ constexpr bool by_map(int mode) { return mode >= 16 && !cpasync(mode); }

// The layer's five matrices as 2-D tensor maps of 32-bit words, boxes of ROWS x 32.
struct Maps {
    CUtensorMap m[5];
};

// Unit u of the layer: its phase p, 32-column strip s and chunk h of 128 rows.
struct Unit {
    int p, s, h;
};
__device__ __forceinline__ int chunks(const Matrix& m) { return (m.rows + ROWS - 1) / ROWS; }
__device__ __forceinline__ int units(const Matrix& m) { return (m.cols4 + 7) / 8 * chunks(m); }
__device__ __forceinline__ int strips(const Matrix& m) { return (m.cols4 + 7) / 8; }
// Strip-major (a strip's chunks in a row, so that strips finish in order), or in form 20
// chunk-major for O and down (every strip's chunk 0 first).
template <int MODE>
__device__ __forceinline__ Unit unit(const Layer& L, int u) {
    int p = 0;
    while (u >= units(L.m[p])) u -= units(L.m[p++]);
    if (narrow(MODE) && (p == 2 || p == 4)) return {p, u % strips(L.m[p]), u / strips(L.m[p])};
    return {p, u / chunks(L.m[p]), u % chunks(L.m[p])};
}
// The counter of `done` that unit t's consumption adds to.
template <int MODE>
__device__ __forceinline__ int counter_of(const Unit& t) {
    if (narrow(MODE) && t.p == 1) return ATTN_GROUPS + t.s / 16;
    if (narrow(MODE) && t.p == 3) return GATE_UP_GROUPS + t.s / 64;
    return t.p;
}
// Forms 46 to 51, 55 and 56: one packed row's 4 words (4 columns, 8 values of K each)
// dequantised and multiplied by x's 8 values at `x`, the 4 columns' sums folded into a word
// to keep.
__device__ __forceinline__ unsigned lop3_and_or(unsigned a, unsigned b, unsigned c) {
    unsigned d;
    asm("lop3.b32 %0, %1, %2, %3, 0xea;" : "=r"(d) : "r"(a), "r"(b), "r"(c));  // (a & b) | c
    return d;
}
__device__ __forceinline__ unsigned gemv_row(const unsigned (&v)[4], const uint4 xr) {
    // x's pairs in the decode's order: (x0, x4), (x1, x5), (x2, x6), (x3, x7).
    const unsigned xp[4] = {__byte_perm(xr.x, xr.z, 0x5410), __byte_perm(xr.x, xr.z, 0x7632),
                            __byte_perm(xr.y, xr.w, 0x5410), __byte_perm(xr.y, xr.w, 0x7632)};
    // A group's scale s and zero z (q - z) s folded: low nibbles h s - (1024 + z) s, high
    // nibbles (16 h) (s / 16) - (64 + z) s.
    const __half2 s = __float2half2_rn(0.01f), s16 = __float2half2_rn(0.01f / 16.f);
    const __half2 b_lo = __float2half2_rn(-(1024.f + 8.f) * 0.01f), b_hi = __float2half2_rn(-(64.f + 8.f) * 0.01f);
    unsigned out = 0;
#pragma unroll
    for (int c = 0; c < 4; ++c) {
        const unsigned w = v[c], top = w >> 8;
        __half2 sum = __float2half2_rn(0.f);
        const unsigned q[4] = {lop3_and_or(w, 0x000f000fu, 0x64006400u), lop3_and_or(w, 0x00f000f0u, 0x64006400u),
                               lop3_and_or(top, 0x000f000fu, 0x64006400u), lop3_and_or(top, 0x00f000f0u, 0x64006400u)};
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const __half2 h = *reinterpret_cast<const __half2*>(&q[j]);
            const __half2 wq = j % 2 == 0 ? __hfma2(h, s, b_lo) : __hfma2(h, s16, b_hi);
            sum = __hfma2(wq, *reinterpret_cast<const __half2*>(&xp[j]), sum);
        }
        out ^= *reinterpret_cast<const unsigned*>(&sum);
    }
    return out;
}
// x's 8 values by a generic load: in global memory (forms 46 to 51, 57 to 60) or a phase's
// input in shared memory (hub forms 55, 56 and 61).
__device__ __forceinline__ uint4 x8(const __half* x) { return *reinterpret_cast<const uint4*>(x); }
__device__ __forceinline__ bool mbar_test(unsigned bar, unsigned parity) {
    unsigned ok;
    asm volatile(
        "{\n.reg .pred P;\nmbarrier.test_wait.parity.shared::cta.b64 P, [%1], %2;\nselp.u32 %0, 1, 0, P;\n}\n"
        : "=r"(ok)
        : "r"(bar), "r"(parity)
        : "memory");
    return ok != 0;
}
__device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity) {
    asm volatile(
        "{\n.reg .pred P;\nW:\nmbarrier.try_wait.parity.shared::cta.b64 P, [%0], %1;\n@!P bra.uni W;\n}\n" ::"r"(bar),
        "r"(parity)
        : "memory");
}
// Adds n to a count of `done`: released (the phase's work before it visible first), or in
// forms 26 and 27 relaxed.
template <int MODE>
__device__ __forceinline__ void add_count(unsigned* at, unsigned n) {
    if (relaxed(MODE))
        asm volatile("red.relaxed.gpu.global.add.u32 [%0], %1;" ::"l"(at), "r"(n) : "memory");
    else
        asm volatile("red.release.gpu.global.add.u32 [%0], %1;" ::"l"(at), "r"(n) : "memory");
}
// Forms 30 and 31's records: each unit's 32 partial sums [unit of the layer, column], each
// strip's 32 outputs [strip of the layer, column]; a record is a value's f32 bits and the
// launch's epoch above them. A record left by an earlier launch has an earlier epoch, so
// none is ever cleared; the last block to leave a launch advances the epoch.
constexpr int LL_UNITS = 8192, LL_STRIPS = 2048;
__device__ unsigned long long ll_part[LL_UNITS * 32], ll_out[LL_STRIPS * 32];
__device__ unsigned ll_epoch = 1;
__device__ __forceinline__ unsigned long long ll_load(const unsigned long long* at) {
    unsigned long long v;
    asm volatile("ld.relaxed.gpu.global.b64 %0, [%1];" : "=l"(v) : "l"(at) : "memory");
    return v;
}
__device__ __forceinline__ void ll_store(unsigned long long* at, unsigned epoch, float x) {
    asm volatile("st.relaxed.gpu.global.b64 [%0], %1;" ::"l"(at), "l"((unsigned long long)epoch << 32 | __float_as_uint(x))
                 : "memory");
}
// The layer's strips before phase p's (ll_out's rows).
__device__ __forceinline__ int strips_before(const Layer& L, int p) {
    int n = 0;
    for (int q = 0; q < p; ++q) n += strips(L.m[q]);
    return n;
}
// Which of phase p - 1's outputs unit t reads: group g of 32 strips from strip 32 g (its
// chunk's rows; gate/up, after the norm, all of O's: group 0 of every strip).
__device__ __forceinline__ int input_group(const Layer& L, const Unit& t) {
    return t.p == 3 ? 0 : t.h % ((strips(L.m[t.p - 1]) + 31) / 32);
}
// Consumer thread ct's part of waiting for group g of phase p's outputs (16 records at
// most: all of O's 128 strips over 256 threads), all its loads in flight at once, loaded
// again until their flags say this launch; the sum of their values.
template <int MODE>
__device__ __forceinline__ float ll_inputs(const Layer& L, int p, int g, bool all, unsigned epoch, int ct) {
    const int first = all ? 0 : 32 * g, n = all ? strips(L.m[p]) : min(32, strips(L.m[p]) - first);
    const unsigned long long* rec = ll_out + size_t(strips_before(L, p) + first) * 32 + ct;
    unsigned pending = 0;
#pragma unroll
    for (int k = 0; k < 16; ++k)
        if (ct + 256 * k < 32 * n) pending |= 1u << k;
    float a = 0.f;
    while (pending) {
        unsigned long long v[16];
#pragma unroll
        for (int k = 0; k < 16; ++k) v[k] = pending >> k & 1 ? ll_load(rec + 256 * k) : 0ull;
#pragma unroll
        for (int k = 0; k < 16; ++k)
            if ((pending >> k & 1) && (!ll_waits(MODE) || unsigned(v[k] >> 32) == epoch)) {
                a += __uint_as_float(unsigned(v[k]));
                pending &= ~(1u << k);
            }
    }
    return a;
}
// The input warp's lane's part of waiting for group g of phase p's outputs (128 records at
// most: all of O's 128 strips over 32 lanes), 32 loads in flight at a time, loaded again
// (64 ns apart) until their flags say this launch; the sum of their values.
template <int MODE>
__device__ __forceinline__ float ll_inputs_warp(const Layer& L, int p, int g, bool all, unsigned epoch, int lane) {
    const int first = all ? 0 : 32 * g, n = all ? strips(L.m[p]) : min(32, strips(L.m[p]) - first);
    const unsigned long long* rec = ll_out + size_t(strips_before(L, p) + first) * 32 + lane;
    float a = 0.f;
    for (int b0 = 0; b0 < 32 * n; b0 += 32 * 32) {
        unsigned pending = 0;
#pragma unroll
        for (int k = 0; k < 32; ++k)
            if (b0 + lane + 32 * k < 32 * n) pending |= 1u << k;
        while (true) {
            // Every load issued before the first is looked at.
            unsigned long long v[32];
#pragma unroll
            for (int k = 0; k < 32; ++k) v[k] = pending >> k & 1 ? ll_load(rec + b0 + 32 * k) : 0ull;
#pragma unroll
            for (int k = 0; k < 32; ++k)
                if ((pending >> k & 1) && (!ll_waits(MODE) || unsigned(v[k] >> 32) == epoch)) {
                    a += __uint_as_float(unsigned(v[k]));
                    pending &= ~(1u << k);
                }
            if (!pending) break;
            __nanosleep(64);
        }
    }
    return a;
}
}  // namespace ring

template <int MODE>
__global__ void __launch_bounds__(ring::threads(MODE), 1)
    ring_flow(Layer L, const __grid_constant__ ring::Maps maps, float* act, unsigned* done) {
    using namespace ring;
    constexpr int SLOTS = slots(MODE), CONS = consumers(MODE), PIECES = UNIT_BYTES / 16 / (32 * CONS);
    extern __shared__ __align__(128) unsigned char smem[];
    const unsigned base = unsigned(__cvta_generic_to_shared(smem));
    const unsigned full = base + SLOTS * UNIT_BYTES, empty = full + 8 * SLOTS, consumed = empty + 8 * SLOTS,
                   inputs = consumed + 8 * SLOTS;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    int total = 0;
    for (int p = 0; p < 5; ++p) total += units(L.m[p]);
    // The launch before this one advanced it at its end.
    const unsigned epoch = ll(MODE) ? *reinterpret_cast<volatile unsigned*>(&ll_epoch) : 0u;
    if (threadIdx.x == 0) {
        for (int s = 0; s < SLOTS; ++s) {
            asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(full + 8 * s), "r"(cpasync(MODE) ? 32 : 1));
            asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(empty + 8 * s), "r"(signals(MODE) ? 1 : CONS));
            asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(consumed + 8 * s), "r"(CONS));
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(inputs + 8 * s));
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    if (warp == 0) {
        // The producer: unit i of this block into slot i % SLOTS, once its consumers freed
        // the slot's last round.
        int i = 0;
        for (int u = blockIdx.x; u < total; u += gridDim.x, ++i) {
            const int slot = i % SLOTS;
            if (i >= SLOTS) mbar_wait(empty + 8 * slot, unsigned((i / SLOTS - 1) & 1));
            const Unit t = unit<MODE>(L, u);
            const Matrix& m = L.m[t.p];
            const int r0 = t.h * ROWS, rows = min(ROWS, m.rows - r0);
            if (cpasync(MODE)) {
                // Copy q of the unit's 8 a row: lane l takes l, l + 32, ..., so that a
                // warp's 32 copies cover 4 whole rows of 128 bytes.
                for (int q = lane; q < rows * 8; q += 32) {
                    const int r = q / 8, k = q % 8;
                    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(base + slot * UNIT_BYTES + r * 128 + 16 * k),
                                 "l"(m.w + size_t(r0 + r) * m.cols4 + 8 * t.s + k)
                                 : "memory");
                }
                asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(full + 8 * slot) : "memory");
                continue;
            }
            if (contiguous(MODE)) {
                if (lane == 0) {
                    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(full + 8 * slot),
                                 "r"(UNIT_BYTES)
                                 : "memory");
                    asm volatile(
                        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                            base + slot * UNIT_BYTES),
                        "l"(m.w + (size_t(t.s) * chunks(m) + t.h) * (UNIT_BYTES / 16)), "r"(UNIT_BYTES), "r"(full + 8 * slot)
                        : "memory");
                }
                continue;
            }
            if (by_map(MODE)) {
                if (lane == 0) {
                    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(full + 8 * slot),
                                 "r"(UNIT_BYTES)
                                 : "memory");
                    asm volatile(
                        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], "
                        "[%4];" ::"r"(base + slot * UNIT_BYTES),
                        "l"(reinterpret_cast<unsigned long long>(&maps.m[t.p])), "r"(32 * t.s), "r"(r0), "r"(full + 8 * slot)
                        : "memory");
                }
                continue;
            }
            if (lane == 0)
                asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(full + 8 * slot), "r"(rows * 128)
                             : "memory");
            __syncwarp();
            for (int r = lane; r < rows; r += 32) {
                const int4* src = m.w + size_t(r0 + r) * m.cols4 + 8 * t.s;
                asm volatile(
                    "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], 128, [%2];" ::"r"(
                        base + slot * UNIT_BYTES + r * 128),
                    "l"(src), "r"(full + 8 * slot)
                    : "memory");
            }
        }
        return;
    }
    if (signals(MODE) && warp == 1 + CONS) {
        // The signalling warp's lane 0: unit i's consumers done, its slot freed, its count
        // added up with the units before it that count in the same counter, and released
        // when the next unit is not yet consumed or counts elsewhere.
        if (lane != 0) return;
        int i = 0, pending = -1;
        unsigned n = 0;
        for (int u = blockIdx.x; u < total; u += gridDim.x, ++i) {
            const int slot = i % SLOTS;
            mbar_wait(consumed + 8 * slot, unsigned((i / SLOTS) & 1));
            asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(empty + 8 * slot) : "memory");
            const int c = counter_of<MODE>(unit<MODE>(L, u));
            if (c != pending && n > 0) {
                add_count<MODE>(done + pending, n);
                n = 0;
            }
            pending = c;
            ++n;
            const int next = u + gridDim.x;
            const bool last_of_phase = next >= total || unit<MODE>(L, next).p != unit<MODE>(L, u).p;
            long long* const last_stamp = ring_stamps + (blockIdx.x * 5 + unit<MODE>(L, u).p) * STAMPS + 2;
            if (stamps(MODE) && releases_once(MODE) && last_of_phase) *last_stamp = now_ns();
            if (releases_once(MODE) ? next >= total || counter_of<MODE>(unit<MODE>(L, next)) != c
                                    : next >= total ||
                                          !mbar_test(consumed + 8 * ((i + 1) % SLOTS), unsigned(((i + 1) / SLOTS) & 1))) {
                add_count<MODE>(done + pending, n);
                n = 0;
            }
            if (stamps(MODE) && !releases_once(MODE) && last_of_phase) *last_stamp = now_ns();
        }
        if (atomicAdd(done + EXITS, 1u) == gridDim.x - 1) {
            for (int p = 0; p < COUNTERS; ++p) done[p] = 0;
            __threadfence();
        }
        return;
    }
    // Forms 30 and 31: the reducer warp, lane a column. For each strip whose last chunk is
    // this block's, the strip's partials (all in flight, loaded again until their flags say
    // this launch), added in chunk order, stored as the strip's outputs.
    constexpr int EXIT_THREADS = 32 * (CONS + ll(MODE) + prefetches(MODE));
    if (ll(MODE) && warp == 1 + CONS) {
        for (int u = blockIdx.x; u < total; u += gridDim.x) {
            const Unit t = unit<MODE>(L, u);
            const int ch = chunks(L.m[t.p]);
            if (t.h != ch - 1) continue;
            const unsigned long long* rec = ll_part + size_t(u - t.h) * 32 + lane;
            float v[14];
            unsigned pending = (1u << ch) - 1;
            while (pending) {
                unsigned long long x[14];
#pragma unroll
                for (int c = 0; c < 14; ++c) x[c] = pending >> c & 1 ? ll_load(rec + 32 * c) : 0ull;
#pragma unroll
                for (int c = 0; c < 14; ++c)
                    if ((pending >> c & 1) && (!ll_waits(MODE) || unsigned(x[c] >> 32) == epoch)) {
                        v[c] = __uint_as_float(unsigned(x[c]));
                        pending &= ~(1u << c);
                    }
                if (prefetches(MODE) && pending) __nanosleep(64);
            }
            float sum = 0.f;
#pragma unroll
            for (int c = 0; c < 14; ++c)
                if (c < ch) sum += v[c];
            ll_store(ll_out + size_t(strips_before(L, t.p) + t.s) * 32 + lane, epoch, sum);
        }
        asm volatile("bar.sync 2, %0;" ::"n"(EXIT_THREADS) : "memory");
        return;
    }
    // Forms 32 and 33: the input warp. Unit i's inputs waited for (those of a group it has
    // not seen), then the slot's `inputs` barrier arrived at, once the slot's round before
    // is consumed (its `empty` barrier, as the producer waits).
    if (prefetches(MODE) && warp == 2 + CONS) {
        int seen_phase = 0, i = 0;
        unsigned seen_groups = 0;
        float a = 0.f;
        for (int u = blockIdx.x; u < total; u += gridDim.x, ++i) {
            const int slot = i % SLOTS;
            if (i >= SLOTS) mbar_wait(empty + 8 * slot, unsigned((i / SLOTS - 1) & 1));
            const Unit t = unit<MODE>(L, u);
            if (t.p > 0) {
                const int g = input_group(L, t);
                if (t.p != seen_phase) {
                    seen_phase = t.p;
                    seen_groups = 0;
                }
                if (!(seen_groups >> g & 1)) {
                    a += ll_inputs_warp<MODE>(L, t.p - 1, g, t.p == 3, epoch, lane);
                    seen_groups |= 1u << g;
                }
            }
            __syncwarp();
            if (lane == 0) asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(inputs + 8 * slot) : "memory");
        }
        // Kept, so that the loads are not dropped: a sum that is never this.
        if (a == -1.f) act[lane] = a;
        asm volatile("bar.sync 2, %0;" ::"n"(EXIT_THREADS) : "memory");
        return;
    }
    // The consumers: 256 threads, 64 bytes of a 16 KB unit each.
    const int ct = threadIdx.x - 32;
    // Forms 30 and 31: the phase whose groups of inputs `seen` records (bit g: group g).
    int seen_phase = 0;
    unsigned seen_groups = 0;
    unsigned acc = 0;
    float a = 0.f;
    int ready = 0, read_for = 0, i = 0, mine = 0, ready_chunk = -1, seen = -1;
    long long* const stamp = stamps(MODE) && ct == 0 ? ring_stamps + blockIdx.x * 5 * STAMPS : nullptr;
    if (stamp) stamp[0] = stamp[1] = now_ns();
    // Until counter c of `done` reaches need (ct 0 polls, the consumers meet).
    const auto wait_for = [&](int c, unsigned need) {
        if (ct == 0) {
            unsigned n;
            do {
                asm volatile("ld.acquire.gpu.u32 %0, [%1];" : "=r"(n) : "l"(done + c) : "memory");
            } while (n < need);
        }
        asm volatile("bar.sync 1, %0;" ::"n"(32 * CONS) : "memory");
    };
    for (int u = blockIdx.x; u < total; u += gridDim.x, ++i) {
        const int slot = i % SLOTS;
        const Unit t = unit<MODE>(L, u);
        if (narrow(MODE) && (t.p == 2 || t.p == 4)) {
            // O's chunk h: attention's strips 16 h .. 16 h + 15; down's: gate/up's 64 h ..
            // 64 h + 63 (chunk-major, so h only grows within the phase).
            if (t.p > ready || t.h > ready_chunk) {
                const Matrix& before = L.m[t.p - 1];
                const int width = t.p == 2 ? 16 : 64, first = width * t.h;
                const int in_group = min(width, strips(before) - first);
                wait_for((t.p == 2 ? ATTN_GROUPS : GATE_UP_GROUPS) + t.h, unsigned(in_group * chunks(before)));
                ready = t.p;
                ready_chunk = t.h;
            }
        } else if (waits(MODE) && t.p > ready) {
            ready = t.p;
            ready_chunk = -1;
            if (stamp) stamp[t.p * STAMPS] = now_ns();
            wait_for(t.p - 1, unsigned(units(L.m[t.p - 1])));
            if (stamp) stamp[t.p * STAMPS + 1] = now_ns();
        }
        if (prefetches(MODE)) mbar_wait(inputs + 8 * slot, unsigned((i / SLOTS) & 1));
        if (ll(MODE) && !prefetches(MODE) && t.p > 0) {
            const int g = input_group(L, t);
            if (t.p != seen_phase) {
                seen_phase = t.p;
                seen_groups = 0;
            }
            if (!(seen_groups >> g & 1)) {
                a += ll_inputs<MODE>(L, t.p - 1, g, t.p == 3, epoch, ct);
                asm volatile("bar.sync 1, %0;" ::"n"(32 * CONS) : "memory");
                seen_groups |= 1u << g;
            }
        }
        if ((t.p == 1 || t.p == 3) && !(read_for & (1 << t.p))) {
            for (int j = ct; j < ACT; j += 32 * CONS) a += act[j];
            read_for |= 1 << t.p;
        }
        // Forms 57, 59 and 60: the unit's x loaded while its slot fills (the matrices' rows
        // are whole units of 128, so every piece has its x).
        uint4 xr[PIECES];
        if (x_ahead(MODE) && t.p != 1)
#pragma unroll
            for (int k = 0; k < PIECES; ++k) xr[k] = x8(L.x + (size_t(t.h) * ROWS + (ct + 32 * CONS * k) / 8) * 8);
        mbar_wait(full + 8 * slot, unsigned((i / SLOTS) & 1));
        if (stamp && t.p != seen) {
            stamp[t.p * STAMPS + 3] = now_ns();
            seen = t.p;
        }
        const Matrix& m = L.m[t.p];
        const int rows = min(ROWS, m.rows - t.h * ROWS);
        if (x_ahead(MODE) && t.p != 1) {
            // Every piece's words loaded before any is decoded (a box arrives whole, rows
            // past the matrix as zeros), so that the loads' latencies overlap.
            unsigned v[PIECES][4];
#pragma unroll
            for (int k = 0; k < PIECES; ++k)
                asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                             : "=r"(v[k][0]), "=r"(v[k][1]), "=r"(v[k][2]), "=r"(v[k][3])
                             : "r"(base + slot * UNIT_BYTES + (ct + 32 * CONS * k) * 16));
#pragma unroll
            for (int k = 0; k < PIECES; ++k) acc ^= gemv_row(v[k], xr[k]);
        } else
#pragma unroll
        for (int k = 0; k < PIECES; ++k) {
            const int off = (ct + 32 * CONS * k) * 16;  // 16 bytes of the unit's rows x 128
            if (off < rows * 128) {
                unsigned v[4];
                asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                             : "=r"(v[0]), "=r"(v[1]), "=r"(v[2]), "=r"(v[3])
                             : "r"(base + slot * UNIT_BYTES + off));
                if (math(MODE) && t.p != 1)
                    acc ^= gemv_row(v, x8(L.x + (size_t(t.h) * ROWS + off / 128) * 8));
                else
                    acc ^= v[0] ^ v[1] ^ v[2] ^ v[3];
            }
        }
        __syncwarp();
        if (lane == 0)
            asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"((signals(MODE) ? consumed : empty) + 8 * slot)
                         : "memory");
        if (ll(MODE) && ct < 32) ll_store(ll_part + size_t(u) * 32 + ct, epoch, float(acc & 0xffffu));
        if (signals(MODE)) continue;
        if (counts_a_phase(MODE)) {
            ++mine;
            if (u + int(gridDim.x) >= total || unit<MODE>(L, u + gridDim.x).p != t.p) {
                asm volatile("bar.sync 1, %0;" ::"n"(32 * CONS) : "memory");
                if (ct == 0) asm volatile("red.release.gpu.global.add.u32 [%0], %1;" ::"l"(done + t.p), "r"(mine) : "memory");
                mine = 0;
            }
        } else if (waits(MODE)) {
            asm volatile("bar.sync 1, %0;" ::"n"(32 * CONS) : "memory");
            if (ct == 0) asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(done + t.p) : "memory");
        }
    }
    if (ct < 256 && blockIdx.x * 256 + ct < ACT) act[blockIdx.x * 256 + ct] = a * 1e-9f + float(acc & 1u) * 1e-9f;
    // In forms 19 and 20 the signalling warp, the last to count, counts the exit.
    if (signals(MODE)) return;
    asm volatile("bar.sync 2, %0;" ::"n"(EXIT_THREADS) : "memory");
    if (ct == 0 && atomicAdd(done + EXITS, 1u) == gridDim.x - 1) {
        for (int p = 0; p < COUNTERS; ++p) done[p] = 0;
        if (ll(MODE)) ll_epoch = epoch + 1;
        __threadfence();
    }
}

// Forms 52 to 54: the layer's dependencies through a hub a cluster (bench/explore/fence:
// a gpu-scope release waits for the bulk copies its SM has in flight, so here no SM that
// streams releases anything at gpu scope). Clusters of 8 blocks, one an SM: rank 0 the
// hub, which streams nothing; ranks 1 to 7 stream their units through the ring of forms
// 17 and 19 (8 slots of 16 KB by tensor map, a producer warp, 8 consumer warps). Each
// phase's strips are dealt to the clusters in ranges, and a cluster's units (strip by
// chunk) to its 7 streamers in turn. A streamer's consumers meet after each unit and send
// its 32 partial sums to the hub's shared memory by `st.async` (whose mbarrier
// complete-tx releases them at cluster scope: no fence on the streaming SM). The hub sums
// each strip's chunks, stores the strip's 32 outputs (f16) to global memory, and releases
// its cluster's count of the phase (its SM idle: a cheap fence); once every cluster has
// counted (an acquiring poll), it copies the phase's whole output to its streamers'
// shared memory by one multicast bulk copy a chunk, whose complete-tx their consumers wait
// for before the next phase's units. The weights stream on across all of it.
//   52  as above (a correct layer's dependencies)
//   53  52 with the hubs' counts relaxed (not correct: what the hubs' releases cost)
//   54  52 with no phase waits (the streamers' sends and the hubs' sums and stores only)
//   55  52 with a B = 1 GEMV's arithmetic in the consumers; 56 the same as 53
//   61  55 with 16 consumer warps (2 of a unit's 16-byte pieces a thread), as forms 58 to
//       60 give the ring
//   63  52 with each matrix stored unit by unit, a unit one 1-D bulk copy (ring forms 62,
//       64 and 66); 65 is 61 so
// Every wait gives up after about 2^24 polls and marks hub::failed, so that a fault here
// ends the launch instead of hanging it.
namespace hub {
constexpr int CLUSTER = 8, STREAMERS = CLUSTER - 1, SLOTS = 8;
__host__ __device__ constexpr int consumers(int mode) { return mode == 61 || mode == 65 ? 16 : 8; }
__host__ __device__ constexpr bool contiguous(int mode) { return mode == 63 || mode == 65; }
__host__ __device__ constexpr int threads(int mode) { return 32 * (1 + consumers(mode)); }
constexpr int MAX_IN = 28672;      // a phase's output, f16 (gate/up's 28672 columns)
constexpr int MAX_RECORDS = 1024;  // a cluster's units in a layer (432 at 16 clusters)
constexpr int MAX_CLUSTERS = 16;
constexpr unsigned RING = SLOTS * ring::UNIT_BYTES, INPUT = RING, BARS = INPUT + MAX_IN * 2;
// full[SLOTS], empty[SLOTS], input_ready[5], part_ready[5]
constexpr unsigned SMEM = BARS + 8 * (2 * SLOTS + 10);
static_assert(MAX_RECORDS * 128 <= RING, "the hub keeps its records where a streamer's ring is");
__device__ unsigned failed;
__host__ __device__ constexpr bool waits(int mode) { return mode != 54; }
__host__ __device__ constexpr bool relaxed(int mode) { return mode == 53 || mode == 56; }
// 55 and 56: 52 and 53 with forms 46 to 51's GEMV arithmetic, x from the phase's input as
// the hub copied it (phase 0: Layer::x), at the unit's rows of K (wrapped: the model's
// matrices do not chain).
__host__ __device__ constexpr bool math(int mode) { return mode == 55 || mode == 56 || mode == 61 || mode == 65; }

// Phase p's strips [s0, s1) of cluster c of nc, its units n = (s1 - s0) chunks.
struct Share {
    int s0, s1, chunks, n;
};
__device__ __forceinline__ Share share(const Layer& L, int p, int c, int nc) {
    const int s = ring::strips(L.m[p]);
    const int s0 = int((long long)s * c / nc), s1 = int((long long)s * (c + 1) / nc), ch = ring::chunks(L.m[p]);
    return {s0, s1, ch, (s1 - s0) * ch};
}
// Cluster: acquiring at cluster scope, for records other blocks stored by st.async.
template <bool CLUSTER_SCOPE = false>
__device__ __forceinline__ bool try_wait(unsigned bar, unsigned parity) {
    unsigned ok;
    if (CLUSTER_SCOPE)
        asm volatile(
            "{\n.reg .pred P;\nmbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 P, [%1], %2;\nselp.u32 %0, 1, 0, P;\n}\n"
            : "=r"(ok)
            : "r"(bar), "r"(parity)
            : "memory");
    else
        asm volatile(
            "{\n.reg .pred P;\nmbarrier.try_wait.parity.shared::cta.b64 P, [%1], %2;\nselp.u32 %0, 1, 0, P;\n}\n"
            : "=r"(ok)
            : "r"(bar), "r"(parity)
            : "memory");
    return ok != 0;
}
// An mbarrier's phase `parity`, or hub::failed after about 2^24 tries.
template <bool CLUSTER_SCOPE = false>
__device__ __forceinline__ void wait(unsigned bar, unsigned parity) {
    for (int i = 0; !try_wait<CLUSTER_SCOPE>(bar, parity); ++i)
        if (i == 1 << 24) {
            atomicExch(&failed, 1u);
            return;
        }
}
__device__ __forceinline__ unsigned remote(unsigned local, unsigned rank) {
    unsigned r;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(local), "r"(rank));
    return r;
}
}  // namespace hub

template <int MODE>
__global__ void __launch_bounds__(hub::threads(MODE), 1)
    hub_flow(Layer L, const __grid_constant__ ring::Maps maps, __half* out, unsigned* done) {
    using namespace hub;
    constexpr int CONSUMERS = consumers(MODE), THREADS = threads(MODE), PIECES = ring::UNIT_BYTES / 16 / (32 * CONSUMERS);
    extern __shared__ __align__(128) unsigned char hub_smem[];
    unsigned char* const smem = hub_smem;
    const unsigned base = unsigned(__cvta_generic_to_shared(smem));
    const unsigned full = base + BARS, empty = full + 8 * SLOTS, input_ready = empty + 8 * SLOTS,
                   part_ready = input_ready + 8 * 5;
    unsigned rank, cid, ncl;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
    asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(cid));
    asm volatile("mov.u32 %0, %%nclusterid.x;" : "=r"(ncl));
    const int c = int(cid), nc = int(ncl);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (threadIdx.x == 0) {
        for (int s = 0; s < SLOTS; ++s) {
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(full + 8 * s));
            asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(empty + 8 * s), "r"(CONSUMERS));
        }
        for (int p = 0; p < 5; ++p) {
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(input_ready + 8 * p));
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(part_ready + 8 * p));
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        // What each barrier waits for: a streamer the hub's copies of phases 0 to 3's
        // outputs (the inputs of 1 to 4), the hub its streamers' records of each phase.
        for (int p = 0; p < 5; ++p) {
            if (rank != 0 && p >= 1 && waits(MODE)) {
                const int n = ring::strips(L.m[p - 1]) * 32 * 2;
                asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(input_ready + 8 * p), "r"(n)
                             : "memory");
            }
            if (rank == 0)
                asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(part_ready + 8 * p),
                             "r"(share(L, p, c, nc).n * 128)
                             : "memory");
        }
    }
    // Every block's barriers are set before any other block's copies reach them.
    asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
    if (rank == 0) {
        // The hub: phase p's records summed by strip, stored, counted; then, once every
        // cluster has counted, the phase's output copied to the streamers.
        const float* rec = reinterpret_cast<const float*>(smem);
        int first = 0;
        for (int p = 0; p < 5; ++p) {
            const Share sh = share(L, p, c, nc);
            if (threadIdx.x == 0) wait<true>(part_ready + 8 * p, 0);
            __syncthreads();
            __half* const o = out + size_t(p) * MAX_IN;
            for (int i = threadIdx.x; i < (sh.s1 - sh.s0) * 32; i += THREADS) {
                const int s = i / 32, col = i % 32;
                float a = 0.f;
                for (int h = 0; h < sh.chunks; ++h) a += rec[(first + s * sh.chunks + h) * 32 + col];
                o[(sh.s0 + s) * 32 + col] = __float2half(a);
            }
            first += sh.n;
            __syncthreads();
            if (threadIdx.x == 0) {
                if (relaxed(MODE))
                    asm volatile("red.relaxed.gpu.global.add.u32 [%0], 1;" ::"l"(done + p) : "memory");
                else
                    asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(done + p) : "memory");
                if (p < 4 && waits(MODE)) {
                    unsigned n = 0;
                    for (int i = 0; i < 1 << 24; ++i) {
                        asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(n) : "l"(done + p) : "memory");
                        if (n >= unsigned(nc)) break;
                    }
                    if (n < unsigned(nc)) atomicExch(&failed, 1u);
                    // The copies read what the acquire ordered, through the async proxy.
                    asm volatile("fence.proxy.async.global;" ::: "memory");
                    const int bytes = ring::strips(L.m[p]) * 32 * 2;
                    for (int off = 0; off < bytes; off += 8192) {
                        const int size = min(8192, bytes - off);
                        asm volatile(
                            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1], "
                            "%2, [%3], %4;" ::"r"(base + INPUT + off),
                            "l"(reinterpret_cast<const char*>(o) + off), "r"(size), "r"(input_ready + 8 * (p + 1)),
                            "h"((unsigned short)0xfe)
                            : "memory");
                    }
                }
            }
        }
        __syncthreads();
        if (threadIdx.x == 0 && atomicAdd(done + 5, 1u) == unsigned(nc) - 1) {
            for (int p = 0; p < 6; ++p) done[p] = 0;
            __threadfence();
        }
        return;
    }
    // A streamer: its units are the cluster's units r, r + 7, ... of each phase.
    const int r = int(rank) - 1;
    if (warp == 0) {
        if (lane != 0) return;
        int i = 0;
        for (int p = 0; p < 5; ++p) {
            const Share sh = share(L, p, c, nc);
            for (int j = r; j < sh.n; j += STREAMERS, ++i) {
                const int slot = i % SLOTS;
                if (i >= SLOTS) wait(empty + 8 * slot, unsigned((i / SLOTS - 1) & 1));
                asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(full + 8 * slot), "r"(ring::UNIT_BYTES)
                             : "memory");
                if (contiguous(MODE)) {
                    // Strip sh.s0 + j / chunks, chunk j % chunks: unit (s0 * chunks + j) of
                    // the matrix stored unit by unit.
                    const int4* src = L.m[p].w + (size_t(sh.s0) * sh.chunks + j) * (ring::UNIT_BYTES / 16);
                    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                                     base + slot * ring::UNIT_BYTES),
                                 "l"(src), "r"(ring::UNIT_BYTES), "r"(full + 8 * slot)
                                 : "memory");
                    continue;
                }
                asm volatile(
                    "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], "
                    "[%4];" ::"r"(base + slot * ring::UNIT_BYTES),
                    "l"(reinterpret_cast<unsigned long long>(&maps.m[p])), "r"(32 * (sh.s0 + j / sh.chunks)),
                    "r"(ring::ROWS * (j % sh.chunks)), "r"(full + 8 * slot)
                    : "memory");
            }
        }
        return;
    }
    // The consumers: 256 threads, 64 bytes of a unit each; after each unit they meet, and
    // warp 1's lanes 0 to 7 send its 32 partial sums (16 bytes a lane) to the hub.
    const int ct = threadIdx.x - 32;
    const unsigned hub_rec = remote(base, 0), hub_part = remote(part_ready, 0);
    unsigned acc = 0;
    int i = 0, first = 0;
    for (int p = 0; p < 5; ++p) {
        const Share sh = share(L, p, c, nc);
        if (p >= 1 && waits(MODE)) wait(input_ready + 8 * p, 0);
        // Something of the phase's input, so that its copy is used.
        if (p >= 1 && waits(MODE))
            acc += reinterpret_cast<const unsigned*>(smem + INPUT)[ct % (ring::strips(L.m[p - 1]) * 16)];
        for (int j = r; j < sh.n; j += STREAMERS, ++i) {
            const int slot = i % SLOTS;
            wait(full + 8 * slot, unsigned((i / SLOTS) & 1));
#pragma unroll
            for (int k = 0; k < PIECES; ++k) {
                const int piece = ct + 32 * CONSUMERS * k;
                unsigned v[4];
                asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                             : "=r"(v[0]), "=r"(v[1]), "=r"(v[2]), "=r"(v[3])
                             : "r"(base + slot * ring::UNIT_BYTES + piece * 16));
                if (math(MODE) && p != 1) {
                    // Row piece / 8 of the unit: K from (chunk rows + row) * 8.
                    const int kx = ((j % sh.chunks) * ring::ROWS + piece / 8) * 8;
                    const __half* x = p == 0 ? L.x + kx
                                             : reinterpret_cast<const __half*>(smem + INPUT) + kx % (ring::strips(L.m[p - 1]) * 32);
                    acc ^= ring::gemv_row(v, ring::x8(x));
                } else {
                    acc ^= v[0] ^ v[1] ^ v[2] ^ v[3];
                }
            }
            __syncwarp();
            if (lane == 0) asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(empty + 8 * slot) : "memory");
            asm volatile("bar.sync 1, %0;" ::"n"(32 * CONSUMERS) : "memory");
            if (ct < 8) {
                const float x = float(acc & 0xffu);
                asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.f32 [%0], {%1, %2, %3, %4}, [%5];" ::"r"(
                                 hub_rec + unsigned((first + j) * 128 + ct * 16)),
                             "f"(x), "f"(x), "f"(x), "f"(x), "r"(hub_part + 8 * p)
                             : "memory");
            }
        }
        first += sh.n;
    }
}

typedef CUresult (*EncodeTiled)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

// Matrix m as a tensor map of 32-bit words, boxes of ring::ROWS rows by 32 words, unswizzled.
static CUtensorMap map_of(const Matrix& m) {
    static EncodeTiled encode = [] {
        void* f = nullptr;
        cudaDriverEntryPointQueryResult q;
        CHECK(cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", &f, cudaEnableDefault, &q));
        return reinterpret_cast<EncodeTiled>(f);
    }();
    CUtensorMap t;
    const cuuint64_t dims[2] = {cuuint64_t(m.cols4) * 4, cuuint64_t(m.rows)}, strides[1] = {cuuint64_t(m.cols4) * 16};
    const cuuint32_t box[2] = {32, ring::ROWS}, steps[2] = {1, 1};
    const CUresult r = encode(&t, CU_TENSOR_MAP_DATA_TYPE_UINT32, 2, const_cast<int4*>(m.w), dims, strides, box, steps,
                              CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                              CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
        std::fprintf(stderr, "cuTensorMapEncodeTiled: %d\n", int(r));
        std::exit(1);
    }
    return t;
}

// `mega_chain` runs every form twice, then forms 23 to 27 (24 to 27 also timed as graphs);
// `mega_chain 23` forms 17 and 19 once, then 23 to 27.
int main(int argc, char** argv) {
    const bool only_23 = argc > 1 && std::string(argv[1]) == "23";
    const bool only_28 = argc > 1 && std::string(argv[1]) == "28";
    const bool only_30 = argc > 1 && std::string(argv[1]) == "30";
    const bool only_34 = argc > 1 && std::string(argv[1]) == "34";
    const bool only_52 = argc > 1 && std::string(argv[1]) == "52";
    const bool only_57 = argc > 1 && std::string(argv[1]) == "57";
    const int shapes[5][2] = {{512, 6144}, {512, 2048}, {512, 4096}, {512, 28672}, {1792, 4096}};  // rows x words
    constexpr int LAYERS = 4;
    std::vector<Layer> layers(LAYERS);
    size_t bytes = 0;
    for (auto& l : layers)
        for (int p = 0; p < 5; ++p) {
            int4* w;
            const size_t n = size_t(shapes[p][0]) * shapes[p][1] * 4;
            CHECK(cudaMalloc(&w, n));
            CHECK(cudaMemset(w, p + 1, n));
            l.m[p] = {w, shapes[p][0], shapes[p][1] / 4};
            bytes += n;
        }
    __half* xh;  // forms 46 to 51's x: 1.05 a value (0x3c3c)
    CHECK(cudaMalloc(&xh, 16384 * sizeof(__half)));
    CHECK(cudaMemset(xh, 0x3c, 16384 * sizeof(__half)));
    for (auto& l : layers) l.x = xh;
    std::vector<ring::Maps> maps(LAYERS);
    for (int l = 0; l < LAYERS; ++l)
        for (int p = 0; p < 5; ++p) maps[l].m[p] = map_of(layers[l].m[p]);
    float* act[8];
    for (auto& a : act) {
        CHECK(cudaMalloc(&a, ACT * sizeof(float)));
        CHECK(cudaMemset(a, 0, ACT * sizeof(float)));
    }
    unsigned* bar;
    CHECK(cudaMalloc(&bar, 8));
    CHECK(cudaMemset(bar, 0, 8));
    unsigned* done;
    CHECK(cudaMalloc(&done, ring::COUNTERS * sizeof(unsigned)));
    CHECK(cudaMemset(done, 0, ring::COUNTERS * sizeof(unsigned)));
    int sms;
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    int per_sm;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, mega<8>, 256, 0));
    int per_sm_flow;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm_flow, flow<12>, 256, 0));
    per_sm = std::min(per_sm, per_sm_flow);
    const int grid = sms * std::min(per_sm, 2);
    std::printf("weights and KV %.0f MB over %d layers (%.1f MB a layer); persistent grid %d; us a layer (median of 50 replays of %d layers)\n",
                bytes / 1e6, LAYERS, bytes / 1e6 / LAYERS, grid, LAYERS);
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    // Each ring form's launch, its shared memory allowed first.
    auto ring_form = [&](auto mode) {
        constexpr int MODE = decltype(mode)::value;
        CHECK(cudaFuncSetAttribute(ring_flow<MODE>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(ring::smem(MODE))));
        return [=](const Layer& l, const ring::Maps& lm) {
            ring_flow<MODE><<<sms, ring::threads(MODE), ring::smem(MODE), s>>>(l, lm, act[0], done);
        };
    };
    using std::integral_constant;
    const auto ring14 = ring_form(integral_constant<int, 14>{});
    const auto ring15 = ring_form(integral_constant<int, 15>{});
    const auto ring16 = ring_form(integral_constant<int, 16>{});
    const auto ring17 = ring_form(integral_constant<int, 17>{});
    const auto ring18 = ring_form(integral_constant<int, 18>{});
    const auto ring19 = ring_form(integral_constant<int, 19>{});
    const auto ring20 = ring_form(integral_constant<int, 20>{});
    const auto ring21 = ring_form(integral_constant<int, 21>{});
    const auto ring22 = ring_form(integral_constant<int, 22>{});
    const auto ring23 = ring_form(integral_constant<int, 23>{});
    const auto ring24 = ring_form(integral_constant<int, 24>{});
    const auto ring25 = ring_form(integral_constant<int, 25>{});
    const auto ring26 = ring_form(integral_constant<int, 26>{});
    const auto ring27 = ring_form(integral_constant<int, 27>{});
    const auto ring28 = ring_form(integral_constant<int, 28>{});
    const auto ring29 = ring_form(integral_constant<int, 29>{});
    const auto ring30 = ring_form(integral_constant<int, 30>{});
    const auto ring31 = ring_form(integral_constant<int, 31>{});
    const auto ring32 = ring_form(integral_constant<int, 32>{});
    const auto ring33 = ring_form(integral_constant<int, 33>{});
    auto run = [&](const char* name, auto body) {
        const float us = graph_us_a_layer(s, LAYERS, [&](int l) { body(layers[l], maps[l]); });
        std::printf("%s: %.1f us a layer (%.2f TB/s)\n", name, us, bytes / LAYERS / (us * 1e-6) / 1e12);
    };
    auto strips = [](const Matrix& m) { return dim3((m.cols4 + 7) / 8); };
    if (only_30) {
        int n_units = 0, n_strips = 0;
        for (int p = 0; p < 5; ++p) {
            const int st = (shapes[p][1] / 4 + 7) / 8;
            n_strips += st;
            n_units += st * ((shapes[p][0] + ring::ROWS - 1) / ring::ROWS);
        }
        if (n_units > ring::LL_UNITS || n_strips > ring::LL_STRIPS) {
            std::fprintf(stderr, "%d units, %d strips: past ll_part's or ll_out's rows\n", n_units, n_strips);
            return 1;
        }
        for (int rep = 0; rep < 2; ++rep) {
            run("17: as 16 with no phase waits", ring17);
            run("28: as 19, relaxed counts (not a correct layer: nothing orders the outputs)", ring28);
            run("30: as 17, outputs passed as flagged records (LL), each unit waiting for its inputs' flags", ring30);
            run("31: as 30, the records loaded once whatever their flags (not a correct layer)", ring31);
            run("32: as 30, an input warp waiting for the inputs up to the ring's depth ahead", ring32);
            run("33: as 32, the records loaded once whatever their flags (not a correct layer)", ring33);
        }
        CHECK(cudaDeviceSynchronize());
        return 0;
    }
    if (only_52 || only_57) {
        // Clusters of 8, as many as run at once (at most 16): every hub waits for all.
        __half* hub_out;
        CHECK(cudaMalloc(&hub_out, 5 * hub::MAX_IN * sizeof(__half)));
        unsigned* hub_done;
        CHECK(cudaMalloc(&hub_done, 8 * sizeof(unsigned)));
        CHECK(cudaMemset(hub_done, 0, 8 * sizeof(unsigned)));
        cudaLaunchAttribute cluster[1];
        cluster[0].id = cudaLaunchAttributeClusterDimension;
        cluster[0].val.clusterDim.x = hub::CLUSTER;
        cluster[0].val.clusterDim.y = cluster[0].val.clusterDim.z = 1;
        auto hub_form = [&](auto mode) {
            constexpr int MODE = decltype(mode)::value;
            CHECK(cudaFuncSetAttribute(hub_flow<MODE>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(hub::SMEM)));
            cudaLaunchConfig_t cfg = {};
            cfg.gridDim = dim3(hub::CLUSTER * hub::MAX_CLUSTERS);
            cfg.blockDim = dim3(hub::threads(MODE));
            cfg.dynamicSmemBytes = hub::SMEM;
            cfg.stream = s;
            cfg.attrs = cluster;
            cfg.numAttrs = 1;
            int most = 0;
            CHECK(cudaOccupancyMaxActiveClusters(&most, hub_flow<MODE>, &cfg));
            const int nc = std::min(most, hub::MAX_CLUSTERS);
            // Fewer than 7 clusters give a hub more records than its ring holds (MAX_RECORDS).
            if (nc < 7) {
                std::fprintf(stderr, "hub form %d: %d clusters of %d fit, 7 needed\n", MODE, nc, hub::CLUSTER);
                std::exit(1);
            }
            cfg.gridDim = dim3(hub::CLUSTER * nc);
            std::printf("form %d: %d clusters of %d (%d blocks stream)\n", MODE, nc, hub::CLUSTER, nc * hub::STREAMERS);
            return [=](const Layer& l, const ring::Maps& lm) { CHECK(cudaLaunchKernelEx(&cfg, hub_flow<MODE>, l, lm, hub_out, hub_done)); };
        };
        const auto hub52 = hub_form(integral_constant<int, 52>{});
        const auto hub53 = hub_form(integral_constant<int, 53>{});
        const auto hub54 = hub_form(integral_constant<int, 54>{});
        const auto hub55 = hub_form(integral_constant<int, 55>{});
        const auto hub56 = hub_form(integral_constant<int, 56>{});
        const auto hub61 = hub_form(integral_constant<int, 61>{});
        const auto hub63 = hub_form(integral_constant<int, 63>{});
        const auto hub65 = hub_form(integral_constant<int, 65>{});
        const auto ring46 = ring_form(integral_constant<int, 46>{});
        const auto ring47 = ring_form(integral_constant<int, 47>{});
        const auto ring48 = ring_form(integral_constant<int, 48>{});
        const auto ring57 = ring_form(integral_constant<int, 57>{});
        const auto ring58 = ring_form(integral_constant<int, 58>{});
        const auto ring59 = ring_form(integral_constant<int, 59>{});
        const auto ring60 = ring_form(integral_constant<int, 60>{});
        const auto ring62 = ring_form(integral_constant<int, 62>{});
        const auto ring64 = ring_form(integral_constant<int, 64>{});
        const auto ring66 = ring_form(integral_constant<int, 66>{});
        for (int rep = 0; rep < (only_57 ? 2 : 0); ++rep) {
            run("17: 8 slots, no phase waits (the reads alone)", ring17);
            run("46: 17 with a B = 1 GEMV's arithmetic, 8 consumer warps", ring46);
            run("57: 46 with each unit's x loaded before its slot's wait", ring57);
            run("58: 46 with 16 consumer warps", ring58);
            run("59: 57 with 16 consumer warps", ring59);
            run("19: 8 slots, a signalling warp's released counts", ring19);
            run("47: 19 with the arithmetic", ring47);
            run("60: 59 with 19's released counts", ring60);
            run("52: a hub a cluster, released counts", hub52);
            run("55: 52 with the arithmetic", hub55);
            run("61: 55 with 16 consumer warps", hub61);
            run("62: 17 on matrices stored unit by unit (a unit one 16 KB bulk copy)", ring62);
            run("64: 59 so", ring64);
            run("66: 60 so (released counts)", ring66);
            run("63: 52 so (a hub a cluster)", hub63);
            run("65: 61 so", hub65);
        }
        for (int rep = 0; rep < (only_52 ? 2 : 0); ++rep) {
            run("17: 8 slots, no phase waits", ring17);
            run("19: 8 slots, a signalling warp's released counts", ring19);
            run("28: 8 slots, relaxed counts (not correct)", ring28);
            run("52: a hub a cluster, released counts", hub52);
            run("53: 52 with the hubs' counts relaxed (not correct)", hub53);
            run("54: 52 with no phase waits", hub54);
            run("46: 17 with a B = 1 GEMV's arithmetic", ring46);
            run("48: 28 (relaxed counts, not correct) with the arithmetic", ring48);
            run("55: 52 with the arithmetic", hub55);
            run("56: 53 (the hubs' counts relaxed, not correct) with the arithmetic", hub56);
        }
        CHECK(cudaDeviceSynchronize());
        unsigned failed = 0;
        CHECK(cudaMemcpyFromSymbol(&failed, hub::failed, sizeof failed));
        if (failed) std::printf("a hub form gave up a wait (hub::failed): its times are not a layer's\n");
        return 0;
    }
    if (only_34) {
        const auto ring34 = ring_form(integral_constant<int, 34>{});
        const auto ring35 = ring_form(integral_constant<int, 35>{});
        const auto ring36 = ring_form(integral_constant<int, 36>{});
        const auto ring37 = ring_form(integral_constant<int, 37>{});
        const auto ring38 = ring_form(integral_constant<int, 38>{});
        const auto ring39 = ring_form(integral_constant<int, 39>{});
        const auto ring40 = ring_form(integral_constant<int, 40>{});
        const auto ring41 = ring_form(integral_constant<int, 41>{});
        const auto ring42 = ring_form(integral_constant<int, 42>{});
        const auto ring43 = ring_form(integral_constant<int, 43>{});
        const auto ring44 = ring_form(integral_constant<int, 44>{});
        const auto ring45 = ring_form(integral_constant<int, 45>{});
        const auto ring46 = ring_form(integral_constant<int, 46>{});
        const auto ring47 = ring_form(integral_constant<int, 47>{});
        const auto ring48 = ring_form(integral_constant<int, 48>{});
        const auto ring49 = ring_form(integral_constant<int, 49>{});
        const auto ring50 = ring_form(integral_constant<int, 50>{});
        const auto ring51 = ring_form(integral_constant<int, 51>{});
        for (int rep = 0; rep < 2; ++rep) {
            run("17: 8 slots, no phase waits", ring17);
            run("19: 8 slots, a signalling warp's released counts", ring19);
            run("28: 8 slots, relaxed counts (not correct)", ring28);
            run("29: 8 slots, a count released once a phase", ring29);
            run("34: 2 slots, no phase waits", ring34);
            run("35: 2 slots, released counts", ring35);
            run("36: 2 slots, relaxed counts (not correct)", ring36);
            run("37: 2 slots, released once a phase", ring37);
            run("38: 3 slots, no phase waits", ring38);
            run("39: 3 slots, released counts", ring39);
            run("40: 3 slots, relaxed counts (not correct)", ring40);
            run("41: 3 slots, released once a phase", ring41);
            run("42: 8 slots by cp.async, no phase waits", ring42);
            run("43: 8 slots by cp.async, released counts", ring43);
            run("44: 8 slots by cp.async, relaxed counts (not correct)", ring44);
            run("45: 8 slots by cp.async, released once a phase", ring45);
            run("46: 17 with a B = 1 GEMV's arithmetic", ring46);
            run("47: 19 (released counts) with the arithmetic", ring47);
            run("48: 28 (relaxed counts, not correct) with the arithmetic", ring48);
            run("49: 42 (cp.async, no phase waits) with the arithmetic", ring49);
            run("50: 43 (cp.async, released counts) with the arithmetic", ring50);
            run("51: 44 (cp.async, relaxed counts, not correct) with the arithmetic", ring51);
        }
        CHECK(cudaDeviceSynchronize());
        return 0;
    }
    if (only_28) {
        for (int rep = 0; rep < 2; ++rep) {
            run("17: as 16 with no phase waits", ring17);
            run("19: as 16, a signalling warp counts the units, several at a time", ring19);
            run("28: as 19, relaxed counts (not a correct layer: nothing orders the outputs)", ring28);
            run("29: as 19, a count released once a phase", ring29);
        }
        CHECK(cudaDeviceSynchronize());
        return 0;
    }
    if (only_23) {
        run("17: as 16 with no phase waits", ring17);
        run("19: as 16, a signalling warp counts the units, several at a time", ring19);
    }
    for (int rep = 0; rep < (only_23 ? 0 : 2); ++rep) {
        run("0: eight launches", [&](const Layer& l, const ring::Maps& lm) {
            small<<<1, 256, 0, s>>>(act[0], act[1]);
            strip<<<strips(l.m[0]), 256, 0, s>>>(l.m[0], act[1], act[2]);
            small<<<1, 256, 0, s>>>(act[2], act[3]);
            strip<<<strips(l.m[1]), 256, 0, s>>>(l.m[1], act[3], act[4]);
            strip<<<strips(l.m[2]), 256, 0, s>>>(l.m[2], act[4], act[5]);
            small<<<1, 256, 0, s>>>(act[5], act[6]);
            strip<<<strips(l.m[3]), 256, 0, s>>>(l.m[3], act[6], act[7]);
            strip<<<strips(l.m[4]), 256, 0, s>>>(l.m[4], act[7], act[0]);
        });
        run("4: one launch, grid barriers", [&](const Layer& l, const ring::Maps& lm) { mega<4><<<grid, 256, 0, s>>>(l, act[0], bar); });
        run("7: as 4, the L2 asked for the next phase's first unit before each barrier", [&](const Layer& l, const ring::Maps& lm) { mega<7><<<grid, 256, 0, s>>>(l, act[0], bar); });
        run("8: as 7, the first two units", [&](const Layer& l, const ring::Maps& lm) { mega<8><<<grid, 256, 0, s>>>(l, act[0], bar); });
        run("9: as 4, wide units", [&](const Layer& l, const ring::Maps& lm) { mega<9><<<grid, 256, 0, s>>>(l, act[0], bar); });
        run("12: units dealt round-robin, a count a phase, first loads before the wait", [&](const Layer& l, const ring::Maps& lm) { flow<12><<<grid, 256, 0, s>>>(l, act[0], done); });
        run("13: as 12, no loads before the wait", [&](const Layer& l, const ring::Maps& lm) { flow<13><<<grid, 256, 0, s>>>(l, act[0], done); });
        run("14: one block an SM streaming its units through a ring of shared memory, a count a phase", ring14);
        run("15: as 14 with no phase waits (the ring's reads alone)", ring15);
        run("16: as 14, a unit copied as one box of a tensor map", ring16);
        run("17: as 16 with no phase waits", ring17);
        run("18: as 16, a block's units of a phase counted once", ring18);
        run("19: as 16, a signalling warp counts the units, several at a time", ring19);
        run("20: as 19, O and down waiting only for the strips that make their rows", ring20);
        run("21: as 19, a ring of 13 slots", ring21);
        run("22: as 17, a ring of 13 slots", ring22);
        run("11: as 4, no barriers", [&](const Layer& l, const ring::Maps& lm) { mega<11><<<grid, 256, 0, s>>>(l, act[0], bar); });
        run("10: eight launches of wide units", [&](const Layer& l, const ring::Maps& lm) {
            auto w = [&](int p, float* in, float* out) {
                const Wide wd = wide_of(l.m[p], 2 * grid);
                wide<<<wd.units(), 256, 0, s>>>(l.m[p], wd, in, out);
            };
            small<<<1, 256, 0, s>>>(act[0], act[1]);
            w(0, act[1], act[2]);
            small<<<1, 256, 0, s>>>(act[2], act[3]);
            w(1, act[3], act[4]);
            w(2, act[4], act[5]);
            small<<<1, 256, 0, s>>>(act[5], act[6]);
            w(3, act[6], act[7]);
            w(4, act[7], act[0]);
        });
    }
    // A stamped form launched alone, three times; the last launch's stamps, µs from the first
    // block's start, min / median / max over the blocks that have a unit of the phase.
    long long* stamps_dev;
    CHECK(cudaGetSymbolAddress(reinterpret_cast<void**>(&stamps_dev), ring::ring_stamps));
    const size_t stamp_bytes = size_t(sms) * 5 * ring::STAMPS * sizeof(long long);
    auto stamped = [&](const char* name, auto form) {
        for (int r = 0; r < 3; ++r) {
            CHECK(cudaMemsetAsync(stamps_dev, 0, stamp_bytes, s));
            form(layers[r], maps[r]);
        }
        CHECK(cudaStreamSynchronize(s));
        std::vector<long long> h(size_t(sms) * 5 * ring::STAMPS);
        CHECK(cudaMemcpy(h.data(), stamps_dev, stamp_bytes, cudaMemcpyDeviceToHost));
        long long t0 = h[0];
        for (int b = 0; b < sms; ++b) t0 = std::min(t0, h[size_t(b) * 5 * ring::STAMPS]);
        // Min / median / max of the blocks' values (those with a unit of the phase), in µs.
        auto spread = [](std::vector<double> v) {
            if (v.empty()) return std::string("-");
            std::sort(v.begin(), v.end());
            char out[64];
            std::snprintf(out, sizeof out, "%.1f / %.1f / %.1f", v.front(), v[v.size() / 2], v.back());
            return std::string(out);
        };
        // Stamp k of phase p from the first start, or with `length` its end less stamp 0.
        auto at = [&](int p, int k, bool length = false) {
            std::vector<double> v;
            for (int b = 0; b < sms; ++b) {
                const long long* q = &h[(size_t(b) * 5 + p) * ring::STAMPS];
                if (q[k] && (!length || q[0])) v.push_back((q[k] - (length ? q[0] : t0)) * 1e-3);
            }
            return spread(v);
        };
        std::printf("%s, one launch (us from the first block's start; min / median / max over blocks)\n", name);
        for (int p = 0; p < 5; ++p)
            std::printf("  phase %d: wait for the phase before: start %s, end %s, length %s; first unit's data %s; last unit consumed %s\n",
                        p, at(p, 0).c_str(), at(p, 1).c_str(), at(p, 1, true).c_str(), at(p, 3).c_str(), at(p, 2).c_str());
    };
    run("24: as 19, a count released once a phase", ring24);
    stamped("23: as 19, stamped", ring23);
    stamped("24: as 23, a count released once a phase", ring24);
    run("25: as 24, a ring of 4 slots", ring25);
    stamped("25: as 24, a ring of 4 slots", ring25);
    run("26: as 24, relaxed counts", ring26);
    stamped("26: as 24, relaxed counts", ring26);
    run("27: as 19, relaxed counts", ring27);
    stamped("27: as 23, relaxed counts", ring27);
    CHECK(cudaDeviceSynchronize());
    return 0;
}
