// Package report renders result sets (a tune sweep, a study) into a Markdown report with charts
// drawn by gonum.org/v1/plot, each saved as PNG and SVG beside report.md and embedded by relative
// link: GFLOP/s of the TopBars fastest variants per shape (cuBLAS as a line, whiskers the 95 %
// confidence interval of each median), heatmaps of a family over its first two parameters with
// their colour scale, time breakdowns as shares of each run, and the ranked table of every variant
// with the analysis columns (modelled traffic, intensity, roofline position, waves) and ratio =
// cuBLAS median time / the variant's (> 1: faster than cuBLAS). Two or more sets are also drawn
// side by side (before/after, two GPUs).
//
// Every chart keeps its legend (or colour scale) beside the data, labels ticks without spurious
// decimals, and stays within MaxChartPx on both sides.
package report

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"tilegen/internal/analysis"
	"tilegen/internal/protocol"
	"tilegen/internal/results"
)

// Set is one results directory.
type Set struct {
	Name    string
	Records []results.Record
	Info    results.RunInfo
	Peaks   analysis.Peaks
	SMs     int
	// Breakdowns are the end-to-end samples of breakdown.jsonl, when present.
	Breakdowns []Breakdown
}

// Breakdown is one line of breakdown.jsonl: a (variant or CPU kernel, shape) and its phase samples.
type Breakdown struct {
	Name  string                   `json:"name"`
	Shape protocol.Shape           `json:"shape"`
	Where string                   `json:"where"` // gpu or cpu
	Phase protocol.BreakdownResult `json:"phase"`
	Note  string                   `json:"note,omitempty"`
}

// Load reads a results directory.
func Load(dir string) (*Set, error) {
	recs, info, err := results.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	s := &Set{Name: filepath.Base(filepath.Clean(dir)), Records: recs, Info: info}
	if len(info.Devices) > 0 {
		d := info.Devices[0]
		s.Peaks = analysis.TheoreticalPeaks(d.ComputeCapability, d.SMs, d.ClockKHz, d.MemClockKHz, d.MemBusWidth)
		s.SMs = d.SMs
	}
	if s.Breakdowns, err = ReadBreakdowns(filepath.Join(dir, "breakdown.jsonl")); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	return s, nil
}

// ReadBreakdowns reads breakdown.jsonl.
func ReadBreakdowns(path string) ([]Breakdown, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Breakdown
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var b Breakdown
		if err := json.Unmarshal(sc.Bytes(), &b); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, b)
	}
	return out, sc.Err()
}

// Device describes the set's first device in one line.
func (s *Set) Device() string {
	if len(s.Info.Devices) == 0 {
		return "unknown device"
	}
	d := s.Info.Devices[0]
	return fmt.Sprintf("%s (cc %s, %d SMs, driver %d, cuBLAS %d)", d.Name, d.ComputeCapability, d.SMs, d.DriverVersion, d.CublasVersion)
}

// Row is a record with its analysis.
type Row struct {
	Rec    results.Record
	Point  analysis.Point
	Waves  analysis.Waves
	Cublas float64 // cuBLAS median on the shape (ms), 0 if unknown
}

// MS is the record's median time.
func (r Row) MS() float64 {
	if r.Rec.Timing == nil {
		return 0
	}
	return r.Rec.Timing.MedianMS
}

// Analyze places every ok timed record (cuBLAS included) against the roofline.
func (s *Set) Analyze() []Row {
	tiles := tileOf(s.Records)
	// cuBLAS of the same shape, on the same device when the run timed it on several (as
	// results.CublasFor, indexed).
	type onDevice struct {
		sh   protocol.Shape
		uuid string
	}
	cubOn, cubAny := map[onDevice]float64{}, map[protocol.Shape]float64{}
	for _, r := range s.Records {
		if r.Kind == results.KindCublas && r.Status == results.StatusOK && r.Timing != nil {
			k := onDevice{r.Shape, results.DeviceUUID(r)}
			if _, ok := cubOn[k]; !ok {
				cubOn[k] = r.Timing.MedianMS
			}
			if _, ok := cubAny[r.Shape]; !ok {
				cubAny[r.Shape] = r.Timing.MedianMS
			}
		}
	}
	cub := func(r *results.Record) float64 {
		if t, ok := cubOn[onDevice{r.Shape, results.DeviceUUID(*r)}]; ok {
			return t
		}
		return cubAny[r.Shape]
	}
	var rows []Row
	for _, r := range s.Records {
		if r.Status != results.StatusOK || r.Timing == nil {
			continue
		}
		t := tiles[r.Variant]
		row := Row{Rec: r, Cublas: cub(&r),
			Point: analysis.PlaceBatch(r.Family, t[0], t[1], r.Shape.M, r.Shape.N, r.Shape.K, r.Shape.Products(), r.Timing.MedianMS, s.Peaks)}
		if a := r.Attributes; a != nil {
			row.Waves = analysis.WavesOf(a.Blocks, a.BlocksPerSM, s.SMs)
		}
		rows = append(rows, row)
	}
	return rows
}

