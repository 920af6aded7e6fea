package report

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Chart sizes. PNGs are drawn at 96 dpi, so 9 inches is 864 pixels.
const (
	chartW = 9 * vg.Inch
	chartH = 5.5 * vg.Inch
	dpi    = 96
	// MaxChartPx bounds both sides of every chart, in PNG pixels: a chart taller than a screen
	// is not read. Bar charts of many variants show their top entries (see TopBars).
	MaxChartPx = 1600
	// TopBars is how many variants a per-shape bar chart shows (the fastest; the tables list all).
	TopBars = 30
)

// sideGap separates a colour bar's axis from the data.
const sideGap = vg.Length(18)

// maxLen is MaxChartPx in vg lengths.
const maxLen = vg.Length(MaxChartPx) * vg.Inch / dpi

var (
	titleStyle  = textStyle(13)
	legendStyle = textStyle(11)
)

func textStyle(size vg.Length) text.Style {
	return text.Style{Font: font.From(plot.DefaultFont, size), Handler: plot.DefaultTextHandler,
		XAlign: draw.XCenter, YAlign: draw.YTop}
}

// figure is a plot laid out with its title across the whole width and its legend (or a heatmap's
// colour bar) to the right of the data, never over it. Width grows with the legend, up to maxLen.
type figure struct {
	p      *plot.Plot
	title  string
	legend plot.Legend
	// side, when set, is drawn in a sideW-wide column right of the data area, spanning the data
	// area's height (a colour bar).
	side  *plot.Plot
	sideW vg.Length
	grid  *plotter.Grid
}

func newFigure(title string) *figure {
	p := plot.New()
	grid := plotter.NewGrid()
	p.Add(grid)
	p.X.Tick.Marker = niceTicks{}
	p.Y.Tick.Marker = niceTicks{}
	leg := plot.NewLegend()
	leg.TextStyle = legendStyle
	leg.TextStyle.XAlign, leg.TextStyle.YAlign = draw.XLeft, draw.YBottom
	leg.Top, leg.Left = true, true
	leg.Padding = vg.Points(2)
	return &figure{p: p, title: title, legend: leg, grid: grid}
}

// barGrid keeps only the vertical grid lines: horizontal ones would cut through the bars.
func (f *figure) barGrid() { f.grid.Horizontal.Color = nil }

// legendWidth is the room the legend takes right of the data area (0 without entries).
func (f *figure) legendWidth() vg.Length {
	c := draw.Canvas{Rectangle: vg.Rectangle{Max: vg.Point{X: maxLen, Y: maxLen}}}
	w := f.legend.Rectangle(c).Size().X
	if w == 0 {
		return 0
	}
	return w + vg.Points(16)
}

