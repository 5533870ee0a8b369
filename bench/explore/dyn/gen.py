"""Throwaway, session 34 (issue 21): does handing gptq_gemm_wg16's work out by ticket
(dynamic scheduling) recover what its static stream-K runs lose to the blocks' uneven pace
and to the shared tiles' ends? Writes dyn.ima:
  s16   specs/gemm_tma.ima's gptq_gemm_wg16 (unfused), stamped: each block's producer start
        and each consumer warpgroup's end (%globaltimer) in `stamps`;
  d16   the same stages, pipeline and decode; work in runs of stages drawn by ticket: the
        first ticket of a block is its index, later ones an atomic count; tickets below
        NS / B * B are whole tiles (all of K for 192 columns: no shared sums), the rest of
        the stages in runs of ceil(rest / (DIV * B)); a run's tile ends add their sums
        into an f32 workspace by red.add.v4 and count the tile's stages, and the one whose
        count completes the tile reads the sums, stores y and zeroes sums and count;
        stamped as s16;
  d16u1 d16 with runs of one stage past the whole tiles;
  d32   d16 for up to 32 rows of x (4 stages: x's 32 rows take 16 KB a stage);
  p16   s16 with x permuted in place within each 32 columns of K and the weights decoded
        in nibble pairs (i, i + 4), Marlin's decode on GPTQ's own words (p16.ima.in);
  p32   p16 for up to 32 rows of x (4 stages), for issue 22's B = 32;
  d16w  d16 counting cycles (clock64): the producer's waits for a free stage, each consumer
        warpgroup's waits for a full one and its stage bodies.
    python3 gen.py"""
import re

with open("../../../specs/gemm_tma.ima") as f:
    spec = f.read()
head = spec[: spec.index("/// Dense GEMM on Hopper")]
wg16 = spec[spec.index("kernel gptq_gemm_wg16 where"):]
wg16 = wg16[: wg16.index("\n}\n") + 3]


def edit(text, pairs):
    for old, new in pairs:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return text


NOW = "const auto now = [] { long long t; asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t)); return t; };"

s16 = edit(wg16, [
    ("kernel gptq_gemm_wg16 where M <= 16, G >= 128, K % 8 == 0, N % 8 == 0, NY % 16 == 0, NY == N || 2 * NY == N {",
     "kernel s16 where M <= 16, G >= 128, K % 8 == 0, N % 8 == 0, NY % 16 == 0, NY == N || 2 * NY == N {"),
    ("    out   y: f16[M, NY] align(16)\n", "    inout stamps: i64[BLOCKS, 4]\n    out   y: f16[M, NY] align(16)\n"),
    ("        const ImaTmaPipeline<5, 3> pipe;\n",
     "        const ImaTmaPipeline<5, 3> pipe;\n        " + NOW + "\n"
     "        if (threadIdx.x == 0) stamps(I(blockIdx.x), I(0)) = now();\n"),
    ("            acc = ImaWgAcc<16>{};\n        });\n",
     "            acc = ImaWgAcc<16>{};\n        });\n"
     "        if (threadIdx.x % 128 == 0) stamps(I(blockIdx.x), I(1 + wg)) = now();\n"),
])

