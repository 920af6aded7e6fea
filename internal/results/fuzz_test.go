package results

import (
	"testing"
)

// FuzzParseShape: ParseShape never panics, and a shape it accepts renders (ShapeString) to a string
// that parses back to the same shape.
func FuzzParseShape(f *testing.F) {
	for _, s := range []string{"4096x4096x4096", "512x512x64:TN:b64", "4096x4096x1024:bias_relu_col", "1041x1247x139:3xtf32",
		"1x1x1:TT:b1", "0x1x1", "1x1", "3x3x3:XX", "2x2x2:b0", "2x2x2:b64:bias_row", " 7x8x9 ", "5x5x5:tf32:TN"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sh, err := ParseShape(s)
		if err != nil {
			return
		}
		if sh.M < 1 || sh.N < 1 || sh.K < 1 || sh.Batch < 0 || sh.Batch > MaxBatch {
			t.Fatalf("ParseShape(%q) = %+v", s, sh)
		}
		back, err := ParseShape(ShapeString(sh))
		if err != nil || back != sh {
			t.Fatalf("ParseShape(%q) = %+v renders %q, which parses to %+v, %v", s, sh, ShapeString(sh), back, err)
		}
	})
}

// FuzzDecodeJSONL: DecodeJSONL never panics, and what it decodes encodes and decodes again to as
// many records.
func FuzzDecodeJSONL(f *testing.F) {
	f.Add([]byte(`{"variant":"v","shape":{"m":1,"n":2,"k":3},"status":"ok"}` + "\n\n" + `{"variant":"w"}`))
	f.Add([]byte("{\n"))
	f.Add([]byte(`{"shape":{"m":-1}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		rs, err := DecodeJSONL("fuzz", b)
		if err != nil {
			return
		}
		out, err := EncodeJSONL(rs)
		if err != nil {
			return // values JSON cannot hold (NaN) are refused on the way out, not written
		}
		again, err := DecodeJSONL("again", out)
		if err != nil || len(again) != len(rs) {
			t.Fatalf("%d records encode to %q, which decodes to %d, %v", len(rs), out, len(again), err)
		}
	})
}
