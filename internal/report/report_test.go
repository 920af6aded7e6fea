package report

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tilegen/internal/protocol"
	"tilegen/internal/results"
	"tilegen/internal/resultsdir"
)

func TestTable(t *testing.T) {
	got := Table([]string{"a", "b"}, [][]string{{"x|y", "1"}, {"z"}})
	want := "| a | b |\n| :--- | ---: |\n| x\\|y | 1 |\n| z |  |\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestMeanStd(t *testing.T) {
	if m, s := Mean([]float64{1, 2, 3, 4}), Std([]float64{1, 2, 3, 4}); m != 2.5 || math.Abs(s-1.2909944) > 1e-6 {
		t.Errorf("mean %g std %g", m, s)
	}
	if Mean(nil) != 0 || Std([]float64{1}) != 0 {
		t.Error("empty cases")
	}
}

// TestRender writes a two-set report from a tiny results set and checks that every embedded
// chart exists as PNG and SVG, that cuBLAS is in the ranked table and that the side-by-side part
// is drawn.
func TestRender(t *testing.T) {
	dir := t.TempDir()
	sh := protocol.Shape{M: 256, N: 256, K: 256}
	dev := &results.DeviceRef{Name: "Test GPU", UUID: "GPU-1"}
	mk := func(kind, name, fam, params string, ms float64) results.Record {
		return results.Record{Key: name, Kind: kind, Variant: name, Family: fam, Params: params, Shape: sh,
			Status: results.StatusOK, Device: dev,
			Attributes: &protocol.Attributes{Blocks: 256, BlocksPerSM: 2, Waves: 1},
			Timing:     &protocol.TimingResult{Reps: 3, MedianMS: ms}}
	}
	recs := []results.Record{
		mk(results.KindCublas, results.CublasName, "", "", 0.01),
		mk(results.KindTune, "coarse_w16_g2_pf0", "coarse", "W=16 G=2 PF=0", 0.05),
		mk(results.KindTune, "coarse_w16_g4_pf0", "coarse", "W=16 G=4 PF=0", 0.04),
		mk(results.KindTune, "coarse_w32_g2_pf0", "coarse", "W=32 G=2 PF=0", 0.03),
		mk(results.KindTune, "naive_16x16", "naive", "BX=16 BY=16", 0.2),
	}
	Tiles["coarse_w16_g2_pf0"] = [2]int{16, 32}
	info := results.RunInfo{Devices: []protocol.Device{{Name: "Test GPU", ComputeCapability: "9.0", SMs: 132,
		ClockKHz: 1980000, MemClockKHz: 2619000, MemBusWidth: 5120}}}
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	if err := resultsdir.WriteResults(a, recs, info); err != nil {
		t.Fatal(err)
	}
	for i := range recs {
		recs[i].Timing = &protocol.TimingResult{Reps: 3, MedianMS: recs[i].Timing.MedianMS / 2}
	}
	if err := resultsdir.WriteResults(b, recs, info); err != nil {
		t.Fatal(err)
	}
	var sets []*Set
	for _, d := range []string{a, b} {
		s, err := Load(d)
		if err != nil {
			t.Fatal(err)
		}
		sets = append(sets, s)
	}
	out := filepath.Join(dir, "rep")
	if err := Render(sets, out); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(md)
	// ratio = cuBLAS ms / ms: 0.01 / 0.03, and 1 for cuBLAS itself.
	for _, want := range []string{"| 1 | coarse_w32_g2_pf0 | 0.0300 | 0.333 |", "|  | cuBLAS | 0.0100 | 1.000 |", "## Side by side",
		"heat_coarse.png", "| tiled |", "| # | variant | median ms | ratio |"} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(text, "% cuBLAS") {
		t.Error("report still has a % cuBLAS column")
	}
	checkCharts(t, out, text)
}

// checkCharts checks that every chart report.md embeds exists as PNG and SVG and fits MaxChartPx.
func checkCharts(t *testing.T, out, md string) {
	t.Helper()
	n := 0
	for _, line := range strings.Split(md, "\n") {
		if i := strings.Index(line, "]("); strings.HasPrefix(line, "![") && i > 0 {
			png := strings.TrimSuffix(line[i+2:], ")")
			for _, f := range []string{png, strings.TrimSuffix(png, ".png") + ".svg"} {
				if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
					t.Errorf("chart %s missing: %v", f, err)
				}
			}
			if w, h := pngSize(t, filepath.Join(out, png)); w > MaxChartPx || h > MaxChartPx {
				t.Errorf("chart %s is %d×%d px, over %d", png, w, h, MaxChartPx)
			}
			n++
		}
	}
	if n == 0 {
		t.Error("report embeds no chart")
	}
}

// TestRenderManyVariants: a shape with more variants than TopBars gets a chart of the fastest
// TopBars (within MaxChartPx) and a table of all of them.
func TestRenderManyVariants(t *testing.T) {
	dir := t.TempDir()
	sh := protocol.Shape{M: 512, N: 512, K: 512}
	dev := &results.DeviceRef{Name: "Test GPU", UUID: "GPU-1"}
	recs := []results.Record{{Key: "c", Kind: results.KindCublas, Variant: results.CublasName, Shape: sh,
		Status: results.StatusOK, Device: dev, Timing: &protocol.TimingResult{Reps: 3, MedianMS: 0.05, Samples: []float64{0.05, 0.051, 0.049}}}}
	const n = 120
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("regtile_%03d", i)
		ms := 0.05 + 0.001*float64(i)
		recs = append(recs, results.Record{Key: name, Kind: results.KindTune, Variant: name, Family: "regtile",
			Params: fmt.Sprintf("A=%d B=%d", i%10, i/10), Shape: sh, Status: results.StatusOK, Device: dev,
			Timing: &protocol.TimingResult{Reps: 8, MedianMS: ms, Samples: []float64{ms, ms * 1.01, ms * 0.99, ms, ms * 1.02, ms, ms, ms * 0.98}}})
	}
	if err := resultsdir.WriteResults(dir, recs, results.RunInfo{}); err != nil {
		t.Fatal(err)
	}
	s, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "rep")
	if err := Render([]*Set{s, s}, out); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	text := string(md)
	if got := strings.Count(text, "| regtile_"); got != 3*n { // two ranked tables and the side-by-side one
		t.Errorf("tables list %d variant rows, want %d", got, 3*n)
	}
	checkCharts(t, out, text)
	svg, _ := os.ReadFile(filepath.Join(out, "set1_gflops_512x512x512.svg"))
	if !strings.Contains(string(svg), "30 fastest of 120") || strings.Contains(string(svg), ">regtile_030<") {
		t.Errorf("per-shape chart does not show only the %d fastest", TopBars)
	}
}
