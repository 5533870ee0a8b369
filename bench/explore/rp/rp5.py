"""Throwaway, prepared in session 28 for the next: rp5.ima's s5_pp and e5_pp (gen5.py), µs
a launch (CUDA graphs cycling weight sets larger than L2), then from the last launch's
`phases`: the consumers' cycles a stage (wait, work, tail: gen3.py's), the producer's
(waiting for a free stage, issuing its copies), and the SM clock over the producer's
loop (cycles / ns). Medians over blocks.
    python3 -u rp5.py [M,K,N ...]"""
import rp5_kernels as rk
from repack import stamped_runs

FORMATS = {"rp": (rk.QuantWeight, True)}

for m, k, n, run in stamped_runs(rk, FORMATS, [(16, 8192, 28672), (16, 14336, 4096)], (4, 6)):
    for name in ("s5_pp", "e5_pp"):
        us, p = run(name, "rp")
        p = p.double()
        cons = p[:, :3, :4].reshape(-1, 4)
        cons = cons[cons[:, 3] > 0]
        prod = p[:, 3, :]
        prod = prod[prod[:, 3] > 0]
        row = f"M={m} K={k} N={n} {name}: {us:.1f} us"
        if len(cons):
            c = (cons[:, :3] / cons[:, 3:4]).median(dim=0).values.tolist()
            row += f"; consumer cycles a stage: wait {c[0]:.0f}, work {c[1]:.0f}, tail {c[2]:.0f}"
        q = (prod[:, :2] / prod[:, 3:4]).median(dim=0).values.tolist()
        ghz = (prod[:, 4] / prod[:, 5]).median().item()
        loop_us = (prod[:, 5] / 1e3).median().item()
        row += (f"; producer cycles a stage: wait for a free stage {q[0]:.0f}, issue {q[1]:.0f}; "
                f"stages {prod[:, 3].median().item():.0f}, its loop {loop_us:.1f} us at {ghz:.2f} GHz")
        print(row, flush=True)
