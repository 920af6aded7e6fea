package orchestrator

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tilegen/internal/results"
)

var mergeGlobs = []string{"fast_*", "mid", "slow", "aligned_64", "bad_wrong"}

// tuneShards runs the n shards of the merge tests' plan into dir/shard<i>; edit adjusts a shard's
// configuration.
func tuneShards(t *testing.T, dir string, n int, edit func(i int, cfg *Config)) []string {
	t.Helper()
	var outs []string
	for i := 0; i < n; i++ {
		cfg, _, _ := testConfig(t, filepath.Join(dir, fmt.Sprint("shard", i)), mergeGlobs...)
		cfg.Shard, cfg.Rank.Rounds = Shard{i, n}, 0
		if edit != nil {
			edit(i, cfg)
		}
		if err := Tune(cfg); err != nil {
			t.Fatal(err)
		}
		outs = append(outs, cfg.Out)
	}
	return outs
}

func copyDir(t *testing.T, from, to string) string {
	t.Helper()
	if err := os.CopyFS(to, os.DirFS(from)); err != nil {
		t.Fatal(err)
	}
	return to
}

// rewriteFile applies edit to a file's text.
func rewriteFile(t *testing.T, path string, edit func(string) string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(edit(string(b))), 0o644); err != nil {
		t.Fatal(err)
	}
}

// firstLine returns the first results.jsonl line of dir whose record satisfies keep.
func firstLine(t *testing.T, dir string, keep func(results.Record) bool) string {
	t.Helper()
	b, _ := os.ReadFile(filepath.Join(dir, "results.jsonl"))
	for _, l := range strings.Split(string(b), "\n") {
		var r results.Record
		if json.Unmarshal([]byte(l), &r) == nil && keep(r) {
			return l
		}
	}
	t.Fatalf("%s: no such record", dir)
	return ""
}

func isVariant(r results.Record) bool {
	return r.Kind == results.KindTune && r.Status == results.StatusOK
}

// Merge refuses inputs that are not the complete shards of one plan, naming what is wrong
// (issue 14 §2, item 6).
func TestMergeRefuses(t *testing.T) {
	dir := t.TempDir()
	outs := tuneShards(t, filepath.Join(dir, "good"), 3, nil)
	// Another plan (fewer variants), other settings, another sharding, a verify run.
	otherPlan := tuneShards(t, filepath.Join(dir, "plan"), 3, func(i int, cfg *Config) { cfg.Filter.Globs = []string{"fast_*"} })
	otherReps := tuneShards(t, filepath.Join(dir, "reps"), 3, func(i int, cfg *Config) { cfg.Timing.Reps = 25 })
	halves := tuneShards(t, filepath.Join(dir, "halves"), 2, nil)
	vcfg, _, _ := testConfig(t, filepath.Join(dir, "verify"), "fast_a")
	vcfg.Shard = Shard{1, 3}
	if err := Verify(vcfg); err != nil {
		t.Fatal(err)
	}
	mutate := func(name string, edit func(d string)) string {
		d := copyDir(t, outs[1], filepath.Join(dir, name))
		edit(d)
		return d
	}
	variantLine := firstLine(t, outs[2], isVariant)
	for _, tc := range []struct {
		name string
		dirs []string
		want string
	}{
		{"missing shard", []string{outs[0], outs[2]}, "shard(s) 1/3 missing (--allow-partial merges without them)"},
		{"shard twice", []string{outs[0], outs[1], outs[2], outs[1]}, "shard 1/3 given 2 times"},
		{"another plan", []string{outs[0], otherPlan[1], outs[2]}, "ran another plan (tune of 2 variants"},
		{"other settings", []string{outs[0], otherReps[1], outs[2]}, "other settings than " + outs[0] + ": timing.reps 25 vs 20"},
		{"another sharding", []string{outs[0], outs[1], outs[2], halves[1]}, "is shard 1/2, " + outs[0] + " shard 0/3"},
		{"a verify run", []string{outs[0], vcfg.Out, outs[2]}, "is a verify run"},
		{"another GPU", []string{outs[0], mutate("gpu", func(d string) {
			rewriteFile(t, filepath.Join(d, "device.json"), func(s string) string { return strings.ReplaceAll(s, "Fake GPU", "Other GPU") })
		}), outs[2]}, "ran on Other GPU (cc 9.0, driver 13000, cuBLAS 130000), " + outs[0] + " on Fake GPU"},
		{"no run.json", []string{outs[0], mutate("legacy", func(d string) { os.Remove(filepath.Join(d, runPlanFile)) }), outs[2]},
			"no run.json: not the results of a tune or verify run"},
		{"empty key", []string{outs[0], mutate("nokey", func(d string) {
			rewriteFile(t, filepath.Join(d, "results.jsonl"), func(s string) string {
				return strings.Replace(s, firstLine(t, d, isVariant), blankKey(t, firstLine(t, d, isVariant)), 1)
			})
		}), outs[2]}, "record has no key"},
		{"record in two shards", []string{outs[0], mutate("overlap", func(d string) {
			rewriteFile(t, filepath.Join(d, "results.jsonl"), func(s string) string { return s + variantLine + "\n" })
		}), outs[2]}, "a record twice: the shards overlap"},
		{"one key, two records", []string{outs[0], mutate("conflict", func(d string) {
			rewriteFile(t, filepath.Join(d, "results.jsonl"), func(s string) string {
				return s + strings.Replace(variantLine, `"median_ms":`, `"median_ms":1`, 1) + "\n"
			})
		}), outs[2]}, "holds a different record in another shard"},
		{"foreign kind", []string{outs[0], mutate("kind", func(d string) {
			rewriteFile(t, filepath.Join(d, "results.jsonl"), func(s string) string {
				return strings.Replace(s, `"kind":"tune"`, `"kind":"verify"`, 1)
			})
		}), outs[2]}, "a verify record in a tune run"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "merged")
			err := Merge(tc.dirs, out, MergeOptions{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v\nwant an error containing %q", err, tc.want)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("a refused merge wrote %s", out)
			}
		})
	}
}

