package gen

import (
	"strings"
	"testing"

	"tilegen/internal/variant"
)

// TestEpiloguesAxis: epilogues multiplies the matrix, names get the epilogue suffix (none keeps the
// plain name), EPI reaches the expressions, and the signature gains the bias.
func TestEpiloguesAxis(t *testing.T) {
	src := edit(t, baseYAML, "    params:\n", "    ops: [NN, TN]\n    epilogues: [none, bias_relu_col, bias_gelu_row]\n    params:\n")
	src = edit(t, src, "        reason: \"block of W*W threads exceeds 1024\"\n",
		"        reason: \"block of W*W threads exceeds 1024\"\n      - expr: \"EPI == 0 || U == 1\"\n        reason: \"epilogues with U=1 only\"\n")
	exp, err := loadAndExpand(src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]variant.Epilogue{}
	for _, p := range exp.Variants {
		got[p.V.Name] = p.V.Epilogue
		if sig := variant.SignatureOf(&p.V); (sig == variant.EpilogueSignature) != p.V.Epilogue.HasBias() {
			t.Errorf("%s: signature %q", p.V.Name, sig)
		}
	}
	for name, want := range map[string]variant.Epilogue{
		"tiny_8_u1": variant.EpiNone, "tiny_8_u4": variant.EpiNone, "tiny_8_u1_bias_relu_col": variant.EpiBiasReluCol,
		"tiny_16_u1_bias_gelu_row": variant.EpiBiasGeluRow, "tiny_16_u1_tn_bias_gelu_row": variant.EpiBiasGeluRow,
	} {
		if e, ok := got[name]; !ok || e != want {
			t.Errorf("%s: epilogue %q (present %v), want %q", name, e, ok, want)
		}
	}
	if _, ok := got["tiny_8_u4_bias_relu_col"]; ok || len(got) != 2*2*(2+2) {
		t.Errorf("variants %v: want 2 ops × 2 W × (2 U plain + 2 epilogues with U=1)", got)
	}
}

// TestEpiloguesErrors: epilogues must be a list of distinct lower-case names, a family with
// epilogues cannot have a parameter named EPI nor batched kernels with a bias; expressions of a
// family without epilogues cannot read EPI.
func TestEpiloguesErrors(t *testing.T) {
	for _, c := range []struct{ old, new, want string }{
		{"    params:\n", "    epilogues: [none, bias_tanh_row]\n    params:\n", `"bias_tanh_row" is not an epilogue`},
		{"    params:\n", "    epilogues: [BIAS_ROW]\n    params:\n", `"BIAS_ROW" is not an epilogue`},
		{"    params:\n", "    epilogues: [bias_col, bias_col]\n    params:\n", "duplicate epilogue bias_col"},
		{"    params:\n", "    epilogues: []\n    params:\n", "expected a list of none, bias_row"},
		{"    params:\n", "    epilogues: bias_row\n    params:\n", "expected a list of none, bias_row"},
		{"    params:\n", "    batched: [false, true]\n    epilogues: [none, bias_row]\n    params:\n", "not supported (strided-batched kernels take no bias)"},
		{"      U: [1, 4]\n", "      U: [1, 4]\n      EPI: [0]\n    epilogues: [bias_row]\n", "the name is the epilogue axis's"},
		{"      shared_bytes: 0\n", "      shared_bytes: EPI\n", "EPI"},
	} {
		_, err := loadAndExpand(edit(t, baseYAML, c.old, c.new), 0)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want an error containing %q", c.new, err, c.want)
		}
	}
	// The error names the line and column of the bad entry.
	_, err := loadAndExpand(edit(t, baseYAML, "    params:\n", "    epilogues: [none, bias_tanh_row]\n    params:\n"), 0)
	if err == nil || !strings.Contains(err.Error(), ":") {
		t.Errorf("no position: %v", err)
	}
}
