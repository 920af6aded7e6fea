package report

import (
	"fmt"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"
)

func TestTickLabels(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want string
	}{
		{[]float64{0, 25000, 50000}, "0 25000 50000"},
		{[]float64{0, 0.25, 0.5, 0.75}, "0 0.25 0.5 0.75"},
		{[]float64{0.01, 0.02, 0.03}, "0.01 0.02 0.03"},
		{[]float64{-1, 0, 1}, "-1 0 1"},
		{[]float64{0.1 + 0.2, 0.6}, "0.3 0.6"}, // 0.30000000000000004 is 0.3 to the reader
		{[]float64{7500, 10000, 12500}, "7500 10000 12500"},
	} {
		if got := strings.Join(TickLabels(c.in), " "); got != c.want {
			t.Errorf("TickLabels(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}

// spurious matches a label with a decimal point and a trailing zero ("25000.00", "0.50").
var spurious = regexp.MustCompile(`\.\d*0$`)

func TestTicksHaveNoSpuriousDecimals(t *testing.T) {
	for _, r := range [][2]float64{{0, 51698}, {0, 100}, {0, 0.37}, {6454, 12571}, {3343, 5489}, {1e-3, 2.5}} {
		seen := map[string]bool{}
		for _, tk := range (niceTicks{}).Ticks(r[0], r[1]) {
			if tk.Label == "" {
				continue
			}
			if spurious.MatchString(tk.Label) || seen[tk.Label] {
				t.Errorf("range %v: tick label %q", r, tk.Label)
			}
			seen[tk.Label] = true
		}
		if len(seen) < 2 {
			t.Errorf("range %v: %d labelled ticks", r, len(seen))
		}
	}
}

func TestLogTicks(t *testing.T) {
	labels := func(lo, hi float64) string {
		var out []string
		for _, tk := range (logTicks{}).Ticks(lo, hi) {
			if tk.Label != "" {
				if spurious.MatchString(tk.Label) {
					t.Errorf("[%g, %g]: label %q", lo, hi, tk.Label)
				}
				out = append(out, tk.Label)
			}
		}
		return strings.Join(out, " ")
	}
	// One and a half decades: 1, 2, 5 of each (before, only 0.01 and 0.1 were labelled).
	if got := labels(0.006, 0.21); got != "0.01 0.02 0.05 0.1 0.2" {
		t.Errorf("0.006–0.21: %q", got)
	}
	if got := labels(0.03, 6000); got != "0.1 1 10 100 1000" {
		t.Errorf("0.03–6000: %q", got)
	}
	if got := labels(62, 95); got != "70 80 90" {
		t.Errorf("62–95 (no power of ten inside): %q", got)
	}
}

func TestWrapTitle(t *testing.T) {
	long := strings.Repeat("a long chart title word ", 12)
	w := 4 * vg.Inch
	got := wrapTitle(titleStyle, long, w)
	if !strings.Contains(got, "\n") {
		t.Fatalf("not wrapped: %q", got)
	}
	for _, line := range strings.Split(got, "\n") {
		if titleStyle.Width(line) > w {
			t.Errorf("line %q is %v wide, more than %v", line, titleStyle.Width(line), w)
		}
	}
}

// pngSize decodes a chart's size in pixels.
func pngSize(t *testing.T, path string) (int, int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cfg, err := png.DecodeConfig(f)
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Width, cfg.Height
}

// TestBarChartSize: a chart of TopBars variants fits MaxChartPx (the per-shape charts were
// 864×9851 px with all variants); more labels than fit are refused, not drawn unreadably tall.
func TestBarChartSize(t *testing.T) {
	dir := t.TempDir()
	mk := func(n, groups int) Bars {
		b := Bars{Title: "t", XLabel: "GFLOP/s"}
		for i := 0; i < n; i++ {
			b.Labels = append(b.Labels, fmt.Sprintf("regtile_128x256x16_w32_t8x16_p0_f1_s4_b%d", i))
		}
		for g := 0; g < groups; g++ {
			s := Series{Name: fmt.Sprintf("set %d", g)}
			for i := 0; i < n; i++ {
				y := float64(1000 * (n - i))
				s.Y, s.Lo, s.Hi = append(s.Y, y), append(s.Lo, 0.98*y), append(s.Hi, 1.01*y)
			}
			b.Groups = append(b.Groups, s)
		}
		b.Refs = []Ref{{Name: "cuBLAS 51698 GFLOP/s", Value: 51698}}
		return b
	}
	for _, groups := range []int{1, 2, 3} {
		file, err := mk(min(TopBars, BarsThatFit(groups)), groups).Draw(dir, fmt.Sprintf("top%d", groups))
		if err != nil {
			t.Fatalf("%d groups: %v", groups, err)
		}
		if w, h := pngSize(t, filepath.Join(dir, file)); w > MaxChartPx || h > MaxChartPx || h < 400 {
			t.Errorf("%d bars × %d groups: %d×%d px, want within %d", TopBars, groups, w, h, MaxChartPx)
		}
	}
	if BarsThatFit(1) < TopBars || BarsThatFit(3) < 10 {
		t.Errorf("BarsThatFit: %d for one group, %d for three", BarsThatFit(1), BarsThatFit(3))
	}
	if _, err := mk(364, 1).Draw(dir, "all"); err == nil || !strings.Contains(err.Error(), "TopBars") {
		t.Errorf("364 bars: %v, want a refusal naming TopBars", err)
	}
}

// TestHeatmapHasColourScale: the colour scale and its unit are drawn beside the cells.
func TestHeatmapHasColourScale(t *testing.T) {
	dir := t.TempDir()
	h := Heat{Title: "coarse", XLabel: "W", YLabel: "G", XTicks: []string{"8", "16"}, YTicks: []string{"2", "4"},
		Z: [][]float64{{1.3, 2.7}, {math.NaN(), 4.4}}, Format: "%.1f", Unit: "GFLOP/s scale"}
	file, err := h.Draw(dir, "heat")
	if err != nil {
		t.Fatal(err)
	}
	svg, err := os.ReadFile(filepath.Join(dir, "heat.svg"))
	if err != nil {
		t.Fatal(err)
	}
	// Cell labels are 1.3, 2.7, 4.4; the scale's ticks are whole numbers between them.
	for _, want := range []string{">GFLOP/s scale<", ">2<", ">4<", ">1.3<", ">4.4<"} {
		if !strings.Contains(string(svg), want) {
			t.Errorf("heatmap SVG lacks %q", want)
		}
	}
	if w, _ := pngSize(t, filepath.Join(dir, file)); w <= 7*dpi {
		t.Errorf("heatmap %d px wide: no room for its colour scale", w)
	}
	if textOn(color.Black) != color.White || textOn(color.White) != color.Black {
		t.Error("cell text must contrast with its cell")
	}
}

func TestSig(t *testing.T) {
	for v, want := range map[float64]string{5937.34: "5940", 0.012345: "0.0123", 14: "14.0", 2.658: "2.66", 123456: "123000"} {
		if got := Sig(v, 3); got != want {
			t.Errorf("Sig(%g, 3) = %q, want %q", v, got, want)
		}
	}
}

// TestLegendTellsSeriesApart: each series has its own legend entry and colour.
func TestLegendTellsSeriesApart(t *testing.T) {
	dir := t.TempDir()
	l := Line{Title: "t", XLabel: "N", YLabel: "ms", LogX: true, LogY: true, XTicks: []float64{512, 1024}}
	names := map[string]bool{}
	for i := 0; i < 7; i++ {
		n := fmt.Sprintf("series_%d", i)
		names[n] = true
		l.Series = append(l.Series, Series{Name: n, X: []float64{512, 1024}, Y: []float64{float64(i + 1), float64(2 * (i + 1))},
			Lo: []float64{float64(i) + 0.9, math.NaN()}, Hi: []float64{float64(i) + 1.1, math.NaN()}})
	}
	if _, err := l.Draw(dir, "line"); err != nil {
		t.Fatal(err)
	}
	svg, _ := os.ReadFile(filepath.Join(dir, "line.svg"))
	for n := range names {
		if !strings.Contains(string(svg), ">"+n+"<") {
			t.Errorf("legend lacks %s", n)
		}
	}
	seen := map[string]bool{}
	for i := range seriesColors {
		c := fmt.Sprint(colorOf(i))
		if seen[c] {
			t.Errorf("colour %d repeats %s", i, c)
		}
		seen[c] = true
	}
}