D16 = r'''
kernel KNAME where M <= @NX@, G >= 128, K % 8 == 0, N % 8 == 0 {
    in    x: f16[M, K] align(16) tma(@NX@, 64)
    in    w: q4[K, N] align(16) tma(256, 192) gptq(group = G)
    /// Workspace: sums of tiles that runs share, [column pair, 2 x row of x + column of the
    /// pair]; zero before and after a launch.
    inout sums: f32[ceil(N / 2), @NX2@] align(16)
    /// Workspace: stages of K added into each 64 columns' sums; zero before and after.
    inout counts: i32[ceil(N / 64)]
    /// Workspace: the next ticket less the grid, and the blocks done; zero before and after.
    inout sched: i32[2]
    inout stamps: i64[BLOCKS, 4]
    out   y: f16[M, N] align(16)
    shared ws: i32[@ST@, 40, 192] align(1024)
    shared xs: f16[@ST@, @NX@, 256] align(1024)
    /// Each stage's global stage index and its run's start and end (-1: no more work).
    shared meta: i32[@ST@, 4]
    shared last: i32[4]
    launch persistent(BLOCKS) block(512)
    body {
        const I KS = ima_ceil_div(K, I(256)), NS = ima_ceil_div(N, I(192)), total = NS * KS;
        const I B = I(gridDim.x), whole = NS / B * B, rest = total - whole * KS;
        const I unit = UNIT;
        const auto run = [&](I ticket, I& a, I& b) {
            if (ticket < whole) {
                a = ticket * KS;
                b = a + KS;
            } else {
                a = whole * KS + (ticket - whole) * unit;
                if (a > total) a = total;
                b = a + unit < total ? a + unit : total;
            }
        };
        using Pipe = ImaTmaPipeline<@ST@, 3>;
        const Pipe pipe;
        NOW
        if (pipe.consumer() < 0) {
            asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(Pipe::PRODUCER_REGS));
            if (threadIdx.x != 0) return;
            stamps(I(blockIdx.x), I(0)) = now();
            I a, b, t = 0;
            run(I(blockIdx.x), a, b);
            while (a < b) {
                for (I g = a; g < b; ++g, ++t) {
                    const int s = int(t % @ST@);
                    if (t >= @ST@) ima_mbar_wait(pipe.empty + 8 * s, unsigned((t / @ST@ - 1) & 1));
                    meta(s, 0) = int(g);
                    meta(s, 1) = int(a);
                    meta(s, 2) = int(b);
                    const I kc = g % KS, tile = g / KS;
                    const ImaBarrier bar{pipe.full + 8 * s};
                    w.tma_load(ws.tma_tile(ImaConst<40>{}, ImaConst<192>{}, s), bar, 256 * kc, tile * 192);
                    x.tma_load(xs.tma_tile(ImaConst<@NX@>{}, ImaConst<256>{}, s), bar, 0, 256 * kc);
                    ima_mbar_arrive(pipe.full + 8 * s);
                }
                run(I(atomicAdd(&sched(0), 1)) + B, a, b);
            }
            const int s = int(t % @ST@);
            if (t >= @ST@) ima_mbar_wait(pipe.empty + 8 * s, unsigned((t / @ST@ - 1) & 1));
            meta(s, 0) = -1;
            ima_mbar_arrive(pipe.full + 8 * s);
            // Every block has drawn its last ticket before it counts itself done.
            if (atomicAdd(&sched(1), 1) == int(B) - 1) {
                sched(0) = 0;
                sched(1) = 0;
            }
            return;
        }
        asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(Pipe::CONSUMER_REGS));
        const int wg = pipe.consumer(), lane = threadIdx.x % 32;
        const int c0 = 64 * wg + 16 * (threadIdx.x / 32 % 4) + 2 * (lane / 4);
        ImaWgAcc<@NX@> acc;
        const auto each = [&](I n0, auto&& f) {
            const auto all = [&](auto edge) {
                #pragma unroll
                for (int j = 0; j < @J@; ++j)
                    #pragma unroll
                    for (int e = 0; e < 4; ++e) {
                        const I m = 8 * j + 2 * (lane % 4) + e % 2, n = n0 + c0 + e / 2;
                        f(j, e, m, n, !decltype(edge)::value || (m < M && n < N));
                    }
            };
            if (@NX@ <= M && n0 + 64 * wg + 64 <= N) all(ImaConst<0>{});
            else all(ImaConst<1>{});
        };
        const auto emit = [&](const ImaAcc4 (&c)[@J@], I n0) {
            each(n0, [&](int j, int e, I m, I n, bool inside) {
                if (inside) y(m, n) = __float2half(c[j].x[e]);
            });
        };
        for (I t = 0;; ++t) {
            const int s = int(t % @ST@);
            ima_mbar_wait(pipe.full + 8 * s, unsigned((t / @ST@) & 1));
            const I g = meta(s, 0);
            if (g < 0) break;
            const I a = meta(s, 1), b = meta(s, 2);
            const auto wt = ws.tma_tile(ImaConst<40>{}, ImaConst<192>{}, s);
            const auto xt = xs.tma_tile(ImaConst<@NX@>{}, ImaConst<256>{}, s);
            ima_wg_w4_stage<true>(acc, w, wt, xt, c0, 0);
            if (threadIdx.x % 128 == 0) ima_mbar_arrive(pipe.empty + 8 * s);
            const I kc = g % KS, tile = g / KS;
            if (kc != KS - 1 && g != b - 1) continue;
            const I n0 = tile * 192, seg0 = a > tile * KS ? a : tile * KS, len = g + 1 - seg0;
            if (n0 + 64 * wg < N) {
                if (len == KS) {
                    emit(acc.c, n0);
                } else {
                    #pragma unroll
                    for (int j = 0; j < @J@; ++j) {
                        float* p = &sums((n0 + c0) / 2, I(16 * j + 4 * (lane % 4)));
                        const float* c = acc.c[j].x;
                        asm volatile("red.global.add.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(p), "f"(c[0]), "f"(c[2]),
                                     "f"(c[1]), "f"(c[3]) : "memory");
                    }
                    ima_warpgroup_sync();
                    if (threadIdx.x % 128 == 0) {
                        const int before = ima_atomic_add_release(&counts((n0 + 64 * wg) / 64), int(len));
                        const bool done = before + int(len) == int(KS);
                        if (done) asm volatile("fence.acq_rel.gpu;" ::: "memory");
                        last(wg) = done;
                    }
                    ima_warpgroup_sync();
                    if (last(wg)) {
                        ImaAcc4 sum[@J@];
                        #pragma unroll
                        for (int j = 0; j < @J@; ++j) {
                            float* p = &sums((n0 + c0) / 2, I(16 * j + 4 * (lane % 4)));
                            const float4 v = __ldcg(reinterpret_cast<const float4*>(p));
                            sum[j] = ImaAcc4{{v.x, v.z, v.y, v.w}};
                            __stcg(reinterpret_cast<float4*>(p), make_float4(0.f, 0.f, 0.f, 0.f));
                        }
                        emit(sum, n0);
                        if (threadIdx.x % 128 == 0) counts((n0 + 64 * wg) / 64) = 0;
                    }
                }
            }
            acc = ImaWgAcc<@NX@>{};
        }
        if (threadIdx.x % 128 == 0) stamps(I(blockIdx.x), I(1 + wg)) = now();
    }
}
'''

