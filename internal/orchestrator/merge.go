package orchestrator

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"tilegen/internal/results"
	"tilegen/internal/resultsdir"
)

// MergeOptions are runner merge's settings.
type MergeOptions struct {
	// AllowPartial merges an incomplete set of shards (saying which are missing) instead of
	// refusing it. Shards of other plans, settings or GPU kinds are refused regardless.
	AllowPartial bool
	// Stdout gets the ranked tables, Stderr what was merged and what was missing.
	Stdout, Stderr io.Writer
}

// shardDir is one input of a merge.
type shardDir struct {
	dir   string
	plan  RunPlan
	shard Shard
	recs  []results.Record
	info  results.RunInfo
}

// Merge combines the result directories of the shards of one plan into out, ordered as a single
// run orders them, so that a complete set gives what the single run gives byte for byte; the
// ranked tables go to o.Stdout. Every directory must hold a run.json, and together they must be
// shards 0..n-1 of one plan, each exactly once, run with the same settings on the same kind of
// GPU; no record may lack a key, and no variant record may come from two shards. Each shard
// measures cuBLAS on every shape: the lowest-numbered shard's cuBLAS rows are kept, as a single
// run keeps one per shape. Everything wrong is named in one error; a set that is only incomplete
// is merged with o.AllowPartial, and out's run.json then lists the missing shards.
func Merge(dirs []string, out string, o MergeOptions) error {
	if len(dirs) == 0 {
		return fmt.Errorf("merge: no result directories")
	}
	if o.Stdout == nil {
		o.Stdout = io.Discard
	}
	if o.Stderr == nil {
		o.Stderr = io.Discard
	}
	var shards []*shardDir
	for _, dir := range dirs {
		sd, err := readShard(dir)
		if err != nil {
			return fmt.Errorf("merge: %w", err)
		}
		shards = append(shards, sd)
	}
	// Shard order, not argument order, decides which cuBLAS rows are kept.
	sort.SliceStable(shards, func(a, b int) bool { return shards[a].shard.I < shards[b].shard.I })
	problems, missing, fit := checkShards(shards)
	recs, recProblems, dropped := mergeRecords(fit)
	if len(recProblems) > maxRecordProblems {
		recProblems = append(recProblems[:maxRecordProblems],
			fmt.Sprintf("... and %d more problems with records", len(recProblems)-maxRecordProblems))
	}
	problems = append(problems, recProblems...)
	if len(missing) > 0 && !o.AllowPartial {
		problems = append(problems, fmt.Sprintf("shard(s) %s missing (--allow-partial merges without them)",
			strings.Join(missing, ", ")))
	}
	if len(problems) > 0 {
		return fmt.Errorf("merge: refusing to merge %s:\n  %s", strings.Join(dirs, " "), strings.Join(problems, "\n  "))
	}

	info := shards[0].info
	info.Devices = nil
	devSeen := map[string]bool{}
	for _, sd := range shards {
		for _, d := range sd.info.Devices {
			if !devSeen[d.UUID] {
				devSeen[d.UUID] = true
				info.Devices = append(info.Devices, d)
			}
		}
	}
	if err := resultsdir.WriteResults(out, recs, info); err != nil {
		return err
	}
	plan := shards[0].plan
	plan.Shard, plan.Missing = "0/1", missing
	if err := writeRunPlan(out, plan); err != nil {
		return err
	}
	var b strings.Builder
	resultsdir.WriteTables(&b, recs, resultsdir.SweepRanking(recs), nil, 0)
	if err := resultsdir.WriteAtomic(outPath(out, "ranking.txt"), []byte(b.String())); err != nil {
		return err
	}
	fmt.Fprintf(o.Stderr, "merge: %d of %d shard(s) of %s: %d records", len(shards), shards[0].shard.N, plan.describe(), len(recs))
	if dropped > 0 {
		fmt.Fprintf(o.Stderr, " (%d cuBLAS rows measured again by later shards left out)", dropped)
	}
	fmt.Fprintln(o.Stderr)
	if len(missing) > 0 {
		fmt.Fprintf(o.Stderr, "merge: partial: shard(s) %s missing; %s records it as such\n", strings.Join(missing, ", "),
			filepath.Join(out, runPlanFile))
	}
	_, err := io.WriteString(o.Stdout, b.String())
	return err
}

func readShard(dir string) (*shardDir, error) {
	p, err := ReadRunPlan(dir)
	if err != nil {
		return nil, err
	}
	sh, err := ParseShard(p.Shard)
	if err != nil || p.Shard == "" {
		return nil, fmt.Errorf("%s: shard %q in %s: want i/n", dir, p.Shard, runPlanFile)
	}
	recs, info, err := results.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	return &shardDir{dir: dir, plan: p, shard: sh, recs: recs, info: info}, nil
}

// maxRecordProblems bounds the record problems a refusal lists one by one.
const maxRecordProblems = 10

