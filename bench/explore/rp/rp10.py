"""Throwaway, session 32: rp10.ima's s8 (repacked decode) and its pipeline with idle
consumers (i8: the tile ends kept; j8 and k8: lo not waiting, not loading; n8: no tile ends; x8: no x either; gen10.py), then t8 and u8's stamps (i8 and s8 stamped): when each block's
consumers stop streaming, how long lo waits for the others' counts, and how long after they
were issued their releases reach it, CUDA graphs
cycling weight sets larger than L2, µs a launch and the weights' TB/s (qweight, scales,
zeros), each printed as it is measured; f8 and g8 (flagged slots, no counts) beside them.
    python3 -u rp10.py [M,K,N ...]"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import graph_us, shapes, weight_sets, wg_workspace  # noqa: E402
import rp10_kernels as rk  # noqa: E402
from repack import weights  # noqa: E402

dev = "cuda"
FORMATS = {"rp": (rk.QuantWeight, True)}
for m, k, n in shapes([(16, 8192, 28672)]):
    ws = [weights(FORMATS, k, n) for _ in range(weight_sets(k, n))]
    x = torch.randn(m, k, device=dev, dtype=torch.float16)
    part, arr = wg_workspace(rk, m, n)
    y = torch.empty(m, n, device=dev, dtype=torch.float16)
    nbytes = k * n // 2 + (k // 128) * n * 2 + (k // 128) * n // 2
    stamps = torch.zeros(rk.BLOCKS, 5, 4, device=dev, dtype=torch.int64)
    # f8 and g8's slots hold flags, clear before the first launch (each launch clears those
    # it reads).
    part_flagged = torch.zeros_like(part)
    for nm in ("i8", "j8", "k8", "n8", "t8", "u8", "s8", "f8", "g8", "v8", "i8", "j8", "k8", "n8", "s8", "f8", "g8"):
        f = getattr(rk, nm)
        # j8 and k8 leave their counts dirty (lo does not wait for them): their own.
        a = arr if nm not in ("j8", "k8") else torch.zeros_like(arr)
        extra = (stamps,) if nm in ("t8", "u8", "v8") else ()
        pt = part_flagged if nm in ("f8", "g8", "v8") else part
        t = graph_us(lambda w: f(x, w["rp"], pt, a, y, *extra), [(w,) for w in ws])
        print(f"M={m} K={k} N={n} {nm}: {t:.1f} us ({nbytes / t / 1e6:.2f} TB/s)", flush=True)

    # f8 sums what s8 sums, in the same order.
    y_s8 = torch.empty_like(y)
    rk.s8(x, ws[0]["rp"], part, arr, y_s8)
    rk.f8(x, ws[0]["rp"], part_flagged, arr, y)
    print(f"  f8's y against s8's: max |diff| {(y.float() - y_s8.float()).abs().max().item():.1e}", flush=True)

    # z8: the zero left in the decode, x's group sums passed in (last: a new kernel).
    xsum = x.float().view(m, k // 128, 128).sum(-1).contiguous()
    t = graph_us(lambda w: rk.z8(x, w["rp"], part, arr, y, xsum), [(w,) for w in ws])
    print(f"M={m} K={k} N={n} z8: {t:.1f} us ({nbytes / t / 1e6:.2f} TB/s)", flush=True)
    rk.z8(x, ws[0]["rp"], part, arr, y, xsum)
    rel = (y.float() - y_s8.float()).abs().max().item() / y_s8.float().abs().max().item()
    print(f"  z8's y against s8's: max |diff| / max |y| {rel:.1e}", flush=True)

    # The stamps of one more launch of each stamped kernel.
    units_per_tile, strips = k // 256, (n + 191) // 192
    units = strips * units_per_tile
    q, r = divmod(units, rk.BLOCKS)

    def start(b):
        return b * q + min(b, r)

    def owner(u):
        return u // (q + 1) if u < r * (q + 1) else r + (u - r * (q + 1)) // q

    for nm in ("t8", "u8", "v8"):
        stamps.zero_()
        getattr(rk, nm)(x, ws[0]["rp"], part_flagged if nm == "v8" else part, arr, y, stamps)
        torch.cuda.synchronize()
        st = stamps.cpu().tolist()
        t0 = min(st[b][w][0] for b in range(rk.BLOCKS) for w in range(3) if st[b][w][0])
        us = lambda v: (v - t0) / 1e3  # noqa: E731
        ends = sorted(us(st[b][w][3]) for b in range(rk.BLOCKS) for w in range(3) if st[b][w][3])
        waits, streams, seen = [], [], []
        for b in range(rk.BLOCKS):
            tile = (start(b + 1) - 1) // units_per_tile
            if start(b + 1) % units_per_tile == 0 or tile * units_per_tile < start(b):
                continue  # b's last tile is whole, or not lo's: nothing to wait for
            hi = owner(tile * units_per_tile + units_per_tile - 1)
            for w in range(3):
                if not st[b][w][1]:
                    continue
                waits.append((st[b][w][2] - st[b][w][1]) / 1e3)
                streams.append(us(st[b][w][1]))
                # v8 has no counts to issue.
                issued = max(st[o][4][w] for o in range(b + 1, hi + 1))
                seen.append((st[b][w][2] - issued) / 1e3 if issued and st[b][w][2] - st[b][w][1] > 200 else None)

        def dist(v):
            v = sorted(v)
            return f"min {v[0]:.1f} median {v[len(v) // 2]:.1f} max {v[-1]:.1f}" if v else "none"
        lag = [s for s in seen if s is not None]
        print(f"  {nm} stamps (us from the first consumer's start): warpgroups' ends {dist(ends)}; "
              f"lo's streams end {dist(streams)}; lo's waits {dist(waits)} ({len(lag)} of {len(waits)} over 0.2 us); "
              f"a waiting lo's count seen after the last one was issued {dist(lag)}", flush=True)
