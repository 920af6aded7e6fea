#!/usr/bin/env python3
"""How far a kernel's time under another op strays from its NN twin's on the same problem.

An op's dispatch rule borrows the NN corpus where the op has few shapes of its own
(internal/export/borrow.go): a variant of the op is timed there at its NN twin's time (the same
template, parameters and precision compiled for NN) times the op's measured cost. This reads the
results that examples/export-go/results.txt lists and the generated manifest and prints, per variant
of another op with an NN twin, over every problem both were timed on: the geometric mean of
op time / twin time, its range and its geometric standard deviation.

Usage (from the repository root): python3 results/workload/nvidia-h100-80gb-hbm3/borrow-twins/twins.py
"""
import collections
import gzip
import json
import math
import os


def op_of(name):
    for s in ("_nt", "_tn", "_tt"):
        if name.endswith(s):
            return s[1:].upper()
    return "NN"


def main():
    dirs = [l.strip() for l in open("examples/export-go/results.txt") if l.strip() and not l.startswith("#")]
    manifest = json.load(open("generated/manifest.json"))
    key = {}
    for v in manifest["variants"]:
        n = v["name"]
        if n.endswith("_sb") or "_sb_" in n or v.get("epilogue"):
            continue
        key[n] = (v["template"], json.dumps(v["params"], sort_keys=True), v.get("precision", ""))
    nn = {}
    for n, k in key.items():
        if op_of(n) == "NN" and (k not in nn or n < nn[k]):
            nn[k] = n
    twin = {n: nn.get(k) for n, k in key.items() if op_of(n) != "NN"}
    times = collections.defaultdict(dict)  # (op, m, n, k) -> variant -> the slower of its median times
    for d in dirs:
        for fn in ("results.jsonl.gz", "results.jsonl"):
            p = os.path.join(d, fn)
            if not os.path.exists(p):
                continue
            with (gzip.open(p, "rt") if fn.endswith(".gz") else open(p)) as f:
                for line in f:
                    r = json.loads(line)
                    sh = r.get("shape", {})
                    tm = (r.get("timing") or {}).get("median_ms")
                    if r.get("kind") != "tune" or r.get("status") != "ok" or not tm or sh.get("batch") or sh.get("epilogue"):
                        continue
                    k = (sh.get("op", "NN"), sh["m"], sh["n"], sh["k"])
                    times[k][r["variant"]] = max(times[k].get(r["variant"], 0), tm)
    logs = collections.defaultdict(list)
    for k, vs in times.items():
        if k[0] == "NN":
            continue
        nk = ("NN",) + k[1:]
        for v, tm in vs.items():
            t = twin.get(v)
            if t and t in times.get(nk, {}):
                logs[v].append(math.log(tm / times[nk][t]))
    print("op  variant                                          problems  op/twin time: geomean [min, max]  geometric sd")
    for v in sorted(logs, key=lambda v: (op_of(v), v)):
        l = logs[v]
        mu = sum(l) / len(l)
        sd = math.exp((sum((x - mu) ** 2 for x in l) / len(l)) ** 0.5)
        print("%-3s %-48s %8d  %.2f [%.2f, %.2f]  x%.2f" % (op_of(v), v, len(l), math.exp(mu), math.exp(min(l)), math.exp(max(l)), sd))


if __name__ == "__main__":
    main()
