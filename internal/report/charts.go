package report

import (
	"fmt"
	"image/color"
	"math"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Series is one line of a chart; Err (optional) is a symmetric error (one standard deviation).
type Series struct {
	Name string
	X, Y []float64
	Err  []float64
}

// Line is a chart of series over a numeric x axis.
type Line struct {
	Title, XLabel, YLabel string
	LogX, LogY            bool
	Series                []Series
	// XTicks, when set, labels exactly these x values (sizes that are powers of two).
	XTicks []float64
	// HLines are horizontal reference lines (a peak, cuBLAS).
	HLines []Ref
}

// Ref is a labelled reference value.
type Ref struct {
	Name  string
	Value float64
}

// Bars is a horizontal bar chart: one bar per label, sorted by the caller; Refs are vertical lines.
type Bars struct {
	Title, XLabel string
	Labels        []string
	// Groups holds one value per label per group (several result sets side by side); a NaN or
	// non-positive value draws no bar.
	Groups     []Series
	Refs       []Ref
	LogX       bool
	GroupNames []string
}

// Heat is a heatmap of Z[row][col] over two nominal parameters.
type Heat struct {
	Title, XLabel, YLabel string
	XTicks, YTicks        []string
	Z                     [][]float64 // NaN: no value
	// Format renders a cell's label.
	Format string
}

// Stacked is stacked horizontal bars: one bar per label, one segment per phase.
type Stacked struct {
	Title, XLabel string
	Labels        []string
	Phases        []string
	Values        [][]float64 // [phase][label]
}

const (
	chartW = 9 * vg.Inch
	chartH = 5.5 * vg.Inch
)

// save writes base.png and base.svg into dir and returns the PNG's file name.
func save(p *plot.Plot, dir, base string, w, h vg.Length) (string, error) {
	for _, ext := range []string{".png", ".svg"} {
		if err := p.Save(w, h, filepath.Join(dir, base+ext)); err != nil {
			return "", fmt.Errorf("saving chart %s%s: %w", base, ext, err)
		}
	}
	return base + ".png", nil
}

func newPlot(title string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = vg.Points(13)
	p.Legend.Top = true
	p.Legend.Left = true
	p.Add(plotter.NewGrid())
	return p
}

// errXY pairs points with error bars for plotter.NewYErrorBars.
type errXY struct {
	plotter.XYs
	plotter.YErrors
}

// Draw renders the line chart into dir as base.png/.svg.
func (l Line) Draw(dir, base string) (string, error) {
	p := newPlot(l.Title)
	p.X.Label.Text, p.Y.Label.Text = l.XLabel, l.YLabel
	if l.LogX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	if l.LogY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	if len(l.XTicks) > 0 {
		var ticks []plot.Tick
		for _, x := range l.XTicks {
			ticks = append(ticks, plot.Tick{Value: x, Label: fmt.Sprint(x)})
		}
		p.X.Tick.Marker = plot.ConstantTicks(ticks)
	}
	xmin, xmax := math.Inf(1), math.Inf(-1)
	for i, s := range l.Series {
		var pts plotter.XYs
		var errs plotter.YErrors
		for j := range s.X {
			y := s.Y[j]
			if math.IsNaN(y) || (l.LogY && y <= 0) {
				continue
			}
			pts = append(pts, plotter.XY{X: s.X[j], Y: y})
			xmin, xmax = math.Min(xmin, s.X[j]), math.Max(xmax, s.X[j])
			if s.Err != nil {
				lo := s.Err[j]
				if l.LogY && y-lo <= 0 {
					lo = y * 0.999 // a log axis cannot show a bar reaching zero
				}
				errs = append(errs, struct{ Low, High float64 }{lo, s.Err[j]})
			}
		}
		if len(pts) == 0 {
			continue
		}
		ln, sc, err := plotter.NewLinePoints(pts)
		if err != nil {
			return "", fmt.Errorf("chart %s: %w", base, err)
		}
		ln.Color = plotutil.Color(i)
		ln.Dashes = plotutil.Dashes(i / 7)
		ln.Width = vg.Points(1.5)
		sc.Color = plotutil.Color(i)
		sc.Shape = plotutil.Shape(i)
		p.Add(ln, sc)
		p.Legend.Add(s.Name, ln, sc)
		if s.Err != nil {
			eb, err := plotter.NewYErrorBars(errXY{pts, errs})
			if err != nil {
				return "", fmt.Errorf("chart %s: %w", base, err)
			}
			eb.Color = plotutil.Color(i)
			p.Add(eb)
		}
	}
	for i, r := range l.HLines {
		if math.IsInf(xmin, 0) || (l.LogY && r.Value <= 0) {
			continue
		}
		ln, err := plotter.NewLine(plotter.XYs{{X: xmin, Y: r.Value}, {X: xmax, Y: r.Value}})
		if err != nil {
			return "", err
		}
		ln.Color = color.Gray{Y: uint8(60 + 50*i)}
		ln.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
		ln.Width = vg.Points(1.5)
		p.Add(ln)
		p.Legend.Add(r.Name, ln)
	}
	return save(p, dir, base, chartW, chartH)
}

// Draw renders the bar chart; its height grows with the number of labels.
func (b Bars) Draw(dir, base string) (string, error) {
	p := newPlot(b.Title)
	p.X.Label.Text = b.XLabel
	if b.LogX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	p.Legend.Left = false
	n := len(b.Groups)
	// One band per label: 14 pt for a single set, 7 pt per bar when several sets share it.
	barW := vg.Points(14)
	if n > 1 {
		barW = vg.Points(7)
	}
	band := barW * vg.Length(max(n, 1))
	top := 0.0
	for _, g := range b.Groups {
		for _, v := range g.Y {
			if !math.IsNaN(v) {
				top = math.Max(top, v)
			}
		}
	}
	for _, r := range b.Refs {
		top = math.Max(top, r.Value)
	}
	if n > 1 && !b.LogX && top > 0 {
		p.X.Max = top * 1.4 // room on the right for the legend, clear of the bars
	}
	for gi, g := range b.Groups {
		vals := make(plotter.Values, len(b.Labels))
		for i := range vals {
			v := g.Y[i]
			if math.IsNaN(v) || v <= 0 {
				v = 0
				if b.LogX {
					v = 1e-9
				}
			}
			vals[i] = v
		}
		bc, err := plotter.NewBarChart(vals, barW)
		if err != nil {
			return "", fmt.Errorf("chart %s: %w", base, err)
		}
		bc.Horizontal = true
		bc.Color = plotutil.Color(gi)
		bc.LineStyle.Width = 0
		bc.Offset = barW * (vg.Length(gi) - vg.Length(n-1)/2)
		p.Add(bc)
		if n > 1 {
			p.Legend.Add(g.Name, bc)
		}
	}
	for i, r := range b.Refs {
		ln, err := plotter.NewLine(plotter.XYs{{X: r.Value, Y: -0.5}, {X: r.Value, Y: float64(len(b.Labels)) - 0.5}})
		if err != nil {
			return "", err
		}
		ln.Color = plotutil.Color(len(b.Groups) + i)
		ln.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
		ln.Width = vg.Points(2)
		p.Add(ln)
		p.Legend.Add(r.Name, ln)
	}
	p.NominalY(b.Labels...)
	h := max(vg.Length(len(b.Labels))*(band+vg.Points(6))+vg.Inch*1.5, 3*vg.Inch)
	// NominalY spaces labels one unit apart; the band must fit in one unit of the axis.
	if n > 1 {
		h = max(h, vg.Length(len(b.Labels))*(band+vg.Points(10))+vg.Inch*1.5)
	}
	return save(p, dir, base, chartW, h)
}

// heatGrid adapts Heat to plotter.GridXYZ.
type heatGrid struct{ z [][]float64 }

func (g heatGrid) Dims() (int, int)   { return len(g.z[0]), len(g.z) }
func (g heatGrid) Z(c, r int) float64 { return g.z[r][c] }
func (g heatGrid) X(c int) float64    { return float64(c) }
func (g heatGrid) Y(r int) float64    { return float64(r) }

// Draw renders the heatmap with each cell's value written on it.
func (h Heat) Draw(dir, base string) (string, error) {
	if len(h.Z) == 0 || len(h.Z[0]) == 0 {
		return "", fmt.Errorf("chart %s: empty heatmap", base)
	}
	p := newPlot(h.Title)
	p.X.Label.Text, p.Y.Label.Text = h.XLabel, h.YLabel
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, row := range h.Z {
		for _, v := range row {
			if !math.IsNaN(v) {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	if math.IsInf(lo, 0) {
		return "", fmt.Errorf("chart %s: no values", base)
	}
	if hi == lo {
		hi = lo + 1
	}
	pal := moreland.SmoothBlueRed()
	pal.SetMin(lo)
	pal.SetMax(hi)
	hm := plotter.NewHeatMap(heatGrid{h.Z}, pal.Palette(255))
	hm.Min, hm.Max = lo, hi
	hm.NaN = color.Gray{Y: 230}
	p.Add(hm)
	var xys plotter.XYs
	var labels []string
	for r, row := range h.Z {
		for c, v := range row {
			if math.IsNaN(v) {
				continue
			}
			xys = append(xys, plotter.XY{X: float64(c), Y: float64(r)})
			labels = append(labels, fmt.Sprintf(h.Format, v))
		}
	}
	lb, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: labels})
	if err != nil {
		return "", err
	}
	for i := range lb.TextStyle {
		lb.TextStyle[i].XAlign = draw.XCenter
		lb.TextStyle[i].YAlign = draw.YCenter
		lb.TextStyle[i].Font.Size = vg.Points(11)
	}
	p.Add(lb)
	p.NominalX(h.XTicks...)
	p.NominalY(h.YTicks...)
	return save(p, dir, base, 7*vg.Inch, 5*vg.Inch)
}

// Draw renders stacked horizontal bars.
func (s Stacked) Draw(dir, base string) (string, error) {
	p := newPlot(s.Title)
	p.X.Label.Text = s.XLabel
	p.Legend.Left = false
	var prev *plotter.BarChart
	for i, ph := range s.Phases {
		bc, err := plotter.NewBarChart(plotter.Values(s.Values[i]), vg.Points(14))
		if err != nil {
			return "", fmt.Errorf("chart %s: %w", base, err)
		}
		bc.Horizontal = true
		bc.Color = plotutil.Color(i)
		bc.LineStyle.Width = 0
		if prev != nil {
			bc.StackOn(prev)
		}
		p.Add(bc)
		p.Legend.Add(ph, bc)
		prev = bc
	}
	p.NominalY(s.Labels...)
	h := max(vg.Length(len(s.Labels))*vg.Points(20)+vg.Inch*1.5, 3*vg.Inch)
	return save(p, dir, base, chartW, h)
}
