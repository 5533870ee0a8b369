"""Prints the kernels of an `ncu --csv` log taken with the shared-memory metrics of
bench/decode-layer-on-device.sh's `conflicts` mode, in launch order: each kernel's time
and its shared loads' and stores' wavefronts, with the share of them that bank conflicts
add (a warp's access split into more wavefronts than its bytes need):

    python3 bench/ncu_shared_conflicts.py LABEL LOG.csv
    python3 bench/ncu_shared_conflicts.py --metrics   # the metrics to ask ncu for
"""

import csv
import sys

TIME = "gpu__time_duration.sum"
LOADS = ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum")
STORES = ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum")
METRICS = (TIME,) + LOADS + STORES


def number(text):
    return float(text.replace(",", "")) if text not in ("", "n/a") else 0.0


def main() -> None:
    if sys.argv[1:] == ["--metrics"]:
        print(",".join(METRICS))
        return
    label, path = sys.argv[1], sys.argv[2]
    with open(path, newline="") as f:
        rows = [r for r in csv.reader(f) if len(r) > 5]
    header = next((i for i, r in enumerate(rows) if "Kernel Name" in r), None)
    if header is None:
        sys.exit(f"{path}: no ncu table (did the profiled run fail?)")
    h = rows[header]
    launch, name, metric, unit, value = (h.index(c) for c in ("ID", "Kernel Name", "Metric Name", "Metric Unit", "Metric Value"))
    kernels = {}
    for r in rows[header + 1 :]:
        if r[metric] not in METRICS:
            continue
        k = kernels.setdefault(r[launch], {"name": r[name].split("(")[0]})
        v = number(r[value])
        if r[metric] == TIME:
            v = {"ns": v / 1e3, "nsecond": v / 1e3, "us": v, "usecond": v, "msecond": v * 1e3}[r[unit]]
        k[r[metric]] = v
    print(f"{label}:")
    for k in kernels.values():
        parts = [f"  {k['name']} {k.get(TIME, 0):.1f} us"]
        for what, (wavefronts, conflicts) in (("loads", LOADS), ("stores", STORES)):
            w, c = k.get(wavefronts, 0), k.get(conflicts, 0)
            if w:
                parts.append(f"shared {what} {w / 1e3:.0f} k wavefronts, {100 * c / w:.0f}% conflicts")
        print(", ".join(parts))


if __name__ == "__main__":
    main()
