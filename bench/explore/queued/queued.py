"""Throwaway, session 36 (issues 21 and 22): does timing.graph_us count the graph's own
submission? dyn's e16 (gptq_gemm_wg16's launch, empty body) took 7.5 µs a launch in a
graph of 3 launches (K = 8192, N = 28672) but 1.0 in one of 37 (K = N = 4096). Here each
kernel is timed four ways: graph_us as the explorers have it (events around one replay,
the host's submission inside them); the same graph, replays queued behind a 50 ms
torch.cuda._sleep so that the events see the device's time only; launches one by one
queued the same way, events around each (examples/bench.rs's method); and, added after
session 36's call and not run yet, the same launches in runs of 10 between one pair of
events, which tells the events' cost from a plain launch's: if the runs take the graph's
time, a bench timing runs of launches would drop the ~3 µs; if they take the single
launches', a launch outside a graph costs it and only a graph timer would.
    python3 -u queued.py [M,K,N ...]"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import gptq_weight, graph_us, queued_graph_us, queued_us, same_weight, shapes, weight_sets  # noqa: E402
import dyn_kernels as dk  # noqa: E402
import gemm_kernels as gk  # noqa: E402
import gemm_tma_kernels as tk  # noqa: E402

dev = "cuda"


def queued_runs_us(fn, sets, run, reps):
    """Runs of `run` launches cycling `sets`, each run a step."""
    for a in sets:
        fn(*a)

    def step(i):
        for j in range(run):
            fn(*sets[(i * run + j) % len(sets)])

    return queued_us(step, reps, run)


for m, k, n in shapes([(16, 8192, 28672), (16, 4096, 4096), (32, 8192, 28672), (32, 4096, 28672)]):
    ws = [gptq_weight(dk.QuantWeight, k, n) for _ in range(weight_sets(k, n))]
    tws = [same_weight(tk, w) for w in ws]
    gws = [same_weight(gk, w) for w in ws]
    x = torch.randn(m, k, device=dev, dtype=torch.float16)
    stamps = torch.zeros(dk.BLOCKS, 4, device=dev, dtype=torch.int64)
    part16 = torch.empty(dk.BLOCKS, 3, 2, 128, 4, device=dev, dtype=torch.float32)
    part32 = torch.empty(dk.BLOCKS, 3, 4, 128, 4, device=dev, dtype=torch.float32)
    arr = torch.zeros((m + 63) // 64, (n + 63) // 64, device=dev, dtype=torch.int32)
    y = torch.empty(m, n, device=dev, dtype=torch.float16)
    run = {"gptq_gemm": (gws, lambda w: gk.gptq_gemm(x, w, y))}
    if m <= 16:
        run["e16"] = (ws, lambda w: dk.e16(x, w, part16, arr, stamps, y))
        run["wg16"] = (tws, lambda w: tk.gptq_gemm_wg16(x, w, part16, arr, y))
    else:
        run["wg32"] = (tws, lambda w: tk.gptq_gemm_wg32(x, w, part32, arr, y))
    sets = len(ws)
    print(f"M={m} K={k} N={n} ({sets} weight sets), µs a launch: graph_us / queued graph / queued launches / queued runs of 10", flush=True)
    for nm, (wsets, f) in run.items():
        a = [(w,) for w in wsets]
        print(f"    {nm}: {graph_us(f, a):.1f} / {queued_graph_us(f, a):.1f} / {queued_runs_us(f, a, 1, 60):.1f} / {queued_runs_us(f, a, 10, 20):.1f}", flush=True)
