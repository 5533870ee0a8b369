// ima.cuh: what every module imac generates shares, with no template variables: the
// violation record, the checks and reports every accessor makes, and the index, vector and
// tile helpers. imac embeds it once at the top of each generated .cu (NVRTC compiles one
// source, so the module must not #include it), after the CUDA headers the module's element
// types need; the module adds the accessors, bodies and entry points of its kernels.
//
// It compiles on the host too, under the qualifiers of host_shim.h: codegen/tests/ima_cuh.rs
// runs its checks and reports there, and the runtime's record test holds ImaRecord's layout
// and kinds to what runtime/src/checked.rs reads.
#ifndef IMA_CUH
#define IMA_CUH
// NVRTC has no <math.h>; bodies may still say INFINITY.
#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif

// A violation of a launch (ima_flush), in device memory; the runtime
// hands it over clean and reads it back only when `flag`, in mapped host memory, is
// raised. Defined here only: runtime/src/checked.rs reads it at the offsets of its `at`
// module, which a test holds to this struct's offsetof, and its kinds likewise.
struct ImaRecord {
    unsigned int count;
    unsigned int claimed;
    int arg;
    int write;
    int kind;
    int rank;
    int dim;
    int pad;
    long long index[8];
    long long extent[8];
    unsigned int block[3];
    unsigned int thread[3];
    // An entry outside its value contract: its value, and the bounds lo .. hi it broke.
    long long value;
    long long lo;
    long long hi;
    unsigned int* flag;
};

enum : int {
    IMA_OUT_OF_BOUNDS = 0,
    IMA_MISALIGNED_VECTOR = 2,
    IMA_NOT_WHOLE_TILE = 3,
    // An entry outside lo .. hi (and not the sentinel).
    IMA_BAD_VALUE = 4,
    // An ascending entry below the one before it (lo is that one).
    IMA_VALUE_ORDER = 5,
    // An ascending tensor's first entry is not lo, or its last not hi - 1.
    IMA_VALUE_FIRST = 6,
    IMA_VALUE_LAST = 7,
    // A shared tile asked of a shared array (`s.tile(...)`) whose columns are not its last
    // extent or whose rows pass the one before: index holds the tile's rows and columns,
    // extent the array's.
    IMA_TILE_SHAPE = 8,
    // A chunk of a shared tile outside it, or not at a 16-byte chunk: index holds the row
    // and column, extent the tile's rows and columns.
    IMA_TILE_CHUNK = 9,
    // A shared array asked of a block outside the cluster (`s.in_block(rank)`): index holds
    // the rank, extent the cluster's blocks.
    IMA_CLUSTER_RANK = 10,
    // An access of an argument that is not `early`, in a kernel that starts early, before
    // the thread called ima_wait_for_inputs() (ImaAfterWait): index holds the access's
    // indices, extent the argument's.
    IMA_BEFORE_WAIT = 11,
};

// R indices of a violation, passed by value to an out-of-line report (a span's fault).
template <typename I, int R>
struct ImaSite {
    I v[R];
};

// A thread's latest violation, in its local memory. An entry point's accesses record a
// violation here with a few stores under the failed test's predicate, without a call or a
// branch, and the entry point moves it into the launch's ImaRecord once the body has
// returned (ima_flush). A call at each test (its arguments set up, a convergence barrier
// around it) made paged attention's checked entry point four times slower than its
// release one at a batch of one: 600 such sites of 15 instructions between the accesses
// kept the SMs waiting on instruction fetch, and each one kept the loads on either side of
// it from issuing together. A release entry point's tests (its value contracts, spans,
// g_idx) are few, but they sit in loops over index tensors: there a call at each entry
// kept the next entry's load from issuing before the check, a round trip an entry
// (moe_route_i32's loop, unrolled four times, waited four times a pass; now once).
struct ImaPending {
    // The thread's count of violations: a checked entry point's own, beside the code, so
    // that a test that fails writes both with its first indices in one store; a release
    // entry point counts in a variable of its own (ImaRecorder) and copies it here for the
    // flush.
    unsigned int count;
    // The latest one, packed by ima_code: argument, write, kind, rank, dimension.
    int code;
    // Its indices: those of a 32-bit entry point in i32 (4 bytes a store), of a 64-bit
    // one in i64 (ima_code's IMA_WIDE).
    union {
        int i32[8];
        long long i64[8];
    } index;
    // The extents it broke, for the kinds whose extents are not the argument's own
    // (IMA_GIVEN_EXTENTS); the entry point supplies the argument's otherwise.
    long long extent[8];
    // The value kinds: the entry's value, and the bounds it broke.
    long long value, lo, hi;
};

// Where a thread's accesses record their violations: their count and the latest one,
// which is written only when a test fails. A release entry point keeps the count in a
// variable apart from its ImaPending, whose address the flush takes: in the ImaPending,
// the count's zero was stored to local memory by every thread at entry, and
// reshape_and_cache's release entry point ran 2% slower than its twin (bench/RESULTS.md,
// session 58); apart, it stays in a register wherever no out-of-line function takes the
// recorder. Where one does (a tile copy's edge, a quantized weight's) it is in local
// memory as before: in a register there, it took paged_attn's release entry point from
// 141 registers to 168 and 140 bytes of spills (so did a flag in its place). A checked
// entry point, whose tests are many, records through its ImaPending alone (ImaRec<true>),
// counting in its `count`: apart, a test that failed took three stores where it took one
// (gptq_gemv_narrow's, 93 to 187), and with an ImaRecorder's two pointers in its accessors
// ptxas scheduled paged_attn_rope's checked entry point anew (the same registers) while
// the layer's deferred graph ran 3.5 µs slower at B = 1 (bench/RESULTS.md, session 58);
// through the ImaPending alone, its SASS is a265363's again.
struct ImaRecorder {
    unsigned int* count;
    ImaPending* last;
};
// What the accessors of an entry point that is checked (CHECKED) or not record through.
template <bool CHECKED>
struct ImaRecorderOf {
    using type = ImaRecorder;
};
template <>
struct ImaRecorderOf<true> {
    using type = ImaPending*;
};
template <bool CHECKED>
using ImaRec = typename ImaRecorderOf<CHECKED>::type;
// A recorder's count and its latest violation.
__device__ __forceinline__ unsigned int& ima_count_of(ImaPending* p) { return p->count; }
__device__ __forceinline__ unsigned int& ima_count_of(ImaRecorder rec) { return *rec.count; }
__device__ __forceinline__ ImaPending* ima_last_of(ImaPending* p) { return p; }
__device__ __forceinline__ ImaPending* ima_last_of(ImaRecorder rec) { return rec.last; }

// A violation described in one word, a constant at each check site: the dimension that
// failed (IMA_FIND_DIM: the first whose index is outside, found by ima_flush) in bits
// 0-3, the rank 4-7, the kind 8-11, write 12, the flags, and the argument (negative for
// a shared array) from bit 16.
enum : int {
    IMA_FIND_DIM = 15,
    IMA_WIDE = 1 << 13,
    IMA_GIVEN_EXTENTS = 1 << 14,
};
__device__ __forceinline__ constexpr int ima_code(int arg, int write, int kind, int rank, int dim) {
    return int(unsigned(arg) << 16) | write << 12 | kind << 8 | rank << 4 | dim;
}
// Only a shared tile's kinds and a cluster's rank have extents that are not the argument's
// logical ones: the tile's shape (IMA_TILE_CHUNK), the array's last two extents
// (IMA_TILE_SHAPE), the cluster's blocks (IMA_CLUSTER_RANK).
__device__ __forceinline__ constexpr bool ima_gives_extents(int kind) {
    return kind == IMA_TILE_SHAPE || kind == IMA_TILE_CHUNK || kind == IMA_CLUSTER_RANK;
}

// <violation path> From here to its end, what runs only once a violation has happened:
// `imac waits` leaves its instructions out of a kernel's round trips (cli/src/waits.rs).

// Keeps a violation as the thread's latest.
template <typename I, int R>
__device__ __forceinline__ void ima_note(ImaPending* p, int code, const I (&index)[R]) {
    static_assert(R <= 8, "a record holds 8 indices: the checker refuses a higher rank (MAX_RANK)");
    p->code = code | (sizeof(I) == 8 ? IMA_WIDE : 0);
#pragma unroll
    for (int d = 0; d < R; ++d) {
        if constexpr (sizeof(I) == 8) {
            p->index.i64[d] = index[d];
        } else {
            p->index.i32[d] = int(index[d]);
        }
    }
}

// Counts a violation and keeps it as the thread's latest.
template <typename I, int R, typename Rec>
__device__ __forceinline__ void ima_pend(Rec rec, int code, const I (&index)[R]) {
    ima_count_of(rec) += 1;
    ima_note<I, R>(ima_last_of(rec), code, index);
}

// The block and thread, then, once the record is written, the flag the host reads.
__device__ __forceinline__ void ima_publish(ImaRecord* r) {
    r->block[0] = blockIdx.x; r->block[1] = blockIdx.y; r->block[2] = blockIdx.z;
    r->thread[0] = threadIdx.x; r->thread[1] = threadIdx.y; r->thread[2] = threadIdx.z;
    __threadfence_system();
    *reinterpret_cast<volatile unsigned int*>(r->flag) = 1u;
}

// Claims the launch's record for a violation described by `code` (ima_code), counting
// `count` violations: true for the launch's first, whose thread then fills the rest and
// publishes it.
__device__ __forceinline__ bool ima_claim(ImaRecord* r, unsigned int count, int code) {
    atomicAdd(&r->count, count);
    if (atomicCAS(&r->claimed, 0u, 1u) != 0u) return false;
    r->arg = code >> 16;
    r->write = code >> 12 & 1;
    r->kind = code >> 8 & 15;
    r->rank = code >> 4 & 15;
    return true;
}

// A thread's pending violations into the launch's record: all of them counted, and the
// latest one of the first thread to flush described, with its extents (the argument's,
// `extent`, supplied by the entry point, unless it gave its own). Unused in a file with no
// checked entry point (a hand-written twin that splices this header in).
[[maybe_unused]] static __device__ __noinline__ void ima_flush(ImaRecord* r, const ImaPending* p, const long long* extent) {
    const int code = p->code, rank = code >> 4 & 15, dim = code & 15;
    if (!ima_claim(r, p->count, code)) return;
    int first_outside = 0;
    // Not unrolled: the flush is a subroutine of the entry point, and the registers its
    // unrolled loop took counted against every thread of the kernel (embedding's release
    // entry point: 38 with it, 32 without).
#pragma unroll 1
    for (int d = rank - 1; d >= 0; --d) {
        const long long i = code & IMA_WIDE ? p->index.i64[d] : p->index.i32[d];
        const long long e = code & IMA_GIVEN_EXTENTS ? p->extent[d] : extent[d];
        r->index[d] = i;
        r->extent[d] = e;
        if ((unsigned long long)i >= (unsigned long long)e) first_outside = d;
    }
    r->dim = dim == IMA_FIND_DIM ? first_outside : dim;
    // The value kinds' fields, which a pending record sets only for them.
    const int kind = code >> 8 & 15;
    const bool valued = kind >= IMA_BAD_VALUE && kind <= IMA_VALUE_LAST;
    r->value = valued ? p->value : 0;
    r->lo = valued ? p->lo : 0;
    r->hi = valued ? p->hi : 0;
    ima_publish(r);
}

// A violation of any kind (the dimension that failed given).
template <typename I, int R, typename Rec>
__device__ __forceinline__ void ima_report(Rec rec, int arg, int write, int kind, int dim,
                                           const I (&index)[R], const I (&extent)[R]) {
    const bool given = ima_gives_extents(kind);
    ima_pend<I, R>(rec, ima_code(arg, write, kind, R, dim) | (given ? IMA_GIVEN_EXTENTS : 0), index);
    if (given) {
#pragma unroll
        for (int d = 0; d < R; ++d) ima_last_of(rec)->extent[d] = extent[d];
    }
}

// An entry that broke its value contract, with its value and the bounds it broke (the
// host reads no extents for it), kept as the thread's latest violation; ima_report_value
// counts it too, and an out-of-line caller of ima_note_value counts it before the call.
template <typename I, int R>
__device__ __forceinline__ void ima_note_value(ImaPending* p, int arg, int kind, const I (&index)[R],
                                               long long value, long long lo, long long hi) {
    ima_note<I, R>(p, ima_code(arg, 0, kind, R, R - 1), index);
    p->value = value;
    p->lo = lo;
    p->hi = hi;
}
template <typename I, int R, typename Rec>
__device__ __forceinline__ void ima_report_value(Rec rec, int arg, int kind, const I (&index)[R],
                                                 long long value, long long lo, long long hi) {
    ima_count_of(rec) += 1;
    ima_note_value<I, R>(ima_last_of(rec), arg, kind, index, value, lo, hi);
}
// </violation path>

// lo <= v < hi, for lo <= hi: one unsigned comparison, v - lo < hi - lo, which wraps past
// hi - lo for every v outside while the difference of any two values of v's type and I
// fits the width compared in. So 32 bits when v is of 32 bits and signed, or narrower, and
// I is int, else 64. An unsigned v is never negative: a lower bound below 0 is 0 for it
// (else v = 2^32 - 1 and lo = -1 would wrap into the range), and a range below 0 is empty.
template <typename T, typename I>
__device__ __forceinline__ bool ima_value_in(T v, I lo, I hi) {
    constexpr bool UNSIGNED = T(-1) > T(0);
    if constexpr (UNSIGNED) {
        if (hi <= 0) return false;
        if (lo < 0) lo = 0;
    }
    if constexpr (sizeof(I) <= 4 && (sizeof(T) < 4 || (sizeof(T) == 4 && !UNSIGNED))) {
        return unsigned(v) - unsigned(lo) < unsigned(hi) - unsigned(lo);
    } else {
        using U = unsigned long long;
        return U(v) - U(lo) < U(hi) - U(lo);
    }
}

// An entry of an argument whose contract allows a sentinel (`values(0 .. N, or -1)`). The
// body reaches its value only through `then`, which skips the sentinel, and an entry that
// broke the contract: `slots(t).then([&](I slot) { ... });`.
template <typename I>
class ImaMaybe {
    I v_;
    bool some_;

  public:
    __device__ __forceinline__ ImaMaybe() : v_(0), some_(false) {}
    __device__ __forceinline__ explicit ImaMaybe(I v) : v_(v), some_(true) {}
    // Not the sentinel, and inside the contract.
    __device__ __forceinline__ bool has_value() const { return some_; }
    template <typename F>
    __device__ __forceinline__ void then(F&& f) const {
        if (some_) f(v_);
    }
};

// Two neighbouring entries of an ascending tensor (offsets such as cu_seqlens), as the
// half-open range [begin, end) they bound.
template <typename I>
struct ImaSpan {
    I begin, end;
};

// Where a refused write goes: somewhere harmless. A whole 128-byte line of its own: a
// refused vector store (16 bytes) is aligned, and a body that hints the sink's line out of
// L2 (ima_l2_discard, which drops the line's data unwritten) drops no other global's.
__device__ __align__(128) unsigned long long ima_sink_storage[16];
template <typename T>
__device__ __forceinline__ T& ima_sink() {
    return *reinterpret_cast<T*>(ima_sink_storage);
}

// The same for a shared array, in shared memory (in checked entry points only): with the
// sink in global memory, the reference a checked shared access returns could be either,
// and every such access became a generic load or store. 128 bytes at a 128-byte
// boundary: a refused `at8` of a shared array returns it as a vector that cp.async and
// ldmatrix may address, and the dynamic shared memory that follows starts at a 128-byte
// boundary in checked entry points too, as in release ones (cp.async and ldmatrix are
// measurably slower from a base 16 bytes off it).
template <typename T>
__device__ __forceinline__ T& ima_shared_sink() {
    __shared__ __align__(128) unsigned long long ima_shared_sink_storage[16];
    return *reinterpret_cast<T*>(ima_shared_sink_storage);
}

// The spec language's `ceil(a / b)`: the ceiling of the exact quotient, for every sign
// (ima_contract::eval's definition): the truncated quotient, plus one where the
// remainder is not zero and has the divisor's sign. Constant where a and b are.
template <typename A, typename B>
__device__ __forceinline__ constexpr auto ima_ceil_div(A a, B b) -> decltype(a / b) {
    return a / b + decltype(a / b)(a % b != 0 && (a % b > 0) == (b > 0));
}

// min(a, b) and max(a, b) of a spec's expressions, in their common type: CUDA's overloads
// are ambiguous for a `long long` symbol (a 64-bit entry point's) beside an `int` literal.
template <typename A, typename B>
__device__ __forceinline__ constexpr auto ima_min(A a, B b) -> decltype(a + b) {
    return a < b ? decltype(a + b)(a) : decltype(a + b)(b);
}
template <typename A, typename B>
__device__ __forceinline__ constexpr auto ima_max(A a, B b) -> decltype(a + b) {
    return a < b ? decltype(a + b)(b) : decltype(a + b)(a);
}

// f(i) for each i in [0, n), spread over the grid's threads: for what a kernel writes
// outside its tiled main loop, such as the zeros of an empty sum (K = 0), where no tile
// exists to write them.
template <typename I, typename F>
__device__ __forceinline__ void ima_grid_for(I n, F&& f) {
    for (I i = I(blockIdx.x) * I(blockDim.x) + I(threadIdx.x); i < n; i += I(gridDim.x) * I(blockDim.x)) f(i);
}

