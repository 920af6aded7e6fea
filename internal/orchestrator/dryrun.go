package orchestrator

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"tilegen/internal/cache"
	"tilegen/internal/protocol"
	"tilegen/internal/results"
	"tilegen/internal/search"
	"tilegen/internal/variant"
	"tilegen/internal/workerproc"
)

// DefaultSMs is the SM count a dry run assumes for the split-K rule when it knows no device (an
// H100 SXM's).
const DefaultSMs = 132

// DryRun prints the plan cfg would run as `runner tune` — the variants × shapes, what is pruned and
// why, what the cache already holds, what is left to measure and an estimate of the time — without
// starting a worker and without writing anything (the cache is only read).
//
// A real run looks its records up under the GPUs it runs on, which only a worker can name. The dry
// run uses the GPUs it knows of instead: those of --out's device.json (a previous run into the same
// directory) and those that made the cache's records. It counts a measurement as cached when any of
// them has it. A GPU known only from the cache has no cuBLAS version, which cuBLAS records are keyed
// by, so its cuBLAS rows read "to measure". sms (0: the known GPUs', else DefaultSMs) is the SM count
// the split-K rule assumes.
func DryRun(cfg *Config, sms int) error {
	vs, err := cfg.Filter.Select(cfg.Catalog.Variants())
	if err != nil {
		return err
	}
	items, err := buildPlan(vs, cfg.Shapes, cfg.Strategy, cfg.Shard)
	if err != nil {
		return err
	}
	// cache.Open only reads: the file is created, cut or locked for writing by a Put alone.
	rc, err := cache.Open(cfg.CachePath)
	if err != nil {
		return err
	}
	devs, err := knownDevices(rc, cfg.Out, sms)
	if err != nil {
		return err
	}
	p := &workerproc.Pool{}
	for i, d := range devs {
		p.Slots = append(p.Slots, &workerproc.Slot{Index: i, Device: d})
	}
	s := &session{cfg: cfg, cache: rc, pool: p, recs: map[string]results.Record{}, ptxHash: map[string]string{}, prog: noProgress{}}
	s.index(vs)
	cub := s.planCublas(cfg.Shapes)
	s.planVariants(results.KindTune, items)
	pl := classify(s, items, cfg.Shapes)
	pl.cublasTodo = len(cub)

	w := cfg.Stdout
	fmt.Fprintf(w, "dry run: nothing is measured or written\n")
	fmt.Fprintf(w, "plan: %d variants (%s) × %d shapes = %d pairs, plus cuBLAS on each shape", len(vs), cfg.Filter,
		len(cfg.Shapes), len(vs)*len(cfg.Shapes))
	if cfg.Shard.N > 1 {
		fmt.Fprintf(w, "; shard %d/%d keeps %d pairs", cfg.Shard.I, cfg.Shard.N, len(items))
	}
	switch cfg.Strategy.Name {
	case search.Random:
		fmt.Fprintf(w, "; --strategy random keeps %s per shape", describeBudget(cfg.Strategy.Budget))
	case search.Model:
		fmt.Fprintf(w, "; --strategy model measures %s per shape, the most promising first", describeBudget(cfg.Strategy.budget()))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "cache %s: %d records; GPUs known: %s\n", cfg.CachePath, rc.Len(), describeDevices(devs))
	pl.writeTable(w)
	pl.writePruned(w)
	ndev := len(cfg.Devices)
	devNote := fmt.Sprintf("%d GPU (--devices %s)", ndev, joinInts(cfg.Devices))
	if ndev > 1 {
		devNote = fmt.Sprintf("%d GPUs (--devices %s)", ndev, joinInts(cfg.Devices))
	}
	if ndev == 0 {
		ndev, devNote = 1, "1 GPU (--devices all: name the devices to divide the time among them)"
	}
	perShape := map[protocol.Shape]int{}
	variantRuns := 0
	for sh, c := range pl.byShape {
		perShape[sh] = c.measure
		if cfg.Strategy.Name == search.Model {
			// The budget of the shape's candidates, less what the cache serves (at most).
			perShape[sh] = min(c.measure, cfg.Strategy.budget().For(c.measure+c.cached))
		}
		variantRuns += perShape[sh]
		if c.cublasTodo {
			perShape[sh]++
		}
	}
	modules := len(uniqueNames(s.preload))
	est := estimatePlan(cfg, perShape, modules, ndev)
	atMost := ""
	if cfg.Strategy.Name == search.Model {
		atMost = "at most "
	}
	fmt.Fprintf(w, "\nto measure: %s%d variant runs and %d cuBLAS runs, %d modules to JIT-compile\n", atMost, variantRuns, len(cub), modules)
	fmt.Fprintf(w, "estimated time: %s on %s (measurements %s, shared inputs %s, ranking %s, JIT %s)\n",
		fmtDuration(est.Total), devNote, fmtDuration(est.Measure), fmtDuration(est.SharedInputs), fmtDuration(est.Rank), fmtDuration(est.JIT))
	for _, l := range wrap("("+estimateModel+".)", 100) {
		fmt.Fprintln(w, l)
	}
	return nil
}

// shapeCount is one shape's line of the plan.
type shapeCount struct {
	pairs, requirements, splitK, cached, measure int
	cublasTodo                                   bool
}

// plan is the classified dry-run plan.
type plan struct {
	shapes     []protocol.Shape
	byShape    map[protocol.Shape]*shapeCount
	total      shapeCount
	cublasTodo int
	// pruned groups the left-out variants by shape and reason, in plan order.
	pruned []prunedGroup
}

type prunedGroup struct {
	shape  protocol.Shape
	reason string
	names  []string
}

