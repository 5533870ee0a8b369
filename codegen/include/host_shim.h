// host_shim.h: CUDA's qualifiers, built-in variables and the few intrinsics ima.cuh uses,
// defined for a host C++ compiler, so that tests compile the header on its own and run
// its checks and reports on the CPU (codegen/tests/ima_cuh.rs, and the runtime's test of
// the violation record's layout). No generated module includes it.
#ifndef IMA_HOST_SHIM_H
#define IMA_HOST_SHIM_H

#include <cstring>

#define __device__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
// A function's `__shared__` array is one per block; on the host, one per process.
#define __shared__ static
// As CUDA defines it: a GNU attribute, which may stand among the decl-specifiers.
#define __align__(n) __attribute__((aligned(n)))

// What the device code tells the compiler to assume, counted where it does not hold.
inline long long ima_host_broken_assumptions = 0;
#define __builtin_assume(x)                       \
    do {                                          \
        if (!(x)) ++ima_host_broken_assumptions;  \
    } while (0)

struct ImaHostDim3 {
    unsigned int x, y, z;
};
// The thread the host plays: a test sets them before a report. One block of one thread
// unless a test says otherwise.
inline ImaHostDim3 blockIdx, threadIdx, blockDim{1, 1, 1}, gridDim{1, 1, 1};

// One thread: the atomics are plain reads and writes.
inline unsigned int atomicAdd(unsigned int* a, unsigned int v) {
    const unsigned int old = *a;
    *a = old + v;
    return old;
}
inline unsigned int atomicCAS(unsigned int* a, unsigned int compare, unsigned int v) {
    const unsigned int old = *a;
    if (old == compare) *a = v;
    return old;
}
inline void __threadfence_system() {}

inline float __int_as_float(int v) {
    float f;
    std::memcpy(&f, &v, 4);
    return f;
}
inline float __uint_as_float(unsigned int v) {
    float f;
    std::memcpy(&f, &v, 4);
    return f;
}
inline int __ffs(int v) { return __builtin_ffs(v); }
inline int __ffsll(long long v) { return __builtin_ffsll(v); }

struct int2 {
    int x, y;
};
struct alignas(16) int4 {
    int x, y, z, w;
};
template <typename T>
inline T __ldg(const T* p) {
    return *p;
}

#endif  // IMA_HOST_SHIM_H
