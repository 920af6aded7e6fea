package report

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"tilegen/internal/protocol"
	"tilegen/internal/results"
	"tilegen/internal/stats"
)

// renderCompare draws the sets side by side on the shapes they share: the TopBars variants fastest
// in the first set, with each set's GFLOP/s and 95 % interval.
func renderCompare(b *strings.Builder, sets []*Set, out string) error {
	b.WriteString("## Side by side\n\n")
	type key struct {
		v  string
		sh protocol.Shape
	}
	ts := make([]map[key]*protocol.TimingResult, len(sets))
	for i, s := range sets {
		ts[i] = map[key]*protocol.TimingResult{}
		for _, r := range s.Records {
			if r.Status == results.StatusOK && r.Timing != nil && r.Timing.MedianMS > 0 {
				ts[i][key{r.Variant, r.Shape}] = r.Timing
			}
		}
	}
	for _, sh := range Shapes(sets[0].Records) {
		var names []string
		for _, r := range sets[0].Records {
			k := key{r.Variant, sh}
			if r.Shape != sh || ts[0][k] == nil {
				continue
			}
			all := true
			for i := 1; i < len(sets); i++ {
				all = all && ts[i][k] != nil
			}
			if all {
				names = append(names, r.Variant)
			}
		}
		if len(names) == 0 {
			continue
		}
		sort.SliceStable(names, func(i, j int) bool { return ts[0][key{names[i], sh}].MedianMS < ts[0][key{names[j], sh}].MedianMS })
		name := results.ShapeString(sh)
		shown := names[:min(len(names), TopBars, BarsThatFit(len(sets)))]
		title := "GFLOP/s side by side, " + name
		if len(shown) < len(names) {
			title = fmt.Sprintf("GFLOP/s side by side, %s: the %d fastest of %d in set 1", name, len(shown), len(names))
		}
		bars := Bars{Title: title, XLabel: "GFLOP/s (higher is better; whiskers: 95 % CI of the median)", Labels: shown}
		header := []string{"variant"}
		flops := results.Flops(sh)
		for i, s := range sets {
			g := Series{Name: fmt.Sprintf("set %d: %s", i+1, s.Name)}
			for _, n := range shown {
				t := ts[i][key{n, sh}]
				lo, hi := TimingCI(t)
				g.Y, g.Lo, g.Hi = append(g.Y, gflopsOf(flops, t.MedianMS)), append(g.Lo, gflopsOf(flops, hi)), append(g.Hi, gflopsOf(flops, lo))
			}
			bars.Groups = append(bars.Groups, g)
			header = append(header, fmt.Sprintf("%d: %s ms", i+1, s.Name))
		}
		header = append(header, "1 ms / 2 ms (> 1: set 2 faster)")
		file, err := bars.Draw(out, "compare_"+slug(name))
		if err != nil {
			return err
		}
		fmt.Fprintf(b, "### %s\n\n%s\n", name, Image("side by side "+name, file))
		var table [][]string
		for _, n := range names {
			row := []string{n}
			for j := range sets {
				row = append(row, MSf(ts[j][key{n, sh}].MedianMS))
			}
			row = append(row, F(ts[0][key{n, sh}].MedianMS/ts[1][key{n, sh}].MedianMS, 3))
			table = append(table, row)
		}
		b.WriteString(Table(header, table) + "\n")
	}
	return nil
}

// variantBars charts a shape's variants (sorted fastest first; the TopBars fastest when there are
// more) as GFLOP/s with each median's 95 % interval, and cuBLAS (median cub ms) as a line.
func variantBars(vs []Row, sh protocol.Shape, cub float64, set, out, base string) (string, error) {
	name := results.ShapeString(sh)
	flops := results.Flops(sh)
	shown := vs[:min(len(vs), TopBars)]
	title := fmt.Sprintf("GFLOP/s per variant, %s (%s)", name, set)
	if len(shown) < len(vs) {
		title = fmt.Sprintf("GFLOP/s of the %d fastest of %d variants, %s (%s)", len(shown), len(vs), name, set)
	}
	bars := Bars{Title: title, XLabel: "GFLOP/s (higher is better; whiskers: 95 % CI of the median)"}
	g := Series{Name: set}
	for _, r := range shown {
		lo, hi := TimingCI(r.Rec.Timing)
		bars.Labels = append(bars.Labels, r.Rec.Variant)
		g.Y, g.Lo, g.Hi = append(g.Y, gflopsOf(flops, r.MS())), append(g.Lo, gflopsOf(flops, hi)), append(g.Hi, gflopsOf(flops, lo))
	}
	bars.Groups = []Series{g}
	if cub > 0 {
		bars.Refs = []Ref{{Name: fmt.Sprintf("cuBLAS %.0f GFLOP/s", gflopsOf(flops, cub)), Value: gflopsOf(flops, cub)}}
	}
	return bars.Draw(out, base)
}

func gflopsOf(flops, ms float64) float64 {
	if !(ms > 0) {
		return math.NaN()
	}
	return flops / (ms * 1e6)
}

// TimingCI bounds a median time: the 95 % confidence interval of its samples, or the whole
// min–max range for records without samples (NaN, NaN for none).
func TimingCI(t *protocol.TimingResult) (lo, hi float64) {
	switch {
	case t == nil:
		return math.NaN(), math.NaN()
	case len(t.Samples) > 0:
		s := stats.Summarize(t.Samples)
		return s.Lo, s.Hi
	}
	return t.MinMS, t.MaxMS
}