// 0 <= i < e, for an extent e >= 0: one unsigned comparison.
__device__ __forceinline__ bool ima_below(int i, int e) { return unsigned(i) < unsigned(e); }
__device__ __forceinline__ bool ima_below(long long i, long long e) {
    return (unsigned long long)i < (unsigned long long)e;
}

// Checks indices against extents: false, and the violation recorded, when one is
// outside. One comparison a dimension; the record is a few stores under the result.
template <typename I, int R, typename Rec>
__device__ __forceinline__ bool ima_in_bounds(Rec rec, int arg, int write, const I (&index)[R],
                                              const I (&extent)[R]) {
    bool ok = true;
#pragma unroll
    for (int d = 0; d < R; ++d) ok &= ima_below(index[d], extent[d]);
    if (!ok) ima_pend<I, R>(rec, ima_code(arg, write, IMA_OUT_OF_BOUNDS, R, IMA_FIND_DIM), index);
    return ok;
}

// Programmatic dependent launch (sm_90 and later; docs/programmatic-launch.md). A kernel
// with `early` arguments may start while the kernel ahead of it in its graph still runs
// (the runtime gives its node a programmatic edge): its body reads only those arguments
// (what no kernel ahead writes: weights, block tables, the cache's earlier pages) before
// it calls ima_wait_for_inputs(), which returns once the grids ahead have completed and
// their writes are visible, and its entry point waits again before the thread exits. Any
// kernel may call ima_launch_dependents(), a hint that lets the kernel after it start
// once every block of this one has called it or exited; correctness never depends on
// where. Outside such a launch the wait returns at once. The runtime looks for
// `ima_programmatic_wait` in the module's PTX: a module built for an earlier architecture
// has neither the wait nor the marker, and its kernels keep ordinary edges.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
extern "C" __device__ int ima_programmatic_wait = 1;
#endif
__device__ __forceinline__ void ima_grid_dependency_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void ima_launch_dependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
// Asks L2 for the line that holds p, loading nothing into registers (a hint: it reads no
// value and cannot fault). A kernel that starts early asks for its first weights before
// ima_wait_for_inputs(), so that they stream from DRAM while the grid ahead ends.
__device__ __forceinline__ void ima_prefetch_l2(const void* p) { asm volatile("prefetch.global.L2 [%0];" ::"l"(p)); }
// W elements for one 16-byte load or store (`x.load8(i, j)`, `y.store8(i, j, v)`).
template <typename T, int W>
struct __align__(16) ImaVec {
    T v[W];
};
// A compile-time integer as a value: a tile's width (`w.load_tile(k, n, ImaConst<4>{})`),
// or a count a body dispatches on (`decltype(tag)::value` in a generic lambda).
template <int V>
struct ImaConst {
    static constexpr int value = V;
};

#ifdef __CUDA_FP16_TYPES_EXIST__
// RoPE in NeoX's layout (vLLM's is_neox_style), in place: dimensions j .. j + 7 of a head
// (lo, j < D / 2) and their partners j + D / 2 .. j + D / 2 + 7 (hi) turn by the angles
// whose cosines are c (the first 4) and c4 (the next) and sines s and s4, each rounded to
// f16 as a store of the rotated head rounds it (decode.ima's rope_cache and paged.ima's
// paged_attn_rope, which must agree to the bit).
__device__ __forceinline__ void ima_rotate_half(ImaVec<__half, 8>& lo, ImaVec<__half, 8>& hi, const ImaVec<float, 4>& c,
                                                const ImaVec<float, 4>& c4, const ImaVec<float, 4>& s,
                                                const ImaVec<float, 4>& s4) {
#pragma unroll
    for (int e = 0; e < 8; ++e) {
        const float cs = e < 4 ? c.v[e] : c4.v[e - 4], sn = e < 4 ? s.v[e] : s4.v[e - 4];
        const float x0 = __half2float(lo.v[e]), x1 = __half2float(hi.v[e]);
        lo.v[e] = __float2half(x0 * cs - x1 * sn);
        hi.v[e] = __float2half(x1 * cs + x0 * sn);
    }
}
#endif

// Four consecutive elements as one 8- or 16-byte store: the columns a lane holds of a row
// of two adjacent accumulator tiles, once lanes have swapped halves (an output's
// `store_acc`).
template <typename T>
struct alignas(4 * sizeof(T)) ImaQuad {
    T v[4];
};

// Two consecutive elements as one access: a lane's two columns of a row of a warpgroup
// MMA's accumulators (an output's `store_pair`).
template <typename T>
struct alignas(2 * sizeof(T)) ImaPair {
    T v[2];
};

// *counter += v at GPU scope, returning the old value, releasing what this thread wrote
// and what it acquired (a barrier's arrivals) and acquiring what the counts before it
// released: the count after which the last of a group of blocks reads the others' writes
// (paged_attn's partitions), with no __threadfence() on either side. ptxas makes the release
// a MEMBAR.ALL.GPU before the atomic (lighter than __threadfence()'s MEMBAR.SC.GPU) and the
// acquire a CCTL.IVALL after it, which empties the SM's L1: the block's other threads, past
// a barrier, read what the other blocks wrote, not lines L1 kept.
#if __CUDA_ARCH__ >= 700
__device__ __forceinline__ int ima_atomic_add_acq_rel(int* counter, int v) {
    int old;
    asm volatile("atom.add.acq_rel.gpu.global.s32 %0, [%1], %2;" : "=r"(old) : "l"(counter), "r"(v) : "memory");
    return old;
}
#endif

#if __CUDA_ARCH__ >= 800
// Staging in shared memory and the tensor cores (sm_80 and later). An input's
// `x.load8_async(dst, i, j)` starts a 16-byte copy (cp.async) of the vector `x.load8(i, j)`
// would read into `dst`, a shared array's vector (`s.at8(...)`), without passing through
// registers. `ima_async_commit()` closes the group of copies this thread started;
// `ima_async_wait<N>()` waits until at most N of its groups are pending. A copy is visible
// to other threads after the wait and a `__syncwarp()` or `__syncthreads()`.
__device__ __forceinline__ void ima_async_copy16(void* dst, const void* src) {
    const unsigned to = unsigned(__cvta_generic_to_shared(dst));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(to), "l"(src) : "memory");
}
__device__ __forceinline__ void ima_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int N>
__device__ __forceinline__ void ima_async_wait() {
    asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}

// Four 8 x 8 matrices of 16-bit elements (ldmatrix.x4): lane l names the 16-byte row
// l % 8 of matrix l / 8, and receives in x[m] its fragment of matrix m, the two
// elements at row l / 4, columns 2 (l % 4) and 2 (l % 4) + 1 (`_trans`: of the transpose).
// These are the operand fragments of `ima_mma_m16n8k16_*` (PTX ISA, "Matrix Fragments
// for mma.m16n8k16").
struct ImaFrag4 {
    unsigned x[4];
};
template <typename T>
__device__ __forceinline__ ImaFrag4 ima_ldmatrix_x4(const ImaVec<T, 8>& row) {
    static_assert(sizeof(T) == 2, "ldmatrix moves 16-bit elements");
    const unsigned at = unsigned(__cvta_generic_to_shared(&row));
    ImaFrag4 f;
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 { %0, %1, %2, %3}, [%4];"
                 : "=r"(f.x[0]), "=r"(f.x[1]), "=r"(f.x[2]), "=r"(f.x[3])
                 : "r"(at));
    return f;
}
template <typename T>
__device__ __forceinline__ ImaFrag4 ima_ldmatrix_x4_trans(const ImaVec<T, 8>& row) {
    static_assert(sizeof(T) == 2, "ldmatrix moves 16-bit elements");
    const unsigned at = unsigned(__cvta_generic_to_shared(&row));
    ImaFrag4 f;
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 { %0, %1, %2, %3}, [%4];"
                 : "=r"(f.x[0]), "=r"(f.x[1]), "=r"(f.x[2]), "=r"(f.x[3])
                 : "r"(at));
    return f;
}

// D = A B + C on the tensor cores for one 16 x 8 x 16 tile: A (16 x 16, row-major) in four
// registers of two elements each, B (16 x 8, column-major) in two, C and D (16 x 8) f32
// in four, laid out as the PTX ISA's m16n8k16 fragments. A row block of A that is known
// zero may be passed as 0u, and D's elements that are not needed ignored: the compiler
// then keeps no registers for them.
struct ImaAcc4 {
    float x[4];
};
__device__ __forceinline__ ImaAcc4 ima_mma_m16n8k16_f16(const unsigned (&a)[4], unsigned b0, unsigned b1,
                                                        const ImaAcc4& c) {
    ImaAcc4 d;
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 { %0, %1, %2, %3}, { %4, %5, %6, %7}, "
                 "{ %8, %9}, { %10, %11, %12, %13};"
                 : "=f"(d.x[0]), "=f"(d.x[1]), "=f"(d.x[2]), "=f"(d.x[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1), "f"(c.x[0]), "f"(c.x[1]),
                   "f"(c.x[2]), "f"(c.x[3]));
    return d;
}
__device__ __forceinline__ ImaAcc4 ima_mma_m16n8k16_bf16(const unsigned (&a)[4], unsigned b0, unsigned b1,
                                                         const ImaAcc4& c) {
    ImaAcc4 d;
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 { %0, %1, %2, %3}, { %4, %5, %6, %7}, "
                 "{ %8, %9}, { %10, %11, %12, %13};"
                 : "=f"(d.x[0]), "=f"(d.x[1]), "=f"(d.x[2]), "=f"(d.x[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1), "f"(c.x[0]), "f"(c.x[1]),
                   "f"(c.x[2]), "f"(c.x[3]));
    return d;
}
#ifdef __CUDA_FP16_TYPES_EXIST__
// 8 consecutive f16 values (of a row of x) as the pairs (j, j + 4), j = 0 .. 3: the A
// fragment halves that go with a quantized accessor's `dequant_frag` of the same 8 rows of
// k. x[0] and x[1] are a0 and a2 of one m16n8k16 step (a1 and a3 come from the row 8
// below), x[2] and x[3] of a second.
__device__ __forceinline__ ImaFrag4 ima_row_pairs(const ImaVec<__half, 8>& v) {
    unsigned w[4];
    memcpy(w, &v, 16);
    return ImaFrag4{{__byte_perm(w[0], w[2], 0x5410), __byte_perm(w[0], w[2], 0x7632), __byte_perm(w[1], w[3], 0x5410),
                     __byte_perm(w[1], w[3], 0x7632)}};
}
#endif
// Two f32 values rounded into one register of an f16 (bf16) operand fragment: `lo` is the
// element of the lower column.
__device__ __forceinline__ unsigned ima_pack_f16x2(float lo, float hi) {
    unsigned r;
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}
__device__ __forceinline__ unsigned ima_pack_bf16x2(float lo, float hi) {
    unsigned r;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}
#endif

// Tiles: a ROWS x COLS block of a tensor, staged in shared memory by a group of threads
// and read from there into tensor-core fragments, with the guard paid once a tile
// (docs/tensor-cores.md). An input's `x.tile_async(dst, g, ImaConst<RD>{}, rows, i...)` copies;
// a shared array's `s.tile(ImaConst<ROWS>{}, ImaConst<COLS>{}, i...)` is the destination.

// N threads that share a copy, and this thread's rank among them (0 <= rank < N):
// `ima_group<32>(lane)` for a warp, `ima_group<128>(threadIdx.x)` for a block of 128.
// A thread's copies of a tile are one unrolled loop; UNROLL > 0 unrolls it only that
// many times, for a kernel whose registers are scarce (each copy in flight holds its
// addresses).
template <int N, int UNROLL = 0>
struct ImaGroup {
    int rank;
};
template <int N, int UNROLL = 0>
__device__ __forceinline__ ImaGroup<N, UNROLL> ima_group(int rank) {
    return ImaGroup<N, UNROLL>{rank};
}

// Where chunk c (16 bytes) of row r of a shared tile with CPR chunks a row lies in that
// row: c XOR a few bits of r, so that the eight 16-byte rows one ldmatrix (or one phase of
// a copy) touches fall in eight different bank groups. Rows of 128 bytes or more take
// r % 8 within each whole group of 8 chunks (a row's last chunks past the last whole group
// stay in place: XOR could send them past the row); narrower rows, which share a 128-byte
// line with their neighbours, the bits of r above those. Always a permutation of the row's
// chunks.
template <int CPR>
__device__ __forceinline__ int ima_swizzle(int r, int c) {
    if constexpr (CPR >= 8 && CPR % 8 == 0) {
        return c ^ (r % 8);
    } else if constexpr (CPR >= 8) {
        return c < CPR / 8 * 8 ? c ^ (r % 8) : c;
    } else if constexpr (CPR == 4) {
        return c ^ (r / 2 % 4);
    } else if constexpr (CPR == 2) {
        return c ^ (r / 4 % 2);
    } else {
        return c;
    }
}

// A ROWS x COLS tile of a shared array (its last two dimensions at some leading indices),
// rows of COLS elements in 16-byte chunks placed by ima_swizzle. In a checked entry point
// (CHECKED) every chunk access is checked against the tile and a refused one reported and
// sent to the shared sink; a tile the array refused (`ok` false) sends all of them there.
template <typename T, int ROWS, int COLS, bool CHECKED>
struct ImaSmemTile {
    static constexpr int W = 16 / int(sizeof(T));  // elements a chunk
    static constexpr int CPR = COLS / W;           // chunks a row
    static_assert(COLS % W == 0, "a tile's rows are whole 16-byte chunks");
    ImaVec<T, W>* p;
    ImaRec<CHECKED> rec;
    int arg;
    bool ok;

    // Chunk `c / W` of row r: elements c .. c + W - 1 (c a multiple of W). Unchecked, for
    // the copies that fill the tile, whose coordinates come from the tile's own shape.
    __device__ __forceinline__ ImaVec<T, W>& raw_chunk(int r, int c) const {
        return p[r * CPR + ima_swizzle<CPR>(r, c / W)];
    }
    __device__ __forceinline__ ImaVec<T, W>& chunk(int r, int c) const {
        if constexpr (CHECKED) {
            if (!ok) return ima_shared_sink<ImaVec<T, W>>();
            if (!(ima_below(r, ROWS) && ima_below(c, COLS) && c % W == 0)) {
                const int i[2] = {r, c}, e[2] = {ROWS, COLS};
                ima_report<int, 2>(rec, arg, 1, IMA_TILE_CHUNK, ima_below(r, ROWS) ? 1 : 0, i, e);
                return ima_shared_sink<ImaVec<T, W>>();
            }
        }
        return raw_chunk(r, c);
    }
#if __CUDA_ARCH__ >= 800
    // The fragments of one m16n8k16 operand, by ldmatrix.x4 (each lane names one row):
    // `ldmatrix_a(r0, c0)`: A, rows r0 .. r0 + 15 by columns c0 .. c0 + 15 (x[0..3] = a0..a3).
    __device__ __forceinline__ ImaFrag4 ldmatrix_a(int r0, int c0) const {
        const int l = threadIdx.x % 32;
        return ima_ldmatrix_x4(chunk(r0 + l % 8 + 8 * (l / 8 % 2), c0 + 8 * (l / 16)));
    }
    // B of two n-tiles from a tile stored [n][k] (k contiguous, as Kᵀ's rows are keys):
    // rows r0 .. r0 + 15 are n, columns c0 .. c0 + 15 k; x[0], x[1] are b0, b1 of n-tile
    // r0 .. r0 + 7, x[2], x[3] of r0 + 8 .. r0 + 15.
    __device__ __forceinline__ ImaFrag4 ldmatrix_b(int r0, int c0) const {
        const int l = threadIdx.x % 32;
        return ima_ldmatrix_x4(chunk(r0 + l % 8 + 8 * (l / 16), c0 + 8 * (l / 8 % 2)));
    }
    // B of two n-tiles from a tile stored [k][n] (n contiguous, as V): rows r0 .. r0 + 15
    // are k, columns c0 .. c0 + 15 n; x[0], x[1] are b0, b1 of n-tile c0 .. c0 + 7, x[2],
    // x[3] of c0 + 8 .. c0 + 15.
    __device__ __forceinline__ ImaFrag4 ldmatrix_b_trans(int r0, int c0) const {
        const int l = threadIdx.x % 32;
        return ima_ldmatrix_x4_trans(chunk(r0 + l % 8 + 8 * (l / 8 % 2), c0 + 8 * (l / 16)));
    }
#endif
};

#if __CUDA_ARCH__ >= 800
// A 16-byte cp.async that reads only `bytes` (0 .. 16) from src and zero-fills the rest:
// with 0 it reads nothing.
__device__ __forceinline__ void ima_async_copy16_zfill(void* dst, const void* src, int bytes) {
    const unsigned to = unsigned(__cvta_generic_to_shared(dst));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(to), "l"(src), "r"(bytes) : "memory");
}

