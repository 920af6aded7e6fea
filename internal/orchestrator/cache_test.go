package orchestrator

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"tilegen/internal/results"
)

// cacheWriterEnv makes the test binary a cache writer (see init) for TestCacheConcurrentAppend:
// "path,prefix,n,dir" appends n records keyed prefix-i to the cache at path once dir/go exists.
const cacheWriterEnv = "TILEGEN_TEST_CACHE_WRITER"

func init() {
	// Runs before TestMain, so a writer process builds no fake worker.
	if spec := os.Getenv(cacheWriterEnv); spec != "" {
		if err := cacheWriter(spec); err != nil {
			fmt.Fprintln(os.Stderr, "cache writer:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
}

func cacheWriter(spec string) error {
	f := strings.Split(spec, ",")
	if len(f) != 4 {
		return fmt.Errorf("bad spec %q", spec)
	}
	path, prefix, dir := f[0], f[1], f[3]
	n, err := strconv.Atoi(f[2])
	if err != nil {
		return err
	}
	c, err := OpenCache(path)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := os.WriteFile(filepath.Join(dir, "ready-"+prefix), nil, 0o644); err != nil {
		return err
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) {
		if _, err := os.Stat(filepath.Join(dir, "go")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no start signal")
		}
	}
	// Long lines make interleaved or overlapping writes likely when appends are not atomic.
	note := strings.Repeat(prefix, 2000/len(prefix))
	for i := 0; i < n; i++ {
		if err := c.Put(results.Record{Key: fmt.Sprintf("%s-%d", prefix, i), Kind: results.KindTune, Variant: prefix, Status: results.StatusOK, Note: note}); err != nil {
			return err
		}
	}
	return nil
}

// Two runners appending to one cache at once lose no record and tear none (issue 14 §2, item 1).
func TestCacheConcurrentAppend(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cache.jsonl")
	const n = 150
	var cmds []*exec.Cmd
	var outs []*bytes.Buffer
	for _, prefix := range []string{"first", "second"} {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s,%s,%d,%s", cacheWriterEnv, path, prefix, n, dir))
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, outs = append(cmds, cmd), append(outs, &out)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		_, e1 := os.Stat(filepath.Join(dir, "ready-first"))
		_, e2 := os.Stat(filepath.Join(dir, "ready-second"))
		if e1 == nil && e2 == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("writers did not start")
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("writer %d: %v\n%s", i, err, outs[i])
		}
	}
	c, err := OpenCache(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Len() != 2*n || len(c.Warnings) != 0 {
		t.Errorf("%d intact records (want %d), warnings %q", c.Len(), 2*n, c.Warnings)
	}
	for _, prefix := range []string{"first", "second"} {
		for i := 0; i < n; i++ {
			if r, ok := c.Get(fmt.Sprintf("%s-%d", prefix, i)); !ok || r.Variant != prefix {
				t.Fatalf("record %s-%d lost", prefix, i)
			}
		}
	}
}

// A writer reads what another appended before it appends, so both see all records; a torn line
// left by a dead writer is cut only then, after what follows it was read.
func TestCacheSeesOtherWriters(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cache.jsonl")
	a, err := OpenCache(path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := OpenCache(path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := a.Put(results.Record{Key: "a1", Kind: results.KindTune, Status: results.StatusOK}); err != nil {
		t.Fatal(err)
	}
	// A writer killed mid-line.
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"key":"dead","kind":"tu`)
	f.Close()
	if err := b.Put(results.Record{Key: "b1", Kind: results.KindTune, Status: results.StatusOK}); err != nil {
		t.Fatal(err)
	}
	if err := a.Put(results.Record{Key: "a2", Kind: results.KindTune, Status: results.StatusOK}); err != nil {
		t.Fatal(err)
	}
	if _, ok := b.Get("a1"); !ok {
		t.Error("b did not read a's record")
	}
	if _, ok := a.Get("b1"); !ok {
		t.Error("a did not read b's record")
	}
	c, err := OpenCache(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Len() != 3 || len(c.Warnings) != 0 {
		t.Errorf("reopened: %d records, warnings %q; want 3 and none", c.Len(), c.Warnings)
	}
}

// A file that is not a cache is refused and left byte for byte as it was (item 3).
func TestCacheRefusesForeignFile(t *testing.T) {
	record := `{"key":"a","kind":"tune","variant":"x","shape":{"m":1,"n":1,"k":1},"status":"ok"}`
	for _, tc := range []struct{ name, content, want string }{
		{"csv", "shape,variant,ms\n256x256x256,fast_a,0.5\n1024x1024x1024,mid,3", "some.csv:1: not a tilegen cache"},
		{"csv without newline", "shape,variant,ms", "some.csv:1: not a tilegen cache"},
		{"json without key", `{"name":"x"}` + "\n" + record + "\n" + `{"key":"b"`, "some.csv:1: not a tilegen cache"},
		{"text after blank lines", "\n\nhello world\n", "some.csv:3: not a tilegen cache"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "some.csv")
			os.WriteFile(path, []byte(tc.content), 0o644)
			c, err := OpenCache(path)
			if err == nil {
				c.Put(results.Record{Key: "new", Kind: results.KindTune, Status: results.StatusOK})
				c.Close()
				t.Errorf("accepted as a cache")
			} else if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "nothing was changed") {
				t.Errorf("error %q, want it to contain %q", err, tc.want)
			}
			if b, _ := os.ReadFile(path); string(b) != tc.content {
				t.Errorf("file changed:\n%q\nwant\n%q", b, tc.content)
			}
		})
	}
	dir := t.TempDir()
	if _, err := OpenCache(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a directory as cache: %v", err)
	}
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

// A torn record alone in a cache is still a cache (its first write died): it is cut on append.
func TestCacheTornOnlyLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cache.jsonl")
	os.WriteFile(path, []byte(`{"key":"x","kind":"tu`), 0o644)
	c, err := OpenCache(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Warnings) != 1 {
		t.Errorf("warnings %q, want one torn line", c.Warnings)
	}
	if b, _ := os.ReadFile(path); string(b) != `{"key":"x","kind":"tu` {
		t.Errorf("opening changed the file: %q", b)
	}
	if err := c.Put(results.Record{Key: "new", Kind: results.KindTune, Status: results.StatusOK}); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if b, _ := os.ReadFile(path); !bytes.HasPrefix(b, []byte(`{"key":"new"`)) || bytes.Count(b, []byte("\n")) != 1 {
		t.Errorf("after append: %q", b)
	}
}

// Neither the cache file nor its directory exists after a run that measured nothing (item 4).
func TestCacheCreatedLazily(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, "results", "cache.jsonl")
	c, err := OpenCache(path)
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
	c, err = OpenCache(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Put(results.Record{Key: "k", Kind: results.KindTune, Status: results.StatusOK}); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if c, err = OpenCache(path); err != nil || c.Len() != 1 {
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

// TestWriteAtomicConcurrent: two runners write the same file at once (the reference kernel the
// workers load from the temp dir, or one --out): every write succeeds and the file is whole. With a
// fixed temporary name one runner's rename found its temporary file already renamed away.
func TestWriteAtomicConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ref.ptx")
	want := bytes.Repeat([]byte("x"), 1<<16)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := 0; i < 64; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- writeAtomic(path, want)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("file after concurrent writes: %d bytes, %v", len(got), err)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*.tmp")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}
