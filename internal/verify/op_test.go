package verify

import (
	"math"
	"testing"

	"tilegen/internal/variant"
)

// TestReferenceOpMatchesNaive: under every op, with NaN-padded stored operands, ReferenceOp equals
// a triple loop that reads op(A) and op(B) from the stored layouts directly, bit for bit.
func TestReferenceOpMatchesNaive(t *testing.T) {
	for _, op := range variant.Ops {
		for _, tc := range []struct{ m, n, k, padA, padB int }{{1, 1, 1, 0, 0}, {3, 5, 7, 1, 2}, {17, 9, 33, 3, 5}, {6, 11, 2, 0, 4}} {
			r := Rand(uint64(tc.m*1000+tc.n) + uint64(op.Index()))
			ar, ac := op.StoredA(tc.m, tc.k)
			br, bc := op.StoredB(tc.k, tc.n)
			lda, ldb := ac+tc.padA, bc+tc.padB
			a := Matrix(r, ar, ac, lda, float32(math.NaN()))
			b := Matrix(r, br, bc, ldb, float32(math.NaN()))
			gr, gs, err := ReferenceOp(op, tc.m, tc.n, tc.k, a, lda, b, ldb)
			if err != nil {
				t.Fatalf("%s %+v: %v", op, tc, err)
			}
			for i := 0; i < tc.m; i++ {
				for j := 0; j < tc.n; j++ {
					var acc, abs float64
					for p := 0; p < tc.k; p++ {
						var x, y float64
						if op.TransA() {
							x = float64(a[p*lda+i])
						} else {
							x = float64(a[i*lda+p])
						}
						if op.TransB() {
							y = float64(b[j*ldb+p])
						} else {
							y = float64(b[p*ldb+j])
						}
						acc += x * y
						abs += math.Abs(x) * math.Abs(y)
					}
					if gr[i*tc.n+j] != acc || gs[i*tc.n+j] != abs {
						t.Fatalf("%s %+v: (%d,%d) got %v/%v want %v/%v", op, tc, i, j, gr[i*tc.n+j], gs[i*tc.n+j], acc, abs)
					}
				}
			}
		}
	}
}

func TestReferenceOpRejectsBadLayouts(t *testing.T) {
	a := make([]float32, 64)
	// TN: A is stored K×M, so lda must be at least M (4), not K.
	if _, _, err := ReferenceOp(variant.OpTN, 4, 2, 8, a, 3, a, 2); err == nil {
		t.Error("TN with lda < M accepted")
	}
	// NT: B is stored N×K: 3 rows of 8 need 24 elements.
	if _, _, err := ReferenceOp(variant.OpNT, 2, 3, 8, a, 8, a[:20], 8); err == nil {
		t.Error("NT with a short B accepted")
	}
	if _, _, err := ReferenceOp(variant.Op("XY"), 1, 1, 1, a, 1, a, 1); err == nil {
		t.Error("a bad op accepted")
	}
}

// TestCompareBatch: results at a stride with gaps compare as the concatenation of dense results,
// a bad element is named with its product, and the gaps' sentinels are checked.
func TestCompareBatch(t *testing.T) {
	const batch, m, n, ldc, sc, front, back = 3, 4, 5, 7, 31, 8, 8
	c := make([]float32, front+(batch-1)*sc+m*ldc+back)
	for x := range c {
		c[x] = SentinelFloat()
	}
	e := make([]float64, batch*m*n)
	bound := make([]float64, batch*m*n)
	for b := 0; b < batch; b++ {
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				x := b*m*n + i*n + j
				e[x], bound[x] = float64(x), 1
				c[front+b*sc+i*ldc+j] = float32(x)
			}
		}
	}
	if met := CompareBatch(batch, m, n, c[front:], sc, ldc, e, bound, 1e-6); !met.Pass() {
		t.Fatalf("exact results fail: %+v", met)
	}
	if x := SentinelBrokenBatch(c, front, back, batch, sc, m, n, ldc); x != -1 {
		t.Fatalf("intact sentinels reported broken at %d", x)
	}
	c[front+2*sc+1*ldc+3] += 1 // product 2, element (1,3)
	met := CompareBatch(batch, m, n, c[front:], sc, ldc, e, bound, 1e-6)
	if met.Bad != 1 || met.FirstBad != int64(2*m*n+1*n+3) || met.ReasonBatch(m, n) != "1 elements (1.667%) over tolerance, first at (1,3) of product 2" {
		t.Errorf("%+v: %q", met, met.ReasonBatch(m, n))
	}
	gap := front + 1*sc - 2 // in the gap between products 0 and 1
	c[gap] = 0
	if x := SentinelBrokenBatch(c, front, back, batch, sc, m, n, ldc); x != gap {
		t.Errorf("write into the gap between products found at %d, want %d", x, gap)
	}
	c[gap] = SentinelFloat()
	c[len(c)-1] = 0
	if x := SentinelBrokenBatch(c, front, back, batch, sc, m, n, ldc); x != len(c)-1 {
		t.Errorf("write past the end found at %d", x)
	}
}
