package gen

import (
	"strings"
	"testing"

	"tilegen/internal/variant"
)

// TestPrecisionAxis: precision multiplies the matrix, fp32 keeps the plain name (and the zero
// value), the others get their label as a suffix; a family without it is FP32 only.
func TestPrecisionAxis(t *testing.T) {
	src := edit(t, baseYAML, "    params:\n", "    precision: [fp32, 3xtf32, tf32]\n    params:\n")
	exp, err := loadAndExpand(src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]variant.Precision{}
	for _, p := range exp.Variants {
		got[p.V.Name] = p.V.Precision
	}
	for _, base := range []string{"tiny_8_u1", "tiny_8_u4", "tiny_16_u1", "tiny_16_u4"} {
		for name, want := range map[string]variant.Precision{base: variant.PrecisionFP32,
			base + "_3xtf32": variant.Precision3xTF32, base + "_tf32": variant.PrecisionTF32} {
			if g, ok := got[name]; !ok || g != want {
				t.Errorf("%s: precision %q (present %v), want %q", name, g, ok, want)
			}
		}
	}
	if len(got) != 12 {
		t.Errorf("%d variants, want 12: %v", len(got), got)
	}
	// One precision as a scalar.
	exp, err = loadAndExpand(edit(t, baseYAML, "    params:\n", "    precision: tf32\n    params:\n"), 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range exp.Variants {
		if p.V.Precision != variant.PrecisionTF32 || !strings.HasSuffix(p.V.Name, "_tf32") {
			t.Errorf("%s: precision %q, want tf32 and the _tf32 suffix", p.V.Name, p.V.Precision)
		}
	}
	// Absent: FP32, names as before.
	exp, err = loadAndExpand(baseYAML, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range exp.Variants {
		if p.V.Precision != variant.PrecisionFP32 || strings.Contains(p.V.Name, "tf32") {
			t.Errorf("%s: precision %q without the axis", p.V.Name, p.V.Precision)
		}
	}
}

// TestPrecisionErrors: precision must name fp32, 3xtf32 or tf32 (lower case), each once.
func TestPrecisionErrors(t *testing.T) {
	for _, c := range []struct{ new, want string }{
		{"    precision: [fp32, bf16]\n    params:\n", `"bf16" is not a precision`},
		{"    precision: [TF32]\n    params:\n", `"TF32" is not a precision`},
		{"    precision: [tf32, tf32]\n    params:\n", "duplicate precision tf32"},
		{"    precision: []\n    params:\n", "expected fp32, 3xtf32, tf32 or a list of them"},
		{"    precision: {a: 1}\n    params:\n", "expected fp32, 3xtf32, tf32 or a list of them"},
	} {
		_, err := loadAndExpand(edit(t, baseYAML, "    params:\n", c.new), 0)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want an error containing %q", c.new, err, c.want)
		}
	}
}
