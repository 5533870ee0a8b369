"""Throwaway, session 29: rp6.ima's s6_pp and e6_pp (gen6.py), µs a launch (CUDA graphs
cycling weight sets larger than L2), then the last launch's time line from its first
block's body start, µs: the blocks' body starts, the producers' loop starts and ends, the
consumer warpgroups' ends (min / median / max over blocks), and the span from the first
start to the last end.
    python3 -u rp6.py [M,K,N ...]"""
import rp6_kernels as rk
from repack import stamped_runs

FORMATS = {"rp": (rk.QuantWeight, True)}


def spread(t):
    t = t.sort().values
    return f"{t[0]:.1f} / {t[len(t) // 2]:.1f} / {t[-1]:.1f}"


for m, k, n, run in stamped_runs(rk, FORMATS, [(16, 8192, 28672), (16, 14336, 4096)], (4, 6)):
    for name in ("s6_pp", "e6_pp"):
        us, p = run(name, "rp")
        busy = p[:, 3, 3] > 0
        body = p[:, :3, 5][busy].min(dim=1).values
        t0 = body.min()
        end = p[:, :3, 4][busy].max(dim=1).values
        loop0 = p[:, 3, 2][busy]
        loop1 = loop0 + p[:, 3, 5][busy]
        us_of = lambda t: (t - t0).double() / 1e3  # noqa: E731
        print(f"M={m} K={k} N={n} {name}: {us:.1f} us a launch; {int(busy.sum())} blocks; from the first body start, "
              f"min / median / max, us: body start {spread(us_of(body))}; loop start {spread(us_of(loop0))}; "
              f"loop end {spread(us_of(loop1))}; consumers' end {spread(us_of(end))}", flush=True)
