package orchestrator

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"tilegen/generated"
	"tilegen/internal/protocol"
	"tilegen/internal/results"
	"tilegen/internal/resultsdir"
	"tilegen/internal/variant"
)

// ratioName matches a column or field name that compares a kernel with cuBLAS, whatever it is
// called; the convention allows only "ratio" (and "seed_ratio" for the best seed variant's).
var ratioName = regexp.MustCompile(`(?i)ratio|cublas|speedup|faster|slower|pct_?c|percent|(^|_)vs(_|$)`)

// ratioFixture: cuBLAS at 1 ms, a variant twice as fast, one at half its speed, and a shape
// without cuBLAS.
func ratioFixture() []results.Record {
	sh := protocol.Shape{M: 256, N: 256, K: 256}
	other := protocol.Shape{M: 64, N: 64, K: 64}
	dev := &results.DeviceRef{Name: "Test GPU", UUID: "GPU-1"}
	mk := func(kind, name string, sh protocol.Shape, ms float64) results.Record {
		return results.Record{Key: name + results.ShapeString(sh), Kind: kind, Variant: name, Family: "naive", Shape: sh, Status: results.StatusOK,
			Device: dev, Timing: &protocol.TimingResult{Reps: 3, MedianMS: ms, MinMS: ms, MaxMS: ms, Samples: []float64{ms, ms, ms}}}
	}
	return []results.Record{mk(results.KindCublas, results.CublasName, sh, 1), mk(results.KindTune, "fast", sh, 0.5), mk(results.KindTune, "slow", sh, 2),
		mk(results.KindTune, "alone", other, 0.1)}
}

// TestRatioConventionCSV fails when results.csv names a cuBLAS comparison other than "ratio", or
// fills "ratio" with anything but cuBLAS's median over the row's.
func TestRatioConventionCSV(t *testing.T) {
	recs := ratioFixture()
	b, err := resultsdir.EncodeCSV(recs, results.RunInfo{})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := -1
	for i, name := range rows[0] {
		if !ratioName.MatchString(name) {
			continue
		}
		if name != "ratio" {
			t.Errorf("results.csv column %q compares with cuBLAS under another name than ratio", name)
		}
		col = i
	}
	if col < 0 {
		t.Fatalf("results.csv has no ratio column: %v", rows[0])
	}
	want := map[string]string{results.CublasName: "1", "fast": "2", "slow": "0.5", "alone": ""}
	for _, row := range rows[1:] {
		if got := row[col]; got != want[row[5]] {
			t.Errorf("%s: ratio %q, want cuBLAS ms / ms = %q", row[5], got, want[row[5]])
		}
	}
}

// TestRatioConventionTables checks the ranked tables (stdout, ranking.txt).
func TestRatioConventionTables(t *testing.T) {
	recs := ratioFixture()
	var b strings.Builder
	resultsdir.WriteTables(&b, recs, resultsdir.SweepRanking(recs), nil, 0)
	sc := bufio.NewScanner(strings.NewReader(b.String()))
	col := -1
	got := map[string]string{}
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) > 0 && f[0] == "rank" {
			col = -1
			for i, h := range f {
				if h == "ratio" {
					col = i - 3 // "median ms" and "95% CI ms" are one field each in the rows
				}
				if ratioName.MatchString(h) && h != "ratio" || h == "%" {
					t.Errorf("table header %q: the cuBLAS comparison must be named ratio\n%s", h, b.String())
				}
			}
			continue
		}
		if col >= 0 && len(f) > col {
			got[f[1]] = f[col]
		}
	}
	for v, want := range map[string]string{"fast": "2.000", "slow": "0.500", results.CublasName: "1.000", "alone": "-"} {
		if got[v] != want {
			t.Errorf("%s: ratio %q, want %q\n%s", v, got[v], want, b.String())
		}
	}
}