// The copies of a tile at an edge of ima_tile_copy_async. Out of line: the edge is the
// rare tile, and its per-chunk limits would otherwise hold registers across the caller's
// loop.
template <typename T, int ROWS, int COLS, bool CHECKED, int N, int U, typename I>
static __device__ __noinline__ void ima_tile_copy_edge_async(const ImaSmemTile<T, ROWS, COLS, CHECKED> dst,
                                                             ImaGroup<N, U> g, const T* base, const T* src,
                                                             I row_stride, I rows, I cols) {
    using Tile = ImaSmemTile<T, ROWS, COLS, CHECKED>;
    constexpr int W = Tile::W, CPR = Tile::CPR, CHUNKS = ROWS * CPR;
#pragma unroll 1
    for (int c = g.rank; c < CHUNKS; c += N) {
        const int r = c / CPR, e = c % CPR * W;
        const I n = r < rows ? min(I(W), cols - I(e)) : I(0);
        if (n > 0) {
            ima_async_copy16_zfill(&dst.raw_chunk(r, e), src + r * row_stride + e, int(n) * int(sizeof(T)));
        } else {
            ima_async_copy16_zfill(&dst.raw_chunk(r, e), base, 0);
        }
    }
}

// The copy behind an input's `tile_async`: row r of the tile from src + r * row_stride,
// its chunks split over the group (chunk c of the tile, in row-major order, to rank
// c % N). A tile with all ROWS rows below `rows` and all COLS columns below `cols` copies
// unconditionally; another one reads only the elements below both and zero-fills the
// rest (an element past `cols` inside a chunk included), reading nothing at all for a
// chunk with none: `base`, the tensor's first element, stands in as its address.
template <typename T, int ROWS, int COLS, bool CHECKED, int N, int U, typename I>
__device__ __forceinline__ void ima_tile_copy_async(const ImaSmemTile<T, ROWS, COLS, CHECKED>& dst, ImaGroup<N, U> g,
                                                    const T* base, const T* src, I row_stride, I rows, I cols) {
    using Tile = ImaSmemTile<T, ROWS, COLS, CHECKED>;
    constexpr int W = Tile::W, CPR = Tile::CPR, CHUNKS = ROWS * CPR, EACH = (CHUNKS + N - 1) / N;
    if constexpr (CHECKED) {
        if (!dst.ok) return;
    }
    if (rows < ROWS || cols < COLS) {
        ima_tile_copy_edge_async(dst, g, base, src, row_stride, rows, cols);
        return;
    }
#pragma unroll(U > 0 ? U : EACH)
    for (int k = 0; k < EACH; ++k) {
        const int c = g.rank + k * N;
        if (CHUNKS % N != 0 && c >= CHUNKS) break;
        const int r = c / CPR, e = c % CPR * W;
        ima_async_copy16(&dst.raw_chunk(r, e), src + r * row_stride + e);
    }
}

// The m16n8k16 product of a 16-bit element type: ImaMma<__half>::mma, and
// ImaMma<__nv_bfloat16>::mma where the module includes cuda_bf16.h.
template <typename T>
struct ImaMma;
#ifdef __CUDA_FP16_TYPES_EXIST__
template <>
struct ImaMma<__half> {
    static __device__ __forceinline__ ImaAcc4 mma(const unsigned (&a)[4], unsigned b0, unsigned b1, const ImaAcc4& c) {
        return ima_mma_m16n8k16_f16(a, b0, b1, c);
    }
};
#endif
#ifdef __CUDA_BF16_TYPES_EXIST__
template <>
struct ImaMma<__nv_bfloat16> {
    static __device__ __forceinline__ ImaAcc4 mma(const unsigned (&a)[4], unsigned b0, unsigned b1, const ImaAcc4& c) {
        return ima_mma_m16n8k16_bf16(a, b0, b1, c);
    }
};
#endif

// A warp's share of a block's tile product: MI x NI accumulator tiles of 16 x 8 (f32), tile
// (i, j) at rows 16 i and columns 8 j of the warp's MI * 16 x NI * 8 block of the output.
// `mma(a, ar0, ImaConst<B_KN>{}, b, bn0)` adds the product of one staged pair of tiles: rows ar0 ..
// ar0 + 16 MI - 1 of A's tile (stored [m][k]) times columns bn0 .. bn0 + 8 NI - 1 of B,
// over all k of the stage. B's tile is stored [n][k] (`ImaConst<0>`, as K in Q Kᵀ or
// a weight W in x Wᵀ) or [k][n] (`ImaConst<1>`, as B in A B). Every operand fragment
// of a 16-wide k step is loaded (ldmatrix) before its MI x NI products are issued.
template <int MI, int NI>
struct ImaWarpAcc {
    static_assert(NI % 2 == 0, "ldmatrix reads B two n-tiles at a time");
    ImaAcc4 c[MI][NI];

    __device__ __forceinline__ ImaWarpAcc() {
#pragma unroll
        for (int i = 0; i < MI; ++i)
#pragma unroll
            for (int j = 0; j < NI; ++j) c[i][j] = ImaAcc4{{0.f, 0.f, 0.f, 0.f}};
    }

    template <int B_KN, typename T, int RA, int KA, int RB, int CB, bool CH>
    __device__ __forceinline__ void mma(const ImaSmemTile<T, RA, KA, CH>& a, int ar0, ImaConst<B_KN>,
                                        const ImaSmemTile<T, RB, CB, CH>& b, int bn0) {
        static_assert(KA % 16 == 0 && KA == (B_KN ? RB : CB), "A's columns and B's k are one stage of k");
#pragma unroll
        for (int k = 0; k < KA; k += 16) {
            ImaFrag4 fa[MI], fb[NI / 2];
#pragma unroll
            for (int i = 0; i < MI; ++i) fa[i] = a.ldmatrix_a(ar0 + 16 * i, k);
#pragma unroll
            for (int j = 0; j < NI / 2; ++j)
                fb[j] = B_KN ? b.ldmatrix_b_trans(k, bn0 + 16 * j) : b.ldmatrix_b(bn0 + 16 * j, k);
#pragma unroll
            for (int i = 0; i < MI; ++i)
#pragma unroll
                for (int j = 0; j < NI; ++j)
                    c[i][j] = ImaMma<T>::mma(fa[i].x, fb[j / 2].x[j % 2 * 2], fb[j / 2].x[j % 2 * 2 + 1], c[i][j]);
        }
    }

    // Every accumulator times s (a softmax scale, say), before the stores.
    __device__ __forceinline__ void scale(float s) {
#pragma unroll
        for (int i = 0; i < MI; ++i)
#pragma unroll
            for (int j = 0; j < NI; ++j)
#pragma unroll
                for (int e = 0; e < 4; ++e) c[i][j].x[e] *= s;
    }
};

// A block's main loop over `tiles` stages of k with STAGES - 1 stages' copies in flight
// while one is computed: `load(stage, t)` starts the copies (`tile_async`) of k-tile t into
// buffer `stage` (0 .. STAGES - 1), and `compute(stage, t)` multiplies what landed there.
// Every thread of the block calls it with the same `tiles`; the barrier at the top of each
// step both publishes the copies that landed and keeps a buffer from being refilled while a
// warp still reads it. On return every copy has landed and the buffers may be reused.
template <int STAGES, typename I, typename Load, typename Compute>
__device__ __forceinline__ void ima_pipeline(I tiles, Load&& load, Compute&& compute) {
    static_assert(STAGES >= 2, "a pipeline has a stage in flight and one computed");
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < tiles) load(s, I(s));
        ima_async_commit();
    }
    int stage = 0;
#pragma unroll 1
    for (I t = 0; t < tiles; ++t) {
        ima_async_wait<STAGES - 2>();
        __syncthreads();
        const I next = t + STAGES - 1;
        if (next < tiles) load(stage == 0 ? STAGES - 1 : stage - 1, next);
        ima_async_commit();
        compute(stage, t);
        stage = stage == STAGES - 1 ? 0 : stage + 1;
    }
    ima_async_wait<0>();
    __syncthreads();
}
#endif

#if __CUDA_ARCH__ >= 800
#ifdef __CUDA_FP16_TYPES_EXIST__
// Calls f(ImaConst<D0>{}) for the first of D0, DS... that equals d, or for the last one
// when none before it does (a spec's `where` names the values d may take).
template <int D0, int... DS, typename I, typename F>
__device__ __forceinline__ void ima_for_dim(I d, const F& f) {
    if constexpr (sizeof...(DS) == 0) {
        f(ImaConst<D0>{});
    } else if (d == D0) {
        f(ImaConst<D0>{});
    } else {
        ima_for_dim<DS...>(d, f);
    }
}

// The body of paged.ima's decode attention (paged_attn, and paged_attn_rope with RoPE and
// the cache's write fused in front), written once; specs/paged.ima's comments say what it
// does and why. What the two differ in comes as functions:
// - query(hq, d): the sequence's query head hq, dimensions d .. d + 7 (d a multiple of 8),
//   as an ImaVec<__half, 8>: the block stages its heads in `qs` with it, once;
// - new_token(h): called once for each (sequence, KV head h) by one thread block, all its
//   threads, before the barrier after which its warps first read K and V: by the block
//   whose partition ends at the sequence's length, which reads the sequence's last token,
//   or for a sequence of no tokens by its first partition's block. paged_attn_rope writes
//   the new token's key and value there, so that the block reads what it wrote;
// - wait_for_inputs(): called by every thread before it reads the queries or touches
//   anything but the length, the block table and the cache, which it reads before:
//   paged_attn_rope's ima_wait_for_inputs (its early arguments), a no-op for paged_attn.
// DIMS are the head dimensions the kernel is compiled for: D must be one of them (the
// last is taken when D is none of the others).
template <int PART, int SPAN, int... DIMS, typename I, typename Q, typename NT, typename KC, typename VC, typename BT,
          typename SL, typename PO, typename PL, typename AR, typename O, typename KV, typename QS, typename RO,
          typename RML, typename PG, typename WF>
