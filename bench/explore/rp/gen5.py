"""Throwaway, prepared in session 28 for the next: why the stages of rp16b_s5 arrive more
slowly when its consumers work than when they idle (bench/RESULTS.md, "Session 27's
prepared runs": a consumer stage waits 625 cycles for its data, yet removing its decode or
its MMAs speeds the launch 13 to 17%). Both kernels of rp5.ima stamp the producer thread
too: per stage, the cycles it waits for a free stage (`wait_empty`, 0 for the first
STAGES) and spends issuing the stage's copies (`issue`), and over its loop the cycles and
the nanoseconds (`%globaltimer`), whose ratio is the SM's clock in GHz. If the producer
waits for free stages while the consumers wait for full ones, a stage's copies take longer
to land than the ring hides; if it does not wait, the stream itself slowed.
  s5_pp     rp16b_s5 with the consumers' stamps of gen3.py's s5_ph and the producer's;
  e5_pp     the same pipeline with idle consumers (gen.py's `empty`): the idle stream.
phases: i64[BLOCKS, 4, 6]: [block, consumer warpgroup 0..2 or the producer (3), ...]:
consumers (wait, work, tail, stages), the producer (wait_empty, issue, -, stages, cycles,
nanoseconds).
    python3 gen5.py"""
from gen import EMPTY, S5, consts, variant
from gen3 import PHASES, S5_PH, STEP

PRODUCER = [
    ("    inout phases: i64[BLOCKS, 3, 4]\n", "    inout phases: i64[BLOCKS, 4, 6]\n"),
    ("            pipe.produce(u1 - u0, [&](int st, I, ImaBarrier bar) {\n",
     "            const auto pp_ns = [] {\n"
     "                unsigned long long t;\n"
     "                asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t));\n"
     "                return (long long)t;\n"
     "            };\n"
     "            long long pp_wait = 0, pp_issue = 0, pp_n = 0, pp_last = clock64();\n"
     "            const long long pp_c0 = pp_last, pp_t0 = pp_ns();\n"
     "            pipe.produce(u1 - u0, [&](int st, I, ImaBarrier bar) {\n"
     "                const long long pp_in = clock64();\n"
     "                pp_wait += pp_in - pp_last;\n"),
    ("                    ++tile;\n                }\n            });\n            return;\n",
     "                    ++tile;\n                }\n"
     "                pp_last = clock64();\n"
     "                pp_issue += pp_last - pp_in;\n"
     "                ++pp_n;\n"
     "            });\n"
     "            if (threadIdx.x == 0) {\n"
     "                phases(I(blockIdx.x), I(3), I(0)) = pp_wait;\n"
     "                phases(I(blockIdx.x), I(3), I(1)) = pp_issue;\n"
     "                phases(I(blockIdx.x), I(3), I(3)) = pp_n;\n"
     "                phases(I(blockIdx.x), I(3), I(4)) = clock64() - pp_c0;\n"
     "                phases(I(blockIdx.x), I(3), I(5)) = pp_ns() - pp_t0;\n"
     "            }\n"
     "            return;\n"),
]
if __name__ == "__main__":
    kernels = [variant("s5_pp", S5_PH, S5 + STEP + PHASES + PRODUCER),
               variant("e5_pp", EMPTY, S5 + PHASES + PRODUCER)]
    with open("rp5.ima", "w") as f:
        f.write("/// Throwaway: the producer's stages beside the consumers', in cycles (bench/explore/rp/gen5.py).\n")
        f.write(consts)
        f.write("\n" + "\n".join(kernels))
