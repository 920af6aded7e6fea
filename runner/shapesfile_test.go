//go:build !gpu

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tilegen/internal/protocol"
	"tilegen/internal/results"
)

// TestShapesFile: --shapes-file replaces --shapes' default, is added after the shapes a given
// --shapes names (each shape once), carries the file's sources, and names file:line:col of a bad line.
func TestShapesFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "w.txt")
	if err := os.WriteFile(file, []byte("# w\n128 3072 768  # BERT-base: FFN up (128 tokens)\n1 4096 4096 # LLaMA-7B: q (1 token)\n128 3072 768 # GPT-2 small: c_fc (128 tokens)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.txt")
	if err := os.WriteFile(bad, []byte("1 2 3\n4 5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	read := func(args ...string) ([]protocol.Shape, map[protocol.Shape]string, error) {
		fs := newFlags("tune", "[flags]", &bytes.Buffer{})
		var c common
		fs.AddFlagSet(c.flags("4096x4096x4096,2048x2048x2048", "out"))
		if ok, err := parse(fs, args); !ok || err != nil {
			t.Fatalf("parse %v: %v", args, err)
		}
		return c.readShapes("tune")
	}
	str := func(ss []protocol.Shape) string {
		var out []string
		for _, s := range ss {
			out = append(out, results.ShapeString(s))
		}
		return strings.Join(out, ",")
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "4096x4096x4096,2048x2048x2048"},
		{[]string{"--shapes-file", file}, "128x3072x768,1x4096x4096"},
		{[]string{"--shapes", "1x4096x4096,7x7x7", "--shapes-file", file}, "1x4096x4096,7x7x7,128x3072x768"},
	} {
		got, src, err := read(tc.args...)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if str(got) != tc.want {
			t.Errorf("%v: shapes %s, want %s", tc.args, str(got), tc.want)
		}
		if len(tc.args) > 0 && tc.args[len(tc.args)-2] == "--shapes-file" {
			if s := src[protocol.Shape{M: 128, N: 3072, K: 768}]; s != "BERT-base: FFN up (128 tokens); GPT-2 small: c_fc (128 tokens)" {
				t.Errorf("%v: source %q", tc.args, s)
			}
		}
	}
	// Columns name the op, a strided batch or an epilogue; --ops cannot name them a second time.
	ops := filepath.Join(dir, "ops.txt")
	if err := os.WriteFile(ops, []byte("4096 4096 1024 op=NT  # x: y\n512 512 64 batch=64\n64 64 64 epilogue=bias_gelu_col\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _, err := read("--shapes-file", ops); err != nil || str(got) != "4096x4096x1024:NT,512x512x64:b64,64x64x64:bias_gelu_col" {
		t.Errorf("op/batch/epilogue columns: %s, %v", str(got), err)
	}
	var out bytes.Buffer
	if err := run([]string{"tune", "--dry-run", "--shapes-file", ops, "--ops", "NT,TN"}, &out, &out); err == nil ||
		!strings.Contains(err.Error(), "give ops one way") {
		t.Errorf("--ops with op= columns: error %v, want a usage error", err)
	}
	if _, _, err := read("--shapes-file", bad); err == nil || !strings.Contains(err.Error(), "bad.txt:2:1: want `M N K`") {
		t.Errorf("bad file: error %v, want it to name bad.txt:2:1", err)
	}
	if _, _, err := read("--shapes-file", filepath.Join(dir, "none.txt")); err == nil || !strings.Contains(err.Error(), "--shapes-file") {
		t.Errorf("missing file: error %v", err)
	}
}
