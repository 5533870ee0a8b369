"""What the time-stamped variants of gptq_gemm_wg share (gen.py at b74cd2e's spec, gen3.py
after b1cbb7b): the edits that give the kernel `stamps` [block, role, 32] and write points 0
to 7 (role 0..2 the consumer warpgroups, 3 the producer; [p] %globaltimer at point p,
[16 + p] the block's clock64 since its entry), and the timeline that the timers print
from them."""

# A point p of warpgroup (role) r: `if (stamper) stamp(r, p);`.
S = "if (stamper) stamp"
STAMPED = [
    ("kernel gptq_gemm_wg ", "kernel stamped "),
    ("    out   y: f16[M, NY] align(16)\n", "    out   y: f16[M, NY] align(16)\n    inout stamps: i64[BLOCKS, 4, 32]\n"),
    ("    body {\n", "    body {\n"
     "        const auto now = [] { long long t; asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t)); return t; };\n"
     "        const long long t_entry = now(), c_entry = clock64();\n"
     "        const auto stamp = [&](int role, int p) {\n"
     "            stamps(I(blockIdx.x), I(role), I(p)) = now();\n"
     "            stamps(I(blockIdx.x), I(role), I(16 + p)) = clock64() - c_entry;\n"
     "        };\n"),
    ("        const ImaTmaPipeline<3, 3> pipe;\n", "        const ImaTmaPipeline<3, 3> pipe;\n"
     "        const int role = pipe.consumer() < 0 ? 3 : pipe.consumer();\n"
     "        const bool stamper = threadIdx.x % 128 == 0;\n"
     "        if (stamper) {\n"
     "            stamps(I(blockIdx.x), I(role), I(0)) = t_entry;\n"
     "            stamps(I(blockIdx.x), I(role), I(16)) = 0;\n"
     "            stamp(role, 1);\n"
     "            for (int p = 2; p < 16; ++p) stamps(I(blockIdx.x), I(role), I(p)) = 0;\n"
     "        }\n"),
    ("            });\n            return;\n        }\n", f"            }});\n            {S}(3, 2);\n            return;\n        }}\n"),
    ("                const I kc = next_kc, tile = next_tile;\n",
     f"                const I kc = next_kc, tile = next_tile;\n                if (t == 0) {S}(wg, 2);\n"),
    ("                acc.template wait<0>();\n", f"                acc.template wait<0>();\n                if (t == 0) {S}(wg, 3);\n"),
    ("                        #pragma unroll\n                        for (int j = 0; j < NX / 8; ++j) part.store4",
     f"                        {S}(wg, 4);\n                        #pragma unroll\n                        for (int j = 0; j < NX / 8; ++j) part.store4"),
    ("                        ima_warpgroup_sync();\n                        if (last(wg)) {\n",
     f"                        ima_warpgroup_sync();\n                        {S}(wg, 5);\n                        if (last(wg)) {{\n"),
    ("                        ima_warpgroup_sync();\n                    }\n",
     f"                        ima_warpgroup_sync();\n                        {S}(wg, 6);\n                    }}\n"),
    ("            });\n        };\n        if (M <= 16)", f"            }});\n            {S}(wg, 7);\n        }};\n        if (M <= 16)"),
]


def timeline(s, consumer, slowest_points):
    """Prints, for the producer's points 0 to 2 and consumer warpgroup 0's `consumer`
    points, over the blocks that reach each, the global time since the earliest block's
    entry (ns: min / median / max) and the block's own cycles (median); then the slowest
    blocks' rows, `slowest_points` points and the plain values 12 to 15. `s`: the stamps,
    an int64 tensor [blocks, 4, 32] on the host."""
    t0 = s[:, :, 0].min().item()
    print(f"  entries span {s[:, :, 0].max().item() - t0} ns")
    for role in (3, 0):
        for p, pname in enumerate(["entry", "set up", "last copy issued"] if role == 3 else consumer):
            g, c = s[:, role, p], s[:, role, 16 + p]
            have = g != 0
            if not have.any():
                continue
            g, c = g[have] - t0, c[have]
            print(f"    {'producer' if role == 3 else 'consumer 0'} {p:2d} {pname:20s} blocks {int(have.sum()):3d}: "
                  f"{g.min().item():6d} {g.median().item():6d} {g.max().item():6d} ns, {c.median().item():7d} cycles")
    ends = s[:, :3, 7].max(dim=1).values - t0
    for b in ends.argsort(descending=True)[:4].tolist():
        wg = int(s[b, :3, 7].argmax())
        r = s[b, wg]
        pts = " ".join(f"{p}:{(r[p] - t0).item() if r[p] else '-'}" for p in range(slowest_points))
        print(f"    slowest: block {b} wg {wg}: {pts} | tile {r[12].item()} blocks {r[13].item()} t {r[14].item()} "
              f"units {r[15].item()}")
