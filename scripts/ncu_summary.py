#!/usr/bin/env python3
"""Summarize ncu --csv metric files written by scripts/ncu-probe.sh: per kernel its duration,
executed warp instructions, the FFMA share of them, the issue rate and the largest stall reasons
(warps stalled per issued instruction)."""
import csv
import io
import sys


def num(s):
    return float(s.replace(',', ''))


for path in sys.argv[1:]:
    txt = open(path).read()
    i = txt.find('"ID"')
    if i < 0:
        print(f'{path}: no metrics (ncu output follows)\n{txt[-2000:]}')
        continue
    kernels = {}
    for r in csv.DictReader(io.StringIO(txt[i:])):
        kernels.setdefault((r['ID'], r['Kernel Name'][:60]), {})[r['Metric Name']] = r['Metric Value']
    print('==', path.rsplit('/', 1)[-1])
    for (_, name), m in kernels.items():
        inst = num(m['smsp__inst_executed.sum'])
        ffma = num(m['sm__sass_thread_inst_executed_op_ffma_pred_on.sum']) / 32
        stalls = sorted(((num(v), k.replace('smsp__average_warps_issue_stalled_', '').replace('_per_issue_active.ratio', ''))
                         for k, v in m.items() if 'stalled' in k), reverse=True)[:7]
        print(f"{name:60s} t={m['gpu__time_duration.sum']} ns inst={inst:.3e} ffma%={100 * ffma / inst:.1f} "
              f"issue%={m['smsp__issue_active.avg.pct_of_peak_sustained_active']} warps/sched={m['smsp__warps_active.avg.per_cycle_active']}")
        print('     stalls:', ' '.join(f'{k}={v:.2f}' for v, k in stalls))
