package search

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"tilegen/internal/results"
	"tilegen/internal/variant"
)

// EvalConfig configures Evaluate.
type EvalConfig struct {
	// Within is the tolerance around the exhaustive winner (default 0.01).
	Within float64
	// Fraction is the budget the target allows, a fraction of each shape's candidates (default
	// 0.2: a fifth).
	Fraction float64
	// Seeds is how many seeds the random method is replayed with (default 101), ModelSeeds the
	// model method (default 21; the seed only orders candidates the model cannot tell apart).
	Seeds, ModelSeeds int
	// Device is the model's GPU.
	Device Device
}

// ShapeEval is one shape of an evaluation.
type ShapeEval struct {
	Shape string `json:"shape"`
	// Candidates, Good (within the tolerance of the winner), Best and BestMS: see ShapeReplay.
	Candidates int     `json:"candidates"`
	Good       int     `json:"good"`
	Best       string  `json:"best"`
	BestMS     float64 `json:"best_ms"`
	// Limit is the target's budget, ⌊Fraction·Candidates⌋ measurements (at least 1).
	Limit int `json:"limit"`
	// Model is the measurements the model method needed with every shape of the set searched in
	// one run (learning across shapes), median over the model seeds, and ModelWorst the most;
	// ModelIsolated and ModelIsolatedWorst with this shape searched alone.
	Model              float64 `json:"model_median"`
	ModelWorst         float64 `json:"model_worst"`
	ModelIsolated      float64 `json:"model_isolated_median"`
	ModelIsolatedWorst float64 `json:"model_isolated_worst"`
	// Random is the random method's measurements needed: median, 10th and 90th percentile over
	// the seeds.
	Random    float64 `json:"random_median"`
	RandomP10 float64 `json:"random_p10"`
	RandomP90 float64 `json:"random_p90"`
	// AtLimit is the best time found within Limit measurements over the winner's (1: the winner or
	// one as fast), median over the seeds: the model in one run and alone, and random.
	ModelAtLimit         float64 `json:"model_at_limit_median"`
	ModelIsolatedAtLimit float64 `json:"model_isolated_at_limit_median"`
	RandomAtLimit        float64 `json:"random_at_limit_median"`
	// FirstPicks are the model's first measurements on the shape (in one run, the first seed).
	FirstPicks []string `json:"first_picks"`
}

// Eval is the evaluation of the search methods on one oracle.
type Eval struct {
	Within     float64 `json:"within"`
	Fraction   float64 `json:"fraction"`
	Seeds      int     `json:"seeds"`
	ModelSeeds int     `json:"model_seeds"`
	// Unknown counts recorded (variant, shape) pairs whose variant the catalog lacks (left out).
	Unknown int         `json:"unknown"`
	Shapes  []ShapeEval `json:"shapes"`
	// Totals over the shapes (of the medians), and how many shapes met the target (median needed ≤
	// limit); WorstModelOverLimit is the largest model median over its limit.
	TotalCandidates    int     `json:"total_candidates"`
	TotalLimit         int     `json:"total_limit"`
	TotalModel         float64 `json:"total_model_median"`
	TotalModelIsolated float64 `json:"total_model_isolated_median"`
	TotalRandom        float64 `json:"total_random_median"`
	MetModel           int     `json:"met_model"`
	MetModelIsolated   int     `json:"met_model_isolated"`
	MetRandom          int     `json:"met_random_median"`
	// RunsMet counts the (shape, seed) replays of the model in one run that met the target, of Runs.
	RunsMet             int     `json:"model_runs_met"`
	Runs                int     `json:"model_runs"`
	WorstModelOverLimit float64 `json:"worst_model_over_limit"`
}

