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

// timingInput allocates n uniform timing inputs in ar: drawn on the device (tilegen_fill, input
// `which` of the timing seed) when the worker has the check's kernels, else copied from the host's
// cache (randomHost).
func (w *Worker) timingInput(ar *arena, n, which int) (cu.DevicePtr, error) {
	if w.check == nil {
		return ar.upload(w.stream, w.randomHost(n))
	}
	p, err := ar.alloc(int64(n) * 4)
	if err != nil {
		return 0, err
	}
	return p, w.fill(p, n, 0, 1, 0, 1, n, n, fillSeed(timingSeed, which), true, 0, 0)
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
		if sets[i].a, err = w.timingInput(&ar, int(la), 2*i); err != nil {
			return nil, err
		}
		if sets[i].b, err = w.timingInput(&ar, int(lb), 2*i+1); err != nil {
			return nil, err
		}
		if sets[i].c, err = ar.alloc(4 * lc); err != nil {
			return nil, err
		}
	}
	if s.Epilogue.HasBias() {
		// One bias for every input set: M or N floats stay in L2 like a real layer's bias.
		var err error
		if bt.bias, err = w.timingInput(&ar, s.Epilogue.BiasLen(m, n), 2*nsets); err != nil {
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

	// Two sets of event pairs: while the GPU runs one batch, the host queues the next behind its
	// own gate, so the GPU is not left idle while a batch is queued (it was: a third of the timing
	// phase of a microsecond-scale kernel went to the host queueing under a closed gate).
	var events [2][]cu.Event
	defer func() {
		for _, set := range events {
			for i := range set {
				_ = cu.DestroyEvent(&set[i])
			}
		}
	}()
	for b := range events {
		for i := 0; i < 2*eventBatch; i++ {
			e, err := cu.MakeEvent(cu.DefaultEvent)
			if err != nil {
				return nil, fmt.Errorf("creating events: %w", err)
			}
			events[b] = append(events[b], e)
		}
	}

	var samples []float64
	total := 0.0
	type inflight struct{ set, size int }
	var queue []inflight // batches queued and not yet read, oldest first
	queued := 0          // launches in queue
	next := 0            // the event set the next batch takes
	for {
		// Queue a batch when the targets need launches beyond those done and queued: the count
		// (Reps) always; the time (MinTimeMS) once a finished batch tells the time per launch,
		// counting the queued ones at that time. Sized by what is still missing, so a slow kernel
		// is not run far beyond its targets; the first batch is the minimum count.
		done := len(samples) + queued
		want := reps - done
		if len(samples) > 0 {
			per := max(total/float64(len(samples)), 1e-6)
			if more := t.MinTimeMS - total - float64(queued)*per; more > 0 {
				want = max(want, int(math.Ceil(more/per)))
			}
		}
		if batch := min(want, eventBatch, maxReps-done); batch > 0 && len(queue) < len(events) {
			if err := w.queueBatch(events[next][:2*batch], launch, done, t.Cold, flush, flushWords); err != nil {
				return nil, err
			}
			queue = append(queue, inflight{next, batch})
			queued += batch
			next = 1 - next
			if len(queue) < len(events) && len(samples) > 0 {
				continue // keep one batch queued behind the running one
			}
		}
		if len(queue) == 0 {
			break
		}
		// Read the oldest batch once its last event has passed.
		b := queue[0]
		queue = queue[1:]
		queued -= b.size
		ev := events[b.set]
		if err := ev[2*b.size-1].Synchronize(); err != nil {
			return nil, &FatalError{Err: fmt.Errorf("timed launches: %w", err)}
		}
		for i := 0; i < b.size; i++ {
			ms, err := ev[2*i].Elapsed(ev[2*i+1])
			if err != nil {
				return nil, fmt.Errorf("reading event times: %w", err)
			}
			samples = append(samples, ms)
			total += ms
		}
	}
	if err := w.sync("timed launches"); err != nil {
		return nil, err
	}
	sum := stats.Summarize(samples)
	return &protocol.TimingResult{Reps: sum.N, MedianMS: sum.Median, MinMS: sum.Min, MaxMS: sum.Max,
		MeanMS: sum.Mean, StdMS: sum.Std, Samples: samples, Cold: t.Cold, InputSets: nsets}, nil
}

// queueBatch queues len(ev)/2 timed launches (launch(first), launch(first+1), ...), each between
// its pair of events, behind the gate when the worker has one: the gate holds the stream until the
// whole batch is queued (gate.go), and is released whatever happens, so that no error leaves it
// spinning until its timeout. Cold timing overwrites 2×L2 before each launch, outside its events.
func (w *Worker) queueBatch(ev []cu.Event, launch func(int) error, first int, cold bool, flush cu.DevicePtr, flushWords int64) error {
	if w.gate != nil {
		if err := w.gate.hold(w.stream); err != nil {
			return launchErr(err)
		}
		defer w.gate.release()
	}
	for i := 0; i < len(ev)/2; i++ {
		if cold {
			if err := cu.MemsetD32Async(flush, uint(first+i+1), flushWords, w.stream); err != nil {
				return launchErr(err)
			}
		}
		if err := ev[2*i].Record(w.stream); err != nil {
			return fmt.Errorf("recording event: %w", err)
		}
		if err := launch(first + i); err != nil {
			return err
		}
		if err := ev[2*i+1].Record(w.stream); err != nil {
			return fmt.Errorf("recording event: %w", err)
		}
	}
	return nil
}
