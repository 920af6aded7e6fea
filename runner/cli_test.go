//go:build !gpu

package main

import (
	"bytes"
	"errors"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// runBin runs the built runner and returns its exit status, stdout and stderr.
func runBin(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(runnerBin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("runner %s: %v", strings.Join(args, " "), err)
	}
	return code, stdout.String(), stderr.String()
}

// TestHelpAndUsageExitCodes: help goes to stdout with status 0; a usage error is one line naming
// what is wrong plus a one-line hint, with status 2, and nothing on stdout.
func TestHelpAndUsageExitCodes(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		// out must be in stdout (code 0) or be the first stderr line's text after "runner" (code 2).
		out  string
		hint string
	}{
		{[]string{"--help"}, 0, "usage: runner <command>", ""},
		{[]string{"-h"}, 0, "usage: runner <command>", ""},
		{[]string{"help"}, 0, "usage: runner <command>", ""},
		{[]string{"help", "tune"}, 0, "usage: runner tune", ""},
		{[]string{"help", "study"}, 0, "--render-only", ""},
		{[]string{"help", "export"}, 0, "--go-package", ""},
		{[]string{"tune", "--help"}, 0, "--min-time", ""},
		{[]string{"tune", "-h"}, 0, "usage: runner tune", ""},
		{[]string{"list", "--help"}, 0, "--param", ""},
		{[]string{"study", "hybrid", "--help"}, 0, "--sweep", ""},
		{nil, 2, ": missing command", "runner help"},
		{[]string{"frobnicate"}, 2, `: unknown command "frobnicate"`, "runner help"},
		{[]string{"help", "frobnicate"}, 2, ` help: unknown command "frobnicate"`, "runner help"},
		{[]string{"tune", "--reps", "0"}, 2, " tune: --reps 0: want", "runner help tune"},
		{[]string{"tune", "--no-such-flag"}, 2, " tune: unknown flag: --no-such-flag", "runner help tune"},
		{[]string{"tune", "stray"}, 2, " tune: unexpected arguments stray", "runner help tune"},
		{[]string{"verify", "--shapes", "12x12"}, 2, " verify: --shapes: ", "runner help verify"},
		{[]string{"merge", "a"}, 2, " merge: ", "runner help merge"},
		{[]string{"report", "--out", "x"}, 2, " report: ", "runner help report"},
		{[]string{"hybrid", "--cpu-rows", "auto"}, 2, " hybrid: ", "runner help hybrid"},
		{[]string{"study"}, 2, " study: want one study name", "runner help study"},
	} {
		code, stdout, stderr := runBin(t, tc.args...)
		name := strings.Join(append([]string{"runner"}, tc.args...), " ")
		if code != tc.code {
			t.Errorf("%s: exit %d, want %d\nstdout: %s\nstderr: %s", name, code, tc.code, stdout, stderr)
			continue
		}
		if tc.code == 0 {
			if !strings.Contains(stdout, tc.out) || stderr != "" {
				t.Errorf("%s: want %q on stdout and nothing on stderr\nstdout: %s\nstderr: %s", name, tc.out, stdout, stderr)
			}
			continue
		}
		lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
		if stdout != "" || len(lines) != 2 || !strings.HasPrefix(lines[0], "runner"+tc.out) ||
			lines[1] != "Run '"+tc.hint+"' for usage." {
			t.Errorf("%s: want stderr \"runner%s…\" and the hint %q, nothing on stdout\nstdout: %s\nstderr: %s",
				name, tc.out, tc.hint, stdout, stderr)
		}
	}
}

// TestVersion: --version prints the module version, Go, the nvcc that built the embedded PTX and
// the git revision on one line.
func TestVersion(t *testing.T) {
	code, stdout, stderr := runBin(t, "--version")
	re := regexp.MustCompile(`^runner \S+ \(go1\.[^,]+, nvcc release [^,]+, V[0-9.]+, git ([0-9a-f]{12}(\+dirty)?|unknown)\)\n$`)
	if code != 0 || stderr != "" || !re.MatchString(stdout) {
		t.Errorf("runner --version: exit %d\nstdout: %q\nstderr: %q\nwant %s", code, stdout, stderr, re)
	}
}

