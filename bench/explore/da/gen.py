"""Throwaway: variants of specs/gemm.ima's gptq_gemm with D tiles of weights in flight
(the accessor's for_whole_tiles with ImaConst<D>{}) and blocks of 4 warps (128 threads,
two an SM: up to 255 registers a thread, 8 warps an SM; the grid as gptq_gemm's, the warps
WN across by 4 / WN along K), so that the register file holds more weights in flight
than two blocks of 8 warps with one tile ahead each (ncu: gptq_gemm waits on memory with
13.6 warps an SM; at M = 16 its time is set by the steps a warp walks, not by the bytes:
bench/RESULTS.md). da4w{D}: 4 warps a block, D tiles ahead; `x` adds x's next rows loaded
as the products free their registers (bench/explore/xa); da8r{D}: gptq_gemm's 8 warps,
tiles of 2 packed rows on the 16-row path (4 in gptq_gemm), D tiles ahead. Needs the
accessor's for_whole_tiles with a depth: `git apply for_whole_tiles_ahead.patch` first.
Run in session 23: every 4-warp form slower, more so with more tiles ahead; the da8 forms
(spilling 16 to 80 bytes) were not measured (bench/RESULTS.md, "What sets gptq_gemm's pace
at 16 rows").
    python3 gen.py [repo root]"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from spec_text import kernel, edit  # noqa: E402

root = sys.argv[1] if len(sys.argv) > 1 else "../../.."
_, k = kernel("gemm.ima", "gptq_gemm")
# x ahead: the patch of bench/explore/xa applied to the kernel's text.
xa = subprocess.run(["git", "-C", root, "apply", "--check", "bench/explore/xa/x_ahead.patch"], capture_output=True)
assert xa.returncode == 0, xa.stderr
tmp = "/tmp/da_gemm_xa.ima"
patched = subprocess.run(["bash", "-c", f"cd {root} && git show HEAD:specs/gemm.ima > {tmp} && patch -s {tmp} bench/explore/xa/x_ahead.patch && cat {tmp}"],
                         capture_output=True, text=True, check=True).stdout
i = patched.index("kernel gptq_gemm ")
kx = patched[i:patched.index("\n}\n", i) + 3]


def variant(name, text, d, warps=4, r1=4):
    text = edit(text, [("kernel gptq_gemm ", f"kernel {name} ")])
    if warps == 4:
        text = edit(text, [("block(256) min_blocks 2", "block(128) min_blocks 2"), ("KW = 8 / WN;", "KW = 4 / WN;"),
                           ("i < rows * 4 * WN; i += 256)", "i < rows * 4 * WN; i += 128)")])
    if r1 != 4:
        text = edit(text, [("MT == 1 ? 4 : 2, S", f"MT == 1 ? {r1} : 2, S")])
    if d > 1:
        old = "w.for_whole_tiles(4 * s + t4, 4 * whole_steps, I(4 * KW), n, ImaConst<4>{}, ImaConst<R>{}, ImaConst<S>{},"
        # The 32-row path keeps one tile ahead: it has no registers for more.
        text = edit(text, [(old, old[:-1] + f", ImaConst<MT == 1 ? {d} : 1>{{}},")])
    return text


out = ["/// Throwaway: gptq_gemm with D tiles in flight (bench/explore/da/gen.py).\nconst GATE_UP_UNIT = 8\n"]
for name, text, d in [("da4w1", k, 1), ("da4w2", k, 2), ("da4w3", k, 3), ("da4w4", k, 4), ("da4w2x", kx, 2),
                      ("da4w3x", kx, 3)]:
    out.append(variant(name, text, d))
# 8 warps (two blocks an SM, 128 registers), R = 2 packed rows a tile on the 16-row path, so
# that D = 2 or 3 tiles fit beside x.
for name, text, d in [("da8r1", k, 1), ("da8r2", k, 2), ("da8r3", k, 3), ("da8r2x", kx, 2), ("da8r3x", kx, 3)]:
    out.append(variant(name, text, d, warps=8, r1=2))
open("da.ima", "w").write("\n".join(out))
