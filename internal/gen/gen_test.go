package gen

import (
	"bytes"
	"errors"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/cases")

// goldenNVCC is the nvcc the compiled golden files were made with; PTX bytes and compiler messages
// are compared only under the same version.
const goldenNVCC = "release 11.8, V11.8.89"

// requireNVCC skips (or, under CI=true, fails) a test that needs the CUDA toolkit, and returns
// nvcc's version.
func requireNVCC(t *testing.T) string {
	t.Helper()
	tc, err := FindToolchain(t.Context(), "", "", "sm_90")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and the CUDA toolkit is unusable: %v", err)
		}
		t.Skipf("needs nvcc: %v", err)
	}
	return tc.Version
}

// snapshot reads every file under dir (slash paths relative to it).
func snapshot(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = b
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return out
}

func keys(m map[string][]byte) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func caseArgs(t *testing.T, dir string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "args"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		t.Fatal(err)
	}
	var args []string
	for _, l := range strings.Split(string(b), "\n") {
		if l != "" {
			args = append(args, l)
		}
	}
	return args
}

// TestCases runs every testdata/cases/<case>: variants.yaml (+ templates/, default
// testdata/templates; + args) must produce exactly want/ (and want.stdout), or fail with exactly
// want.err and write nothing.
func TestCases(t *testing.T) {
	dirs, err := filepath.Glob("testdata/cases/*")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no cases: %v", err)
	}
	for _, dir := range dirs {
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			exact := true // compare bytes; false when nvcc differs from the one the goldens were made with
			if _, err := os.Stat(filepath.Join(dir, "needs-nvcc")); err == nil {
				exact = requireNVCC(t) == goldenNVCC || *update
			}
			tmpl := filepath.Join(dir, "templates")
			if _, err := os.Stat(tmpl); err != nil {
				tmpl = "testdata/templates"
			}
			out := t.TempDir()
			args := append([]string{"--config", filepath.Join(dir, "variants.yaml"), "--out", out, "--templates", tmpl}, caseArgs(t, dir)...)
			var stdout, stderr bytes.Buffer
			err := callRun(t, args, &stdout, &stderr)
			if l := leftovers(t, out); len(l) != 0 {
				t.Errorf("transaction directories left: %v", l)
			}
			wantErrFile := filepath.Join(dir, "want.err")
			if strings.HasPrefix(name, "err_") {
				if err == nil {
					t.Fatalf("run succeeded, want an error")
				}
				if got := snapshot(t, out); len(got) != 0 {
					t.Errorf("a failed run wrote %v", keys(got))
				}
				if strings.HasPrefix(name, "err_usage") {
					if exitCode(err) != 2 {
						t.Errorf("exit code %d, want 2 for a usage error", exitCode(err))
					}
				} else if exitCode(err) != 1 {
					t.Errorf("exit code %d, want 1", exitCode(err))
				}
				msg := err.Error()
				if strings.Contains(msg, out) {
					t.Errorf("the message names the temporary output dir: %s", msg)
				}
				if !strings.HasPrefix(name, "err_usage") && !strings.HasPrefix(name, "err_nvcc") &&
					!regexp.MustCompile(`^testdata/cases/`+name+`/variants\.yaml:\d+:\d+: `).MatchString(msg) {
					t.Errorf("the message does not start with file:line:col: %s", msg)
				}
				if exact {
					golden(t, wantErrFile, []byte(msg+"\n"))
				}
				return
			}
			if err != nil {
				t.Fatalf("run: %v\nstderr: %s", err, stderr.String())
			}
			if _, err := os.Stat(filepath.Join(dir, "want.stdout")); err == nil || *update && strings.Contains(name, "explain") {
				golden(t, filepath.Join(dir, "want.stdout"), stdout.Bytes())
			}
			if strings.Contains(name, "explain") {
				if got := snapshot(t, out); len(got) != 0 {
					t.Errorf("--explain wrote %v", keys(got))
				}
			} else if exact {
				goldenTree(t, filepath.Join(dir, "want"), out)
			} else {
				t.Logf("nvcc is not %s: compared no bytes", goldenNVCC)
			}
		})
	}
}

// callRun runs the command in-process and turns a panic into a test failure.
func callRun(t *testing.T, args []string, stdout, stderr *bytes.Buffer) (err error) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("run panicked: %v", r)
		}
	}()
	return Run(args, stdout, stderr)
}

func golden(t *testing.T, file string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(file, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/gen -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s mismatch\n got: %s\nwant: %s", file, got, want)
	}
}

