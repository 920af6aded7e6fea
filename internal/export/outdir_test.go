package export

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

func TestOverwrite(t *testing.T) {
	out := filepath.Join(t.TempDir(), "x")
	if err := Run(fixtureOptions(out)); err != nil {
		t.Fatal(err)
	}
	if err := Run(fixtureOptions(out)); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Errorf("second export without --force: %v", err)
	}
	o := fixtureOptions(out)
	o.Force = true
	if err := Run(o); err != nil {
		t.Errorf("--force over a previous export: %v", err)
	}
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	o.Out = other
	if err := Run(o); err == nil {
		t.Error("--force replaced a directory that is not an export")
	}
	if b, err := os.ReadFile(filepath.Join(other, "notes.txt")); err != nil || string(b) != "mine" {
		t.Error("the foreign directory was touched")
	}
}

// tree returns every file under dir with its content.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		files[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// editProvenance rewrites the provenance file through f (as a generic JSON object).
func editProvenance(t *testing.T, path string, f func(map[string]any)) {
	t.Helper()
	var pv map[string]any
	if err := json.Unmarshal(mustRead(t, path), &pv); err != nil {
		t.Fatal(err)
	}
	f(pv)
	b, err := json.Marshal(pv)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestForceKeepsForeignFiles replaces a previous export (the regtile fixture's) in a directory that
// also holds the user's files: --force writes the new export, removes the files only the previous
// one wrote (its PTX), and leaves every other file as it was, also when the previous export's
// provenance predates its file list.
func TestForceKeepsForeignFiles(t *testing.T) {
	foreign := map[string]string{"notes.txt": "mine", "sgemm_test.go": "package tgsgemm\n", "ptx/README": "mine too"}
	for _, legacy := range []bool{false, true} {
		out := filepath.Join(t.TempDir(), "tgsgemm")
		if err := Run(regtileOptions(out)); err != nil {
			t.Fatal(err)
		}
		if legacy {
			// As written before the provenance listed its files: with the cgo file of that time.
			editProvenance(t, filepath.Join(out, "tg.json"), func(pv map[string]any) { delete(pv, "files") })
			for _, f := range []string{"driver.go", "driver_unsupported.go", "batched.go", "restate.go"} {
				if err := os.Remove(filepath.Join(out, f)); err != nil {
					t.Fatal(err)
				}
			}
			writeFiles(t, out, map[string]string{"dynshared.go": "package tgsgemm\n"})
		}
		writeFiles(t, out, foreign)
		o := fixtureOptions(out)
		o.Force = true
		if err := Run(o); err != nil {
			t.Fatalf("legacy=%v: %v", legacy, err)
		}
		got := tree(t, out)
		for name, text := range foreign {
			if got[name] != text {
				t.Errorf("legacy=%v: the user's %s was removed or changed by --force", legacy, name)
			}
		}
		var pv Provenance
		if err := json.Unmarshal([]byte(got["tg.json"]), &pv); err != nil {
			t.Fatal(err)
		}
		var want []string
		want = append(want, pv.Files...)
		for name := range foreign {
			want = append(want, name)
		}
		var names []string
		for name := range got {
			names = append(names, name)
		}
		sort.Strings(want)
		sort.Strings(names)
		if strings.Join(names, " ") != strings.Join(want, " ") {
			t.Errorf("legacy=%v: files after --force\n%v\nwant the new export's and the user's\n%v", legacy, names, want)
		}
	}
}

// TestForceRefusesForeignClash: a file the new export would write that the previous export did
// not (a user's driver.go beside an export that predates it), or a provenance that lists a path
// outside the export's names, stops --force before anything changes.
func TestForceRefusesForeignClash(t *testing.T) {
	for _, c := range []struct {
		name  string
		setup func(t *testing.T, out string)
		want  string
	}{
		{"user file in the way", func(t *testing.T, out string) {
			editProvenance(t, filepath.Join(out, "tg.json"), func(pv map[string]any) { delete(pv, "files") })
			for _, f := range []string{"driver.go", "batched.go", "restate.go"} { // files of later exports
				if err := os.Remove(filepath.Join(out, f)); err != nil {
					t.Fatal(err)
				}
			}
			writeFiles(t, out, map[string]string{"driver.go": "package tgsgemm // the user's\n"})
		}, "driver.go exists and was not written by the previous export"},
		{"provenance lists a path outside", func(t *testing.T, out string) {
			editProvenance(t, filepath.Join(out, "tg.json"), func(pv map[string]any) {
				pv["files"] = []string{"../outside.txt", "tg.json"}
			})
		}, `lists "../outside.txt"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "tgsgemm")
			if err := Run(regtileOptions(out)); err != nil {
				t.Fatal(err)
			}
			writeFiles(t, dir, map[string]string{"outside.txt": "keep"})
			c.setup(t, out)
			before := tree(t, dir)
			o := fixtureOptions(out)
			o.Force = true
			if err := Run(o); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want %q", err, c.want)
			}
			after := tree(t, dir)
			if len(after) != len(before) {
				t.Errorf("files changed: %d before, %d after", len(before), len(after))
			}
			for name, text := range before {
				if after[name] != text {
					t.Errorf("%s changed", name)
				}
			}
		})
	}
}
