"""Throwaway (issue 22): gptq_gemm_wg32's timeline at the decode layer's four projections
at 32 rows (gemm_tma_wgs, wgstamp.patch): thread 0 of each warpgroup writes %globaltimer at
its points into stamps[block, role, point] (role 0..2 the consumer warpgroups, 3 the
producer): 0 entry, 1 the pipeline set up; the producer's 2 its last copy issued; a
consumer's 2 its first stage landed, 3 its first stage's MMAs done, 4 its first tile's
slot about to be stored (a tile it shares but does not sum), 6 a tile it sums about to be
emitted (its own or the shared one's last), 7 the shared tile's others counted (after its
wait), 8 its sum emitted, 9 the end of its units; the producer warpgroup's delegate warp
(role 3) 13 its first barrier met, 10 + wg its count for consumer warpgroup wg released
(the atomic returned); 15 the SM; the producer's 14 the run the block took, which
block 0's first consumer's 14 rotates (the launch's input: block b takes run (b + rot) %
blocks). Each point is the last time
it was reached. The stamped kernel's time beside the tree's first (CUDA graphs cycling
weight sets past L2, µs a launch), for what the stamps cost.
    python3 -u time_wgstamp.py        # each mask's wheel in a process of its own, 45 s each
    python3 -u time_wgstamp.py MASK   # gemm_tma_wgs<MASK>_kernels alone
    WGSTAMP_RAW=1 ...                 # and 8 blocks' delegate stamps a shape, raw
Point 13 is read right after the barrier, so it says when warp 1 reached it, not when it
passed (bench/explore/barsem, session 60).
Only the points of the mask's groups are stamped (wgstamp.patch's ima.cuh; build.sh makes
31, all of them); each mask's wheel runs in a process of its own under a timeout, so that a
hang is reported as one (the stamped kernel hung at its first launch until session 59
found why: a whole-warp shuffle inside lane 0's branch)."""
import importlib
import importlib.util
import os
import subprocess
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import gptq_weight, graph_us, same_weight, spread, weight_sets  # noqa: E402
import gemm_tma_kernels as main  # noqa: E402

dev = "cuda"
ROTATIONS = [0, 33, 66, 99]


def correlation(p, q):
    """Pearson's r of two dicts' values over their common keys."""
    keys = sorted(set(p) & set(q))
    a, b = [p[k] for k in keys], [q[k] for k in keys]
    ma, mb = sum(a) / len(a), sum(b) / len(b)
    cov = sum((u - ma) * (v - mb) for u, v in zip(a, b))
    var = (sum((u - ma) ** 2 for u in a) * sum((v - mb) ** 2 for v in b)) ** 0.5 or 1.0
    return cov / var
MASKS = [31, 0, 1, 3, 5, 9, 17]

if len(sys.argv) == 1:
    for mask in MASKS:
        if importlib.util.find_spec(f"gemm_tma_wgs{mask}_kernels") is None:
            print(f"== mask {mask}: no wheel", flush=True)
            continue
        print(f"== mask {mask}", flush=True)
        try:
            subprocess.run([sys.executable, "-u", __file__, str(mask)], timeout=45, check=False)
        except subprocess.TimeoutExpired:
            print(f"== mask {mask}: no result in 45 s (a hang?)", flush=True)
    sys.exit(0)
started = time.time()
wgs = importlib.import_module(f"gemm_tma_wgs{sys.argv[1]}_kernels")
print(f"  imported in {time.time() - started:.1f} s", flush=True)


