"""Throwaway, session 29 for the next: rp7.ima's s7_pp and e7_pp (gen7.py), µs a launch
(CUDA graphs cycling weight sets larger than L2), then from the last launch's stamps the
consumers' cycles a stage (wait, work, tail: gen3.py's) and their shared tiles' arrivals:
cycles from the slot's store to the warpgroup past the acq_rel atomic, per shared tile and
per warpgroup in all (medians over the warpgroups that share a tile), against the
warpgroup's cycles over its stages.
    python3 -u rp7.py [M,K,N ...]"""
import rp7_kernels as rk
from repack import stamped_runs

FORMATS = {"rp": (rk.QuantWeight, True)}

for m, k, n, run in stamped_runs(rk, FORMATS, [(16, 8192, 28672), (16, 14336, 4096)], (4, 8)):
    for name in ("s7_pp", "e7_pp"):
        us, p = run(name, "rp")
        cons = p[:, :3, :].reshape(-1, 8).double()
        cons = cons[cons[:, 3] > 0]
        row = f"M={m} K={k} N={n} {name}: {us:.1f} us"
        c = (cons[:, :3] / cons[:, 3:4]).median(dim=0).values.tolist()
        row += f"; consumer cycles a stage: wait {c[0]:.0f}, work {c[1]:.0f}, tail {c[2]:.0f}"
        shared = cons[cons[:, 7] > 0]
        if len(shared):
            per_tile = (shared[:, 6] / shared[:, 7]).median().item()
            total = shared[:, 6].median().item()
            stages = shared[:, :3].sum(dim=1).median().item()
            row += (f"; arrivals: {per_tile:.0f} cycles a shared tile, {total:.0f} a warpgroup in all, "
                    f"against {stages:.0f} over its stages ({shared[:, 7].median().item():.0f} shared tiles a warpgroup)")
        print(row, flush=True)
