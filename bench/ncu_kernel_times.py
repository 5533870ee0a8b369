"""Prints the kernels of an `ncu --csv --metrics gpu__time_duration.sum` log in launch
order, each with its time in microseconds, as one line:

    python3 bench/ncu_kernel_times.py LABEL LOG.csv

`metric_rows` and `microseconds` read such a log for bench/ncu_shared_conflicts.py too.
"""

import csv
import sys

TIME = "gpu__time_duration.sum"


def metric_rows(path):
    """The metric rows of an `ncu --csv --metrics ...` log, each as (launch ID, kernel name
    without its parameters, metric, unit, value as float)."""
    with open(path, newline="") as f:
        rows = [r for r in csv.reader(f) if len(r) > 5]
    header = next((i for i, r in enumerate(rows) if "Kernel Name" in r), None)
    if header is None:
        sys.exit(f"{path}: no ncu table (did the profiled run fail?)")
    h = rows[header]
    launch, name, metric, unit, value = (h.index(c) for c in ("ID", "Kernel Name", "Metric Name", "Metric Unit", "Metric Value"))
    for r in rows[header + 1 :]:
        v = r[value].replace(",", "")
        yield r[launch], r[name].split("(")[0], r[metric], r[unit], float(v) if v not in ("", "n/a") else 0.0


def microseconds(value, unit):
    """A `gpu__time_duration.sum` value in microseconds."""
    return value * {"ns": 1e-3, "nsecond": 1e-3, "us": 1.0, "usecond": 1.0, "msecond": 1e3}[unit]


def main() -> None:
    label, path = sys.argv[1], sys.argv[2]
    times = [(name, microseconds(v, unit)) for _, name, metric, unit, v in metric_rows(path) if metric == TIME]
    total = sum(t for _, t in times)
    print(f"{label}: " + ", ".join(f"{n} {t:.1f}" for n, t in times) + f"; sum {total:.1f} us")


if __name__ == "__main__":
    main()
