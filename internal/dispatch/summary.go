package dispatch

import (
	"fmt"
	"sort"
)

// RatioDefinition says what every ratio of a Summary is.
const RatioDefinition = "ratio = cuBLAS median time / tilegen median time on the same shape, device and run (above 1: faster than cuBLAS); " +
	"ratio: the dispatch fitted on every corpus shape (the one the export carries); ratio_cv: the dispatch fitted without the shape's fold; " +
	"best_ratio: the fastest exportable variant timed on the shape; nearest_cv: the nearest-tuned-shape dispatch this rule replaced, cross-validated the same way; a dispatched variant that was not timed on the shape counts as the slowest timed there (untimed)"

// Summary is summary.json of `runner workload`: per corpus shape, what the exported dispatch and
// the held-out dispatch give it, and the totals.
type Summary struct {
	GPU string `json:"gpu"`
	// Op is the op of the corpus shapes the rule was fitted on (NN, NT, TN, TT).
	Op  string `json:"op,omitempty"`
	SMs int    `json:"sms"`
	// Corpus and Results are the inputs as given.
	Corpus          string   `json:"corpus"`
	Results         []string `json:"results"`
	RatioDefinition string   `json:"ratio_definition"`
	Folds           int      `json:"folds"`
	FoldRule        string   `json:"fold_rule"`
	// Kernels is how many exportable variants were timed on the corpus.
	Kernels int           `json:"kernels"`
	Shapes  []ShapeResult `json:"shapes"`
	Totals  SummaryTotals `json:"totals"`
	// Regimes are the totals per regime class.
	Regimes []RegimeTotals `json:"regimes"`
	// Rule is the dispatch fitted on every shape; FoldRules those fitted without each fold.
	Rule      RuleSummary   `json:"rule"`
	FoldRules []RuleSummary `json:"fold_rules"`
	// Bandwidth judges the GEMV-like and tiny-output shapes by DRAM bandwidth (AddBandwidth); absent
	// when the records do not give the device's memory clock and bus width.
	Bandwidth *Bandwidth `json:"bandwidth,omitempty"`
	// Holdout judges the exported dispatch on problems measured apart from the corpus (runner
	// workload --holdout); absent without one.
	Holdout *Holdout `json:"holdout,omitempty"`
}

// ShapeResult is one corpus shape.
type ShapeResult struct {
	Shape    string  `json:"shape"`
	Source   string  `json:"source"`
	Regime   string  `json:"regime"`
	Fold     int     `json:"fold"`
	Flops    float64 `json:"flops"`
	CublasMS float64 `json:"cublas_ms"`
	// Variant and Ratio: the dispatch fitted on every shape; Untimed: Variant was not timed here.
	Variant string  `json:"variant"`
	Ratio   float64 `json:"ratio"`
	Untimed bool    `json:"untimed,omitempty"`
	// VariantCV and RatioCV: the dispatch fitted without this shape's fold.
	VariantCV string  `json:"variant_cv"`
	RatioCV   float64 `json:"ratio_cv"`
	UntimedCV bool    `json:"untimed_cv,omitempty"`
	// BestVariant and BestRatio: the fastest exportable variant timed here.
	BestVariant string  `json:"best_variant"`
	BestRatio   float64 `json:"best_ratio"`
	// NearestCV: the nearest-shape dispatch this rule replaced, held out the same way.
	NearestCV float64 `json:"nearest_cv"`
}

// SummaryTotals are the totals of the ratios.
type SummaryTotals struct {
	Ratio     Totals `json:"ratio"`
	RatioCV   Totals `json:"ratio_cv"`
	Best      Totals `json:"best"`
	NearestCV Totals `json:"nearest_cv"`
}

// RegimeTotals are one regime class's totals.
type RegimeTotals struct {
	Regime string `json:"regime"`
	SummaryTotals
}

// RuleSummary describes a fitted rule.
type RuleSummary struct {
	Fold        int    `json:"fold"` // −1: fitted on every shape
	TrainShapes int    `json:"train_shapes"`
	Params      Params `json:"params"`
	// RegimeParams are the hyperparameters each regime class's cells were compiled with, by class
	// name (Rule.RegimeParams).
	RegimeParams     map[string]Params `json:"regime_params,omitempty"`
	Default          string            `json:"default"`
	Candidates       []string          `json:"candidates"`
	BucketsPerOctave int               `json:"buckets_per_octave"`
	Cells            [3]int            `json:"cells"`
	// Dispatched lists the variants the table holds.
	Dispatched []string `json:"dispatched"`
	// WaveGuard is the wave guard's kernel (Rule.Guard; empty: none).
	WaveGuard string `json:"wave_guard,omitempty"`
	// BulkGuard is the bulk guard's kernel (Rule.Bulk; empty: none).
	BulkGuard string `json:"bulk_guard,omitempty"`
}

