"""Throwaway, session 32 (issue 21): why does the language's weight pipeline stream slower
with idle consumers than bench/explore/interf's ring? Session 28's idle pipelines of
gptq_gemm_wg's shape took 37.3 to 38.1 us at K = 8192, N = 28672; interf's ring of the same
stage's boxes (words, scales, zeros; 3 or 6 stages) 31.7 to 32.3 (RESULTS, session 32).
From rp9.ima's s8 (5 stages of W's 192 columns and 16 rows of x, delegated counts):
  s8   as it is (the repacked decode), the reference in the same call;
  i8   consumers idle: each stage waited for and freed, the shared tiles' slots, counts and
       sums as s8 has them (of zero accumulators);
  n8   i8 without anything at a tile's end (no slots, counts, sums or y) and no delegates;
  x8   n8 without x's box: W's words, scales and zeros alone (interf's tma+sz, in the
       language's pipeline and launch).
  j8   i8 without lo's wait for the others' count (not correct: the diagnostic);
  k8   j8 without lo's loads of the others' slots;
  t8   i8 stamped, and u8 s8 stamped (%globaltimer, ns): each consumer warpgroup's start,
       lo's wait's start and end, and its end ([block, warpgroup, 4]); each delegate's
       barrier done and its count's `red.release` issued ([block, 3 + (0 or 1), warpgroup]):
       how long lo waits, and how long after the others' counts are issued their releases
       reach it;
  f8   s8 with no counts, no delegates and no fences: the others store their slot as 8-byte
       records of a sum and a flag (st.relaxed, NCCL's LL protocol), lo polls each record
       until its flag is set, adds it and clears the flag for the next launch (so the slots
       must start zero); g8 the same from i8 (idle); v8 f8 stamped (lo's "wait" is its
       whole read of the others' records);
  z8   s8 whose decode leaves the zero in: A holds 1024 + q (one LOP3 a register, no
       HSUB2), and each group's fold subtracts (1024 + z) times x's sum over the group,
       which the caller passes (`xsum`, f32 [M, K / 128]; a norm before the projection
       could write it): what the consumers gain from 64 fewer instructions a stage.
If n8 is near 32 us the tile ends (the sums, lo's wait) are the gap; if near 38, the
pipeline's protocol or the launch is. (The first call, without j8 and k8: n8 31.9 and 31.6,
i8 37.6 and 35.4.)
    python3 gen10.py"""

with open("rp9.ima") as f:
    src = f.read()
head = src[: src.index("kernel s8 where")]
s8 = src[src.index("kernel s8 where"): src.index("kernel s9 where")]


def edit(text, pairs):
    for old, new in pairs:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return text


def cut(text, start, end):
    """text without [start, end): the first occurrence of each marker."""
    a = text.index(start)
    b = text.index(end, a)
    return text[:a] + text[b:]


IDLE_START = "                if constexpr (NX == 16) {"
TILE_END = "                if (kc != KS - 1 && t != u1 - u0 - 1) return;"
RESET = "                acc = ImaWgAcc<NX>{};"
NO_DELEGATES = [("            if (dw >= 0 && u0 % KS != 0) {", "            if (dw >= 0 && u0 % KS != 0 && false) {")]
NO_X = [("                x.tma_load(xs.tma_tile(ImaConst<16>{}, ImaConst<256>{}, st), bar, tile / NS * 64, 256 * kc);\n", "")]

i8 = cut(edit(s8, [("kernel s8 where", "kernel i8 where")]), IDLE_START, TILE_END)
n8 = edit(cut(edit(i8, [("kernel i8 where", "kernel n8 where")]), TILE_END, RESET), NO_DELEGATES)
x8 = edit(n8, [("kernel n8 where", "kernel x8 where")] + NO_X)
NO_WAIT = [("                                } while (n != int(KS - mine));", "                                } while (false);")]
NO_LOADS = [("                            for (I b = lo + 1; b <= hi; ++b)", "                            for (I b = lo + 1; b <= hi && false; ++b)")]
j8 = edit(i8, [("kernel i8 where", "kernel j8 where")] + NO_WAIT)
k8 = edit(j8, [("kernel j8 where", "kernel k8 where")] + NO_LOADS)
NOW = ("    body {\n",
       "    body {\n"
       "        const auto now = [] {\n"
       "            long long t;\n"
       "            asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t));\n"
       "            return t;\n"
       "        };\n")
