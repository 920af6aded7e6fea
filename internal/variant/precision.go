package variant

import (
	"fmt"
	"strings"
)

// Precision is the arithmetic a kernel computes C = A·B with (variants.yaml precision, an axis of
// the matrix outside the parameters; issue 18). Every operand and result is FP32 in memory; the
// precision says what the products are computed in, and so how accurate the result is.
//
// The zero value is FP32: the records, keys, names and exports of everything that existed before
// the axis are unchanged.
type Precision string

const (
	// PrecisionFP32 is FP32 arithmetic (FFMA, or whatever is as accurate): the default, and the only
	// precision a run or an export uses unless the user allows another.
	PrecisionFP32 Precision = ""
	// Precision3xTF32 is FP32 accuracy on TF32 tensor cores: each operand is split into a TF32 high
	// part and a TF32 residual and three products are accumulated. It is verified against the FP32
	// tolerance and compared with cuBLAS's SGEMM.
	Precision3xTF32 Precision = "3xtf32"
	// PrecisionTF32 is one TF32 product (10-bit mantissas, FP32 accumulation): its own tolerance
	// (verify.ScalePrecision), compared with cuBLAS in TF32 math mode, never exported as FP32.
	PrecisionTF32 Precision = "tf32"
)

// Precisions lists every precision in the order the documentation gives them.
var Precisions = []Precision{PrecisionFP32, Precision3xTF32, PrecisionTF32}

// Label is the precision's name as written in variants.yaml and on the command line: "fp32" for
// the zero value.
func (p Precision) Label() string {
	if p == PrecisionFP32 {
		return "fp32"
	}
	return string(p)
}

// String is Label.
func (p Precision) String() string { return p.Label() }

// Split3 reports whether the precision is 3xTF32 (three MMAs per product).
func (p Precision) Split3() bool { return p == Precision3xTF32 }

// TensorCore reports whether the precision runs on TF32 tensor cores.
func (p Precision) TensorCore() bool { return p == Precision3xTF32 || p == PrecisionTF32 }

// FP32Accurate reports whether results of this precision meet the FP32 tolerance (fp32, 3xtf32).
func (p Precision) FP32Accurate() bool { return p != PrecisionTF32 }

// Valid reports whether p is one of Precisions.
func (p Precision) Valid() bool {
	for _, q := range Precisions {
		if p == q {
			return true
		}
	}
	return false
}

// ParsePrecision parses fp32, 3xtf32 or tf32 (case-insensitive; "" is fp32).
func ParsePrecision(s string) (Precision, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "fp32":
		return PrecisionFP32, nil
	case "3xtf32":
		return Precision3xTF32, nil
	case "tf32":
		return PrecisionTF32, nil
	}
	return PrecisionFP32, fmt.Errorf("precision %q: want fp32, 3xtf32 or tf32", s)
}

// ParsePrecisions parses a --precision value: one precision, a comma-separated list, or "all".
func ParsePrecisions(s string) ([]Precision, error) {
	if strings.EqualFold(strings.TrimSpace(s), "all") {
		return append([]Precision(nil), Precisions...), nil
	}
	var out []Precision
	seen := map[Precision]bool{}
	for _, f := range strings.Split(s, ",") {
		p, err := ParsePrecision(f)
		if err != nil {
			return nil, err
		}
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out, nil
}