// Evaluate replays the model method (all shapes in one run, and each alone) and the random method
// (cfg.Seeds seeds) against the oracle and reports, per shape, the measurements each needed to
// reach a variant within cfg.Within of the exhaustive winner, next to the target's limit.
func Evaluate(o Oracle, catalog []variant.Variant, cfg EvalConfig) (Eval, error) {
	if cfg.Within <= 0 {
		cfg.Within = 0.01
	}
	if cfg.Fraction <= 0 {
		cfg.Fraction = 0.2
	}
	if cfg.Seeds < 1 {
		cfg.Seeds = 101
	}
	if cfg.ModelSeeds < 1 {
		cfg.ModelSeeds = 21
	}
	ev := Eval{Within: cfg.Within, Fraction: cfg.Fraction, Seeds: cfg.Seeds, ModelSeeds: cfg.ModelSeeds}
	// runs replays a method over seeds: per shape, the measurements needed and the best found at
	// the limit, one value per seed.
	type runs struct {
		needed, atLimit [][]float64
		first           []ShapeReplay
	}
	replay := func(method string, isolated bool, seeds int) (runs, error) {
		var out runs
		for seed := 1; seed <= seeds; seed++ {
			// Each shape's search goes on until it found the winner and spent the target's budget:
			// what a run with that budget would have learned from it.
			rr, unknown, err := Replay(o, catalog, ReplayConfig{Method: method, Seed: uint64(seed), Device: cfg.Device,
				Within: cfg.Within, Isolated: isolated, Until: func(n int) int { return evalLimit(cfg.Fraction, n) }})
			if err != nil {
				return out, err
			}
			if seed == 1 {
				out.first = rr
				out.needed, out.atLimit = make([][]float64, len(rr)), make([][]float64, len(rr))
				ev.Unknown = unknown
			}
			for i, r := range rr {
				out.needed[i] = append(out.needed[i], float64(r.Needed))
				out.atLimit[i] = append(out.atLimit[i], r.BestAt[evalLimit(cfg.Fraction, r.Candidates)-1])
			}
		}
		return out, nil
	}
	joint, err := replay(Model, false, cfg.ModelSeeds)
	if err != nil {
		return ev, err
	}
	alone, err := replay(Model, true, cfg.ModelSeeds)
	if err != nil {
		return ev, err
	}
	rnd, err := replay(Random, false, cfg.Seeds)
	if err != nil {
		return ev, err
	}
	for i, r := range joint.first {
		lim := evalLimit(cfg.Fraction, r.Candidates)
		se := ShapeEval{Shape: results.ShapeString(r.Shape), Candidates: r.Candidates, Good: r.Good, Best: r.Best,
			BestMS: r.BestMS, Limit: lim,
			Model: quantile(joint.needed[i], 0.5), ModelWorst: quantile(joint.needed[i], 1),
			ModelIsolated: quantile(alone.needed[i], 0.5), ModelIsolatedWorst: quantile(alone.needed[i], 1),
			Random: quantile(rnd.needed[i], 0.5), RandomP10: quantile(rnd.needed[i], 0.1), RandomP90: quantile(rnd.needed[i], 0.9),
			ModelAtLimit: quantile(joint.atLimit[i], 0.5), ModelIsolatedAtLimit: quantile(alone.atLimit[i], 0.5),
			RandomAtLimit: quantile(rnd.atLimit[i], 0.5), FirstPicks: r.Order[:min(5, len(r.Order))]}
		ev.Shapes = append(ev.Shapes, se)
		ev.TotalCandidates += se.Candidates
		ev.TotalLimit += lim
		ev.TotalModel += se.Model
		ev.TotalModelIsolated += se.ModelIsolated
		ev.TotalRandom += se.Random
		if se.Model <= float64(lim) {
			ev.MetModel++
		}
		for _, n := range joint.needed[i] {
			ev.Runs++
			if n <= float64(lim) {
				ev.RunsMet++
			}
		}
		if se.ModelIsolated <= float64(lim) {
			ev.MetModelIsolated++
		}
		if se.Random <= float64(lim) {
			ev.MetRandom++
		}
		ev.WorstModelOverLimit = math.Max(ev.WorstModelOverLimit, se.Model/float64(lim))
	}
	return ev, nil
}

// evalLimit is the target's budget for n candidates: ⌊fraction·n⌋ ("at most a fifth"), at least 1.
func evalLimit(fraction float64, n int) int {
	return max(1, int(math.Floor(fraction*float64(n)+1e-9)))
}

// quantile is the q-quantile of xs (nearest rank on the sorted values).
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[min(len(s)-1, int(math.Round(q*float64(len(s)-1))))]
}

// Markdown renders the evaluation as a table, with the totals.
func (ev Eval) Markdown(title string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## %s\n\n", title)
	fmt.Fprintf(&b, "Measurements until a variant within %g %% of the exhaustive winner was measured; the target is at most "+
		"%g %% of a shape's candidates (\"limit\"). Model: every shape searched in one run (learning across shapes), "+
		"median and worst over %d seeds (a seed only orders what the model cannot tell apart); alone: each shape by "+
		"itself. Random: median (10th–90th percentile) over %d seeds. \"at limit\": the best found within the limit "+
		"over the winner's time (median over the seeds).\n\n", 100*ev.Within, 100*ev.Fraction, ev.ModelSeeds, ev.Seeds)
	b.WriteString("| shape | candidates | within | limit | model (worst) | alone (worst) | random (p10–p90) | model at limit | alone at limit | random at limit |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---|---:|---:|---:|\n")
	mark := func(n float64, lim int) string {
		if n <= float64(lim) {
			return "✓"
		}
		return "✗"
	}
	for _, s := range ev.Shapes {
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %.0f %s (%.0f) | %.0f %s (%.0f) | %.0f %s (%.0f–%.0f) | %.3f | %.3f | %.3f |\n", s.Shape,
			s.Candidates, s.Good, s.Limit, s.Model, mark(s.Model, s.Limit), s.ModelWorst, s.ModelIsolated,
			mark(s.ModelIsolated, s.Limit), s.ModelIsolatedWorst, s.Random, mark(s.Random, s.Limit), s.RandomP10, s.RandomP90,
			s.ModelAtLimit, s.ModelIsolatedAtLimit, s.RandomAtLimit)
	}
	fmt.Fprintf(&b, "| **total** | %d | | %d | %.0f (%d/%d met) | %.0f (%d/%d met) | %.0f (%d/%d met) | | | |\n\n",
		ev.TotalCandidates, ev.TotalLimit, ev.TotalModel, ev.MetModel, len(ev.Shapes), ev.TotalModelIsolated,
		ev.MetModelIsolated, len(ev.Shapes), ev.TotalRandom, ev.MetRandom, len(ev.Shapes))
	fmt.Fprintf(&b, "Model in one run, every seed: %d of %d (shape, seed) replays met the target.\n\n", ev.RunsMet, ev.Runs)
	if ev.Unknown > 0 {
		fmt.Fprintf(&b, "%d recorded measurements of variants the catalog no longer has were left out.\n\n", ev.Unknown)
	}
	return b.String()
}
