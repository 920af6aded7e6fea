package variant

import (
	"slices"
	"testing"
)

func TestParsePrecision(t *testing.T) {
	for in, want := range map[string]Precision{"": PrecisionFP32, "fp32": PrecisionFP32, "FP32": PrecisionFP32,
		"3xtf32": Precision3xTF32, " tf32 ": PrecisionTF32} {
		got, err := ParsePrecision(in)
		if err != nil || got != want {
			t.Errorf("ParsePrecision(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"bf16", "tf32x3", "fp64"} {
		if _, err := ParsePrecision(bad); err == nil {
			t.Errorf("ParsePrecision(%q): no error", bad)
		}
	}
	if got, err := ParsePrecisions("all"); err != nil || !slices.Equal(got, Precisions) {
		t.Errorf("all: %v %v", got, err)
	}
	if got, err := ParsePrecisions("tf32,3xtf32,tf32"); err != nil || !slices.Equal(got, []Precision{PrecisionTF32, Precision3xTF32}) {
		t.Errorf("tf32,3xtf32,tf32: %v %v", got, err)
	}
	if _, err := ParsePrecisions("fp32,fp16"); err == nil {
		t.Error("fp32,fp16: no error")
	}
}

func TestPrecisionProperties(t *testing.T) {
	if PrecisionFP32.Label() != "fp32" || Precision3xTF32.Label() != "3xtf32" || PrecisionTF32.Label() != "tf32" {
		t.Error("labels")
	}
	if !PrecisionFP32.FP32Accurate() || !Precision3xTF32.FP32Accurate() || PrecisionTF32.FP32Accurate() {
		t.Error("FP32Accurate: fp32 and 3xtf32 meet the FP32 tolerance, tf32 does not")
	}
	if PrecisionFP32.TensorCore() || !Precision3xTF32.Split3() || PrecisionTF32.Split3() {
		t.Error("TensorCore/Split3")
	}
}
