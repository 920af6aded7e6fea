package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"

	"tilegen/internal/protocol"
	"tilegen/internal/report"
	"tilegen/internal/results"
)

// hybridResult is result.json of a hybrid run.
type hybridResult struct {
	Device  *protocol.Device         `json:"device"`
	Shape   protocol.Shape           `json:"shape"`
	Variant string                   `json:"variant"`
	Rows    []*protocol.HybridResult `json:"rows"`
}

// drawHybrid charts a sweep into dir as hybrid.png and hybrid.svg: the GPU part, the CPU part and
// the overall time against F, the overall time with the range of its runs, the all-GPU time as a
// reference line. The time axis is logarithmic: the CPU part grows by orders of magnitude while
// the GPU part moves by a few percent. F = 0 has no CPU part, so no CPU point.
func drawHybrid(dir string, r hybridResult) (string, error) {
	l := report.Line{
		Title: fmt.Sprintf("hybrid %s (%s): time against CPU rows F; whiskers: min–max of the runs",
			results.ShapeString(r.Shape), r.Variant),
		XLabel: "F (rows of C computed on the CPU)", YLabel: "ms (log scale)", LogY: true,
	}
	gpu := report.Series{Name: "GPU part (copies + kernel)"}
	cpu := report.Series{Name: "CPU part (dashed: under overall once F > 0)", Dashed: true}
	all := report.Series{Name: "overall (both parts, wall clock)"}
	base := math.NaN()
	for _, x := range r.Rows {
		f := float64(x.CPURows)
		if x.CPURows == 0 {
			base = x.OverallMS
		}
		gpu.X, gpu.Y = append(gpu.X, f), append(gpu.Y, x.GPUMS)
		cpu.X, cpu.Y = append(cpu.X, f), append(cpu.Y, x.CPUMS)
		lo, hi := math.NaN(), math.NaN()
		for i, s := range x.OverallSamples {
			if i == 0 {
				lo, hi = s, s
			}
			lo, hi = math.Min(lo, s), math.Max(hi, s)
		}
		all.X, all.Y, all.Lo, all.Hi = append(all.X, f), append(all.Y, x.OverallMS), append(all.Lo, lo), append(all.Hi, hi)
	}
	l.Series = []report.Series{gpu, all, cpu}
	if !math.IsNaN(base) {
		l.HLines = []report.Ref{{Name: fmt.Sprintf("all-GPU overall %s ms", report.Sig(base, 3)), Value: base}}
	}
	return l.Draw(dir, "hybrid")
}

// renderHybrid redraws dir's chart from its result.json (no GPU).
func renderHybrid(dir string, stdout io.Writer) error {
	if dir == "" {
		return fmt.Errorf("hybrid --render-only: want --out DIR holding result.json")
	}
	path := filepath.Join(dir, "result.json")
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("hybrid --render-only: %w", err)
	}
	var r hybridResult
	if err := json.Unmarshal(b, &r); err != nil {
		return fmt.Errorf("hybrid --render-only: %s: %w", path, err)
	}
	if len(r.Rows) == 0 {
		return fmt.Errorf("hybrid --render-only: %s has no rows", path)
	}
	file, err := drawHybrid(dir, r)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s\n", filepath.Join(dir, file))
	return nil
}
