package main

import (
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"tilegen/internal/orchestrator"
	"tilegen/internal/protocol"
	"tilegen/internal/results"
)

// common are the flags tune, verify, bench and study share.
type common struct {
	cmd                                string // the command, for usage errors
	generated, worker, devices, shapes string
	variants, families, params         []string
	seed                               uint64
	shard                              string
	subMatrix                          bool
	cpuCheck, tolFactor, sharedAbove   float64
	timeoutFloor, timeoutCap           time.Duration
	timeoutFactor, floorGFLOPS         float64
	cache, out, progress               string
	retryFailed                        bool
}

func (c *common) register(fs *pflag.FlagSet, defaultShapes, defaultOut string) {
	c.cmd = fs.Name()
	wd := orchestrator.DefaultWatchdog()
	fs.StringVar(&c.generated, "generated", "", "read variants from the generated `dir` (manifest.json, ptx/) instead of the built-in catalog")
	fs.StringVar(&c.worker, "worker", "", "GPU worker binary `path` (default: tilegen-worker beside the runner, else on PATH)")
	fs.StringVar(&c.devices, "devices", "all", "GPU `indexes` to use, e.g. 0,1, or all")
	fs.StringVar(&c.shapes, "shapes", defaultShapes, "comma-separated `MxNxK` shapes")
	registerFilter(fs, &c.variants, &c.families, &c.params)
	fs.Uint64Var(&c.seed, "seed", 1, "run `seed`: verification inputs and the random strategy derive from it")
	fs.StringVar(&c.shard, "shard", "", "run only part `i/n` (0 <= i < n) of the plan; combine parts with runner merge")
	fs.BoolVar(&c.subMatrix, "sub-matrix", true, "also verify with alpha, beta != 0 and padded leading dimensions")
	fs.Float64Var(&c.cpuCheck, "cpu-check-max-flops", 1e8, "cross-check the GPU reference on the CPU when 2MNK is at most `flops`")
	fs.Float64Var(&c.sharedAbove, "shared-inputs-above", 1e10, "verify every variant of a shape on the same fresh inputs (drawn and referenced once per run) when 2MNK is above `flops`; 0: fresh inputs per variant always")
	fs.Float64Var(&c.tolFactor, "tol-factor", 2, "verification tolerance `factor` (tol = factor·K·2^-24·|A||B|)")
	fs.DurationVar(&c.timeoutFloor, "timeout-floor", wd.Floor, "shortest watchdog `duration` per request")
	fs.DurationVar(&c.timeoutCap, "timeout-cap", wd.Cap, "longest watchdog `duration` per request")
	fs.Float64Var(&c.timeoutFactor, "timeout-factor", wd.Factor, "watchdog: expect a launch to take at most `factor` times cuBLAS's")
	fs.Float64Var(&c.floorGFLOPS, "floor-gflops", wd.FloorGFLOPS, "watchdog without a cuBLAS time: expect at least `rate` GFLOP/s")
	fs.StringVar(&c.cache, "cache", "results/cache.jsonl", "append-only result cache `file`")
	fs.StringVar(&c.out, "out", defaultOut, "results `dir`")
	fs.StringVar(&c.progress, "progress", "auto", "progress `mode`: auto (a bar on a terminal), bar, plain or none")
	fs.BoolVar(&c.retryFailed, "retry-failed", false, "measure cached failures again")
	atLeast(fs, ">=0", "seed", "cpu-check-max-flops", "shared-inputs-above")
	atLeast(fs, ">0", "tol-factor", "timeout-floor", "timeout-cap", "timeout-factor", "floor-gflops")
}

// registerFilter adds the variant selection flags: --variants, --family and --param.
func registerFilter(fs *pflag.FlagSet, variants, families, params *[]string) {
	fs.StringSliceVar(variants, "variants", nil, "only variants whose name matches a `glob` (comma-separated)")
	fs.StringSliceVar(families, "family", nil, "only variants of the family `name` (comma-separated)")
	fs.StringArrayVar(params, "param", nil, "only variants whose parameter KEY has one of the values: `KEY=V[,V...]` (repeatable; keys combine with and)")
}

// filter makes the variant filter of the selection flags.
func filter(cmd string, variants, families, params []string) (orchestrator.Filter, error) {
	p, err := orchestrator.ParseParams(params)
	if err != nil {
		return orchestrator.Filter{}, usageErr(cmd, "%v", err)
	}
	return orchestrator.Filter{Globs: variants, Families: families, Params: p}, nil
}

