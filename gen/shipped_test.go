package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"tilegen/internal/variant"
)

// seedFamilies must compile without register spills at sm_90: they are the baseline every other
// family is compared against, and a spill there would make the comparison meaningless.
var seedFamilies = []string{"naive", "coalesced", "shared", "micro1d", "coarse"}

var shipped struct {
	once sync.Once
	dir  string
	err  error
}

// generateShipped compiles the repository's variants.yaml with the embedded templates into a fresh
// directory, once per test binary (both tests below read it).
func generateShipped(t *testing.T) string {
	t.Helper()
	requireNVCC(t)
	shipped.once.Do(func() {
		shipped.dir, shipped.err = os.MkdirTemp("", "tilegen-shipped-")
		if shipped.err != nil {
			return
		}
		shipped.err = run([]string{"--config", "../variants.yaml", "--out", shipped.dir}, &bytes.Buffer{}, &bytes.Buffer{})
	})
	if shipped.err != nil {
		t.Fatalf("generating variants.yaml: %v", shipped.err)
	}
	return shipped.dir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shipped.dir != "" {
		os.RemoveAll(shipped.dir)
	}
	os.Exit(code)
}

// TestShippedNoSpills compiles every variant of variants.yaml and checks the seed families.
func TestShippedNoSpills(t *testing.T) {
	dir := generateShipped(t)
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m variant.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, v := range m.Variants {
		if v.PTXHash == "" || v.Resources.Registers == 0 {
			t.Errorf("%s: no PTX or no ptxas report", v.Name)
		}
		if !contains(seedFamilies, v.Family) {
			continue
		}
		seen[v.Family]++
		r := v.Resources
		if r.SpillStores != 0 || r.SpillLoads != 0 {
			t.Errorf("%s (%s): %d bytes spill stores, %d bytes spill loads at %s", v.Name, v.ParamString(), r.SpillStores, r.SpillLoads, m.Arch)
		}
	}
	for _, f := range seedFamilies {
		if seen[f] == 0 {
			t.Errorf("seed family %s has no variant in variants.yaml", f)
		}
	}
}

// TestGeneratedUpToDate is the stale check: generated/ must be byte-for-byte what the generator
// makes from variants.yaml and templates/ now. Run `make generate` when it fails.
func TestGeneratedUpToDate(t *testing.T) {
	fresh := snapshot(t, generateShipped(t))
	committed := snapshot(t, "../generated")
	for k := range committed {
		if !isOwned(k) {
			delete(committed, k) // doc.go and anything else hand-written
		}
	}
	var stale []string
	for _, k := range keys(fresh) {
		if !bytes.Equal(fresh[k], committed[k]) {
			stale = append(stale, k)
		}
	}
	for _, k := range keys(committed) {
		if _, ok := fresh[k]; !ok {
			stale = append(stale, k+" (no longer generated)")
		}
	}
	if len(stale) > 0 {
		if len(stale) > 10 {
			stale = append(stale[:10], "...")
		}
		t.Errorf("generated/ is stale (run `make generate`): %s", strings.Join(stale, ", "))
	}
}

// isOwned reports whether a path under --out is one the generator writes.
func isOwned(rel string) bool {
	if rel == "manifest.json" || rel == "registry.go" {
		return true
	}
	dir, file, ok := strings.Cut(rel, "/")
	ext, owned := ownedDirs[dir]
	return ok && owned && !strings.Contains(file, "/") && strings.HasSuffix(file, ext)
}
