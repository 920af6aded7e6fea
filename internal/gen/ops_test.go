package gen

import (
	"strings"
	"testing"

	"tilegen/internal/variant"
)

// TestOpsAxis: ops multiplies the matrix, names get the op suffix (NN keeps the plain name), and
// constraints and geometry read OPA and OPB.
func TestOpsAxis(t *testing.T) {
	src := edit(t, baseYAML, "    params:\n", "    ops: [NN, TN, NT]\n    params:\n")
	src = edit(t, src, "        reason: \"block of W*W threads exceeds 1024\"\n",
		"        reason: \"block of W*W threads exceeds 1024\"\n      - expr: \"OPB == 0 || W == 8\"\n        reason: \"NT on 8 only\"\n")
	src = edit(t, src, "      shared_bytes: 0\n", "      shared_bytes: \"OPA * 4 + OPB * 8\"\n")
	exp, err := loadAndExpand(src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]variant.Op{}
	for _, p := range exp.Variants {
		got[p.V.Name] = p.V.Op
	}
	want := map[string]variant.Op{
		"tiny_8_u1": variant.OpNN, "tiny_8_u4": variant.OpNN, "tiny_16_u1": variant.OpNN, "tiny_16_u4": variant.OpNN,
		"tiny_8_u1_tn": variant.OpTN, "tiny_8_u4_tn": variant.OpTN, "tiny_16_u1_tn": variant.OpTN, "tiny_16_u4_tn": variant.OpTN,
		"tiny_8_u1_nt": variant.OpNT, "tiny_8_u4_nt": variant.OpNT,
	}
	if len(got) != len(want) {
		t.Errorf("variants %v, want %v", got, want)
	}
	for n, op := range want {
		if g, ok := got[n]; !ok || g != op {
			t.Errorf("%s: op %q (present %v), want %q", n, g, ok, op)
		}
	}
	nt := 0
	for _, p := range exp.Pruned {
		if p.Reason == "NT on 8 only" {
			nt++
			if !strings.HasSuffix(p.Name, "_nt") {
				t.Errorf("pruned %s for NT", p.Name)
			}
		}
	}
	if nt != 2 {
		t.Errorf("%d combinations pruned for NT, want 2 (W=16 × U)", nt)
	}
}

// TestBatchedAxis: batched: [false, true] doubles the matrix, batched variants end in _sb, and
// BATCHED reaches the expressions.
func TestBatchedAxis(t *testing.T) {
	src := edit(t, baseYAML, "    params:\n", "    ops: [NN, TT]\n    batched: [false, true]\n    params:\n")
	src = edit(t, src, "        reason: \"block of W*W threads exceeds 1024\"\n",
		"        reason: \"block of W*W threads exceeds 1024\"\n      - expr: \"BATCHED == 0 || U == 1\"\n        reason: \"batched with U=1 only\"\n")
	exp, err := loadAndExpand(src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, p := range exp.Variants {
		got[p.V.Name] = true
		if p.V.Batched != strings.HasSuffix(p.V.Name, "_sb") {
			t.Errorf("%s: batched %v", p.V.Name, p.V.Batched)
		}
	}
	for _, want := range []string{"tiny_8_u1", "tiny_8_u4", "tiny_8_u1_sb", "tiny_16_u1_tt_sb", "tiny_16_u4_tt"} {
		if !got[want] {
			t.Errorf("no variant %s in %v", want, got)
		}
	}
	if got["tiny_8_u4_sb"] || len(got) != 12 {
		t.Errorf("variants %v: want 2 W × (2 U unbatched + 1 U batched) × 2 ops", got)
	}
	for _, c := range []struct{ old, new, want string }{
		{"    params:\n", "    batched: [true, true]\n    params:\n", "duplicate value true"},
		{"    params:\n", "    batched: [1]\n    params:\n", "expected true or false"},
		{"      U: [1, 4]\n", "      U: [1, 4]\n      BATCHED: [0]\n    batched: [true]\n", "the name is the batch axis's"},
	} {
		if _, err := loadAndExpand(edit(t, baseYAML, c.old, c.new), 0); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.new, err, c.want)
		}
	}
}

// TestOpsErrors: ops must be a list of distinct upper-case ops, and a family with ops cannot have a
// parameter named OPA or OPB; expressions of a family without ops cannot read them.
func TestOpsErrors(t *testing.T) {
	for _, c := range []struct{ old, new, want string }{
		{"    params:\n", "    ops: [NN, XT]\n    params:\n", `"XT" is not an op`},
		{"    params:\n", "    ops: [nt]\n    params:\n", `"nt" is not an op`},
		{"    params:\n", "    ops: [NN, NN]\n    params:\n", "duplicate op NN"},
		{"    params:\n", "    ops: []\n    params:\n", "expected a list of NN, NT, TN, TT"},
		{"    params:\n", "    ops: NN\n    params:\n", "expected a list of NN, NT, TN, TT"},
		{"      U: [1, 4]\n", "      U: [1, 4]\n      OPA: [0]\n    ops: [NN, TN]\n", "the name is the op axis's"},
		{"      shared_bytes: 0\n", "      shared_bytes: OPA\n", "OPA"},
	} {
		_, err := loadAndExpand(edit(t, baseYAML, c.old, c.new), 0)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want an error containing %q", c.new, err, c.want)
		}
	}
}