__device__ __forceinline__ void ima_paged_attend(const Q& query, const NT& new_token, const KC& k_cache, const VC& v_cache,
                                                 const BT& block_tables, const SL& seq_lens, const PO& part_o,
                                                 const PL& part_lse, const AR& arrivals, const O& out, I HQ, I HKV, I D,
                                                 I BS, float scale, const KV& kv, const QS& qs, const RO& red_o,
                                                 const RML& red_ml, const PG& pages, const WF& wait_for_inputs) {
    constexpr int W = 4;      // warps a block
    constexpr int ST = 2;     // tiles a warp has in shared memory: one computed, one in flight
    constexpr int GC = 8;     // query heads a block serves
    constexpr int TILE = 16;  // tokens a tile
    const I b = blockIdx.z;
    // Read by every thread: one broadcast load; a bad length reads as 0 (no tokens).
    const I len = seq_lens(b);
    // Runs a partition takes (the rule at the top of specs/paged.ima), from the sequence's
    // length: the same for its blocks.
    auto runs = [&] {
        const I n = (len + PART - 1) / PART, pairs = I(gridDim.y) * gridDim.z, all = n * pairs;
        const I rule = n <= SPAN && pairs >= 128 ? max(n, I(1)) : all >= 1024 ? I(3) : all >= 256 ? I(2) : I(1);
        return max(rule, (n + I(gridDim.x) - 1) / I(gridDim.x));
    };
    const I G = HQ / HKV, chunks_of_g = (G + GC - 1) / GC;
    const I h = I(blockIdx.y) / chunks_of_g, g0 = I(blockIdx.y) % chunks_of_g * GC;
    const int gn = int(min(I(GC), G - g0));
    // Partition blockIdx.x: those past the sequence's end return at once.
    const I start = I(blockIdx.x) * runs() * PART;
    if (start >= len) {
        if (blockIdx.x == 0) {
            wait_for_inputs();
            for (I i = threadIdx.x; i < gn * D; i += 128) out(b, h * G + g0 + i / D, i % D) = __float2half(0.f);
            if (g0 == 0) new_token(h);
        }
        return;
    }
    const I end = min(start + runs() * PART, len);
    // The sequence's partitions, for the arrivals' count at the end.
    const I parts = (len + runs() * PART - 1) / (runs() * PART);
    const I first_page = start / BS, npages = (end - 1) / BS - first_page + 1;

    // 2^x, the exponential of the log2 domain; 2^-inf = 0.
    auto ex2 = [](float x) {
        float y;
        asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
        return y;
    };
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, gid = lane / 4, t4 = lane % 4;
    const float scale_log2 = scale * 1.4426950408889634f;
    auto attend = [&](auto dtag) {
        constexpr int DD = decltype(dtag)::value;
        constexpr int KSTEPS = DD / 16;  // k-steps of S = Q Kᵀ
        constexpr int CPR = DD / 8;      // 16-byte chunks a row
        constexpr int RPP = 32 / CPR;    // rows a warp copies at once
        // For D = 256 two warps share a tile, each accumulating half of O's dimensions
        // (64 accumulators a lane would not fit in registers): warp pair pw copies and
        // computes tile it * PAIRS + pw, warp half_d of the pair the dimensions
        // half_d * DH .. + DH - 1. Both compute the same scores.
        constexpr int DS = DD > 128 ? 2 : 1;
        constexpr int DH = DD / DS;
        constexpr int DTILES = DH / 8;   // n-tiles of O = P V a warp
        constexpr int PAIRS = W / DS;
        const int pw = warp / DS, half_d = warp % DS;
        // The warps that read a stage wait for each other's copies into it.
        auto stage_sync = [] {
            if constexpr (DS == 1) {
                __syncwarp();
            } else {
                __syncthreads();
            }
        };
        const I ntiles = (end - start + TILE - 1) / TILE;
        const I niter = (ntiles + PAIRS - 1) / PAIRS;  // the same in every warp
        // The K and V tiles of a stage: TILE tokens by DD dimensions each.
        auto k_tile = [&](int stage) { return kv.tile(ImaConst<TILE>{}, ImaConst<DD>{}, pw, stage, 0); };
        auto v_tile = [&](int stage) { return kv.tile(ImaConst<TILE>{}, ImaConst<DD>{}, pw, stage, 1); };
        // Starts the pair's copies of its tile `it` into stage it % ST (the pair's two
        // warps share them for D = 256); rows past the partition's end are zeros.
        auto issue = [&](I it) {
            const I t0 = start + (it * PAIRS + pw) * TILE;
            const int stage = int(it % ST);
            const auto kt = k_tile(stage), vt = v_tile(stage);
            if (BS % TILE == 0) {
                // Tiles start at multiples of 16, so with BS a multiple of 16 a tile lies
                // in one page: one tile copy each of K and V, guarded once.
                // D = 256 copies two rows at a time: its addresses would cost registers.
                const auto g = ima_group<32 * DS, DS == 1 ? 0 : 2>(half_d * 32 + lane);
                I blk = 0, row = 0;
                if (t0 < end) {
                    const I rel = t0 - first_page * BS;
                    blk = pages(rel / BS);
                    row = rel % BS;
                }
                k_cache.tile_async(kt, g, ImaConst<1>{}, end - t0, blk, row, h, I(0));
                v_cache.tile_async(vt, g, ImaConst<1>{}, end - t0, blk, row, h, I(0));
            } else {
                // A tile across pages: row by row, each row's page looked up.
                const int c = lane % CPR;
                #pragma unroll 2
                for (int k = 0; k < TILE / DS / RPP; ++k) {
                    const int r = half_d * (TILE / DS) + lane / CPR + RPP * k;
                    const I t = t0 + r;
                    auto& kd = kt.chunk(r, c * 8);
                    auto& vd = vt.chunk(r, c * 8);
                    if (t < end) {
                        const I rel = t - first_page * BS;
                        const I blk = pages(rel / BS), row = rel % BS;
                        k_cache.load8_async(kd, blk, row, h, I(c * 8));
                        v_cache.load8_async(vd, blk, row, h, I(c * 8));
                    } else {
                        kd = {};
                        vd = {};
                    }
                }
            }
        };
        // The copies of the first ST - 1 tiles, each stage its own group.
        auto first_tiles = [&] {
            #pragma unroll
            for (int s = 0; s < ST - 1; ++s) {
                if (s < niter) issue(s);
                ima_async_commit();
            }
        };
        // The block's page ids in shared memory, then the query heads, [head, dimension]
        // swizzled as kv (zeros past the group), 8 dimensions a thread at a time. The
        // first tiles' copies need only the page ids: they are issued between the two
        // (below), so that their round trip overlaps the queries' (a position, its angles,
        // the heads' halves) rather than following it. The block that writes the sequence's
        // new token issues them after it, unless they end before the token's position.
        // All of this reads only the length, the block table and the cache's earlier
        // tokens, and may run while the grid ahead (the QKV projection) still does.
        for (I j = threadIdx.x; j < npages; j += 128) pages(j) = int(block_tables(b, first_page + j));
        const bool writes = end == len && g0 == 0;
        const bool early = !writes || len - 1 >= start + I(PAIRS * TILE * (ST - 1));
        __syncthreads();
        if (early) first_tiles();
        wait_for_inputs();
        const auto qt = qs.tile(ImaConst<GC>{}, ImaConst<DD>{});
        for (int i = threadIdx.x; i < GC * CPR; i += 128) {
            const int r = i / CPR, c = i % CPR;
            qt.chunk(r, c * 8) = r < gn ? query(h * G + g0 + r, I(c * 8)) : ImaVec<__half, 8>{};
        }
        if (writes) new_token(h);
        __syncthreads();
        if (!early) first_tiles();
        // Q as the A operand of S = Q Kᵀ: row gid is head g0 + gid, registers 0 and 2 of each
        // k-step (1 and 3, rows 8..15, are zero). Lane l names row l % 8 of columns
        // 32 (kk / 2) + 8 (l / 8): matrices 0, 1 are k-step kk's (rows 0..7), 2, 3 the next
        // one's. For D <= 128 read once into registers; for D = 256 from shared memory at
        // each tile, to leave registers for the accumulators.
        constexpr bool Q_SHARED = DD > 128;
        auto q_pairs = [&](int kk) { return ima_ldmatrix_x4(qt.chunk(lane % 8, 32 * (kk / 2) + 8 * (lane / 8))); };
        unsigned qa[Q_SHARED ? 1 : KSTEPS][2];
        if constexpr (!Q_SHARED) {
            #pragma unroll
            for (int kk = 0; kk < KSTEPS; kk += 2) {
                const ImaFrag4 f = q_pairs(kk);
                qa[kk][0] = f.x[0];
                qa[kk][1] = f.x[1];
                qa[kk + 1][0] = f.x[2];
                qa[kk + 1][1] = f.x[3];
            }
        }
        float m = -INFINITY, l = 0.f;  // row gid's running maximum, this lane's part of its sum
        float acc[DTILES][2];          // row gid, dimensions half_d DH + 8 j + 2 t4 and + 1
        #pragma unroll
        for (int j = 0; j < DTILES; ++j) acc[j][0] = acc[j][1] = 0.f;
        for (I it = 0; it < niter; ++it) {
            if (it + ST - 1 < niter) issue(it + ST - 1);
            ima_async_commit();
            ima_async_wait<ST - 1>();
            stage_sync();
            const int stage = int(it % ST);
            const I t0 = start + (it * PAIRS + pw) * TILE;
            // S = Q Kᵀ for tokens t0 .. t0 + 7 (s0) and t0 + 8 .. t0 + 15 (s1): lane
            // holds row gid, tokens 2 t4 and 2 t4 + 1 of each.
            ImaAcc4 s0{}, s1{};
            {
                const auto kt = k_tile(stage);
                ImaFrag4 qf;
                #pragma unroll
                for (int kk = 0; kk < KSTEPS; ++kk) {
                    const ImaFrag4 f = kt.ldmatrix_b(0, 16 * kk);
                    unsigned a[4] = {0u, 0u, 0u, 0u};
                    if constexpr (Q_SHARED) {
                        if (kk % 2 == 0) qf = q_pairs(kk);
                        a[0] = qf.x[kk % 2 * 2];
                        a[2] = qf.x[kk % 2 * 2 + 1];
                    } else {
                        a[0] = qa[kk][0];
                        a[2] = qa[kk][1];
                    }
                    s0 = ima_mma_m16n8k16_f16(a, f.x[0], f.x[1], ImaAcc4{s0.x[0], s0.x[1], 0.f, 0.f});
                    s1 = ima_mma_m16n8k16_f16(a, f.x[2], f.x[3], ImaAcc4{s1.x[0], s1.x[1], 0.f, 0.f});
                }
            }
            // Online softmax of row gid over the tile: the row's four lanes meet by
            // shuffles. A row that has seen no token keeps m = -inf; its exponents use 0
            // so that -inf - -inf never happens.
            float sc[4] = {s0.x[0], s0.x[1], s1.x[0], s1.x[1]};
            float mx = m;
            #pragma unroll
            for (int i = 0; i < 4; ++i) {
                const I t = t0 + 8 * (i / 2) + 2 * t4 + i % 2;
                sc[i] = t < end ? sc[i] * scale_log2 : -INFINITY;
                mx = fmaxf(mx, sc[i]);
            }
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
            const float base = mx == -INFINITY ? 0.f : mx;
            const float corr = ex2(m - base);
            m = mx;
            l *= corr;
            float p[4];
            #pragma unroll
            for (int i = 0; i < 4; ++i) {
                p[i] = ex2(sc[i] - base);
                l += p[i];
            }
            #pragma unroll
            for (int j = 0; j < DTILES; ++j) {
                acc[j][0] *= corr;
                acc[j][1] *= corr;
            }
            // O += P V: P's fragment is the score fragments' layout (tokens 2 t4, + 1
            // and 8 + 2 t4, + 1 of row gid); V's rows come transposed, two n-tiles an
            // ldmatrix.
            const unsigned pa[4] = {ima_pack_f16x2(p[0], p[1]), 0u, ima_pack_f16x2(p[2], p[3]), 0u};
            {
                const auto vt = v_tile(stage);
                #pragma unroll
                for (int j = 0; j < DTILES; j += 2) {
                    const ImaFrag4 f = vt.ldmatrix_b_trans(0, half_d * DH + 8 * j);
                    const ImaAcc4 o0 = ima_mma_m16n8k16_f16(pa, f.x[0], f.x[1], ImaAcc4{acc[j][0], acc[j][1], 0.f, 0.f});
                    const ImaAcc4 o1 = ima_mma_m16n8k16_f16(pa, f.x[2], f.x[3], ImaAcc4{acc[j + 1][0], acc[j + 1][1], 0.f, 0.f});
                    acc[j][0] = o0.x[0];
                    acc[j][1] = o0.x[1];
                    acc[j + 1][0] = o1.x[0];
                    acc[j + 1][1] = o1.x[1];
                }
            }
            // Every lane is done with this stage before the next iteration refills it.
            stage_sync();
        }
        ima_async_wait<0>();
        // The cache is read: the kernel after this one may start on what it reads early (a
        // trigger at the start lost 0.5 to 1 µs at B = 1: bench/explore/pdlpre's pdlpre3).
        ima_launch_dependents();
        l += __shfl_xor_sync(0xffffffffu, l, 1);
        l += __shfl_xor_sync(0xffffffffu, l, 2);
        // The pairs meet pairwise: pairs half .. 2 half - 1 hand their state to pairs
        // 0 .. half - 1, which weigh both by 2^(m - M). (The two warps of a pair hold
        // the same m and l, and different dimensions.)
        #pragma unroll
        for (int half = PAIRS / 2; half >= 1; half /= 2) {
            if (pw >= half && pw < 2 * half) {
                const int sl = pw - half;
                if (t4 == 0 && half_d == 0) {
                    red_ml(0, sl, gid) = m;
                    red_ml(1, sl, gid) = l;
                }
                #pragma unroll
                for (int j = 0; j < DTILES; j += 2) {
                    red_o.at4(sl, half_d * DTILES / 2 + j / 2, lane, 0) = ImaVec<float, 4>{{acc[j][0], acc[j][1], acc[j + 1][0], acc[j + 1][1]}};
                }
            }
            __syncthreads();
            if (pw < half) {
                const float mo = red_ml(0, pw, gid), lo = red_ml(1, pw, gid);
                const float mm = fmaxf(m, mo);
                const float base = mm == -INFINITY ? 0.f : mm;
                const float wa = ex2(m - base), wb = ex2(mo - base);
                m = mm;
                l = l * wa + lo * wb;
                #pragma unroll
                for (int j = 0; j < DTILES; j += 2) {
                    const ImaVec<float, 4> o = red_o.at4(pw, half_d * DTILES / 2 + j / 2, lane, 0);
                    acc[j][0] = acc[j][0] * wa + o.v[0] * wb;
                    acc[j][1] = acc[j][1] * wa + o.v[1] * wb;
                    acc[j + 1][0] = acc[j + 1][0] * wa + o.v[2] * wb;
                    acc[j + 1][1] = acc[j + 1][1] * wa + o.v[3] * wb;
                }
            }
            __syncthreads();
        }
        // Pair 0 holds the partition, whose first token it attended: l > 0.
        if (pw == 0 && gid < gn) {
            const I hq = h * G + g0 + gid;
            const float inv = 1.f / l;
            const I part = blockIdx.x;
            #pragma unroll
            for (int j = 0; j < DTILES; ++j) {
                part_o(b, hq, part, half_d * DH + 8 * j + 2 * t4) = acc[j][0] * inv;
                part_o(b, hq, part, half_d * DH + 8 * j + 2 * t4 + 1) = acc[j][1] * inv;
            }
            if (t4 == 0 && half_d == 0) part_lse(b, hq, part) = m + __log2f(l);
        }
        // The last block of the sequence to get here weighs its partitions together:
        // out = the sum over p of 2^(lse_p - max) o_p, over the sum of the weights.
        // The block's writes are the barrier's, which thread 0's count releases at GPU
        // scope; the count that finds the others' acquires theirs for the barrier after
        // it (CUTLASS's stream-K fixup; two __threadfence()s, sequentially consistent
        // fences, before).
        __syncthreads();
        bool last = false;
        if (threadIdx.x == 0) last = ima_atomic_add_acq_rel(&arrivals(b, h * G + g0), 1) == int(parts - 1);
        if (!__syncthreads_or(last)) return;
        // A thread an 8 dimensions of a head, in one pass: the running maximum rescales
        // what the partitions before added, so that no load waits for another (a pass
        // over the log-sum-exps for their maximum first cost the launch's last block a
        // round trip to L2).
        constexpr int CHUNKS = DD / 8;
        for (int i = threadIdx.x; i < gn * CHUNKS; i += 128) {
            const I hq = h * G + g0 + i / CHUNKS, d = i % CHUNKS * 8;
            float mx = -INFINITY, sum = 0.f, o[8] = {};
            // Four partitions at a time, their loads issued together: a loop unrolled by
            // the compiler took the partitions past a multiple of 4 one at a time, each
            // load waited for before the next was issued (SASS read in session 55). A
            // partition past the last weighs 0 (its log-sum-exp -inf, its output zeros)
            // and leaves the sums as they are.
            for (I p0 = 0; p0 < parts; p0 += 4) {
                float lse[4];
                ImaVec<float, 4> lo[4], hi[4];
                #pragma unroll
                for (int u = 0; u < 4; ++u) {
                    const I p = p0 + u;
                    lse[u] = p < parts ? part_lse(b, hq, p) : -INFINITY;
                    lo[u] = p < parts ? part_o.load4(b, hq, p, d) : ImaVec<float, 4>{};
                    hi[u] = p < parts ? part_o.load4(b, hq, p, d + 4) : ImaVec<float, 4>{};
                }
                #pragma unroll
                for (int u = 0; u < 4; ++u) {
                    // Every partition has a token, so its log-sum-exp is finite, the first
                    // partition's correction 2^-inf is 0, and mx is finite from then on.
                    const float mm = fmaxf(mx, lse[u]);
                    const float corr = exp2f(mx - mm), w = exp2f(lse[u] - mm);
                    mx = mm;
                    sum = sum * corr + w;
                    #pragma unroll
                    for (int j = 0; j < 4; ++j) {
                        o[j] = o[j] * corr + w * lo[u].v[j];
                        o[4 + j] = o[4 + j] * corr + w * hi[u].v[j];
                    }
                }
            }
            ImaVec<__half, 8> r;
            #pragma unroll
            for (int j = 0; j < 8; ++j) r.v[j] = __float2half(o[j] / sum);
            out.store8(b, hq, d, r);
        }
        if (threadIdx.x == 0) arrivals(b, h * G + g0) = 0;
    };
    ima_for_dim<DIMS...>(D, attend);
}
#endif
#endif

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
// Hopper (sm_90a): tiles copied by the TMA unit and multiplied by warpgroup MMA
// (docs/tensor-cores.md). An input declared `tma(ROWS, COLS)` has `x.tma_load(dst, bar,
// i...)`; a shared array declared `align(1024)` has `s.tma_tile(...)`, the destination and
// the MMA's operand; ImaTmaPipeline runs the warp-specialised main loop and ImaWgAcc holds
// a warpgroup's accumulators. The generated CUDA compiles a kernel with `tma` arguments
// only here; the runtime refuses it on other devices.

// A CUtensorMap (cuda.h, which NVRTC lacks): 128 opaque bytes, 64-byte aligned, encoded by
// the runtime from an argument's checked view (runtime/src/tensor_map.rs).
struct alignas(64) ImaTensorMap {
    unsigned long long opaque[16];
};

// Asks for a tensor map's descriptor ahead of the first copy through it (an entry point's
// thread 0 does, for each of its maps): a hint, which changes nothing but when the TMA
// unit has it.
__device__ __forceinline__ void ima_tma_prefetch(const ImaTensorMap* map) {
    asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<unsigned long long>(map)) : "memory");
}

// An mbarrier in shared memory, by its shared-window address.
struct ImaBarrier {
    unsigned addr;
};

// N 32-bit words (1, 2 or 4: one access) from the shared-window address `addr`, which a
// TMA copy wrote: volatile, so that the read stays after the barrier wait (volatile too)
// that orders it.
template <int N>
__device__ __forceinline__ void ima_ld_shared(unsigned addr, unsigned (&w)[N]) {
    static_assert(N == 1 || N == 2 || N == 4, "one shared access reads 4, 8 or 16 bytes");
    if constexpr (N == 1) {
        asm volatile("ld.shared.u32 %0, [%1];" : "=r"(w[0]) : "r"(addr));
    } else if constexpr (N == 2) {
        asm volatile("ld.shared.v2.u32 {%0, %1}, [%2];" : "=r"(w[0]), "=r"(w[1]) : "r"(addr));
    } else {
        asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(w[0]), "=r"(w[1]), "=r"(w[2]), "=r"(w[3])
                     : "r"(addr));
    }
}

// The shared address of byte `byte` of row `row` (byte counted along the row, across
// panels) of a tile in TMA's 128-byte-swizzled layout at `base`, whose panels (128-byte
// columns) are `rows` rows apart: the 16-byte chunk of a row XOR-ed with row % 8. One
// definition for every body that reads or writes such a tile by hand.
__device__ __forceinline__ unsigned ima_swizzled(unsigned base, int rows, int row, unsigned byte) {
    return base + byte / 128 * unsigned(rows * 128) + unsigned(row) * 128 + ((byte % 128 / 16) ^ unsigned(row % 8)) * 16 +
           byte % 16;
}

// A ROWS x COLS tile of a shared array in the layout TMA writes with its 128-byte swizzle:
// panels of 128-byte rows (PANEL columns), panel p at p * ROWS * 128 bytes, the 16-byte
// chunks of row r XOR-ed with r % 8 (the pattern repeats every 1024 bytes, hence the
// array's align(1024)). `ok` is false for a tile a checked entry point refused (its
// leading indices outside the array), whose address is then its array's first tile:
// loads leave it alone, and the MMA reads it.
template <typename T, int ROWS, int COLS, bool CHECKED>
struct ImaTmaTile {
    static constexpr int PANEL = 128 / int(sizeof(T)), CHUNK = 16 / int(sizeof(T));
    static_assert(COLS % PANEL == 0, "a TMA tile is whole 128-byte panels");
    static_assert(ROWS % 8 == 0, "the 128-byte swizzle repeats every 8 rows");
    unsigned addr;
    ImaRec<CHECKED> rec;
    int arg;
    bool ok;

    // The 16 bytes of row `row` from column `col` (a multiple of CHUNK): an operand
    // fragment's run, for a body that feeds mma.sync from the tile (ima_row_pairs). The
    // indices wrap inside the tile (as unsigned values: a negative one too), so no read
    // leaves it.
    __device__ __forceinline__ ImaVec<T, CHUNK> chunk(int row, int col) const {
        const int r = int(unsigned(row) % ROWS), c = int(unsigned(col) % COLS);
        ImaVec<T, CHUNK> v;
        unsigned w[4];
        ima_ld_shared(ima_swizzled(addr, ROWS, r, unsigned(c / CHUNK * 16)), w);
        memcpy(&v, w, 16);
        return v;
    }
};

template <typename I, int R>
__device__ __forceinline__ bool ima_nonempty(const I (&e)[R]) {
#pragma unroll
    for (int d = 0; d < R; ++d)
        if (e[d] == 0) return false;
    return true;
}

__device__ __forceinline__ void ima_mbar_wait(unsigned bar, unsigned parity) {
    asm volatile(
        "{\n"
        ".reg .pred P1;\n"
        "IMA_WAIT:\n"
        "mbarrier.try_wait.parity.shared::cta.b64 P1, [%0], %1;\n"
        "@P1 bra.uni IMA_DONE;\n"
        "bra.uni IMA_WAIT;\n"
        "IMA_DONE:\n"
        "}\n" ::"r"(bar),
        "r"(parity)
        : "memory");
}
__device__ __forceinline__ void ima_mbar_arrive(unsigned bar) {
    asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}

// BOXES boxes of a tensor map side by side along its innermost dimension (box b at
// coordinate c[0] + b * box_cols, landing at dst + b * box_bytes), their bytes first
// added to what the barrier's phase waits for. One thread issues them. Nothing is
// expected of the barrier unless they are issued, so a load that is not still lets the
// stage complete: when `write` is false (a shared tile a checked entry point refused) the
// tile is left alone; when `ok` is false (an origin it refused, or an empty tensor)
// nothing is read, and the tile is zero-filled by the thread instead and fenced for the
// MMA's reads. STREAM marks data read once a launch (quantized weights): its lines are
// the L2's first to evict (a cache hint of policy evict_first), so that the stream does
// not push out what the launch reads again or writes (x, the stream-K slots, y).
template <int R, int BOXES, bool STREAM = false>
__device__ __forceinline__ void ima_tma_load(unsigned dst, const ImaTensorMap* map, ImaBarrier bar, const int (&c)[R],
                                             int box_cols, unsigned box_bytes, bool write, bool ok) {
    static_assert(R >= 2 && R <= 5, "a tensor map has 2 to 5 dimensions");
    if (!write) return;
    if (!ok) {
        for (unsigned o = 0; o < BOXES * box_bytes; o += 16)
            asm volatile("st.shared.v4.u32 [%0], {%1, %1, %1, %1};" ::"r"(dst + o), "r"(0u) : "memory");
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        return;
    }
    asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;" ::"r"(bar.addr), "r"(BOXES * box_bytes)
                 : "memory");
    const unsigned long long m = reinterpret_cast<unsigned long long>(map);
    static_assert(R == 2 || !STREAM, "streamed loads: 2-dimensional maps");
    [[maybe_unused]] unsigned long long policy = 0;
    if constexpr (STREAM) asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
