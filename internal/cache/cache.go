package cache

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"tilegen/internal/results"
)

// Cache is the append-only JSONL file of measured records, keyed by Record.Key. Every record is
// written and fsynced on its own, so that a killed run loses at most the measurements in flight.
//
// Several runners may share one file (the default results/cache.jsonl). The strategy is a lock plus
// atomic appends: each record is one line written by a single write(2) on a descriptor opened with
// O_APPEND, while the writer holds an exclusive advisory lock on the file (flock(2) LOCK_EX, held
// through the fsync); Open reads under a shared lock, so it never sees half of another
// runner's line. Before it appends, a writer reads what the others appended since it last looked,
// so their records are served by its later lookups too.
//
// A torn last line (a process died mid-write) is dropped with a warning. It is cut off the file
// only by the next append, under the exclusive lock and after the writer has read the file to its
// end, so a record another runner appended in the meantime is never cut. A file that is not a
// cache (its first complete line is not a JSON record with a key) is refused and left untouched.
// The file and its directory are created by the first append: a run that measures nothing leaves
// no empty cache behind.
type Cache struct {
	mu   sync.Mutex
	path string
	// f is the append descriptor, opened by the first Put.
	f *os.File
	// read is how many bytes of the file have been parsed: the end of its last complete line.
	read int64
	// lines counts the lines up to read (for warnings); sawRecord is set once the first complete
	// line has shown the file to be a cache.
	lines     int
	sawRecord bool
	byKey     map[string]results.Record
	// Warnings are the problems found while reading the file (torn or corrupt lines).
	Warnings []string
}

// Open reads the cache at path, which need not exist (a missing file is an empty cache and is
// created by the first Put). A file that is not a tilegen cache, or not a regular file, is an error.
func Open(path string) (*Cache, error) {
	c := &Cache{path: path, byKey: map[string]results.Record{}}
	st, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("cache %s: not a regular file (--cache wants a JSONL file)", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	defer f.Close()
	if err := flock(f, lockShared); err != nil {
		return nil, fmt.Errorf("cache %s: lock: %w", path, err)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("cache %s: %w", path, err)
	}
	// Closing the descriptor releases the shared lock.
	tail, err := c.parse(data)
	if err != nil {
		return nil, err
	}
	if len(tail) > 0 {
		if _, ok := decodeRecord(tail); !ok {
			c.Warnings = append(c.Warnings, fmt.Sprintf("cache %s:%d: dropped a torn last line (%d bytes)", c.path, c.lines+1, len(tail)))
		}
	}
	return c, nil
}

// errNotCache says a file is not a tilegen cache.
func errNotCache(path string, line int) error {
	return fmt.Errorf("cache %s:%d: not a tilegen cache (this line is not a JSON record with a \"key\"); "+
		"refusing to use it, nothing was changed: name a new or existing cache file with --cache", path, line)
}

// decodeRecord parses one line; ok when it is a record with a key.
func decodeRecord(line []byte) (results.Record, bool) {
	var r results.Record
	text := bytes.TrimSpace(line)
	if len(text) == 0 || text[0] != '{' || json.Unmarshal(text, &r) != nil || r.Key == "" {
		return results.Record{}, false
	}
	return r, true
}

// parse reads the complete lines of data (the file from c.read on) into the index, advancing
// c.read past them, and returns what follows the last newline. The first complete line of the file
// must be a record, or it is not a cache; a lone partial line must be one or look like a torn one.
func (c *Cache) parse(data []byte) ([]byte, error) {
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break
		}
		line := data[:i+1]
		c.lines++
		if len(bytes.TrimSpace(line)) > 0 {
			r, ok := decodeRecord(line)
			switch {
			case ok:
				c.byKey[r.Key] = r
				c.sawRecord = true
			case !c.sawRecord:
				return nil, errNotCache(c.path, c.lines)
			default:
				c.Warnings = append(c.Warnings, fmt.Sprintf("cache %s:%d: skipped a corrupt line", c.path, c.lines))
			}
		}
		c.read += int64(len(line))
		data = data[i+1:]
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return data, nil
	}
	if r, ok := decodeRecord(data); ok {
		c.byKey[r.Key] = r
		return data, nil
	}
	// A record's line starts with its key (Record's first field): a torn one keeps that prefix.
	if !c.sawRecord && !bytes.HasPrefix(bytes.TrimSpace(data), []byte(`{"key":`)) {
		return nil, errNotCache(c.path, c.lines+1)
	}
	return data, nil
}

// Get returns the cached record with the key.
func (c *Cache) Get(key string) (results.Record, bool) {
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

// Records returns the cached records, one per key, in no particular order.
func (c *Cache) Records() []results.Record {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]results.Record, 0, len(c.byKey))
	for _, r := range c.byKey {
		out = append(out, r)
	}
	return out
}

// Put appends the record as one line and fsyncs it, under the file's exclusive lock.
func (c *Cache) Put(r results.Record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("cache: encode %s: %w", r.Variant, err)
	}
	b = append(b, '\n')
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.f == nil {
		if err := os.MkdirAll(filepath.Dir(c.path), 0o755); err != nil {
			return fmt.Errorf("cache: %w", err)
		}
		f, err := os.OpenFile(c.path, os.O_CREATE|os.O_RDWR|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("cache: %w", err)
		}
		c.f = f
	}
	if err := flock(c.f, lockExclusive); err != nil {
		return fmt.Errorf("cache %s: lock: %w", c.path, err)
	}
	defer flock(c.f, lockRelease)
	if err := c.catchUp(); err != nil {
		return err
	}
	if _, err := c.f.Write(b); err != nil {
		return fmt.Errorf("cache %s: write: %w", c.path, err)
	}
	if err := c.f.Sync(); err != nil {
		return fmt.Errorf("cache %s: sync: %w", c.path, err)
	}
	c.read += int64(len(b))
	c.lines++
	c.sawRecord = true
	c.byKey[r.Key] = r
	return nil
}

// catchUp runs under the exclusive lock: it reads what was appended since c.read, then makes the
// file end on a line boundary, ending a complete last record with its newline or cutting a torn one.
func (c *Cache) catchUp() error {
	st, err := c.f.Stat()
	if err != nil {
		return fmt.Errorf("cache %s: %w", c.path, err)
	}
	size := st.Size()
	if size < c.read { // cut or replaced by someone else: read it again
		c.read, c.lines, c.sawRecord = 0, 0, false
	}
	if size == c.read {
		return nil
	}
	data := make([]byte, size-c.read)
	if _, err := c.f.ReadAt(data, c.read); err != nil {
		return fmt.Errorf("cache %s: %w", c.path, err)
	}
	tail, err := c.parse(data)
	if err != nil {
		return err
	}
	if len(tail) == 0 {
		return nil
	}
	if _, ok := decodeRecord(tail); ok || len(bytes.TrimSpace(tail)) == 0 {
		if _, err := c.f.Write([]byte("\n")); err != nil {
			return fmt.Errorf("cache %s: %w", c.path, err)
		}
		c.read += int64(len(tail)) + 1
		c.lines++
		return nil
	}
	// Nobody else appends while the lock is held, and the file was read to its end just now.
	if err := c.f.Truncate(c.read); err != nil {
		return fmt.Errorf("cache %s: cut a torn last line: %w", c.path, err)
	}
	return nil
}

// Close closes the file (if a Put opened it).
func (c *Cache) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.f == nil {
		return nil
	}
	err := c.f.Close()
	c.f = nil
	return err
}
