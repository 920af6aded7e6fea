package resultsdir

import (
	"encoding/json"

	"tilegen/internal/protocol"
	"tilegen/internal/results"
)

// RankingOf is ranking.json's content: per shape of recs, its ranked entries and note.
func RankingOf(recs []results.Record, ranked map[protocol.Shape][]Entry, notes map[protocol.Shape]string) []results.ShapeRanking {
	var out []results.ShapeRanking
	for _, sh := range results.ShapesOf(recs) {
		sr := results.ShapeRanking{Shape: results.ShapeString(sh), Note: notes[sh], Entries: []results.RankedEntry{}}
		for _, e := range ranked[sh] {
			sr.Entries = append(sr.Entries, results.RankedEntry{Rank: e.Rank, Tie: e.Tie, Kind: e.Rec.Kind, Variant: e.Rec.Variant,
				Family: e.Rec.Family, Params: e.Rec.Params, N: e.Sum.N, Refined: e.Refined, Median: e.Sum.Median,
				Lo: e.Sum.Lo, Hi: e.Sum.Hi, Std: e.Sum.Std, GFLOPS: results.GFLOPS(sh, e.Sum.Median)})
		}
		out = append(out, sr)
	}
	return out
}

// WriteRankingJSON writes ranking.json (results.ShapeRanking per shape) from ranked entries and
// per-shape notes.
func WriteRankingJSON(path string, recs []results.Record, ranked map[protocol.Shape][]Entry, notes map[protocol.Shape]string) error {
	b, err := json.MarshalIndent(RankingOf(recs, ranked, notes), "", "  ")
	if err != nil {
		return err
	}
	return WriteAtomic(path, append(b, '\n'))
}