#pragma unroll
    for (int b = 0; b < BOXES; ++b) {
        const unsigned to = dst + b * box_bytes;
        const int x = c[0] + b * box_cols;
        if constexpr (R == 2 && STREAM) {
            asm volatile(
                "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1, {%2, %3}], [%4], %5;" ::"r"(to),
                "l"(m), "r"(x), "r"(c[1]), "r"(bar.addr), "l"(policy)
                : "memory");
        } else if constexpr (R == 2) {
            asm volatile(
                "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(to),
                "l"(m), "r"(x), "r"(c[1]), "r"(bar.addr)
                : "memory");
        } else if constexpr (R == 3) {
            asm volatile(
                "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];" ::"r"(to),
                "l"(m), "r"(x), "r"(c[1]), "r"(c[2]), "r"(bar.addr)
                : "memory");
        } else if constexpr (R == 4) {
            asm volatile(
                "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], [%6];" ::"r"(to),
                "l"(m), "r"(x), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(bar.addr)
                : "memory");
        } else {
            asm volatile(
                "cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5, %6}], [%7];" ::"r"(to),
                "l"(m), "r"(x), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]), "r"(bar.addr)
                : "memory");
        }
    }
}

// The other direction: a ROWS x COLS shared tile stored by the TMA unit (`y.tma_store`),
// its boxes at coordinate c[0] + b * box_cols from src + b * box_bytes; the tensor map
// clips whatever part of a box lies outside the tensor. One thread issues them and
// commits them as one bulk group; `ima_tma_store_wait` (the same thread) waits until
// every group it committed has read its shared memory, before the tile is written again,
// and before the block exits.
template <int R, int BOXES>
__device__ __forceinline__ void ima_tma_store(unsigned src, const ImaTensorMap* map, const int (&c)[R], int box_cols,
                                              unsigned box_bytes) {
    static_assert(R >= 2 && R <= 5, "a tensor map has 2 to 5 dimensions");
    const unsigned long long m = reinterpret_cast<unsigned long long>(map);
#pragma unroll
    for (int b = 0; b < BOXES; ++b) {
        const unsigned from = src + b * box_bytes;
        const int x = c[0] + b * box_cols;
        if constexpr (R == 2) {
            asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];" ::"l"(m), "r"(x),
                         "r"(c[1]), "r"(from)
                         : "memory");
        } else if constexpr (R == 3) {
            asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%1, %2, %3}], [%4];" ::"l"(m),
                         "r"(x), "r"(c[1]), "r"(c[2]), "r"(from)
                         : "memory");
        } else if constexpr (R == 4) {
            asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.bulk_group [%0, {%1, %2, %3, %4}], [%5];" ::"l"(m),
                         "r"(x), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(from)
                         : "memory");
        } else {
            asm volatile("cp.async.bulk.tensor.5d.global.shared::cta.bulk_group [%0, {%1, %2, %3, %4, %5}], [%6];" ::"l"(m),
                         "r"(x), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]), "r"(from)
                         : "memory");
        }
    }
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}
__device__ __forceinline__ void ima_tma_store_wait() {
    asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
}
// Shared-memory writes of this thread made visible to the TMA unit (the async proxy): each
// thread that wrote a tile calls it before the barrier after which one thread stores it.
__device__ __forceinline__ void ima_tma_store_fence() {
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}
// A barrier of this thread's warpgroup alone (named barrier 1 + its index, 1 to 5 in a
// block of up to 5 warpgroups; 0 is __syncthreads'), for a consumer's epilogue while the
// producer runs on.
__device__ __forceinline__ void ima_warpgroup_sync() {
    asm volatile("bar.sync %0, 128;" ::"r"(1 + int(threadIdx.x / 128)) : "memory");
}
// Named barrier `id` of `threads` threads (a multiple of 32): ima_bar_arrive counts this
// thread's warp in and goes on, ima_bar_sync waits for the rest. An arrive synchronises
// with the sync that completes the barrier, so what the arriving threads wrote is the
// waiting threads' to release. 0 is __syncthreads', 1 to 5 ima_warpgroup_sync's and 5
// also ImaTmaPipeline's consumers_sync (which a pipeline of 4 consumers has not).
__device__ __forceinline__ void ima_bar_arrive(int id, int threads) {
    asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(threads) : "memory");
}
__device__ __forceinline__ void ima_bar_sync(int id, int threads) {
    asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}
// *counter += v at GPU scope, returning the old value, releasing what this thread wrote
// and what it acquired (a barrier's arrivals): the count of CUTLASS's stream-K fixup, which
// the block that adds up a shared tile reads with ima_ld_acquire. Cheaper than
// __threadfence(), a sequentially consistent fence (MEMBAR.SC.GPU).
__device__ __forceinline__ int ima_atomic_add_release(int* counter, int v) {
    int old;
    asm volatile("atom.add.release.gpu.global.s32 %0, [%1], %2;" : "=r"(old) : "l"(counter), "r"(v) : "memory");
    return old;
}
// *counter at GPU scope, acquiring what the releases it reads released.
__device__ __forceinline__ int ima_ld_acquire(const int* counter) {
    int v;
    asm volatile("ld.acquire.gpu.global.s32 %0, [%1];" : "=r"(v) : "l"(counter) : "memory");
    return v;
}

// Stream-K over a persistent grid (CUTLASS's stream-K decomposition): `units` units of
// work, ordered tile by tile (KS units of K a tile), shared out in runs over the grid's
// blocks: block b's run is [start(b), start(b + 1)), q + 1 units for each of the first r
// blocks, q for the rest. A tile whose units lie in several runs is summed by the block
// whose run holds its first unit (lo), at that run's end, from the others' slots of a
// workspace: each other block stores its sums and counts its units with `arrive` on the
// tile's counter, and lo `wait`s for the count before it reads the slots. lo waits for
// blocks after it, so every block must run at once (a `persistent` or `resident` launch).
template <typename I>
struct ImaStreamK {
    I q, r;

    __device__ __forceinline__ explicit ImaStreamK(I units) : q(units / I(gridDim.x)), r(units % I(gridDim.x)) {}

    // The first unit of block b's run. A closed form with no division, which lo evaluates
    // for each of a shared tile's blocks (floor(units · b / blocks) took a 64-bit division
    // each time).
    __device__ __forceinline__ I start(I b) const { return b * q + (b < r ? b : r); }

    // The block whose run holds unit u (u < units, so q > 0 where it divides by q).
    __device__ __forceinline__ I owner(I u) const { return u < r * (q + 1) ? u / (q + 1) : r + (u - r * (q + 1)) / q; }

    // One thread's count of a block's `mine` units of a tile of `ks` on its `counter`,
    // released with what the thread acquired (the consumers' slot stores, by a named
    // barrier). From a zero counter the blocks before this one counted 0 to ks - 1 - mine
    // units (lo holds one at least); any other count is a dirty workspace, marked negative
    // for good, so that lo stops waiting.
    static __device__ __forceinline__ void arrive(int* counter, int mine, int ks) {
        const int before = ima_atomic_add_release(counter, mine);
        if (before < 0 || before >= ks - mine) atomicExch(counter, -2147483647 - 1);
    }

    // lo's warpgroup waits while the count can still reach the other blocks' `others`
    // units; past them or negative, the workspace was dirty (the tile is then wrong, but
    // the launch ends). Every thread of it polls (one address, one load a warp) and a warp
    // leaves when none of its lanes saw the count short: a loop whose exit is
    // warp-uniform, where one thread's loop made ptxas take the whole stage loop around
    // it out of uniform registers (gptq_gemm_wg32: 336 instructions a warp and stage
    // against 260, SASS, nvcc 13.0). Each thread's own acquiring load saw the count
    // before it reads the slots; the warpgroup meets at a barrier after it, so that the
    // count is reset only once every thread has seen it.
    static __device__ __forceinline__ void wait(const int* counter, int others) {
        int n;
        do n = ima_ld_acquire(counter);
        while (__any_sync(0xffffffffu, n >= 0 && n < others));
    }
};

// Drops the 128-byte line at `line` (128-byte aligned) from L2 without writing it back
// (PTX's discard: the line's bytes are then indeterminate). For scratch read for the last
// time in a launch and written before its next read: its dirty lines would otherwise go
// to DRAM, writes that the launch's reads wait behind.
__device__ __forceinline__ void ima_l2_discard(const void* line) {
    asm volatile("discard.global.L2 [%0], 128;" ::"l"(line) : "memory");
}

// Stores four floats at p (16 bytes, aligned) marked for L2 to keep (evict_last) ahead of
// normal lines and of the weights' streams, which tma_load marks evict_first: scratch that
// another block reads after a stream has gone by. gptq_gemm_wg32's slots at gate/up's shape
// are written a tile's stream (about 20 µs, 50 MB) before lo reads them: kept, the layer's
// graph at B = 32 took 0.8 µs less (bench/explore/slotpf, session 60).
__device__ __forceinline__ void ima_store4_evict_last(float* p, const ImaVec<float, 4>& v) {
    unsigned long long policy;
    asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
    asm volatile("st.global.L2::cache_hint.v4.f32 [%0], {%1, %2, %3, %4}, %5;" ::"l"(p), "f"(v.v[0]), "f"(v.v[1]),
                 "f"(v.v[2]), "f"(v.v[3]), "l"(policy)
                 : "memory");
}

// A warp-specialised main loop over `steps` stages on the TMA unit (the structure of
// CUTLASS's warp-specialised kernels and of fast.cu's): a block of 128 (1 + CONSUMERS)
// threads, warpgroup 0 the producer and warpgroups 1 .. CONSUMERS the consumers, with
// STAGES buffers circulating through a "full" and an "empty" mbarrier each. Every thread
// of the block constructs it (thread 0 initialises the barriers, then all synchronise).
// Then `consumer()` is the thread's consumer index, or -1 in the producer, which calls
// `produce(steps, load)`: one thread waits for stage s to be free, issues step t's loads
// (`load(s, t, bar)`: `x.tma_load(tile, bar, ...)` for each operand) and arrives. Each
// consumer calls `consume(steps, compute)`: it waits for stage s's bytes, runs
// `compute(s, t)` (ImaWgAcc's `mma`, which waits for its products) and frees the stage.
// The producer gives its registers back (setmaxnreg) to the consumers, which hold the
// accumulators: the kernel must keep one block an SM (no `min_blocks` above 1), whose
// registers the counts below share out. A pipeline runs one main loop: `produce` and
// `consume` are called once each (a second loop would restart the barriers' phases).
// The barriers count on a block of exactly 128 (1 + CONSUMERS) threads along x; another
// shape traps at the start, rather than hang.
//
// WARPS: each consumer warp frees a stage when it is done with it, rather than each
// consumer warpgroup: for a `compute` whose warps read the stage on their own (mma.sync
// fed by `chunk` and a quantized accessor's `tma_frag`), where a warpgroup's first warp
// would otherwise free the stage while the others still read it. Such a body meets its
// fellow consumers with `consumers_sync()`.
//
// TRANSFORMERS: that many of the producer warpgroup's warps 1 .. 3 rework each stage in
// shared memory between its copy and its consumers (`transform(steps, f)`: wait for the
// stage's bytes, run f(s, t), make the writes visible to warpgroup MMA's reads, arrive),
// and the consumers wait for them rather than for the bytes. The producer warpgroup then
// keeps more registers (a transform holds a few tiles' rows).
template <int STAGES, int CONSUMERS, bool WARPS = false, int TRANSFORMERS = 0>
struct ImaTmaPipeline {
    static_assert(STAGES >= 2 && CONSUMERS >= 1 && CONSUMERS <= 4, "2 or more stages, 1 to 4 consumer warpgroups");
    static_assert(TRANSFORMERS >= 0 && TRANSFORMERS <= 3, "the producer warpgroup's warps 1 to 3 transform");
    // Arrivals that free a stage.
    static constexpr int RELEASES = WARPS ? 4 * CONSUMERS : CONSUMERS;
    static constexpr int PRODUCER_REGS = TRANSFORMERS ? 56 : 40;
    // setmaxnreg moves registers within what the launch gave the block (65536 shared by its
    // threads, a multiple of 8 a thread): a consumer count that asks for more than the
    // producer gave back waits for good.
    static constexpr int LAUNCH_REGS = 65536 / (128 * (1 + CONSUMERS)) / 8 * 8;
    static constexpr int CONSUMER_REGS_SHARE = (LAUNCH_REGS * (1 + CONSUMERS) - PRODUCER_REGS) / CONSUMERS / 8 * 8;
    static constexpr int CONSUMER_REGS = CONSUMER_REGS_SHARE > 256 ? 256 : CONSUMER_REGS_SHARE;
    static_assert(PRODUCER_REGS + CONSUMERS * CONSUMER_REGS <= LAUNCH_REGS * (1 + CONSUMERS),
                  "setmaxnreg may hand out no more registers than the launch gave the block");
    // Each stage's barriers: its bytes copied (full), freed by its consumers (empty), and
    // transformed (ready; the consumers' wait, full's where nothing transforms).
    unsigned full, empty, ready;

    __device__ __forceinline__ ImaTmaPipeline() {
        if (blockDim.x != 128 * (1 + CONSUMERS) || blockDim.y != 1 || blockDim.z != 1) __trap();
        __shared__ __align__(8) unsigned long long bars[(TRANSFORMERS ? 3 : 2) * STAGES];
        full = unsigned(__cvta_generic_to_shared(bars));
        empty = full + 8 * STAGES;
        ready = TRANSFORMERS ? empty + 8 * STAGES : full;
        if (threadIdx.x == 0) {
#pragma unroll
            for (int s = 0; s < STAGES; ++s) {
                asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(full + 8 * s), "r"(1));
                asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(empty + 8 * s), "r"(RELEASES));
                if constexpr (TRANSFORMERS > 0)
                    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(ready + 8 * s), "r"(TRANSFORMERS));
            }
            asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        }
        __syncthreads();
    }

    // -1 in the producer warpgroup, else the consumer warpgroup's index. Lane 0's value,
    // broadcast (as CUTLASS's canonical_warp_idx_sync), so that ptxas knows it is uniform
    // across the warp: a role's branch is then warp-uniform, and what the body computes
    // from uniform values alone (a stage's shared address, warpgroup MMA's descriptors)
    // stays in uniform registers. Without it, gptq_gemm_wg16's consumers built each MMA's
    // descriptor in vector registers and moved it over (VIADD, MOV and 2 R2URs an MMA), and
    // recomputed the stage's addresses there: its stage loop took 299 instructions a warp,
    // 281 with this and 253 with ImaWgmmaRegA's one descriptor operand (SASS, nvcc 13.0).
    // Every lane of the warp calls it together: inside one lane's branch the shuffle waits
    // for the other lanes for good (a stamp of bench/explore/wgstamp hung so).
    __device__ __forceinline__ int consumer() const { return __shfl_sync(0xffffffffu, int(threadIdx.x / 128), 0) - 1; }

    template <typename I, typename Load>
    __device__ __forceinline__ void produce(I steps, Load&& load) const {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(PRODUCER_REGS));
        if (threadIdx.x != 0) return;
#pragma unroll 1
        for (I t = 0; t < steps; ++t) {
            const int s = int(t % STAGES);
            // Round t / STAGES of stage s: the consumers freed round t / STAGES - 1.
            if (t >= STAGES) ima_mbar_wait(empty + 8 * s, unsigned((t / STAGES - 1) & 1));
            load(s, t, ImaBarrier{full + 8 * s});
            ima_mbar_arrive(full + 8 * s);
        }
    }

    // A transforming warp's loop (after `produce`, which every thread of the producer
    // warpgroup calls first for its setmaxnreg): f(s, t) reworks stage s of step t, whose
    // bytes have landed; its shared-memory writes are then fenced for the async proxy
    // (warpgroup MMA reads its operands through it) and the warp arrives.
    template <typename I, typename Transform>
    __device__ __forceinline__ void transform(I steps, Transform&& f) const {
        static_assert(TRANSFORMERS > 0, "a pipeline of transforming warps");
#pragma unroll 1
        for (I t = 0; t < steps; ++t) {
            const int s = int(t % STAGES);
            ima_mbar_wait(full + 8 * s, unsigned((t / STAGES) & 1));
            f(s, t);
            asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
            __syncwarp();
            if (threadIdx.x % 32 == 0) ima_mbar_arrive(ready + 8 * s);
        }
    }

    template <typename I, typename Compute>
    __device__ __forceinline__ void consume(I steps, Compute&& compute) const {
        asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(CONSUMER_REGS));
