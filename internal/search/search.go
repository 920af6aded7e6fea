// Package search decides which variants of each shape a tune measures, and in what order, when
// measuring every variant on every shape costs too much (a workload of hundreds of shapes over a
// catalog of hundreds of variants).
//
// Three methods:
//
//	exhaustive  every candidate
//	random      a seeded uniform sample of the budget per shape (the baseline)
//	model       the most promising first, by a model that learns from each measurement
//
// The model method is a model-refit loop. Its prior is Prior: the busiest SM's share of the grid's
// padded FMAs at an efficiency set by the thread tile and the warps resident (the occupancy the
// variant's registers and shared memory allow, analysis.BlocksPerSM), against the family's traffic
// model (internal/analysis) over the DRAM bandwidth. Each round it fits the log of measured over
// predicted time with two ridge regressions, alternated (backfitting):
//
//   - global, over every measurement of the run, on every shape: a factor per family, per family
//     parameter value (STAGES=4 of regtile, SPLIT=2 of splitk, ...) and per continuous feature of
//     the fit of grid to device (SM fill, edge waste, warps resident, K per block, slices), so what
//     one shape teaches carries to the others;
//   - per shape, over that shape's measurements: a level, and a factor per family, per block tile
//     and per split count, which absorb what the global model gets wrong about this shape.
//
// It then measures next, on each shape, the unmeasured candidates with the lowest lower confidence
// bound of their predicted log time (the per-shape fit's standard error sets the bound: a family or
// tile never measured on the shape is uncertain, so it is tried before the model is trusted), until
// the shape's budget is spent. Measurements that failed (verification, a crash) count against the
// budget and teach nothing.
//
// The package knows no CUDA and no processes: the engine (internal/orchestrator) asks Next for the
// picks, measures them through its worker pool (verification first, as always), and reports each
// result to Observe. Replay runs the same loop against recorded measurements.
package search

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"

	"tilegen/internal/protocol"
	"tilegen/internal/results"
	"tilegen/internal/variant"
)

// The methods.
const (
	Exhaustive = "exhaustive"
	Random     = "random"
	Model      = "model"
)

// Methods lists the methods in the order help names them.
var Methods = []string{Exhaustive, Random, Model}

// Budget is how many measurements a shape gets: Count, or Fraction of its candidates (rounded up).
// The zero Budget is every candidate.
type Budget struct {
	Count    int
	Fraction float64
}

// ParseBudget reads a budget: a count ("40"), a fraction ("0.2") or a percentage ("20%").
func ParseBudget(s string) (Budget, error) {
	t := strings.TrimSpace(s)
	bad := fmt.Errorf("budget %q: want a count of measurements per shape (40), or a fraction of its candidates (0.2 or 20%%)", s)
	if p, ok := strings.CutSuffix(t, "%"); ok {
		f, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || !(f > 0 && f <= 100) {
			return Budget{}, bad
		}
		return Budget{Fraction: f / 100}, nil
	}
	if strings.ContainsAny(t, ".eE") {
		f, err := strconv.ParseFloat(t, 64)
		if err != nil || !(f > 0 && f <= 1) {
			return Budget{}, bad
		}
		return Budget{Fraction: f}, nil
	}
	n, err := strconv.Atoi(t)
	if err != nil || n < 1 {
		return Budget{}, bad
	}
	return Budget{Count: n}, nil
}

// For is the budget of a shape with n candidates: at least 1 (when n > 0), at most n.
func (b Budget) For(n int) int {
	switch {
	case n <= 0:
		return 0
	case b.Count > 0:
		return min(b.Count, n)
	case b.Fraction > 0:
		return min(n, max(1, int(math.Ceil(b.Fraction*float64(n)-1e-9))))
	}
	return n
}

// IsZero reports whether the budget is unset (every candidate).
func (b Budget) IsZero() bool { return b.Count <= 0 && b.Fraction <= 0 }

// String renders the budget as ParseBudget reads it ("" when unset).
func (b Budget) String() string {
	switch {
	case b.Count > 0:
		return strconv.Itoa(b.Count)
	case b.Fraction > 0:
		return strconv.FormatFloat(100*b.Fraction, 'g', -1, 64) + "%"
	}
	return ""
}

