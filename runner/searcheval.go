package main

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"tilegen/internal/results"
	"tilegen/internal/resultsdir"
	"tilegen/internal/search"
)

// searchEvalSet is one results directory's evaluation in eval.json.
type searchEvalSet struct {
	Results string      `json:"results"`
	GPU     string      `json:"gpu"`
	Eval    search.Eval `json:"eval"`
}

// runSearchEval replays the search strategies against exhaustive tunes' records (no GPU): how many
// measurements each needs to reach a variant within --within of the exhaustive winner.
func runSearchEval(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("search-eval", "--results DIR [--results DIR] [--out DIR] [flags]", stdout)
	dirs := fs.StringArray("results", nil, "results `dir` of an exhaustive runner tune (repeatable; each is evaluated alone)")
	out := fs.String("out", "", "write eval.json and eval.md into `dir` (default: print only)")
	within := fs.Float64("within", 0.01, "a variant within this `fraction` of the exhaustive winner's time counts as found")
	fraction := fs.Float64("fraction", 0.2, "the target's budget: this `fraction` of each shape's candidates")
	seeds := fs.Int("seeds", 101, "replay the random strategy with `n` seeds")
	modelSeeds := fs.Int("model-seeds", 21, "replay the model strategy with `n` seeds (a seed orders only the candidates the model cannot tell apart)")
	atLeast(fs, ">0", "within", "fraction")
	atLeast(fs, ">=1", "seeds", "model-seeds")
	var cf catalogFlags
	fs.AddFlagSet(cf.sourceFlags())
	reword(fs, "generated", "read the variants' geometry and resources from the generated `dir` instead of the built-in catalog")
	if ok, err := parse(fs, args); !ok || err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	if len(*dirs) == 0 {
		return usageErr("search-eval", "want --results DIR")
	}
	if *fraction > 1 {
		return usageErr("search-eval", "--fraction %g: want at most 1", *fraction)
	}
	cat, err := cf.catalog()
	if err != nil {
		return err
	}
	var sets []searchEvalSet
	var md strings.Builder
	md.WriteString("# Search strategies replayed against exhaustive tunes\n\n")
	fmt.Fprintf(&md, "Command: `runner search-eval %s`.\n\n", strings.Join(args, " "))
	for _, dir := range *dirs {
		recs, info, err := results.ReadDir(dir)
		if err != nil {
			return fmt.Errorf("search-eval: %w", err)
		}
		dev, gpu := search.H100, "unknown GPU (H100 assumed)"
		if len(info.Devices) > 0 {
			dev, gpu = search.DeviceOf(info.Devices[0]), info.Devices[0].Name
		}
		ev, err := search.Evaluate(search.OracleOf(recs), cat.Variants(), search.EvalConfig{Within: *within,
			Fraction: *fraction, Seeds: *seeds, ModelSeeds: *modelSeeds, Device: dev})
		if err != nil {
			return fmt.Errorf("search-eval: %s: %w", dir, err)
		}
		sets = append(sets, searchEvalSet{Results: filepath.ToSlash(dir), GPU: gpu, Eval: ev})
		md.WriteString(ev.Markdown(fmt.Sprintf("`%s` (%s)", filepath.ToSlash(dir), gpu)))
	}
	if *out != "" {
		if err := resultsdir.EnsureDir(*out); err != nil {
			return err
		}
		b, err := json.MarshalIndent(sets, "", "  ")
		if err != nil {
			return err
		}
		if err := resultsdir.WriteAtomic(filepath.Join(*out, "eval.json"), append(b, '\n')); err != nil {
			return err
		}
		if err := resultsdir.WriteAtomic(filepath.Join(*out, "eval.md"), []byte(md.String())); err != nil {
			return err
		}
	}
	_, err = io.WriteString(stdout, md.String())
	return err
}
