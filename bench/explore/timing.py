"""What the throwaway timers of bench/explore share: random GPTQ weights on the device, the
time of a launch as the median replay of a CUDA graph of launches cycling through
argument sets (chosen larger than L2, so that each launch reads from memory), and a
table of kernel variants against a reference."""
import sys
import types

import torch

dev = "cuda"


def shapes(default):
    """A timer's (M, K, N) cases: its command line's M,K,N arguments, or `default`."""
    return [tuple(int(a) for a in c.split(",")) for c in sys.argv[1:]] or default


def weight_sets(k, n):
    """How many K x N int4 weights a timer's graph cycles: just past 300 MB of them in all
    (far more than the H200's L2 holds, so that each launch reads its weights from DRAM),
    at least 2 sets and at most 64."""
    return min(64, max(2, int(300e6 // (k * n // 2)) + 1))


def gptq_weight(quant_weight, k, n, group=128):
    """Random GPTQ words, zeros and scales of a K x N weight, as `quant_weight` (any
    package's `QuantWeight` class) makes them."""
    qweight = torch.randint(-2**31, 2**31 - 1, (-(-k // 8), n), device=dev, dtype=torch.int32)
    groups = -(-k // group)  # a last group of fewer rows has its own zeros and scales
    qzeros = torch.randint(-2**31, 2**31 - 1, (groups, n // 8), device=dev, dtype=torch.int32)
    scales = (torch.rand(groups, n, device=dev) * 0.01).half()
    return quant_weight("gptq", qweight=qweight, qzeros=qzeros, scales=scales, group_size=group)


def same_weight(package, w):
    """`w` (any package's GPTQ QuantWeight) as `package`'s own QuantWeight of the same
    tensors, so that kernels of several packages read one set of weights."""
    return package.QuantWeight("gptq", qweight=w.qweight, qzeros=w.qzeros, scales=w.scales, group_size=w.group_size)


def wg_workspace(package, m, n):
    """gptq_gemm_wg's workspaces as gemm_tma.ima declared them until b4af8a2 (two slots a
    block; the rp kernels, generated from that spec, still declare them so), for M rows of x
    and N columns of W: `part`, its blocks' slots (scratch), and `arrivals`, zero.
    `package`: any package of a spec with the kernel's BLOCKS."""
    part = torch.empty(package.BLOCKS, 2, 3, 8, 128, 4, device=dev, dtype=torch.float32)
    arrivals = torch.zeros((m + 63) // 64, (n + 63) // 64, device=dev, dtype=torch.int32)
    return part, arrivals


def capture(fn, sets, warm=2):
    """A CUDA graph of one launch of fn(*args) for each args in `sets`, captured after
    `warm` passes outside the graph."""
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
    return g


def graph_us(fn, sets, reps=20, warm=2):
    """µs a launch of fn(*args), args in `sets`: a graph of one launch a set (capture),
    median of `reps` replays, each between events and waited for (the events count the
    replay's submission too: bench/explore/queued)."""
    g = capture(fn, sets, warm)
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


HOLD = 100_000_000  # cycles of torch.cuda._sleep: ~50 ms, far longer than the queueing


def queued_us(step, reps, per):
    """µs a launch: the median of `reps` calls of step(i), each between a pair of events,
    all queued behind a hold of the device (torch.cuda._sleep), so that the events see the
    device's time and not the host's submission (bench/explore/queued), divided by the
    `per` launches a step makes."""
    torch.cuda.synchronize()
    torch.cuda._sleep(HOLD)
    ev = []
    for i in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        step(i)
        b.record()
        ev.append((a, b))
    torch.cuda.synchronize()
    ts = sorted(a.elapsed_time(b) * 1e3 / per for a, b in ev)
    return ts[len(ts) // 2]


def queued_graph_us(fn, sets, reps=20):
    """µs a launch of fn(*args), args in `sets`: replays of capture's graph, queued."""
    g = capture(fn, sets)
    return queued_us(lambda i: g.replay(), reps, len(sets))


def copy_rate():
    """The device's copy rate in TB/s, the weights' roofline's: an elementwise kernel
    reading and writing 1 GiB, in a queued graph. Printed, and the 2 GiB freed before the
    caller's weights."""
    src = torch.empty(1 << 29, device=dev, dtype=torch.float16)
    dst = torch.empty_like(src)
    rate = 2 * src.numel() * 2 / queued_graph_us(lambda: torch.mul(src, 1.0, out=dst), [()]) / 1e6
    print(f"copy rate (mul out= in a graph) {rate:.2f} TB/s", flush=True)
    return rate


def gptq_bytes(k, n, group=128):
    """What a K x N GPTQ int4 weight's words, f16 scales and zero words take."""
    groups = -(-k // group)
    return k // 8 * n * 4 + groups * n * 2 + groups * n // 8 * 4


def in_turn_line(label, res, roof_us, arrivals, name=lambda nm: nm):
    """wg_in_turn's results as one line after `label`: each kernel's passes, its error and
    its best pass's share of the roofline; marked where the launches left `arrivals` dirty
    (they must leave it zero)."""
    row = [f"{name(nm)} {' / '.join(f'{t:.1f}' for t in ts)} ({err:.1e}; {100 * roof_us / min(ts):.1f}%)"
           for nm, (ts, err) in res.items()]
    dirty = "" if int(arrivals.abs().sum()) == 0 else " ARRIVALS NOT ZERO"
    return f"{label}: " + ", ".join(row) + dirty


def wg_in_turn(package, names, x, ws, part, arrivals, passes):
    """For each kernel of `names` in `package`, all taking gptq_gemm_wg16's arguments (x,
    w, part, arrivals, y): µs a launch on queued graphs cycling the weight sets `ws`,
    `passes` passes with the kernels in turn, and its output for ws[0] against torch's f32
    product (max err / max |y|). name -> (times, err)."""
    m, k, n = x.shape[0], x.shape[1], ws[0].qweight.shape[1]
    ys = {nm: torch.empty(m, n, device=dev, dtype=torch.float16) for nm in names}
    times = {nm: [] for nm in names}
    for _ in range(passes):
        for nm in names:
            f = getattr(package, nm)
            times[nm].append(queued_graph_us(lambda w, f=f, y=ys[nm]: f(x, w, part, arrivals, y), [(w,) for w in ws]))
    ref = gptq_reference(x, ws[0], k, n)
    out = {}
    for nm in names:
        getattr(package, nm)(x, ws[0], part, arrivals, ys[nm])
        out[nm] = (times[nm], (ys[nm].float() - ref).abs().max().item() / ref.abs().max().item())
    return out


def shape_in_turn(package, kernel, shape, rate, others, label, tiles=2, name=lambda nm: nm):
    """One in_turn_line at `shape` (M, K, N): `package`'s `kernel` (gptq_gemm_wg16's
    arguments) as "main" and each kernel of `others(ws)` (name -> f(x, w, part, arrivals,
    y), w one of the weight sets `ws`, `package`'s), on weight sets cycling past L2, three
    passes, with the roofline from `rate` (copy_rate's). `label` takes M, K, N and the sets;
    `tiles` is the accumulator tiles of main's workspace `part` (2 at 16 rows, 4 at 32)."""
    m, k, n = shape
    ws = [gptq_weight(package.QuantWeight, k, n, group=128) for _ in range(weight_sets(k, n))]
    x = torch.randn(m, k, device=dev, dtype=torch.float16)
    part = torch.empty(package.BLOCKS, 3, tiles, 128, 4, device=dev, dtype=torch.float32)
    arrivals = torch.zeros((m + 63) // 64, (n + 63) // 64, device=dev, dtype=torch.int32)
    kernels = {"main": getattr(package, kernel), **others(ws)}
    res = wg_in_turn(types.SimpleNamespace(**kernels), list(kernels), x, ws, part, arrivals, 3)
    return in_turn_line(label(m, k, n, len(ws)), res, gptq_bytes(k, n) / rate / 1e6, arrivals, name)


def variants_against(ref, variants, cases, quant_weight, group=128, tolerance=2e-2):
    """Prints, for each (M, K, N) of `cases`, the µs a launch of ref(x, w, y) and of each
    kernel of `variants` (name -> a function of the same arguments, or a function of M
    giving that dict), on random f16 x and GPTQ weight sets of at least 300 MB in all,
    cycled by graph_us; an output that differs from ref's by more than `tolerance` times
    its largest magnitude is marked DIFF."""
    for m, k, n in cases:
        vs = variants(m) if callable(variants) else variants
        nsets = weight_sets(k, n)
        ws = [gptq_weight(quant_weight, k, n, group) for _ in range(nsets)]
        x = torch.randn(m, k, device=dev, dtype=torch.float16)
        y_ref = torch.empty(m, n, device=dev, dtype=torch.float16)
        row = [f"reference {graph_us(lambda w: ref(x, w, y_ref), [(w,) for w in ws]):.1f}"]
        ref(x, ws[0], y_ref)
        bound = tolerance * max(1.0, y_ref.float().abs().max().item())
        for name, f in vs.items():
            y = torch.empty_like(y_ref)
            t = graph_us(lambda w: f(x, w, y), [(w,) for w in ws])
            f(x, ws[0], y)
            err = (y.float() - y_ref.float()).abs().max().item()
            row.append(f"{name} {t:.1f}" + ("" if err < bound else f" (DIFF {err:.3g})"))
        print(f"M={m} K={k} N={n}: " + ", ".join(row), flush=True)


def gptq_reference(x, w, k, n, group=128):
    """x · W in f32 from GPTQ's own words (v1: the zeros' word stored less 0x11111111)."""
    shifts = torch.arange(8, device=dev, dtype=torch.int32) * 4
    q = ((w.qweight.unsqueeze(1) >> shifts.view(1, 8, 1)) & 15).reshape(k, n).float()
    zw = (w.qzeros.to(torch.int64) + 0x11111111) & 0xFFFFFFFF
    z = ((zw.unsqueeze(2) >> shifts.view(1, 1, 8).long()) & 15).reshape(k // group, n).float()
    s = w.scales.float()
    wf = (q - z.repeat_interleave(group, 0)) * s.repeat_interleave(group, 0)
    return x.float() @ wf


def spread(xs):
    """The minimum, 10th percentile, median, 90th percentile and maximum of `xs`, as one
    line of fixed-width numbers ("-" when empty): what the time-stamp timers print for
    each step over the blocks (pstamp, wgstamp)."""
    xs = sorted(xs)
    if not xs:
        return "-"
    at = lambda q: xs[min(len(xs) - 1, int(q * (len(xs) - 1) + 0.5))]
    return " ".join(f"{at(q):6.2f}" for q in (0, 0.1, 0.5, 0.9, 1))
