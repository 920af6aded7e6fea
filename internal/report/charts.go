package report

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Series is one line of a chart, or one group of bars. Lo and Hi (optional, same length as Y)
// bound each value's spread — a confidence interval, min–max, or mean ± standard deviation, as the
// chart's caption says; a NaN bound draws no error bar.
type Series struct {
	Name   string
	X, Y   []float64
	Lo, Hi []float64
	// Dashed draws a line chart's series dashed, to show it over another it coincides with.
	Dashed bool
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
	// Points draws each series as points only (a scatter), for x values that are not a sequence.
	Points bool
}

// Ref is a labelled reference value.
type Ref struct {
	Name  string
	Value float64
}

// Bars is a horizontal bar chart: one band per label, the first label at the top (callers sort);
// Refs are vertical lines.
type Bars struct {
	Title, XLabel string
	Labels        []string
	// Groups holds one value per label per group (several variants or result sets side by side,
	// the first group on top in each band); a NaN or non-positive value draws no bar.
	Groups []Series
	Refs   []Ref
	LogX   bool
}

// Stacked is stacked horizontal bars: one bar per label (the first at the top), one segment per
// phase. Percent draws each bar as shares of its total (the totals go into the labels), so that
// bars of very different lengths still show where their time goes.
type Stacked struct {
	Title, XLabel string
	Labels        []string
	Phases        []string
	Values        [][]float64 // [phase][label]
	Percent       bool
	// Unit names the totals in Percent mode's labels ("ms").
	Unit string
}

// palette tells up to ten series apart (Tableau 10); lines cycle through dash patterns beyond.
var seriesColors = []color.Color{
	rgb(0x4e79a7), rgb(0xf28e2b), rgb(0xe15759), rgb(0x76b7b2), rgb(0x59a14f),
	rgb(0xedc948), rgb(0xb07aa1), rgb(0xff9da7), rgb(0x9c755f), rgb(0xbab0ac),
}

func rgb(v uint32) color.Color {
	return color.RGBA{R: uint8(v >> 16), G: uint8(v >> 8), B: uint8(v), A: 255}
}

func colorOf(i int) color.Color { return seriesColors[i%len(seriesColors)] }

var refColor = color.Gray{Y: 40}

// Draw renders the line chart into dir as base.png/.svg.
func (l Line) Draw(dir, base string) (string, error) {
	f := newFigure(l.Title)
	p := f.p
	p.X.Label.Text, p.Y.Label.Text = l.XLabel, l.YLabel
	if l.LogX {
		p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, logTicks{}
	}
	if l.LogY {
		p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, logTicks{}
	}
	if len(l.XTicks) > 0 {
		labels := TickLabels(l.XTicks)
		var ticks []plot.Tick
		for i, x := range l.XTicks {
			ticks = append(ticks, plot.Tick{Value: x, Label: labels[i]})
		}
		p.X.Tick.Marker = plot.ConstantTicks(ticks)
	}
	xmin, xmax := math.Inf(1), math.Inf(-1)
	for i, s := range l.Series {
		var pts plotter.XYs
		var errs plotter.YErrors
		hasErr := false
		for j := range s.X {
			y := s.Y[j]
			if math.IsNaN(y) || (l.LogY && y <= 0) { // no measurement, or not on a log axis
				continue
			}
			pts = append(pts, plotter.XY{X: s.X[j], Y: y})
			xmin, xmax = math.Min(xmin, s.X[j]), math.Max(xmax, s.X[j])
			lo, hi := bounds(s, j)
			if l.LogY && lo <= 0 {
				lo = y // a log axis cannot show a bar reaching zero
			}
			hasErr = hasErr || lo < y || hi > y
			errs = append(errs, struct{ Low, High float64 }{y - lo, hi - y})
		}
		if len(pts) == 0 {
			continue
		}
		ln, sc, err := plotter.NewLinePoints(pts)
		if err != nil {
			return "", fmt.Errorf("chart %s: %w", base, err)
		}
		ln.Color, sc.Color = colorOf(i), colorOf(i)
		ln.Dashes = plotutil.Dashes(i / len(seriesColors))
		if s.Dashed {
			ln.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		}
		ln.Width = vg.Points(1.5)
		sc.Shape = plotutil.Shape(i)
		sc.Radius = vg.Points(3)
		if l.Points {
			p.Add(sc)
			f.legend.Add(s.Name, sc)
		} else {
			p.Add(ln, sc)
			f.legend.Add(s.Name, ln, sc)
		}
		if hasErr {
			eb, err := plotter.NewYErrorBars(struct {
				plotter.XYs
				plotter.YErrors
			}{pts, errs})
			if err != nil {
				return "", fmt.Errorf("chart %s: %w", base, err)
			}
			eb.Color = colorOf(i)
			eb.LineStyle.Width = vg.Points(1)
			p.Add(eb)
		}
	}
	for i, r := range l.HLines {
		if math.IsInf(xmin, 0) || (l.LogY && r.Value <= 0) {
			continue
		}
		ln, err := plotter.NewLine(plotter.XYs{{X: xmin, Y: r.Value}, {X: xmax, Y: r.Value}})
		if err != nil {
			return "", fmt.Errorf("chart %s: %w", base, err)
		}
		ln.Color = color.Gray{Y: uint8(40 + 50*i)}
		ln.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
		ln.Width = vg.Points(1.5)
		p.Add(ln)
		f.legend.Add(r.Name, ln)
	}
	return f.save(dir, base, chartW, chartH)
}