// checkShards compares every shard with the first (the lowest-numbered) and lists the problems,
// the missing shards, and the shards that fit the first (each index once), whose records are
// checked next.
func checkShards(shards []*shardDir) (problems, missing []string, fit []*shardDir) {
	ref := shards[0]
	fits := map[*shardDir]bool{ref: true}
	for _, sd := range shards {
		if len(sd.plan.Missing) > 0 {
			problems = append(problems, fmt.Sprintf("%s is a partial merge (missing %s): merge the original shards instead",
				sd.dir, strings.Join(sd.plan.Missing, ", ")))
		}
	}
	for _, sd := range shards[1:] {
		switch {
		case sd.plan.Command != ref.plan.Command:
			problems = append(problems, fmt.Sprintf("%s is a %s run, %s a %s run", sd.dir, sd.plan.Command, ref.dir, ref.plan.Command))
			continue
		case sd.plan.Plan != ref.plan.Plan:
			problems = append(problems, fmt.Sprintf("%s ran another plan (%s) than %s (%s)", sd.dir, sd.plan.describe(), ref.dir, ref.plan.describe()))
			continue
		case sd.shard.N != ref.shard.N:
			problems = append(problems, fmt.Sprintf("%s is shard %s, %s shard %s: not one sharding of the plan", sd.dir, sd.plan.Shard, ref.dir, ref.plan.Shard))
			continue
		}
		fits[sd] = true
		if d := diffJSON(sd.plan.Settings, ref.plan.Settings); len(d) > 0 {
			problems = append(problems, fmt.Sprintf("%s was measured with other settings than %s: %s", sd.dir, ref.dir, strings.Join(d, "; ")))
			fits[sd] = false
		}
		if a, b := deviceModels(sd.info), deviceModels(ref.info); a != b {
			problems = append(problems, fmt.Sprintf("%s ran on %s, %s on %s", sd.dir, a, ref.dir, b))
			fits[sd] = false
		}
	}
	byIndex := map[int][]string{}
	for _, sd := range shards {
		if !fits[sd] {
			continue
		}
		if len(byIndex[sd.shard.I]) == 0 {
			fit = append(fit, sd)
		}
		byIndex[sd.shard.I] = append(byIndex[sd.shard.I], sd.dir)
	}
	for i := 0; i < ref.shard.N; i++ {
		switch ds := byIndex[i]; {
		case len(ds) == 0:
			missing = append(missing, fmt.Sprintf("%d/%d", i, ref.shard.N))
		case len(ds) > 1:
			problems = append(problems, fmt.Sprintf("shard %d/%d given %d times: %s", i, ref.shard.N, len(ds), strings.Join(ds, ", ")))
		}
	}
	return problems, missing, fit
}

// mergeRecords collects the shards' records: every variant record once, cuBLAS rows of the
// lowest-numbered shard that has the shape. It lists records without a key, of a kind foreign to
// the plan, and variant records found twice, and counts the cuBLAS rows left out.
func mergeRecords(shards []*shardDir) ([]results.Record, []string, int) {
	var problems []string
	var out []results.Record
	from := map[string]string{}     // ident → directory
	content := map[string][]byte{}  // key → JSON
	cublasShard := map[string]int{} // shape → shard index whose cuBLAS rows are kept
	dropped := 0
	for _, sd := range shards {
		for n, r := range sd.recs {
			where := fmt.Sprintf("%s line %d (%s %s %s)", filepath.Join(sd.dir, "results.jsonl"), n+1, r.Kind, r.Variant, results.ShapeString(r.Shape))
			if r.Key == "" {
				problems = append(problems, where+": record has no key")
				continue
			}
			if r.Kind != results.KindCublas && r.Kind != sd.plan.Command {
				problems = append(problems, fmt.Sprintf("%s: a %s record in a %s run", where, r.Kind, sd.plan.Command))
				continue
			}
			js, _ := json.Marshal(r)
			if prev, ok := content[r.Key]; ok && !bytes.Equal(prev, js) && r.Kind != results.KindCublas {
				problems = append(problems, fmt.Sprintf("%s: key %s holds a different record in another shard", where, r.Key))
				continue
			}
			content[r.Key] = js
			id := ident(r.Kind, r.Variant, r.Shape)
			if r.Kind == results.KindCublas {
				sh := results.ShapeString(r.Shape)
				if i, ok := cublasShard[sh]; ok && i != sd.shard.I {
					dropped++
					continue
				}
				cublasShard[sh] = sd.shard.I
				id += "\x00" + results.DeviceUUID(r)
			}
			if d, ok := from[id]; ok {
				problems = append(problems, fmt.Sprintf("%s: also in %s (a record twice: the shards overlap)", where, d))
				continue
			}
			from[id] = sd.dir
			out = append(out, r)
		}
	}
	return out, problems, dropped
}
