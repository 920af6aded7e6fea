package verify

import (
	"math"
	"testing"

	"tilegen/internal/variant"
)

// TestApplyEpilogue: the expectation gets the bias of its row or column and the activation; the
// bound grows by |bias|, GELU's slope and the K-independent rounding allowance; none changes nothing.
// Shapes wider than tall and taller than wide (each placement indexes only its own dimension).
func TestApplyEpilogue(t *testing.T) {
	for _, dims := range [][2]int{{2, 5}, {5, 2}} {
		m, n := dims[0], dims[1]
		for _, epi := range variant.Epilogues {
			e, bound := make([]float64, m*n), make([]float64, m*n)
			for x := range e {
				e[x], bound[x] = float64(x)-4, math.Abs(float64(x)-4)+1
			}
			bias := make([]float32, epi.BiasLen(m, n))
			for i := range bias {
				bias[i] = float32(i) * 0.25
			}
			e0, b0 := append([]float64(nil), e...), append([]float64(nil), bound...)
			ApplyEpilogue(epi, m, n, 30, e, bound, bias)
			for i := 0; i < m; i++ {
				for j := 0; j < n; j++ {
					x := i*n + j
					if epi == variant.EpiNone {
						if e[x] != e0[x] || bound[x] != b0[x] {
							t.Fatalf("none changed element %d", x)
						}
						continue
					}
					var b float64
					if epi.BiasPerRow() {
						b = float64(bias[i])
					} else {
						b = float64(bias[j])
					}
					if want := epi.Apply(e0[x], b); e[x] != want {
						t.Errorf("%s %dx%d (%d,%d): %g, want %g", epi, m, n, i, j, e[x], want)
					}
					if want := epi.Slope() * (1 + 8.0/32) * (b0[x] + math.Abs(b)); math.Abs(bound[x]-want) > 1e-12*want {
						t.Errorf("%s (%d,%d): bound %g, want %g", epi, i, j, bound[x], want)
					}
				}
			}
		}
	}
}