#pragma unroll 1
        for (I t = 0; t < steps; ++t) {
            const int s = int(t % STAGES);
            ima_mbar_wait(ready + 8 * s, unsigned((t / STAGES) & 1));
            compute(s, t);
            if constexpr (WARPS) {
                __syncwarp();
                if (threadIdx.x % 32 == 0) ima_mbar_arrive(empty + 8 * s);
            } else {
                if (threadIdx.x % 128 == 0) ima_mbar_arrive(empty + 8 * s);
            }
        }
    }

    // A barrier of the consumer warpgroups alone (named barrier 5), while the producer runs
    // on: for an epilogue in which they meet in shared memory.
    __device__ __forceinline__ void consumers_sync() const {
        static_assert(CONSUMERS <= 3, "with 4 consumer warpgroups named barrier 5 is the last one's ima_warpgroup_sync");
        asm volatile("bar.sync 5, %0;" ::"n"(128 * CONSUMERS) : "memory");
    }
};

// The 64-bit shared-memory matrix descriptor of warpgroup MMA (PTX ISA, "Matrix
// Descriptor"): start address, leading and stride byte offsets (each >> 4, 14 bits), and
// the 128-byte swizzle (1 << 62).
__device__ __forceinline__ unsigned long long ima_wgmma_desc_field(unsigned x) {
    return (unsigned long long)((x & 0x3FFFF) >> 4);
}
__device__ __forceinline__ unsigned long long ima_wgmma_desc(unsigned addr, unsigned lbo, unsigned sbo) {
    return ima_wgmma_desc_field(addr) | ima_wgmma_desc_field(lbo) << 16 | ima_wgmma_desc_field(sbo) << 32 | 1ull << 62;
}

// The accumulator operands of an m64nNk16 MMA: N / 8 accumulator tiles from c[i].
#define IMA_WG_ACC1(c, i) "+f"(c[i].x[0]), "+f"(c[i].x[1]), "+f"(c[i].x[2]), "+f"(c[i].x[3])
#define IMA_WG_ACC4(c, i) IMA_WG_ACC1(c, i), IMA_WG_ACC1(c, i + 1), IMA_WG_ACC1(c, i + 2), IMA_WG_ACC1(c, i + 3)
#define IMA_WG_ACC8(c, i) IMA_WG_ACC4(c, i), IMA_WG_ACC4(c, i + 4)
// Their names in the instruction, %0 .. %(N / 2 - 1).
#define IMA_WG_REGS32 \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, " \
    "%20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define IMA_WG_REGS64 \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, " \
    "%20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, " \
    "%38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, " \
    "%56, %57, %58, %59, %60, %61, %62, %63"
#define IMA_WG_REGS128 \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, " \
    "%20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, " \
    "%38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, " \
    "%56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, " \
    "%74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, " \
    "%92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, " \
    "%108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, " \
    "%123, %124, %125, %126, %127"

// d += A B for one m64nNk16 step of a warpgroup, A and B described in shared memory; B is
// N-major (stored [k][n]) when TB, else K-major (stored [n][k]).
template <typename T, int N>
struct ImaWgmma;
#ifdef __CUDA_FP16_TYPES_EXIST__
template <>
struct ImaWgmma<__half, 64> {
    template <int TB>
    static __device__ __forceinline__ void mma(ImaAcc4 (&c)[8], unsigned long long a, unsigned long long b) {
        asm volatile("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {" IMA_WG_REGS32 "}, %32, %33, 1, 1, 1, 0, %34;"
                     : IMA_WG_ACC8(c, 0)
                     : "l"(a), "l"(b), "n"(TB));
    }
};
template <>
struct ImaWgmma<__half, 128> {
    template <int TB>
    static __device__ __forceinline__ void mma(ImaAcc4 (&c)[16], unsigned long long a, unsigned long long b) {
        asm volatile("wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {" IMA_WG_REGS64 "}, %64, %65, 1, 1, 1, 0, %66;"
                     : IMA_WG_ACC8(c, 0), IMA_WG_ACC8(c, 8)
                     : "l"(a), "l"(b), "n"(TB));
    }
};
template <>
struct ImaWgmma<__half, 256> {
    template <int TB>
    static __device__ __forceinline__ void mma(ImaAcc4 (&c)[32], unsigned long long a, unsigned long long b) {
        asm volatile("wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {" IMA_WG_REGS128 "}, %128, %129, 1, 1, 1, 0, %130;"
                     : IMA_WG_ACC8(c, 0), IMA_WG_ACC8(c, 8), IMA_WG_ACC8(c, 16), IMA_WG_ACC8(c, 24)
                     : "l"(a), "l"(b), "n"(TB));
    }
};
#endif
#ifdef __CUDA_BF16_TYPES_EXIST__
template <>
struct ImaWgmma<__nv_bfloat16, 64> {
    template <int TB>
    static __device__ __forceinline__ void mma(ImaAcc4 (&c)[8], unsigned long long a, unsigned long long b) {
        asm volatile("wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {" IMA_WG_REGS32 "}, %32, %33, 1, 1, 1, 0, %34;"
                     : IMA_WG_ACC8(c, 0)
                     : "l"(a), "l"(b), "n"(TB));
    }
};
template <>
struct ImaWgmma<__nv_bfloat16, 128> {
    template <int TB>
    static __device__ __forceinline__ void mma(ImaAcc4 (&c)[16], unsigned long long a, unsigned long long b) {
        asm volatile("wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {" IMA_WG_REGS64 "}, %64, %65, 1, 1, 1, 0, %66;"
                     : IMA_WG_ACC8(c, 0), IMA_WG_ACC8(c, 8)
                     : "l"(a), "l"(b), "n"(TB));
    }
};
template <>
struct ImaWgmma<__nv_bfloat16, 256> {
    template <int TB>
    static __device__ __forceinline__ void mma(ImaAcc4 (&c)[32], unsigned long long a, unsigned long long b) {
        asm volatile("wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {" IMA_WG_REGS128 "}, %128, %129, 1, 1, 1, 0, %130;"
                     : IMA_WG_ACC8(c, 0), IMA_WG_ACC8(c, 8), IMA_WG_ACC8(c, 16), IMA_WG_ACC8(c, 24)
                     : "l"(a), "l"(b), "n"(TB));
    }
};
#endif

// d += A B for one m64nNk16 step of a warpgroup, A in registers (each warp's 16 rows in
// the m16n8k16 A fragment layout: a[0] rows g, a[1] rows g + 8 at k 2 t, 2 t + 1, a[2],
// a[3] the same at k + 8, for lane 4 g + t) and B described in shared memory, K-major
// (stored [n][k]), its 64-bit descriptor one operand: ptxas then steps it with one
// UIADD3.64 an MMA, where two 32-bit halves joined in the asm took a move of each half
// as well (gptq_gemm_wg16: 28 fewer instructions a warp and stage, SASS, nvcc 13.0).
// f16 only: W4A16's decoded weights.
template <int N>
struct ImaWgmmaRegA;
#ifdef __CUDA_FP16_TYPES_EXIST__
template <>
struct ImaWgmmaRegA<16> {
    static __device__ __forceinline__ void mma(ImaAcc4 (&c)[2], const unsigned (&a)[4], unsigned long long b) {
        asm volatile("wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7}, "
                     "{%8, %9, %10, %11}, %12, 1, 1, 1, 0;"
                     : IMA_WG_ACC1(c, 0), IMA_WG_ACC1(c, 1)
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));
    }
};
template <>
struct ImaWgmmaRegA<32> {
    static __device__ __forceinline__ void mma(ImaAcc4 (&c)[4], const unsigned (&a)[4], unsigned long long b) {
        asm volatile("wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, "
                     "%10, %11, %12, %13, %14, %15}, {%16, %17, %18, %19}, %20, 1, 1, 1, 0;"
                     : IMA_WG_ACC4(c, 0)
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));
    }
};
template <>
struct ImaWgmmaRegA<64> {
    static __device__ __forceinline__ void mma(ImaAcc4 (&c)[8], const unsigned (&a)[4], unsigned long long b) {
        asm volatile("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {" IMA_WG_REGS32 "}, {%32, %33, %34, %35}, %36, 1, 1, 1, 0;"
                     : IMA_WG_ACC8(c, 0)
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));
    }
};
#endif
#undef IMA_WG_ACC1
#undef IMA_WG_ACC4
#undef IMA_WG_ACC8
#undef IMA_WG_REGS32
#undef IMA_WG_REGS64
#undef IMA_WG_REGS128

// A warpgroup's accumulators of a 64 x N product on the tensor cores (f32): N / 8 tiles
// of 16 x 8 per warp, tile j at columns 8 j of the warp's 16 rows (rows `row0()` of the
// 64): each tile the m16n8 accumulator layout that outputs' `store_acc` stores.
// `mma(a, ar0, ImaConst<B_KN>{}, b)` adds the product of rows ar0 .. ar0 + 63 of A's tile
// (stored [m][k]) and B's tile over all k of the stage, B stored [k][n] (`ImaConst<1>`)
// or [n][k] (`ImaConst<0>`), and waits for it: on return the stage may be freed.
template <int N>
struct ImaWgAcc {
    ImaAcc4 c[N / 8];

    __device__ __forceinline__ ImaWgAcc() {
#pragma unroll
        for (int j = 0; j < N / 8; ++j) c[j] = ImaAcc4{{0.f, 0.f, 0.f, 0.f}};
    }

    // The first of this thread's warp's 16 rows among the warpgroup's 64.
    __device__ __forceinline__ int row0() const { return 16 * int(threadIdx.x % 128 / 32); }

    // Every accumulator times s (a softmax scale, say), before the stores.
    __device__ __forceinline__ void scale(float s) {
#pragma unroll
        for (int j = 0; j < N / 8; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) c[j].x[e] *= s;
    }

    // Adds t's accumulators times s_g in the lane's rows g (c[j].x[0], x[1]) and s_g8 in its
    // rows g + 8 (x[2], x[3]), where the MMA's rows are a weight's columns and each column
    // has its own scale (a quantized accessor's tma_wg_frag_unscaled): the scale of a
    // group applied once to its sums, in f32, rather than to each weight.
    __device__ __forceinline__ void fma_rows(const ImaWgAcc& t, float s_g, float s_g8) {
#pragma unroll
        for (int j = 0; j < N / 8; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) c[j].x[e] = fmaf(e < 2 ? s_g : s_g8, t.c[j].x[e], c[j].x[e]);
    }

    // The warpgroup's 64 x N accumulators, converted to T, written into the shared tile `t`
    // (ROWS x N, TMA's 128-byte-swizzled layout) at rows r0 .. r0 + 63: each thread its
    // pairs of columns, a warp's store of one pair per lane falling in 32 different banks.
    // Then `ima_tma_store_fence`, a barrier, and one thread's `y.tma_store(t, ...)`.
    template <typename T, int ROWS, bool CH>
    __device__ __forceinline__ void store_tile(const ImaTmaTile<T, ROWS, N, CH>& t, int r0) const {
        static_assert(sizeof(T) == 2 || sizeof(T) == 4, "16- or 32-bit elements");
        static_assert(ROWS % 64 == 0, "the tile is whole warpgroups of 64 rows");
        if constexpr (CH) {
            if (!t.ok) return;
            if (!(r0 >= 0 && r0 % 64 == 0 && r0 + 64 <= ROWS)) {
                const int i[2] = {r0, 0}, e[2] = {ROWS, N};
                ima_report<int, 2>(t.rec, t.arg, 1, IMA_TILE_CHUNK, 0, i, e);
                return;
            }
        }
        const int l = threadIdx.x % 32;
#pragma unroll
        for (int j = 0; j < N / 8; ++j)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int r = r0 + row0() + l / 4 + 8 * h;
                const unsigned byte = unsigned(8 * j + 2 * (l % 4)) * unsigned(sizeof(T));
                const unsigned at = ima_swizzled(t.addr, ROWS, r, byte);
                const T v[2] = {T(c[j].x[2 * h]), T(c[j].x[2 * h + 1])};
                if constexpr (sizeof(T) == 2) {
                    unsigned w;
                    memcpy(&w, v, 4);
                    asm volatile("st.shared.b32 [%0], %1;" ::"r"(at), "r"(w) : "memory");
                } else {
                    unsigned w[2];
                    memcpy(w, v, 8);
                    asm volatile("st.shared.v2.b32 [%0], {%1, %2};" ::"r"(at), "r"(w[0]), "r"(w[1]) : "memory");
                }
            }
    }

    // Issues acc += A B for one k step of 16, A from registers (`a`, ImaWgmmaRegA's
    // layout: a quantized accessor's `tma_wg_frag`) and B the first N rows of a K-major
    // tile (stored [n][k]) at columns k .. k + 15, and returns without waiting. The body
    // fences (`fence()`) after writing `a` and before the first such step reads it, commits
    // its steps (`commit()`) and waits for them (`wait<0>()`) before it frees B's stage or
    // writes `a` again. The tile's rows past N are not read. f16 only.
#ifdef __CUDA_FP16_TYPES_EXIST__
    template <int RB, int KB, bool CH>
    __device__ __forceinline__ void mma_regs(const unsigned (&a)[4], const ImaTmaTile<__half, RB, KB, CH>& b, int k) {
        static_assert(RB >= N && RB % 8 == 0 && KB % 16 == 0, "B's tile holds the accumulator's N rows, whole k steps");
        constexpr int PANEL = 64;  // 16-bit columns in a 128-byte panel
        const int kk = int(unsigned(k) % KB) / 16 * 16;  // wraps inside the tile (k < 0 too), a whole step
        // The step's offset added to the tile's descriptor (to its address field, in units
        // of 16 bytes, which cannot carry: shared memory ends below 2^18 bytes), so that a
        // body's unrolled steps share one descriptor and add constants.
        const unsigned long long step = unsigned((kk / PANEL) * RB * 128 + (kk % PANEL) * 2) / 16;
        const unsigned long long d = ima_wgmma_desc(b.addr, 16, 1024);
        ImaWgmmaRegA<N>::mma(c, a, d + step);
    }
#endif
    static __device__ __forceinline__ void fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
    static __device__ __forceinline__ void commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
    template <int PENDING>
    static __device__ __forceinline__ void wait() {
        asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(PENDING) : "memory");
    }

    template <int B_KN, typename T, int RA, int KA, int RB, int CB, bool CH>
    __device__ __forceinline__ void mma(const ImaTmaTile<T, RA, KA, CH>& a, int ar0, ImaConst<B_KN>,
                                        const ImaTmaTile<T, RB, CB, CH>& b) {
        static_assert(sizeof(T) == 2, "warpgroup MMA here multiplies 16-bit elements");
        static_assert(KA % 16 == 0 && (B_KN ? RB == KA && CB == N : CB == KA && RB == N),
                      "A's columns are B's k, and B has the accumulator's N");
        static_assert(RA % 64 == 0, "A's tile is whole warpgroups of 64 rows");
        constexpr int PANEL = 64;  // 16-bit columns in a 128-byte panel
        if constexpr (CH) {
            // Refused rows are reported and rows 0 multiplied instead (a refused tile points
            // at its array's start): every thread of the warpgroup issues the same MMAs,
            // since a skipped one would put them all in a divergent path, which ptxas
            // serialises.
            if (!(ar0 >= 0 && ar0 % 64 == 0 && ar0 + 64 <= RA)) {
                const int i[2] = {ar0, 0}, e[2] = {RA, KA};
                ima_report<int, 2>(a.rec, a.arg, 0, IMA_TILE_CHUNK, 0, i, e);
                ar0 = 0;
            }
        }
        asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
        for (int k = 0; k < KA; k += 16) {
            // A, K-major: 8-row groups 1024 bytes apart, a k step 32 bytes into its panel.
            const unsigned long long da =
                ima_wgmma_desc(a.addr + (k / PANEL) * RA * 128 + ar0 * 128 + (k % PANEL) * 2, 16, 1024);
            // B, N-major: panels of 64 columns RB * 128 bytes apart, 8-row groups of k 1024
            // apart; K-major: as A.
            const unsigned long long db =
                B_KN ? ima_wgmma_desc(b.addr + k * 128, RB * 128, 1024)
                     : ima_wgmma_desc(b.addr + (k / PANEL) * RB * 128 + (k % PANEL) * 2, 16, 1024);
            ImaWgmma<T, N>::template mma<B_KN>(c, da, db);
        }
        asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
        asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    }
};

// x's tile in the order of the pair decode (a quantized accessor's tma_wg_pairs_unscaled):
// within each 32 columns of K, slot 16 s + 8 h + 2 t + e holds column 8 t + 4 e + 2 s + h
// (t < 4; s, h, e < 2), so that the f16 pair a lane (g, t) holds of a step's A fragment is
// one packed word's nibbles i and i + 4, which one LOP3 takes at once, and its two steps
// of 32 rows of K are that one word (rows 8 t .. 8 t + 7) of each of its columns. Item
// `item` (< ROWS * COLS / 32): row item % ROWS, block item / ROWS of 32 columns, in place
// (a thread reads its 64 bytes, then writes them: items are independent). The warpgroup
// MMA reads the result once the writes are fenced for the async proxy
// (ImaTmaPipeline's `transform`).
#ifdef __CUDA_FP16_TYPES_EXIST__
template <int ROWS, int COLS, bool CH>
__device__ __forceinline__ void ima_wg_pairs_order(const ImaTmaTile<__half, ROWS, COLS, CH>& t, int item) {
    static_assert(COLS % 32 == 0, "whole blocks of 32 columns");
    const int r = item % ROWS, b = item / ROWS;
    // in[4 q + i]: columns 32 b + 8 q + 2 i and + 1, i.e. word 4 t + m holds columns
    // 8 t + 2 m, + 1; slot word 4 (2 s + h) + t takes half h of words 4 t + s and 4 t + 2 + s.
    unsigned in[16], out[16];
#pragma unroll
    for (int q = 0; q < 4; ++q) {
        unsigned v[4];
        ima_ld_shared(ima_swizzled(t.addr, ROWS, r, unsigned((32 * b + 8 * q) * 2)), v);
#pragma unroll
        for (int i = 0; i < 4; ++i) in[4 * q + i] = v[i];
    }
#pragma unroll
    for (int tt = 0; tt < 4; ++tt)
#pragma unroll
        for (int s = 0; s < 2; ++s)
#pragma unroll
            for (int h = 0; h < 2; ++h)
                out[4 * (2 * s + h) + tt] = __byte_perm(in[4 * tt + s], in[4 * tt + 2 + s], h ? 0x7632u : 0x5410u);
#pragma unroll
    for (int q = 0; q < 4; ++q)
        asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};" ::"r"(ima_swizzled(t.addr, ROWS, r, unsigned((32 * b + 8 * q) * 2))),
                     "r"(out[4 * q]), "r"(out[4 * q + 1]), "r"(out[4 * q + 2]), "r"(out[4 * q + 3])
                     : "memory");
}
#endif