func goldenTree(t *testing.T, wantDir, gotDir string) {
	t.Helper()
	got := snapshot(t, gotDir)
	if *update {
		os.RemoveAll(wantDir)
		for k, b := range got {
			p := filepath.Join(wantDir, filepath.FromSlash(k))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	want := snapshot(t, wantDir)
	if len(want) == 0 {
		t.Fatalf("no golden files in %s (run go test ./internal/gen -update)", wantDir)
	}
	if g, w := strings.Join(keys(got), " "), strings.Join(keys(want), " "); g != w {
		t.Fatalf("files differ\n got: %s\nwant: %s", g, w)
	}
	for _, k := range keys(want) {
		if !bytes.Equal(got[k], want[k]) {
			t.Errorf("%s differs from %s", k, filepath.Join(wantDir, k))
		}
	}
}

// TestCompileErrorShowsSource checks the nvcc failure message in detail: the variant, nvcc's own
// line and the generated source around it.
func TestCompileErrorShowsSource(t *testing.T) {
	requireNVCC(t)
	dir := "testdata/cases/err_nvcc"
	out := t.TempDir()
	err := Run([]string{"--config", dir + "/variants.yaml", "--out", out, "--templates", dir + "/templates"}, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil {
		t.Fatal("want an error")
	}
	msg := err.Error()
	for _, want := range []string{
		"variant tiny_16_u1 (family tiny, template tiny.cu.tmpl): nvcc failed",
		`tiny_16_u1.cu(7): error: identifier "undefined_name" is undefined`,
		"tiny_16_u1.cu:7:\n      5 | {\n      6 |     // tile 16\n>     7 |     float acc = undefined_name * 16;",
		">     8 |     int y = ;",
		"variant tiny_8_u4 (family tiny",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
}

func TestSourceContext(t *testing.T) {
	code := []byte("l1\nl2\nl3\nl4\nl5\nl6\n")
	out := "k.cu(2): error: bad\nother.cu(4): error: not ours\nk.cu:5:3: error: host\nk.cu(99): error: past the end\n"
	got := sourceContext(out, "k.cu", code)
	for _, w := range []string{"k.cu:2:\n      1 | l1\n>     2 | l2\n      3 | l3\n      4 | l4", "k.cu:5:\n      3 | l3\n      4 | l4\n>     5 | l5\n      6 | l6"} {
		if !strings.Contains(got, w) {
			t.Errorf("context lacks %q:\n%s", w, got)
		}
	}
	if strings.Contains(got, "99") || strings.Contains(got, "other.cu") {
		t.Errorf("context names lines it should not:\n%s", got)
	}
}

func TestFuncMap(t *testing.T) {
	div := funcMap["div"].(func(int, int) (int, error))
	if _, err := div(1, 0); err == nil {
		t.Error("div by zero: want an error")
	}
	log2 := funcMap["log2"].(func(int) (int, error))
	if n, err := log2(64); err != nil || n != 6 {
		t.Errorf("log2(64) = %d, %v", n, err)
	}
	for _, bad := range []int{0, -4, 48} {
		if _, err := log2(bad); err == nil {
			t.Errorf("log2(%d): want an error", bad)
		}
	}
	seq := funcMap["seq"].(func(int) ([]int, error))
	if s, err := seq(3); err != nil || len(s) != 3 || s[2] != 2 {
		t.Errorf("seq(3) = %v, %v", s, err)
	}
}

// TestExitCodes runs gen as a process: usage errors exit 2 with a hint, input errors exit 1 with
// one "gen: file:line:col:" line.
func TestExitCodes(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--bogus"}, 2, "gen: unknown flag: --bogus\nrun 'gen --help' for usage\n"},
		{[]string{"--config", "testdata/cases/err_unknown_key/variants.yaml", "--out", t.TempDir()}, 1,
			"gen: testdata/cases/err_unknown_key/variants.yaml:5:5: family tiny: unknown key \"tmplate\""},
		{[]string{"--config", "testdata/good.yaml", "--explain"}, 0, ""},
	} {
		code, _, stderr := runGen(t, nil, c.args...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("gen %v: exit %d, stderr %q; want exit %d and %q", c.args, code, stderr, c.code, c.want)
		}
	}
}

// TestNoCompileNeedsNoNVCC: --no-compile must work with no toolchain at all.
func TestNoCompileNeedsNoNVCC(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	t.Setenv("NVCC", "")
	out := t.TempDir()
	if err := Run([]string{"--config", "testdata/good.yaml", "--templates", "testdata/templates", "--out", out, "--no-compile"}, &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	err := Run([]string{"--config", "testdata/good.yaml", "--templates", "testdata/templates", "--out", t.TempDir(), "--nvcc", "/nonexistent/nvcc"}, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/nvcc") {
		t.Errorf("missing --nvcc: got %v", err)
	}
	err = Run([]string{"--config", "testdata/good.yaml", "--templates", "testdata/templates", "--out", t.TempDir()}, &bytes.Buffer{}, &bytes.Buffer{})
	if !errors.Is(err, errNoNVCC) || strings.Contains(err.Error(), "\n") ||
		!strings.Contains(err.Error(), "scripts/install-cuda.sh") || !strings.Contains(err.Error(), "--no-compile") {
		t.Errorf("no nvcc anywhere: got %v", err)
	}
}

// TestRewriteOnlyChanged: a second run writes nothing, keeps files the generator does not own,
// removes the outputs of variants that no longer exist, and a failing run changes nothing.
func TestRewriteOnlyChanged(t *testing.T) {
	out := t.TempDir()
	gen := func(cfg string) error {
		return Run([]string{"--config", cfg, "--templates", "testdata/templates", "--out", out, "--no-compile"}, &bytes.Buffer{}, &bytes.Buffer{})
	}
	if err := gen(goodVariant(t, "8, 16, 32")); err != nil {
		t.Fatal(err)
	}
	keep := filepath.Join(out, "doc.go")
	if err := os.WriteFile(keep, []byte("package generated\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(out, "cuda", "tiny_32_u1.cu")
	if _, err := os.Stat(stale); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	unchanged := filepath.Join(out, "cuda", "tiny_8_u1.cu")
	if err := os.Chtimes(unchanged, old, old); err != nil {
		t.Fatal(err)
	}
	if err := gen("testdata/good.yaml"); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(unchanged); err != nil || !st.ModTime().Equal(old) {
		t.Errorf("%s rewritten although unchanged (%v)", unchanged, err)
	}
	if _, err := os.Stat(stale); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("stale %s not removed: %v", stale, err)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("doc.go removed: %v", err)
	}
	manifest := filepath.Join(out, "manifest.json")
	if err := os.Chtimes(manifest, old, old); err != nil {
		t.Fatal(err)
	}
	var so bytes.Buffer
	if err := Run([]string{"--config", "testdata/good.yaml", "--templates", "testdata/templates", "--out", out, "--no-compile"}, &so, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(so.String(), " 0 files written, 6 unchanged, 0 removed") {
		t.Errorf("second identical run: %s", so.String())
	}
	if st, err := os.Stat(manifest); err != nil || !st.ModTime().Equal(old) {
		t.Errorf("manifest.json rewritten although unchanged (%v)", err)
	}
	before := snapshot(t, out)
	if err := gen("testdata/cases/err_tile_zero/variants.yaml"); err == nil {
		t.Fatal("want an error")
	}
	sameTree(t, "after a failed run", snapshot(t, out), before)
}

// TestReuse: a second compile reuses every PTX; a changed PTX on disk is recompiled.
func TestReuse(t *testing.T) {
	requireNVCC(t)
	out := t.TempDir()
	args := []string{"--config", "testdata/good.yaml", "--templates", "testdata/templates", "--out", out}
	var so bytes.Buffer
	if err := Run(args, &so, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	first := snapshot(t, out)
	if err := os.WriteFile(filepath.Join(out, "ptx", "tiny_8_u1.ptx"), []byte("tampered"), 0o644); err != nil {
		t.Fatal(err)
	}
	so.Reset()
	if err := Run(args, &so, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(so.String(), "3 PTX reused; 1 files written") {
		t.Errorf("summary %q: want 3 reused and only the tampered file rewritten", so.String())
	}
	second := snapshot(t, out)
	for k, b := range first {
		if !bytes.Equal(second[k], b) {
			t.Errorf("%s differs after regeneration (non-deterministic output?)", k)
		}
	}
}

// FuzzLoad feeds arbitrary bytes to the loader and the expansion: they may reject the input, but
// must not panic, and every rejection must name a place in the file.
func FuzzLoad(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/cases/*/variants.yaml")
	seeds = append(seeds, "testdata/good.yaml", "../../variants.yaml")
	for _, s := range seeds {
		if b, err := os.ReadFile(s); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("families:\n  - name: a\n    template: a.cu.tmpl\n    params: {X: [1]}\n    geometry: {block_x: 1, block_y: 1, tile_rows: 1, tile_cols: 1}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := LoadConfig("fuzz.yaml", data)
		if err == nil {
			_, err = Expand(cfg)
		}
		if err != nil {
			var ie *InputError
			if !errors.As(err, &ie) || ie.Pos.File != "fuzz.yaml" || ie.Pos.Line < 1 {
				t.Fatalf("error without a place: %v", err)
			}
		}
	})
}
