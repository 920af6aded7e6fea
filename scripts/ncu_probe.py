#!/usr/bin/env python3
"""GPU-host probe for profiling: load generated PTX with CuPy and launch variants next to cuBLAS
(cupy.matmul), either timed with CUDA events (time) or once each between profiler start/stop, for
Nsight Compute with --profile-from-start off (prof). scripts/ncu-probe.sh drives it.
  ncu_probe.py time  GENDIR SHAPES VARIANT...   (SHAPES: MxNxK,...; a VARIANT may be cublas)
  ncu_probe.py prof  GENDIR SHAPES VARIANT...
The time mode is for quick looks only: cupy.matmul adds host work between the events, so its
cuBLAS times are not comparable; runner tune/bench are the measurements."""
import json, sys, os, math
import numpy as np
import cupy as cp

mode, gendir, shapes = sys.argv[1], sys.argv[2], sys.argv[3]
names = sys.argv[4:]
man = {v['name']: v for v in json.load(open(os.path.join(gendir, 'manifest.json')))['variants']}
mods = {}

def kernel(name):
    v = man[name]
    if name not in mods:
        mod = cp.RawModule(path=os.path.join(gendir, 'ptx', name + '.ptx'))
        k = mod.get_function(name)
        dyn = v.get('dynamic_shared', 0)
        if dyn + v['resources'].get('shared_static', 0) > 48 * 1024:
            k.max_dynamic_shared_size_bytes = dyn
        mods[name] = (mod, k)
    return v, mods[name][1]

def launcher(name, M, N, K, A, B, C):
    if name == 'cublas':
        def f():
            cp.matmul(A, B, out=C)
        return f
    v, k = kernel(name)
    bx, by = v['block']['x'], v['block']['y']
    tr, tc = v['tile']['rows'], v['tile']['cols']
    grid = ((N + tc - 1) // tc, (M + tr - 1) // tr, v.get('grid_z', 1))
    args = (np.int32(M), np.int32(N), np.int32(K), np.float32(1), A, np.int32(K), B, np.int32(N),
            np.float32(0), C, np.int32(N))
    dyn = v.get('dynamic_shared', 0)
    def f():
        k(grid, (bx, by), args, shared_mem=dyn)
    return f

def check(name, M, N, K):
    A = cp.random.rand(M, K, dtype=cp.float32) - 0.5
    B = cp.random.rand(K, N, dtype=cp.float32) - 0.5
    C = cp.full((M, N), cp.nan, dtype=cp.float32)
    launcher(name, M, N, K, A, B, C)()
    ref = A.astype(cp.float64) @ B.astype(cp.float64)
    err = float(cp.max(cp.abs(C - ref)))
    return err

for s in shapes.split(','):
    M, N, K = map(int, s.split('x'))
    setb = 4 * (M * K + K * N + M * N)
    nsets = max(2, min(64, (3 * 50 * 2**20 + setb - 1) // setb))
    sets = [(cp.random.rand(M, K, dtype=cp.float32), cp.random.rand(K, N, dtype=cp.float32),
             cp.empty((M, N), dtype=cp.float32)) for _ in range(nsets)]
    for name in names:
        if mode == 'time':
            err = 0.0 if name == 'cublas' else check(name, M, N, K)
            fs = [launcher(name, M, N, K, *st) for st in sets]
            for i in range(10):
                fs[i % nsets]()
            evs = [(cp.cuda.Event(), cp.cuda.Event()) for _ in range(400)]
            for i, (a, b) in enumerate(evs):
                a.record(); fs[i % nsets](); b.record()
            evs[-1][1].synchronize()
            ts = sorted(cp.cuda.get_elapsed_time(a, b) * 1000 for a, b in evs)
            med = ts[len(ts) // 2]
            print(f"{s:>16} {name:55s} med {med:8.2f} us  p10 {ts[len(ts)//10]:8.2f}  p90 {ts[9*len(ts)//10]:8.2f}  "
                  f"{2*M*N*K/med/1e6:7.2f} TF/s  maxerr {err:.2e}", flush=True)
        else:
            fs = [launcher(name, M, N, K, *st) for st in sets]
            for i in range(5):
                fs[i % nsets]()
            cp.cuda.Device().synchronize()
            cp.cuda.profiler.start()
            fs[5 % nsets]()
            cp.cuda.Device().synchronize()
            cp.cuda.profiler.stop()
