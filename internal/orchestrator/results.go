package orchestrator

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// WriteResults writes results.jsonl, results.csv, bench.txt and device.json into dir.
func WriteResults(dir string, recs []Record, info RunInfo) error {
	return writeResults(dir, recs, info)
}

// ReadResults reads a results directory's records and device.json.
func ReadResults(dir string) ([]Record, RunInfo, error) {
	recs, err := readJSONL(filepath.Join(dir, "results.jsonl"))
	if err != nil {
		return nil, RunInfo{}, err
	}
	var info RunInfo
	b, err := os.ReadFile(filepath.Join(dir, "device.json"))
	if err != nil {
		return nil, RunInfo{}, fmt.Errorf("reading results: %w", err)
	}
	if err := json.Unmarshal(b, &info); err != nil {
		return nil, RunInfo{}, fmt.Errorf("%s: %w", filepath.Join(dir, "device.json"), err)
	}
	return recs, info, nil
}
