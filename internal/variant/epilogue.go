package variant

import (
	"fmt"
	"math"
	"strings"
)

// Epilogue is what a kernel applies to each element of C after the product (issue 16's fused
// epilogues): C = act(alpha·op(A)·op(B) + beta·C + bias), with bias one float per row of C (bias[i],
// M of them) or per column (bias[j], N of them) and act the identity, ReLU or GELU (tanh form).
//
// The zero value is EpiNone, the plain GEMM every kernel computed before epilogues existed: a
// variant or problem without an epilogue serializes without the field and keeps its names, record
// keys and PTX. Compare epilogues with ==; String turns "" into "none" and ParseEpilogue back.
type Epilogue string

// The epilogues: a kind (bias, bias_relu, bias_gelu) and where the bias runs (_row: one per row of
// C, _col: one per column).
const (
	EpiNone         Epilogue = ""
	EpiBiasRow      Epilogue = "bias_row"
	EpiBiasCol      Epilogue = "bias_col"
	EpiBiasReluRow  Epilogue = "bias_relu_row"
	EpiBiasReluCol  Epilogue = "bias_relu_col"
	EpiBiasGeluRow  Epilogue = "bias_gelu_row"
	EpiBiasGeluCol  Epilogue = "bias_gelu_col"
	epiNoneSpelling          = "none"
)

// Epilogues lists every epilogue, none first, in the order reports give them.
var Epilogues = []Epilogue{EpiNone, EpiBiasRow, EpiBiasCol, EpiBiasReluRow, EpiBiasReluCol, EpiBiasGeluRow, EpiBiasGeluCol}

// Activations an epilogue applies after the bias.
const (
	ActNone = "none"
	ActReLU = "relu"
	ActGELU = "gelu"
)

// ParseEpilogue parses an epilogue's name (none, bias_row, bias_relu_col, ...; case-insensitive);
// "none" gives EpiNone ("").
func ParseEpilogue(s string) (Epilogue, error) {
	u := strings.ToLower(strings.TrimSpace(s))
	if u == epiNoneSpelling {
		return EpiNone, nil
	}
	for _, e := range Epilogues[1:] {
		if string(e) == u {
			return e, nil
		}
	}
	return EpiNone, fmt.Errorf("epilogue %q: want none, bias_row, bias_col, bias_relu_row, bias_relu_col, bias_gelu_row or bias_gelu_col", s)
}

// String is the epilogue's name, "none" for EpiNone.
func (e Epilogue) String() string {
	if e == EpiNone {
		return epiNoneSpelling
	}
	return string(e)
}

// Valid reports whether e is one of Epilogues.
func (e Epilogue) Valid() bool {
	for _, x := range Epilogues {
		if e == x {
			return true
		}
	}
	return false
}

// HasBias reports whether the kernel takes a bias vector (every epilogue but none).
func (e Epilogue) HasBias() bool { return e != EpiNone }

// BiasPerRow reports whether the bias runs along the rows of C (bias[i]; false: bias[j]).
func (e Epilogue) BiasPerRow() bool { return strings.HasSuffix(string(e), "_row") }

// Kind is the epilogue without its bias placement: none, bias, bias_relu or bias_gelu (the bench
// summary's epilogue field).
func (e Epilogue) Kind() string {
	if e == EpiNone {
		return epiNoneSpelling
	}
	return strings.TrimSuffix(strings.TrimSuffix(string(e), "_row"), "_col")
}

// Placement is "row" or "col" for an epilogue with a bias, "" for none.
func (e Epilogue) Placement() string {
	switch {
	case e == EpiNone:
		return ""
	case e.BiasPerRow():
		return "row"
	default:
		return "col"
	}
}

// Activation is ActNone, ActReLU or ActGELU.
func (e Epilogue) Activation() string {
	switch e.Kind() {
	case "bias_relu":
		return ActReLU
	case "bias_gelu":
		return ActGELU
	}
	return ActNone
}

// BiasLen is the number of bias elements a problem of an M×N result reads (0 without a bias).
func (e Epilogue) BiasLen(m, n int) int {
	switch {
	case e == EpiNone:
		return 0
	case e.BiasPerRow():
		return m
	default:
		return n
	}
}

// geluC is sqrt(2/pi), GELU's tanh-form scale.
var geluC = math.Sqrt(2 / math.Pi)

// Apply is the epilogue of one element in float64: act(x + bias), x = alpha·acc + beta·C (the
// definition every kernel, the separate baseline kernel and the verifier follow). GELU is the tanh
// form 0.5·x·(1 + tanh(sqrt(2/pi)·(x + 0.044715·x³))).
func (e Epilogue) Apply(x, bias float64) float64 {
	if e == EpiNone {
		return x
	}
	x += bias
	switch e.Activation() {
	case ActReLU:
		return math.Max(x, 0)
	case ActGELU:
		return Gelu(x)
	}
	return x
}

// Gelu is GELU's tanh form in float64.
func Gelu(x float64) float64 { return 0.5 * x * (1 + math.Tanh(geluC*(x+0.044715*x*x*x))) }

// Slope bounds |d act/dx| near x (1 for the identity and ReLU; GELU's derivative stays below 1.13
// everywhere): the verifier scales the product's error bound by it, since an error e in x moves the
// output by at most about Slope·e.
func (e Epilogue) Slope() float64 {
	if e.Activation() == ActGELU {
		return 1.13
	}
	return 1
}

// EpilogueSignature is the parameter list of a kernel with an epilogue: Signature plus the bias
// vector (M floats for a per-row bias, N for a per-column one).
const EpilogueSignature = Signature + ", const float* __restrict__ bias"
