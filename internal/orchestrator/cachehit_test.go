package orchestrator

import (
	"cmp"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tilegen/internal/cache"
	"tilegen/internal/results"
)

// A file that is not a cache is refused through tune before anything runs, and left byte for byte
// as it was (item 3; internal/cache's TestCacheRefusesForeignFile opens it directly).
func TestTuneRefusesForeignCache(t *testing.T) {
	// Through tune: refused before anything runs.
	cfg, _, _ := testConfig(t, t.TempDir(), "fast_a")
	cfg.CachePath = filepath.Join(t.TempDir(), "some.csv")
	content := "shape,variant,ms\n256x256x256,fast_a,0.5\n"
	os.WriteFile(cfg.CachePath, []byte(content), 0o644)
	if err := Tune(cfg); err == nil || !strings.Contains(err.Error(), "some.csv:1: not a tilegen cache") {
		t.Errorf("tune with a CSV cache: %v", err)
	}
	if b, _ := os.ReadFile(cfg.CachePath); string(b) != content {
		t.Errorf("tune changed the CSV file: %q", b)
	}
}

// Neither the cache file nor its directory exists after a run that measured nothing (item 4).
func TestCacheCreatedLazily(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, "results", "cache.jsonl")
	c, err := cache.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Get("x"); ok || c.Len() != 0 {
		t.Error("empty cache has records")
	}
	c.Close()
	if _, err := os.Stat(filepath.Join(root, "results")); !os.IsNotExist(err) {
		t.Errorf("opening a missing cache created its directory (%v)", err)
	}

	// A tune that fails before measuring anything (no GPU).
	t.Setenv("FAKEWORKER_NOGPU", "1")
	cfg, _, _ := testConfig(t, root, "fast_a")
	cfg.CachePath = path
	if err := Tune(cfg); err == nil {
		t.Fatal("tune without a GPU succeeded")
	}
	if _, err := os.Stat(filepath.Join(root, "results")); !os.IsNotExist(err) {
		t.Errorf("a run that measured nothing left %s behind (%v)", filepath.Join(root, "results"), err)
	}

	// The first record creates both.
	c, err = cache.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Put(results.Record{Key: "k", Kind: results.KindTune, Status: results.StatusOK}); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if c, err = cache.Open(path); err != nil || c.Len() != 1 {
		t.Fatalf("reopened: %v", err)
	}
	c.Close()
}

// editCacheLine rewrites the cache line of the record for variant at shape through edit.
func editCacheLine(t *testing.T, path, variant, shape string, edit func(m map[string]any)) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	found := false
	for i, l := range lines {
		var r results.Record
		if json.Unmarshal([]byte(l), &r) != nil || r.Variant != variant || results.ShapeString(r.Shape) != shape {
			continue
		}
		var m map[string]any
		d := json.NewDecoder(strings.NewReader(l))
		d.UseNumber() // seeds are uint64: a float64 would round them
		if err := d.Decode(&m); err != nil {
			t.Fatal(err)
		}
		edit(m)
		nb, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		lines[i], found = string(nb), true
	}
	if !found {
		t.Fatalf("no cache line for %s %s", variant, shape)
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A cached record that does not match its request is not served: the run warns and measures it
// again (item 2).
func TestCacheHitMismatch(t *testing.T) {
	dir := t.TempDir()
	count := requestLog(t)
	cfg, _, _ := testConfig(t, dir, "fast_a")
	cfg.Shapes, cfg.Rank.Rounds = cfg.Shapes[:1], 0
	if err := Tune(cfg); err != nil {
		t.Fatal(err)
	}
	pristine, err := os.ReadFile(cfg.CachePath)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range readRecords(t, cfg.Out) {
		if r.Variant == "fast_a" && (r.SourceHash == "" || r.PTXHash == "" || r.SettingsHash == "") {
			t.Errorf("record lacks its hashes: %+v", r)
		}
	}
	const sh = "256x256x256"
	for _, tc := range []struct {
		name, variant string
		edit          func(m map[string]any)
	}{
		{"unchanged", "", nil},
		{"variant", "fast_a", func(m map[string]any) { m["variant"] = "fast_b" }},
		{"kind", "fast_a", func(m map[string]any) { m["kind"] = results.KindVerify }},
		{"shape", "fast_a", func(m map[string]any) { m["shape"] = map[string]int{"m": 1, "n": 1, "k": 1} }},
		{"source hash", "fast_a", func(m map[string]any) { m["source_hash"] = "0123" }},
		{"PTX hash", "fast_a", func(m map[string]any) { delete(m, "ptx_hash") }},
		{"settings", "fast_a", func(m map[string]any) { m["settings_hash"] = "0123" }},
		{"seed", "fast_a", func(m map[string]any) { m["seed"] = 42 }},
		{"device", "fast_a", func(m map[string]any) { m["device"].(map[string]any)["uuid"] = "GPU-other" }},
		{"no timing", "fast_a", func(m map[string]any) { delete(m, "timing") }},
		// A line written before records carried hashes is served: its key was made from them.
		{"no hashes (older cache)", "", func(m map[string]any) {
			delete(m, "source_hash")
			delete(m, "ptx_hash")
			delete(m, "settings_hash")
		}},
		{"cuBLAS shape", results.CublasName, func(m map[string]any) { m["shape"] = map[string]int{"m": 2, "n": 2, "k": 2} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(cfg.CachePath, pristine, 0o644); err != nil {
				t.Fatal(err)
			}
			if tc.edit != nil {
				editCacheLine(t, cfg.CachePath, cmp.Or(tc.variant, "fast_a"), sh, tc.edit)
			}
			before := count("run fast_a ") + count("cublas cublas ")
			again, _, stderr := testConfig(t, dir, "fast_a")
			again.Shapes, again.Rank.Rounds = again.Shapes[:1], 0
			if err := Tune(again); err != nil {
				t.Fatal(err)
			}
			measured := count("run fast_a ") + count("cublas cublas ") - before
			warned := strings.Contains(stderr.String(), "does not match "+tc.variant+" "+sh)
			if tc.variant == "" {
				if measured != 0 || strings.Contains(stderr.String(), "does not match") {
					t.Errorf("%s: %d measured again\n%s", tc.name, measured, stderr)
				}
				if r := readRecords(t, again.Out)["fast_a "+sh]; r.SourceHash == "" || r.PTXHash == "" || r.SettingsHash == "" {
					t.Errorf("%s: served record lacks its hashes: %+v", tc.name, r)
				}
				return
			}
			if measured != 1 || !warned {
				t.Errorf("edited %s: %d measured again (want 1), warned %v\n%s", tc.name, measured, warned, stderr)
			}
			recs := readRecords(t, again.Out)
			if r := recs[tc.variant+" "+sh]; r.Variant != tc.variant || r.Status != results.StatusOK || r.Kind == results.KindVerify {
				t.Errorf("record served: %+v", r)
			}
			if len(recs) != 2 {
				t.Errorf("%d records, want fast_a and cuBLAS: %v", len(recs), recs)
			}
		})
	}
}
