package orchestrator

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// Cache is the append-only JSONL file of measured records, keyed by Record.Key. Every record is
// written and fsynced on its own, so that a killed run loses at most the measurements in flight. A
// torn last line (the process died mid-write) is dropped with a warning and cut off the file, so the
// next append starts on a clean line.
type Cache struct {
	mu    sync.Mutex
	path  string
	f     *os.File
	byKey map[string]Record
	// Warnings are the problems found while reading the file (torn or corrupt lines).
	Warnings []string
}

// OpenCache reads path (creating it and its directory if missing) and opens it for appending.
func OpenCache(path string) (*Cache, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	data, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return nil, fmt.Errorf("cache: %w", err)
	}
	c := &Cache{path: path, byKey: map[string]Record{}}
	good := 0 // bytes up to the end of the last line that is kept
	lines := bytes.SplitAfter(data, []byte("\n"))
	if n := len(lines); n > 0 && len(lines[n-1]) == 0 {
		lines = lines[:n-1]
	}
	off := 0
	for i, ln := range lines {
		off += len(ln)
		text := bytes.TrimSpace(ln)
		var r Record
		switch {
		case len(text) == 0:
		case json.Unmarshal(text, &r) != nil || r.Key == "":
			if i == len(lines)-1 {
				c.Warnings = append(c.Warnings, fmt.Sprintf("cache %s:%d: dropped a torn last line (%d bytes)", path, i+1, len(text)))
				continue
			}
			c.Warnings = append(c.Warnings, fmt.Sprintf("cache %s:%d: skipped a corrupt line", path, i+1))
		default:
			c.byKey[r.Key] = r
		}
		good = off
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	if good < len(data) {
		if err := f.Truncate(int64(good)); err != nil {
			f.Close()
			return nil, fmt.Errorf("cache: cut torn line: %w", err)
		}
	} else if good > 0 && data[len(data)-1] != '\n' {
		if _, err := f.WriteAt([]byte("\n"), int64(len(data))); err != nil {
			f.Close()
			return nil, fmt.Errorf("cache: %w", err)
		}
	}
	if _, err := f.Seek(0, 2); err != nil {
		f.Close()
		return nil, fmt.Errorf("cache: %w", err)
	}
	c.f = f
	return c, nil
}

// Get returns the cached record with the key.
func (c *Cache) Get(key string) (Record, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.byKey[key]
	return r, ok
}

// Len is the number of distinct keys cached.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.byKey)
}

// Put appends the record and fsyncs it.
func (c *Cache) Put(r Record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("cache: encode %s: %w", r.Variant, err)
	}
	b = append(b, '\n')
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := c.f.Write(b); err != nil {
		return fmt.Errorf("cache: write: %w", err)
	}
	if err := c.f.Sync(); err != nil {
		return fmt.Errorf("cache: sync: %w", err)
	}
	c.byKey[r.Key] = r
	return nil
}

// Close closes the file.
func (c *Cache) Close() error { return c.f.Close() }
