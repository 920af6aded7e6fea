package dispatch

import (
	"fmt"
	"sort"

	"tilegen/internal/protocol"
)

// HoldoutSample is a problem measured apart from the corpus: every exportable kernel the
// measurement holds timed on it next to cuBLAS in the same run, so that what any rule launches there
// can be read off without fitting on it (runner workload --holdout).
type HoldoutSample struct {
	Shape    protocol.Shape
	Source   string
	CublasMS float64
	// Times[j] is kernel j's median time in milliseconds (d.Kernels' indices); 0: not timed.
	Times []float64
}

// HoldoutShape is one holdout problem in the summary.
type HoldoutShape struct {
	Shape    string  `json:"shape"`
	Source   string  `json:"source,omitempty"`
	Regime   string  `json:"regime"`
	Flops    float64 `json:"flops"`
	CublasMS float64 `json:"cublas_ms"`
	// Variant is what the exported dispatch (fitted on every corpus shape) launches; Ratio its
	// measured ratio, 0 with Untimed when the measurement did not time it (left out of the totals).
	Variant string  `json:"variant"`
	Ratio   float64 `json:"ratio"`
	Untimed bool    `json:"untimed,omitempty"`
	// BestVariant and BestRatio: the fastest exportable variant the measurement timed.
	BestVariant string  `json:"best_variant"`
	BestRatio   float64 `json:"best_ratio"`
}

// Holdout is the exported dispatch judged on problems measured apart from the corpus.
type Holdout struct {
	// GPU is the measurement's GPU; Results its directories as given.
	GPU     string         `json:"gpu"`
	Results []string       `json:"results"`
	Shapes  []HoldoutShape `json:"shapes"`
	// Ratio and Best total the shapes whose dispatched variant was timed.
	Ratio Totals `json:"ratio"`
	Best  Totals `json:"best"`
	// Untimed counts the shapes whose dispatched variant the measurement did not time.
	Untimed int `json:"untimed"`
}

// Holdout judges rule r (fitted on d) on samples measured apart: per problem the variant r launches
// there (Rule.Dispatch with packed leading dimensions, the guards included) and its measured ratio,
// and the fastest of d's kernels the measurement timed. Shapes are listed by problem size.
func (d *Data) Holdout(r *Rule, samples []HoldoutSample) (*Holdout, error) {
	h := &Holdout{Shapes: []HoldoutShape{}}
	var got, best []float64
	for _, s := range samples {
		sh := s.Shape
		if len(s.Times) != len(d.Kernels) || !(s.CublasMS > 0) || sh.M < 1 || sh.N < 1 || sh.K < 1 {
			return nil, fmt.Errorf("holdout %dx%dx%d: %d times for %d kernels, cuBLAS %g ms", sh.M, sh.N, sh.K, len(s.Times), len(d.Kernels), s.CublasMS)
		}
		lda, ldb, ldc := sh.Dense()
		j := r.Dispatch(sh.M, sh.N, sh.K, Vec(sh.M, sh.N, lda, ldb, ldc), func(j int) bool { return d.Kernels[j].Supports(sh.M, sh.N, sh.K) },
			func(j int) bool { return d.Kernels[j].Fits(sh.M, sh.N) })
		if j < 0 {
			return nil, fmt.Errorf("holdout %dx%dx%d: no dispatched variant takes it", sh.M, sh.N, sh.K)
		}
		x := HoldoutShape{Shape: fmt.Sprintf("%dx%dx%d", sh.M, sh.N, sh.K), Source: s.Source,
			Regime: RegimeNames[Regime(float64(sh.M), float64(sh.N), float64(sh.K))],
			Flops:  2 * float64(sh.M) * float64(sh.N) * float64(sh.K), CublasMS: s.CublasMS, Variant: d.Kernels[j].Name}
		for k, t := range s.Times {
			if t > 0 && s.CublasMS/t > x.BestRatio {
				x.BestRatio, x.BestVariant = s.CublasMS/t, d.Kernels[k].Name
			}
		}
		if t := s.Times[j]; t > 0 {
			x.Ratio = s.CublasMS / t
			got, best = append(got, x.Ratio), append(best, x.BestRatio)
		} else {
			x.Untimed = true
			h.Untimed++
		}
		h.Shapes = append(h.Shapes, x)
	}
	sort.SliceStable(h.Shapes, func(a, b int) bool {
		if h.Shapes[a].Flops != h.Shapes[b].Flops {
			return h.Shapes[a].Flops < h.Shapes[b].Flops
		}
		return h.Shapes[a].Shape < h.Shapes[b].Shape
	})
	h.Ratio, h.Best = Summarize(got), Summarize(best)
	return h, nil
}
