package resultsdir

import (
	"fmt"
	"sort"

	"tilegen/internal/protocol"
	"tilegen/internal/results"
	"tilegen/internal/stats"
)

// Entry is one ranked candidate of a shape.
type Entry struct {
	Rec     *results.Record
	Sum     stats.Summary
	Refined bool // Sum comes from the interleaved re-measurement
	Rank    int
	Tie     bool
}

// sweepSummary summarizes a record's samples (or, without samples, its reported statistics with the
// whole range as the interval).
func sweepSummary(r *results.Record) stats.Summary {
	t := r.Timing
	if len(t.Samples) > 0 {
		return stats.Summarize(t.Samples)
	}
	return stats.Summary{N: t.Reps, Median: t.MedianMS, Min: t.MinMS, Max: t.MaxMS, Mean: t.MeanMS, Std: t.StdMS, Lo: t.MinMS, Hi: t.MaxMS}
}

// candidates returns the ok timed records of a shape (variants and cuBLAS) as entries.
func candidates(recs []results.Record, sh protocol.Shape) []Entry {
	var es []Entry
	for i := range recs {
		r := &recs[i]
		if r.Shape != sh || r.Status != results.StatusOK || r.Timing == nil || (r.Kind != results.KindTune && r.Kind != results.KindCublas) {
			continue
		}
		es = append(es, Entry{Rec: r, Sum: sweepSummary(r)})
	}
	return es
}

// Rank orders entries by median and gives tied neighbours (overlapping median confidence
// intervals) the same rank: 1, =2, =2, 4.
func Rank(es []Entry) {
	sort.SliceStable(es, func(i, j int) bool {
		if es[i].Sum.Median != es[j].Sum.Median {
			return es[i].Sum.Median < es[j].Sum.Median
		}
		return es[i].Rec.Variant < es[j].Rec.Variant
	})
	for i := range es {
		es[i].Rank = i + 1
		es[i].Tie = false
		if i > 0 && !stats.Separated(es[i-1].Sum, es[i].Sum) {
			es[i].Rank = es[i-1].Rank
			es[i].Tie = true
			es[i-1].Tie = true
		}
	}
}

// RankLabel is an entry's rank as the tables print it: "3", or "=3" when tied.
func RankLabel(e Entry) string {
	if e.Tie {
		return fmt.Sprintf("=%d", e.Rank)
	}
	return fmt.Sprint(e.Rank)
}
