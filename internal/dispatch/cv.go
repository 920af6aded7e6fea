package dispatch

import (
	"fmt"
	"hash/fnv"
	"sort"

	"tilegen/internal/protocol"
	"tilegen/internal/shapes"
	"tilegen/internal/stats"
)

// FoldRule says how Fold assigns folds, for the summary.
const FoldRule = `FNV-1a 64 of "MxNxK" modulo the number of folds`

// Fold is the cross-validation fold of a shape among k: FNV-1a 64 of "MxNxK" modulo k, so a shape's
// fold depends on the shape alone.
func Fold(s protocol.Shape, k int) int {
	h := fnv.New64a()
	fmt.Fprintf(h, "%dx%dx%d", s.M, s.N, s.K)
	return int(h.Sum64() % uint64(k))
}

// Outcome is what a rule gave one corpus shape.
type Outcome struct {
	// Kernel is the index of the kernel launched (the rule's pick, or the default when the pick
	// cannot take the problem).
	Kernel int
	// Ratio is cuBLAS time / that kernel's time on the shape.
	Ratio float64
	// Imputed: the kernel was not timed on the shape; Ratio is the worst timed there.
	Imputed bool
}

// Evaluate is what rule r (fitted on d's kernels) gives sample i.
func (d *Data) Evaluate(r *Rule, i int) (Outcome, error) {
	s := d.Samples[i].Shape
	j := r.Dispatch(s.M, s.N, s.K, d.vec(i), func(j int) bool { return d.supports(i, j) }, func(j int) bool { return d.Kernels[j].Fits(s.M, s.N) })
	if j < 0 {
		return Outcome{}, fmt.Errorf("%dx%dx%d: no dispatched variant takes it", s.M, s.N, s.K)
	}
	ratio, imp, ok := d.Ratio(i, j)
	if !ok {
		return Outcome{}, fmt.Errorf("%dx%dx%d: %s cannot take it, or nothing was timed there", s.M, s.N, s.K, d.Kernels[j].Name)
	}
	return Outcome{Kernel: j, Ratio: ratio, Imputed: imp}, nil
}

// nearest is what the nearest-shape rule fitted on train gives sample i (see Validation.Nearest).
func (d *Data) nearest(train []int, def, i int) (Outcome, error) {
	s := d.Samples[i].Shape
	t := shapes.Nearest(shapes.Rule{Metric: shapes.SquaredLog}, s.M, s.N, s.K, len(train), func(t int) (int, int, int) {
		c := d.Samples[train[t]].Shape
		return c.M, c.N, c.K
	}, nil)
	j := def
	if t >= 0 {
		if _, k := d.bestKernel(train[t]); k >= 0 {
			j = k
		}
	}
	if !d.supports(i, j) {
		j = def
	}
	r, imp, ok := d.Ratio(i, j)
	if !ok {
		return Outcome{}, fmt.Errorf("%dx%dx%d: %s cannot take it, or nothing was timed there", s.M, s.N, s.K, d.Kernels[j].Name)
	}
	return Outcome{Kernel: j, Ratio: r, Imputed: imp}, nil
}

// Validation is a cross-validation of the rule over a corpus.
type Validation struct {
	Folds int
	// Fold[i] is sample i's fold.
	Fold []int
	// Full is the rule fitted on every sample (the one an export carries); Rules[f] the rule
	// fitted without fold f (nil for an empty fold).
	Full  *Rule
	Rules []*Rule
	// All[i] is what Full gives sample i; CV[i] what the rule fitted without its fold gives it.
	All, CV []Outcome
	// Best[i] is the best ratio timed on sample i and BestKernel[i] its kernel (the per-shape oracle).
	Best       []float64
	BestKernel []int
	// Nearest[i] is what the rule this package replaced gives sample i, cross-validated the same
	// way: the fastest variant timed on the nearest shape of the other folds (squared log-distance,
	// ties to the first), else the robust default.
	Nearest []Outcome
}

// CrossValidate fits the rule on all samples and, for each of k folds, on the others only, and
// evaluates every sample under both.
func CrossValidate(d *Data, k int, cfg Config) (*Validation, error) {
	if k < 2 {
		return nil, fmt.Errorf("cross-validation needs at least 2 folds, got %d", k)
	}
	full, err := Fit(d, nil, cfg)
	if err != nil {
		return nil, err
	}
	v := &Validation{Folds: k, Full: full, Rules: make([]*Rule, k), All: make([]Outcome, len(d.Samples)),
		CV: make([]Outcome, len(d.Samples)), Best: make([]float64, len(d.Samples)), BestKernel: make([]int, len(d.Samples)),
		Nearest: make([]Outcome, len(d.Samples))}
	for i, s := range d.Samples {
		v.Fold = append(v.Fold, Fold(s.Shape, k))
		if v.All[i], err = d.Evaluate(full, i); err != nil {
			return nil, err
		}
		v.Best[i], v.BestKernel[i] = d.bestKernel(i)
	}
	for f := range k {
		var train, test []int
		for i := range d.Samples {
			if v.Fold[i] == f {
				test = append(test, i)
			} else {
				train = append(train, i)
			}
		}
		if len(test) == 0 {
			continue
		}
		if len(train) == 0 {
			return nil, fmt.Errorf("fold %d holds every shape: use more shapes or fewer folds", f)
		}
		r, err := Fit(d, train, cfg)
		if err != nil {
			return nil, fmt.Errorf("fold %d: %w", f, err)
		}
		v.Rules[f] = r
		for _, i := range test {
			if v.CV[i], err = d.Evaluate(r, i); err != nil {
				return nil, fmt.Errorf("fold %d: %w", f, err)
			}
			if v.Nearest[i], err = d.nearest(train, r.Default, i); err != nil {
				return nil, fmt.Errorf("fold %d: %w", f, err)
			}
		}
	}
	return v, nil
}

// Totals summarize ratios (cuBLAS time / tilegen time).
type Totals struct {
	Count   int     `json:"count"`
	Geomean float64 `json:"geomean"`
	Min     float64 `json:"min"`
	Median  float64 `json:"median"`
	// Below09 counts the ratios below 0.9.
	Below09 int `json:"below_0_9"`
}

// Summarize computes the totals of ratios (all positive).
func Summarize(ratios []float64) Totals {
	t := Totals{Count: len(ratios)}
	if len(ratios) == 0 {
		return t
	}
	s := append([]float64(nil), ratios...)
	sort.Float64s(s)
	for _, r := range s {
		if r < 0.9 {
			t.Below09++
		}
	}
	t.Geomean = stats.Geomean(s)
	t.Min, t.Median = s[0], medianSorted(s)
	return t
}

// medianSorted is the median of sorted values (at least one).
func medianSorted(s []float64) float64 {
	if n := len(s); n%2 == 1 {
		return s[n/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
