package gen

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestForeignFilesSurvive: gen removes only files its previous manifest lists. Foreign files
// beside its outputs (in cuda/, ptx/, support/, at the top, in a folder of their own, a symbolic
// link) survive every run, compiled or not, while outputs of removed variants go.
func TestForeignFilesSurvive(t *testing.T) {
	nvcc := fakeNVCC(t)
	out := filepath.Join(t.TempDir(), "out")
	mustGen(t, genArgs(goodVariant(t, "8, 16, 32"), out, nvcc)...)
	foreign := map[string]string{
		"cuda/mine.cu":       "// hand-written",
		"ptx/mine.ptx":       "// hand-written",
		"support/mine.ptx":   "// hand-written",
		"doc.go":             "package generated\n",
		"notes/deep/x.cu":    "x",
		"ptx/tiny_8_u1.ptx~": "editor backup",
	}
	for rel, s := range foreign {
		writeFile(t, filepath.Join(out, rel), s)
	}
	if err := os.Symlink("doc.go", filepath.Join(out, "link.go")); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		genArgs("testdata/good.yaml", out, nvcc),
		genArgs(goodVariant(t, "8"), out, nvcc, "--no-compile"),
		genArgs("testdata/good.yaml", out, nvcc),
	} {
		mustGen(t, args...)
		got := snapshot(t, out)
		for rel, s := range foreign {
			if string(got[rel]) != s {
				t.Errorf("gen %v: foreign %s lost or changed: %q", args, rel, got[rel])
			}
		}
		if target, err := os.Readlink(filepath.Join(out, "link.go")); err != nil || target != "doc.go" {
			t.Errorf("gen %v: symbolic link link.go: %q, %v", args, target, err)
		}
		gones := []string{"cuda/tiny_32_u1.cu", "ptx/tiny_32_u1.ptx"}
		if args[len(args)-1] == "--no-compile" {
			gones = append(gones, "ptx/tiny_8_u1.ptx") // the PTX of an earlier compiled run
		}
		for _, gone := range gones {
			if _, ok := got[gone]; ok {
				t.Errorf("gen %v: %s of a removed variant is still there", args, gone)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(out, "ptx", "tiny_16_u4.ptx")); err != nil {
		t.Errorf("the last compiled run did not write its PTX: %v", err)
	}
	if l := leftovers(t, out); len(l) != 0 {
		t.Errorf("transaction directories left: %v", l)
	}
}

// TestManifestListsOwnedFiles: the manifest lists exactly the files gen wrote, itself included.
func TestManifestListsOwnedFiles(t *testing.T) {
	out := t.TempDir()
	mustGen(t, genArgs("testdata/good.yaml", out, fakeNVCC(t))...)
	b, err := os.ReadFile(filepath.Join(out, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m manifestFile
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(m.Files, " "), strings.Join(keys(snapshot(t, out)), " "); got != want {
		t.Errorf("manifest files:\n got: %s\nwant: %s", got, want)
	}
}

// TestOverwriteForeignRefused: a file gen would write but never wrote (not in the manifest) is not
// overwritten; the run fails naming it and changes nothing.
func TestOverwriteForeignRefused(t *testing.T) {
	nvcc := fakeNVCC(t)
	out := t.TempDir()
	mustGen(t, genArgs(goodVariant(t, "8"), out, nvcc)...)
	writeFile(t, filepath.Join(out, "cuda", "tiny_16_u1.cu"), "// someone's own kernel")
	before := snapshot(t, out)
	err := Run(genArgs("testdata/good.yaml", out, nvcc), new(strings.Builder), new(strings.Builder))
	if err == nil || !strings.Contains(err.Error(), "cuda/tiny_16_u1.cu") || !strings.Contains(err.Error(), "not listed in") {
		t.Fatalf("got %v, want a refusal naming cuda/tiny_16_u1.cu", err)
	}
	sameTree(t, "after the refusal", snapshot(t, out), before)
}

// TestLegacyManifest: a manifest written before the file list owns its variants' files; their
// removal still works and foreign files survive.
func TestLegacyManifest(t *testing.T) {
	nvcc := fakeNVCC(t)
	out := t.TempDir()
	mustGen(t, genArgs("testdata/good.yaml", out, nvcc)...)
	p := filepath.Join(out, "manifest.json")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "files")
	if b, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	writeFile(t, p, string(b))
	writeFile(t, filepath.Join(out, "ptx", "foreign.ptx"), "x")
	mustGen(t, genArgs(goodVariant(t, "8"), out, nvcc)...)
	got := snapshot(t, out)
	if _, ok := got["ptx/tiny_16_u1.ptx"]; ok {
		t.Error("ptx/tiny_16_u1.ptx of a removed variant survived a legacy manifest")
	}
	if string(got["ptx/foreign.ptx"]) != "x" {
		t.Error("ptx/foreign.ptx lost")
	}
}

// TestCorruptManifestRefused: with an unreadable manifest gen cannot tell its files from others'.
func TestCorruptManifestRefused(t *testing.T) {
	out := t.TempDir()
	writeFile(t, filepath.Join(out, "manifest.json"), "<<<<<<< HEAD\n")
	writeFile(t, filepath.Join(out, "cuda", "x.cu"), "x")
	before := snapshot(t, out)
	err := Run(genArgs("testdata/good.yaml", out, fakeNVCC(t)), new(strings.Builder), new(strings.Builder))
	if err == nil || !strings.Contains(err.Error(), "is not a manifest gen wrote") {
		t.Fatalf("got %v", err)
	}
	sameTree(t, "after the refusal", snapshot(t, out), before)
}

// TestSymlinkedOutDirRefused: out/cuda (ptx, support) as a symbolic link is refused before any
// work, and the files it points to are untouched.
func TestSymlinkedOutDirRefused(t *testing.T) {
	for _, d := range ownedDirs {
		t.Run(d, func(t *testing.T) {
			out, elsewhere := t.TempDir(), t.TempDir()
			writeFile(t, filepath.Join(elsewhere, "precious.cu"), "keep me")
			writeFile(t, filepath.Join(elsewhere, "precious.ptx"), "keep me")
			if err := os.Symlink(elsewhere, filepath.Join(out, d)); err != nil {
				t.Fatal(err)
			}
			for _, extra := range [][]string{nil, {"--no-compile"}} {
				err := Run(genArgs("testdata/good.yaml", out, fakeNVCC(t), extra...), new(strings.Builder), new(strings.Builder))
				if err == nil || !strings.Contains(err.Error(), "is a symbolic link") || !strings.Contains(err.Error(), d) {
					t.Errorf("%v: got %v, want a refusal of the link %s", extra, err, d)
				}
			}
			if got := snapshot(t, elsewhere); len(got) != 2 {
				t.Errorf("the link target lost files: %v", keys(got))
			}
		})
	}
}

// TestOutItselfSymlinked: --out may be a link to a directory; the directory is updated, the link
// stays.
func TestOutItselfSymlinked(t *testing.T) {
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "out")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	mustGen(t, genArgs("testdata/good.yaml", link, fakeNVCC(t))...)
	if st, err := os.Lstat(link); err != nil || st.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("--out link replaced: %v", err)
	}
	if _, err := os.Stat(filepath.Join(real, "manifest.json")); err != nil {
		t.Error(err)
	}
}

