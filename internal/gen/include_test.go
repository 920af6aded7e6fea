package gen

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"tilegen/templates"
)

// libraryFS is a template FS with a small header library: a.cuh includes b.cuh, which has no final
// newline.
func libraryFS(extra map[string]string) fstest.MapFS {
	fsys := fstest.MapFS{
		"include/tilegen/a.cuh": {Data: []byte("#ifndef A\n#define A\n#include \"tilegen/b.cuh\"\nint a;\n#endif\n")},
		"include/tilegen/b.cuh": {Data: []byte("#ifndef B\n#define B\nint b;\n#endif")},
	}
	for k, v := range extra {
		fsys[k] = &fstest.MapFile{Data: []byte(v)}
	}
	return fsys
}

func TestInlineLibrary(t *testing.T) {
	ts, err := newTemplateSet(libraryFS(nil), "test templates")
	if err != nil {
		t.Fatal(err)
	}
	src := "#include <stdint.h>\n" +
		"#include \"tilegen/a.cuh\"\n" +
		"  # include \"tilegen/b.cuh\" // again: dropped\n" +
		"#include \"other.h\"\n" +
		"// #include \"tilegen/a.cuh\" in a comment stays\n" +
		"#include \"tilegen/a.cuh\"\n" +
		"int main;\n"
	got, err := ts.inlineLibrary([]byte(src), "rendered x.cu.tmpl")
	if err != nil {
		t.Fatal(err)
	}
	want := "#include <stdint.h>\n" +
		"#ifndef A\n#define A\n#ifndef B\n#define B\nint b;\n#endif\nint a;\n#endif\n" +
		"#include \"other.h\"\n" +
		"// #include \"tilegen/a.cuh\" in a comment stays\n" +
		"int main;\n"
	if string(got) != want {
		t.Errorf("inlined:\n%s\nwant:\n%s", got, want)
	}
	// A second source inlines the library again: every generated source is self-contained.
	got, err = ts.inlineLibrary([]byte("#include \"tilegen/b.cuh\"\n"), "rendered y.cu.tmpl")
	if err != nil {
		t.Fatal(err)
	}
	if want := "#ifndef B\n#define B\nint b;\n#endif\n"; string(got) != want {
		t.Errorf("second source: %q, want %q", got, want)
	}
}

func TestInlineLibraryErrors(t *testing.T) {
	ts, err := newTemplateSet(libraryFS(map[string]string{
		"include/tilegen/c.cuh": "#include \"tilegen/missing.cuh\"\n",
	}), "test templates")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ src, want string }{
		{"int x;\n#include \"tilegen/nope.cuh\"\n",
			`rendered x.cu.tmpl line 2: #include "tilegen/nope.cuh": no include/tilegen/nope.cuh in test templates`},
		{"#include \"tilegen/c.cuh\"\n",
			`include/tilegen/c.cuh line 1: #include "tilegen/missing.cuh": no include/tilegen/missing.cuh in test templates`},
		{"#include \"tilegen/../x.cuh\"\n",
			`rendered x.cu.tmpl line 1: #include "tilegen/../x.cuh": a library include is #include "tilegen/NAME.cuh"`},
		{"#include <tilegen/a.cuh>\n",
			`rendered x.cu.tmpl line 1: #include <tilegen/a.cuh>: a library include is #include "tilegen/NAME.cuh"`},
		{"#include \"tilegen/a.h\"\n",
			`rendered x.cu.tmpl line 1: #include "tilegen/a.h": a library include is`},
	} {
		_, err := ts.inlineLibrary([]byte(c.src), "rendered x.cu.tmpl")
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %s...", c.src, err, c.want)
		}
	}
}

