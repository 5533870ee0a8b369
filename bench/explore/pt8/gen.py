"""Throwaway: writes pt8.ima, specs/paged.ima's paged_attn with tiles of 8 tokens where it
has 16, so that the same shared memory holds more tiles in flight a warp. Under ncu at
B = 32, context 1024 (46.2 µs), 28% of paged_attn's stall samples were warps waiting for
their next K/V tile, with one tile in flight a warp; a third stage of 16 tokens (96 KB a
block, two blocks an SM) lost (bench/explore/st). Kernels:
- pt8s4: 4 stages of 8 tokens (the 64 KB of 2 stages of 16 at D = 128): 3 tiles in flight;
- pt8s3: 3 stages of 8 tokens (48 KB): 2 in flight;
- pt8s2: 2 stages of 8 tokens: 1 in flight, half the bytes (the control).
S = Q Kᵀ takes one n-tile of 8 tokens a k step, K's fragments by one ldmatrix.x4 for two
k steps (as Q's for D = 256); O += P V takes P's 8 tokens as the low half of k (the high
half's B registers zero, so nothing from outside the tile enters) and V's fragments by
one ldmatrix.x4.trans for four n-tiles.
    python3 gen.py [repo root]"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from spec_text import constants, edit, kernel  # noqa: E402

before, body = kernel("paged.ima", "paged_attn")
consts = constants(before)

EIGHT = [
    ("constexpr int TILE = 16;  // tokens a tile", "constexpr int TILE = 8;   // tokens a tile"),
    ("""                // S = Q Kᵀ for tokens t0 .. t0 + 7 (s0) and t0 + 8 .. t0 + 15 (s1): lane
                // holds row gid, tokens 2 t4 and 2 t4 + 1 of each.
                ImaAcc4 s0{}, s1{};
                {
                    const auto kt = k_tile(stage);
                    ImaFrag4 qf;
                    #pragma unroll
                    for (int kk = 0; kk < KSTEPS; ++kk) {
                        const ImaFrag4 f = kt.ldmatrix_b(0, 16 * kk);""",
     """                // S = Q Kᵀ for tokens t0 .. t0 + 7: lane holds row gid, tokens 2 t4 and
                // 2 t4 + 1. K's fragments of two k steps an ldmatrix: lane l names token
                // l % 8 at dimensions 32 (kk / 2) + 8 (l / 8).
                ImaAcc4 s0{};
                {
                    const auto kt = k_tile(stage);
                    ImaFrag4 qf, kf;
                    #pragma unroll
                    for (int kk = 0; kk < KSTEPS; ++kk) {
                        if (kk % 2 == 0) kf = ima_ldmatrix_x4(kt.chunk(lane % 8, 32 * (kk / 2) + 8 * (lane / 8)));"""),
    ("""                        s0 = ima_mma_m16n8k16_f16(a, f.x[0], f.x[1], ImaAcc4{s0.x[0], s0.x[1], 0.f, 0.f});
                        s1 = ima_mma_m16n8k16_f16(a, f.x[2], f.x[3], ImaAcc4{s1.x[0], s1.x[1], 0.f, 0.f});""",
     """                        s0 = ima_mma_m16n8k16_f16(a, kf.x[kk % 2 * 2], kf.x[kk % 2 * 2 + 1], ImaAcc4{s0.x[0], s0.x[1], 0.f, 0.f});"""),
    ("""                float sc[4] = {s0.x[0], s0.x[1], s1.x[0], s1.x[1]};
                float mx = m;
                #pragma unroll
                for (int i = 0; i < 4; ++i) {
                    const I t = t0 + 8 * (i / 2) + 2 * t4 + i % 2;""",
     """                float sc[2] = {s0.x[0], s0.x[1]};
                float mx = m;
                #pragma unroll
                for (int i = 0; i < 2; ++i) {
                    const I t = t0 + 2 * t4 + i;"""),
    ("""                float p[4];
                #pragma unroll
                for (int i = 0; i < 4; ++i) {
                    p[i] = ex2(sc[i] - base);""",
     """                float p[2];
                #pragma unroll
                for (int i = 0; i < 2; ++i) {
                    p[i] = ex2(sc[i] - base);"""),
    ("""                const unsigned pa[4] = {ima_pack_f16x2(p[0], p[1]), 0u, ima_pack_f16x2(p[2], p[3]), 0u};
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
                }""",
     """                const unsigned pa[4] = {ima_pack_f16x2(p[0], p[1]), 0u, 0u, 0u};
                {
                    // V's 8 tokens by four n-tiles of dimensions an ldmatrix (lane l names
                    // token l % 8 at dimensions 8 (j + l / 8)), transposed: k's high half
                    // (tokens 8 .. 15 of a 16-token step) is zero in both operands.
                    const auto vt = v_tile(stage);
                    #pragma unroll
                    for (int j = 0; j < DTILES; j += 4) {
                        const ImaFrag4 f = ima_ldmatrix_x4_trans(vt.chunk(lane % 8, half_d * DH + 8 * j + 8 * (lane / 8)));
                        #pragma unroll
                        for (int i = 0; i < 4; ++i) {
                            const ImaAcc4 o = ima_mma_m16n8k16_f16(pa, f.x[i], 0u, ImaAcc4{acc[j + i][0], acc[j + i][1], 0.f, 0.f});
                            acc[j + i][0] = o.x[0];
                            acc[j + i][1] = o.x[1];
                        }
                    }
                }"""),
]


def variant(name, st):
    return edit(body, [("kernel paged_attn ", f"kernel {name} "),
                       ("shared kv: f16[4, 2, 2, 16, D]", f"shared kv: f16[4, {st}, 2, 8, D]"),
                       ("constexpr int ST = 2;", f"constexpr int ST = {st};")] + EIGHT)


with open("pt8.ima", "w") as f:
    f.write("/// Throwaway: specs/paged.ima's paged_attn with tiles of 8 tokens (bench/explore/pt8/gen.py).\n")
    f.write(consts)
    f.write("\n" + "\n".join(variant(f"pt8s{st}", st) for st in (4, 3, 2)))
