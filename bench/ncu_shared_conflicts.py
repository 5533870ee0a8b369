"""Prints the kernels of an `ncu --csv` log taken with the shared-memory metrics of
bench/decode-layer-on-device.sh's `conflicts` mode, in launch order: each kernel's time
and its shared loads' and stores' wavefronts, with the share of them that bank conflicts
add (a warp's access split into more wavefronts than its bytes need):

    python3 bench/ncu_shared_conflicts.py LABEL LOG.csv
    python3 bench/ncu_shared_conflicts.py --metrics   # the metrics to ask ncu for
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ncu_kernel_times import TIME, metric_rows, microseconds  # noqa: E402

LOADS = ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum")
STORES = ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum")
METRICS = (TIME,) + LOADS + STORES


def main() -> None:
    if sys.argv[1:] == ["--metrics"]:
        print(",".join(METRICS))
        return
    label, path = sys.argv[1], sys.argv[2]
    kernels = {}
    for launch, name, metric, unit, v in metric_rows(path):
        if metric in METRICS:
            k = kernels.setdefault(launch, {"name": name})
            k[metric] = microseconds(v, unit) if metric == TIME else v
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