// tileOf gives each variant's C tile: from the record, which carries it; for older result sets
// without it, from the catalog through Tiles.
func tileOf(recs []results.Record) map[string][2]int {
	out := map[string][2]int{}
	for _, r := range recs {
		if r.Tile != nil {
			out[r.Variant] = [2]int{r.Tile.Rows, r.Tile.Cols}
		} else if t, ok := Tiles[r.Variant]; ok {
			out[r.Variant] = t
		}
	}
	return out
}

// Tiles maps variant names to their C tile (rows, cols); the runner fills it from the catalog so
// that reports on old result sets still know each variant's geometry.
var Tiles = map[string][2]int{}

// Shapes lists the set's shapes in record order.
func Shapes(recs []results.Record) []protocol.Shape { return results.ShapesOf(recs) }

// slug makes a file-name-safe identifier.
func slug(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			return r
		}
		return '_'
	}, s)
}

// F formats a float compactly for tables.
func F(v float64, prec int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	return fmt.Sprintf("%.*f", prec, v)
}

// Ratio is the convention every table, CSV and JSON file shares: cuBLAS's median time over the
// kernel's (> 1: faster than cuBLAS), three decimals; "–" when either is unknown.
func Ratio(cublasMS, ms float64) string {
	if !(cublasMS > 0) || !(ms > 0) {
		return "–"
	}
	return F(cublasMS/ms, 3)
}

// MSf formats milliseconds with three significant digits.
func MSf(ms float64) string {
	if ms <= 0 || math.IsNaN(ms) {
		return "–"
	}
	return Sig(ms, 3)
}

// Sig formats v with n significant digits and no exponent (5940, not 5.94e+03; 0.0123).
func Sig(v float64, n int) string {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return F(v, 0)
	}
	d := n - 1 - int(math.Floor(math.Log10(math.Abs(v))))
	if d <= 0 {
		p := math.Pow10(-d)
		return strconv.FormatFloat(math.Round(v/p)*p, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', d, 64)
}

// AnalysisHeader and AnalysisCells are the analysis columns every table shares.
var AnalysisHeader = []string{"GFLOP/s", "model", "MB moved", "FLOP/B", "GB/s", "% roof", "bound", "waves", "note"}

// AnalysisCells renders a row's analysis columns.
func AnalysisCells(r Row) []string {
	p := r.Point
	waves := "–"
	if r.Waves.Capacity > 0 {
		waves = F(r.Waves.Waves, 2)
	}
	return []string{F(p.GFLOPS, 1), p.Traffic.Model, F(p.Traffic.Bytes()/1e6, 1), F(p.Intensity, 2),
		F(p.GBps, 0), F(p.PctOfRoof, 1), p.Bound, waves, r.Waves.Note}
}

// Render writes out/report.md for one or more result sets.
func Render(sets []*Set, out string) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	var b strings.Builder
	b.WriteString("# Results report\n\n")
	for _, s := range sets {
		fmt.Fprintf(&b, "- **%s**: %d records on %s; peaks %s: %.0f GFLOP/s FP32, %.0f GB/s DRAM\n",
			s.Name, len(s.Records), s.Device(), s.Peaks.Source, s.Peaks.GFLOPS, s.Peaks.GBps)
	}
	fmt.Fprintf(&b, "\nColumns: GFLOP/s = 2·M·N·K / median time; *model* is the family's modelled global traffic "+
		"(naive 2MNK reads, tiled MNK(1/BN+1/BM), coalesced MK⌈N/BN⌉+MNK, cuBLAS compulsory); GB/s = modelled bytes / time "+
		"(above the DRAM peak means caches served the rest); %% roof = GFLOP/s over min(peak, intensity × bandwidth); "+
		"waves = blocks / (SMs × resident blocks per SM); ratio = cuBLAS median time / the variant's median time "+
		"(> 1: faster than cuBLAS). Bar charts show the %d fastest variants of a shape (the tables list all), "+
		"whiskers the 95 %% confidence interval of each median.\n\n", TopBars)
	for i, s := range sets {
		prefix := ""
		if len(sets) > 1 {
			prefix = fmt.Sprintf("set%d_", i+1)
			fmt.Fprintf(&b, "## Set %d: %s\n\n", i+1, s.Name)
		}
		if err := renderSet(&b, s, out, prefix); err != nil {
			return err
		}
	}
	if len(sets) > 1 {
		if err := renderCompare(&b, sets, out); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(out, "report.md"), []byte(b.String()), 0o644)
}

