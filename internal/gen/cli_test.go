package gen

import (
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestHelp: --help and -h print the usage to stdout, nothing to stderr, and exit 0.
func TestHelp(t *testing.T) {
	for _, arg := range []string{"--help", "-h"} {
		code, stdout, stderr := runGen(t, nil, arg)
		if code != 0 || stderr != "" {
			t.Errorf("gen %s: exit %d, stderr %q; want 0 and nothing", arg, code, stderr)
		}
		for _, want := range []string{"Usage: gen [flags]", "--config file", "--out dir", "--version", "--help"} {
			if !strings.Contains(stdout, want) {
				t.Errorf("gen %s: usage lacks %q:\n%s", arg, want, stdout)
			}
		}
	}
}

// TestUsageErrors: every command-line mistake exits 2 with the error and a one-line hint, and
// no usage dump.
func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--bogus"},
		{"extra"},
		{"--jobs", "0"},
		{"--jobs", "x"},
		{"--arch", "90"},
		{"--config"},
		{"--templates", "/nonexistent-templates", "--config", "testdata/good.yaml", "--out", t.TempDir()},
	} {
		code, stdout, stderr := runGen(t, nil, args...)
		lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
		if code != 2 || stdout != "" || len(lines) != 2 || !strings.HasPrefix(lines[0], "gen: ") ||
			lines[1] != "run 'gen --help' for usage" {
			t.Errorf("gen %v: exit %d, stdout %q, stderr %q; want exit 2, \"gen: ...\" and the hint", args, code, stdout, stderr)
		}
	}
}

// TestVersion: --version prints gen's, Go's and nvcc's versions and the git revision, with or
// without an nvcc.
func TestVersion(t *testing.T) {
	nvcc := fakeNVCC(t)
	code, stdout, stderr := runGen(t, nil, "--version", "--nvcc", nvcc)
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	want := regexp.MustCompile(`^gen \S+ \(` + regexp.QuoteMeta(runtime.Version()) +
		`, nvcc release 99\.9, V99\.9\.9, git ([0-9a-f]{12}(\+dirty)?|unknown)\)\noutput format: ` +
		regexp.QuoteMeta(GeneratorVersion) + `\n$`)
	if !want.MatchString(stdout) {
		t.Errorf("--version printed:\n%s", stdout)
	}
	code, stdout, _ = runGen(t, []string{"PATH=" + t.TempDir(), "NVCC="}, "--version")
	if code != 0 || !strings.Contains(stdout, ", nvcc not found, ") {
		t.Errorf("without nvcc: exit %d, stdout %q", code, stdout)
	}
}

// TestConfigSizeCap: an endless or huge --config fails at once, naming the file and the cap.
func TestConfigSizeCap(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	big := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, maxInputBytes+1); err != nil {
		t.Fatal(err)
	}
	for _, cfg := range []string{"/dev/zero", big} {
		start := time.Now()
		err := Run([]string{"--config", cfg, "--out", t.TempDir(), "--no-compile"}, new(strings.Builder), new(strings.Builder))
		if err == nil || !strings.Contains(err.Error(), cfg) || !strings.Contains(err.Error(), "8 MiB") {
			t.Errorf("--config %s: got %v, want an error naming the file and the 8 MiB cap", cfg, err)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("--config %s took %v", cfg, d)
		}
	}
	err := Run([]string{"--config", t.TempDir(), "--no-compile", "--out", t.TempDir()}, new(strings.Builder), new(strings.Builder))
	if err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("--config DIR: got %v", err)
	}
}

// copyTemplates copies testdata/templates into a new directory and returns it.
func copyTemplates(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	for rel, b := range snapshot(t, "testdata/templates") {
		writeFile(t, filepath.Join(dst, filepath.FromSlash(rel)), string(b))
	}
	return dst
}

// TestTemplateSizeCap: a template over the cap fails naming it and the cap.
func TestTemplateSizeCap(t *testing.T) {
	dir := copyTemplates(t)
	if err := os.Truncate(filepath.Join(dir, "tiny.cu.tmpl"), maxInputBytes+1); err != nil {
		t.Fatal(err)
	}
	err := Run([]string{"--config", "testdata/good.yaml", "--templates", dir, "--out", t.TempDir(), "--no-compile"}, new(strings.Builder), new(strings.Builder))
	if err == nil || !strings.Contains(err.Error(), "tiny.cu.tmpl") || !strings.Contains(err.Error(), "8 MiB") {
		t.Errorf("got %v, want an error naming tiny.cu.tmpl and the 8 MiB cap", err)
	}
}

// TestTemplatesStayInRoot: a template (or the common template, or support/) that is a symbolic
// link out of --templates is refused; a link inside it is followed.
func TestTemplatesStayInRoot(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret.cu.tmpl")
	writeFile(t, secret, "SECRET {{.V.Name}}\n")
	for _, name := range []string{"tiny.cu.tmpl", "common.cu.tmpl", "support"} {
		t.Run(name, func(t *testing.T) {
			dir := copyTemplates(t)
			p := filepath.Join(dir, name)
			if err := os.RemoveAll(p); err != nil {
				t.Fatal(err)
			}
			target := secret
			if name == "support" {
				target = filepath.Dir(secret)
			}
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
			out := t.TempDir()
			err := Run([]string{"--config", "testdata/good.yaml", "--templates", dir, "--out", out, "--no-compile"}, new(strings.Builder), new(strings.Builder))
			if err == nil || !strings.Contains(err.Error(), name) {
				t.Fatalf("got %v, want a refusal naming %s", err, name)
			}
			if !strings.Contains(err.Error(), "leads out of the template directory") {
				t.Errorf("message does not say why: %v", err)
			}
			if got := snapshot(t, out); len(got) != 0 {
				t.Errorf("wrote %v", keys(got))
			}
		})
	}
	dir := copyTemplates(t)
	inside := filepath.Join(dir, "real")
	if err := os.Rename(filepath.Join(dir, "tiny.cu.tmpl"), inside); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real", filepath.Join(dir, "tiny.cu.tmpl")); err != nil {
		t.Fatal(err)
	}
	mustGen(t, "--config", "testdata/good.yaml", "--templates", dir, "--out", t.TempDir(), "--no-compile")
}
