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
	if _, _, err := read("--shapes-file", bad); err == nil || !strings.Contains(err.Error(), "bad.txt:2:1: want `M N K`") {
		t.Errorf("bad file: error %v, want it to name bad.txt:2:1", err)
	}
	if _, _, err := read("--shapes-file", filepath.Join(dir, "none.txt")); err == nil || !strings.Contains(err.Error(), "--shapes-file") {
		t.Errorf("missing file: error %v", err)
	}
}
