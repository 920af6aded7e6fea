package resultsdir

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"tilegen/internal/protocol"
	"tilegen/internal/results"
	"tilegen/internal/stats"
	"tilegen/internal/variant"
)

func TestReadResultsGzipped(t *testing.T) {
	dir := t.TempDir()
	recs := []results.Record{{Key: "k1", Kind: results.KindTune, Variant: "a", Status: results.StatusOK}, {Key: "k2", Kind: results.KindCublas, Variant: results.CublasName, Status: results.StatusOK}}
	if err := WriteResults(dir, recs, results.RunInfo{GOOS: "linux"}); err != nil {
		t.Fatal(err)
	}
	plain, info, err := results.ReadDir(dir)
	if err != nil || len(plain) != 2 || info.GOOS != "linux" {
		t.Fatalf("plain: %v %+v %v", len(plain), info, err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "results.jsonl"))
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	zw.Write(b)
	zw.Close()
	os.Remove(filepath.Join(dir, "results.jsonl"))
	if err := os.WriteFile(filepath.Join(dir, "results.jsonl.gz"), zb.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	gz, _, err := results.ReadDir(dir)
	if err != nil || len(gz) != 2 || gz[1].Key != plain[1].Key {
		t.Fatalf("gzipped: %+v %v", gz, err)
	}
	os.Remove(filepath.Join(dir, "results.jsonl.gz"))
	if _, _, err := results.ReadDir(dir); err == nil {
		t.Fatal("no results file read as empty results")
	}
}

func TestAnalysisColumns(t *testing.T) {
	dev := protocol.Device{UUID: "GPU-x", ComputeCapability: "9.0", SMs: 132, ClockKHz: 1980000, MemClockKHz: 2619000, MemBusWidth: 5120}
	r := results.Record{Kind: results.KindTune, Variant: "shared_w32_pad0", Family: "shared", Shape: protocol.Shape{M: 4096, N: 4096, K: 4096},
		Status: results.StatusOK, Tile: &variant.Tile{Rows: 32, Cols: 32}, Device: &results.DeviceRef{UUID: "GPU-x"},
		Timing: &protocol.TimingResult{MedianMS: 10}, Attributes: &protocol.Attributes{Blocks: 16384, BlocksPerSM: 2}}
	cols := analysisColumns(&r, map[string]protocol.Device{"GPU-x": dev})
	if len(cols) != 8 {
		t.Fatalf("%d columns: %v", len(cols), cols)
	}
	// 2·4096³ = 137.4 GFLOP; tiled reads MNK(1/32 + 1/32) = 2^36/16 elements + writes 2^24.
	if cols[0] != "137.439" || cols[1] != "tiled" {
		t.Errorf("flops/model %v", cols[:2])
	}
	wantMB := 4 * (float64(int64(1)<<36)/16 + float64(1<<24)) / 1e6
	if cols[2] != strconv.FormatFloat(wantMB, 'g', 6, 64) {
		t.Errorf("model MB %s, want %g", cols[2], wantMB)
	}
	if cols[4] == "" || cols[5] == "" || cols[6] == "" {
		t.Errorf("achieved/roof/bound empty: %v", cols)
	}
	if cols[7] != "" {
		t.Errorf("62.06 waves: a thin last wave of 62 is no quantization: %q", cols[7])
	}
	r.Attributes = &protocol.Attributes{Blocks: 280, BlocksPerSM: 2}
	if c := analysisColumns(&r, map[string]protocol.Device{"GPU-x": dev}); !strings.Contains(c[7], "wave quantization") {
		t.Errorf("1.06 waves: want a wave-quantization note, got %q", c[7])
	}
	r.Timing = nil
	r.Status = results.StatusFailed
	if c := analysisColumns(&r, nil); c[4] != "" || c[5] != "" {
		t.Errorf("a failed record got achieved columns: %v", c)
	}
}

func TestRankingTies(t *testing.T) {
	samples := func(us float64, spread float64) []float64 {
		var s []float64
		for i := 0; i < 30; i++ {
			s = append(s, us*(1+spread*float64((i*7)%11-5)))
		}
		return s
	}
	mk := func(name string, xs []float64) Entry {
		return Entry{Rec: &results.Record{Variant: name, Kind: results.KindTune}, Sum: stats.Summarize(xs)}
	}
	for _, tc := range []struct {
		name    string
		entries []Entry
		want    string
	}{
		{"equal medians tie", []Entry{mk("b", samples(1, 0.001)), mk("a", samples(1, 0.001)), mk("c", samples(2, 0.001))}, "=1 a, =1 b, 3 c"},
		{"clearly different separate", []Entry{mk("x", samples(1.2, 0.001)), mk("y", samples(1, 0.001))}, "1 y, 2 x"},
		{"noisy near values tie", []Entry{mk("p", samples(1, 0.05)), mk("q", samples(1.01, 0.05)), mk("r", samples(3, 0.001))}, "=1 p, =1 q, 3 r"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			Rank(tc.entries)
			var got []string
			for _, e := range tc.entries {
				got = append(got, RankLabel(e)+" "+e.Rec.Variant)
			}
			if s := strings.Join(got, ", "); s != tc.want {
				t.Errorf("got %s, want %s", s, tc.want)
			}
		})
	}
}

// TestWriteAtomicConcurrent: two runners write the same file at once (the reference kernel the
// workers load from the temp dir, or one --out): every write succeeds and the file is whole. With a
// fixed temporary name one runner's rename found its temporary file already renamed away.
func TestWriteAtomicConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ref.ptx")
	want := bytes.Repeat([]byte("x"), 1<<16)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := 0; i < 64; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- WriteAtomic(path, want)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("file after concurrent writes: %d bytes, %v", len(got), err)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*.tmp")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}
