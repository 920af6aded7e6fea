package gen

import (
	"sort"
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

// TestSplit3Variable: a family that declares precision may read SPLIT3 (1 for 3xtf32) in its
// expressions; a parameter may not take the name then.
func TestSplit3Variable(t *testing.T) {
	src := edit(t, baseYAML, "    params:\n", "    precision: [3xtf32, tf32]\n    params:\n")
	src = edit(t, src, `      - expr: "W * W <= 1024"`, `      - expr: "W * W <= 1024 && (SPLIT3 == 0 || W == 8)"`)
	exp, err := loadAndExpand(src, 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range exp.Variants {
		names = append(names, p.V.Name)
	}
	sort.Strings(names)
	want := "tiny_16_u1_tf32 tiny_16_u4_tf32 tiny_8_u1_3xtf32 tiny_8_u1_tf32 tiny_8_u4_3xtf32 tiny_8_u4_tf32"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("variants %s, want %s", got, want)
	}
	bad := edit(t, src, "      U: [1, 4]\n", "      U: [1, 4]\n      SPLIT3: [0]\n")
	if _, err := loadAndExpand(bad, 0); err == nil || !strings.Contains(err.Error(), "the name is the precision axis's") {
		t.Errorf("a parameter named SPLIT3: got %v", err)
	}
	// Without the precision axis SPLIT3 is an unknown name.
	plain := edit(t, baseYAML, `      - expr: "W * W <= 1024"`, `      - expr: "W * W <= 1024 && SPLIT3 == 0"`)
	if _, err := loadAndExpand(plain, 0); err == nil || !strings.Contains(err.Error(), "SPLIT3") {
		t.Errorf("SPLIT3 without precision: got %v", err)
	}
}

// TestPTXTarget: ptx_target names the arch-specific target every variant of the family carries
// (variant.Target); anything but sm_90a is an error at its position.
func TestPTXTarget(t *testing.T) {
	exp, err := loadAndExpand(edit(t, baseYAML, "    params:\n", "    ptx_target: sm_90a\n    params:\n"), 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range exp.Variants {
		if p.V.Target != "sm_90a" {
			t.Errorf("%s: target %q, want sm_90a", p.V.Name, p.V.Target)
		}
	}
	exp, err = loadAndExpand(baseYAML, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range exp.Variants {
		if p.V.Target != "" {
			t.Errorf("%s: target %q without ptx_target", p.V.Name, p.V.Target)
		}
	}
	for _, c := range []struct{ new, want string }{
		{"    ptx_target: sm_100a\n    params:\n", `f.yaml:6:17: family tiny: ptx_target: unknown PTX target "sm_100a" (allowed: sm_90a)`},
		{"    ptx_target: [sm_90a]\n    params:\n", "ptx_target"},
	} {
		_, err := loadAndExpand(edit(t, baseYAML, "    params:\n", c.new), 0)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want an error containing %q", c.new, err, c.want)
		}
	}
}

// TestRetargetPTX: the .target directive becomes the arch-specific target and .version rises to
// the ISA version it needs (never falls); the rest of the PTX is unchanged; a target that does not
// extend the generator's arch, or PTX without the directives, is an error.
func TestRetargetPTX(t *testing.T) {
	ptx := "//\n// Generated by NVIDIA NVVM Compiler\n\n.version 7.8\n.target sm_90\n.address_size 64\n\n.visible .entry k()\n{\n\tret;\n}\n"
	got, err := retargetPTX([]byte(ptx), "sm_90", "sm_90a")
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(strings.Replace(ptx, ".version 7.8", ".version 8.0", 1), ".target sm_90\n", ".target sm_90a\n", 1)
	if string(got) != want {
		t.Errorf("retargeted PTX:\n%s\nwant:\n%s", got, want)
	}
	newer := strings.Replace(ptx, ".version 7.8", ".version 8.5", 1)
	if got, err := retargetPTX([]byte(newer), "sm_90", "sm_90a"); err != nil || !strings.Contains(string(got), ".version 8.5\n.target sm_90a\n") {
		t.Errorf("a newer ISA version must stay: %v\n%s", err, got)
	}
	for _, c := range []struct{ ptx, arch, target, want string }{
		{ptx, "sm_80", "sm_90a", "ptx_target sm_90a needs --arch sm_90"},
		{ptx, "sm_90", "sm_100a", `unknown PTX target "sm_100a"`},
		{strings.Replace(ptx, ".target sm_90", ".target sm_80", 1), "sm_90", "sm_90a", "the PTX targets sm_80"},
		{strings.Replace(ptx, ".target sm_90\n", "", 1), "sm_90", "sm_90a", "no .version or .target"},
	} {
		if _, err := retargetPTX([]byte(c.ptx), c.arch, c.target); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s -> %s: got %v, want %q", c.arch, c.target, err, c.want)
		}
	}
}
