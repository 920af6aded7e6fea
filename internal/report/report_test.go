package report

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tilegen/internal/orchestrator"
	"tilegen/internal/protocol"
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
	dev := &orchestrator.DeviceRef{Name: "Test GPU", UUID: "GPU-1"}
	mk := func(kind, name, fam, params string, ms float64) orchestrator.Record {
		return orchestrator.Record{Key: name, Kind: kind, Variant: name, Family: fam, Params: params, Shape: sh,
			Status: orchestrator.StatusOK, Device: dev,
			Attributes: &protocol.Attributes{Blocks: 256, BlocksPerSM: 2, Waves: 1},
			Timing:     &protocol.TimingResult{Reps: 3, MedianMS: ms}}
	}
	recs := []orchestrator.Record{
		mk(orchestrator.KindCublas, orchestrator.CublasName, "", "", 0.01),
		mk(orchestrator.KindTune, "coarse_w16_g2_pf0", "coarse", "W=16 G=2 PF=0", 0.05),
		mk(orchestrator.KindTune, "coarse_w16_g4_pf0", "coarse", "W=16 G=4 PF=0", 0.04),
		mk(orchestrator.KindTune, "coarse_w32_g2_pf0", "coarse", "W=32 G=2 PF=0", 0.03),
		mk(orchestrator.KindTune, "naive_16x16", "naive", "BX=16 BY=16", 0.2),
	}
	Tiles["coarse_w16_g2_pf0"] = [2]int{16, 32}
	info := orchestrator.RunInfo{Devices: []protocol.Device{{Name: "Test GPU", ComputeCapability: "9.0", SMs: 132,
		ClockKHz: 1980000, MemClockKHz: 2619000, MemBusWidth: 5120}}}
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	if err := orchestrator.WriteResults(a, recs, info); err != nil {
		t.Fatal(err)
	}
	for i := range recs {
		recs[i].Timing = &protocol.TimingResult{Reps: 3, MedianMS: recs[i].Timing.MedianMS / 2}
	}
	if err := orchestrator.WriteResults(b, recs, info); err != nil {
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
	for _, want := range []string{"| 1 | coarse_w32_g2_pf0 |", "cuBLAS", "## Side by side", "heat_coarse.png", "| tiled |"} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	for _, line := range strings.Split(text, "\n") {
		if i := strings.Index(line, "]("); strings.HasPrefix(line, "![") && i > 0 {
			png := strings.TrimSuffix(line[i+2:], ")")
			for _, f := range []string{png, strings.TrimSuffix(png, ".png") + ".svg"} {
				if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
					t.Errorf("chart %s missing: %v", f, err)
				}
			}
		}
	}
}