func blankKey(t *testing.T, line string) string {
	var r results.Record
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		t.Fatal(err)
	}
	return strings.Replace(line, `"key":"`+r.Key+`"`, `"key":""`, 1)
}

// --allow-partial merges what is there, says what is missing, and records it in run.json; such a
// partial merge is no shard of a later merge.
func TestMergeAllowPartial(t *testing.T) {
	dir := t.TempDir()
	outs := tuneShards(t, dir, 3, nil)
	out := filepath.Join(dir, "partial")
	var stderr bytes.Buffer
	if err := Merge([]string{outs[2], outs[0]}, out, MergeOptions{AllowPartial: true, Stderr: &stderr}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr.String(), "partial: shard(s) 1/3 missing") {
		t.Errorf("stderr: %s", stderr.String())
	}
	p, err := ReadRunPlan(out)
	if err != nil || strings.Join(p.Missing, ",") != "1/3" || p.Shard != "0/1" {
		t.Errorf("run.json of a partial merge: %+v %v", p, err)
	}
	want := 0
	for _, d := range []string{outs[0], outs[2]} {
		recs, _, _ := results.ReadDir(d)
		for _, r := range recs {
			if r.Kind != results.KindCublas {
				want++
			}
		}
	}
	recs, _, _ := results.ReadDir(out)
	got := 0
	for _, r := range recs {
		if r.Kind != results.KindCublas {
			got++
		}
	}
	if got != want || got == 0 {
		t.Errorf("partial merge kept %d variant records, want %d", got, want)
	}
	err = Merge([]string{out, outs[1]}, filepath.Join(dir, "again"), MergeOptions{AllowPartial: true})
	if err == nil || !strings.Contains(err.Error(), "is a partial merge (missing 1/3)") {
		t.Errorf("merging a partial merge: %v", err)
	}
}

// Shards on two GPUs of one kind: one cuBLAS row per shape (shard 0's), as a single run keeps, and
// the order of the arguments does not matter; a complete merge writes the single run's run.json.
func TestMergeShardsOnTwoGPUs(t *testing.T) {
	t.Setenv("FAKEWORKER_DEVICES", "2")
	dir := t.TempDir()
	single, _, _ := testConfig(t, filepath.Join(dir, "single"), mergeGlobs...)
	single.Rank.Rounds = 0
	if err := Tune(single); err != nil {
		t.Fatal(err)
	}
	outs := tuneShards(t, dir, 3, func(i int, cfg *Config) { cfg.Devices = []int{i % 2} })
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	var stderr bytes.Buffer
	if err := Merge(outs, a, MergeOptions{Stderr: &stderr}); err != nil {
		t.Fatal(err)
	}
	if err := Merge([]string{outs[2], outs[0], outs[1]}, b, MergeOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"results.jsonl", "results.csv", "bench.txt", "device.json", runPlanFile} {
		x, _ := os.ReadFile(filepath.Join(a, f))
		y, _ := os.ReadFile(filepath.Join(b, f))
		if len(x) == 0 || !bytes.Equal(x, y) {
			t.Errorf("%s depends on the order of the shards", f)
		}
	}
	x, _ := os.ReadFile(filepath.Join(single.Out, runPlanFile))
	y, _ := os.ReadFile(filepath.Join(a, runPlanFile))
	if !bytes.Equal(x, y) {
		t.Errorf("run.json of the complete merge differs from the single run's:\n%s\n%s", x, y)
	}
	recs, info, err := results.ReadDir(a)
	if err != nil {
		t.Fatal(err)
	}
	cublas := map[string][]string{}
	for _, r := range recs {
		if r.Kind == results.KindCublas {
			cublas[results.ShapeString(r.Shape)] = append(cublas[results.ShapeString(r.Shape)], r.Device.UUID)
		}
	}
	for sh, devs := range cublas {
		if len(devs) != 1 || devs[0] != "GPU-fake-0" {
			t.Errorf("%s: cuBLAS rows from %v, want shard 0's only", sh, devs)
		}
	}
	if len(cublas) != 2 || len(info.Devices) != 2 {
		t.Errorf("cuBLAS on %d shapes, %d devices in device.json; want 2 and 2", len(cublas), len(info.Devices))
	}
	if !strings.Contains(stderr.String(), "4 cuBLAS rows measured again by later shards left out") {
		t.Errorf("stderr: %s", stderr.String())
	}
}
