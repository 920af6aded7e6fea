package main

import (
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"tilegen/internal/orchestrator"
	"tilegen/internal/protocol"
	"tilegen/internal/search"
	"tilegen/internal/variant"
	"tilegen/internal/workerproc"
)

// The flags several commands share are defined once here, as groups: each group's flags method
// makes a FlagSet bound to the group's fields, and a command composes the groups it takes with
// AddFlagSet. A group keeps its flags' order in help (its set is not sorted) and their bounds
// (atLeast annotates the flag itself). A command that words a shared flag differently says so
// next to the AddFlagSet with reword or redefault.
//
// Groups are made per invocation: parsing marks the flags themselves as changed, so a set must not
// outlive one run.

// group makes the flag set of a group of shared flags.
func group() *pflag.FlagSet {
	fs := pflag.NewFlagSet("", pflag.ContinueOnError)
	fs.SortFlags = false
	return fs
}

// reword gives a shared flag the help a command needs.
func reword(fs *pflag.FlagSet, name, usage string) {
	fs.Lookup(name).Usage = usage
}

// redefault gives a shared string flag the default a command needs.
func redefault(fs *pflag.FlagSet, name, value string) {
	f := fs.Lookup(name)
	if err := f.Value.Set(value); err != nil {
		panic(err) // a default the flag refuses is a programming error
	}
	f.DefValue = value
}

// catalogFlags choose the variants: --generated (which catalog) and --variants, --family, --param
// (which of its variants).
type catalogFlags struct {
	generated                  string
	variants, families, params []string
	ops                        string
	precision                  string
}

// sourceFlags is --generated.
func (c *catalogFlags) sourceFlags() *pflag.FlagSet {
	fs := group()
	fs.StringVar(&c.generated, "generated", "", "read variants from the generated `dir` instead of the built-in catalog")
	return fs
}

// filterFlags are the variant selection flags: --variants, --family and --param.
func (c *catalogFlags) filterFlags() *pflag.FlagSet {
	fs := group()
	fs.StringSliceVar(&c.variants, "variants", nil, "only variants whose name matches a `glob` (comma-separated)")
	fs.StringSliceVar(&c.families, "family", nil, "only variants of the family `name` (comma-separated)")
	fs.StringArrayVar(&c.params, "param", nil, "only variants whose parameter KEY has one of the values: `KEY=V[,V...]` (repeatable; keys combine with and)")
	fs.StringVar(&c.ops, "ops", "", "only variants of these `ops` (comma-separated NN, NT, TN, TT); tune and bench run every shape under each")
	fs.StringVar(&c.precision, "precision", "fp32", "only variants of these `precisions` (comma-separated fp32, 3xtf32, tf32, or all): 3xtf32 is FP32-accurate on TF32 tensor cores, tf32 one TF32 product (its own tolerance, baseline cuBLAS TF32); tune and bench run every shape under each")
	return fs
}

// filter makes the variant filter of the selection flags.
func (c *catalogFlags) filter(cmd string) (orchestrator.Filter, error) {
	p, err := orchestrator.ParseParams(c.params)
	if err != nil {
		return orchestrator.Filter{}, usageErr(cmd, "%v", err)
	}
	var ops []variant.Op
	if c.ops != "" {
		if ops, err = variant.ParseOps(c.ops); err != nil {
			return orchestrator.Filter{}, usageErr(cmd, "--ops: %v", err)
		}
	}
	precs, err := variant.ParsePrecisions(c.precision)
	if err != nil {
		return orchestrator.Filter{}, usageErr(cmd, "--precision: %v", err)
	}
	return orchestrator.Filter{Globs: c.variants, Families: c.families, Params: p, Ops: ops, Precisions: precs}, nil
}

// catalog loads the catalog --generated names.
func (c *catalogFlags) catalog() (orchestrator.Catalog, error) {
	return loadCatalog(c.generated)
}

// workerFlags name the GPU worker binary (--worker) and the devices it runs on (--devices).
type workerFlags struct {
	worker, devices string
}

// flags is --worker, and --devices when withDevices.
func (w *workerFlags) flags(withDevices bool) *pflag.FlagSet {
	fs := group()
	fs.StringVar(&w.worker, "worker", "", "GPU worker binary `path` (default: tilegen-worker beside the runner, else on PATH)")
	if withDevices {
		fs.StringVar(&w.devices, "devices", "all", "GPU `indexes` to use, e.g. 0,1, or all")
	}
	return fs
}

// parseDevices reads --devices.
func (w *workerFlags) parseDevices(cmd string) ([]int, error) {
	devs, err := workerproc.ParseDevices(w.devices)
	if err != nil {
		return nil, usageErr(cmd, "%v", err)
	}
	return devs, nil
}