// RandomPicks is the random method's choice: k of n candidate indexes, ascending, drawn from a
// generator seeded by the run's seed and the shape, so that a shape's sample does not depend on the
// other shapes of the run. All n when k >= n.
func RandomPicks(seed uint64, s protocol.Shape, n, k int) []int {
	if k >= n {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out
	}
	perm := randomOrder(seed, s, n)[:k]
	sort.Ints(perm)
	return perm
}

// randomOrder is a seeded permutation of n candidates of shape s.
func randomOrder(seed uint64, s protocol.Shape, n int) []int {
	h := fnv.New64a()
	h.Write([]byte(results.ShapeString(s)))
	return rand.New(rand.NewPCG(seed, h.Sum64())).Perm(n)
}

// tieJitter bounds the seeded jitter of the model's prior (log units: 10⁻⁶).
const tieJitter = 1e-6

// unrunnableMS is the prior of a variant of which no block fits an SM.
const unrunnableMS = 1e9

// Config sets up a search.
type Config struct {
	// Method is exhaustive, random or model.
	Method string
	// Budget bounds the measurements per shape.
	Budget Budget
	// Seed drives the random method, and orders the candidates the model cannot tell apart.
	Seed uint64
	// Device is what the model knows of the GPU.
	Device Device
	// Batch is how many picks per shape Next hands out at once (model method; default 1). A larger
	// batch keeps more devices busy and learns less between measurements.
	Batch int
}

// Pick is one measurement to make.
type Pick struct {
	Shape   protocol.Shape
	Variant *variant.Variant
}

// Search is one run's search over its shapes. It is not safe for concurrent use.
type Search struct {
	cfg     Config
	shapes  []*shapeState
	byShape map[protocol.Shape]*shapeState
	model   *model
	started bool
}

// shapeState is one shape's candidates and what has been measured.
type shapeState struct {
	shape  protocol.Shape
	cands  []*cand
	byName map[string]*cand
	budget int
	// handed counts the picks handed out, observed those reported back.
	handed, observed int
	// order is the random or exhaustive sequence, next its position.
	order []int
	next  int
}

// cand is one candidate variant on one shape.
type cand struct {
	v     *variant.Variant
	prior float64 // log predicted ms
	est   Estimate
	// handed: picked already; measured: a result came back; ok: it passed, with logMS.
	handed, measured, ok bool
	logMS                float64
	// g are the global features (sparse), z the per-shape ones (indexes into the shape's fit).
	g    sparse
	z    []int
	mean float64 // predicted log ms of the last fit
	sd   float64 // its standard error
}

// New starts a search.
func New(cfg Config) (*Search, error) {
	switch cfg.Method {
	case Exhaustive, Random, Model:
	case "":
		cfg.Method = Exhaustive
	default:
		return nil, fmt.Errorf("search method %q: want %s", cfg.Method, strings.Join(Methods, ", "))
	}
	if cfg.Batch < 1 {
		cfg.Batch = 1
	}
	if cfg.Device.SMs < 1 {
		cfg.Device = H100
	}
	return &Search{cfg: cfg, byShape: map[protocol.Shape]*shapeState{}}, nil
}

// Add gives the search a shape and the variants that may run it (a variant listed twice counts
// once). Add every shape before the first Next.
func (s *Search) Add(sh protocol.Shape, vs []*variant.Variant) error {
	if s.started {
		return fmt.Errorf("search: shape %s added after the search started", results.ShapeString(sh))
	}
	st := s.byShape[sh]
	if st == nil {
		st = &shapeState{shape: sh, byName: map[string]*cand{}}
		s.byShape[sh] = st
		s.shapes = append(s.shapes, st)
	}
	for _, v := range vs {
		if st.byName[v.Name] != nil {
			continue
		}
		c := &cand{v: v}
		c.est = Prior(v, sh, s.cfg.Device)
		// A variant the occupancy count says cannot run still may (the count is a model): last.
		c.prior = math.Log(min(c.est.MS, unrunnableMS))
		st.cands = append(st.cands, c)
		st.byName[v.Name] = c
	}
	return nil
}

// Budget is the number of measurements shape sh gets.
func (s *Search) Budget(sh protocol.Shape) int {
	if st := s.byShape[sh]; st != nil {
		return s.cfg.Budget.For(len(st.cands))
	}
	return 0
}