// One stage of a W4A16 warpgroup kernel (gptq_gemm_wg; wg16 and wg32 through
// ima_wg_w4_pairs_gemm): the 256 rows of K of W's shared tile `wt` at this lane's
// columns c0 and c0 + 1, decoded by the quantized accessor `w` (`tma_wg_group`,
// `tma_wg_frag`) into warpgroup MMA's register A operand, times x's K-major tile `xt`,
// added into `acc`; returns once its MMAs are done, so that the pipeline may free the
// stage. The 16 steps go in quarters, each decoded whole and
// then multiplied, so that a quarter's decoding runs while the tensor cores multiply the
// one before (a fence a step would keep each step's reads, decoding and MMA in sequence);
// two quarters' registers, the older freed by waiting for its MMAs. (Leaving the last
// quarters' MMAs running into the next stage made ptxas wait after every MMA.)
// SCALE_AFTER (groups of 128 rows or more: one a half stage) decodes q - z alone
// (`tma_wg_frag_unscaled`) into accumulators of each half stage's own, and adds them
// into acc times the group's scale, in f32 (the first half's while the second's MMAs
// run): an HMUL2 a register fewer than scaling each weight in f16, which at 16 rows was
// 7.5 of 56 µs (bench/RESULTS.md, "The scale after the MMA"). Otherwise each weight is
// scaled and the group read again every G rows (group_steps: G / 16 - 1, G a power of
// two of at least 32).
//
// PAIRS (with SCALE_AFTER): x's tile is in ima_wg_pairs_order, and each 32 rows' words
// decode in nibble pairs (`tma_wg_pairs_unscaled`): a word's shift, 4 LOP3s and 4 adds
// where the natural order takes a byte permute, a LOP3 and an FMA a register, and one
// 8-byte read for two steps where it takes four: a fifth fewer instructions a stage.
//
// SETS (with SCALE_AFTER): the quarters' registers, 2 to 4. With 3 the decoding runs up
// to two quarters ahead of the MMAs, a quarter's MMAs waited for only before its
// registers are decoded into again; with 4, never within a stage. At 16 rows 3 took 0.5
// to 3% off gptq_gemm_wg16's launch at K = 8192, N = 28672 in two calls, and 4 another
// 0.5 to 1% in two more (bench/RESULTS.md, "The decode ahead of the MMAs" and "Four
// quarters' registers"). At 32 rows (gptq_gemm_wg32) 3 fit in the registers, with no
// more spill than 2, but lost 0.7 to 2.4 us a launch on the layer's shapes, and 4 tied or
// lost (bench/RESULTS.md, "Three and four register sets at 32 rows"): 2 there.
template <bool SCALE_AFTER, bool PAIRS = false, int SETS = 2, int N, typename W, typename WT, typename XT>
__device__ __forceinline__ void ima_wg_w4_stage(ImaWgAcc<N>& acc, const W& w, const WT& wt, const XT& xt, int c0,
                                                int group_steps) {
    static_assert(SCALE_AFTER || !PAIRS, "the pair decode leaves the scale for the MMA's sums");
    static_assert(SETS == 2 || (SETS >= 3 && SETS <= 4 && SCALE_AFTER),
                  "two quarters' registers, or three or four with the scale after");
    unsigned a[SETS][4][4];
    if constexpr (SCALE_AFTER) {
        const decltype(w.tma_wg_group(wt, 0, c0)) q[2] = {w.tma_wg_group(wt, 0, c0), w.tma_wg_group(wt, 128, c0)};
        ImaWgAcc<N> half[2];
#pragma unroll
        for (int h = 0; h < 4; ++h) {
            // Quarter h - SETS, which read these registers, is done.
            if (h >= SETS) acc.template wait<SETS - 1>();
            // With 2 sets, that wait found quarters 0 and 1 done.
            if (SETS == 2 && h == 3) acc.fma_rows(half[0], q[0].scale(0), q[0].scale(1));
            if constexpr (PAIRS) {
#pragma unroll
                for (int b = 2 * h; b < 2 * h + 2; ++b)
                    w.tma_wg_pairs_unscaled(wt, q[h / 2], b, c0, a[h % SETS][2 * (b % 2)], a[h % SETS][2 * (b % 2) + 1]);
            } else {
#pragma unroll
                for (int j = 4 * h; j < 4 * h + 4; ++j)
                    w.tma_wg_frag_unscaled(wt, q[h / 2], j, c0, a[h % SETS][j % 4]);
            }
            acc.fence();
#pragma unroll
            for (int j = 4 * h; j < 4 * h + 4; ++j) half[h / 2].mma_regs(a[h % SETS][j % 4], xt, 16 * j);
            acc.commit();
        }
        if constexpr (SETS >= 3) {
            acc.template wait<2>();  // quarters 0 and 1
            acc.fma_rows(half[0], q[0].scale(0), q[0].scale(1));
        }
        acc.template wait<0>();
        acc.fma_rows(half[1], q[1].scale(0), q[1].scale(1));
    } else {
        auto q = w.tma_wg_group(wt, 0, c0);
#pragma unroll
        for (int h = 0; h < 4; ++h) {
            if (h >= 2) acc.template wait<1>();
#pragma unroll
            for (int j = 4 * h; j < 4 * h + 4; ++j) {
                // A group starts at an even step (G >= 32).
                if (j % 2 == 0 && j > 0 && (j & group_steps) == 0) q = w.tma_wg_group(wt, 16 * j, c0);
                w.tma_wg_frag(wt, q, j, c0, a[h % 2][j % 4]);
            }
            acc.fence();
#pragma unroll
            for (int j = 4 * h; j < 4 * h + 4; ++j) acc.mma_regs(a[h % 2][j % 4], xt, 16 * j);
            acc.commit();
        }
        acc.template wait<0>();
    }
}

// ima_wg_w4_pairs_gemm's consumer warpgroups with columns in the tile from W's column n0
// (n0 < N), 64 columns each: those that store a slot of a shared tile.
template <typename I>
__device__ __forceinline__ int ima_wg_w4_tile_warpgroups(I n0, I N) {
    return N - n0 >= 192 ? 3 : int(ima_ceil_div(N - n0, I(64)));
}

// The body of the W4A16 warpgroup kernels for a decode batch (gptq_gemm_wg16, R = 16;
// gptq_gemm_wg32, R = 32), which differ only in x's rows a stage, the stages, and the
// shapes their specs declare, so that it is written once: y = x · W, W in GPTQ int4 with
// groups of 128 or 256 rows, in a warp-specialised pipeline of STAGES stages of W's 192
// columns by 256 rows of K (`ws`, [STAGES, 40, 192] words) and x's R rows (`xs`,
// [STAGES, R, 256]). Units of (R rows of x, 192 columns of W, 256 rows of K), columns
// then K, shared out over the grid's blocks (ImaStreamK: every block at once, a
// `persistent` launch); a tile that blocks share is summed by its first (lo) from the
// others' slots of `part` ([blocks, 3, R / 8, 128, 4]: a block's 3 consumer warpgroups'
// accumulator tiles), counted on `arrivals` (zero before and after a launch). Warps 2
// and 3 of the producer warpgroup put each stage's x in the pair order
// (ima_wg_pairs_order), warp 1 counts the shared tile for all three consumer warpgroups,
// and the consumers decode the words in nibble pairs with each group's scale after the
// MMA (ima_wg_w4_stage<true, true>; at 16 rows with four quarters' registers, the decode
// never waiting for an MMA within a stage). With NY = N / 2 (`fused`) the gate/up projection
// with SiluAndMul fused: a warp's 16 columns of W are 8 of gate, then 8 of up
// (GATE_UP_UNIT = 8, which the specs assert), y's column n / 16 * 8 + n % 8. Every thread
// calls wait_for_inputs() once the pipeline's barriers are set up, before it touches
// memory (gptq_gemm_wg32's ima_wait_for_inputs, which lets that setup run while the grid
// ahead does; a no-op for gptq_gemm_wg16).
#ifdef __CUDA_FP16_TYPES_EXIST__
template <int R, int STAGES, int SETS = (R == 16 ? 4 : 2), typename I, typename X, typename W, typename P, typename A,
          typename Y, typename WS, typename XS, typename WF>
__device__ __forceinline__ void ima_wg_w4_pairs_gemm(const X& x, const W& w, const P& part, const A& arrivals, const Y& y,
                                                     I M, I K, I N, I NY, const WS& ws, const XS& xs,
                                                     const WF& wait_for_inputs) {
    static_assert(R == 16 || R == 32, "x's rows a stage: one or two MMA widths of 16");
    const I KS = ima_ceil_div(K, I(256)), NS = ima_ceil_div(N, I(192));
    const ImaStreamK<I> sk(NS * KS);
    const I u0 = sk.start(I(blockIdx.x)), u1 = sk.start(I(blockIdx.x) + 1);
    const ImaTmaPipeline<STAGES, 3, false, 2> pipe;
    wait_for_inputs();
    if (pipe.consumer() < 0) {
        I kc = u0 % KS, tile = u0 / KS;
        pipe.produce(u1 - u0, [&](int st, I, ImaBarrier bar) {
            w.tma_load(ws.tma_tile(ImaConst<40>{}, ImaConst<192>{}, st), bar, 256 * kc, tile * 192);
            x.tma_load(xs.tma_tile(ImaConst<R>{}, ImaConst<256>{}, st), bar, 0, 256 * kc);
            if (++kc == KS) {
                kc = 0;
                ++tile;
            }
        });
        const int warp = int(threadIdx.x / 32);
        if (warp >= 2) {
            // R x 8 items a stage (rows by blocks of 32 columns), R / 8 a thread.
            pipe.transform(u1 - u0, [&](int st, I) {
                const auto xt = xs.tma_tile(ImaConst<R>{}, ImaConst<256>{}, st);
#pragma unroll
                for (int i = 0; i < R / 8; ++i) ima_wg_pairs_order(xt, int(threadIdx.x) - 64 + 64 * i);
            });
        } else if (warp == 1 && u0 % KS != 0) {
            // Warp 1 counts the consumer warpgroups' units of the tile this block shares but
            // does not sum, once they have all stored their slots (they reach the tile's end
            // at one step): lane wg counts warpgroup wg's, the lanes' releases one
            // instruction. One warpgroup's at a time, each release a fence and an atomic's
            // round trip, put the third warpgroup's count 2 µs after its slot at p50
            // (bench/explore/wgstamp, session 60), which lo of the tile waited out.
            const I tile = u0 / KS, n0 = tile * 192;
            const int wgs = ima_wg_w4_tile_warpgroups(n0, N), wg = int(threadIdx.x % 32);
            ima_bar_sync(6, 32 + 128 * wgs);
            if (wg < wgs) {
                const int mine = int((u1 < (tile + 1) * KS ? u1 : (tile + 1) * KS) - u0);
                ImaStreamK<I>::arrive(&arrivals(0, n0 / 64 + wg), mine, int(KS));
            }
        }
        return;
    }
    const int wg = pipe.consumer(), lane = threadIdx.x % 32;
    // This lane's two columns of the block's 192: A's rows g and g + 8 of its warp.
    const int c0 = 64 * wg + 16 * (threadIdx.x / 32 % 4) + 2 * (lane / 4);
    const bool fused = NY != N;
    ImaWgAcc<R> acc;
    // y's tile of W's columns from n0 (rows from 0) from the lane's accumulators: e and
    // e + 2 of each are one row's columns n and n + 1 (n even), stored as one pair, so that
    // each of a warp's 4 stores a tile fills 4 whole 32-byte sectors (8 lanes' pairs a row;
    // 8 two-byte stores half-filled them). Fused, lane l's up columns are lane l + 16's,
    // and n, n + 1 stay adjacent in y.
    const auto emit = [&](const ImaAcc4 (&c)[R / 8], I n0) {
        const auto all = [&](auto edge) {
#pragma unroll
            for (int j = 0; j < R / 8; ++j)
#pragma unroll
                for (int e = 0; e < 2; ++e) {
                    const I m = 8 * j + 2 * (lane % 4) + e, n = n0 + c0;
                    float v0 = c[j].x[e], v1 = c[j].x[e + 2];
                    I ny = n;
                    if (fused) {
                        const float u0 = __shfl_down_sync(0xffffffffu, v0, 16), u1 = __shfl_down_sync(0xffffffffu, v1, 16);
                        v0 = v0 / (1.f + __expf(-v0)) * u0;
                        v1 = v1 / (1.f + __expf(-v1)) * u1;
                        ny = n / 16 * 8 + n % 8;
                    }
                    const bool inside = !decltype(edge)::value || (m < M && n < N);
                    if ((!fused || lane < 16) && inside) y.store_pair(m, ny, v0, v1);
                }
        };
        if (R <= M && n0 + 64 * wg + 64 <= N) all(ImaConst<0>{});
        else all(ImaConst<1>{});
    };
    I next_kc = u0 % KS, next_tile = u0 / KS;
    pipe.consume(u1 - u0, [&](int st, I t) {
        const I kc = next_kc, tile = next_tile;
        if (++next_kc == KS) {
            next_kc = 0;
            ++next_tile;
        }
        const auto wt = ws.tma_tile(ImaConst<40>{}, ImaConst<192>{}, st);
        const auto xt = xs.tma_tile(ImaConst<R>{}, ImaConst<256>{}, st);
        ima_wg_w4_stage<true, true, SETS>(acc, w, wt, xt, c0, 0);
        if (kc != KS - 1 && t != u1 - u0 - 1) return;
        // The tile is done here: this warpgroup's 64 columns from n0.
        const I n0 = tile * 192;
        if (n0 + 64 * wg < N) {
            if (tile * KS >= u0 && kc == KS - 1) {
                emit(acc.c, n0);
            } else if (tile * KS < u0) {
                // Not this block's to sum: its slot, kept in L2 for lo, counted by its delegate
                // warp.
                const I tid = threadIdx.x % 128;
#pragma unroll
                for (int j = 0; j < R / 8; ++j) {
                    const float* c = acc.c[j].x;
                    ima_store4_evict_last(&part(I(blockIdx.x), wg, j, tid, 0), ImaVec<float, 4>{{c[0], c[1], c[2], c[3]}});
                }
                ima_bar_arrive(6, 32 + 128 * ima_wg_w4_tile_warpgroups(n0, N));
            } else {
                // lo: the others' slots in the blocks' order, as gptq_gemm_wg's.
                const I tid = threadIdx.x % 128, lo = blockIdx.x, hi = sk.owner(tile * KS + KS - 1);
                const I mine = u0 + t + 1 - tile * KS;
                ImaStreamK<I>::wait(&arrivals(0, n0 / 64 + wg), int(KS - mine));
                // No thread resets the count (below) before all have seen it.
                ima_warpgroup_sync();
                ImaAcc4 sum[R / 8];
#pragma unroll
                for (int j = 0; j < R / 8; ++j) sum[j] = acc.c[j];
#pragma unroll 2
                for (I b = lo + 1; b <= hi; ++b)
#pragma unroll
                    for (int j = 0; j < R / 8; ++j) {
                        const ImaVec<float, 4> v = part.load4(b, wg, j, tid, 0);
#pragma unroll
                        for (int e = 0; e < 4; ++e) sum[j].x[e] += v.v[e];
                    }
                emit(sum, n0);
                if (threadIdx.x % 128 == 0) arrivals(0, n0 / 64 + wg) = 0;
                // At 16 rows the slots, read, leave L2 unwritten: the weights being the L2's
                // first to evict (tma_load's evict_first hint), the slots are likely still
                // there, and dropped they need not be written to DRAM (12 KB a block):
                // gptq_gemm_wg16 0.3 to 0.5 µs faster at N = 28672 over the hint alone
                // (bench/RESULTS.md, session 43). At 32 rows, where lo drops twice the lines
                // a slot after its sums, it measured 0.3 to 0.5 µs slower, and keeps its
                // slots. A warp's float4s of a slot are 4 lines, all read once the warp has
                // met (the sums used them).
                if constexpr (R == 16) {
                    __syncwarp();
                    if (lane % 8 == 0)
#pragma unroll 1
                        for (I b = lo + 1; b <= hi; ++b)
#pragma unroll
                            for (int j = 0; j < R / 8; ++j) {
                                // Whole lines only (`part` is declared 16-byte aligned).
                                const float* line = &part(b, wg, j, tid, 0);
                                if (reinterpret_cast<unsigned long long>(line) % 128 == 0) ima_l2_discard(line);
                            }
                }
            }
        }
        acc = ImaWgAcc<R>{};
    });
}
#endif

