package results

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// ReadFile reads path, or when it is absent path.gz decompressed (committed evidence keeps its
// records gzipped). It returns the name it read, path or path.gz; the bytes are the uncompressed
// content either way. When neither exists the error is path's.
func ReadFile(path string) (string, []byte, error) {
	b, err := os.ReadFile(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return path, b, err
	}
	f, gerr := os.Open(path + ".gz")
	if gerr != nil {
		return path, nil, err
	}
	defer f.Close()
	zr, zerr := gzip.NewReader(f)
	if zerr == nil {
		b, zerr = io.ReadAll(zr)
	}
	if zerr != nil {
		return path + ".gz", nil, fmt.Errorf("%s.gz: %w", path, zerr)
	}
	return path + ".gz", b, nil
}

// ReadJSONL reads a results.jsonl, or when it is absent the path.gz beside it, one Record a line;
// blank lines are skipped.
func ReadJSONL(path string) ([]Record, error) {
	name, b, err := ReadFile(path)
	if err != nil {
		return nil, err
	}
	return DecodeJSONL(name, b)
}

// DecodeJSONL decodes records one a line; name is what errors call the input.
func DecodeJSONL(name string, b []byte) ([]Record, error) {
	var out []Record
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 1<<28)
	for line := 1; sc.Scan(); line++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var r Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}

// EncodeJSONL renders records one a line, as results.jsonl and the cache hold them.
func EncodeJSONL(rs []Record) ([]byte, error) {
	var b bytes.Buffer
	for _, r := range rs {
		line, err := json.Marshal(r)
		if err != nil {
			return nil, fmt.Errorf("encode %s: %w", r.Variant, err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.Bytes(), nil
}

// ReadDir reads a results directory's records (results.jsonl or results.jsonl.gz) and device.json.
func ReadDir(dir string) ([]Record, RunInfo, error) {
	recs, err := ReadJSONL(filepath.Join(dir, "results.jsonl"))
	if err != nil {
		return nil, RunInfo{}, err
	}
	var info RunInfo
	b, err := os.ReadFile(filepath.Join(dir, "device.json"))
	if err != nil {
		return nil, RunInfo{}, fmt.Errorf("reading results: %w", err)
	}
	if err := json.Unmarshal(b, &info); err != nil {
		return nil, RunInfo{}, fmt.Errorf("%s: %w", filepath.Join(dir, "device.json"), err)
	}
	return recs, info, nil
}
