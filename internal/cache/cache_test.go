package cache

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"tilegen/internal/results"
)

// cacheWriterEnv makes the test binary a cache writer (see init) for TestCacheConcurrentAppend:
// "path,prefix,n,dir" appends n records keyed prefix-i to the cache at path once dir/go exists.
const cacheWriterEnv = "TILEGEN_TEST_CACHE_WRITER"

func init() {
	// Runs before the tests: a writer process only writes.
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
	c, err := Open(path)
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
	c, err := Open(path)
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
	a, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(path)
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
	c, err := Open(path)
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
			c, err := Open(path)
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
	if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a directory as cache: %v", err)
	}
	// Through tune: the engine's TestTuneRefusesForeignCache.
}

// A torn record alone in a cache is still a cache (its first write died): it is cut on append.
func TestCacheTornOnlyLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cache.jsonl")
	os.WriteFile(path, []byte(`{"key":"x","kind":"tu`), 0o644)
	c, err := Open(path)
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
