package gpu

import (
	"fmt"
	"math"

	"gorgonia.org/cu"

	"tilegen/internal/protocol"
	"tilegen/internal/stats"
	"tilegen/internal/verify"
)

const (
	// maxInputSets caps the rotated input sets of a small problem.
	maxInputSets = 64
	// eventBatch is how many launches are enqueued (each between its own event pair) before the
	// worker waits and reads their times.
	eventBatch = 128
	// defaultMaxReps applies when a request leaves MaxReps at zero.
	defaultMaxReps = 100000
	// timingSeed seeds the timing inputs (their values only matter for power, not correctness).
	timingSeed = 0x5eed
)

// inputSets is how many (A, B, C) sets timing rotates through: when one set fits in L2, enough
// sets that together they are about three times L2, so a launch does not find its inputs still
// cached from the previous one. Cold timing flushes L2 instead and needs one set.
func inputSets(setBytes, l2 int64, cold bool) int {
	if cold || setBytes > l2 || l2 <= 0 {
		return 1
	}
	n := (3*l2 + setBytes - 1) / setBytes
	return int(min(max(n, 2), maxInputSets))
}

// randomHost returns n uniform values from the worker's cache, growing it when needed.
func (w *Worker) randomHost(n int) []float32 {
	if len(w.host) < n {
		w.host = make([]float32, n)
		verify.Uniform(verify.Rand(timingSeed), w.host)
	}
	return w.host[:n]
}

// time runs Warmup launches, then timed launches until at least Reps launches and MinTimeMS of
// kernel time (at most MaxReps), each launch between its own pair of events, with beta = 0 and
// the dense leading dimensions of the shape's op.
func (w *Worker) time(g gemmFunc, s protocol.Shape, t *protocol.TimingSettings) (*protocol.TimingResult, error) {
	m, n, k := s.M, s.N, s.K
	lda, ldb, ldc := s.Dense()
	// A batch's matrices lie back to back (dense strides).
	products := int64(s.Products())
	bt := batchArgs{count: s.Batch}
	if s.Batch > 0 {
		bt.sa, bt.sb, bt.sc = int64(m)*int64(k), int64(k)*int64(n), int64(m)*int64(n)
	}
	maxReps := t.MaxReps
	if maxReps <= 0 {
		maxReps = defaultMaxReps
	}
	reps := max(t.Reps, 1)
	if reps > maxReps {
		return nil, fmt.Errorf("timing: reps %d above max_reps %d", reps, maxReps)
	}
	la, lb, lc := int64(m)*int64(k)*products, int64(k)*int64(n)*products, int64(m)*int64(n)*products
	l2 := int64(w.info.L2Bytes)
	nsets := inputSets(4*(la+lb+lc), l2, t.Cold)

	var ar arena
	defer ar.free()
	type set struct{ a, b, c cu.DevicePtr }
	sets := make([]set, nsets)
	for i := range sets {
		var err error
		if sets[i].a, err = ar.upload(w.stream, w.randomHost(int(la))); err != nil {
			return nil, err
		}
		if sets[i].b, err = ar.upload(w.stream, w.randomHost(int(lb))); err != nil {
			return nil, err
		}
		if sets[i].c, err = ar.alloc(4 * lc); err != nil {
			return nil, err
		}
	}
	if s.Epilogue.HasBias() {
		// One bias for every input set: M or N floats stay in L2 like a real layer's bias.
		var err error
		if bt.bias, err = ar.upload(w.stream, w.randomHost(s.Epilogue.BiasLen(m, n))); err != nil {
			return nil, err
		}
	}
	var flush cu.DevicePtr
	flushWords := 2 * l2 / 4
	if t.Cold {
		var err error
		if flush, err = ar.alloc(4 * flushWords); err != nil {
			return nil, err
		}
	}
	launch := func(i int) error {
		in := sets[i%nsets]
		return g(m, n, k, 1, in.a, lda, in.b, ldb, 0, in.c, ldc, bt)
	}
	for i := 0; i < t.Warmup; i++ {
		if err := launch(i); err != nil {
			return nil, fmt.Errorf("warmup: %w", err)
		}
	}
	if err := w.sync("warmup"); err != nil {
		return nil, err
	}

	events := make([]cu.Event, 2*eventBatch)
	for i := range events {
		var err error
		if events[i], err = cu.MakeEvent(cu.DefaultEvent); err != nil {
			for _, e := range events[:i] {
				_ = cu.DestroyEvent(&e)
			}
			return nil, fmt.Errorf("creating events: %w", err)
		}
	}
	defer func() {
		for i := range events {
			_ = cu.DestroyEvent(&events[i])
		}
	}()

	var samples []float64
	total := 0.0
	for len(samples) < maxReps && (len(samples) < reps || total < t.MinTimeMS) {
		// Size the batch by what is still missing, so a slow kernel is not run far beyond
		// its targets; the first batch, with nothing measured yet, is the minimum count.
		want := reps - len(samples)
		if len(samples) > 0 && total < t.MinTimeMS {
			per := total / float64(len(samples))
			want = max(want, int(math.Ceil((t.MinTimeMS-total)/max(per, 1e-6))))
		}
		batch := min(max(want, 1), eventBatch, maxReps-len(samples))
		// The gate holds the stream until the whole batch is queued (gate.go); released whatever
		// happens, so that no error leaves it spinning until its timeout.
		if w.gate != nil {
			if err := w.gate.hold(w.stream); err != nil {
				return nil, launchErr(err)
			}
		}
		err := func() error {
			if w.gate != nil {
				defer w.gate.release()
			}
			for i := 0; i < batch; i++ {
				if t.Cold {
					// Outside the event pair: overwriting 2×L2 evicts A, B and C.
					val := uint(len(samples) + i + 1)
					if err := cu.MemsetD32Async(flush, val, flushWords, w.stream); err != nil {
						return launchErr(err)
					}
				}
				if err := events[2*i].Record(w.stream); err != nil {
					return fmt.Errorf("recording event: %w", err)
				}
				if err := launch(len(samples) + i); err != nil {
					return err
				}
				if err := events[2*i+1].Record(w.stream); err != nil {
					return fmt.Errorf("recording event: %w", err)
				}
			}
			return nil
		}()
		if err != nil {
			return nil, err
		}
		if err := w.sync("timed launches"); err != nil {
			return nil, err
		}
		for i := 0; i < batch; i++ {
			ms, err := events[2*i].Elapsed(events[2*i+1])
			if err != nil {
				return nil, fmt.Errorf("reading event times: %w", err)
			}
			samples = append(samples, ms)
			total += ms
		}
	}
	sum := stats.Summarize(samples)
	return &protocol.TimingResult{Reps: sum.N, MedianMS: sum.Median, MinMS: sum.Min, MaxMS: sum.Max,
		MeanMS: sum.Mean, StdMS: sum.Std, Samples: samples, Cold: t.Cold, InputSets: nsets}, nil
}
