package orchestrator

import (
	"fmt"

	"tilegen/internal/protocol"
	"tilegen/internal/results"
	"tilegen/internal/search"
	"tilegen/internal/variant"
	"tilegen/internal/workerproc"
)

// tuneModel runs the model strategy (internal/search): cuBLAS on every shape, then rounds in
// which the search picks the next variants of each shape, the pool measures them (each verified
// before it is timed, cached like any measurement), and the search learns from the records, until
// every shape's budget is spent. The plan's items are the candidates; the split-K rule and the
// shapes' requirements leave out what they leave out in an exhaustive tune.
func (s *session) tuneModel(items []item, cub []workerproc.Task) error {
	sms, dev := 0, protocol.Device{}
	for _, sl := range s.pool.Slots {
		if sms == 0 || sl.Device.SMs < sms {
			sms, dev = sl.Device.SMs, sl.Device
		}
	}
	var skipped []item
	cands := map[protocol.Shape][]*variant.Variant{}
	for _, it := range items {
		if it.Skip != "" || splitKPointless(it.V, it.Shape, sms) != "" {
			skipped = append(skipped, it) // planVariants records why
			continue
		}
		cands[it.Shape] = append(cands[it.Shape], it.V)
	}
	s.planVariants(results.KindTune, skipped)
	batch := max(1, variant.CeilDiv(len(s.pool.Slots), max(1, len(s.cfg.Shapes))))
	srch, err := search.New(search.Config{Method: search.Model, Budget: s.cfg.Strategy.budget(),
		Seed: s.cfg.Strategy.Seed, Device: search.DeviceOf(dev), Batch: batch})
	if err != nil {
		return err
	}
	planned := 0
	for _, sh := range s.cfg.Shapes {
		if err := srch.Add(sh, cands[sh]); err != nil {
			return err
		}
		planned += srch.Budget(sh)
		// Every candidate's module is compiled up front: which ones run is decided as it goes.
		s.preload = append(s.preload, cands[sh]...)
	}
	total := len(s.cfg.Shapes) + planned
	s.start("tune", total, len(cub)+planned)
	fmt.Fprintf(s.cfg.Stderr, "tune: --strategy model: %d of %d candidate measurements (%s per shape), the most promising first\n",
		planned, len(items)-len(skipped), describeBudget(s.cfg.Strategy.budget()))
	wait := s.preloadModules()
	defer wait()
	ran := len(cub)
	err = s.pool.Run(cub)
	for err == nil {
		picks := srch.Next()
		if len(picks) == 0 {
			break
		}
		round := make([]item, len(picks))
		for i, p := range picks {
			round[i] = item{V: p.Variant, Shape: p.Shape}
		}
		tasks := s.planVariants(results.KindTune, round)
		s.preload = nil // compiled above
		ran += len(tasks)
		if err = s.pool.Run(tasks); err != nil {
			break
		}
		s.mu.Lock()
		for _, p := range picks {
			r, ok := s.recs[ident(results.KindTune, p.Variant.Name, p.Shape)]
			ms, passed := 0.0, ok && r.Status == results.StatusOK && r.Timing != nil
			if passed {
				ms = r.Timing.MedianMS
			}
			err = srch.Observe(p.Shape, p.Variant.Name, ms, passed)
			if err != nil {
				break
			}
		}
		s.mu.Unlock()
	}
	s.prog.done()
	s.cost.Cached = total - ran
	if err != nil {
		return err
	}
	return s.putErr
}
