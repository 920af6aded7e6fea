package report

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Heat is a heatmap of Z[row][col] over two nominal parameters, with each cell's value written on
// it and a colour scale labelled Unit beside it.
type Heat struct {
	Title, XLabel, YLabel string
	XTicks, YTicks        []string
	Z                     [][]float64 // NaN: no value
	// Format renders a cell's label; Unit labels the colour scale.
	Format, Unit string
}

// heatGrid adapts Heat to plotter.GridXYZ.
type heatGrid struct{ z [][]float64 }

func (g heatGrid) Dims() (int, int)   { return len(g.z[0]), len(g.z) }
func (g heatGrid) Z(c, r int) float64 { return g.z[r][c] }
func (g heatGrid) X(c int) float64    { return float64(c) }
func (g heatGrid) Y(r int) float64    { return float64(r) }

// heatColors maps [lo, hi] onto the middle of Kindlmann's sequential, perceptually uniform map
// (higher is lighter), leaving out its ends: near-black hides the grid, white reads as no value.
func heatColors(lo, hi float64) palette.ColorMap {
	base := moreland.Kindlmann()
	base.SetMin(0)
	base.SetMax(1)
	return &innerMap{base: base, lo: lo, hi: hi}
}

type innerMap struct {
	base   palette.ColorMap
	lo, hi float64
}

const innerFrom, innerTo = 0.12, 0.85

func (m *innerMap) At(v float64) (color.Color, error) {
	if v < m.lo || v > m.hi || m.hi <= m.lo {
		return nil, fmt.Errorf("colour of %g outside [%g, %g]", v, m.lo, m.hi)
	}
	return m.base.At(innerFrom + (innerTo-innerFrom)*(v-m.lo)/(m.hi-m.lo))
}
func (m *innerMap) Min() float64       { return m.lo }
func (m *innerMap) Max() float64       { return m.hi }
func (m *innerMap) SetMin(v float64)   { m.lo = v }
func (m *innerMap) SetMax(v float64)   { m.hi = v }
func (m *innerMap) Alpha() float64     { return m.base.Alpha() }
func (m *innerMap) SetAlpha(a float64) { m.base.SetAlpha(a) }
func (m *innerMap) Palette(n int) palette.Palette {
	cs := make(colors, n)
	for i := range cs {
		cs[i], _ = m.At(m.lo + (m.hi-m.lo)*float64(i)/float64(max(n-1, 1)))
	}
	return cs
}

type colors []color.Color

func (c colors) Colors() []color.Color { return c }

// Draw renders the heatmap with its colour scale.
func (h Heat) Draw(dir, base string) (string, error) {
	if len(h.Z) == 0 || len(h.Z[0]) == 0 {
		return "", fmt.Errorf("chart %s: empty heatmap", base)
	}
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
		lo, hi = lo-0.5, hi+0.5
	}
	cmap := heatColors(lo, hi)
	f := newFigure(h.Title)
	p := f.p
	p.X.Label.Text, p.Y.Label.Text = h.XLabel, h.YLabel
	hm := plotter.NewHeatMap(heatGrid{h.Z}, cmap.Palette(255))
	hm.Min, hm.Max = lo, hi
	hm.NaN = color.Gray{Y: 230}
	p.Add(hm)
	var xys plotter.XYs
	var labels []string
	var colors []color.Color
	for r, row := range h.Z {
		for c, v := range row {
			if math.IsNaN(v) {
				continue
			}
			xys = append(xys, plotter.XY{X: float64(c), Y: float64(r)})
			labels = append(labels, fmt.Sprintf(h.Format, v))
			cell, err := cmap.At(v)
			if err != nil {
				return "", fmt.Errorf("chart %s: %w", base, err)
			}
			colors = append(colors, textOn(cell))
		}
	}
	lb, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: labels})
	if err != nil {
		return "", fmt.Errorf("chart %s: %w", base, err)
	}
	for i := range lb.TextStyle {
		lb.TextStyle[i].XAlign = draw.XCenter
		lb.TextStyle[i].YAlign = draw.YCenter
		lb.TextStyle[i].Font.Size = vg.Points(11)
		lb.TextStyle[i].Color = colors[i]
	}
	p.Add(lb)
	p.NominalX(h.XTicks...)
	p.NominalY(h.YTicks...)
	f.side, f.sideW = colorScale(cmap, h.Unit), 1.3*vg.Inch
	return f.save(dir, base, 7*vg.Inch, 5*vg.Inch)
}

// colorScale is a vertical colour bar with its axis, for the side of a heatmap.
func colorScale(cmap palette.ColorMap, unit string) *plot.Plot {
	cb := plot.New()
	cb.HideX()
	cb.Y.Label.Text = unit
	cb.Y.Tick.Marker = niceTicks{}
	cb.Add(&plotter.ColorBar{ColorMap: cmap, Vertical: true})
	return cb
}

// textOn picks black or white text for legibility on a cell of colour c.
func textOn(c color.Color) color.Color {
	r, g, b, _ := c.RGBA()
	if 0.299*float64(r)+0.587*float64(g)+0.114*float64(b) > 0.5*0xffff {
		return color.Black
	}
	return color.White
}