func renderSet(b *strings.Builder, s *Set, out, prefix string) error {
	rows := s.Analyze()
	byShape := map[protocol.Shape][]Row{}
	for _, r := range rows {
		byShape[r.Rec.Shape] = append(byShape[r.Rec.Shape], r)
	}
	for _, sh := range Shapes(s.Records) {
		rs := byShape[sh]
		var vs []Row
		cub := 0.0
		for _, r := range rs {
			if r.Rec.Kind == results.KindCublas {
				cub = r.MS()
				continue
			}
			vs = append(vs, r)
		}
		if len(vs) == 0 {
			continue
		}
		sort.SliceStable(vs, func(i, j int) bool { return vs[i].MS() < vs[j].MS() })
		name := results.ShapeString(sh)
		fmt.Fprintf(b, "### %s\n\n", name)
		file, err := variantBars(vs, sh, cub, s.Name, out, prefix+"gflops_"+slug(name))
		if err != nil {
			return err
		}
		b.WriteString(Image("GFLOP/s per variant on "+name, file) + "\n")
		header := append([]string{"#", "variant", "median ms", "ratio"}, AnalysisHeader...)
		var table [][]string
		for i, r := range vs {
			table = append(table, append([]string{fmt.Sprint(i + 1), r.Rec.Variant, MSf(r.MS()), Ratio(cub, r.MS())}, AnalysisCells(r)...))
		}
		if cub > 0 {
			for _, r := range rs {
				if r.Rec.Kind == results.KindCublas {
					table = append(table, append([]string{"", "cuBLAS", MSf(cub), Ratio(cub, cub)}, AnalysisCells(r)...))
				}
			}
		}
		b.WriteString(Table(header, table) + "\n")
		if fails := failures(s.Records, sh); fails != "" {
			b.WriteString(fails + "\n")
		}
	}
	if err := renderHeatmaps(b, s, rows, out, prefix); err != nil {
		return err
	}
	return renderBreakdowns(b, s, out, prefix)
}

func failures(recs []results.Record, sh protocol.Shape) string {
	var lines []string
	for _, r := range recs {
		if r.Shape == sh && r.Status != results.StatusOK {
			lines = append(lines, fmt.Sprintf("- %s: %s (%s)", r.Variant, r.Status, r.Reason))
		}
	}
	if len(lines) == 0 {
		return ""
	}
	return "Not timed:\n\n" + strings.Join(lines, "\n") + "\n"
}

