package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"tilegen/internal/orchestrator"
	"tilegen/internal/protocol"
)

// newFlags makes a command's flag set; parse errors and help go to stderr.
func newFlags(name, args string, stderr io.Writer) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: runner %s %s\n\n", name, args)
		fs.PrintDefaults()
	}
	fs.SortFlags = false
	return fs
}

// parse parses flags; --help is not an error.
func parse(fs *pflag.FlagSet, args []string) (bool, error) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

// common are the flags tune and verify share.
type common struct {
	generated, worker, devices, shapes string
	variants, families                 []string
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
	wd := orchestrator.DefaultWatchdog()
	fs.StringVar(&c.generated, "generated", "", "read variants from the generated `dir` (manifest.json, ptx/) instead of the built-in catalog")
	fs.StringVar(&c.worker, "worker", "", "GPU worker binary `path` (default: tilegen-worker beside the runner, else on PATH)")
	fs.StringVar(&c.devices, "devices", "all", "GPU `indexes` to use, e.g. 0,1, or all")
	fs.StringVar(&c.shapes, "shapes", defaultShapes, "comma-separated `MxNxK` shapes")
	fs.StringSliceVar(&c.variants, "variants", nil, "only variants whose name matches a `glob` (comma-separated)")
	fs.StringSliceVar(&c.families, "family", nil, "only variants of the family `name` (comma-separated)")
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
}

func (c *common) config(stdout, stderr io.Writer) (*orchestrator.Config, error) {
	cat, err := loadCatalog(c.generated)
	if err != nil {
		return nil, err
	}
	devs, err := orchestrator.ParseDevices(c.devices)
	if err != nil {
		return nil, err
	}
	var shapes []protocol.Shape
	if c.shapes != "" {
		if shapes, err = orchestrator.ParseShapes(c.shapes); err != nil {
			return nil, fmt.Errorf("--shapes: %w", err)
		}
	}
	shard, err := orchestrator.ParseShard(c.shard)
	if err != nil {
		return nil, err
	}
	if !orchestrator.ValidProgress(c.progress) {
		return nil, fmt.Errorf("--progress %q: want auto, bar, plain or none", c.progress)
	}
	if c.timeoutFloor <= 0 || c.timeoutCap < c.timeoutFloor {
		return nil, fmt.Errorf("--timeout-floor %s and --timeout-cap %s: want 0 < floor <= cap", c.timeoutFloor, c.timeoutCap)
	}
	worker, err := orchestrator.FindWorker(c.worker)
	if err != nil {
		return nil, err
	}
	wargs, err := orchestrator.WorkerArgs(cat)
	if err != nil {
		return nil, err
	}
	wd := orchestrator.DefaultWatchdog()
	wd.Floor, wd.Cap, wd.Factor, wd.FloorGFLOPS = c.timeoutFloor, c.timeoutCap, c.timeoutFactor, c.floorGFLOPS
	return &orchestrator.Config{
		Catalog: cat, Worker: worker, WorkerArgs: wargs, Devices: devs, Shapes: shapes,
		Filter:            orchestrator.Filter{Globs: c.variants, Families: c.families},
		Strategy:          orchestrator.Strategy{Name: "exhaustive", Seed: c.seed},
		Shard:             shard,
		Verify:            protocol.VerifySettings{SubMatrix: c.subMatrix, CPUCheckMaxFlops: c.cpuCheck, TolFactor: c.tolFactor},
		SharedInputsAbove: c.sharedAbove,
		Watchdog:          wd, CachePath: c.cache, Out: c.out, RetryFailed: c.retryFailed, Progress: c.progress,
		Stdout: stdout, Stderr: stderr,
	}, nil
}

// tuneFlags are the timing, search and ranking flags of tune (and bench).
type tuneFlags struct {
	strategy              *string
	budget                *int
	warmup, reps, maxReps *int
	minTime               *time.Duration
	cold                  *bool
	rounds, top, rankReps *int
	near                  *float64
	tableTop              *int
}

