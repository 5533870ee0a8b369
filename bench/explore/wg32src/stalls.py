"""ncu's warp-state samples of one gptq_gemm_wg32 launch by SASS instruction (the CSV of
`ncu --page source --csv --print-source sass`, bench/explore/prepared-run.sh wg32src):
the instructions with the most samples, and the samples of each stall reason and of each
opcode summed over the consumers' stage loop (every instruction executed as often as the
HGMMAs, within 10%)."""
import csv
import sys
from collections import Counter

rows = list(csv.reader(open(sys.argv[1])))
head = next(i for i, r in enumerate(rows) if r and r[0] == "Address")
cols = rows[head]
data = [dict(zip(cols, r)) for r in rows[head + 1:] if len(r) == len(cols)]


def num(s):
    try:
        return float(s.replace(",", ""))
    except ValueError:
        return 0.0


def samples(d):
    return num(d["Warp Stall Sampling (All Samples)"])


def opcode(source):
    """The opcode of a SASS line, past its predicate (`@!P1 BRA ...`)."""
    words = source.split()
    return words[1] if words[0].startswith("@") else words[0]


stalls = [c for c in cols if c.startswith("stall_") and "Not Issued" not in c]
total = sum(samples(d) for d in data)
print(f"{len(data)} instructions, {total:.0f} samples")
hgmma = [d for d in data if "HGMMA" in d["Source"]]
execs = Counter(num(d["Instructions Executed"]) for d in hgmma)
print("HGMMA execution counts:", execs.most_common(4))
# The stage loop: instructions executed as often as the hot HGMMAs (within 10%).
loop_count = execs.most_common(1)[0][0]
loop = [d for d in data if abs(num(d["Instructions Executed"]) - loop_count) <= 0.1 * loop_count]
ls = sum(samples(d) for d in loop)
print(f"stage-loop instructions: {len(loop)}, samples {ls:.0f} ({100 * ls / total:.0f}% of all)")
by_reason = Counter()
for d in loop:
    for c in stalls:
        by_reason[c] += num(d[c])
for c, v in by_reason.most_common(12):
    print(f"  {c:28s} {v:8.0f} {100 * v / ls:5.1f}%")
op = Counter()
for d in loop:
    op[opcode(d["Source"])] += samples(d)
print("samples by opcode in the loop:")
for k, v in op.most_common(14):
    print(f"  {k:28s} {v:8.0f} {100 * v / ls:5.1f}%")
print("hottest instructions:")
for d in sorted(data, key=samples, reverse=True)[:25]:
    top = sorted(((num(d[c]), c) for c in stalls), reverse=True)[:3]
    print(f"  {d['Address']:>6} {samples(d):7.0f} x{num(d['Instructions Executed']):8.0f}  {d['Source'][:60]:60s} "
          + ", ".join(f"{c[6:]} {v:.0f}" for v, c in top if v))