// tolFactorFlags is --tol-factor, the verification tolerance of everything that verifies.
func tolFactorFlags(p *float64) *pflag.FlagSet {
	fs := group()
	fs.Float64Var(p, "tol-factor", 2, "verification tolerance `factor` (tol = factor·K·2^-24·|A||B|)")
	atLeast(fs, ">0", "tol-factor")
	return fs
}

// verifyFlags are the verification settings of the engine's commands.
type verifyFlags struct {
	subMatrix                        bool
	cpuCheck, sharedAbove, tolFactor float64
	sharedElems                      int
}

func (v *verifyFlags) flags() *pflag.FlagSet {
	fs := group()
	fs.BoolVar(&v.subMatrix, "sub-matrix", true, "also verify with alpha, beta != 0 and padded leading dimensions")
	fs.Float64Var(&v.cpuCheck, "cpu-check-max-flops", 1e8, "cross-check the GPU reference on the CPU when 2MNK is at most `flops`")
	fs.Float64Var(&v.sharedAbove, "shared-inputs-above", 1e10, "verify every variant of a shape on the same fresh inputs (drawn and referenced once per run) when 2MNK is above `flops`; 0: fresh inputs per variant always")
	fs.IntVar(&v.sharedElems, "shared-inputs-elements", 8_000_000, "also share them when the result has more than `n` elements (M·N·batch), where drawing and comparing it on the host outweighs the launches; 0: by flops only")
	atLeast(fs, ">=0", "cpu-check-max-flops", "shared-inputs-above", "shared-inputs-elements")
	fs.AddFlagSet(tolFactorFlags(&v.tolFactor))
	return fs
}

func (v *verifyFlags) settings() protocol.VerifySettings {
	return protocol.VerifySettings{SubMatrix: v.subMatrix, CPUCheckMaxFlops: v.cpuCheck, TolFactor: v.tolFactor}
}

// watchdogFlags bound the time a worker may take per request.
type watchdogFlags struct {
	timeoutFloor, timeoutCap   time.Duration
	timeoutFactor, floorGFLOPS float64
}

func (w *watchdogFlags) flags() *pflag.FlagSet {
	fs := group()
	wd := orchestrator.DefaultWatchdog()
	fs.DurationVar(&w.timeoutFloor, "timeout-floor", wd.Floor, "shortest watchdog `duration` per request")
	fs.DurationVar(&w.timeoutCap, "timeout-cap", wd.Cap, "longest watchdog `duration` per request")
	fs.Float64Var(&w.timeoutFactor, "timeout-factor", wd.Factor, "watchdog: expect a launch to take at most `factor` times cuBLAS's")
	fs.Float64Var(&w.floorGFLOPS, "floor-gflops", wd.FloorGFLOPS, "watchdog without a cuBLAS time: expect at least `rate` GFLOP/s")
	atLeast(fs, ">0", "timeout-floor", "timeout-cap", "timeout-factor", "floor-gflops")
	return fs
}

// watchdog checks the flags and makes the watchdog.
func (w *watchdogFlags) watchdog(cmd string) (orchestrator.Watchdog, error) {
	wd := orchestrator.DefaultWatchdog()
	if w.timeoutCap < w.timeoutFloor {
		return wd, usageErr(cmd, "--timeout-floor %s and --timeout-cap %s: want floor <= cap", w.timeoutFloor, w.timeoutCap)
	}
	wd.Floor, wd.Cap, wd.Factor, wd.FloorGFLOPS = w.timeoutFloor, w.timeoutCap, w.timeoutFactor, w.floorGFLOPS
	return wd, nil
}

// outputFlags say where the engine's commands write: the cache, the results dir, the progress.
type outputFlags struct {
	cache, out, progress string
	retryFailed          bool
}

func (o *outputFlags) flags(defaultOut string) *pflag.FlagSet {
	fs := group()
	fs.StringVar(&o.cache, "cache", "results/cache.jsonl", "append-only result cache `file`")
	fs.StringVar(&o.out, "out", defaultOut, "results `dir`")
	fs.StringVar(&o.progress, "progress", "auto", "progress `mode`: auto (a bar on a terminal), bar, plain or none")
	fs.BoolVar(&o.retryFailed, "retry-failed", false, "measure cached failures again")
	return fs
}

// timingFlags are the timing flags of tune, bench and study.
type timingFlags struct {
	warmup, reps, maxReps int
	minTime               time.Duration
}