// config checks the flags and makes the run's configuration; needWorker finds the worker binary
// (a dry run needs none).
func (c *common) config(stdout, stderr io.Writer, needWorker bool) (*orchestrator.Config, error) {
	devs, err := orchestrator.ParseDevices(c.devices)
	if err != nil {
		return nil, usageErr(c.cmd, "%v", err)
	}
	var shapes []protocol.Shape
	if c.shapes != "" {
		if shapes, err = results.ParseShapes(c.shapes); err != nil {
			return nil, usageErr(c.cmd, "--shapes: %v", err)
		}
	}
	shard, err := orchestrator.ParseShard(c.shard)
	if err != nil {
		return nil, usageErr(c.cmd, "%v", err)
	}
	if !orchestrator.ValidProgress(c.progress) {
		return nil, usageErr(c.cmd, "--progress %q: want auto, bar, plain or none", c.progress)
	}
	if c.timeoutCap < c.timeoutFloor {
		return nil, usageErr(c.cmd, "--timeout-floor %s and --timeout-cap %s: want floor <= cap", c.timeoutFloor, c.timeoutCap)
	}
	flt, err := filter(c.cmd, c.variants, c.families, c.params)
	if err != nil {
		return nil, err
	}
	cat, err := loadCatalog(c.generated)
	if err != nil {
		return nil, err
	}
	var worker string
	var wargs []string
	if needWorker {
		if worker, err = orchestrator.FindWorker(c.worker); err != nil {
			return nil, err
		}
		if wargs, err = orchestrator.WorkerArgs(cat); err != nil {
			return nil, err
		}
	}
	wd := orchestrator.DefaultWatchdog()
	wd.Floor, wd.Cap, wd.Factor, wd.FloorGFLOPS = c.timeoutFloor, c.timeoutCap, c.timeoutFactor, c.floorGFLOPS
	return &orchestrator.Config{
		Catalog: cat, Worker: worker, WorkerArgs: wargs, Devices: devs, Shapes: shapes,
		Filter:            flt,
		Strategy:          orchestrator.Strategy{Name: "exhaustive", Seed: c.seed},
		Shard:             shard,
		Verify:            protocol.VerifySettings{SubMatrix: c.subMatrix, CPUCheckMaxFlops: c.cpuCheck, TolFactor: c.tolFactor},
		SharedInputsAbove: c.sharedAbove,
		Watchdog:          wd, CachePath: c.cache, Out: c.out, RetryFailed: c.retryFailed, Progress: c.progress,
		Stdout: stdout, Stderr: stderr,
	}, nil
}

// timingFlags are the timing flags of tune, bench and study.
type timingFlags struct {
	warmup, reps, maxReps int
	minTime               time.Duration
}

func (t *timingFlags) register(fs *pflag.FlagSet) {
	fs.IntVar(&t.warmup, "warmup", 3, "untimed launches before timing (`n`)")
	fs.IntVar(&t.reps, "reps", 20, "least timed launches (`n`)")
	fs.DurationVar(&t.minTime, "min-time", 100*time.Millisecond, "least total timed `duration`; launches grow until reached")
	fs.IntVar(&t.maxReps, "max-reps", 1000, "most timed launches (`n`, at least --reps)")
	atLeast(fs, ">=0", "warmup")
	atLeast(fs, ">=1", "reps", "max-reps")
	atLeast(fs, ">0", "min-time")
}

func (t *timingFlags) settings(cmd string, cold bool) (protocol.TimingSettings, error) {
	if t.maxReps < t.reps {
		return protocol.TimingSettings{}, usageErr(cmd, "--max-reps %d is below --reps %d", t.maxReps, t.reps)
	}
	return protocol.TimingSettings{Warmup: t.warmup, Reps: t.reps, MinTimeMS: float64(t.minTime.Microseconds()) / 1000,
		MaxReps: t.maxReps, Cold: cold}, nil
}

// tuneFlags are the timing, search and ranking flags of tune (and bench).
type tuneFlags struct {
	timingFlags
	strategy              string
	budget                int
	cold                  bool
	rounds, top, rankReps int
	near                  float64
	tableTop              int
}

func (t *tuneFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&t.strategy, "strategy", "exhaustive", "`name`: exhaustive (every variant) or random (--budget variants per shape)")
	fs.IntVar(&t.budget, "budget", 0, "variants per shape for --strategy random (`n`)")
	t.timingFlags.register(fs)
	fs.BoolVar(&t.cold, "cold", false, "flush L2 before every timed launch")
	fs.IntVar(&t.rounds, "rank-rounds", 10, "most interleaved re-measurement rounds per shape (`n`; 0: rank by the sweep)")
	fs.IntVar(&t.top, "rank-top", 3, "re-measure at most `n` leading variants per shape, plus cuBLAS")
	fs.Float64Var(&t.near, "rank-near", 5, "re-measure variants within `pct` percent of the best")
	fs.IntVar(&t.rankReps, "rank-reps", 10, "timed launches per candidate per round (`n`)")
	fs.IntVar(&t.tableTop, "table-top", 20, "ranked rows printed per shape (`n`; 0: all)")
	atLeast(fs, ">=1", "budget", "rank-top", "rank-reps")
	atLeast(fs, ">=0", "rank-rounds", "rank-near", "table-top")
}

