package orchestrator

import (
	"fmt"
	"math"
	"time"

	"tilegen/internal/protocol"
	"tilegen/internal/results"
)

// The time model of `runner tune --dry-run`: rough, per-measurement constants fitted to the
// committed H100 sweeps (results/bench/*/tune, tuning-cost/t4096 and the awkward-shape probes, whose
// cost.json it predicts within a third; TestEstimateMatchesCommittedRuns). Another GPU, or a
// catalog much faster or slower than that one, scales it.
const (
	// estRate is the speed of a typical variant of a sweep (the H100 sweeps' mean medians were
	// 8 to 23 TFLOP/s on large shapes), estLaunch the floor of one launch between two events.
	estRate   = 18e12
	estLaunch = 8 * time.Microsecond
	// estRequest is a request's fixed cost (protocol, module lookup); estTiming the fixed cost of
	// timing one (variant, shape): input sets, events, the read-back of the samples.
	estRequest = time.Millisecond
	estTiming  = 15 * time.Millisecond
	// estCompare is the verification cost per element of C per check (copy back, compare).
	estCompare = 1.8 * float64(time.Nanosecond)
	// estReference is the float64 reference kernel's speed: run per check, or once per shape when
	// the shape's inputs are shared (--shared-inputs-above).
	estReference = 2e12
	// estJIT is the driver's JIT of one module before the sweep, with the helper processes.
	estJIT = 80 * time.Millisecond
)

// estKernel is the modelled time of one launch on the shape.
func estKernel(s protocol.Shape) time.Duration {
	return estLaunch + time.Duration(results.Flops(s)/estRate*1e9)
}

// estTimed is the modelled number of timed launches: at least Reps, until MinTime, at most MaxReps.
func estTimed(t protocol.TimingSettings, k time.Duration) int {
	n := t.Reps
	if t.MinTimeMS > 0 {
		n = max(n, int(math.Ceil(t.MinTimeMS*1e6/float64(k))))
	}
	if t.MaxReps > 0 {
		n = min(n, max(t.MaxReps, t.Reps))
	}
	return n
}

// estChecks is the number of verification checks per measurement.
func estChecks(v protocol.VerifySettings) int {
	if v.SubMatrix {
		return 2
	}
	return 1
}

// EstimateMeasurement models one verified and timed measurement (a variant or cuBLAS) of a shape.
// shared says that the shape's inputs and float64 reference are shared by the run (their cost is
// EstimateSharedInputs, once per shape).
func EstimateMeasurement(s protocol.Shape, t protocol.TimingSettings, v protocol.VerifySettings, shared bool) time.Duration {
	k := estKernel(s)
	checks := time.Duration(estChecks(v))
	verify := checks * (k + time.Duration(float64(s.M)*float64(s.N)*estCompare))
	if !shared {
		verify += checks * time.Duration(results.Flops(s)/estReference*1e9)
	}
	timing := time.Duration(t.Warmup+estTimed(t, k))*k + estTiming
	return estRequest + verify + timing
}

// EstimateSharedInputs models the once-per-shape reference of a shape whose inputs are shared.
func EstimateSharedInputs(s protocol.Shape, v protocol.VerifySettings) time.Duration {
	return time.Duration(estChecks(v)) * time.Duration(results.Flops(s)/estReference*1e9)
}

// EstimateRank models the interleaved re-measurement of a shape's leaders: each round times every
// candidate (the leaders and cuBLAS); rounds stop early once the intervals separate, so half the
// rounds are counted.
func EstimateRank(s protocol.Shape, r RankSettings, candidates int) time.Duration {
	if r.Rounds <= 0 || candidates < 2 {
		return 0
	}
	rounds := max(1, (r.Rounds+1)/2)
	k := estKernel(s)
	perCandidate := estRequest + time.Duration(r.Timing.Warmup+r.Timing.Reps)*k
	return time.Duration(rounds*candidates) * perCandidate
}

// EstimateJIT models the driver's compilation of n modules before a sweep.
func EstimateJIT(n int) time.Duration { return time.Duration(n) * estJIT }

// estimateModel says in one paragraph how the estimate is made.
const estimateModel = "model: per measurement 1 ms + verification checks·(kernel + M·N·1.8 ns) + float64 " +
	"reference checks·2MNK/2 TFLOP/s (once per shape when inputs are shared) + timing (warmup + launches)·kernel + " +
	"15 ms, with kernel = 8 µs + 2MNK/18 TFLOP/s (a typical variant of an H100 sweep) and launches = " +
	"clamp(min-time/kernel, reps, max-reps); 80 ms of JIT per module; half the ranking rounds. Fitted to the " +
	"committed H100 runs (within a third of their cost.json); other GPUs and catalogs scale it"

// fmtDuration renders a duration for the plan: 3m32s, 41s, 0.8s.
func fmtDuration(d time.Duration) string {
	switch {
	case d >= time.Minute:
		return d.Round(time.Second).String()
	case d >= 10*time.Second:
		return fmt.Sprintf("%.0fs", d.Seconds())
	default:
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
}

// planCost is what the model says a plan costs.
type planCost struct {
	Measure, SharedInputs, Rank, JIT time.Duration
	// Total is the wall time: the measurements spread over the devices, the JIT on each at once.
	Total time.Duration
}

// estimatePlan models a tune run that makes perShape[s] measurements (variants and cuBLAS) of each
// shape, JIT-compiles modules modules and has devices GPUs.
func estimatePlan(cfg *Config, perShape map[protocol.Shape]int, modules, devices int) planCost {
	var c planCost
	for s, n := range perShape {
		if n == 0 {
			continue
		}
		shared := cfg.sharedInputs(s)
		c.Measure += time.Duration(n) * EstimateMeasurement(s, cfg.Timing, cfg.Verify, shared)
		if shared {
			c.SharedInputs += EstimateSharedInputs(s, cfg.Verify)
		}
		c.Rank += EstimateRank(s, cfg.Rank, min(cfg.Rank.Top, n-1)+1)
	}
	if modules > 0 {
		c.JIT = EstimateJIT(modules)
	}
	c.Total = (c.Measure+c.SharedInputs+c.Rank)/time.Duration(max(devices, 1)) + c.JIT
	return c
}
