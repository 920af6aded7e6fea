package gpu

// Hybrid GEMM (protocol.OpHybrid): one product split by rows between the GPU and the CPU inside
// the worker process, so that "overall" is one wall clock over both.

import (
	"fmt"
	"runtime"
	"sort"
	"time"
	"unsafe"

	"gorgonia.org/cu"

	"tilegen/internal/ooc"
	"tilegen/internal/protocol"
	"tilegen/internal/results"
	"tilegen/internal/variant"
)

// pollInterval is how often the GPU side checks its last event while the CPU part runs: a
// sleeping poll leaves the cores to the CPU SGEMM, where a spinning stream synchronize would take one.
const pollInterval = 100 * time.Microsecond

// hybridRun is one timed run's breakdown in milliseconds.
type hybridRun struct{ h2d, kernel, d2h, gpu, cpu, overall float64 }

// hybrid handles OpHybrid: rows [0, G) of C on the GPU (copy A's first G rows and B in, kernel,
// copy G rows of C out, each event-timed) while a goroutine computes rows [G, M) with the CPU
// engine into the same host C.
func (w *Worker) hybrid(req protocol.Request, resp *protocol.Response) error {
	h, s := req.Hybrid, req.Shape
	if h == nil || req.Kernel == nil {
		return fmt.Errorf("hybrid request without settings or kernel")
	}
	if h.CPURows < 0 || h.CPURows > s.M {
		return fmt.Errorf("cpu rows %d outside [0, M=%d]", h.CPURows, s.M)
	}
	engine, err := ooc.Engine(h.Engine)
	if err != nil {
		return err
	}
	v := req.Kernel.Variant
	m, n, kk := s.M, s.N, s.K
	g := m - h.CPURows
	if v.Op != variant.OpNN || s.Op != variant.OpNN || v.Batched || s.Batch > 0 || v.Epilogue != variant.EpiNone || s.Epilogue != variant.EpiNone {
		return fmt.Errorf("hybrid runs one NN product (variant %s computes %s, batched %v; the problem is %s)", v.Name, v.Op, v.Batched, results.ShapeString(s))
	}
	if err := v.Supports(m, n, kk, kk, n, n); err != nil {
		return fmt.Errorf("variant %s does not support %dx%dx%d: %w", v.Name, m, n, kk, err)
	}
	if g > 0 {
		if err := v.Supports(g, n, kk, kk, n, n); err != nil {
			return fmt.Errorf("variant %s does not support the GPU part %dx%dx%d: %w", v.Name, g, n, kk, err)
		}
	}
	if err := ooc.HostFits(m, n, kk); err != nil {
		return err
	}
	k, err := w.loadKernel(req.Kernel)
	if err != nil {
		return fmt.Errorf("variant %s: %w", v.Name, err)
	}
	workers := h.Workers
	if workers < 1 {
		// One P stays free for the GPU side's goroutine: with every P busy in the CPU SGEMM it
		// would wait for a preemption (up to 10 ms) to notice that the GPU finished.
		workers = max(runtime.GOMAXPROCS(0)-1, 1)
	}
	res := &protocol.HybridResult{GPURows: g, CPURows: h.CPURows, Engine: h.Engine, Workers: workers, SMs: w.info.SMs}
	resp.HybridResult = res
	mats, pinned, note, _, _, err := genHost(m, n, kk, h.Seed)
	if err != nil {
		return err
	}
	ha, hb, hc := mats[0], mats[1], mats[2]
	defer ha.free()
	defer hb.free()
	defer hc.free()
	res.HostPinned = pinned
	resp.Note = note

	var ar arena
	defer ar.free()
	var dA, dB, dC cu.DevicePtr
	if g > 0 {
		attrs, err := w.attributes(k, g, n, kk, 0)
		resp.Attributes = attrs
		if err != nil {
			return fmt.Errorf("variant %s: %w", v.Name, err)
		}
		res.Blocks, res.BlocksPerSM = attrs.Blocks, attrs.BlocksPerSM
		if dA, err = ar.alloc(4 * int64(g) * int64(kk)); err != nil {
			return err
		}
		if dB, err = ar.alloc(4 * int64(kk) * int64(n)); err != nil {
			return err
		}
		if dC, err = ar.alloc(4 * int64(g) * int64(n)); err != nil {
			return err
		}
	}
	ev, err := makeEvents(4, cu.DefaultEvent)
	if err != nil {
		return err
	}
	defer destroyEvents(ev)

	runOnce := func() (hybridRun, error) {
		var r hybridRun
		start := time.Now()
		cpuDone := make(chan float64, 1)
		if g < m {
			go func() {
				t0 := time.Now()
				engine(m-g, n, kk, ha.data[g*kk:], kk, hb.data, n, hc.data[g*n:], n, workers)
				cpuDone <- msSince(t0)
			}()
		}
		if g > 0 {
			st := w.stream
			steps := []func() error{
				func() error { return ev[0].Record(st) },
				func() error {
					return copyErr("host to device", cu.MemcpyHtoDAsync(dA, unsafe.Pointer(&ha.data[0]), 4*int64(g)*int64(kk), st))
				},
				func() error {
					return copyErr("host to device", cu.MemcpyHtoDAsync(dB, unsafe.Pointer(&hb.data[0]), 4*int64(kk)*int64(n), st))
				},
				func() error { return ev[1].Record(st) },
				func() error { return launchOn(k, st, g, n, kk, 1, dA, kk, dB, n, 0, dC, n) },
				func() error { return ev[2].Record(st) },
				func() error {
					return copyErr("device to host", cu.MemcpyDtoHAsync(unsafe.Pointer(&hc.data[0]), dC, 4*int64(g)*int64(n), st))
				},
				func() error { return ev[3].Record(st) },
			}
			for _, f := range steps {
				if err := f(); err != nil {
					return r, err
				}
			}
			for {
				err := ev[3].Query()
				if err == nil {
					break
				}
				if err != cu.NotReady {
					return r, &FatalError{Err: fmt.Errorf("hybrid GPU part: %w", err)}
				}
				time.Sleep(pollInterval)
			}
			r.gpu = msSince(start)
			var err error
			if r.h2d, err = elapsed(ev[0], ev[1]); err != nil {
				return r, err
			}
			if r.kernel, err = elapsed(ev[1], ev[2]); err != nil {
				return r, err
			}
			if r.d2h, err = elapsed(ev[2], ev[3]); err != nil {
				return r, err
			}
		}
		if g < m {
			r.cpu = <-cpuDone
		}
		r.overall = msSince(start)
		return r, nil
	}
	if _, err := runOnce(); err != nil { // warm-up: first launch, page faults of C
		return err
	}
	runs := make([]hybridRun, max(h.Reps, 1))
	for i := range runs {
		if runs[i], err = runOnce(); err != nil {
			return err
		}
		res.OverallSamples = append(res.OverallSamples, runs[i].overall)
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i].overall < runs[j].overall })
	med := runs[(len(runs)-1)/2]
	res.H2DMS, res.KernelMS, res.D2HMS, res.GPUMS, res.CPUMS, res.OverallMS = med.h2d, med.kernel, med.d2h, med.gpu, med.cpu, med.overall

	extra := []int{0, g - 1, g, m - 1}
	chk, err := checkHostC(m, n, kk, ha.data, hb.data, hc.data, h.Seed, h.Samples, h.FullCheckMaxFlops, h.TolFactor, extra, nil)
	if err != nil {
		return err
	}
	res.Check = protocol.ElementCheck(chk)
	res.Pass, res.Reason = chk.Pass(), chk.Reason()

	if h.CompareGPUOnly {
		if err := w.compareGPUOnly(k, m, n, kk, g, ha.data, hb.data, hc.data, res); err != nil {
			return fmt.Errorf("GPU-only comparison: %w", err)
		}
	}
	if h.ProbeRows > 0 {
		rows := min(h.ProbeRows, m)
		scratch := make([]float32, rows*n)
		for _, name := range ooc.Engines {
			e, _ := ooc.Engine(name)
			e(min(rows, 8), n, kk, ha.data, kk, hb.data, n, scratch, n, workers) // warm-up
			t0 := time.Now()
			e(rows, n, kk, ha.data, kk, hb.data, n, scratch, n, workers)
			ms := msSince(t0)
			res.Probe = append(res.Probe, protocol.EngineRate{Engine: name, Rows: rows, MS: ms,
				GFLOPS: 2 * float64(rows) * float64(n) * float64(kk) / (ms * 1e6)})
		}
	}
	return nil
}

