package workload

import (
	"strings"
	"testing"

	"tilegen/internal/protocol"
	"tilegen/internal/variant"
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

// TestParseColumns: op, batch and epilogue columns, in any order, make the problem they name; a
// byte-order mark at the start of the file is skipped.
func TestParseColumns(t *testing.T) {
	in := "\ufeff4096 4096 1024 op=NT  # x\n512 512 64 batch=64 op=tn\n4096 4096 1024 epilogue=bias_relu_row\n1 2 3 op=NN batch=1\n"
	got, err := Parse("c.txt", strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []protocol.Shape{
		{M: 4096, N: 4096, K: 1024, Op: variant.OpNT},
		{M: 512, N: 512, K: 64, Op: variant.OpTN, Batch: 64},
		{M: 4096, N: 4096, K: 1024, Epilogue: variant.EpiBiasReluRow},
		{M: 1, N: 2, K: 3, Batch: 1},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d entries: %+v", len(got), got)
	}
	for i := range want {
		if got[i].Shape != want[i] {
			t.Errorf("line %d: %+v, want %+v", i+1, got[i].Shape, want[i])
		}
	}
	if got[0].Source != "x" {
		t.Errorf("source %q", got[0].Source)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"1 2\n", "f:1:1: want `M N K`, got 2 field(s)"},
		{"# x\n  0 2 3\n", "f:2:3: M = \"0\": want a positive integer"},
		{"1 2 3x\n", "f:1:5: K = \"3x\""},
		{"1 2 3 op=XY\n", "f:1:7: op \"XY\""},
		{"1 2 3 op=NT op=TN\n", "f:1:13: op given twice"},
		{"1 2 3 batch=0\n", "f:1:7: batch \"0\": want 1 to 65535"},
		{"1 2 3 batch=65536\n", "f:1:7: batch"},
		{"1 2 3 epilogue=bias_tanh\n", "f:1:7: epilogue \"bias_tanh\""},
		{"1 2 3 batch=2 epilogue=bias_row\n", "f:1:7: a strided batch with an epilogue"},
		{"1 2 3 NT\n", "f:1:7: unexpected \"NT\""},
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
