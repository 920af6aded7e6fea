#!/usr/bin/env python3
"""What the H100 corpus records predict for the composites tb.cu measures, before any is run.

For each shape of an op's corpus that the NN corpus also holds, the composite's time is estimated
as the exported NN dispatch's measured time on the shape plus the transposes' traffic (8 bytes per
element moved: a read and a write) at a fraction of the DRAM bandwidth, plus a fixed cost per
transpose launch; its ratio is taken against the op's own cuBLAS time on the shape (same run as the
op's records). Prints, per regime class and for the products of at least 2^30 multiply-adds, the
geometric mean of the export's ratio and of the better of it and the composite. An estimate, not a
measurement: tb.cu on the GPU host measures the composites themselves.

Usage (from the repository root): python3 results/ops-h100/transpose-b/predict.py [BW_FRACTION] [LAUNCH_US]
"""
import json
import math
import sys

W = "results/workload/nvidia-h100-80gb-hbm3"
PEAK_BPS = 3352.32e9  # the H100's DRAM bandwidth (the workload summary's peak_gbps)
frac = float(sys.argv[1]) if len(sys.argv) > 1 else 0.85
launch = float(sys.argv[2]) * 1e-6 if len(sys.argv) > 2 else 3e-6

def load(path):
    with open(path) as f:
        return json.load(f)

def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")

nn = {r["shape"]: r for r in load(W + "/summary.json")["shapes"]}
# op -> (its corpus summary, the elements each transpose moves for an M x N x K product)
ops = {
    "NT": (W + "/portfolio/nt/workload/summary.json", lambda m, n, k: [n * k]),  # B: N x K -> K x N
    "TT": (W + "/portfolio/tt/workload/summary.json", lambda m, n, k: [m * k, n * k]),  # A and B
}
for op, (path, moved) in ops.items():
    rows = []
    for r in load(path)["shapes"]:
        a = nn.get(r["shape"])
        if a is None:
            continue
        m, n, k = (int(x) for x in r["shape"].split("x"))
        t_nn = a["cublas_ms"] * 1e-3 / a["ratio"]
        t_tr = sum(8.0 * e / (frac * PEAK_BPS) + launch for e in moved(m, n, k))
        comp = r["cublas_ms"] * 1e-3 / (t_nn + t_tr)
        rows.append((r["regime"], r["ratio"], comp, m * n * k))
    print(f"{op} via NN ({len(rows)} shapes; transposes at {frac:.2f} of {PEAK_BPS / 1e9:.0f} GB/s, {launch * 1e6:.0f} us a launch):")
    print(f"  {'class':<12}{'shapes':>7}{'export':>9}{'best of':>9}{'composite ahead':>17}")
    classes = sorted({x[0] for x in rows}) + ["all", ">=2^30"]
    for c in classes:
        sel = [x for x in rows if c == "all" or x[0] == c or c == ">=2^30" and x[3] >= 2**30]
        ahead = sum(1 for x in sel if x[2] > 1.02 * x[1])
        print(f"  {c:<12}{len(sel):>7}{geomean([x[1] for x in sel]):>9.3f}{geomean([max(x[1], x[2]) for x in sel]):>9.3f}{ahead:>17}")
