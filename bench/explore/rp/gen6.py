"""Throwaway, session 29: where rp16b_s5's launch spends the time outside its producer's
loop. rp5.py found the loop (median over blocks) at 28.1 us of a 37.8 us launch with idle
consumers, at 41.0 of 52.1 with working ones: about 10 us a launch outside the stream.
rp6.ima's kernels are rp5's with absolute `%globaltimer` stamps added: each consumer
warpgroup's body start and end ([block, wg, 5] and [block, wg, 4]), and the producer's
loop start ([block, 3, 2]; its length stays in [block, 3, 5]). rp6.py places them on one
time line from the launch's first body start.
  s6_pp     gen5.py's s5_pp with the stamps;
  e6_pp     gen5.py's e5_pp with the stamps (idle consumers).
    python3 gen6.py"""
from gen import EMPTY, S5, consts, variant
from gen3 import PHASES, S5_PH, STEP
from gen5 import PRODUCER

NOW = ("[] {\n"
       "            unsigned long long t;\n"
       "            asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t));\n"
       "            return (long long)t;\n"
       "        }()")
STAMPS = [
    ("    body {\n        const I KS = ima_ceil_div(K, I(256)), NS = ima_ceil_div(N, I(192));\n",
     "    body {\n        const long long t_body = " + NOW + ";\n"
     "        const I KS = ima_ceil_div(K, I(256)), NS = ima_ceil_div(N, I(192));\n"),
    ("                phases(I(blockIdx.x), I(3), I(1)) = pp_issue;\n",
     "                phases(I(blockIdx.x), I(3), I(1)) = pp_issue;\n"
     "                phases(I(blockIdx.x), I(3), I(2)) = pp_t0;\n"),
    ("                phases(I(blockIdx.x), I(wg), I(3)) = ph_n;\n",
     "                phases(I(blockIdx.x), I(wg), I(3)) = ph_n;\n"
     "                phases(I(blockIdx.x), I(wg), I(4)) = " + NOW.replace("\n        ", "\n                ") + ";\n"
     "                phases(I(blockIdx.x), I(wg), I(5)) = t_body;\n"),
]
if __name__ == "__main__":
    kernels = [variant("s6_pp", S5_PH, S5 + STEP + PHASES + PRODUCER + STAMPS),
               variant("e6_pp", EMPTY, S5 + PHASES + PRODUCER + STAMPS)]
    with open("rp6.ima", "w") as f:
        f.write("/// Throwaway: rp5's kernels with absolute time stamps (bench/explore/rp/gen6.py).\n")
        f.write(consts)
        f.write("\n" + "\n".join(kernels))