// TestLeftoversRemoved: the next run removes transaction directories nobody holds, keeps a live
// run's, and puts back an --out that a run killed mid-fallback left in old/.
func TestLeftoversRemoved(t *testing.T) {
	parent := t.TempDir()
	out := filepath.Join(parent, "out")
	dead := filepath.Join(parent, ".out"+txMarker+"dead")
	writeFile(t, filepath.Join(dead, "new", "cuda", "x.cu"), "half-staged")
	live := filepath.Join(parent, ".out"+txMarker+"live")
	writeFile(t, filepath.Join(live, "new", "x"), "")
	release, err := lockDir(live)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	mustGen(t, genArgs("testdata/good.yaml", out, fakeNVCC(t), "--no-compile")...)
	if _, err := os.Stat(dead); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("abandoned %s not removed: %v", dead, err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("a live run's %s removed: %v", live, err)
	}

	// Killed between the two renames of the fallback commit: out is missing, old/ holds it.
	before := snapshot(t, out)
	crashed := filepath.Join(parent, ".out"+txMarker+"crashed")
	if err := os.MkdirAll(crashed, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(out, filepath.Join(crashed, "old")); err != nil {
		t.Fatal(err)
	}
	if err := cleanLeftovers(out); err != nil {
		t.Fatal(err)
	}
	sameTree(t, "restored --out", snapshot(t, out), before)
	if _, err := os.Stat(crashed); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s not removed: %v", crashed, err)
	}
}

// TestOutNotADirectory: an --out that is a file is refused, not swapped for a directory.
func TestOutNotADirectory(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	writeFile(t, out, "a file")
	err := Run(genArgs("testdata/good.yaml", out, fakeNVCC(t), "--no-compile"), new(strings.Builder), new(strings.Builder))
	if err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Fatalf("got %v", err)
	}
	if b, err := os.ReadFile(out); err != nil || string(b) != "a file" {
		t.Errorf("--out file changed: %q, %v", b, err)
	}
}