// classify sorts the plan's items into pruned (by requirements or split-K), cached and to measure,
// from what planCublas and planVariants collected in the session.
func classify(s *session, items []item, shapes []protocol.Shape) *plan {
	pl := &plan{shapes: shapes, byShape: map[protocol.Shape]*shapeCount{}}
	for _, sh := range shapes {
		pl.byShape[sh] = &shapeCount{cublasTodo: !s.hasCublas(sh)}
	}
	groups := map[string]int{}
	for _, it := range items {
		c := pl.byShape[it.Shape]
		c.pairs++
		r, ok := s.recs[ident(results.KindTune, it.V.Name, it.Shape)]
		switch {
		case !ok:
			c.measure++
		case r.Status != results.StatusSkipped:
			c.cached++
		default:
			if it.Skip != "" {
				c.requirements++
			} else {
				c.splitK++
			}
			key := results.ShapeString(it.Shape) + "\x00" + r.Reason
			g, seen := groups[key]
			if !seen {
				g = len(pl.pruned)
				groups[key] = g
				pl.pruned = append(pl.pruned, prunedGroup{shape: it.Shape, reason: r.Reason})
			}
			pl.pruned[g].names = append(pl.pruned[g].names, it.V.Name)
		}
	}
	for _, c := range pl.byShape {
		pl.total.pairs += c.pairs
		pl.total.requirements += c.requirements
		pl.total.splitK += c.splitK
		pl.total.cached += c.cached
		pl.total.measure += c.measure
	}
	return pl
}

func (pl *plan) writeTable(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "shape\tpairs\tpruned: requirements\tsplit-K\tcached\tto measure\tcuBLAS\t")
	row := func(name string, c *shapeCount, cublas string) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%s\t\n", name, c.pairs, c.requirements, c.splitK, c.cached, c.measure, cublas)
	}
	for _, sh := range pl.shapes {
		c := pl.byShape[sh]
		cublas := "cached"
		if c.cublasTodo {
			cublas = "measure"
		}
		row(results.ShapeString(sh), c, cublas)
	}
	row("total", &pl.total, fmt.Sprintf("%d to measure", pl.cublasTodo))
	tw.Flush()
}

// writePruned lists the left-out variants by shape and reason, naming a few of each group.
func (pl *plan) writePruned(w io.Writer) {
	if len(pl.pruned) == 0 {
		return
	}
	fmt.Fprintln(w, "\npruned (shape: reason: variants):")
	const show = 4
	for _, g := range pl.pruned {
		names := g.names
		more := ""
		if len(names) > show {
			more = fmt.Sprintf(", … (%d more)", len(names)-show)
			names = names[:show]
		}
		fmt.Fprintf(w, "  %s: %s: %d: %s%s\n", results.ShapeString(g.shape), g.reason, len(g.names), strings.Join(names, ", "), more)
	}
}

func uniqueNames(vs []*variant.Variant) map[string]bool {
	out := map[string]bool{}
	for _, v := range vs {
		out[v.Name] = true
	}
	return out
}

// knownDevices are the GPUs a dry run looks cached records up under: --out's device.json (complete
// descriptions) and the devices named by the cache's records (name, UUID and driver only), each
// once; a placeholder with sms SMs when there are none. sms > 0 overrides every device's SM count.
func knownDevices(c *cache.Cache, out string, sms int) ([]protocol.Device, error) {
	type id struct {
		uuid   string
		driver int
	}
	byID := map[id]protocol.Device{}
	b, err := os.ReadFile(filepath.Join(out, "device.json"))
	switch {
	case err == nil:
		var ri results.RunInfo
		if err := json.Unmarshal(b, &ri); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(out, "device.json"), err)
		}
		for _, d := range ri.Devices {
			byID[id{d.UUID, d.DriverVersion}] = d
		}
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	for _, r := range c.Records() {
		if d := r.Device; d != nil {
			if _, ok := byID[id{d.UUID, d.Driver}]; !ok {
				byID[id{d.UUID, d.Driver}] = protocol.Device{Name: d.Name, UUID: d.UUID, DriverVersion: d.Driver}
			}
		}
	}
	var devs []protocol.Device
	for _, d := range byID {
		devs = append(devs, d)
	}
	sort.Slice(devs, func(i, j int) bool {
		if devs[i].Name != devs[j].Name {
			return devs[i].Name < devs[j].Name
		}
		if devs[i].UUID != devs[j].UUID {
			return devs[i].UUID < devs[j].UUID
		}
		return devs[i].DriverVersion < devs[j].DriverVersion
	})
	if len(devs) == 0 {
		devs = []protocol.Device{{Name: "no GPU known"}}
	}
	for i := range devs {
		if sms > 0 {
			devs[i].SMs = sms
		} else if devs[i].SMs == 0 {
			devs[i].SMs = DefaultSMs
		}
	}
	return devs, nil
}

func describeDevices(devs []protocol.Device) string {
	var parts []string
	for _, d := range devs {
		s := d.Name
		if d.UUID != "" {
			s += fmt.Sprintf(" %s driver %d", d.UUID, d.DriverVersion)
		}
		s += fmt.Sprintf(", %d SMs", d.SMs)
		if d.UUID != "" && d.CublasVersion == 0 {
			s += ", cuBLAS version unknown"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

func joinInts(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprint(x)
	}
	return strings.Join(parts, ",")
}

// wrap breaks text into lines of at most width bytes at spaces.
func wrap(text string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(text) {
		if line != "" && len(line)+1+len(w) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// describeBudget says a budget in words: "at most 40" or "20 % of the candidates".
func describeBudget(b search.Budget) string {
	if b.Fraction > 0 {
		return strconv.FormatFloat(100*b.Fraction, 'g', -1, 64) + " % of the candidates"
	}
	return fmt.Sprintf("at most %d", b.Count)
}
