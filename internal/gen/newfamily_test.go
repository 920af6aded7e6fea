package gen

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tilegen/internal/analysis"
	"tilegen/internal/orchestrator"
	"tilegen/internal/variant"
)

// newFamilyYAML is a family added to a copy of variants.yaml: a copy of the shared family's
// template under a new name, with its family-level keys, and nothing else.
const newFamilyYAML = `
  # --- squares: a family added by TestNewFamilyNeedsNoGo.
  - name: squares
    template: squares.cu.tmpl
    traffic_model: tiled
    doc: "copy of the shared family under a new name"
    variant_name: "squares_w{W}_pad{PAD}"
    params:
      W: [16, 32]
      PAD: [0, 1]
    geometry:
      block_x: W
      block_y: W
      tile_rows: W
      tile_cols: W
      shared_bytes: "2 * W * (W + PAD) * 4"
`

// TestNewFamilyNeedsNoGo is the README's promise for "Adding a family": a template file and a
// variants.yaml entry, with no Go change, give a family that is generated, compiled, listed and
// modelled. It works on a temporary copy of variants.yaml and templates/; with -short it generates
// with --no-compile, otherwise it compiles the new family's variants (and only those) with nvcc.
func TestNewFamilyNeedsNoGo(t *testing.T) {
	root := t.TempDir()
	tmpl := filepath.Join(root, "templates")
	if err := os.CopyFS(tmpl, os.DirFS("../../templates")); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join(tmpl, "shared.cu.tmpl"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(tmpl, "squares.cu.tmpl"), string(src))
	yml, err := os.ReadFile("../../variants.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(root, "variants.yaml")
	writeFile(t, cfg, string(yml)+newFamilyYAML)

	out := filepath.Join(root, "generated")
	args := []string{"--config", cfg, "--out", out, "--templates", tmpl}
	compiled := !testing.Short()
	if compiled {
		requireNVCC(t)
	} else {
		args = append(args, "--no-compile")
	}
	o, err := parseFlags(args)
	if err != nil {
		t.Fatal(err)
	}
	// The whole matrix is expanded and checked; only the new family is rendered and compiled.
	o.sample = func(ps []Planned) []Planned {
		var keep []Planned
		for _, p := range ps {
			if p.V.Family == "squares" {
				keep = append(keep, p)
			}
		}
		return keep
	}
	if err := runOptions(o, &bytes.Buffer{}); err != nil {
		t.Fatalf("generating with the new family: %v", err)
	}
	want := []string{"squares_w16_pad0", "squares_w16_pad1", "squares_w32_pad0", "squares_w32_pad1"}

	// Generated (and compiled).
	for _, name := range want {
		if _, err := os.Stat(filepath.Join(out, "cuda", name+".cu")); err != nil {
			t.Errorf("generated: %v", err)
		}
		if _, err := os.Stat(filepath.Join(out, "ptx", name+".ptx")); compiled && err != nil {
			t.Errorf("compiled: %v", err)
		}
	}

	// Listed: what runner list --generated DIR --family squares prints.
	cat, err := orchestrator.LoadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	var list bytes.Buffer
	if err := orchestrator.List(cat, orchestrator.Filter{Families: []string{"squares"}}, &list); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(list.String(), "4 variants") {
		t.Errorf("list: want 4 variants:\n%s", list.String())
	}
	for _, name := range want {
		if !strings.Contains(list.String(), name+" ") {
			t.Errorf("list does not show %s:\n%s", name, list.String())
		}
	}

	// Modelled: the variants carry the YAML's traffic model, and records of the family (which
	// carry only its name) are modelled the same once the catalog is in use.
	var vs []variant.Variant
	for _, v := range cat.Variants() {
		if v.Family == "squares" {
			vs = append(vs, v)
			if got := analysis.ModelOf(&v); got != analysis.ModelTiled {
				t.Errorf("%s: model %q, want %q", v.Name, got, analysis.ModelTiled)
			}
			if compiled && (v.PTXHash == "" || v.Resources.Registers == 0) {
				t.Errorf("%s: no PTX or no ptxas report", v.Name)
			}
		}
	}
	if len(vs) != len(want) {
		t.Fatalf("catalog has %d variants of the new family, want %d", len(vs), len(want))
	}
	analysis.UseCatalog(cat.Variants())
	if got := analysis.Model("squares", 16, 16, 64, 64, 64).Model; got != analysis.ModelTiled {
		t.Errorf("records of the new family: model %q, want %q", got, analysis.ModelTiled)
	}
}
