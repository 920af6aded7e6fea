package study

import (
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tilegen/internal/protocol"
	"tilegen/internal/report"
	"tilegen/internal/results"
	"tilegen/internal/resultsdir"
)

// factor scales a shape's time per kernel: cuBLAS 1, the widest shared tiles 2 (so the square
// study's best W is 32 with ratio 0.5 everywhere), others slower.
func factor(v string) float64 {
	switch v {
	case results.CublasName:
		return 1
	case "shared_w32_pad0":
		return 2
	case "shared_w16_pad0":
		return 3
	}
	return 4
}

// fakeResults writes a results directory for a study's plan: every pair measured, with samples.
func fakeResults(t *testing.T, st Study, dir string) {
	t.Helper()
	dev := &results.DeviceRef{Name: "Test GPU", UUID: "GPU-1"}
	mk := func(kind, v string, sh protocol.Shape) results.Record {
		ms := factor(v) * results.Flops(sh) / 1e10
		return results.Record{Key: v + results.ShapeString(sh), Kind: kind, Variant: v, Shape: sh,
			Status: results.StatusOK, Device: dev,
			Timing: &protocol.TimingResult{Reps: 6, MedianMS: ms, Samples: []float64{ms, ms * 1.02, ms * 0.99, ms, ms * 1.05, ms * 0.97}}}
	}
	var recs []results.Record
	seen := map[protocol.Shape]bool{}
	for _, p := range st.Pairs() {
		recs = append(recs, mk(results.KindTune, p.Variant, p.Shape))
		if st.Cublas && !seen[p.Shape] {
			seen[p.Shape] = true
			recs = append(recs, mk(results.KindCublas, results.CublasName, p.Shape))
		}
	}
	if err := resultsdir.WriteResults(dir, recs, results.RunInfo{}); err != nil {
		t.Fatal(err)
	}
	if st.Name != "cpu-gpu" {
		return
	}
	f, err := os.Create(filepath.Join(dir, "breakdown.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	enc := json.NewEncoder(f)
	for _, n := range cpuGPUNs {
		for _, k := range []struct{ name, where string }{{cpuNaive, "cpu"}, {cpuBlocked, "cpu"}, {"naive_16x16", "gpu"},
			{"shared_w16_pad0", "gpu"}, {"coarse_w16_g4_pf0", "gpu"}} {
			ms := float64(n*n*n) / 1e8
			ph := protocol.BreakdownResult{Runs: 3, KernelMS: []float64{ms, ms * 1.1, ms * 0.9}, AllocMS: []float64{0.1, 0.1, 0.2}}
			if k.where == "gpu" {
				ph.HtoDMS, ph.DtoHMS, ph.FreeMS = []float64{1, 1.2, 0.8}, []float64{0.5, 0.5, 0.6}, []float64{0.01, 0.01, 0.01}
			}
			if err := enc.Encode(report.Breakdown{Name: k.name, Shape: sq(n, n), Where: k.where, Phase: ph}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestRenderAll renders every study from a complete fake result set: every chart it embeds exists,
// fits MaxChartPx, and no table compares with cuBLAS other than by ratio.
func TestRenderAll(t *testing.T) {
	for _, st := range All() {
		t.Run(st.Name, func(t *testing.T) {
			dir := t.TempDir()
			fakeResults(t, st, dir)
			if err := Render(st, dir); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(filepath.Join(dir, "report.md"))
			if err != nil {
				t.Fatal(err)
			}
			md := string(b)
			if strings.Contains(md, "% of cuBLAS") || strings.Contains(md, "% cuBLAS") {
				t.Error("a table compares with cuBLAS as a percentage instead of ratio")
			}
			charts := 0
			for _, line := range strings.Split(md, "\n") {
				i := strings.Index(line, "](")
				if !strings.HasPrefix(line, "![") || i < 0 {
					continue
				}
				charts++
				file := filepath.Join(dir, strings.TrimSuffix(line[i+2:], ")"))
				f, err := os.Open(file)
				if err != nil {
					t.Fatal(err)
				}
				cfg, err := png.DecodeConfig(f)
				f.Close()
				if err != nil || cfg.Width > report.MaxChartPx || cfg.Height > report.MaxChartPx {
					t.Errorf("%s: %d×%d px (%v)", file, cfg.Width, cfg.Height, err)
				}
			}
			if charts == 0 {
				t.Error("no chart")
			}
			if st.Name == "square" && (strings.Count(md, "| 0.500 |") != len(seedNs) || !strings.Contains(md, "| cuBLAS ms | ratio |")) {
				t.Errorf("square: want ratio = cuBLAS ms / best ms = 0.500 for each N:\n%s", md)
			}
		})
	}
}
