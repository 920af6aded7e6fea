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
		"5x6x7:TT:b64":      {M: 5, N: 6, K: 7, Op: variant.OpTT, Batch: 64},
		"5x6x7:b1":          {M: 5, N: 6, K: 7, Batch: 1},
		"5x6x7:NN:b3":       {M: 5, N: 6, K: 7, Batch: 3},
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
	if ShapeString(protocol.Shape{M: 1, N: 2, K: 3, Batch: 8}) != "1x2x3:b8" || Flops(protocol.Shape{M: 1, N: 2, K: 3, Batch: 8}) != 96 {
		t.Error("batched shape string or flops")
	}
	for _, bad := range []string{"1x2x3:XY", "1x2:NT", "1x2x3:", "1x2x3:NT:NT", "1x2x3:b0", "1x2x3:b65536", "1x2x3:b2:NT", "1x2x3:bx", "1x2x3:NT:b2:b2"} {
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

// TestShapePrecision: a precision other than FP32 is a :3xtf32 or :tf32 suffix after the op and
// batch; FP32 shapes keep their strings; parsing round-trips.
func TestShapePrecision(t *testing.T) {
	for _, c := range []struct {
		s    protocol.Shape
		want string
	}{
		{protocol.Shape{M: 4096, N: 4096, K: 4096}, "4096x4096x4096"},
		{protocol.Shape{M: 4096, N: 4096, K: 4096, Precision: variant.Precision3xTF32}, "4096x4096x4096:3xtf32"},
		{protocol.Shape{M: 8, N: 9, K: 10, Op: variant.OpTN, Batch: 4, Precision: variant.PrecisionTF32}, "8x9x10:TN:b4:tf32"},
		{protocol.Shape{M: 8, N: 9, K: 10, Batch: 4, Precision: variant.PrecisionTF32}, "8x9x10:b4:tf32"},
	} {
		if got := ShapeString(c.s); got != c.want {
			t.Errorf("ShapeString(%+v) = %q, want %q", c.s, got, c.want)
		}
		back, err := ParseShape(c.want)
		if err != nil || back != c.s {
			t.Errorf("ParseShape(%q) = %+v, %v; want %+v", c.want, back, err, c.s)
		}
	}
	for _, bad := range []string{"8x8x8:fp32", "8x8x8:tf32:NN", "8x8x8:bf16", "8x8x8:tf32:tf32"} {
		if _, err := ParseShape(bad); err == nil {
			t.Errorf("ParseShape(%q): no error", bad)
		}
	}
	got := WithPrecisions([]protocol.Shape{{M: 1, N: 2, K: 3}}, []variant.Precision{variant.PrecisionFP32, variant.PrecisionTF32})
	if len(got) != 2 || got[0].Precision != variant.PrecisionFP32 || got[1].Precision != variant.PrecisionTF32 {
		t.Errorf("WithPrecisions: %+v", got)
	}
}
