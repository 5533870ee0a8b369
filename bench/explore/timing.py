"""What the throwaway timers of bench/explore share: random GPTQ weights on the device, and
the time of a launch as the median replay of a CUDA graph of launches cycling through
argument sets (chosen larger than L2, so that each launch reads from memory)."""
import torch

dev = "cuda"


def gptq_weight(quant_weight, k, n, group=128):
    """Random GPTQ words, zeros and scales of a K x N weight, as `quant_weight` (any
    package's `QuantWeight` class) makes them."""
    qweight = torch.randint(-2**31, 2**31 - 1, (k // 8, n), device=dev, dtype=torch.int32)
    qzeros = torch.randint(-2**31, 2**31 - 1, (k // group, n // 8), device=dev, dtype=torch.int32)
    scales = (torch.rand(k // group, n, device=dev) * 0.01).half()
    return quant_weight("gptq", qweight=qweight, qzeros=qzeros, scales=scales, group_size=group)


def graph_us(fn, sets, reps=20, warm=2):
    """µs a launch of fn(*args), args in `sets`: a graph of one launch a set, median of
    `reps` replays, after `warm` passes outside the graph."""
    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        for _ in range(warm):
            for a in sets:
                fn(*a)
        torch.cuda.synchronize()
        with torch.cuda.graph(g):
            for a in sets:
                fn(*a)
    ts = []
    for _ in range(reps):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        g.replay()
        e1.record()
        torch.cuda.synchronize()
        ts.append(e0.elapsed_time(e1) * 1e3 / len(sets))
    ts.sort()
    return ts[len(ts) // 2]
