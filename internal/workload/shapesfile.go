// Package workload reads shapes files: the workload corpus (workloads/corpus.txt) and the files
// `runner tune --shapes-file` and `runner bench --shapes-file` take.
//
// A shapes file is UTF-8 text, one problem per line:
//
//	# a comment line
//	M N K            # source: the rest of the line after '#' says where the shape comes from
//	128 3072 768     # BERT-base: FFN up 768->3072 (128 tokens)
//
// M, N and K are positive decimal integers (the row-major product C[M×N] = A[M×K]·B[K×N]),
// separated by spaces or tabs. Blank lines and lines that start with '#' are skipped. Optional
// columns after K, in any order, each at most once, say what product it is when it is not a single
// row-major NN one (the same problems as `--shapes MxNxK[:OP][:bBATCH][:EPILOGUE]`):
//
//	4096 4096 1024 op=NT                # C = A·Bᵀ, B stored N×K (NN, NT, TN or TT)
//	512 512 64 batch=64                 # a strided batch of 64 products
//	4096 4096 1024 epilogue=bias_relu_row   # a fused epilogue (variant.ParseEpilogue's names)
//
// An unknown column is an error, so a file written for a later tilegen never silently means
// something else. A UTF-8 byte-order mark at the start is ignored. Errors name file:line:col.
package workload

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"tilegen/internal/protocol"
	"tilegen/internal/results"
	"tilegen/internal/variant"
)

// Entry is one line of a shapes file.
type Entry struct {
	// Shape is the problem M×N×K.
	Shape protocol.Shape
	// Source is the text after '#' on the line, trimmed ("" when there is none).
	Source string
	// Line is the 1-based line number the entry came from.
	Line int
}

// MaxLineBytes bounds one line of a shapes file.
const MaxLineBytes = 4096

// MaxDim bounds M, N and K: the kernels take 32-bit ints.
const MaxDim = 1<<31 - 1

// ReadFile reads and parses a shapes file.
func ReadFile(path string) ([]Entry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Parse(path, f)
}

// Parse parses a shapes file read from r; name prefixes error positions. It returns every entry in
// file order (a shape listed twice, say from two models, appears twice: see Unique), or the file's
// errors, all of them, one per line, in file order.
func Parse(name string, r io.Reader) ([]Entry, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1024), MaxLineBytes)
	var out []Entry
	var errs []string
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if line == 1 {
			text = strings.TrimPrefix(text, "\ufeff")
		}
		e, col, err := parseLine(text)
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s:%d:%d: %v", name, line, col, err))
			continue
		}
		if e != nil {
			e.Line = line
			out = append(out, *e)
		}
	}
	if err := sc.Err(); err != nil {
		if err == bufio.ErrTooLong {
			return nil, fmt.Errorf("%s:%d:1: line longer than %d bytes", name, line+1, MaxLineBytes)
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no shapes (want lines of `M N K`, optionally followed by `# source`)", name)
	}
	return out, nil
}

// parseLine parses one line: nil for a blank or comment line, or the 1-based column of an error.
func parseLine(text string) (*Entry, int, error) {
	for i, r := range text {
		if r == '\t' {
			continue
		}
		if r < 0x20 || r == 0x7f {
			return nil, i + 1, fmt.Errorf("control character %q", r)
		}
	}
	body, source := text, ""
	if i := strings.IndexByte(text, '#'); i >= 0 {
		body, source = text[:i], strings.TrimSpace(text[i+1:])
	}
	type field struct {
		s   string
		col int
	}
	var fields []field
	for i := 0; i < len(body); {
		if body[i] == ' ' || body[i] == '\t' {
			i++
			continue
		}
		j := i
		for j < len(body) && body[j] != ' ' && body[j] != '\t' {
			j++
		}
		fields = append(fields, field{body[i:j], i + 1})
		i = j
	}
	if len(fields) == 0 {
		return nil, 0, nil
	}
	if len(fields) < 3 {
		return nil, fields[0].col, fmt.Errorf("want `M N K`, got %d field(s)", len(fields))
	}
	var d [3]int
	for i, f := range fields[:3] {
		v, err := strconv.ParseInt(f.s, 10, 64)
		if err != nil || v < 1 || v > MaxDim {
			return nil, f.col, fmt.Errorf("%c = %q: want a positive integer of at most %d", "MNK"[i], f.s, MaxDim)
		}
		d[i] = int(v)
	}
	s := protocol.Shape{M: d[0], N: d[1], K: d[2]}
	seen := map[string]bool{}
	for _, f := range fields[3:] {
		key, val, ok := strings.Cut(f.s, "=")
		if !ok || (key != "op" && key != "batch" && key != "epilogue") {
			return nil, f.col, fmt.Errorf("unexpected %q after `M N K`: want op=NN|NT|TN|TT, batch=N or epilogue=NAME (a source goes after '#')", f.s)
		}
		if seen[key] {
			return nil, f.col, fmt.Errorf("%s given twice", key)
		}
		seen[key] = true
		var err error
		switch key {
		case "op":
			s.Op, err = variant.ParseOp(val)
		case "batch":
			var b int64
			if b, err = strconv.ParseInt(val, 10, 64); err != nil || b < 1 || b > results.MaxBatch {
				err = fmt.Errorf("batch %q: want 1 to %d products", val, results.MaxBatch)
			}
			s.Batch = int(b)
		case "epilogue":
			s.Epilogue, err = variant.ParseEpilogue(val)
		}
		if err != nil {
			return nil, f.col, err
		}
	}
	if s.Batch > 0 && s.Epilogue != variant.EpiNone {
		return nil, fields[3].col, fmt.Errorf("a strided batch with an epilogue is not supported")
	}
	return &Entry{Shape: s, Source: source}, 0, nil
}

// Unique returns the distinct shapes of entries in first-seen order.
func Unique(entries []Entry) []protocol.Shape {
	seen := map[protocol.Shape]bool{}
	var out []protocol.Shape
	for _, e := range entries {
		if !seen[e.Shape] {
			seen[e.Shape] = true
			out = append(out, e.Shape)
		}
	}
	return out
}

// Sources returns, per distinct shape, the sources of all its entries joined by "; " (each once,
// in file order).
func Sources(entries []Entry) map[protocol.Shape]string {
	out := map[protocol.Shape]string{}
	seen := map[string]bool{}
	for _, e := range entries {
		if e.Source == "" {
			if _, ok := out[e.Shape]; !ok {
				out[e.Shape] = ""
			}
			continue
		}
		key := fmt.Sprintf("%v|%s", e.Shape, e.Source)
		if seen[key] {
			continue
		}
		seen[key] = true
		if s := out[e.Shape]; s != "" {
			out[e.Shape] = s + "; " + e.Source
		} else {
			out[e.Shape] = e.Source
		}
	}
	return out
}
