package orchestrator

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tilegen/internal/results"
	"tilegen/internal/variant"
)

// A variant named like a support kernel gets its own PTX from a catalog directory, and the workers
// still get the support kernel as their reference (issue 14 §2: modules keyed by kind and name).
func TestCatalogVariantNamedLikeSupport(t *testing.T) {
	dir := t.TempDir()
	m := variant.Manifest{Generator: "test", Arch: "sm_90", Variants: []variant.Variant{{Name: "reference"}, {Name: "peak"}}}
	b, _ := json.Marshal(m)
	files := map[string]string{
		"manifest.json":         string(b),
		"ptx/reference.ptx":     "// variant reference\n",
		"ptx/peak.ptx":          "// variant peak\n",
		"support/reference.ptx": "// support reference\n",
		"support/peak.ptx":      "// support peak\n",
	}
	for name, text := range files {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"reference", "peak"} {
		if p, err := c.PTX(name); err != nil || p != files["ptx/"+name+".ptx"] {
			t.Errorf("variant %s: PTX %q, %v", name, p, err)
		}
		if p, err := c.SupportPTX(name); err != nil || p != files["support/"+name+".ptx"] {
			t.Errorf("support %s: PTX %q, %v", name, p, err)
		}
	}
	args, err := WorkerArgs(c)
	if err != nil || len(args) != 2 {
		t.Fatalf("worker args %v, %v", args, err)
	}
	if ref, _ := os.ReadFile(args[1]); !strings.Contains(string(ref), "support reference") {
		t.Errorf("workers verify against %q, want the support kernel", ref)
	}
}

// Records carry the hashes of what was measured: the manifest's source hash and the hash of the
// PTX the worker was sent, even where the manifest's PTX hash disagrees with the file (export
// compares them with the manifest and refuses a mismatch).
func TestRecordsCarryMeasuredHashes(t *testing.T) {
	cfg, _, _ := testConfig(t, t.TempDir(), "fast_a", "aligned_64")
	cfg.Rank.Rounds = 0
	cat := testCatalog(t)
	for i := range cat.m.Variants {
		if cat.m.Variants[i].Name == "fast_a" {
			cat.m.Variants[i].PTXHash = "stale"
		}
	}
	cfg.Catalog = cat
	if err := Tune(cfg); err != nil {
		t.Fatal(err)
	}
	ptx, _ := cat.PTX("fast_a")
	sum := sha256.Sum256([]byte(ptx))
	n := 0
	for _, r := range readRecords(t, cfg.Out) {
		if r.Kind == results.KindCublas {
			continue
		}
		v, _ := variantNamed(cat, r.Variant)
		want := v.PTXHash
		if r.Status != results.StatusSkipped {
			want = hex.EncodeToString(sum[:])
			if r.Variant != "fast_a" {
				p, _ := cat.PTX(r.Variant)
				s := sha256.Sum256([]byte(p))
				want = hex.EncodeToString(s[:])
			}
		}
		if r.SourceHash != v.SourceHash || r.PTXHash != want || r.SourceHash == "" {
			t.Errorf("%s %s (%s): hashes %q %q, want %q %q", r.Variant, results.ShapeString(r.Shape), r.Status, r.SourceHash, r.PTXHash, v.SourceHash, want)
		}
		n++
	}
	if n != 4 {
		t.Errorf("%d variant records, want 4 (2 variants x 2 shapes, one skipped)", n)
	}
}

func variantNamed(c Catalog, name string) (variant.Variant, bool) {
	for _, v := range c.Variants() {
		if v.Name == name {
			return v, true
		}
	}
	return variant.Variant{}, false
}
