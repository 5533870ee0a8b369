"""Throwaway: gptq_gemm_wg's pipeline with consumers that do nothing but wait for each
stage and free it (its weights' and x's stream alone, plus the shared tiles' sums of
whatever the accumulators hold), in four shapes of the pipeline:
`e3` 3 stages, x's box 64 rows (gptq_gemm_wg's); `e5` 5 stages, x's box 16 rows;
`e3w` 3 stages of W alone (x not loaded); `e6w` 6 stages of W alone.
    python3 gen_stream.py [repo root]"""
from gen import consts, edit, end, k, start

empty = k[:start] + k[end:]
empty = edit(empty, [("        if (M <= 16) run(ImaConst<16>{});\n        else if (M <= 32) run(ImaConst<32>{});\n        else run(ImaConst<64>{});\n",
                      "        run(ImaConst<16>{});\n")])


def stages(n, x_rows):
    e = [("    shared ws: i32[3, 40, 192] align(1024)\n", f"    shared ws: i32[{n}, 40, 192] align(1024)\n"),
         ("        const ImaTmaPipeline<3, 3> pipe;\n", f"        const ImaTmaPipeline<{n}, 3> pipe;\n")]
    if x_rows == 0:
        e += [("    shared xs: f16[3, 64, 256] align(1024)\n", "    shared xs: f16[1, 64, 256] align(1024)\n"),
              ("                x.tma_load(xs.tma_tile(ImaConst<64>{}, ImaConst<256>{}, st), bar, tile / NS * 64, 256 * kc);\n", ""),
              ("                const auto xt = xs.tma_tile(ImaConst<64>{}, ImaConst<256>{}, st);\n", "")]
    elif x_rows != 64:
        e += [("    in    x: f16[M, K] align(16) tma(64, 64)\n", f"    in    x: f16[M, K] align(16) tma({x_rows}, 64)\n"),
              ("    shared xs: f16[3, 64, 256] align(1024)\n", f"    shared xs: f16[{n}, {x_rows}, 256] align(1024)\n"),
              ("x.tma_load(xs.tma_tile(ImaConst<64>{}, ImaConst<256>{}, st), bar, tile / NS * 64, 256 * kc);",
               f"x.tma_load(xs.tma_tile(ImaConst<{x_rows}>{{}}, ImaConst<256>{{}}, st), bar, tile / NS * 64, 256 * kc);"),
              ("                const auto xt = xs.tma_tile(ImaConst<64>{}, ImaConst<256>{}, st);\n", "")]
    else:
        e += [("                const auto xt = xs.tma_tile(ImaConst<64>{}, ImaConst<256>{}, st);\n", "")]
    return e


out = []
for name, n, xr in (("e3", 3, 64), ("e5", 5, 16), ("e3w", 3, 0), ("e6w", 6, 0)):
    out.append(edit(empty, [("kernel gptq_gemm_wg where M <= 128,", f"kernel {name} where M <= 16, G == 128,")] + stages(n, xr)))
with open("stream.ima", "w") as f:
    f.write("/// Throwaway: gptq_gemm_wg's pipeline, consumers idle (bench/explore/rp/gen_stream.py).\n")
    f.write(consts)
    f.write("\n" + "\n".join(out))
