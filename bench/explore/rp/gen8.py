"""Throwaway, session 29 for the next: rp16b_s5 with its shared tiles' arrivals off the
consumers' path. bench/explore/mega found a `red.release.gpu` on a streaming SM visible
about 3 us after it is issued; rp16b_s5 (like gptq_gemm_wg) has each consumer warpgroup
wait for an acq_rel atomic at the end of each tile it shares, and for a block's first tile
that is mid-stream. In s8 the block whose part of a tile ends its run (lo, whose run starts
at or before the tile) always sums it, waiting for the others' arrivals at its end; the
others store their slot and hand the count to a delegate, warp 1 + w of the producer's
warpgroup for consumer warpgroup w (named barrier 6 + w, then `red.release`), and go on.
A block has at most one such tile (its first, when its run starts inside one). Needs every
block resident (BLOCKS = 132, one an SM), since lo waits for the others.
  s5   rp16b_s5 as gen2.py makes it;
  s8   s5 with the delegated arrivals.
    python3 gen8.py"""
from gen import NEW_B, S5, consts, variant
from gen3 import STEP

DELEGATE = [
    ("                }\n            });\n            return;\n        }\n",
     "                }\n            });\n"
     "            // Warps 1 to 3 of this warpgroup: consumer warpgroup w's count of the tile this\n"
     "            // block shares but does not sum (its first, when its run starts inside it).\n"
     "            const int dw = int(threadIdx.x / 32) - 1;\n"
     "            if (dw >= 0 && u0 % KS != 0) {\n"
     "                const I tile = u0 / KS, m0 = tile / NS * 64, n0 = tile % NS * 192;\n"
     "                if (n0 + 64 * dw < N) {\n"
     "                    asm volatile(\"bar.sync %0, 160;\" ::\"r\"(6 + dw) : \"memory\");\n"
     "                    if (threadIdx.x % 32 == 0) {\n"
     "                        const I mine = (u1 < (tile + 1) * KS ? u1 : (tile + 1) * KS) - u0;\n"
     "                        asm volatile(\"red.release.gpu.global.add.s32 [%0], %1;\" ::\"l\"(&arrivals(m0 / 64, n0 / 64 + dw)),\n"
     "                                     \"r\"(int(mine)) : \"memory\");\n"
     "                    }\n"
     "                }\n"
     "            }\n"
     "            return;\n        }\n"),
    ("""                        #pragma unroll
                        for (int j = 0; j < NX / 8; ++j) part.store4(me, slot(me), wg, j, tid, 0, own(j));
                        // The warpgroup's slot released, and the others' acquired by the last,
                        // through the counter (CUTLASS's stream-K barrier), not by two
                        // __threadfence()s (sequentially consistent fences, MEMBAR.SC.GPU).
                        ima_warpgroup_sync();
                        if (threadIdx.x % 128 == 0) {
                            const I mine = u0 + t + 1 - (tile * KS > u0 ? tile * KS : u0);
                            last(wg) = ima_atomic_add_acq_rel(&arrivals(m0 / 64, n0 / 64 + wg), int(mine)) + int(mine) == int(KS);
                        }
                        ima_warpgroup_sync();
                        if (last(wg)) {
""", """                        if (tile * KS < u0) {
                            // Not this block's to sum: its slot, counted by its delegate warp.
                            #pragma unroll
                            for (int j = 0; j < NX / 8; ++j) part.store4(me, slot(me), wg, j, tid, 0, own(j));
                            asm volatile("bar.arrive %0, 160;" ::"r"(6 + wg) : "memory");
                        } else {
                            // lo sums, at its run's end: the others' arrivals count KS less its units.
                            const I mine = u0 + t + 1 - tile * KS;
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
"""),
    ("""                            // The tile's sums in the blocks' order, so that they do not depend on
                            // which block arrives last, its own slot read back as the others'.
                            // Unrolled, so that several blocks' loads are in flight at once: one
                            // block's at a time, each waiting a round trip to L2, took 9 of a
                            // launch's 21 µs at M = 32, K = N = 4096 (bench/RESULTS.md).
                            ImaAcc4 sum[NX / 8] = {};
                            #pragma unroll 2
                            for (I b = lo; b <= hi; ++b)
""", """                            // The tile's sums in the blocks' order: its own, then lo + 1 .. hi's
                            // slots, several blocks' loads in flight at once.
                            ImaAcc4 sum[NX / 8];
                            #pragma unroll
                            for (int j = 0; j < NX / 8; ++j) sum[j] = acc.c[j];
                            #pragma unroll 2
                            for (I b = lo + 1; b <= hi; ++b)
"""),
    ("""                            if (threadIdx.x % 128 == 0) arrivals(m0 / 64, n0 / 64 + wg) = 0;
                        }
                        // `last` is read before the next tile's flush writes it.
                        ima_warpgroup_sync();
""", """                            if (threadIdx.x % 128 == 0) arrivals(m0 / 64, n0 / 64 + wg) = 0;
                        }
"""),
]
if __name__ == "__main__":
    kernels = [variant("s5", NEW_B, S5 + STEP), variant("s8", NEW_B, S5 + STEP + DELEGATE)]
    with open("rp8.ima", "w") as f:
        f.write("/// Throwaway: rp16b_s5 with its shared tiles' arrivals delegated (bench/explore/rp/gen8.py).\n")
        f.write(consts)
        f.write("\n" + "\n".join(kernels))
