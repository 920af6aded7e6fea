package variant

import (
	"strings"
	"testing"
)

func TestParseOp(t *testing.T) {
	for s, want := range map[string]Op{"NN": OpNN, "nn": OpNN, "NT": OpNT, "tn": OpTN, " TT ": OpTT} {
		if got, err := ParseOp(s); err != nil || got != want {
			t.Errorf("ParseOp(%q) = %q, %v; want %q", s, got, err, want)
		}
	}
	for _, s := range []string{"", "N", "NNN", "NC", "XT"} {
		if _, err := ParseOp(s); err == nil {
			t.Errorf("ParseOp(%q) accepted", s)
		}
	}
	ops, err := ParseOps("TN,NN,TN, TT")
	if err != nil || len(ops) != 3 || ops[0] != OpTN || ops[1] != OpNN || ops[2] != OpTT {
		t.Errorf("ParseOps = %v, %v", ops, err)
	}
	if _, err := ParseOps(" , "); err == nil {
		t.Error("ParseOps of nothing accepted")
	}
	for i, op := range Ops {
		if op.Index() != i || OpOf(op.TransA(), op.TransB()) != op || !op.Valid() {
			t.Errorf("%s: index %d, OpOf %s", op, op.Index(), OpOf(op.TransA(), op.TransB()))
		}
	}
	if OpNN.String() != "NN" || Op("XY").Valid() {
		t.Error("String/Valid")
	}
}

// TestColumnMajor checks the mapping of a column-major BLAS call onto the row-major kernels
// element by element: C (m×n, column-major, ldc) = op(A)·op(B) computed by the row-major product of
// the swapped operands under the op ColumnMajor returns must give the same numbers.
func TestColumnMajor(t *testing.T) {
	const m, n, k = 3, 4, 5
	for _, ta := range []byte{'N', 'T'} {
		for _, tb := range []byte{'N', 'T'} {
			// Column-major storage: element (i, j) of an r×c matrix at i + j*ld.
			lda := m + 1
			if ta == 'T' {
				lda = k + 2
			}
			ldb := k + 3
			if tb == 'T' {
				ldb = n + 1
			}
			ldc := m + 2
			A := make([]float64, 64)
			B := make([]float64, 64)
			for i := range A {
				A[i], B[i] = float64(i*7%11)-5, float64(i*5%13)-6
			}
			opA := func(i, p int) float64 { // op(A) is m×k
				if ta == 'T' {
					return A[p+i*lda]
				}
				return A[i+p*lda]
			}
			opB := func(p, j int) float64 { // op(B) is k×n
				if tb == 'T' {
					return B[j+p*ldb]
				}
				return B[p+j*ldb]
			}
			want := make([]float64, ldc*n)
			for i := 0; i < m; i++ {
				for j := 0; j < n; j++ {
					for p := 0; p < k; p++ {
						want[i+j*ldc] += opA(i, p) * opB(p, j)
					}
				}
			}
			op, err := ColumnMajor(ta, tb)
			if err != nil {
				t.Fatal(err)
			}
			// The row-major kernel: M' = n, N' = m, first operand B (lda' = ldb), second A (ldb' = lda).
			M, N := n, m
			rowA, rowB, ldA, ldB := B, A, ldb, lda
			if wa, wb, wc := op.DenseLD(M, N, k); ldA < wa || ldB < wb || ldc < wc {
				t.Fatalf("%c%c → %s: leading dimensions %d %d %d below the row-major minimum %d %d %d",
					ta, tb, op, ldA, ldB, ldc, wa, wb, wc)
			}
			got := make([]float64, ldc*n)
			for i := 0; i < M; i++ {
				for j := 0; j < N; j++ {
					for p := 0; p < k; p++ {
						a := rowA[i*ldA+p] // op(A')[i][p], row-major
						if op.TransA() {
							a = rowA[p*ldA+i]
						}
						b := rowB[p*ldB+j]
						if op.TransB() {
							b = rowB[j*ldB+p]
						}
						got[i*ldc+j] += a * b
					}
				}
			}
			for x := range want {
				if got[x] != want[x] {
					t.Fatalf("transa=%c transb=%c → %s: element %d is %g, want %g", ta, tb, op, x, got[x], want[x])
				}
			}
		}
	}
	for _, c := range []struct {
		ta, tb byte
		want   Op
	}{{'N', 'N', OpNN}, {'T', 'T', OpTT}, {'N', 'T', OpTN}, {'T', 'N', OpNT}, {'c', 'n', OpNT}} {
		if op, err := ColumnMajor(c.ta, c.tb); err != nil || op != c.want {
			t.Errorf("ColumnMajor(%c, %c) = %s, %v; want %s", c.ta, c.tb, op, err, c.want)
		}
	}
	if _, err := ColumnMajor('X', 'N'); err == nil || !strings.Contains(err.Error(), "transa") {
		t.Errorf("ColumnMajor('X', 'N'): %v", err)
	}
}

func TestSupportsPerOp(t *testing.T) {
	v := Variant{Name: "t", Block: Dim2{X: 16, Y: 16}, Tile: Tile{Rows: 16, Cols: 16}, Requires: Requirements{1, 1, 1, 1}}
	for _, c := range []struct {
		op                     Op
		m, n, k, lda, ldb, ldc int
		ok                     bool
	}{
		{OpNN, 10, 20, 30, 30, 20, 20, true}, {OpNN, 10, 20, 30, 10, 20, 20, false},
		{OpTN, 10, 20, 30, 10, 20, 20, true}, {OpTN, 10, 20, 30, 9, 20, 20, false},
		{OpNT, 10, 20, 30, 30, 30, 20, true}, {OpNT, 10, 20, 30, 30, 20, 20, false},
		{OpTT, 10, 20, 30, 10, 30, 20, true}, {OpTT, 10, 20, 30, 10, 30, 19, false},
	} {
		v.Op = c.op
		if err := v.Supports(c.m, c.n, c.k, c.lda, c.ldb, c.ldc); (err == nil) != c.ok {
			t.Errorf("%s %+v: %v", c.op, c, err)
		}
		if err := v.SupportsDense(c.m, c.n, c.k); err != nil {
			t.Errorf("%s dense: %v", c.op, err)
		}
	}
}