// compareGPUOnly computes all M rows on the GPU and compares them with the hybrid C: rows [0, g)
// came from the same kernel on the same data and must match bit for bit; rows [g, M) came from the
// CPU and differ by rounding only.
func (w *Worker) compareGPUOnly(k *kernel, m, n, kk, g int, a, b, c []float32, res *protocol.HybridResult) error {
	var ar arena
	defer ar.free()
	dA, err := ar.upload(w.stream, a[:m*kk])
	if err != nil {
		return err
	}
	dB, err := ar.upload(w.stream, b[:kk*n])
	if err != nil {
		return err
	}
	dC, err := ar.alloc(4 * int64(m) * int64(n))
	if err != nil {
		return err
	}
	if err := w.gemm(k)(m, n, kk, 1, dA, kk, dB, n, 0, dC, n, batchArgs{}); err != nil {
		return err
	}
	if err := w.sync("GPU-only product"); err != nil {
		return err
	}
	full := make([]float32, m*n)
	if err := ar.download(w.stream, full, dC); err != nil {
		return err
	}
	gr := protocol.ResultCompare(ooc.Diff(g, n, c, n, full, n))
	cr := protocol.ResultCompare(ooc.Diff(m-g, n, c[g*n:], n, full[g*n:], n))
	res.GPUOnlyGPURows, res.GPUOnlyCPURows = &gr, &cr
	return nil
}