// TestLibraryStaysInRoot: a header that is a symbolic link out of --templates is refused, one
// inside it is followed.
func TestLibraryStaysInRoot(t *testing.T) {
	dir := copyTemplates(t)
	writeFile(t, filepath.Join(dir, "tiny.cu.tmpl"), "#include \"tilegen/lib.cuh\"\n"+readFile(t, filepath.Join(dir, "tiny.cu.tmpl")))
	lib := filepath.Join(dir, "include", "tilegen")
	if err := os.MkdirAll(lib, 0o755); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(t.TempDir(), "secret.cuh")
	writeFile(t, secret, "SECRET\n")
	if err := os.Symlink(secret, filepath.Join(lib, "lib.cuh")); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	err := Run([]string{"--config", "testdata/good.yaml", "--templates", dir, "--out", out, "--no-compile"}, new(strings.Builder), new(strings.Builder))
	if err == nil || !strings.Contains(err.Error(), "include/tilegen/lib.cuh") || !strings.Contains(err.Error(), "leads out of the template directory") {
		t.Fatalf("got %v, want a refusal naming include/tilegen/lib.cuh", err)
	}
	if got := snapshot(t, out); len(got) != 0 {
		t.Errorf("wrote %v", keys(got))
	}

	if err := os.Remove(filepath.Join(lib, "lib.cuh")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(lib, "real.cuh"), "// inside\n")
	if err := os.Symlink("real.cuh", filepath.Join(lib, "lib.cuh")); err != nil {
		t.Fatal(err)
	}
	mustGen(t, "--config", "testdata/good.yaml", "--templates", dir, "--out", out, "--no-compile")
	b := readFile(t, filepath.Join(out, "cuda", "tiny_8_u1.cu"))
	if !strings.Contains(b, "// inside\n") || strings.Contains(b, "#include \"tilegen/") {
		t.Errorf("the header is not inlined:\n%s", b)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestLibraryOneUnit puts one variant of every family and of every use of the header library
// (registers or ring, workspace or cluster split-K, sliced-K, the seeds' store) into one
// translation unit, as the export's header does, and compiles it with the host compiler's
// warnings as errors: the include guards must let the inlined library appear once per source.
func TestLibraryOneUnit(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles nine kernels in one unit")
	}
	requireNVCC(t)
	tc, err := FindToolchain(t.Context(), "", "", "sm_90")
	if err != nil {
		t.Fatal(err)
	}
	data, err := readInputFile("../../variants.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadConfig("../../variants.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	exp, err := Expand(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts, err := newTemplateSet(templates.FS, "the embedded templates")
	if err != nil {
		t.Fatal(err)
	}
	srcs, err := RenderAll(ts, cfg, exp, "", "sm_90")
	if err != nil {
		t.Fatal(err)
	}
	// Each case is the first variant (by name) of its family whose parameters match.
	cases := []struct {
		family string
		params map[string]int
	}{
		{"naive", nil}, {"coalesced", nil}, {"shared", nil}, {"micro1d", nil}, {"coarse", map[string]int{"PF": 1}},
		{"regtile", map[string]int{"STAGES": 1}}, {"regtile", map[string]int{"STAGES": 3}},
		{"splitk", map[string]int{"RED": 0}}, {"splitk", map[string]int{"RED": 1}},
		{"cpasync", map[string]int{"SPLIT": 1, "XB": 1}}, {"cpasync", map[string]int{"SPLIT": 2}},
		{"slicedk", nil},
	}
	var unit strings.Builder
	for _, c := range cases {
		var pick *Source
		for i := range srcs {
			s := &srcs[i]
			if s.Support || s.Planned.V.Family != c.family {
				continue
			}
			ok := true
			for k, v := range c.params {
				ok = ok && s.Planned.P[k] == v
			}
			if ok {
				pick = s
				break
			}
		}
		if pick == nil {
			t.Fatalf("no %s variant with %v", c.family, c.params)
		}
		// As the export does: the generator's header lines go, the source stays as it is.
		lines := strings.SplitAfter(string(pick.Code), "\n")
		i := 0
		for i < len(lines) && strings.HasPrefix(lines[i], "//") {
			i++
		}
		unit.WriteString(strings.Join(lines[i:], ""))
		unit.WriteString("\n")
	}
	if n := strings.Count(unit.String(), "#define TILEGEN_PIPELINE_CUH"); n != 7 {
		t.Errorf("the pipeline header appears %d times, want once in each of the 7 regtile-class sources", n)
	}
	dir := t.TempDir()
	cu := filepath.Join(dir, "unit.cu")
	writeFile(t, cu, unit.String())
	args := []string{"-c", "-arch=sm_90", "-Xcompiler", "-Wall,-Werror", "-o", filepath.Join(dir, "unit.o"), cu}
	if tc.CCBin != "" {
		args = append(args, "-ccbin", tc.CCBin)
	}
	if out, err := exec.CommandContext(t.Context(), tc.NVCC, args...).CombinedOutput(); err != nil {
		t.Fatalf("nvcc %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}
