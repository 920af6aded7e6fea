package results

import (
	"strings"
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

// TestShapeEpilogue: the :EPILOGUE field after the op and batch, its round trip through
// ShapeString, and the plain strings unchanged.
func TestShapeEpilogue(t *testing.T) {
	for s, want := range map[string]protocol.Shape{
		"4096x4096x1024:bias_relu_col":    {M: 4096, N: 4096, K: 1024, Epilogue: variant.EpiBiasReluCol},
		"8192x1024x4096:TN:bias_gelu_row": {M: 8192, N: 1024, K: 4096, Op: variant.OpTN, Epilogue: variant.EpiBiasGeluRow},
		"64x64x64:none":                   {M: 64, N: 64, K: 64},
		"64x64x64:b3":                     {M: 64, N: 64, K: 64, Batch: 3},
		"64x64x64:bias_row":               {M: 64, N: 64, K: 64, Epilogue: variant.EpiBiasRow},
	} {
		got, err := ParseShape(s)
		if err != nil || got != want {
			t.Errorf("%s: %+v %v, want %+v", s, got, err, want)
			continue
		}
		back := ShapeString(got)
		if again, err := ParseShape(back); err != nil || again != got {
			t.Errorf("%s: round trip %q gives %+v %v", s, back, again, err)
		}
	}
	if s := ShapeString(protocol.Shape{M: 1, N: 2, K: 3}); s != "1x2x3" {
		t.Errorf("plain shape %q", s)
	}
	if s := ShapeString(protocol.Shape{M: 1, N: 2, K: 3, Epilogue: variant.EpiBiasGeluCol}); s != "1x2x3:bias_gelu_col" {
		t.Errorf("epilogue shape %q", s)
	}
	for s, want := range map[string]string{
		"64x64x64:bias_tanh_row":     "want none, bias_row",
		"64x64x64:b3:bias_row":       "a strided batch with an epilogue is not supported",
		"64x64x64:bias_row:NT":       "want MxNxK[:OP][:bBATCH][:EPILOGUE]",
		"64x64x64:bias_row:bias_row": "want MxNxK[:OP][:bBATCH][:EPILOGUE]",
		"64x64x64:bx":                "batch",
	} {
		if _, err := ParseShape(s); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", s, err, want)
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
