package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"tilegen/internal/orchestrator"
	"tilegen/internal/protocol"
	"tilegen/internal/results"
	"tilegen/internal/variant"
	"tilegen/internal/workerproc"
	"tilegen/internal/workload"
)

// common are the flags tune, verify, bench and study share.
type common struct {
	catalogFlags
	workerFlags
	verifyFlags
	watchdogFlags
	outputFlags
	shapes     string
	shapesFile string
	// shapesFlag is --shapes itself, to tell a given --shapes from its default.
	shapesFlag *pflag.Flag
	seed       uint64
	shard      string
}

// flags composes the shared groups in the order help lists them.
func (c *common) flags(defaultShapes, defaultOut string) *pflag.FlagSet {
	fs := group()
	fs.AddFlagSet(c.sourceFlags())
	reword(fs, "generated", "read variants from the generated `dir` (manifest.json, ptx/) instead of the built-in catalog")
	fs.AddFlagSet(c.workerFlags.flags(true))
	fs.StringVar(&c.shapes, "shapes", defaultShapes, "comma-separated `MxNxK` shapes, each optionally with its op, batch, fused epilogue and precision (MxNxK[:OP][:bN][:EPILOGUE][:3xtf32|:tf32], e.g. MxNxK:TN, MxNxK:NT:b64, MxNxK:bias_relu_col, MxNxK:3xtf32; default NN, one product, no epilogue, FP32)")
	c.shapesFlag = fs.Lookup("shapes")
	fs.StringVar(&c.shapesFile, "shapes-file", "", "read shapes from `file`, one \"M N K [op=NT] [batch=N] [epilogue=NAME]  # source\" a line (workloads/corpus.txt); replaces the default shapes, or adds to those --shapes names")
	fs.AddFlagSet(c.filterFlags())
	fs.Uint64Var(&c.seed, "seed", 1, "run `seed`: verification inputs and the random strategy derive from it")
	fs.StringVar(&c.shard, "shard", "", "run only part `i/n` (0 <= i < n) of the plan; combine parts with runner merge")
	atLeast(fs, ">=0", "seed")
	fs.AddFlagSet(c.verifyFlags.flags())
	fs.AddFlagSet(c.watchdogFlags.flags())
	fs.AddFlagSet(c.outputFlags.flags(defaultOut))
	return fs
}

// config checks the flags and makes the run's configuration of command cmd; needWorker finds the
// worker binary (a dry run needs none).
func (c *common) config(cmd string, stdout, stderr io.Writer, needWorker bool) (*orchestrator.Config, error) {
	devs, err := c.parseDevices(cmd)
	if err != nil {
		return nil, err
	}
	shapes, sources, err := c.readShapes(cmd)
	if err != nil {
		return nil, err
	}
	shard, err := orchestrator.ParseShard(c.shard)
	if err != nil {
		return nil, usageErr(cmd, "%v", err)
	}
	if !orchestrator.ValidProgress(c.progress) {
		return nil, usageErr(cmd, "--progress %q: want auto, bar, plain or none", c.progress)
	}
	wd, err := c.watchdog(cmd)
	if err != nil {
		return nil, err
	}
	flt, err := c.filter(cmd)
	if err != nil {
		return nil, err
	}
	if len(flt.Ops) > 0 && shapes != nil {
		if strings.Contains(c.shapes, ":") || slices.ContainsFunc(shapes, func(s protocol.Shape) bool { return s.Op != variant.OpNN }) {
			return nil, usageErr(cmd, "--ops with shapes that name their ops: give ops one way (MxNxK:OP, op= in --shapes-file, or --ops)")
		}
		shapes = results.WithOps(shapes, flt.Ops)
		for _, s := range shapes { // a shape's source holds under every op
			if src, ok := sources[protocol.Shape{M: s.M, N: s.N, K: s.K, Batch: s.Batch}]; ok && sources != nil {
				sources[s] = src
			}
		}
	}
	var named []variant.Precision // precisions the shapes name (MxNxK:3xtf32)
	for _, s := range shapes {
		if s.Precision != variant.PrecisionFP32 && !slices.Contains(named, s.Precision) {
			named = append(named, s.Precision)
		}
	}
	if len(named) > 0 {
		if c.precision != "fp32" {
			return nil, usageErr(cmd, "--precision with --shapes that name their precision: give precisions one way (MxNxK:3xtf32 or --precision)")
		}
		// The shapes say which precisions run: allow those (and FP32 where a shape names none).
		for _, s := range shapes {
			if s.Precision == variant.PrecisionFP32 && !slices.Contains(named, s.Precision) {
				named = append(named, s.Precision)
			}
		}
		flt.Precisions = named
	} else if shapes != nil {
		// Every shape under every allowed precision (FP32 alone by default); a shape's source holds
		// under each.
		base := shapes
		shapes = results.WithPrecisions(shapes, flt.Precisions)
		if sources != nil {
			for _, s := range base {
				if src, ok := sources[s]; ok {
					for _, p := range flt.Precisions {
						t := s
						t.Precision = p
						sources[t] = src
					}
				}
			}
		}
	}
	cat, err := c.catalog()
	if err != nil {
		return nil, err
	}
	var worker string
	var wargs []string
	if needWorker {
		if worker, err = workerproc.FindWorker(c.worker); err != nil {
			return nil, err
		}
		if wargs, err = orchestrator.WorkerArgs(cat); err != nil {
			return nil, err
		}
	}
	return &orchestrator.Config{
		Catalog: cat, Worker: worker, WorkerArgs: wargs, Devices: devs, Shapes: shapes, Sources: sources,
		Filter:            flt,
		Strategy:          orchestrator.Strategy{Name: "exhaustive", Seed: c.seed},
		Shard:             shard,
		Verify:            c.settings(),
		SharedInputsAbove: c.sharedAbove, SharedInputsElements: float64(c.sharedElems),
		Watchdog: wd, CachePath: c.cache, Out: c.out, RetryFailed: c.retryFailed, Progress: c.progress,
		Stdout: stdout, Stderr: stderr,
	}, nil
}

// readShapes reads --shapes and --shapes-file. A shapes file replaces --shapes' default; given
// together, the run takes the union: --shapes' shapes first, then the file's that --shapes does not
// list, in file order. The sources are the file's comments per shape (nil without a file).
func (c *common) readShapes(cmd string) ([]protocol.Shape, map[protocol.Shape]string, error) {
	var shapes []protocol.Shape
	var err error
	useFlag := c.shapes != "" && (c.shapesFile == "" || c.shapesFlag == nil || c.shapesFlag.Changed)
	if useFlag {
		if shapes, err = results.ParseShapes(c.shapes); err != nil {
			return nil, nil, usageErr(cmd, "--shapes: %v", err)
		}
	}
	if c.shapesFile == "" {
		return shapes, nil, nil
	}
	es, err := workload.ReadFile(c.shapesFile)
	if err != nil {
		return nil, nil, fmt.Errorf("--shapes-file: %w", err)
	}
	seen := map[protocol.Shape]bool{}
	for _, s := range shapes {
		seen[s] = true
	}
	for _, s := range workload.Unique(es) {
		if !seen[s] {
			seen[s] = true
			shapes = append(shapes, s)
		}
	}
	return shapes, workload.Sources(es), nil
}