func (d *Data) ruleSummary(r *Rule, fold, train int) RuleSummary {
	s := RuleSummary{Fold: fold, TrainShapes: train, Params: r.Params, Default: d.Kernels[r.Default].Name,
		BucketsPerOctave: 1 << r.Shift, Cells: r.Dims()}
	s.RegimeParams = map[string]Params{}
	for reg, p := range r.RegimeParams {
		s.RegimeParams[RegimeNames[reg]] = p
	}
	for _, j := range r.Candidates {
		s.Candidates = append(s.Candidates, d.Kernels[j].Name)
	}
	for _, j := range r.Used() {
		s.Dispatched = append(s.Dispatched, d.Kernels[j].Name)
	}
	if r.Guard != nil {
		s.WaveGuard = d.Kernels[r.Guard.Kernel].Name
	}
	if r.Bulk != nil {
		s.BulkGuard = d.Kernels[r.Bulk.Kernel].Name
	}
	return s
}

// Summary renders the validation of d's rule; shapes are listed by problem size (flops), then shape.
func (v *Validation) Summary(d *Data) *Summary {
	s := &Summary{SMs: d.SMs, RatioDefinition: RatioDefinition, Folds: v.Folds, FoldRule: FoldRule, Kernels: len(d.Kernels),
		Regimes: []RegimeTotals{}, FoldRules: []RuleSummary{}}
	s.Rule = d.ruleSummary(v.Full, -1, len(d.Samples))
	for f, r := range v.Rules {
		if r == nil {
			continue
		}
		n := 0
		for _, g := range v.Fold {
			if g != f {
				n++
			}
		}
		s.FoldRules = append(s.FoldRules, d.ruleSummary(r, f, n))
	}
	type acc struct{ all, cv, best, near []float64 }
	byRegime := map[int]*acc{}
	var tot acc
	for i, smp := range d.Samples {
		sh := smp.Shape
		reg := Regime(float64(sh.M), float64(sh.N), float64(sh.K))
		r := ShapeResult{Shape: fmt.Sprintf("%dx%dx%d", sh.M, sh.N, sh.K), Source: smp.Source, Regime: RegimeNames[reg],
			Fold: v.Fold[i], Flops: 2 * float64(sh.M) * float64(sh.N) * float64(sh.K), CublasMS: smp.CublasMS,
			Variant: d.Kernels[v.All[i].Kernel].Name, Ratio: v.All[i].Ratio, Untimed: v.All[i].Imputed,
			VariantCV: d.Kernels[v.CV[i].Kernel].Name, RatioCV: v.CV[i].Ratio, UntimedCV: v.CV[i].Imputed,
			BestRatio: v.Best[i], NearestCV: v.Nearest[i].Ratio}
		if v.BestKernel[i] >= 0 {
			r.BestVariant = d.Kernels[v.BestKernel[i]].Name
		}
		s.Shapes = append(s.Shapes, r)
		if byRegime[reg] == nil {
			byRegime[reg] = &acc{}
		}
		for _, a := range []*acc{&tot, byRegime[reg]} {
			a.all, a.cv, a.best, a.near = append(a.all, r.Ratio), append(a.cv, r.RatioCV), append(a.best, r.BestRatio), append(a.near, r.NearestCV)
		}
	}
	sort.SliceStable(s.Shapes, func(i, j int) bool {
		if s.Shapes[i].Flops != s.Shapes[j].Flops {
			return s.Shapes[i].Flops < s.Shapes[j].Flops
		}
		return s.Shapes[i].Shape < s.Shapes[j].Shape
	})
	s.Totals = SummaryTotals{Summarize(tot.all), Summarize(tot.cv), Summarize(tot.best), Summarize(tot.near)}
	for reg, name := range RegimeNames {
		if a := byRegime[reg]; a != nil {
			s.Regimes = append(s.Regimes, RegimeTotals{name, SummaryTotals{Summarize(a.all), Summarize(a.cv), Summarize(a.best), Summarize(a.near)}})
		}
	}
	return s
}
