"""Throwaway, session 44 (issues 21 and 22): what programmatic dependent launch (PDL) does to
gptq_gemm_wg16, its parts apart. Session 44's pdl form was 1.7 to 2.4 µs slower than the
tree's kernel even launched plainly, and PDL gained nothing over that (as the reverted
9833ecc gained nothing for the layer; bench/RESULTS.md). pdl2.patch (built
by build.sh as gemm_tma_f1, f2 and f3): the producer copies the words of its first 5
stages, then x's (f1: the trigger `griddepcontrol.launch_dependents` at entry, nothing
waits, a race under PDL, timed only; f2: the trigger and the producer's
`griddepcontrol.wait` before x's copies, the form that would land; f3: f2 without the
trigger); the runtime launches with programmatic stream serialization when IMA_PDL=1.
In one process, on the same weights, two passes:
- graphs of SETS launches cycling weight sets past L2 (timing.queued_graph_us), each
  kernel launched plainly (/0) and with PDL (/1);
- the same launches queued eagerly, no graph (main, f2/0, f2/1), behind a hold;
- every set's output of one PDL graph of f1 and of f2, against torch's f32 product;
- the edges torch's stream capture made of two PDL launches of f2 (its graph's DOT),
  written to $OUT/pdl2_graph.dot, and the lines of it that name an edge's type.
    python3 -u pdl2.py"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import HOLD, capture, copy_rate, gptq_bytes, gptq_reference, gptq_weight, queued_graph_us, queued_us, same_weight  # noqa: E402
import gemm_tma_kernels as main  # noqa: E402
import gemm_tma_f1_kernels as f1  # noqa: E402
import gemm_tma_f2_kernels as f2  # noqa: E402
import gemm_tma_f3_kernels as f3  # noqa: E402

dev = "cuda"
rate = copy_rate()
print(f"hold {HOLD}", flush=True)
pkgs = {"main": main, "f1": f1, "f2": f2, "f3": f3}

for m, k, n, sets in [(16, 8192, 28672, 8), (16, 14336, 4096, 24), (1, 8192, 28672, 8)]:
    ws = [gptq_weight(main.QuantWeight, k, n) for _ in range(sets)]
    own = {nm: {id(w): same_weight(p, w) for w in ws} for nm, p in pkgs.items()}
    x = torch.randn(m, k, device=dev, dtype=torch.float16)
    part = torch.empty(main.BLOCKS, 3, 2, 128, 4, device=dev, dtype=torch.float32)
    arr = torch.zeros((m + 63) // 64, (n + 63) // 64, device=dev, dtype=torch.int32)
    y = torch.empty(m, n, device=dev, dtype=torch.float16)

    def launch(nm, w, yi=y):
        pkgs[nm].gptq_gemm_wg16(x, own[nm][id(w)], part, arr, yi)

    cols = [("main", "0"), ("f1", "0"), ("f2", "0"), ("f3", "0"), ("f1", "1"), ("f2", "1"), ("f3", "1")]
    graph = {c: [] for c in cols}
    eager = {c: [] for c in [("main", "0"), ("f2", "0"), ("f2", "1")]}
    for _ in range(2):
        for nm, env in cols:
            os.environ["IMA_PDL"] = env
            graph[(nm, env)].append(queued_graph_us(lambda w, nm=nm: launch(nm, w), [(w,) for w in ws]))
            arr.zero_()  # f1 under PDL races on the counts; the next kernel starts clean
        for nm, env in eager:
            os.environ["IMA_PDL"] = env
            for w in ws:  # warm
                launch(nm, w)
            eager[(nm, env)].append(queued_us(lambda i, nm=nm: [launch(nm, w) for w in ws], 10, len(ws)))
    os.environ["IMA_PDL"] = "1"
    errs = {}
    for nm in ["f1", "f2"]:
        arr.zero_()
        ys = [torch.full((m, n), float("nan"), device=dev, dtype=torch.float16) for _ in ws]
        g = capture(lambda w, yi, nm=nm: launch(nm, w, yi), list(zip(ws, ys)))
        for yi in ys:
            yi.fill_(float("nan"))
        g.replay()
        torch.cuda.synchronize()
        e = 0.0
        for w, yi in zip(ws, ys):
            ref = gptq_reference(x, w, k, n)
            e = max(e, (yi.float() - ref).abs().max().item() / ref.abs().max().item())
        errs[nm] = e
    os.environ["IMA_PDL"] = "0"
    roof = gptq_bytes(k, n) / rate / 1e6
    dirty = "" if int(arr.abs().sum()) == 0 else " ARRIVALS NOT ZERO"
    print(f"M={m} K={k} N={n} ({sets} sets, roofline {roof:.1f} µs)" + dirty, flush=True)
    print("  graphs: " + ", ".join(f"{nm}/{env} {' / '.join(f'{t:.1f}' for t in ts)}"
                                   for (nm, env), ts in graph.items()), flush=True)
    print("  eager:  " + ", ".join(f"{nm}/{env} {' / '.join(f'{t:.1f}' for t in ts)}"
                                   for (nm, env), ts in eager.items()), flush=True)
    print("  PDL graph outputs: " + ", ".join(f"{nm} {e:.1e}" for nm, e in errs.items()), flush=True)

# The edges of two PDL launches as torch's capture made them.
os.environ["IMA_PDL"] = "1"
out = os.environ.get("OUT", "/tmp")
g = torch.cuda.CUDAGraph()
g.enable_debug_mode()
s = torch.cuda.Stream()
with torch.cuda.stream(s):
    launch("f2", ws[0]), launch("f2", ws[1])
    torch.cuda.synchronize()
    with torch.cuda.graph(g):
        launch("f2", ws[0])
        launch("f2", ws[1])
path = os.path.join(out, "pdl2_graph.dot")
g.debug_dump(path)
with open(path) as f:
    lines = [ln.strip() for ln in f if "->" in ln or "rogrammatic" in ln or "port" in ln.lower()]
print("graph DOT edges:", *lines[:12], sep="\n  ", flush=True)
