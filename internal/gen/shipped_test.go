package gen

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"tilegen/internal/variant"
	"tilegen/templates"
)

// seedFamilies must compile without register spills at sm_90: they are the baseline every other
// family is compared against, and a spill there would make the comparison meaningless.
var seedFamilies = []string{"naive", "coalesced", "shared", "micro1d", "coarse"}

// shippedRun is the one generation of variants.yaml the tests below share.
type shippedRun struct {
	once sync.Once
	dir  string
	err  error
}

var shipped shippedRun

func (s *shippedRun) cleanup() {
	if s.dir != "" {
		os.RemoveAll(s.dir)
	}
}

// generateShipped compiles the repository's variants.yaml with the embedded templates into a fresh
// directory, once per test binary (both tests below read it). With -short it compiles only
// sampleVariants (one per family, about 10 compiles instead of 364): the spill check and the PTX
// part of the stale check then cover the sample, while TestGeneratedUpToDate still compares every
// rendered source.
func generateShipped(t *testing.T) string {
	t.Helper()
	requireNVCC(t)
	shipped.once.Do(func() {
		shipped.dir, shipped.err = os.MkdirTemp("", "tilegen-shipped-")
		if shipped.err != nil {
			return
		}
		o, err := parseFlags([]string{"--config", "../../variants.yaml", "--out", shipped.dir})
		if err != nil {
			shipped.err = err
			return
		}
		if testing.Short() {
			o.sample = sampleVariants
		}
		shipped.err = runOptions(o, &bytes.Buffer{})
	})
	if shipped.err != nil {
		t.Fatalf("generating variants.yaml: %v", shipped.err)
	}
	return shipped.dir
}

// sampleVariants keeps one variant of every family, the middle one by name: every family and so
// every template, each with parameters from inside its ranges.
func sampleVariants(vs []Planned) []Planned {
	byFamily := map[string][]int{}
	for i, v := range vs {
		byFamily[v.Family.Name] = append(byFamily[v.Family.Name], i)
	}
	var out []Planned
	for i, v := range vs {
		idx := byFamily[v.Family.Name]
		if idx[len(idx)/2] == i {
			out = append(out, v)
		}
	}
	return out
}

// TestShippedNoSpills compiles every variant of variants.yaml (with -short, the sample) and checks
// the seed families.
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
		switch {
		case v.Target != "":
			// Assembled by the GPU's driver (ptx_target): the PTX must name the target.
			ptx, err := os.ReadFile(filepath.Join(dir, "ptx", v.Name+".ptx"))
			if err != nil || v.PTXHash == "" || !strings.Contains(string(ptx), "\n.target "+v.Target+"\n") {
				t.Errorf("%s: no PTX for target %s (%v)", v.Name, v.Target, err)
			}
		case v.PTXHash == "" || v.Resources.Registers == 0:
			t.Errorf("%s: no PTX or no ptxas report", v.Name)
		}
		if v.Seed != contains(seedFamilies, v.Family) {
			t.Errorf("%s: seed %v in variants.yaml, but family %s is %s", v.Name, v.Seed, v.Family,
				map[bool]string{true: "a seed family", false: "not a seed family"}[contains(seedFamilies, v.Family)])
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
// makes from variants.yaml and templates/ now. Run `make generate` when it fails. With -short it
// compares every rendered source, and the PTX, support PTX and manifest entries of the sample.
func TestGeneratedUpToDate(t *testing.T) {
	fresh := snapshot(t, generateShipped(t))
	committed := snapshot(t, "../../generated")
	owned, err := ownedFiles("../../generated", fresh)
	if err != nil {
		t.Fatal(err)
	}
	for k := range committed {
		if !owned[k] {
			delete(committed, k) // doc.go and anything else hand-written
		}
	}
	var stale []string
	if testing.Short() {
		stale = staleSample(t, fresh, committed)
	} else {
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
	}
	if len(stale) > 0 {
		if len(stale) > 10 {
			stale = append(stale[:10], "...")
		}
		t.Errorf("generated/ is stale (run `make generate`): %s", strings.Join(stale, ", "))
	}
}

// staleSample is the -short stale check: every variant's source rendered now against generated/
// (rendering is cheap), the sample's PTX and support PTX, and the sample's manifest entries.
func staleSample(t *testing.T, fresh, committed map[string][]byte) []string {
	t.Helper()
	var stale []string
	var cm, fm manifestFile
	if err := json.Unmarshal(committed["manifest.json"], &cm); err != nil {
		t.Fatalf("generated/manifest.json: %v", err)
	}
	if err := json.Unmarshal(fresh["manifest.json"], &fm); err != nil {
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
	srcs, err := RenderAll(ts, cfg, exp, fm.NVCC, fm.Arch)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, s := range srcs {
		if s.Support {
			continue
		}
		names[s.Name] = true
		if k := "cuda/" + s.Name + ".cu"; !bytes.Equal(s.Code, committed[k]) {
			stale = append(stale, k)
		}
	}
	for _, v := range cm.Variants {
		if !names[v.Name] {
			stale = append(stale, "cuda/"+v.Name+".cu (no longer generated)")
		}
	}
	for _, k := range keys(fresh) {
		if strings.HasPrefix(k, "ptx/") || strings.HasPrefix(k, "support/") {
			if !bytes.Equal(fresh[k], committed[k]) {
				stale = append(stale, k)
			}
		}
	}
	old := map[string]variant.Variant{}
	for _, v := range cm.Variants {
		old[v.Name] = v
	}
	for _, v := range fm.Variants {
		if !reflect.DeepEqual(v, old[v.Name]) {
			stale = append(stale, "manifest.json ("+v.Name+")")
		}
	}
	if cm.NVCC != fm.NVCC || cm.Arch != fm.Arch || cm.Generator != fm.Generator {
		stale = append(stale, "manifest.json (nvcc, arch or generator)")
	}
	return stale
}
