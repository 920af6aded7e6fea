package main

import (
	"io"
	"strings"

	"github.com/spf13/pflag"

	"tilegen/internal/orchestrator"
	"tilegen/internal/workerproc"
)

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
	fs.AddFlagSet(c.flags(orchestrator.DefaultShapes, "results/tune"))
	var t tuneFlags
	fs.AddFlagSet(t.flags())
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
	if err := t.check("tune", c.shard); err != nil {
		return err
	}
	cfg, err := c.config("tune", stdout, stderr, !*dryRun)
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
	fs.AddFlagSet(c.flags("", "results/verify"))
	reword(fs, "shapes", "comma-separated `MxNxK` shapes instead of each variant's edge suite")
	if ok, err := parse(fs, args); !ok || err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	cfg, err := c.config("verify", stdout, stderr, true)
	if err != nil {
		return err
	}
	return orchestrator.Verify(cfg)
}

func runList(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("list", "[flags]", stdout)
	var cf catalogFlags
	fs.AddFlagSet(cf.sourceFlags())
	fs.AddFlagSet(cf.filterFlags())
	if ok, err := parse(fs, args); !ok || err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	flt, err := cf.filter("list")
	if err != nil {
		return err
	}
	cat, err := cf.catalog()
	if err != nil {
		return err
	}
	return orchestrator.List(cat, flt, stdout)
}

func runDevices(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("devices", "[flags]", stdout)
	var w workerFlags
	fs.AddFlagSet(w.flags(true))
	reword(fs, "devices", "GPU `indexes` to query, e.g. 0,1, or all")
	if ok, err := parse(fs, args); !ok || err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	devs, err := w.parseDevices("devices")
	if err != nil {
		return err
	}
	bin, err := workerproc.FindWorker(w.worker)
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
