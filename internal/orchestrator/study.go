package orchestrator

import (
	"fmt"
	"time"

	"tilegen/internal/protocol"
	"tilegen/internal/results"
	"tilegen/internal/workerproc"
)

// This file is the hook the studies (package study) use: a session that measures an explicit list
// of (variant, shape) pairs through the same workers, cache, verification and timing as tune, plus
// the end-to-end breakdown op. It adds no ranking of its own.

// Pair is one variant on one shape.
type Pair struct {
	Variant string
	Shape   protocol.Shape
}

// Session is an open set of workers and the cache, for a caller that plans its own measurements.
type Session struct{ s *session }

// OpenSession starts the workers of cfg.Devices and opens cfg.CachePath.
func OpenSession(cfg *Config) (*Session, error) {
	s, err := openSession(cfg)
	if err != nil {
		return nil, err
	}
	s.prog = noProgress{}
	s.index(cfg.Catalog.Variants())
	return &Session{s: s}, nil
}

// Close stops the workers and closes the cache.
func (S *Session) Close() { S.s.close() }

// Info is device.json for what this session ran on.
func (S *Session) Info() results.RunInfo { return S.s.runInfo() }

// Measure verifies and times the pairs (kind tune, with cfg.Timing) and, when cublas is set,
// cuBLAS on every shape they name first; cached records are reused. It returns this call's records
// only, so one session serves several studies. A pair whose variant does not
// accept its shape is recorded as skipped; an unknown variant is an error. Records come back in
// SortRecords order.
func (S *Session) Measure(pairs []Pair, cublas bool) ([]results.Record, error) {
	s := S.s
	var items []item
	var shapes []protocol.Shape
	seen := map[protocol.Shape]bool{}
	for _, p := range pairs {
		v := s.byName[p.Variant]
		if v == nil {
			return nil, fmt.Errorf("study: no variant %q in the catalog", p.Variant)
		}
		it := item{V: v, Shape: p.Shape}
		if v.Op != p.Shape.Op || v.Batched != (p.Shape.Batch > 0) || v.Epilogue != p.Shape.Epilogue || v.Precision != p.Shape.Precision {
			it.Skip = fmt.Sprintf("variant %s computes %s (batched %v, epilogue %s, precision %s), the problem is %s", v.Name, v.Op, v.Batched, v.Epilogue, v.Precision.Label(), results.ShapeString(p.Shape))
		} else if err := supportsShape(v, p.Shape); err != nil {
			it.Skip = err.Error()
		}
		items = append(items, it)
		if !seen[p.Shape] {
			seen[p.Shape] = true
			shapes = append(shapes, p.Shape)
		}
	}
	var cub []workerproc.Task
	if cublas {
		cub = s.planCublas(shapes)
	}
	tasks := s.planVariants(results.KindTune, items)
	s.start("study", len(items)+len(cub), len(cub)+len(tasks))
	if err := s.runPhases(cub, tasks); err != nil {
		return nil, err
	}
	// The session's records span every Measure call on it: keep this call's pairs and shapes.
	want := map[string]bool{}
	for _, it := range items {
		want[ident(results.KindTune, it.V.Name, it.Shape)] = true
	}
	if cublas {
		for _, sh := range shapes {
			want[ident(results.KindCublas, results.CublasName, sh)] = true
		}
	}
	var recs []results.Record
	for _, r := range s.records() {
		if want[ident(r.Kind, r.Variant, r.Shape)] {
			recs = append(recs, r)
		}
	}
	results.SortRecords(recs)
	return recs, nil
}

// Breakdown verifies the variant on the shape, then times runs end-to-end repetitions of
// allocation, copies, kernel and copy back (protocol.OpBreakdown) on one device. It is not cached:
// the phases outside the kernel depend on the host as much as on the GPU.
func (S *Session) Breakdown(name string, sh protocol.Shape, runs int) (protocol.Response, error) {
	s := S.s
	v := s.byName[name]
	if v == nil {
		return protocol.Response{}, fmt.Errorf("study: no variant %q in the catalog", name)
	}
	ptx, err := s.cfg.Catalog.PTX(name)
	if err != nil {
		return protocol.Response{}, err
	}
	var resp protocol.Response
	var callErr error
	err = s.pool.Run([]workerproc.Task{{Key: name, Do: func(sl *workerproc.Slot) error {
		req := protocol.Request{Op: protocol.OpBreakdown, Kernel: &protocol.Kernel{Variant: *v, PTX: ptx},
			Shape: sh, Verify: s.verifySettings(name, sh), Runs: runs}
		to := s.cfg.Watchdog.timeout(sh, 0, &protocol.TimingSettings{Reps: 2 * runs}, req.Verify)
		// Allocation and copies are not in the launch-time model: allow a second per run on top.
		to += s.cfg.Watchdog.Floor + time.Duration(runs)*time.Second
		r, cerr := sl.Call(req, to)
		if isStart(cerr) {
			return cerr
		}
		resp, callErr = r, cerr
		return nil
	}}})
	if err == nil {
		err = callErr
	}
	if err != nil {
		return resp, fmt.Errorf("breakdown %s %s: %w", name, results.ShapeString(sh), err)
	}
	if resp.Error != "" {
		return resp, fmt.Errorf("breakdown %s %s: %s", name, results.ShapeString(sh), resp.Error)
	}
	if f := firstFailure(resp.Verify); f != "" {
		return resp, fmt.Errorf("breakdown %s %s: wrong results: %s", name, results.ShapeString(sh), f)
	}
	if resp.Breakdown == nil || len(resp.Breakdown.KernelMS) != runs {
		return resp, fmt.Errorf("breakdown %s %s: worker returned no breakdown", name, results.ShapeString(sh))
	}
	return resp, nil
}
