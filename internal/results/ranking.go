package results

import (
	"encoding/json"
	"fmt"
	"os"
)

// ShapeRanking is one shape's final ranking as tune prints it, machine-readable (ranking.json):
// medians and intervals come from the interleaved re-measurement where it ran, else the sweep.
type ShapeRanking struct {
	Shape   string        `json:"shape"`
	Note    string        `json:"note,omitempty"`
	Entries []RankedEntry `json:"entries"`
}

// RankedEntry is one row of a ShapeRanking.
type RankedEntry struct {
	Rank    int     `json:"rank"`
	Tie     bool    `json:"tie"`
	Kind    string  `json:"kind"`
	Variant string  `json:"variant"`
	Family  string  `json:"family,omitempty"`
	Params  string  `json:"params,omitempty"`
	N       int     `json:"n"`
	Refined bool    `json:"refined"`
	Median  float64 `json:"median_ms"`
	Lo      float64 `json:"ci_lo_ms"`
	Hi      float64 `json:"ci_hi_ms"`
	Std     float64 `json:"std_ms"`
	GFLOPS  float64 `json:"gflops"`
}

// ReadRanking reads a tune results directory's ranking.json.
func ReadRanking(path string) ([]ShapeRanking, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rs []ShapeRanking
	if err := json.Unmarshal(b, &rs); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return rs, nil
}
