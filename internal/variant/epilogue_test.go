package variant

import (
	"math"
	"strings"
	"testing"
)

func TestEpilogueNames(t *testing.T) {
	for _, e := range Epilogues {
		got, err := ParseEpilogue(e.String())
		if err != nil || got != e || !e.Valid() {
			t.Errorf("%q: parsed %q, %v", e.String(), got, err)
		}
	}
	if e, err := ParseEpilogue(" BIAS_GELU_Row "); err != nil || e != EpiBiasGeluRow {
		t.Errorf("case and spaces: %q %v", e, err)
	}
	for _, bad := range []string{"", "bias", "relu", "bias_relu", "bias_gelu_diag", "gelu_row"} {
		if _, err := ParseEpilogue(bad); err == nil || !strings.Contains(err.Error(), "want none, bias_row") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if Epilogue("bias_tanh_row").Valid() {
		t.Error("an unknown epilogue is valid")
	}
	for _, tc := range []struct {
		e                 Epilogue
		kind, place, act  string
		perRow, bias      bool
		biasLenM, biasLen int
	}{
		{EpiNone, "none", "", ActNone, false, false, 7, 0},
		{EpiBiasRow, "bias", "row", ActNone, true, true, 7, 7},
		{EpiBiasCol, "bias", "col", ActNone, false, true, 7, 9},
		{EpiBiasReluRow, "bias_relu", "row", ActReLU, true, true, 7, 7},
		{EpiBiasReluCol, "bias_relu", "col", ActReLU, false, true, 7, 9},
		{EpiBiasGeluRow, "bias_gelu", "row", ActGELU, true, true, 7, 7},
		{EpiBiasGeluCol, "bias_gelu", "col", ActGELU, false, true, 7, 9},
	} {
		if tc.e.Kind() != tc.kind || tc.e.Placement() != tc.place || tc.e.Activation() != tc.act ||
			tc.e.BiasPerRow() != tc.perRow || tc.e.HasBias() != tc.bias || tc.e.BiasLen(7, 9) != tc.biasLen {
			t.Errorf("%s: kind %s placement %q act %s row %v bias %v len %d", tc.e, tc.e.Kind(), tc.e.Placement(),
				tc.e.Activation(), tc.e.BiasPerRow(), tc.e.HasBias(), tc.e.BiasLen(7, 9))
		}
	}
}

func TestEpilogueApply(t *testing.T) {
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(b)) }
	if got := EpiNone.Apply(-2, 5); got != -2 {
		t.Errorf("none adds the bias: %g", got)
	}
	if got := EpiBiasCol.Apply(-2, 0.5); got != -1.5 {
		t.Errorf("bias: %g", got)
	}
	if a, b := EpiBiasReluRow.Apply(-2, 0.5), EpiBiasReluRow.Apply(2, 0.5); a != 0 || b != 2.5 {
		t.Errorf("relu: %g %g", a, b)
	}
	// GELU-tanh at known points (PyTorch's gelu(approximate="tanh")).
	for _, tc := range []struct{ x, want float64 }{{0, 0}, {1, 0.8411919906082768}, {-1, -0.15880800939172324}, {3, 2.996362607918227}, {-3, -0.003637392081772994}} {
		if got := EpiBiasGeluCol.Apply(tc.x, 0); !near(got, tc.want) {
			t.Errorf("gelu(%g) = %.16g, want %.16g", tc.x, got, tc.want)
		}
	}
	// Slope bounds GELU's derivative everywhere (the verifier's tolerance relies on it).
	worst := 0.0
	for x := -20.0; x <= 20; x += 1e-3 {
		d := (Gelu(x+1e-6) - Gelu(x-1e-6)) / 2e-6
		worst = math.Max(worst, math.Abs(d))
	}
	if worst > EpiBiasGeluRow.Slope() || worst < 1.1 {
		t.Errorf("GELU's largest slope %g, Slope %g", worst, EpiBiasGeluRow.Slope())
	}
}

func TestEpilogueSignature(t *testing.T) {
	v := Variant{Name: "x", Epilogue: EpiBiasReluCol}
	if s := SignatureOf(&v); s != EpilogueSignature || !strings.HasSuffix(s, "const float* __restrict__ bias") {
		t.Errorf("epilogue signature %q", s)
	}
	v.Epilogue = EpiNone
	if SignatureOf(&v) != Signature {
		t.Error("a plain kernel's signature changed")
	}
}
