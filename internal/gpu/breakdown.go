package gpu

import (
	"fmt"
	"time"
	"unsafe"

	"gorgonia.org/cu"

	"tilegen/internal/protocol"
	"tilegen/internal/variant"
)

// breakdown handles OpBreakdown: the end-to-end cost of one GEMM as a program that owns its data
// sees it (the seeds' CPU-vs-GPU question), not just the kernel. After verification passes, each
// run allocates A, B and C on the device, copies A and B up, launches, copies C down and frees,
// timing every phase. Host buffers are ordinary (pageable) Go memory, as in a program that does not
// pin its data; the copies are timed on the host clock around a synchronous copy, the kernel with
// an event pair.
func (w *Worker) breakdown(req protocol.Request, resp *protocol.Response) error {
	if req.Kernel == nil {
		return fmt.Errorf("breakdown request without a kernel")
	}
	if req.Runs < 1 {
		return fmt.Errorf("breakdown: runs %d, want at least 1", req.Runs)
	}
	v := req.Kernel.Variant
	s := req.Shape
	if v.Epilogue != variant.EpiNone || s.Epilogue != variant.EpiNone {
		return fmt.Errorf("breakdown runs plain GEMMs (variant %s, epilogue %s)", v.Name, v.Epilogue)
	}
	if v.Batched || s.Batch > 0 {
		return fmt.Errorf("breakdown runs one product at a time (variant %s, shape batch %d)", v.Name, s.Batch)
	}
	if v.Op != s.Op {
		return fmt.Errorf("variant %s computes %s, the problem is %s", v.Name, v.Op, s.Op)
	}
	if err := v.SupportsDense(s.M, s.N, s.K); err != nil {
		return fmt.Errorf("variant %s does not support %s %dx%dx%d: %w", v.Name, s.Op, s.M, s.N, s.K, err)
	}
	k, err := w.loadKernel(req.Kernel)
	if err != nil {
		return fmt.Errorf("variant %s: %w", v.Name, err)
	}
	attrs, err := w.attributes(k, s.M, s.N, s.K, 0)
	resp.Attributes = attrs
	if err != nil {
		return fmt.Errorf("variant %s: %w", v.Name, err)
	}
	g := w.gemm(k)
	if req.Verify != nil {
		results, err := w.verifyAll(g, &v, s, req.Verify)
		resp.Verify = results
		if err != nil {
			return err
		}
		for _, r := range results {
			if !r.Pass {
				return nil // a wrong kernel is not timed
			}
		}
	}
	m, n, kk := s.M, s.N, s.K
	lda, ldb, ldc := s.Dense()
	la, lb, lc := int64(m)*int64(kk), int64(kk)*int64(n), int64(m)*int64(n)
	// Separate host buffers for A and B (the random cache is one slice: copy B out of it).
	ha := w.randomHost(int(la))
	hb := append([]float32(nil), w.randomHost(int(lb))...)
	hc := make([]float32, lc)

	start, stop := cu.Event{}, cu.Event{}
	if start, err = cu.MakeEvent(cu.DefaultEvent); err != nil {
		return fmt.Errorf("creating events: %w", err)
	}
	defer cu.DestroyEvent(&start)
	if stop, err = cu.MakeEvent(cu.DefaultEvent); err != nil {
		return fmt.Errorf("creating events: %w", err)
	}
	defer cu.DestroyEvent(&stop)

	out := &protocol.BreakdownResult{Runs: req.Runs, HtoDBytes: 4 * (la + lb), DtoHBytes: 4 * lc}
	ms := func(t time.Time) float64 { return float64(time.Since(t).Nanoseconds()) / 1e6 }
	for r := 0; r < req.Runs; r++ {
		var ar arena
		t := time.Now()
		dA, err := ar.alloc(4 * la)
		var dB, dC cu.DevicePtr
		if err == nil {
			dB, err = ar.alloc(4 * lb)
		}
		if err == nil {
			dC, err = ar.alloc(4 * lc)
		}
		if err != nil {
			ar.free()
			return err
		}
		out.AllocMS = append(out.AllocMS, ms(t))

		t = time.Now()
		err = copyErr("host to device", cu.MemcpyHtoDAsync(dA, unsafe.Pointer(&ha[0]), 4*la, w.stream))
		if err == nil {
			err = copyErr("host to device", cu.MemcpyHtoDAsync(dB, unsafe.Pointer(&hb[0]), 4*lb, w.stream))
		}
		if err == nil {
			err = w.sync("host to device copies")
		}
		if err != nil {
			ar.free()
			return err
		}
		out.HtoDMS = append(out.HtoDMS, ms(t))

		if err := start.Record(w.stream); err != nil {
			ar.free()
			return fmt.Errorf("recording event: %w", err)
		}
		if err := g(m, n, kk, 1, dA, lda, dB, ldb, 0, dC, ldc, batchArgs{}); err != nil {
			ar.free()
			return err
		}
		if err := stop.Record(w.stream); err != nil {
			ar.free()
			return fmt.Errorf("recording event: %w", err)
		}
		if err := w.sync("kernel"); err != nil {
			ar.free()
			return err
		}
		kms, err := start.Elapsed(stop)
		if err != nil {
			ar.free()
			return fmt.Errorf("reading event times: %w", err)
		}
		out.KernelMS = append(out.KernelMS, kms)

		t = time.Now()
		if err := ar.download(w.stream, hc, dC); err != nil {
			ar.free()
			return err
		}
		out.DtoHMS = append(out.DtoHMS, ms(t))

		t = time.Now()
		ar.free()
		out.FreeMS = append(out.FreeMS, ms(t))
	}
	resp.Breakdown = out
	return nil
}