// TestNumericFlagsRefused: every count, duration and factor a user can get wrong is refused as a
// usage error naming the flag, before anything is started or read.
func TestNumericFlagsRefused(t *testing.T) {
	cases := map[string][]string{
		"tune": {"--reps=0", "--reps=-1", "--budget=0", "--budget=-3", "--budget=1.5", "--budget=0%", "--budget=101%", "--budget=many", "--min-time=0s", "--min-time=-1s",
			"--max-reps=0", "--warmup=-1", "--rank-rounds=-1", "--rank-top=0", "--rank-near=-1", "--rank-reps=0",
			"--table-top=-1", "--timeout-floor=0s", "--timeout-cap=-1s", "--timeout-factor=0", "--floor-gflops=0",
			"--tol-factor=0", "--tol-factor=-2", "--cpu-check-max-flops=-1", "--shared-inputs-above=-1", "--sms=-1"},
		"verify": {"--tol-factor=0", "--timeout-floor=-1s", "--timeout-factor=-1"},
		"bench":  {"--reps=0", "--min-time=0s", "--max-reps=-5"},
		"study": {"--reps=0", "--runs=0", "--cpu-budget=0s", "--cpu-workers=-1", "--cpu-naive-max=-1",
			"--cpu-blocked-max=-1", "--max-reps=0", "--warmup=-1", "--min-time=-1ms"},
		"hybrid": {"--reps=0", "--probe-rows=0", "--cpu-workers=-1", "--timeout=0s", "--samples=-1",
			"--tol-factor=0", "--device=-1", "--full-check-max-flops=-1"},
		"outofcore": {"--min-slice-k=-1", "--timeout=-1s", "--device=-2", "--samples=-1", "--tol-factor=0"},
	}
	for cmd, flags := range cases {
		for _, f := range flags {
			name := strings.SplitN(f, "=", 2)[0]
			err := run([]string{cmd, "--shape", "64x64x64", f}, &bytes.Buffer{}, &bytes.Buffer{})
			if cmd != "hybrid" && cmd != "outofcore" {
				err = run([]string{cmd, f}, &bytes.Buffer{}, &bytes.Buffer{})
			}
			var ee *exitError
			if !errors.As(err, &ee) || ee.code != 2 || !strings.Contains(err.Error(), name+" ") {
				t.Errorf("runner %s %s: got %v, want a usage error naming %s", cmd, f, err, name)
			}
		}
	}
	// Relations between flags are usage errors too.
	for _, args := range [][]string{
		{"tune", "--reps", "50", "--max-reps", "20"},
		{"tune", "--timeout-floor", "10s", "--timeout-cap", "5s"},
		{"tune", "--strategy", "random"},
		{"tune", "--strategy", "greedy"},
		{"tune", "--budget", "3"},
		{"tune", "--strategy", "model", "--shard", "0/2"},
	} {
		var ee *exitError
		if err := run(args, &bytes.Buffer{}, &bytes.Buffer{}); !errors.As(err, &ee) || ee.code != 2 {
			t.Errorf("runner %s: got %v, want a usage error", strings.Join(args, " "), err)
		}
	}
}

// TestEveryNumericFlagHasABound: parse refuses a command whose numeric flag declares no bound, so
// asking every command for its help checks that none was forgotten.
func TestEveryNumericFlagHasABound(t *testing.T) {
	for _, c := range commands {
		var out bytes.Buffer
		if err := run([]string{c.name, "--help"}, &out, &bytes.Buffer{}); err != nil {
			t.Errorf("runner %s --help: %v", c.name, err)
		}
		if !strings.HasPrefix(out.String(), "usage: runner ") {
			t.Errorf("runner %s --help:\n%s", c.name, out.String())
		}
	}
}
