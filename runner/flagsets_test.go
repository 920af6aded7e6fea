//go:build !gpu

package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

var update = flag.Bool("update", false, "rewrite testdata/help from the current help")

// TestHelpGolden: every command's help, flags composed from the shared groups included, is what
// testdata/help/CMD.txt holds; a change to a shared flag shows in every command that takes it.
// go test ./runner -run HelpGolden -update rewrites the files.
func TestHelpGolden(t *testing.T) {
	cases := [][]string{{"study", "hybrid"}}
	for _, c := range commands {
		if c.name != "help" {
			cases = append(cases, []string{c.name})
		}
	}
	for _, args := range cases {
		name := strings.Join(args, "-")
		var stdout, stderr bytes.Buffer
		if err := run(append([]string{"help"}, args...), &stdout, &stderr); err != nil {
			t.Fatalf("runner help %s: %v", strings.Join(args, " "), err)
		}
		file := filepath.Join("testdata", "help", name+".txt")
		if *update {
			if err := os.WriteFile(file, stdout.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if got := stdout.String(); got != string(want) {
			t.Errorf("runner help %s differs from %s:\n%s", strings.Join(args, " "), file, got)
		}
	}
}

// TestGroupsKeepOrderAndBounds: a command that adds a shared group lists its flags in the group's
// order and refuses the values the group's bounds refuse.
func TestGroupsKeepOrderAndBounds(t *testing.T) {
	fs := newFlags("tune", "[flags]", &bytes.Buffer{})
	var w watchdogFlags
	fs.AddFlagSet(w.flags())
	var names []string
	fs.VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
	if got, want := strings.Join(names, " "), "timeout-floor timeout-cap timeout-factor floor-gflops"; got != want {
		t.Errorf("flags %q, want %q", got, want)
	}
	if ok, err := parse(fs, []string{"--timeout-factor", "0"}); ok || err == nil {
		t.Errorf("--timeout-factor 0 accepted")
	}
}
