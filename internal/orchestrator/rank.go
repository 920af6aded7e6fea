package orchestrator

import (
	"fmt"
	"sort"

	"tilegen/internal/protocol"
	"tilegen/internal/results"
	"tilegen/internal/resultsdir"
	"tilegen/internal/stats"
	"tilegen/internal/workerproc"
)

// RankSettings control the noise-aware re-measurement of each shape's leaders.
type RankSettings struct {
	// Rounds is the most interleaved rounds per shape (0 disables re-measurement).
	Rounds int
	// Top is the most variants re-measured per shape (besides cuBLAS).
	Top int
	// NearPct admits variants whose sweep median is within this percentage of the best.
	NearPct float64
	// Timing is one short timing request of a round.
	Timing protocol.TimingSettings
}

// leaders picks the entries to re-measure: the best, the next variants within NearPct of it (Top in
// all), and cuBLAS (its fastest record when several devices timed it: the re-measurement runs them
// all on one device anyway).
func leaders(es []resultsdir.Entry, rs RankSettings) []int {
	var picked []int
	best := -1.0
	cublas := false
	for i, e := range es {
		if e.Rec.Kind == results.KindCublas {
			if !cublas {
				picked = append(picked, i)
				cublas = true
			}
			continue
		}
		if best < 0 {
			best = e.Sum.Median
		}
		n := 0
		for _, p := range picked {
			if es[p].Rec.Kind != results.KindCublas {
				n++
			}
		}
		if n < rs.Top && e.Sum.Median <= best*(1+rs.NearPct/100) {
			picked = append(picked, i)
		}
	}
	return picked
}

// allSeparated reports whether every neighbour pair of the sorted summaries is separated.
func allSeparated(sums []stats.Summary) bool {
	s := append([]stats.Summary(nil), sums...)
	sort.Slice(s, func(i, j int) bool { return s[i].Median < s[j].Median })
	for i := 1; i < len(s); i++ {
		if !stats.Separated(s[i-1], s[i]) {
			return false
		}
	}
	return true
}

// remeasure times the leaders of one shape interleaved (A B C cuBLAS, A B C cuBLAS, ...) on one
// worker, round after round, until their median intervals separate or the rounds run out; it
// replaces their summaries with the pooled re-measured samples. It returns a note when it stopped
// early because of a failure.
func (s *session) remeasure(sl *workerproc.Slot, sh protocol.Shape, es []resultsdir.Entry, idx []int) (string, error) {
	rs := s.cfg.Rank
	samples := make([][]float64, len(idx))
	for round := 0; round < rs.Rounds; round++ {
		for j, i := range idx {
			r := es[i].Rec
			ts := rs.Timing
			req := protocol.Request{Op: protocol.OpCublas, Shape: sh, Timing: &ts}
			if r.Kind != results.KindCublas {
				v := s.variantByName(r.Variant)
				if v == nil {
					return "re-measure skipped: " + r.Variant + " not in the catalog", nil
				}
				ptx, err := s.cfg.Catalog.PTX(v.Name)
				if err != nil {
					return "re-measure skipped: " + workerproc.OneLine(err.Error()), nil
				}
				req = protocol.Request{Op: protocol.OpRun, Kernel: &protocol.Kernel{Variant: *v, PTX: ptx}, Shape: sh, Timing: &ts}
			}
			resp, err := sl.Call(req, s.cfg.Watchdog.timeout(sh, s.cublasMS(sh), &ts, nil))
			if isStart(err) {
				return "", err
			}
			if err == nil && resp.Error != "" {
				err = fmt.Errorf("%s", resp.Error)
			}
			if err == nil && (resp.Timing == nil || len(resp.Timing.Samples) == 0) {
				err = fmt.Errorf("no timing samples")
			}
			if err != nil {
				return fmt.Sprintf("re-measure stopped: %s: %s", r.Variant, workerproc.OneLine(err.Error())), nil
			}
			samples[j] = append(samples[j], resp.Timing.Samples...)
		}
		sums := make([]stats.Summary, len(idx))
		for j := range idx {
			sums[j] = stats.Summarize(samples[j])
		}
		for j, i := range idx {
			es[i].Sum = sums[j]
			es[i].Refined = true
		}
		if allSeparated(sums) {
			break
		}
	}
	return "", nil
}