func (t *timingFlags) flags() *pflag.FlagSet {
	fs := group()
	fs.IntVar(&t.warmup, "warmup", 3, "untimed launches before timing (`n`)")
	fs.IntVar(&t.reps, "reps", 20, "least timed launches (`n`)")
	fs.DurationVar(&t.minTime, "min-time", 100*time.Millisecond, "least total timed `duration`; launches grow until reached")
	fs.IntVar(&t.maxReps, "max-reps", 1000, "most timed launches (`n`, at least --reps)")
	atLeast(fs, ">=0", "warmup")
	atLeast(fs, ">=1", "reps", "max-reps")
	atLeast(fs, ">0", "min-time")
	return fs
}

func (t *timingFlags) timing(cmd string, cold bool) (protocol.TimingSettings, error) {
	if t.maxReps < t.reps {
		return protocol.TimingSettings{}, usageErr(cmd, "--max-reps %d is below --reps %d", t.maxReps, t.reps)
	}
	return protocol.TimingSettings{Warmup: t.warmup, Reps: t.reps, MinTimeMS: float64(t.minTime.Microseconds()) / 1000,
		MaxReps: t.maxReps, Cold: cold}, nil
}

// tuneFlags are the timing, search and ranking flags of tune (and bench).
type tuneFlags struct {
	timingFlags
	strategy, budget      string
	cold                  bool
	rounds, top, rankReps int
	near                  float64
	tableTop              int
}

func (t *tuneFlags) flags() *pflag.FlagSet {
	fs := group()
	fs.StringVar(&t.strategy, "strategy", search.Exhaustive, "`name`: exhaustive (every variant), random (--budget variants per shape, drawn from --seed) or model (the most promising first, learning from each measurement, until --budget)")
	fs.StringVar(&t.budget, "budget", "", "measurements per shape for --strategy random or model: a count `n`, or a fraction of the shape's candidates (0.2 or 20%); model's default 20%")
	fs.AddFlagSet(t.timingFlags.flags())
	fs.BoolVar(&t.cold, "cold", false, "flush L2 before every timed launch")
	fs.IntVar(&t.rounds, "rank-rounds", 10, "most interleaved re-measurement rounds per shape (`n`; 0: rank by the sweep)")
	fs.IntVar(&t.top, "rank-top", 3, "re-measure at most `n` leading variants per shape, plus cuBLAS")
	fs.Float64Var(&t.near, "rank-near", 5, "re-measure variants within `pct` percent of the best")
	fs.IntVar(&t.rankReps, "rank-reps", 10, "timed launches per candidate per round (`n`)")
	fs.IntVar(&t.tableTop, "table-top", 20, "ranked rows printed per shape (`n`; 0: all)")
	atLeast(fs, ">=1", "rank-top", "rank-reps")
	atLeast(fs, ">=0", "rank-rounds", "rank-near", "table-top")
	return fs
}

// check refuses flag combinations that make no sense (shard: --shard's value); call it before
// config.
func (t *tuneFlags) check(cmd, shard string) error {
	var b search.Budget
	if t.budget != "" {
		var err error
		if b, err = search.ParseBudget(t.budget); err != nil {
			return usageErr(cmd, "--%v", err)
		}
	}
	switch {
	case !slices.Contains(search.Methods, t.strategy):
		return usageErr(cmd, "--strategy %q: want %s", t.strategy, strings.Join(search.Methods, ", "))
	case t.strategy == search.Random && b.IsZero():
		return usageErr(cmd, "--strategy random needs --budget (measurements per shape: n, or a fraction such as 0.2)")
	case t.strategy == search.Exhaustive && !b.IsZero():
		return usageErr(cmd, "--budget %s: only --strategy random or model take a budget", t.budget)
	case t.strategy == search.Model && shard != "":
		return usageErr(cmd, "--shard with --strategy model: the search learns across the run's shapes, so a shard's picks would depend on the others; give each job its own shapes (--shapes-file) instead")
	}
	_, err := t.timing(cmd, t.cold)
	return err
}

// apply sets the checked flags in cfg.
func (t *tuneFlags) apply(cfg *orchestrator.Config) {
	ts, _ := t.timing("", t.cold)
	b, _ := search.ParseBudget(t.budget) // checked; "" leaves the zero budget
	cfg.Strategy.Name, cfg.Strategy.Budget = t.strategy, b
	cfg.Timing = ts
	cfg.Rank = orchestrator.RankSettings{Rounds: t.rounds, Top: t.top, NearPct: t.near,
		Timing: protocol.TimingSettings{Warmup: 2, Reps: t.rankReps, MaxReps: t.rankReps, Cold: t.cold}}
	cfg.TableTop = t.tableTop
}
