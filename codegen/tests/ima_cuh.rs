//! `ima.cuh`, the header every generated module embeds, compiled on its own for the host
//! (under `host_shim.h`'s stand-ins for CUDA's qualifiers and intrinsics) with warnings as
//! errors, and its checks, reports and helpers run there: an access inside its extents
//! passes untouched; one outside is pending in the thread until its flush, which fills the
//! violation record once (which argument, dimension, index, extents, block and thread; the
//! flag raised) and counts every later one; a vector access reports misalignment, its
//! first element outside or its last; a value report carries the value and its bounds,
//! through a checked entry point's recorder (its ImaPending) or a release one's (a count
//! apart); the digit helpers walk a mixed radix; a shared tile's swizzle is a
//! conflict-free permutation and its checked chunks report. No GPU needed: a host C++ compiler (`c++`,
//! or `$CXX`) is.

use std::path::Path;
use std::process::Command;

const HARNESS: &str = r#"
#include "host_shim.h"
#include "ima.cuh"
#include <cstdio>
#include <initializer_list>

static int failures = 0;
#define CHECK(x)                                                   \
    do {                                                           \
        if (!(x)) {                                                \
            std::printf("line %d: %s\n", __LINE__, #x);            \
            ++failures;                                            \
        }                                                          \
    } while (0)

// What an entry point does once its body has returned: the pending violation into the
// record, with the argument's extents.
static void flush(ImaRecord& r, ImaPending& p, std::initializer_list<long long> arg_extent) {
    long long e[8] = {};
    int d = 0;
    for (long long x : arg_extent) e[d++] = x;
    if (p.count != 0) ima_flush(&r, &p, e);
    p = ImaPending{};
}

int main() {
    unsigned int flag = 0;
    ImaRecord r{};
    r.flag = &flag;
    ImaPending p{};
    blockIdx = {3, 1, 0};
    threadIdx = {17, 0, 2};

    // Inside: nothing recorded.
    CHECK((ima_in_bounds<int, 3>(&p, 4, 0, {1, 2, 3}, {2, 3, 4})));
    CHECK(p.count == 0);

    // Outside in dimension 1 (and 2): pending until the flush, which names the first
    // failing dimension, the argument's extents, the block and the thread.
    CHECK(!(ima_in_bounds<int, 3>(&p, 4, 1, {1, 3, 9}, {2, 3, 4})));
    CHECK(p.count == 1 && r.count == 0 && flag == 0);
    flush(r, p, {2, 3, 4});
    CHECK(r.count == 1 && r.claimed == 1 && flag == 1);
    CHECK(r.arg == 4 && r.write == 1 && r.kind == IMA_OUT_OF_BOUNDS && r.rank == 3 && r.dim == 1);
    CHECK(r.index[0] == 1 && r.index[1] == 3 && r.index[2] == 9);
    CHECK(r.extent[0] == 2 && r.extent[1] == 3 && r.extent[2] == 4);
    CHECK(r.block[0] == 3 && r.block[1] == 1 && r.block[2] == 0);
    CHECK(r.thread[0] == 17 && r.thread[1] == 0 && r.thread[2] == 2);

    // A thread's violations are all counted and its latest kept; a later thread's are
    // counted, and the record keeps the first thread's.
    CHECK(!(ima_in_bounds<long long, 2>(&p, -2, 0, {-1LL, 0LL}, {5LL, 1LL << 40})));
    CHECK(!(ima_in_bounds<long long, 2>(&p, -2, 0, {0LL, 1LL << 41}, {5LL, 1LL << 40})));
    CHECK(p.count == 2 && p.code >> 16 == -2 && p.index.i64[1] == 1LL << 41);
    ImaRecord wide{};
    wide.flag = &flag;
    flush(wide, p, {5, 1LL << 40});
    CHECK(wide.count == 2 && wide.arg == -2 && wide.dim == 1 && wide.index[1] == 1LL << 41);
    CHECK(wide.extent[1] == 1LL << 40);
    CHECK(!(ima_in_bounds<int, 1>(&p, 7, 0, {-1}, {5})));
    flush(r, p, {5});
    CHECK(r.count == 2 && r.arg == 4 && r.dim == 1);

    // Before the thread's wait, an access of an argument that is not early is refused and
    // recorded, inside its bounds or not; after it, only what is outside is.
    bool waiting = true;
    const ImaAfterWait after{&p, &waiting};
    CHECK(!(ima_in_bounds<int, 2>(after, 3, 1, {1, 2}, {4, 4})));
    CHECK(!(ima_vec_in_bounds<int, 1, 8>(after, 3, 0, {8}, {16})));
    ImaRecord early{};
    early.flag = &flag;
    flush(early, p, {16});
    CHECK(early.count == 2 && early.kind == IMA_BEFORE_WAIT && early.arg == 3 && early.write == 0);
    CHECK(early.index[0] == 8 && early.extent[0] == 16);
    const ImaWaitForInputs<true> wait_for_inputs{&waiting};
    wait_for_inputs();
    CHECK(!waiting);
    CHECK((ima_in_bounds<int, 2>(after, 3, 1, {1, 2}, {4, 4})) && p.count == 0);
    CHECK(!(ima_vec_in_bounds<int, 1, 8>(after, 3, 0, {16}, {16})) && p.count == 1);
    p = ImaPending{};

    // A negative index is outside, whatever the extent.
    CHECK(!ima_below(-1, 1 << 30) && !ima_below(-1LL, 1LL << 40) && ima_below(0, 1) && !ima_below(0, 0));

    // Vectors of 8: aligned and inside passes; misaligned, or past the end, is recorded.
    ImaRecord v{};
    v.flag = &flag;
    CHECK((ima_vec_in_bounds<int, 2, 8>(&p, 0, 0, {1, 8}, {2, 16})));
    CHECK(p.count == 0);
    CHECK(!(ima_vec_in_bounds<int, 2, 8>(&p, 2, 0, {1, 4}, {2, 16})));
    flush(v, p, {2, 16});
    CHECK(v.count == 1 && v.kind == IMA_MISALIGNED_VECTOR && v.dim == 1 && v.index[1] == 4);
    ImaRecord end{};
    end.flag = &flag;
    CHECK(!(ima_vec_in_bounds<int, 2, 8>(&p, 2, 1, {1, 8}, {2, 12})));
    flush(end, p, {2, 12});
    CHECK(end.count == 1 && end.kind == IMA_OUT_OF_BOUNDS && end.write == 1 && end.dim == 1);
    CHECK(end.index[1] == 15 && end.extent[1] == 12);
    ImaRecord first{};
    first.flag = &flag;
    CHECK(!(ima_vec_in_bounds<int, 2, 8>(&p, 2, 0, {2, 8}, {2, 16})));
    flush(first, p, {2, 16});
    CHECK(first.count == 1 && first.dim == 0 && first.index[0] == 2 && first.index[1] == 8);

    // Pairs (an output's store_pair: one 4-byte access a pair of f16, 8 of f32): an
    // odd start is misaligned; a pair whose second element lies past an odd extent is
    // outside, at that element.
    static_assert(sizeof(ImaPair<short>) == 4 && alignof(ImaPair<short>) == 4, "a pair is one 4-byte access");
    static_assert(sizeof(ImaPair<float>) == 8 && alignof(ImaPair<float>) == 8, "a pair is one 8-byte access");
    CHECK((ima_vec_in_bounds<int, 2, 2>(&p, 3, 1, {1, 14}, {2, 16})));
    CHECK(p.count == 0);
    ImaRecord odd{};
    odd.flag = &flag;
    CHECK(!(ima_vec_in_bounds<int, 2, 2>(&p, 3, 1, {1, 5}, {2, 16})));
    flush(odd, p, {2, 16});
    CHECK(odd.count == 1 && odd.kind == IMA_MISALIGNED_VECTOR && odd.write == 1 && odd.dim == 1 && odd.index[1] == 5);
    ImaRecord past{};
    past.flag = &flag;
    CHECK(!(ima_vec_in_bounds<int, 2, 2>(&p, 3, 1, {1, 14}, {2, 15})));
    flush(past, p, {2, 15});
    CHECK(past.count == 1 && past.kind == IMA_OUT_OF_BOUNDS && past.dim == 1);
    CHECK(past.index[1] == 15 && past.extent[1] == 15);

    // A vector inside: every dimension's first element, and its last when the extent is
    // not a multiple of the width.
    CHECK((ima_vec_inside<int, 2, 8>({1, 8}, {2, 16})) && !(ima_vec_inside<int, 2, 8>({2, 8}, {2, 16})));
    CHECK(!(ima_vec_inside<int, 2, 8>({1, 16}, {2, 16})) && !(ima_vec_inside<int, 2, 8>({1, 8}, {2, 12})));
    CHECK((ima_vec_inside<int, 2, 8>({1, 8}, {2, 20})) && !(ima_vec_inside<int, 2, 8>({1, -8}, {2, 20})));
    CHECK(p.count == 0);

    // A bad entry: its value and the bounds it broke.
    ImaRecord bad{};
    bad.flag = &flag;
    const int at[2] = {0, 5};
    ima_report_value<int, 2>(&p, 3, IMA_BAD_VALUE, at, -7, 0, 40);
    flush(bad, p, {1, 9});
    CHECK(bad.count == 1 && bad.kind == IMA_BAD_VALUE && bad.arg == 3 && bad.dim == 1);
    CHECK(bad.value == -7 && bad.lo == 0 && bad.hi == 40 && bad.index[1] == 5);

    // A release entry point's recorder: its count apart from the violation it keeps, which
    // the entry point copies in before the flush.
    unsigned int count = 0;
    ImaPending last{};
    const ImaRecorder rec{&count, &last};
    CHECK((ima_in_bounds<int, 1>(rec, 5, 0, {3}, {4})) && count == 0);
    ima_report_value<int, 1>(rec, 5, IMA_BAD_VALUE, {2}, 99, 0, 8);
    ima_report_value<int, 1>(rec, 5, IMA_BAD_VALUE, {3}, -1, 0, 8);
    CHECK(count == 2 && last.count == 0 && last.value == -1 && last.index.i32[0] == 3);
    ImaRecord apart{};
    apart.flag = &flag;
    last.count = count;
    flush(apart, last, {4});
    CHECK(apart.count == 2 && apart.kind == IMA_BAD_VALUE && apart.arg == 5 && apart.value == -1);
    CHECK(apart.index[0] == 3 && apart.lo == 0 && apart.hi == 8);
    CHECK(ima_value_in(5, 0, 40) && !ima_value_in(-7, 0, 40) && !ima_value_in(40u, -1, 40));

    // A sentinel's entry gives no value; another gives its own.
    int seen = -1;
    ImaMaybe<int>().then([&](int s) { seen = s; });
    CHECK(seen == -1);
    ImaMaybe<int>(6).then([&](int s) { seen = s; });
    CHECK(seen == 6);

    // Mixed radix (4, 3, 5), innermost first: 37 = 1 + 4 * (0 + 3 * 3).
    const int e[3] = {4, 3, 5};
    int d[3], step[3];
    ima_digits(37, e, d);
    CHECK(d[0] == 1 && d[1] == 0 && d[2] == 3);
    ima_digits(7, e, step);
    ima_add_digits(d, step, e);  // 44 = 0 + 4 * (2 + 3 * 3)
    CHECK(d[0] == 0 && d[1] == 2 && d[2] == 3);
    ima_assume_below(d, e);
    CHECK(ima_host_broken_assumptions == 0);

    // Biased floats subtract to the integers' difference; log2 of powers of two.
    CHECK(ima_biased(9u) - ima_biased(2) == 7.f);
    CHECK(ima_log2(64) == 6 && ima_log2(1LL << 40) == 40);

    // A row of 8 halves' worth of bits, as one vector or element by element.
    alignas(16) unsigned short row[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    unsigned short a[8], b[8];
    ima_load_row<true>(row, a);
    ima_load_row<false>(row, b);
    CHECK(std::memcmp(a, row, 16) == 0 && std::memcmp(b, row, 16) == 0);

    // Swizzled tile rows: each row's chunks a permutation of 0 .. CPR, also where CPR is
    // no multiple of 8 (rows of 80 or 96 halves), and the same chunk of eight consecutive
    // rows (what one ldmatrix reads) in eight different 16-byte bank groups of a 128-byte
    // line, for rows of 64, 128 and 256 bytes and more.
    auto permutes = [&](auto cpr_tag) {
        constexpr int CPR = decltype(cpr_tag)::value;
        bool ok = true;
        for (int r = 0; r < 64; ++r) {
            unsigned seen = 0;
            for (int c = 0; c < CPR; ++c) {
                const int to = ima_swizzle<CPR>(r, c);
                ok &= to >= 0 && to < CPR;
                seen |= 1u << (to & 31);
            }
            ok &= seen == (CPR >= 32 ? ~0u : (1u << CPR) - 1);
        }
        return ok;
    };
    CHECK(permutes(ImaConst<9>{}) && permutes(ImaConst<10>{}) && permutes(ImaConst<12>{}) &&
          permutes(ImaConst<20>{}) && permutes(ImaConst<24>{}));
    auto swizzle_ok = [&](auto cpr_tag) {
        constexpr int CPR = decltype(cpr_tag)::value;
        bool ok = permutes(cpr_tag);
        for (int r0 = 0; r0 < 64; r0 += 8)
            for (int c = 0; c < CPR; ++c) {
                unsigned groups = 0;
                for (int r = r0; r < r0 + 8; ++r) groups |= 1u << ((r * CPR + ima_swizzle<CPR>(r, c)) % 8);
                ok &= groups == 0xFFu;
            }
        return ok;
    };
    CHECK(swizzle_ok(ImaConst<4>{}) && swizzle_ok(ImaConst<8>{}) && swizzle_ok(ImaConst<16>{}) &&
          swizzle_ok(ImaConst<32>{}));

    // A checked tile: a chunk inside is its swizzled place; outside, or not at a chunk,
    // is recorded (row and column against the tile's shape, not the array's) and is the
    // sink.
    alignas(16) static ImaVec<unsigned short, 8> tile_mem[16 * 8];
    ImaRecord t{};
    t.flag = &flag;
    using Chunk = ImaVec<unsigned short, 8>;
    Chunk* const sink = &ima_shared_sink<Chunk>();
    const ImaSmemTile<unsigned short, 16, 64, true> tile{tile_mem, &p, -2, true};
    CHECK(&tile.chunk(3, 40) == &tile_mem[3 * 8 + (5 ^ 3)] && p.count == 0);
    CHECK(&tile.chunk(2, 12) == sink);
    CHECK(&tile.chunk(16, 0) == sink);
    flush(t, p, {4, 16, 64});
    CHECK(t.count == 2 && t.kind == IMA_TILE_CHUNK && t.arg == -2 && t.dim == 0 && t.index[0] == 16);
    CHECK(t.rank == 2 && t.extent[0] == 16 && t.extent[1] == 64);
    const ImaSmemTile<unsigned short, 16, 64, true> refused{tile_mem, &p, -2, false};
    CHECK(&refused.chunk(0, 0) == sink && p.count == 0);

    // A refused write lands in the sink.
    ima_sink<float>() = 1.f;
    ima_shared_sink<int>() = 2;

    if (failures == 0) std::printf("ok\n");
    return failures == 0 ? 0 : 1;
}
"#;

#[test]
fn ima_cuh_compiles_for_the_host_and_its_checks_report_as_the_runtime_reads() {
    let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("include");
    let dir = tempfile::tempdir().unwrap();
    let (src, exe) = (dir.path().join("ima_cuh.cpp"), dir.path().join("ima_cuh"));
    std::fs::write(&src, HARNESS).unwrap();
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
    let built = Command::new(&cxx)
        .args([
            "-std=c++17",
            "-O1",
            "-Wall",
            "-Wextra",
            "-Wno-unknown-pragmas",
            "-Werror",
            "-I",
        ])
        .arg(&include)
        .arg("-o")
        .arg(&exe)
        .arg(&src)
        .output()
        .unwrap_or_else(|e| panic!("this test needs a host C++ compiler (`{cxx}`): {e}"));
    assert!(
        built.status.success(),
        "{cxx} failed on ima.cuh:\n{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let ran = Command::new(&exe).output().unwrap();
    let out = String::from_utf8_lossy(&ran.stdout);
    assert!(ran.status.success() && out == "ok\n", "{out}");
}

/// The header the generated modules embed is this file, whole.
#[test]
fn generated_modules_embed_ima_cuh() {
    let on_disk =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("include/ima.cuh"))
            .unwrap();
    assert_eq!(ima_codegen::cuda::IMA_CUH, on_disk);
}

/// No identifier of ima.cuh starts with a prefix of the names the generated CUDA derives
/// from the spec's (the kernels' namespaces, accessor types, stride and tensor-map
/// parameters), so no spec name can make one of them (ima.cuh's `ima_rope` once clashed with
/// the kernel `rope`'s namespace `ima_rope`).
#[test]
fn ima_cuh_leaves_the_derived_names_prefixes_free() {
    for prefix in ima_codegen::cuda::DERIVED_PREFIXES {
        let at: Vec<usize> = ima_codegen::cuda::IMA_CUH
            .lines()
            .enumerate()
            .filter(|(_, l)| l.contains(prefix))
            .map(|(i, _)| i + 1)
            .collect();
        assert!(at.is_empty(), "ima.cuh lines {at:?} use `{prefix}`");
    }
}
