package results

import (
	"testing"

	"tilegen/internal/protocol"
	"tilegen/internal/variant"
)

func TestShapeStringWithOps(t *testing.T) {
	for s, want := range map[string]protocol.Shape{
		"4096x4096x4096":    {M: 4096, N: 4096, K: 4096},
		"4096x4096x4096:NN": {M: 4096, N: 4096, K: 4096},
		"1x2x3:tn":          {M: 1, N: 2, K: 3, Op: variant.OpTN},
		"5x6x7:TT":          {M: 5, N: 6, K: 7, Op: variant.OpTT},
	} {
		got, err := ParseShape(s)
		if err != nil || got != want {
			t.Errorf("ParseShape(%q) = %+v, %v; want %+v", s, got, err, want)
		}
		if back, _ := ParseShape(ShapeString(got)); back != got {
			t.Errorf("%q does not round-trip: %q", s, ShapeString(got))
		}
	}
	if ShapeString(protocol.Shape{M: 1, N: 2, K: 3}) != "1x2x3" || ShapeString(protocol.Shape{M: 1, N: 2, K: 3, Op: variant.OpNT}) != "1x2x3:NT" {
		t.Error("ShapeString: NN must read as before ops existed, others with :OP")
	}
	for _, bad := range []string{"1x2x3:XY", "1x2:NT", "1x2x3:", "1x2x3:NT:NT"} {
		if _, err := ParseShape(bad); err == nil {
			t.Errorf("ParseShape(%q) accepted", bad)
		}
	}
	sh, _ := ParseShapes("1x1x1,2x2x2")
	got := WithOps(sh, []variant.Op{variant.OpNN, variant.OpTT})
	want := []protocol.Shape{{M: 1, N: 1, K: 1}, {M: 1, N: 1, K: 1, Op: variant.OpTT}, {M: 2, N: 2, K: 2}, {M: 2, N: 2, K: 2, Op: variant.OpTT}}
	if len(got) != len(want) {
		t.Fatalf("WithOps = %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("WithOps[%d] = %+v, want %+v", i, got[i], want[i])
		}
	}
}