// wrapTitle breaks a title at spaces so that no line is wider than w.
func wrapTitle(sty text.Style, title string, w vg.Length) string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(title) {
		if line != "" && sty.Width(line+" "+word) > w {
			lines = append(lines, line)
			line = word
			continue
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	return strings.Join(append(lines, line), "\n")
}

// draw lays the figure out on c.
func (f *figure) draw(c draw.Canvas) {
	c.SetColor(color.White)
	c.Fill(c.Rectangle.Path())
	pad := vg.Points(6)
	c = draw.Crop(c, pad, -pad, pad, -pad)
	if f.title != "" {
		t := wrapTitle(titleStyle, f.title, c.Size().X)
		c.FillText(titleStyle, vg.Point{X: c.Center().X, Y: c.Max.Y}, t)
		c.Max.Y -= titleStyle.Height(t) + vg.Points(6)
	}
	right := f.legendWidth()
	if f.side != nil {
		right += f.sideW + sideGap
	}
	data := draw.Crop(c, 0, -right, 0, 0)
	dc := f.drawPlot(data)
	if f.side != nil {
		sc := draw.Crop(c, c.Size().X-right+sideGap, 0, 0, 0)
		sc.Min.Y, sc.Max.Y = dc.Min.Y, dc.Max.Y
		f.side.Draw(sc)
	}
	if f.legendWidth() > 0 {
		lc := draw.Crop(c, c.Size().X-f.legendWidth()+vg.Points(12), 0, 0, 0)
		lc.Max.Y = dc.Max.Y
		f.legend.Draw(lc)
	}
}

// drawPlot draws the plot into c with its axis labels centred on the data area, and returns the
// data area. gonum centres a label's glyph box on the axis' linear midpoint, which on a log axis
// spanning decades lies near its end and wastes a band of the chart, so the labels are drawn here.
func (f *figure) drawPlot(c draw.Canvas) draw.Canvas {
	xl, yl := f.p.X.Label, f.p.Y.Label
	defer func() { f.p.X.Label.Text, f.p.Y.Label.Text = xl.Text, yl.Text }()
	f.p.X.Label.Text, f.p.Y.Label.Text = "", ""
	inner := c
	ysty := yl.TextStyle
	ysty.Rotation += math.Pi / 2
	ysty.XAlign, ysty.YAlign = draw.XCenter, draw.YTop
	if yl.Text != "" {
		inner.Min.X += yl.TextStyle.Height(yl.Text) + yl.Padding
	}
	xsty := xl.TextStyle
	xsty.XAlign, xsty.YAlign = draw.XCenter, draw.YBottom
	if xl.Text != "" {
		inner.Min.Y += xl.TextStyle.Height(xl.Text) + xl.Padding
	}
	f.p.Draw(inner)
	dc := f.p.DataCanvas(inner)
	if yl.Text != "" {
		c.FillText(ysty, vg.Point{X: c.Min.X, Y: dc.Center().Y}, yl.Text)
	}
	if xl.Text != "" {
		c.FillText(xsty, vg.Point{X: dc.Center().X, Y: c.Min.Y}, xl.Text)
	}
	return dc
}

// size is the figure's width and height for a data area of w × h.
func (f *figure) size(w, h vg.Length) (vg.Length, vg.Length) {
	if f.side != nil {
		w += f.sideW + sideGap
	}
	return min(w+f.legendWidth(), maxLen), min(h, maxLen)
}

// save writes base.png and base.svg into dir (data area w × h) and returns the PNG's file name.
func (f *figure) save(dir, base string, w, h vg.Length) (string, error) {
	w, h = f.size(w, h)
	for _, ext := range []string{"png", "svg"} {
		c, err := draw.NewFormattedCanvas(w, h, ext)
		if err != nil {
			return "", fmt.Errorf("chart %s.%s: %w", base, ext, err)
		}
		f.draw(draw.New(c))
		if err := writeTo(filepath.Join(dir, base+"."+ext), c); err != nil {
			return "", fmt.Errorf("chart %s.%s: %w", base, ext, err)
		}
	}
	return base + ".png", nil
}

func writeTo(path string, c vg.CanvasWriterTo) error {
	file, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := c.WriteTo(file); err != nil {
		file.Close()
		return err
	}
	return file.Close()
}

// TickLabels formats axis values with the fewest decimals that still give each value exactly
// (25000, not 25000.00; 0.25, not 0.2), and "0" for zero.
func TickLabels(vals []float64) []string {
	scale := 0.0
	for _, v := range vals {
		scale = math.Max(scale, math.Abs(v))
	}
	out := make([]string, len(vals))
	for d := 0; d <= 10; d++ {
		exact := true
		for i, v := range vals {
			s := strconv.FormatFloat(v, 'f', d, 64)
			if s == "-0" || strings.Trim(s, "-0.") == "" {
				s = "0"
			}
			back, _ := strconv.ParseFloat(s, 64)
			exact = exact && math.Abs(back-v) <= 1e-9*math.Max(scale, 1e-300)
			out[i] = s
		}
		if exact {
			break
		}
	}
	for i, l := range out {
		if strings.Contains(l, ".") {
			out[i] = strings.TrimRight(strings.TrimRight(l, "0"), ".")
		}
	}
	return out
}

// niceTicks are gonum's default tick positions with TickLabels' labels.
type niceTicks struct{}

func (niceTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	var vals []float64
	for _, t := range ts {
		if t.Label != "" {
			vals = append(vals, t.Value)
		}
	}
	labels := TickLabels(vals)
	for i, j := 0, 0; i < len(ts); i++ {
		if ts[i].Label != "" {
			ts[i].Label = labels[j]
			j++
		}
	}
	return ts
}

// logTicks label 1, 2 and 5 of each decade when the axis spans up to three decades (1, 2, 3
// and 5 up to one decade), else the powers of ten; the other integers of a decade are minor ticks.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if lo <= 0 || hi <= lo {
		return nil
	}
	decades := math.Log10(hi / lo)
	major := map[int]bool{1: true}
	switch {
	case decades <= 1.2:
		major = map[int]bool{1: true, 2: true, 3: true, 5: true}
	case decades <= 3:
		major = map[int]bool{1: true, 2: true, 5: true}
	}
	var ts []plot.Tick
	labelled := 0
	for e := int(math.Floor(math.Log10(lo))); e <= int(math.Ceil(math.Log10(hi))); e++ {
		for m := 1; m <= 9; m++ {
			v := float64(m) * math.Pow10(e)
			if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
				continue
			}
			t := plot.Tick{Value: v}
			if major[m] {
				t.Label = strconv.FormatFloat(v, 'f', max(0, -e), 64)
				labelled++
			}
			ts = append(ts, t)
		}
	}
	if labelled < 2 { // less than a decade between powers: label every tick
		for i := range ts {
			e := int(math.Floor(math.Log10(ts[i].Value) + 1e-9))
			ts[i].Label = strconv.FormatFloat(ts[i].Value, 'f', max(0, -e), 64)
		}
	}
	return ts
}
