package cache

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"tilegen/internal/results"
)

// FuzzOpenPut: whatever a cache file holds, Open never panics; a file it refuses is left as it was;
// and on a file it opens, a Put is read back by the next Open together with every record the first
// Open read (a torn or corrupt line costs that line only).
func FuzzOpenPut(f *testing.F) {
	f.Add([]byte(`{"key":"a","variant":"v"}` + "\n"))
	f.Add([]byte(`{"key":"a","variant":"v"}` + "\n" + `{"key":"b","vari`))
	f.Add([]byte(`{"key":"a"}` + "\n" + "garbage\n" + `{"key":"c"}`))
	f.Add([]byte(`{"key":`))
	f.Add([]byte("not a cache\n"))
	f.Add([]byte("\n\n  \n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "cache.jsonl")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := Open(path)
		if err != nil {
			if got, _ := os.ReadFile(path); !bytes.Equal(got, data) {
				t.Fatalf("a refused file was changed: %q -> %q", data, got)
			}
			return
		}
		before := map[string]bool{}
		for _, r := range c.Records() {
			before[r.Key] = true
		}
		const key = "\x00fuzz-put-key"
		err = c.Put(results.Record{Key: key, Variant: "fuzz"})
		c.Close()
		if err != nil {
			// Put refuses only a file that turns out not to be a cache on a second look (what Open
			// took as a torn first line); then nothing may be lost either.
			if got, _ := os.ReadFile(path); !bytes.Equal(got, data) {
				t.Fatalf("Put failed (%v) and changed the file: %q -> %q", err, data, got)
			}
			return
		}
		again, err := Open(path)
		if err != nil {
			t.Fatalf("reopening after a Put: %v (file %q)", err, mustRead(t, path))
		}
		if _, ok := again.Get(key); !ok {
			t.Fatalf("the record put is lost: file %q", mustRead(t, path))
		}
		for k := range before {
			if _, ok := again.Get(k); !ok {
				t.Fatalf("record %q read before the Put is lost: %q -> %q", k, data, mustRead(t, path))
			}
		}
	})
}

func mustRead(t *testing.T, path string) []byte {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