STAMPS = [
    ("    out   y: f16[M, NY] align(16)\n", "    out   y: f16[M, NY] align(16)\n    inout stamps: i64[BLOCKS, 5, 4]\n"),
    NOW,
    ("            pipe.consume(u1 - u0, [&](int st, I t) {\n",
     "            if (threadIdx.x % 128 == 0) stamps(I(blockIdx.x), I(wg), I(0)) = now();\n"
     "            pipe.consume(u1 - u0, [&](int st, I t) {\n"),
    ("                                int n;\n",
     "                                int n;\n                                stamps(I(blockIdx.x), I(wg), I(1)) = now();\n"),
    ("                                } while (n != int(KS - mine));\n",
     "                                } while (n != int(KS - mine));\n                                stamps(I(blockIdx.x), I(wg), I(2)) = now();\n"),
    ("            });\n        };\n        run(ImaConst<16>{});\n",
     "            });\n            if (threadIdx.x % 128 == 0) stamps(I(blockIdx.x), I(wg), I(3)) = now();\n"
     "        };\n        run(ImaConst<16>{});\n"),
    ("                    asm volatile(\"bar.sync %0, 160;\" ::\"r\"(6 + dw) : \"memory\");\n",
     "                    asm volatile(\"bar.sync %0, 160;\" ::\"r\"(6 + dw) : \"memory\");\n"
     "                    if (threadIdx.x % 32 == 0) stamps(I(blockIdx.x), I(3), I(dw)) = now();\n"),
    ("                                     \"r\"(int(mine)) : \"memory\");\n",
     "                                     \"r\"(int(mine)) : \"memory\");\n"
     "                        stamps(I(blockIdx.x), I(4), I(dw)) = now();\n"),
]
t8 = edit(i8, [("kernel i8 where", "kernel t8 where")] + STAMPS)
u8 = edit(s8, [("kernel s8 where", "kernel u8 where")] + STAMPS)
FLAGGED = NO_DELEGATES + [
    ("""                            #pragma unroll
                            for (int j = 0; j < NX / 8; ++j) part.store4(me, slot(me), wg, j, tid, 0, own(j));
                            asm volatile("bar.arrive %0, 160;" ::"r"(6 + wg) : "memory");
""", """                            // Records of a sum and a set flag, two a 16-byte store: accumulator
                            // tile j's elements 2 h and 2 h + 1 at the slot's row 2 j + h.
                            #pragma unroll
                            for (int j = 0; j < NX / 8; ++j)
                                #pragma unroll
                                for (int h = 0; h < 2; ++h) {
                                    const unsigned long long r0 = 1ull << 32 | __float_as_uint(acc.c[j].x[2 * h]);
                                    const unsigned long long r1 = 1ull << 32 | __float_as_uint(acc.c[j].x[2 * h + 1]);
                                    asm volatile("st.relaxed.gpu.global.v2.b64 [%0], {%1, %2};"
                                                 ::"l"(&part(me, slot(me), wg, 2 * j + h, tid, 0)), "l"(r0), "l"(r1) : "memory");
                                }
"""),
    ("""                            const I mine = u0 + t + 1 - tile * KS;
                            if (threadIdx.x % 128 == 0) {
                                int n;
                                do {
                                    asm volatile("ld.acquire.gpu.global.s32 %0, [%1];"
                                                 : "=r"(n)
                                                 : "l"(&arrivals(m0 / 64, n0 / 64 + wg))
                                                 : "memory");
                                } while (n != int(KS - mine));
                            }
                            ima_warpgroup_sync();
""", ""),
    ("""                                for (int j = 0; j < NX / 8; ++j) {
                                    const ImaVec<float, 4> v = part.load4(b, slot(b), wg, j, tid, 0);
                                    #pragma unroll
                                    for (int e = 0; e < 4; ++e) sum[j].x[e] += v.v[e];
                                }
""", """                                for (int j = 0; j < NX / 8; ++j)
                                    #pragma unroll
                                    for (int h = 0; h < 2; ++h) {
                                        float* const at = &part(b, slot(b), wg, 2 * j + h, tid, 0);
                                        unsigned long long r0, r1;
                                        do asm volatile("ld.relaxed.gpu.global.v2.b64 {%0, %1}, [%2];"
                                                        : "=l"(r0), "=l"(r1) : "l"(at) : "memory");
                                        while ((r0 >> 32) == 0 || (r1 >> 32) == 0);
                                        sum[j].x[2 * h] += __uint_as_float(unsigned(r0));
                                        sum[j].x[2 * h + 1] += __uint_as_float(unsigned(r1));
                                        asm volatile("st.relaxed.gpu.global.v2.b64 [%0], {%1, %1};" ::"l"(at), "l"(0ull) : "memory");
                                    }
"""),
    ("                            if (threadIdx.x % 128 == 0) arrivals(m0 / 64, n0 / 64 + wg) = 0;\n", ""),
]
f8 = edit(s8, [("kernel s8 where", "kernel f8 where")] + FLAGGED)
g8 = edit(i8, [("kernel i8 where", "kernel g8 where")] + FLAGGED)
FLAGGED_STAMPS = [STAMPS[0], NOW, STAMPS[2], STAMPS[5],
                  ("                            #pragma unroll 2\n                            for (I b = lo + 1; b <= hi; ++b)\n",
                   "                            if (threadIdx.x % 128 == 0) stamps(I(blockIdx.x), I(wg), I(1)) = now();\n"
                   "                            #pragma unroll 2\n                            for (I b = lo + 1; b <= hi; ++b)\n"),
                  ("                            emit(sum, m0, n0);\n",
                   "                            if (threadIdx.x % 128 == 0) stamps(I(blockIdx.x), I(wg), I(2)) = now();\n"
                   "                            emit(sum, m0, n0);\n")]