for name, m, k, n, ny in [("QKV", 32, 4096, 6144, 6144), ("O", 32, 4096, 4096, 4096),
                          ("gate/up, SiluAndMul", 32, 4096, 28672, 14336), ("down", 32, 14336, 4096, 4096)]:
    ws = [gptq_weight(main.QuantWeight, k, n) for _ in range(weight_sets(k, n))]
    own = [same_weight(wgs, w) for w in ws]
    x = torch.randn(m, k, device=dev, dtype=torch.float16)
    y = torch.empty(m, ny, device=dev, dtype=torch.float16)
    part = torch.empty(main.BLOCKS, 3, 4, 128, 4, device=dev, dtype=torch.float32)
    arrivals = torch.zeros((m + 63) // 64, (n + 63) // 64, device=dev, dtype=torch.int32)
    stamps = torch.zeros(main.BLOCKS, 4, 16, device=dev, dtype=torch.int64)
    # One stamped launch first, waited for: a hang shows here, after the module's load.
    wgs.gptq_gemm_wg32(x, own[0], part, arrivals, y, stamps)
    torch.cuda.synchronize()
    print(f"  {name}: a stamped launch returned at {time.time() - started:.1f} s", flush=True)
    t_main = graph_us(lambda w: main.gptq_gemm_wg32(x, w, part, arrivals, y), [(w,) for w in ws])
    t_wgs = graph_us(lambda w: wgs.gptq_gemm_wg32(x, w, part, arrivals, y, stamps), [(w,) for w in own])
    main.gptq_gemm_wg32(x, ws[0], part, arrivals, y)
    ref = y.float().clone()
    stamps.zero_()
    wgs.gptq_gemm_wg32(x, own[0], part, arrivals, y, stamps)
    torch.cuda.synchronize()
    diff = (y.float() - ref).abs().max().item()
    s = stamps.cpu().tolist()
    blocks = [b for b in s if any(v for r in range(4) for v in b[r][:14])]
    # The earliest stamp: the entry where the mask stamps it.
    t0 = min(v for b in blocks for r in range(4) for v in b[r][:14] if v)
    us = lambda t: (t - t0) / 1e3
    end = max(b[r][9] for b in blocks for r in range(3)) or t0
    print(f"== {name}: M={m} K={k} N={n}: tree {t_main:.1f} us a launch, stamped {t_wgs:.1f} (y diff {diff:.1e}); "
          f"{len(blocks)} blocks; the last point {us(end):.2f} us after the first entry", flush=True)
    print("  (us; min p10 p50 p90 max over the blocks' consumer warpgroups, or the producers)")
    cons = [b[r] for b in blocks for r in range(3)]
    rows = [("entry, after the first", [us(c[0]) for c in cons]),
            ("0 -> 1 the pipeline set up", [(c[1] - c[0]) / 1e3 for c in cons]),
            ("1 -> 2 the first stage landed", [(c[2] - c[1]) / 1e3 for c in cons if c[2]]),
            ("2 -> 3 the first stage multiplied", [(c[3] - c[2]) / 1e3 for c in cons if c[3]]),
            ("3 -> 9 the rest of its units", [(c[9] - c[3]) / 1e3 for c in cons if c[9] and c[3]]),
            ("6 -> 7 a summed tile's wait for the others", [(c[7] - c[6]) / 1e3 for c in cons if c[7] and c[6]]),
            ("7 -> 8 their slots summed, y stored", [(c[8] - c[7]) / 1e3 for c in cons if c[8] and c[7]]),
            ("end (9), after the first entry", [us(c[9]) for c in cons if c[9]]),
            ("producer: last copy issued, after the first entry", [us(b[3][2]) for b in blocks if b[3][2]]),
            # Session 51: a gpu-scope release waits for the SM's bulk copies in flight
            # (bench/explore/fence), and the delegate releases while the ring streams.
            ("delegate: barrier met (13) -> its release returned (10)", [(b[3][10] - b[3][13]) / 1e3 for b in blocks if b[3][10] and b[3][13]]),
            ("a shared slot stored (4) -> its count released (10 + wg)",
             [(b[3][10 + r] - b[r][4]) / 1e3 for b in blocks for r in range(3) if b[3][10 + r] and b[r][4]]),
            ("the count released, after the first entry", [us(b[3][10 + r]) for b in blocks for r in range(3) if b[3][10 + r]])]
    for what, xs in rows:
        print(f"  {what:50s}{spread(xs)}")
    if os.environ.get("WGSTAMP_RAW"):
        # The delegate's barrier met (13) against its consumers' slots (4) and counts (10 + wg).
        for i, b in enumerate([b for b in blocks if b[3][13]][:8]):
            print(f"  raw: 13 at {us(b[3][13]):.2f}; 4 at " + " ".join(f"{us(b[r][4]):.2f}" for r in range(3))
                  + "; 10 + wg at " + " ".join(f"{us(b[3][10 + r]):.2f}" for r in range(3))
                  + f"; 9 at {us(b[0][9]):.2f}")
    # Whether the SMs that take longest over their units are the same from launch to launch
    # (an SM served more slowly than others, the static split's tail) or change: a second
    # stamped launch, and each SM's rest of units (3 -> 9, its consumer warpgroups' mean).
    rest = lambda bs: {b[0][15]: sum(b[r][9] - b[r][3] for r in range(3)) / 3e3 for b in bs if all(b[r][9] and b[r][3] for r in range(3))}
    first = rest(blocks)
    stamps.zero_()
    wgs.gptq_gemm_wg32(x, own[1 % len(own)], part, arrivals, y, stamps)
    torch.cuda.synchronize()
    second = rest([b for b in stamps.cpu().tolist() if any(v for r in range(4) for v in b[r][:14])])
    sms = sorted(set(first) & set(second))
    if len(sms) > 2:
        print(f"  each SM's rest of units, two launches: correlation {correlation(first, second):.2f} over {len(sms)} SMs")
        for label, d in [("first", first), ("second", second)]:
            print(f"  {label} launch, by SM id (0.1 us): " + " ".join(str(round(d[m] * 10)) for m in sms))
    # The same with each block's run rotated (block b takes run (b + rot) % blocks, the
    # rotation in stamps[0, 0, 14]): if the slow ones follow the SM whatever its run, an SM's
    # own rate sets them; if they follow the run, its work (units, lo or follower) does.
    by_sm, by_run = {}, {}
    for rot in ROTATIONS:
        sm_rest, run_rest = {}, {}
        for _ in range(3):
            stamps.zero_()
            stamps[0, 0, 14] = rot
            wgs.gptq_gemm_wg32(x, own[rot % len(own)], part, arrivals, y, stamps)
            torch.cuda.synchronize()
            for b in stamps.cpu().tolist():
                if all(b[r][9] and b[r][3] for r in range(3)):
                    t = sum(b[r][9] - b[r][3] for r in range(3)) / 3e3
                    sm_rest.setdefault(b[0][15], []).append(t)
                    run_rest.setdefault(b[3][14], []).append(t)
        by_sm[rot] = {k: sum(v) / len(v) for k, v in sm_rest.items()}
        by_run[rot] = {k: sum(v) / len(v) for k, v in run_rest.items()}
        slow = sorted(by_sm[rot], key=lambda k: -by_sm[rot][k])[:8]
        print(f"  rotation {rot}: slowest SMs " + " ".join(f"{k}:{by_sm[rot][k]:.1f}" for k in slow))
    for what, table in [("SM", by_sm), ("run", by_run)]:
        rs = [correlation(table[a], table[b]) for i, a in enumerate(ROTATIONS) for b in ROTATIONS[i + 1:]]
        print(f"  rest of units by {what} across rotations {ROTATIONS}: correlations " + " ".join(f"{r:.2f}" for r in rs))
    # Session 61: the runs keep their times over the SMs. What in a run sets it: its
    # units, a follower's part at its start (a slot stored early), a summed tile at its
    # end (lo's wait and sums), a last tile narrower than 192 columns. Each run's mean over
    # the rotations' 12 launches, grouped by those, and the slowest and fastest runs.
    ks, ns = -(-k // 256), -(-n // 192)
    units, nb = ks * ns, main.BLOCKS
    q, r = divmod(units, nb)
    start = lambda b: b * q + min(b, r)
    runs = {}
    for run in range(nb):
        u0, u1 = start(run), start(run + 1)
        last = (u1 - 1) // ks
        runs[run] = (u1 - u0, u0 % ks != 0, last * ks >= u0 and (last + 1) * ks > u1, n - last * 192 < 192)
    mean = {run: sum(by_run[rot][run] for rot in ROTATIONS) / len(ROTATIONS) for run in runs
            if all(run in by_run[rot] for rot in ROTATIONS)}
    groups = {}
    for run, t in mean.items():
        groups.setdefault(runs[run], []).append(t)
    print("  by (units, follower part first, summed tile last, narrow last tile): count, mean, min, max of the rest (us)")
    for key in sorted(groups):
        ts = groups[key]
        print(f"    {key}: {len(ts)}, {sum(ts) / len(ts):.2f}, {min(ts):.2f}, {max(ts):.2f}")
    order = sorted(mean, key=lambda run: mean[run])
    fmt = lambda run: f"{run}:{mean[run]:.1f}:{start(run)}-{start(run + 1)}"
    print("  fastest runs (run:us:units): " + " ".join(fmt(run) for run in order[:10]))
    print("  slowest runs (run:us:units): " + " ".join(fmt(run) for run in order[-10:]))
    print("  every run's mean (0.1 us), by run: " + " ".join(str(round(mean[run] * 10)) for run in sorted(mean)))
