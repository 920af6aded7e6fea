package workload

import (
	"strings"
	"testing"

	"tilegen/internal/protocol"
)

func TestParse(t *testing.T) {
	in := "# corpus\n\n128 3072 768   # BERT-base: FFN up (128 tokens)\n\t1 4096 4096\n128 3072 768 # GPT-2 small\n"
	got, err := Parse("c.txt", strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{
		{protocol.Shape{M: 128, N: 3072, K: 768}, "BERT-base: FFN up (128 tokens)", 3},
		{protocol.Shape{M: 1, N: 4096, K: 4096}, "", 4},
		{protocol.Shape{M: 128, N: 3072, K: 768}, "GPT-2 small", 5},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d entries, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("entry %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if u := Unique(got); len(u) != 2 || u[0].M != 128 || u[1].M != 1 {
		t.Errorf("Unique = %v", u)
	}
	if s := Sources(got)[protocol.Shape{M: 128, N: 3072, K: 768}]; s != "BERT-base: FFN up (128 tokens); GPT-2 small" {
		t.Errorf("Sources = %q", s)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"1 2\n", "f:1:1: want `M N K`, got 2 field(s)"},
		{"# x\n  0 2 3\n", "f:2:3: M = \"0\": want a positive integer"},
		{"1 2 3x\n", "f:1:5: K = \"3x\""},
		{"1 2 3 op=NT\n", "f:1:7: column \"op=NT\" is not supported yet"},
		{"1 2 3 4\n", "f:1:7: unexpected \"4\""},
		{"1 2 99999999999\n", "f:1:5: K = \"99999999999\""},
		{"1 2 3\n4 5\n6 -1 2\n", "f:2:1: want `M N K`"},
		{"# only comments\n\n", "f: no shapes"},
		{"1 2 3 \x01\n", "f:1:7: control character"},
		{strings.Repeat("1", MaxLineBytes+10) + "\n", "f:1:1: line longer than"},
	} {
		_, err := Parse("f", strings.NewReader(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) error = %v, want it to contain %q", tc.in, err, tc.want)
		}
	}
	// All errors at once, in file order.
	_, err := Parse("f", strings.NewReader("1 2\n3 4 5\nx 1 1\n"))
	if err == nil || strings.Count(err.Error(), "\n") != 1 || !strings.HasPrefix(err.Error(), "f:1:1") {
		t.Errorf("want two errors, the first at f:1:1; got %v", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add("128 3072 768 # x\n")
	f.Add("# c\n1 1 1\n")
	f.Fuzz(func(t *testing.T, s string) {
		es, err := Parse("f", strings.NewReader(s))
		if err != nil {
			return
		}
		for _, e := range es {
			if e.Shape.M < 1 || e.Shape.N < 1 || e.Shape.K < 1 {
				t.Fatalf("non-positive shape %+v", e)
			}
		}
	})
}