v8 = edit(f8, [("kernel f8 where", "kernel v8 where")] + FLAGGED_STAMPS)
ZERO_AFTER = [
    ("kernel s8 where", "kernel z8 where"),
    ("    out   y: f16[M, NY] align(16)\n", "    out   y: f16[M, NY] align(16)\n    in    xsum: f32[M, ceil(K / 128)]\n"),
    ("                    __half2 zb2[2][2];\n", "                    float zf[2][2];\n"),
    ("""                            const unsigned zh = 0x64006400u | unsigned(w.ima_zero_in(zw, c0 % 192 + e)) * 0x10001u;
                            memcpy(&zb2[gi][e], &zh, 4);
""", """                            zf[gi][e] = 1024.f + float(w.ima_zero_in(zw, c0 % 192 + e));
"""),
    ("""                    ImaWgAcc<16> T[2];
""", """                    // x's sums over the stage's two groups for the rows of this lane's
                    // accumulators (rows past M are zeros, as in the stage).
                    float xg[2][2][2];
                    #pragma unroll
                    for (int gi = 0; gi < 2; ++gi)
                        #pragma unroll
                        for (int jt = 0; jt < 2; ++jt)
                            #pragma unroll
                            for (int p = 0; p < 2; ++p) {
                                const I n = 8 * jt + 2 * t4 + p, g = 2 * kc + gi;
                                xg[gi][jt][p] = n < M && g < ima_ceil_div(K, I(128)) ? xsum(n, g) : 0.f;
                            }
                    ImaWgAcc<16> T[2];
"""),
    ("""                                acc.c[jt].x[e] = fmaf(sc[gi][e / 2], T[gi].c[jt].x[e], acc.c[jt].x[e]);
""", """                                acc.c[jt].x[e] = fmaf(sc[gi][e / 2], fmaf(-zf[gi][e / 2], xg[gi][jt][e % 2], T[gi].c[jt].x[e]),
                                                      acc.c[jt].x[e]);
"""),
    ("""                                const __half2 d = __hsub2(w.ima_as_half2(v), zb2[h / 2][s % 2]);
                                memcpy(&a[h % 2][j % 4][s], &d, 4);
""", """                                a[h % 2][j % 4][s] = v;
"""),
]
z8 = edit(s8, ZERO_AFTER)
with open("rp10.ima", "w") as f:
    f.write("/// Throwaway: s8's pipeline with idle consumers (bench/explore/rp/gen10.py).\n")
    f.write(head[head.index("\n") + 1:])
    f.write("\n".join(k.rstrip() + "\n" for k in (s8, i8, n8, x8, j8, k8, t8, u8, f8, g8, v8, z8)))