func (s *Search) start() {
	s.started = true
	for _, st := range s.shapes {
		// Candidates in name order, so that a search does not depend on the order they came in.
		sort.Slice(st.cands, func(i, j int) bool { return st.cands[i].v.Name < st.cands[j].v.Name })
		st.budget = s.cfg.Budget.For(len(st.cands))
		switch s.cfg.Method {
		case Random:
			// The permutation's order (RandomPicks takes the same set): a replay measures in it.
			st.order = randomOrder(s.cfg.Seed, st.shape, len(st.cands))[:st.budget]
		case Exhaustive:
			st.order = make([]int, st.budget)
			for i := range st.order {
				st.order[i] = i
			}
		}
	}
	if s.cfg.Method == Model {
		// The prior cannot tell apart variants that differ only in what it does not model (stages,
		// warp layout): a seeded jitter far below any measurable difference orders them.
		for _, st := range s.shapes {
			for i, j := range randomOrder(s.cfg.Seed, st.shape, len(st.cands)) {
				st.cands[i].prior += tieJitter * float64(j) / float64(len(st.cands))
			}
		}
		s.model = newModel(s.shapes)
	}
}

// Next returns the next measurements to make: for the exhaustive and random methods every pick at
// once; for the model method up to Batch per shape whose budget is not spent, chosen after fitting
// everything observed so far. Call Observe for each before calling Next again; nil means done.
func (s *Search) Next() []Pick {
	if !s.started {
		s.start()
	}
	var out []Pick
	if s.cfg.Method != Model {
		for _, st := range s.shapes {
			for ; st.next < len(st.order); st.next++ {
				c := st.cands[st.order[st.next]]
				c.handed = true
				st.handed++
				out = append(out, Pick{Shape: st.shape, Variant: c.v})
			}
		}
		return out
	}
	s.model.fit()
	for _, st := range s.shapes {
		for i := 0; i < s.cfg.Batch && st.handed < st.budget; i++ {
			c := s.model.best(st)
			if c == nil {
				break
			}
			c.handed = true
			st.handed++
			out = append(out, Pick{Shape: st.shape, Variant: c.v})
		}
	}
	return out
}

// Stop ends shape sh's search: Next hands out nothing more for it.
func (s *Search) Stop(sh protocol.Shape) {
	if st := s.byShape[sh]; st != nil {
		st.budget = st.handed
		st.order = st.order[:min(len(st.order), st.next)]
	}
}

// Observe reports a pick's result: its median time in milliseconds when ok, or a failure.
func (s *Search) Observe(sh protocol.Shape, name string, ms float64, ok bool) error {
	st := s.byShape[sh]
	if st == nil {
		return fmt.Errorf("search: observed unknown shape %s", results.ShapeString(sh))
	}
	c := st.byName[name]
	if c == nil {
		return fmt.Errorf("search: observed %s, not a candidate of %s", name, results.ShapeString(sh))
	}
	if c.measured {
		return nil
	}
	c.measured, c.handed = true, true
	st.observed++
	if ok && ms > 0 && !math.IsInf(ms, 0) && !math.IsNaN(ms) {
		c.ok, c.logMS = true, math.Log(ms)
		if s.model != nil {
			s.model.observe(st, c)
		}
	}
	return nil
}

// Ranked lists the candidates of shape sh in the order the model would measure them now (for the
// other methods, by the prior), with the predicted times in milliseconds; for dry runs and tests.
func (s *Search) Ranked(sh protocol.Shape) ([]string, []float64) {
	if !s.started {
		s.start()
	}
	st := s.byShape[sh]
	if st == nil {
		return nil, nil
	}
	cs := append([]*cand(nil), st.cands...)
	key := func(c *cand) float64 { return c.prior }
	if s.model != nil {
		s.model.fit()
		key = func(c *cand) float64 { return c.mean }
	}
	sort.SliceStable(cs, func(i, j int) bool { return key(cs[i]) < key(cs[j]) })
	names := make([]string, len(cs))
	ms := make([]float64, len(cs))
	for i, c := range cs {
		names[i], ms[i] = c.v.Name, math.Exp(key(c))
	}
	return names, ms
}
