package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"tilegen/internal/orchestrator"
	"tilegen/internal/study"
)

func studyNames() string {
	var names []string
	for _, s := range study.All() {
		names = append(names, s.Name)
	}
	return strings.Join(names, ", ")
}

// runStudy runs one study (or all) into --out: NAME writes into DIR, all into DIR/NAME.
func runStudy(args []string, stdout, stderr io.Writer) error {
	// The hybrid CPU+GPU sweep (seed 000's split) has flags of its own: runner hybrid --sweep.
	if len(args) > 0 && args[0] == "hybrid" {
		return runStudyHybrid(args[1:], stdout, stderr)
	}
	fs := newFlags("study", "NAME|all [flags]   (NAME: "+studyNames()+", or hybrid: see runner hybrid --help)", stdout)
	var c common
	fs.AddFlagSet(c.flags("", "results/studies"))
	_ = fs.MarkHidden("shapes") // each study plans its own shapes
	_ = fs.MarkHidden("shapes-file")
	var tf timingFlags
	fs.AddFlagSet(tf.flags())
	opt := study.DefaultOptions()
	fs.IntVar(&opt.Runs, "runs", opt.Runs, "cpu-gpu: end-to-end repetitions per point (`n`)")
	fs.IntVar(&opt.CPUNaiveMax, "cpu-naive-max", opt.CPUNaiveMax, "cpu-gpu: largest `N` the CPU naive kernel runs at")
	fs.IntVar(&opt.CPUBlockedMax, "cpu-blocked-max", opt.CPUBlockedMax, "cpu-gpu: largest `N` the CPU blocked kernel runs at")
	budget := fs.Duration("cpu-budget", time.Duration(opt.CPUBudgetMS)*time.Millisecond, "cpu-gpu: time `budget` per CPU point; fewer runs (at least 3) above it")
	fs.IntVar(&opt.Workers, "cpu-workers", 0, "cpu-gpu: goroutines of the blocked CPU kernel (`n`; 0: GOMAXPROCS)")
	renderOnly := fs.Bool("render-only", false, "only render report.md and charts from the results already in --out (no GPU)")
	atLeast(fs, ">=1", "runs")
	atLeast(fs, ">=0", "cpu-naive-max", "cpu-blocked-max", "cpu-workers")
	atLeast(fs, ">0", "cpu-budget")
	if ok, err := parse(fs, args); !ok || err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageErr("study", "want one study name (%s) or all", studyNames())
	}
	ts, err := tf.timing("study", false)
	if err != nil {
		return err
	}
	opt.CPUBudgetMS = float64(budget.Milliseconds())
	var studies []study.Study
	if name := fs.Arg(0); name == "all" {
		studies = study.All()
	} else {
		st, err := study.Lookup(name)
		if err != nil {
			return usageErr("study", "%v", err)
		}
		studies = []study.Study{st}
	}
	outOf := func(st study.Study) string {
		if len(studies) > 1 {
			return filepath.Join(c.out, st.Name)
		}
		return c.out
	}
	if err := fillTiles(c.generated); err != nil {
		return err
	}
	if *renderOnly {
		for _, st := range studies {
			if err := study.Render(st, outOf(st)); err != nil {
				return fmt.Errorf("study %s: %w", st.Name, err)
			}
			fmt.Fprintf(stdout, "wrote %s\n", filepath.Join(outOf(st), "report.md"))
		}
		return nil
	}
	cfg, err := c.config("study", stdout, stderr, true)
	if err != nil {
		return err
	}
	cfg.Timing = ts
	sess, err := orchestrator.OpenSession(cfg)
	if err != nil {
		return err
	}
	defer sess.Close()
	log := func(s string) { fmt.Fprintln(stderr, s) }
	// A failed study does not stop the next: each writes its own directory.
	var failed []string
	for _, st := range studies {
		start := time.Now()
		if err := study.Run(st, sess, outOf(st), opt, log); err != nil {
			fmt.Fprintf(stderr, "study %s: %v\n", st.Name, err)
			failed = append(failed, st.Name)
			continue
		}
		fmt.Fprintf(stdout, "study %s: wrote %s (%.1fs)\n", st.Name, filepath.Join(outOf(st), "report.md"), time.Since(start).Seconds())
	}
	if len(failed) > 0 {
		return fmt.Errorf("study: %s failed", strings.Join(failed, ", "))
	}
	return nil
}