func (t *tuneFlags) register(fs *pflag.FlagSet) {
	t.strategy = fs.String("strategy", "exhaustive", "`name`: exhaustive (every variant) or random (--budget variants per shape)")
	t.budget = fs.Int("budget", 0, "variants per shape for --strategy random (`n`)")
	t.warmup = fs.Int("warmup", 3, "untimed launches before timing (`n`)")
	t.reps = fs.Int("reps", 20, "least timed launches (`n`)")
	t.minTime = fs.Duration("min-time", 100*time.Millisecond, "least total timed `duration`; launches grow until reached")
	t.maxReps = fs.Int("max-reps", 1000, "most timed launches (`n`)")
	t.cold = fs.Bool("cold", false, "flush L2 before every timed launch")
	t.rounds = fs.Int("rank-rounds", 10, "most interleaved re-measurement rounds per shape (`n`; 0: rank by the sweep)")
	t.top = fs.Int("rank-top", 3, "re-measure at most `n` leading variants per shape, plus cuBLAS")
	t.near = fs.Float64("rank-near", 5, "re-measure variants within `pct` percent of the best")
	t.rankReps = fs.Int("rank-reps", 10, "timed launches per candidate per round (`n`)")
	t.tableTop = fs.Int("table-top", 20, "ranked rows printed per shape (`n`; 0: all)")
}

func (t *tuneFlags) apply(cfg *orchestrator.Config) {
	cfg.Strategy.Name, cfg.Strategy.Budget = *t.strategy, *t.budget
	cfg.Timing = protocol.TimingSettings{Warmup: *t.warmup, Reps: *t.reps, MinTimeMS: float64(t.minTime.Microseconds()) / 1000,
		MaxReps: *t.maxReps, Cold: *t.cold}
	cfg.Rank = orchestrator.RankSettings{Rounds: *t.rounds, Top: *t.top, NearPct: *t.near,
		Timing: protocol.TimingSettings{Warmup: 2, Reps: *t.rankReps, MaxReps: *t.rankReps, Cold: *t.cold}}
	cfg.TableTop = *t.tableTop
}

func runTune(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("tune", "[flags]", stderr)
	var c common
	c.register(fs, orchestrator.DefaultShapes, "results/tune")
	var t tuneFlags
	t.register(fs)
	if ok, err := parse(fs, args); !ok || err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("tune: unexpected arguments %s", strings.Join(fs.Args(), " "))
	}
	cfg, err := c.config(stdout, stderr)
	if err != nil {
		return err
	}
	t.apply(cfg)
	return orchestrator.Tune(cfg)
}

func runVerify(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("verify", "[flags]", stderr)
	var c common
	c.register(fs, "", "results/verify")
	fs.Lookup("shapes").Usage = "comma-separated `MxNxK` shapes instead of each variant's edge suite"
	if ok, err := parse(fs, args); !ok || err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("verify: unexpected arguments %s", strings.Join(fs.Args(), " "))
	}
	cfg, err := c.config(stdout, stderr)
	if err != nil {
		return err
	}
	return orchestrator.Verify(cfg)
}

func runList(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("list", "[flags]", stderr)
	generated := fs.String("generated", "", "read variants from the generated `dir` instead of the built-in catalog")
	variants := fs.StringSlice("variants", nil, "only variants whose name matches a `glob` (comma-separated)")
	families := fs.StringSlice("family", nil, "only variants of the family `name` (comma-separated)")
	if ok, err := parse(fs, args); !ok || err != nil {
		return err
	}
	cat, err := loadCatalog(*generated)
	if err != nil {
		return err
	}
	return orchestrator.List(cat, orchestrator.Filter{Globs: *variants, Families: *families}, stdout)
}

func runDevices(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("devices", "[flags]", stderr)
	worker := fs.String("worker", "", "GPU worker binary `path` (default: tilegen-worker beside the runner, else on PATH)")
	devices := fs.String("devices", "all", "GPU `indexes` to query, e.g. 0,1, or all")
	if ok, err := parse(fs, args); !ok || err != nil {
		return err
	}
	devs, err := orchestrator.ParseDevices(*devices)
	if err != nil {
		return err
	}
	bin, err := orchestrator.FindWorker(*worker)
	if err != nil {
		return err
	}
	return orchestrator.Devices(bin, devs, orchestrator.DefaultWatchdog(), stdout)
}

func runMerge(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("merge", "DIR... --out DIR", stderr)
	out := fs.String("out", "", "merged results `dir` (required)")
	if ok, err := parse(fs, args); !ok || err != nil {
		return err
	}
	if *out == "" || fs.NArg() == 0 {
		return fmt.Errorf("merge: want result directories and --out DIR")
	}
	return orchestrator.Merge(fs.Args(), *out, stdout)
}
