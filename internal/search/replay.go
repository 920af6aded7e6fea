package search

import (
	"fmt"
	"math"
	"sort"

	"tilegen/internal/protocol"
	"tilegen/internal/results"
	"tilegen/internal/variant"
)

// Outcome is one recorded measurement: a median time, or a failure.
type Outcome struct {
	MS float64
	OK bool
}

// Oracle is a set of recorded measurements, per shape and variant, that Replay serves instead of a
// GPU: an exhaustive tune's results.jsonl.
type Oracle struct {
	// Shapes in the order the records first name them.
	Shapes []protocol.Shape
	// Results holds every measured (not skipped) variant of each shape.
	Results map[protocol.Shape]map[string]Outcome
}

// OracleOf collects the tune records (ok or failed; skipped ones were never candidates) of recs;
// a later record of a (variant, shape) replaces an earlier one.
func OracleOf(recs []results.Record) Oracle {
	o := Oracle{Results: map[protocol.Shape]map[string]Outcome{}}
	for _, r := range recs {
		if r.Kind != results.KindTune || (r.Status != results.StatusOK && r.Status != results.StatusFailed) {
			continue
		}
		m := o.Results[r.Shape]
		if m == nil {
			m = map[string]Outcome{}
			o.Results[r.Shape] = m
			o.Shapes = append(o.Shapes, r.Shape)
		}
		out := Outcome{}
		if r.Status == results.StatusOK && r.Timing != nil && r.Timing.MedianMS > 0 {
			out = Outcome{MS: r.Timing.MedianMS, OK: true}
		}
		m[r.Variant] = out
	}
	return o
}

// ReplayConfig configures Replay.
type ReplayConfig struct {
	// Method, Seed, Device and Batch are the search's (Budget: every candidate).
	Method string
	Seed   uint64
	Device Device
	Batch  int
	// Within is how close to the exhaustive winner counts as found (0.01: within 1 %).
	Within float64
	// Isolated searches each shape alone, so that no shape learns from another's measurements.
	Isolated bool
	// Until, when set, stops a shape's search once it has found a variant within the tolerance and
	// made at least Until(candidates) measurements; otherwise every candidate is measured.
	Until func(candidates int) int
}

// ShapeReplay is one shape's replayed search.
type ShapeReplay struct {
	Shape protocol.Shape `json:"-"`
	// Candidates is the variants recorded on the shape (catalog variants only), Good how many of
	// them are within the tolerance of the best, BestMS the exhaustive winner's time.
	Candidates int     `json:"candidates"`
	Good       int     `json:"good"`
	Best       string  `json:"best"`
	BestMS     float64 `json:"best_ms"`
	// Needed is how many measurements the search made until one was within the tolerance.
	Needed int `json:"needed"`
	// Order is the variants in the order they were measured (until found).
	Order []string `json:"-"`
	// BestAt is the best time found after each number of measurements (index n-1), relative to the
	// exhaustive winner (1: found it), as far as the search went.
	BestAt []float64 `json:"-"`
}

// Replay runs a search over the oracle's shapes with every candidate as its budget, answering
// each pick from the records, and reports per shape how many measurements it took to reach a
// variant within cfg.Within of the exhaustive winner. Candidates are the recorded variants the
// catalog has (its geometry and resources feed the model); the others are left out and counted in
// the returned number.
func Replay(o Oracle, catalog []variant.Variant, cfg ReplayConfig) ([]ShapeReplay, int, error) {
	byName := map[string]*variant.Variant{}
	for i := range catalog {
		byName[catalog[i].Name] = &catalog[i]
	}
	if cfg.Within <= 0 {
		cfg.Within = 0.01
	}
	unknown := 0
	type prob struct {
		shape protocol.Shape
		vs    []*variant.Variant
		rep   *ShapeReplay
		found bool
		best  float64
	}
	var probs []*prob
	for _, sh := range o.Shapes {
		p := &prob{shape: sh, rep: &ShapeReplay{Shape: sh}, best: math.Inf(1)}
		names := make([]string, 0, len(o.Results[sh]))
		for n := range o.Results[sh] {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			v := byName[n]
			if v == nil {
				unknown++
				continue
			}
			p.vs = append(p.vs, v)
			if out := o.Results[sh][n]; out.OK && (p.rep.BestMS == 0 || out.MS < p.rep.BestMS) {
				p.rep.BestMS, p.rep.Best = out.MS, n
			}
		}
		if p.rep.BestMS <= 0 {
			continue // nothing passed: nothing to find
		}
		p.rep.Candidates = len(p.vs)
		for _, v := range p.vs {
			if out := o.Results[sh][v.Name]; out.OK && out.MS <= p.rep.BestMS*(1+cfg.Within) {
				p.rep.Good++
			}
		}
		probs = append(probs, p)
	}
	groups := [][]*prob{probs}
	if cfg.Isolated {
		groups = nil
		for _, p := range probs {
			groups = append(groups, []*prob{p})
		}
	}
	for _, g := range groups {
		s, err := New(Config{Method: cfg.Method, Seed: cfg.Seed, Device: cfg.Device, Batch: cfg.Batch})
		if err != nil {
			return nil, 0, err
		}
		byShape := map[protocol.Shape]*prob{}
		for _, p := range g {
			if err := s.Add(p.shape, p.vs); err != nil {
				return nil, 0, err
			}
			byShape[p.shape] = p
		}
		for {
			picks := s.Next()
			if len(picks) == 0 {
				break
			}
			for _, pk := range picks {
				p := byShape[pk.Shape]
				out := o.Results[pk.Shape][pk.Variant.Name]
				if err := s.Observe(pk.Shape, pk.Variant.Name, out.MS, out.OK); err != nil {
					return nil, 0, err
				}
				if out.OK && out.MS < p.best {
					p.best = out.MS
				}
				p.rep.BestAt = append(p.rep.BestAt, p.best/p.rep.BestMS)
				if !p.found {
					p.rep.Order = append(p.rep.Order, pk.Variant.Name)
					if p.best <= p.rep.BestMS*(1+cfg.Within) {
						p.found = true
						p.rep.Needed = len(p.rep.BestAt)
					}
				}
				if p.found && cfg.Until != nil && len(p.rep.BestAt) >= cfg.Until(p.rep.Candidates) {
					s.Stop(pk.Shape)
				}
			}
		}
	}
	out := make([]ShapeReplay, 0, len(probs))
	for _, p := range probs {
		if !p.found {
			return nil, 0, fmt.Errorf("replay: %s: the search never measured a variant within %g of the winner", results.ShapeString(p.shape), cfg.Within)
		}
		out = append(out, *p.rep)
	}
	return out, unknown, nil
}
