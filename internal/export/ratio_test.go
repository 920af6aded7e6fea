package export

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"tilegen/internal/results"
)

// TestRatioConvention: every ratio the export writes or prints is cuBLAS time / tilegen time
// (above 1: faster than cuBLAS), as in bench and the reports, under the name "ratio"; a variant's
// worst ratio is its smallest. At 224x256x192 the fixture's winner (0.0108 ms) beat cuBLAS
// (0.0137 ms).
func TestRatioConvention(t *testing.T) {
	var log bytes.Buffer
	o := fixtureOptions(filepath.Join(t.TempDir(), "tgsgemm"))
	o.Log = &log
	if err := Run(o); err != nil {
		t.Fatal(err)
	}
	raw := mustRead(t, filepath.Join(o.Out, "tg.json"))
	if bytes.Contains(raw, []byte("ratio_to_cublas")) || !bytes.Contains(raw, []byte(`"ratio_definition"`)) {
		t.Error(`the provenance still has "ratio_to_cublas" or lacks "ratio_definition"`)
	}
	var pv Provenance
	if err := json.Unmarshal(raw, &pv); err != nil {
		t.Fatal(err)
	}
	same := func(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Abs(b) }
	faster := false
	files := tree(t, o.Out)
	for _, c := range pv.Dispatch.Classes {
		if want := c.CublasMS / c.MedianMS; !same(c.Ratio, want) {
			t.Errorf("class %s: ratio %g, want cuBLAS/tuned %g", results.ShapeString(c.Shape), c.Ratio, want)
		}
		shape := results.ShapeString(c.Shape)
		if shape == "224x256x192" {
			faster = c.Ratio > 1
		}
		r := fmt.Sprintf("ratio %.2f", c.Ratio)
		for _, name := range []string{"tg.cuh", "dispatch.go"} {
			if !lineHas(files[name], shape, r) {
				t.Errorf("%s: no class line for %s with %q", name, shape, r)
			}
		}
		if !lineHas(log.String(), shape, r) {
			t.Errorf("summary: no line for %s with %q:\n%s", shape, r, log.String())
		}
	}
	if !faster {
		t.Error("224x256x192: the winner that beat cuBLAS does not have a ratio above 1")
	}
	for _, v := range pv.Variants {
		worst := math.Inf(1)
		for _, m := range v.Tuned {
			if want := m.CublasMS / m.MedianMS; !same(m.Ratio, want) {
				t.Errorf("%s at %s: ratio %g, want %g", v.Name, results.ShapeString(m.Shape), m.Ratio, want)
			}
			worst = math.Min(worst, m.Ratio)
		}
		if v.WorstRatio != worst {
			t.Errorf("%s: worst_ratio %g, want the smallest ratio %g", v.Name, v.WorstRatio, worst)
		}
		if v.Default && !strings.Contains(log.String(), fmt.Sprintf("robust default: %s (worst ratio %.2f", v.Name, worst)) {
			t.Errorf("summary does not give the default's worst ratio %.2f:\n%s", worst, log.String())
		}
	}
}

// lineHas says whether some line of text holds all of subs.
func lineHas(text string, subs ...string) bool {
	for _, line := range strings.Split(text, "\n") {
		all := true
		for _, s := range subs {
			all = all && strings.Contains(line, s)
		}
		if all {
			return true
		}
	}
	return false
}
