#!/usr/bin/env python3
"""Per shape: mean kernel time of a timing request (reps x mean), the worker's timing phase and its
verification phase, from a tune's results.jsonl.gz. Usage: breakdown.py run-d/old/results-one.jsonl.gz ..."""
import collections, gzip, json, sys

for f in sys.argv[1:]:
    agg = collections.defaultdict(lambda: [0, 0.0, 0.0, 0.0])
    for line in gzip.open(f):
        r = json.loads(line)
        t, ph = r.get("timing"), r.get("phases") or {}
        if not t or r["kind"] == "cublas":
            continue
        s = r["shape"]
        a = agg["%dx%dx%d" % (s["m"], s["n"], s["k"])]
        a[0] += 1
        a[1] += t["reps"] * t["mean_ms"]
        a[2] += ph.get("time_ms", 0)
        a[3] += ph.get("verify_ms", 0)
    print(f)
    print("| shape | variants | kernel time (ms) | timing phase (ms) | verification (ms) |")
    print("|---|---:|---:|---:|---:|")
    for sh, a in sorted(agg.items()):
        print("| %s | %d | %.1f | %.1f | %.1f |" % (sh, a[0], a[1] / a[0], a[2] / a[0], a[3] / a[0]))