// Thread-block clusters (`launch grid(...) block(...) cluster(x, y, z)`): the block's rank
// in its cluster, the cluster's blocks, and the barrier of all their threads.
__device__ __forceinline__ unsigned ima_cluster_rank() {
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}
__device__ __forceinline__ unsigned ima_cluster_blocks() {
    unsigned n;
    asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(n));
    return n;
}
// Every thread of every block of the cluster arrives, then waits for all of them, as
// __syncthreads does for a block (all of a block's threads call it): what a block wrote to
// its shared memory before it, the cluster's blocks read after it (release and acquire at
// cluster scope). A block's shared memory lives as long as its block: one last
// ima_cluster_sync keeps each block from leaving while another may still read its arrays.
__device__ __forceinline__ void ima_cluster_sync() {
    asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}
// p, an address of this block's shared memory, as block `rank` of the cluster holds it:
// the generic address of that block's distributed shared memory. A checked entry point
// reports a rank outside the cluster (IMA_CLUSTER_RANK, against shared array `arg`) and
// keeps p, so that the access stays in this block's array.
template <bool CHECKED, typename T>
__device__ __forceinline__ T* ima_cluster_map(T* p, unsigned rank, ImaRec<CHECKED> rec, int arg) {
    if constexpr (CHECKED) {
        const unsigned blocks = ima_cluster_blocks();
        if (rank >= blocks) {
            const long long i[1] = {rank}, e[1] = {blocks};
            ima_report<long long, 1>(rec, arg, 0, IMA_CLUSTER_RANK, 0, i, e);
            return p;
        }
    }
    unsigned long long q;
    asm volatile("mapa.u64 %0, %1, %2;" : "=l"(q) : "l"(reinterpret_cast<unsigned long long>(p)), "r"(rank));
    return reinterpret_cast<T*>(q);
}
// A shared array's accessor (A, the type the module generates for the array) for the same
// array in another block of the cluster, `s.in_block(rank)`: its elements and vectors,
// each index checked as this block's are (every block of a cluster has the same arrays).
// Tiles, ldmatrix and copies take this block's arrays only, and are not offered.
template <typename A>
struct ImaInBlock {
    A a;
    template <typename... Ix>
    __device__ __forceinline__ auto& operator()(Ix... i) const {
        return a(i...);
    }
    template <typename... Ix>
    __device__ __forceinline__ auto& at2(Ix... i) const {
        return a.at2(i...);
    }
    template <typename... Ix>
    __device__ __forceinline__ auto& at4(Ix... i) const {
        return a.at4(i...);
    }
    template <typename... Ix>
    __device__ __forceinline__ auto& at8(Ix... i) const {
        return a.at8(i...);
    }
    template <typename... Ix>
    __device__ __forceinline__ auto& at16(Ix... i) const {
        return a.at16(i...);
    }
};
#endif  // __CUDA_ARCH_FEAT_SM90_ALL

// The body of the W4A16 GEMVs in narrow column tiles (specs/decode.ima's gptq_gemv_narrow,
// WARPS = 8, and gptq_gemv_narrow12, WARPS = 12), which differ only in the warps a block
// stacks down K, so that it is written once: y = x · W for M <= 8, W in GPTQ int4, or with
// NY = N / 2 the fused SiluAndMul of W's gate and up halves (GATE_UP_UNIT = 8, which the
// specs assert). A block of (4, 8 WARPS) threads takes 16 columns: 4 threads across take 4
// each, 8 WARPS down split K. `part` is the warps' sums, [WARPS, 8, 16]. The specs' doc
// comments say why each choice. Device code only (the host build of this header, for its
// tests, has no shuffles or barriers).
#if defined(__CUDA_ARCH__) && defined(__CUDA_FP16_TYPES_EXIST__)
template <int WARPS, typename I, typename X, typename W, typename Y, typename P, typename WF>
__device__ __forceinline__ void ima_gptq_gemv_narrow(const X& x, const W& w, const Y& y, const P& part, I M, I K, I N,
                                                     I NY, const WF& wait_for_inputs) {
    constexpr int DOWN = 8 * WARPS;  // threads down K
    const I n = I(blockIdx.x) * 16 + threadIdx.x * 4;
    const int warp = threadIdx.y / 8;
    // Packed rows a whole tile of the one-row pass, which the first tile's request before
    // the wait asks L2 for.
    constexpr int R = 4;
    // The kernel after this one may start now, on what it reads early: at the layer's
    // shapes the grid is one wave, so its blocks take only the slots this one leaves.
    ima_launch_dependents();
    // The first whole tile's rows stream into L2 while the grid ahead ends (none where n is
    // past N: whole_tiles is 0 there).
    if (M == 1 && I(threadIdx.y) < w.whole_tiles(n, ImaConst<4>{}, ImaConst<R>{}))
        w.prefetch_whole_tile(I(threadIdx.y), n, ImaConst<4>{}, ImaConst<R>{});
    wait_for_inputs();
    // Rows m0 .. m0 + MR - 1 of x, MR a compile-time count: 1, the common decode step, in
    // whole tiles; or 4 at a time for M > 1, 8 rows of K at a time (as gptq_gemv: 4 rows of
    // x by a whole tile would not fit in registers).
    auto accumulate = [&](auto rows, I m0) {
        constexpr int MR = decltype(rows)::value;
        float sums[MR][4];
#pragma unroll
        for (int m = 0; m < MR; ++m)
#pragma unroll
            for (int c = 0; c < 4; ++c) sums[m][c] = 0.f;
        if (n < N) {
            // Counted again after the wait, not held from the request's test above: held
            // across it, the count cost the layer's graph 0.4 µs at B = 1 (bench/RESULTS.md,
            // session 70, ORT).
            const I whole = MR != 1 ? 0 : w.whole_tiles(n, ImaConst<4>{}, ImaConst<R>{});
            if constexpr (MR == 1) {
                for (I b = threadIdx.y; b < whole; b += DOWN) {
                    const auto t = w.load_whole_tile(b, n, ImaConst<4>{}, ImaConst<R>{});
                    w.dot_tile(t, [&](int r) { return x.load8(0, t.row(r)); }, sums[0]);
                }
            }
            for (I k8 = whole * 8 * R + I(threadIdx.y) * 8; k8 < K; k8 += 8 * DOWN) {
                const auto t = w.load_tile(k8, n, ImaConst<4>{});
#pragma unroll
                for (int m = 0; m < MR; ++m) {
                    if (m0 + m >= M) break;
                    w.dot_tile(t, x.load8(m0 + m, k8), sums[m]);
                }
            }
        }
        // The warp's 8 threads down a column (lanes 4 apart) add up by shuffles.
#pragma unroll
        for (int m = 0; m < MR; ++m)
#pragma unroll
            for (int c = 0; c < 4; ++c)
#pragma unroll
                for (int d = 4; d < 32; d *= 2) sums[m][c] += __shfl_xor_sync(0xffffffffu, sums[m][c], d);
        if (threadIdx.y % 8 == 0) {
#pragma unroll
            for (int m = 0; m < MR; ++m) {
                if (m0 + m >= M) break;
#pragma unroll
                for (int c = 0; c < 4; ++c) part(warp, m0 + m, threadIdx.x * 4 + c) = sums[m][c];
            }
        }
    };
    if (M == 1) {
        accumulate(ImaConst<1>{}, 0);
    } else {
        for (I m0 = 0; m0 < M; m0 += 4) accumulate(ImaConst<4>{}, m0);
    }
    __syncthreads();
    // An output a thread: of the block's 16 columns, or, fused, of its 8 (gate's column c,
    // up's c + 8).
    constexpr int UNIT = 8;
    const bool fused = NY != N;
    const int outs = fused ? UNIT : 16;
    const int tid = threadIdx.y * 4 + threadIdx.x;
    if (tid < M * outs) {
        const I m = tid / outs, c = tid % outs, col = I(blockIdx.x) * outs + c;
        if (col < NY) {
            float sum = 0.f;
#pragma unroll
            for (int s = 0; s < WARPS; ++s) sum += part(s, m, c);
            if (fused) {
                float up = 0.f;
#pragma unroll
                for (int s = 0; s < WARPS; ++s) up += part(s, m, c + UNIT);
                sum = sum / (1.f + __expf(-sum)) * up;
            }
            y(m, col) = __float2half(sum);
        }
    }
}
#endif

// A 16-byte load of read-only memory read once: it does not allocate in L1 (the host
// build of the header, for its tests, reads through __ldg).
__device__ __forceinline__ int4 ima_ldg_stream(const int4* p) {
#ifdef __CUDA_ARCH__
    int4 v;
    asm("ld.global.nc.L1::no_allocate.v4.s32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    return v;
#else
    return __ldg(p);
#endif
}

// C consecutive elements starting at p, loaded as 16-, 8- or 4-byte vectors when VEC
// (the caller guarantees p is aligned to the whole row, up to 16 bytes). The quantized
// accessors' weights and scales, read once: 16-byte rows do not allocate in L1, which
// keeps L1 for what the body reads again (gptq_gemm's x across its warps: 1 to 5% on
// every W4A16 kernel, bench/RESULTS.md).
template <bool VEC, typename T, int C>
__device__ __forceinline__ void ima_load_row(const T* p, T (&out)[C]) {
    constexpr int BYTES = int(sizeof(T)) * C;
    if constexpr (VEC && BYTES % 16 == 0) {
#pragma unroll
        for (int i = 0; i < BYTES / 16; ++i) {
            const int4 v = ima_ldg_stream(reinterpret_cast<const int4*>(p) + i);
            memcpy(reinterpret_cast<char*>(out) + 16 * i, &v, 16);
        }
    } else if constexpr (VEC && BYTES == 8) {
        const int2 v = __ldg(reinterpret_cast<const int2*>(p));
        memcpy(out, &v, 8);
    } else if constexpr (VEC && BYTES == 4) {
        const int v = __ldg(reinterpret_cast<const int*>(p));
        memcpy(out, &v, 4);
    } else {
#pragma unroll
        for (int i = 0; i < C; ++i) out[i] = p[i];
    }
}

// The output tile (tm, tn) of block `id` (in launch order) of a product tiled tiles_m x
// tiles_n: GROUP rows of tiles at a time, down each column of the group before the next,
// so that the blocks resident at once read a few panels of A and of B, which stay in L2,
// instead of all of B.
template <int GROUP, typename I>
__device__ __forceinline__ void ima_grouped_tile(I id, I tiles_m, I tiles_n, I& tm, I& tn) {
    const I per_group = GROUP * tiles_n, first = id / per_group * GROUP;
    const I rows = min(I(GROUP), tiles_m - first);
    tm = first + id % per_group % rows;
    tn = id % per_group / rows;
}


// log2 of a power of two.
__device__ __forceinline__ int ima_log2(int v) { return __ffs(v) - 1; }
__device__ __forceinline__ int ima_log2(long long v) { return __ffsll(v) - 1; }

// 2^23 + v as a float, for 0 <= v < 2^23: one OR. The difference of two such values is
// the exact difference of the integers, without an integer-to-float conversion.
__device__ __forceinline__ float ima_biased(unsigned int v) { return __uint_as_float(0x4B000000u | v); }
__device__ __forceinline__ float ima_biased(int v) { return ima_biased(unsigned(v)); }

// v's digits in the mixed radix e, innermost first; the outermost digit takes what is
// left, unwrapped.
template <typename I, int R>
__device__ __forceinline__ void ima_digits(I v, const I (&e)[R], I (&digits)[R]) {
#pragma unroll
    for (int d = 0; d < R - 1; ++d) {
        digits[d] = v % e[d];
        v /= e[d];
    }
    digits[R - 1] = v;
}

// digits += step, digit by digit with carries: each sum is below twice its radix, so one
// subtraction wraps it. No division.
template <typename I, int R>
__device__ __forceinline__ void ima_add_digits(I (&digits)[R], const I (&step)[R], const I (&e)[R]) {
    I carry = 0;
#pragma unroll
    for (int d = 0; d < R - 1; ++d) {
        digits[d] += step[d] + carry;
        carry = digits[d] >= e[d] ? 1 : 0;
        digits[d] -= carry * e[d];
    }
    digits[R - 1] += step[R - 1] + carry;
}

// Tells the compiler what the loop guarantees, 0 <= digit < extent for every launch index,
// so that a checked access at the launch indices themselves (y(b, h, s, d) in a launch
// over y) folds its tests away. In the unsigned form the accessors' tests use.
template <typename I, int R>
__device__ __forceinline__ void ima_assume_below(const I (&digits)[R], const I (&e)[R]) {
#pragma unroll
    for (int d = 0; d < R; ++d) __builtin_assume(ima_below(digits[d], e[d]));
}

// A vector of W elements, indices last .. last + W - 1 of the last dimension, inside the
// extents. When the extent is a multiple of W (as the constraints of an aligned argument
// usually make it, which the entry point assumes), its first element inside means its
// last one is.
template <typename I, int R, int W>
__device__ __forceinline__ bool ima_vec_inside(const I (&index)[R], const I (&extent)[R]) {
    bool inside = true;
#pragma unroll
    for (int d = 0; d < R; ++d) inside &= ima_below(index[d], extent[d]);
    return inside && (extent[R - 1] % W == 0 || ima_below(index[R - 1] + (W - 1), extent[R - 1]));
}

// A vector access must also start at a multiple of W. A refused one is recorded as
// misaligned, or at its first element outside, or at its last.
template <typename I, int R, int W, typename Rec>
__device__ __forceinline__ bool ima_vec_in_bounds(Rec rec, int arg, int write, const I (&index)[R],
                                                  const I (&extent)[R]) {
    const bool aligned = index[R - 1] % W == 0;
    const bool ok = aligned && ima_vec_inside<I, R, W>(index, extent);
    if (!ok) {
        bool first_inside = true;
        I at[R];
#pragma unroll
        for (int d = 0; d < R; ++d) {
            first_inside &= ima_below(index[d], extent[d]);
            at[d] = index[d];
        }
        if (aligned && first_inside) at[R - 1] += W - 1;
        ima_pend<I, R>(rec, aligned ? ima_code(arg, write, IMA_OUT_OF_BOUNDS, R, IMA_FIND_DIM)
                                    : ima_code(arg, write, IMA_MISALIGNED_VECTOR, R, R - 1), at);
    }
    return ok;
}

// The recorder of an argument that a kernel which starts early may touch only once the
// thread has waited for the grids ahead (one not `early`): in a checked entry point, each
// access first asks whether it has, and one before is reported (IMA_BEFORE_WAIT) and
// refused, as an access out of bounds is; the release entry points record as any other.
// Every check of a plain or quantized argument's access goes through ima_in_bounds or
// ima_vec_in_bounds, which these overloads take over.
struct ImaAfterWait {
    ImaPending* p;
    // The thread has not called ima_wait_for_inputs() yet: the checked entry point's own
    // flag, apart from its ImaPending.
    const bool* waiting;
};
template <bool CHECKED>
struct ImaAfterWaitOf {
    using type = ImaRecorder;
};
template <>
struct ImaAfterWaitOf<true> {
    using type = ImaAfterWait;
};
template <bool CHECKED>
using ImaRecAfterWait = typename ImaAfterWaitOf<CHECKED>::type;
__device__ __forceinline__ unsigned int& ima_count_of(ImaAfterWait rec) { return rec.p->count; }
__device__ __forceinline__ ImaPending* ima_last_of(ImaAfterWait rec) { return rec.p; }
// The access comes before the thread's wait: recorded as such.
template <typename I, int R>
__device__ __forceinline__ bool ima_before_wait(ImaAfterWait rec, int arg, int write, const I (&index)[R],
                                                const I (&extent)[R]) {
    if (*rec.waiting) ima_report<I, R>(rec.p, arg, write, IMA_BEFORE_WAIT, 0, index, extent);
    return *rec.waiting;
}
template <typename I, int R>
__device__ __forceinline__ bool ima_in_bounds(ImaAfterWait rec, int arg, int write, const I (&index)[R],
                                              const I (&extent)[R]) {
    return !ima_before_wait<I, R>(rec, arg, write, index, extent) &&
           ima_in_bounds<I, R>(rec.p, arg, write, index, extent);
}
template <typename I, int R, int W>
__device__ __forceinline__ bool ima_vec_in_bounds(ImaAfterWait rec, int arg, int write, const I (&index)[R],
                                                  const I (&extent)[R]) {
    return !ima_before_wait<I, R>(rec, arg, write, index, extent) &&
           ima_vec_in_bounds<I, R, W>(rec.p, arg, write, index, extent);
}

// What the body of a kernel with `early` arguments calls as ima_wait_for_inputs(), or
// hands to a helper that waits for it (ima_paged_attend, ima_wg_w4_pairs_gemm,
// ima_gptq_gemv_narrow): the wait for the grids ahead, after which a checked entry
// point's accesses of the other arguments are no longer refused.
template <bool CHECKED>
struct ImaWaitForInputs {
    // A checked entry point's flag (ImaAfterWait's), cleared here; null in a release one.
    bool* waiting;
    __device__ __forceinline__ void operator()() const {
        ima_grid_dependency_wait();
        if constexpr (CHECKED) *waiting = false;
    }
};
#endif  // IMA_CUH