// bounds gives a series' spread at j (the value itself where it has none).
func bounds(s Series, j int) (float64, float64) {
	lo, hi := s.Y[j], s.Y[j]
	if j < len(s.Lo) && !math.IsNaN(s.Lo[j]) {
		lo = s.Lo[j]
	}
	if j < len(s.Hi) && !math.IsNaN(s.Hi[j]) {
		hi = s.Hi[j]
	}
	return lo, hi
}

// barLayout is the thickness of one bar, the height of one label's band and of the whole chart for
// a number of labels of groups bars each; an error when that is taller than MaxChartPx.
func barLayout(labels, groups int) (bar, band, height vg.Length, err error) {
	bar, band = barBand(groups)
	// Title, axis and margins take about an inch and a half.
	height = max(vg.Length(labels)*band+1.5*vg.Inch, 3*vg.Inch)
	if height > maxLen {
		return 0, 0, 0, fmt.Errorf("%d labels × %d bars need %.0f px, more than %d: chart fewer (TopBars, BarsThatFit) or split",
			labels, groups, float64(height)*dpi/float64(vg.Inch), MaxChartPx)
	}
	return bar, band, height, nil
}

func barBand(groups int) (bar, band vg.Length) {
	if groups <= 1 {
		return vg.Points(14), vg.Points(20)
	}
	bar = vg.Points(max(4, min(12, 36/float64(groups))))
	return bar, bar*vg.Length(groups) + vg.Points(10)
}

// BarsThatFit is how many labels of groups bars each a chart holds within MaxChartPx.
func BarsThatFit(groups int) int {
	_, band := barBand(groups)
	return int((maxLen - 1.5*vg.Inch) / band)
}

