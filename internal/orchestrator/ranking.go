package orchestrator

import (
	"encoding/json"

	"tilegen/internal/protocol"
	"tilegen/internal/results"
)

func rankingOf(recs []results.Record, ranked map[protocol.Shape][]entry, notes map[protocol.Shape]string) []results.ShapeRanking {
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

func writeRankingJSON(path string, recs []results.Record, ranked map[protocol.Shape][]entry, notes map[protocol.Shape]string) error {
	b, err := json.MarshalIndent(rankingOf(recs, ranked, notes), "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(path, append(b, '\n'))
}