// check refuses flag combinations that make no sense; call it before config.
func (t *tuneFlags) check(cmd string) error {
	switch {
	case t.strategy != "exhaustive" && t.strategy != "random":
		return usageErr(cmd, "--strategy %q: want exhaustive or random", t.strategy)
	case t.strategy == "random" && t.budget < 1:
		return usageErr(cmd, "--strategy random needs --budget n (n >= 1 variants per shape)")
	case t.strategy != "random" && t.budget != 0:
		return usageErr(cmd, "--budget %d: only --strategy random takes a budget", t.budget)
	}
	_, err := t.settings(cmd, t.cold)
	return err
}

// apply sets the checked flags in cfg.
func (t *tuneFlags) apply(cfg *orchestrator.Config) {
	ts, _ := t.settings("", t.cold)
	cfg.Strategy.Name, cfg.Strategy.Budget = t.strategy, t.budget
	cfg.Timing = ts
	cfg.Rank = orchestrator.RankSettings{Rounds: t.rounds, Top: t.top, NearPct: t.near,
		Timing: protocol.TimingSettings{Warmup: 2, Reps: t.rankReps, MaxReps: t.rankReps, Cold: t.cold}}
	cfg.TableTop = t.tableTop
}

// noArgs refuses positional arguments.
func noArgs(fs *pflag.FlagSet) error {
	if fs.NArg() > 0 {
		return usageErr(fs.Name(), "unexpected arguments %s", strings.Join(fs.Args(), " "))
	}
	return nil
}

func runTune(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("tune", "[flags]", stdout)
	var c common
	c.register(fs, orchestrator.DefaultShapes, "results/tune")
	var t tuneFlags
	t.register(fs)
	dryRun := fs.Bool("dry-run", false, "print the plan (variants × shapes, pruned with reasons, cached, to measure, estimated time) and exit: no GPU, nothing written")
	sms := fs.Int("sms", 0, "with --dry-run: the SM count the split-K rule assumes (`n`; 0: the known GPUs', else 132)")
	atLeast(fs, ">=0", "sms")
	if ok, err := parse(fs, args); !ok || err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	if fs.Changed("sms") && !*dryRun {
		return usageErr("tune", "--sms is for --dry-run (a run uses its GPUs' SM count)")
	}
	if err := t.check("tune"); err != nil {
		return err
	}
	cfg, err := c.config(stdout, stderr, !*dryRun)
	if err != nil {
		return err
	}
	t.apply(cfg)
	if *dryRun {
		return orchestrator.DryRun(cfg, *sms)
	}
	return orchestrator.Tune(cfg)
}

func runVerify(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("verify", "[flags]", stdout)
	var c common
	c.register(fs, "", "results/verify")
	fs.Lookup("shapes").Usage = "comma-separated `MxNxK` shapes instead of each variant's edge suite"
	if ok, err := parse(fs, args); !ok || err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	cfg, err := c.config(stdout, stderr, true)
	if err != nil {
		return err
	}
	return orchestrator.Verify(cfg)
}

func runList(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("list", "[flags]", stdout)
	generated := fs.String("generated", "", "read variants from the generated `dir` instead of the built-in catalog")
	var variants, families, params []string
	registerFilter(fs, &variants, &families, &params)
	if ok, err := parse(fs, args); !ok || err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	flt, err := filter("list", variants, families, params)
	if err != nil {
		return err
	}
	cat, err := loadCatalog(*generated)
	if err != nil {
		return err
	}
	return orchestrator.List(cat, flt, stdout)
}

func runDevices(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("devices", "[flags]", stdout)
	worker := fs.String("worker", "", "GPU worker binary `path` (default: tilegen-worker beside the runner, else on PATH)")
	devices := fs.String("devices", "all", "GPU `indexes` to query, e.g. 0,1, or all")
	if ok, err := parse(fs, args); !ok || err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	devs, err := orchestrator.ParseDevices(*devices)
	if err != nil {
		return usageErr("devices", "%v", err)
	}
	bin, err := orchestrator.FindWorker(*worker)
	if err != nil {
		return err
	}
	return orchestrator.Devices(bin, devs, orchestrator.DefaultWatchdog(), stdout)
}

func runMerge(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("merge", "DIR... --out DIR", stdout)
	out := fs.String("out", "", "merged results `dir` (required)")
	partial := fs.Bool("allow-partial", false, "merge an incomplete set of shards (the missing ones are named) instead of refusing it")
	if ok, err := parse(fs, args); !ok || err != nil {
		return err
	}
	if *out == "" || fs.NArg() == 0 {
		return usageErr("merge", "want result directories and --out DIR")
	}
	return orchestrator.Merge(fs.Args(), *out, orchestrator.MergeOptions{AllowPartial: *partial, Stdout: stdout, Stderr: stderr})
}