// Draw renders the bar chart; its height grows with the number of labels, up to MaxChartPx.
func (b Bars) Draw(dir, base string) (string, error) {
	n := len(b.Groups)
	barW, _, h, err := barLayout(len(b.Labels), n)
	if err != nil {
		return "", fmt.Errorf("chart %s: %w", base, err)
	}
	f := newFigure(b.Title)
	f.barGrid()
	p := f.p
	p.X.Label.Text = b.XLabel
	if b.LogX {
		p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, logTicks{}
	}
	if !b.LogX {
		p.X.Min = 0
	}
	rows := len(b.Labels)
	for gi, g := range b.Groups {
		vals := make(plotter.Values, rows)
		for i := range vals {
			v := g.Y[rows-1-i] // the first label at the top
			if math.IsNaN(v) || v <= 0 {
				v = 0
				if b.LogX {
					v = math.SmallestNonzeroFloat64
				}
			}
			vals[i] = v
		}
		bc, err := plotter.NewBarChart(vals, barW)
		if err != nil {
			return "", fmt.Errorf("chart %s: %w", base, err)
		}
		bc.Horizontal = true
		bc.Color = colorOf(gi)
		bc.LineStyle.Width = 0
		off := barW * (vg.Length(n-1)/2 - vg.Length(gi)) // the first group on top
		bc.Offset = off
		p.Add(bc)
		if n > 1 {
			f.legend.Add(g.Name, bc)
		}
		wh := whiskers{off: off}
		for i := range b.Labels {
			if lo, hi := bounds(g, i); lo < hi && g.Y[i] > 0 {
				wh.rows = append(wh.rows, whisker{y: float64(rows - 1 - i), lo: lo, hi: hi})
			}
		}
		if len(wh.rows) > 0 {
			p.Add(wh)
		}
	}
	for i, r := range b.Refs {
		ln, err := plotter.NewLine(plotter.XYs{{X: r.Value, Y: -0.5}, {X: r.Value, Y: float64(rows) - 0.5}})
		if err != nil {
			return "", fmt.Errorf("chart %s: %w", base, err)
		}
		ln.Color = refColor
		ln.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
		if i > 0 {
			ln.Dashes = []vg.Length{vg.Points(2), vg.Points(2)}
		}
		ln.Width = vg.Points(2)
		p.Add(ln)
		f.legend.Add(r.Name, ln)
	}
	p.NominalY(reversed(b.Labels)...)
	p.Y.Tick.Label.Font.Size = vg.Points(10)
	return f.save(dir, base, chartW, h)
}

func reversed(xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[len(xs)-1-i] = x
	}
	return out
}

// whiskers draw horizontal error bars at a bar chart's offset (plotter.XErrorBars cannot be
// offset by a length, which grouped bars need).
type whiskers struct {
	rows []whisker
	off  vg.Length
}

type whisker struct{ y, lo, hi float64 }

func (w whiskers) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	sty := draw.LineStyle{Color: color.Black, Width: vg.Points(1)}
	capH := vg.Points(3)
	for _, r := range w.rows {
		y := trY(r.y) + w.off
		x0, x1 := trX(r.lo), trX(r.hi)
		c.StrokeLine2(sty, x0, y, x1, y)
		c.StrokeLine2(sty, x0, y-capH, x0, y+capH)
		c.StrokeLine2(sty, x1, y-capH, x1, y+capH)
	}
}

func (w whiskers) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax = math.Inf(1), math.Inf(-1)
	ymin, ymax = math.Inf(1), math.Inf(-1)
	for _, r := range w.rows {
		xmin, xmax = math.Min(xmin, r.lo), math.Max(xmax, r.hi)
		ymin, ymax = math.Min(ymin, r.y), math.Max(ymax, r.y)
	}
	return
}

// Draw renders stacked horizontal bars.
func (s Stacked) Draw(dir, base string) (string, error) {
	_, _, h, err := barLayout(len(s.Labels), 1)
	if err != nil {
		return "", fmt.Errorf("chart %s: %w", base, err)
	}
	f := newFigure(s.Title)
	f.barGrid()
	p := f.p
	p.X.Label.Text = s.XLabel
	p.X.Min = 0
	rows := len(s.Labels)
	totals := make([]float64, rows)
	for _, ph := range s.Values {
		for i, v := range ph {
			totals[i] += v
		}
	}
	labels := append([]string(nil), s.Labels...)
	if s.Percent {
		p.X.Max = 100
		for i := range labels {
			labels[i] += fmt.Sprintf(" (%s %s)", Sig(totals[i], 3), s.Unit)
		}
	}
	var prev *plotter.BarChart
	for i, ph := range s.Phases {
		vals := make(plotter.Values, rows)
		for j := range vals {
			v := s.Values[i][rows-1-j]
			if s.Percent && totals[rows-1-j] > 0 {
				v = 100 * v / totals[rows-1-j]
			}
			vals[j] = v
		}
		bc, err := plotter.NewBarChart(vals, vg.Points(14))
		if err != nil {
			return "", fmt.Errorf("chart %s: %w", base, err)
		}
		bc.Horizontal = true
		bc.Color = colorOf(i)
		bc.LineStyle.Width = 0
		if prev != nil {
			bc.StackOn(prev)
		}
		p.Add(bc)
		f.legend.Add(ph, bc)
		prev = bc
	}
	p.NominalY(reversed(labels)...)
	return f.save(dir, base, chartW, h)
}
