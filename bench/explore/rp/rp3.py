"""Throwaway, prepared for the session after 27: rp3.ima's s5_ph and wg_s5_ph (gen3.py),
µs a launch (CUDA graphs cycling weight sets larger than L2), then from the last launch's
`phases` the cycles a stage spends waiting, working and in its tail (medians over the
blocks' consumer warpgroups of each sum over its stages), and the stages.
    python3 -u rp3.py [M,K,N ...]"""
import rp3_kernels as rk
from repack import stamped_runs

FORMATS = {"rp": (rk.QuantWeight, True), "rk": (rk.QuantWeight, False)}

for m, k, n, run in stamped_runs(rk, FORMATS, [(16, 8192, 28672), (16, 14336, 4096), (16, 4096, 4096)], (3, 4)):
    for name, fmt in (("s5_ph", "rp"), ("wg_s5_ph", "rk")):
        us, p = run(name, fmt)
        p = p.reshape(-1, 4)
        p = p[p[:, 3] > 0]
        per = (p[:, :3].double() / p[:, 3:4].double()).median(dim=0).values.tolist()
        print(f"M={m} K={k} N={n} {name}: {us:.1f} us; cycles a stage (median): wait {per[0]:.0f}, "
              f"work {per[1]:.0f}, tail {per[2]:.0f}; stages a warpgroup {p[:, 3].median().item()}", flush=True)
