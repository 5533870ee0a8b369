"""Prints the kernels of an `ncu --csv --metrics gpu__time_duration.sum` log in launch
order, each with its time in microseconds, as one line:

    python3 bench/ncu_kernel_times.py LABEL LOG.csv
"""

import csv
import sys


def main() -> None:
    label, path = sys.argv[1], sys.argv[2]
    with open(path, newline="") as f:
        rows = [r for r in csv.reader(f) if len(r) > 5]
    header = next((i for i, r in enumerate(rows) if "Kernel Name" in r), None)
    if header is None:
        sys.exit(f"{path}: no ncu table (did the profiled run fail?)")
    h = rows[header]
    name, metric, unit, value = (h.index(c) for c in ("Kernel Name", "Metric Name", "Metric Unit", "Metric Value"))
    times = []
    for r in rows[header + 1 :]:
        if r[metric] != "gpu__time_duration.sum":
            continue
        v = float(r[value].replace(",", ""))
        us = {"ns": v / 1e3, "us": v, "usecond": v, "msecond": v * 1e3, "nsecond": v / 1e3}[r[unit]]
        times.append((r[name].split("(")[0], us))
    total = sum(t for _, t in times)
    print(f"{label}: " + ", ".join(f"{n} {t:.1f}" for n, t in times) + f"; sum {total:.1f} us")


if __name__ == "__main__":
    main()