kernels = [s16]
HALF = "ima_ceil_div(rest, 2 * B) > 1 ? ima_ceil_div(rest, 2 * B) : I(1)"
for name, unit, nx, st in [("d16", HALF, 16, 5), ("d16u1", "I(1)", 16, 5), ("d32", HALF, 32, 4)]:
    k = D16.replace("KNAME", name).replace("UNIT", unit).replace("NOW", NOW)
    for tok, v in [("@NX@", nx), ("@ST@", st), ("@NX2@", 2 * nx), ("@J@", nx // 8)]:
        k = k.replace(tok, str(v))
    kernels.append(k)
# d16w: d16 with cycle counts (clock64): the producer's waits for a free stage, each consumer
# warpgroup's waits for a full one and its stage bodies, in `waits` [block, 0 | 1 + 2 wg | 2 + 2 wg].
k = kernels[1].replace("kernel d16 where", "kernel d16w where")
for old_, new_ in [
    ("    inout stamps: i64[BLOCKS, 4]\n", "    inout stamps: i64[BLOCKS, 4]\n    inout waits: i64[BLOCKS, 8]\n"),
    ("            I a, b, t = 0;\n", "            I a, b, t = 0;\n            long long pw = 0;\n"),
    ("                    if (t >= 5) ima_mbar_wait(pipe.empty + 8 * s, unsigned((t / 5 - 1) & 1));\n",
     "                    const long long p0 = clock64();\n"
     "                    if (t >= 5) ima_mbar_wait(pipe.empty + 8 * s, unsigned((t / 5 - 1) & 1));\n"
     "                    pw += clock64() - p0;\n"),
    ("            meta(s, 0) = -1;\n", "            meta(s, 0) = -1;\n            waits(I(blockIdx.x), I(0)) = pw;\n            waits(I(blockIdx.x), I(7)) = t;\n"),
    ("        ImaWgAcc<16> acc;\n", "        ImaWgAcc<16> acc;\n        long long cw = 0, cc = 0;\n"),
    ("            ima_mbar_wait(pipe.full + 8 * s, unsigned((t / 5) & 1));\n",
     "            const long long c0w = clock64();\n"
     "            ima_mbar_wait(pipe.full + 8 * s, unsigned((t / 5) & 1));\n"
     "            cw += clock64() - c0w;\n"),
    ("            ima_wg_w4_stage<true>(acc, w, wt, xt, c0, 0);\n",
     "            const long long c0c = clock64();\n"
     "            ima_wg_w4_stage<true>(acc, w, wt, xt, c0, 0);\n"
     "            cc += clock64() - c0c;\n"),
    ("        if (threadIdx.x % 128 == 0) stamps(I(blockIdx.x), I(1 + wg)) = now();\n",
     "        if (threadIdx.x % 128 == 0) stamps(I(blockIdx.x), I(1 + wg)) = now();\n"
     "        if (threadIdx.x % 128 == 0) {\n"
     "            waits(I(blockIdx.x), I(1 + 2 * wg)) = cw;\n"
     "            waits(I(blockIdx.x), I(2 + 2 * wg)) = cc;\n"
     "        }\n"),
]:
    k = edit(k, [(old_, new_)])
kernels.append(k)
# p16: s16 (static stream-K runs) with x permuted in place by the producer's warps 2 and 3
# within each 32 columns of K, and the consumers decoding a packed word's nibbles in pairs
# (i, i + 4) (pace_gen.py's ilv): a shift, four LOP3s and four HADD2/HFMA2 a word, one
# 8-byte read for two steps. Warp 1 delegates all three consumer warpgroups' counts.
ILV_STAGE = open("pace_gen.py").read().split("ILV = r'''")[1].split("'''")[0]
with open("p16.ima.in") as f:
    P = f.read().replace("NOW", NOW).replace("STAGE", ILV_STAGE.replace("ImaWgAcc<16>", "ImaWgAcc<@NX@>"))
for name, nx, st in [("p16", 16, 5), ("p32", 32, 4)]:
    k = P.replace("KNAME", name)
    for tok, v in [("@NX@", nx), ("@ST@", st), ("@J@", nx // 8)]:
        k = k.replace(tok, str(v))
    kernels.append(k)
with open("dyn.ima", "w") as f:
    f.write("/// Throwaway: gptq_gemm_wg16 stamped, and handed out by ticket (bench/explore/dyn/gen.py).\n")
    f.write(head[head.index("\n") + 1:])
    f.write("\n".join(kernels))