// TestRatioConventionJSON walks summary.json and ranking.json: any field comparing with cuBLAS must
// be ratio (or seed_ratio) and hold cuBLAS's median over the entry's.
func TestRatioConventionJSON(t *testing.T) {
	recs := ratioFixture()
	ranked := resultsdir.SweepRanking(recs)
	rb, err := json.Marshal(resultsdir.RankingOf(recs, ranked, nil))
	if err != nil {
		t.Fatal(err)
	}
	var ranking []results.ShapeRanking
	if err := json.Unmarshal(rb, &ranking); err != nil {
		t.Fatal(err)
	}
	sum := summarize(ranking, recs, nil, variant.SeedFamilies(generated.Variants()), &protocol.PeakResult{GFLOPS: 1000})
	sb, err := json.Marshal(sum)
	if err != nil {
		t.Fatal(err)
	}
	for name, doc := range map[string][]byte{"ranking.json": rb, "summary.json": sb} {
		var v any
		if err := json.Unmarshal(doc, &v); err != nil {
			t.Fatal(err)
		}
		walkJSON(v, "", func(path, key string, val any) {
			if !ratioName.MatchString(key) {
				return
			}
			_, isNumber := val.(float64)
			switch {
			case key == "ratio" || key == "seed_ratio":
			case key == "cublas" && !isNumber: // the cuBLAS entry of a shape, or its version
			default:
				t.Errorf("%s: field %s%s compares with cuBLAS under another name than ratio", name, path, key)
			}
		})
	}
	var checked int
	for _, sh := range sum.Shapes {
		if sh.Cublas == nil || sh.Best == nil {
			continue
		}
		if want := sh.Cublas.MedianMS / sh.Best.MedianMS; math.Abs(sh.Ratio-want) > 1e-12 {
			t.Errorf("%s: ratio %g, want cuBLAS ms / best ms = %g", sh.Shape, sh.Ratio, want)
		}
		if sh.BestSeed != nil {
			if want := sh.Cublas.MedianMS / sh.BestSeed.MedianMS; math.Abs(sh.SeedRatio-want) > 1e-12 {
				t.Errorf("%s: seed_ratio %g, want %g", sh.Shape, sh.SeedRatio, want)
			}
		}
		checked++
	}
	if checked == 0 || sum.Shapes[0].Ratio != 2 {
		t.Errorf("summary: %+v", sum.Shapes)
	}
	md := BenchMarkdown(sum, "x")
	if strings.Contains(md, "% of cuBLAS") || !strings.Contains(md, "| 2.000 |") {
		t.Errorf("BENCHMARKS.md table does not show ratio 2.000:\n%s", md)
	}
}

func walkJSON(v any, path string, visit func(path, key string, val any)) {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			visit(path, k, val)
			walkJSON(val, path+k+".", visit)
		}
	case []any:
		for i, val := range x {
			walkJSON(val, path+strconv.Itoa(i)+".", visit)
		}
	}
}

// TestRenderResultFiles: the render-only rewrite of results.csv and bench.txt reproduces what a run
// writes, touches neither results.jsonl nor a file the directory did not have.
func TestRenderResultFiles(t *testing.T) {
	dir := t.TempDir()
	recs := ratioFixture()
	if err := resultsdir.WriteResults(dir, recs, results.RunInfo{GOOS: "linux"}); err != nil {
		t.Fatal(err)
	}
	read := func(name string) string {
		b, _ := os.ReadFile(filepath.Join(dir, name))
		return string(b)
	}
	jsonl, csvWant := read("results.jsonl"), read("results.csv")
	if err := os.WriteFile(filepath.Join(dir, "results.csv"), []byte("kind,pct_cublas\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, "bench.txt"))
	if err := resultsdir.RenderResultFiles(dir); err != nil {
		t.Fatal(err)
	}
	if read("results.csv") != csvWant || read("results.jsonl") != jsonl {
		t.Errorf("rewritten results.csv differs from the run's, or results.jsonl changed:\n%s", read("results.csv"))
	}
	if _, err := os.Stat(filepath.Join(dir, "bench.txt")); err == nil {
		t.Error("bench.txt was created where there was none")
	}
	os.Remove(filepath.Join(dir, "results.csv"))
	if err := resultsdir.RenderResultFiles(dir); err == nil {
		t.Error("nothing to rewrite: want an error")
	}
}
