"""Throwaway, session 30: gptq_gemm_wg before and after its shared tiles' arrivals were
handed to the producer's warps (b4af8a2), in one package, so that one call times both:
  s5   41da525's gptq_gemm_wg: every block stores its slot and waits for an acq_rel
       atomic; the last to arrive sums;
  s8   b4af8a2's: lo always sums, waiting for the others' count; the others' count is
       released by a producer warp (`resident`, cooperative). (d4fe738 then made a dirty
       counter end the launch; this is the kernel as timed, before that.)
    python3 gen.py   (from bench/explore/ab, in a git checkout)"""
import subprocess


def kernel(text, name, new_name):
    i = text.index(f"kernel {name} ")
    j = text.index("\n}\n", i) + 3
    consts = "".join(line + "\n" for line in text[:i].splitlines() if line.startswith("const "))
    return consts, text[i:j].replace(f"kernel {name} ", f"kernel {new_name} ", 1)


def at(commit):
    return subprocess.run(["git", "show", f"{commit}:specs/gemm_tma.ima"], check=True,
                          capture_output=True, text=True).stdout


consts, s5 = kernel(at("41da525"), "gptq_gemm_wg", "s5")
# ima.cuh lost ima_atomic_add_acq_rel at b4af8a2: s5 gets it as a lambda.
ACQ_REL = ('[](int* c, int v) { int old; asm volatile("atom.add.acq_rel.gpu.global.s32 %0, [%1], %2;" '
           ': "=r"(old) : "l"(c), "r"(v) : "memory"); return old; }(')
assert s5.count("ima_atomic_add_acq_rel(") == 1
s5 = s5.replace("ima_atomic_add_acq_rel(", ACQ_REL)
_, s8 = kernel(at("b4af8a2"), "gptq_gemm_wg", "s8")
# ...and ima_red_release_add at d4fe738 (which made a dirty counter end the launch): s8, as
# b4af8a2 had it and as it was timed, gets it as a lambda too.
RED = ('[](int* c, int v) { asm volatile("red.release.gpu.global.add.s32 [%0], %1;" '
       ':: "l"(c), "r"(v) : "memory"); }(')
assert s8.count("ima_red_release_add(") == 1
s8 = s8.replace("ima_red_release_add(", RED)
with open("ab.ima", "w") as f:
    f.write("/// Throwaway: gptq_gemm_wg before (s5) and after (s8) b4af8a2 (bench/explore/ab/gen.py).\n")
    f.write(consts + "\n" + s5 + "\n" + s8)