// renderHeatmaps draws, for the largest shape, each family with at least two parameters over its
// first two (the best time over any others), as GFLOP/s.
func renderHeatmaps(b *strings.Builder, s *Set, rows []Row, out, prefix string) error {
	shapes := Shapes(s.Records)
	if len(shapes) == 0 {
		return nil
	}
	sh := shapes[0] // records are sorted by decreasing work
	type cell struct{ x, y int }
	fams := map[string]map[cell]float64{}
	names := map[string][2]string{}
	for _, r := range rows {
		if r.Rec.Shape != sh || r.Rec.Kind != results.KindTune {
			continue
		}
		keys := paramKeys(r.Rec.Params)
		if len(keys) < 2 {
			continue
		}
		p := analysis.ParseParams(r.Rec.Params)
		if fams[r.Rec.Family] == nil {
			fams[r.Rec.Family] = map[cell]float64{}
			names[r.Rec.Family] = [2]string{keys[0], keys[1]}
		}
		c := cell{p[keys[0]], p[keys[1]]}
		fams[r.Rec.Family][c] = math.Max(fams[r.Rec.Family][c], r.Point.GFLOPS)
	}
	var famNames []string
	for f := range fams {
		famNames = append(famNames, f)
	}
	sort.Strings(famNames)
	if len(famNames) > 0 {
		fmt.Fprintf(b, "### Parameter heatmaps on %s\n\nEach cell is the best GFLOP/s over the family's other parameters; "+
			"grey cells have no variant.\n\n", results.ShapeString(sh))
	}
	for _, f := range famNames {
		cells := fams[f]
		var xs, ys []int
		sx, sy := map[int]bool{}, map[int]bool{}
		for c := range cells {
			if !sx[c.x] {
				sx[c.x] = true
				xs = append(xs, c.x)
			}
			if !sy[c.y] {
				sy[c.y] = true
				ys = append(ys, c.y)
			}
		}
		sort.Ints(xs)
		sort.Ints(ys)
		h := Heat{Title: fmt.Sprintf("%s: GFLOP/s over %s × %s, %s", f, names[f][0], names[f][1], results.ShapeString(sh)),
			XLabel: names[f][0], YLabel: names[f][1], Format: "%.0f", Unit: "GFLOP/s (best over other parameters)"}
		for _, x := range xs {
			h.XTicks = append(h.XTicks, fmt.Sprint(x))
		}
		for _, y := range ys {
			h.YTicks = append(h.YTicks, fmt.Sprint(y))
			row := make([]float64, len(xs))
			for i, x := range xs {
				v, ok := cells[cell{x, y}]
				if !ok {
					v = math.NaN()
				}
				row[i] = v
			}
			h.Z = append(h.Z, row)
		}
		file, err := h.Draw(out, prefix+"heat_"+slug(f))
		if err != nil {
			return err
		}
		b.WriteString(Image(f+" heatmap", file) + "\n")
	}
	return nil
}

// paramKeys lists the parameter names of "W=16 G=2 PF=0" in order.
func paramKeys(params string) []string {
	var out []string
	for _, f := range strings.Fields(params) {
		if k, _, ok := strings.Cut(f, "="); ok {
			out = append(out, k)
		}
	}
	return out
}

// renderBreakdowns draws mean phase times per (kernel, shape) as stacked bars.
func renderBreakdowns(b *strings.Builder, s *Set, out, prefix string) error {
	if len(s.Breakdowns) == 0 {
		return nil
	}
	b.WriteString("### Time breakdown (mean per run)\n\n")
	st := Stacked{Title: "Time breakdown: allocation, copies, compute, free (mean per run)", XLabel: "share of the run (%)",
		Phases: []string{"alloc", "host→device", "compute", "device→host", "free"}, Percent: true, Unit: "ms"}
	st.Values = make([][]float64, len(st.Phases))
	for _, bd := range s.Breakdowns {
		st.Labels = append(st.Labels, bd.Name+" "+results.ShapeString(bd.Shape))
		for i, ph := range [][]float64{bd.Phase.AllocMS, bd.Phase.HtoDMS, bd.Phase.KernelMS, bd.Phase.DtoHMS, bd.Phase.FreeMS} {
			st.Values[i] = append(st.Values[i], Mean(ph))
		}
	}
	file, err := st.Draw(out, prefix+"breakdown")
	if err != nil {
		return err
	}
	b.WriteString(Image("time breakdown", file) + "\n")
	return nil
}

// Mean and Std of samples (0 for none; Std is the sample standard deviation).
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	t := 0.0
	for _, x := range xs {
		t += x
	}
	return t / float64(len(xs))
}

// Std is the sample standard deviation (0 below two samples).
func Std(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	m := Mean(xs)
	t := 0.0
	for _, x := range xs {
		t += (x - m) * (x - m)
	}
	return math.Sqrt(t / float64(len(xs)-1))
}
