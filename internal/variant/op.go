package variant

import (
	"fmt"
	"strings"
)

// Op is the operation of a row-major GEMM, C = alpha·op(A)·op(B) + beta·C: op(A) and op(B) each N
// (the operand as stored) or T (its transpose). op(A) is M×K and op(B) is K×N whatever the op: A is
// stored M×K (row stride lda ≥ K) under N and K×M (lda ≥ M) under T; B is stored K×N (ldb ≥ N)
// under N and N×K (ldb ≥ K) under T. C is always M×N with ldc ≥ N.
//
// The zero value is NN, the operation every kernel computed before ops existed: records, keys and
// manifests written then read as NN, and an NN problem or variant serializes without an op field.
// Compare ops with ==; String and the parsers turn "" into "NN" and back.
type Op string

// The four operations. OpNN is "" (see Op).
const (
	OpNN Op = ""
	OpNT Op = "NT"
	OpTN Op = "TN"
	OpTT Op = "TT"
)

// Ops lists the operations in the order reports and tables give them.
var Ops = []Op{OpNN, OpNT, OpTN, OpTT}

// ParseOp parses "NN", "NT", "TN" or "TT" (case-insensitive); NN gives OpNN ("").
func ParseOp(s string) (Op, error) {
	u := strings.ToUpper(strings.TrimSpace(s))
	if len(u) == 2 && (u[0] == 'N' || u[0] == 'T') && (u[1] == 'N' || u[1] == 'T') {
		if u == "NN" {
			return OpNN, nil
		}
		return Op(u), nil
	}
	return OpNN, fmt.Errorf("op %q: want NN, NT, TN or TT", s)
}

// ParseOps parses a comma-separated list of ops, dropping duplicates, in the order given.
func ParseOps(s string) ([]Op, error) {
	var out []Op
	seen := map[Op]bool{}
	for _, f := range strings.Split(s, ",") {
		if strings.TrimSpace(f) == "" {
			continue
		}
		op, err := ParseOp(f)
		if err != nil {
			return nil, err
		}
		if !seen[op] {
			seen[op] = true
			out = append(out, op)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no ops in %q", s)
	}
	return out, nil
}

// OpOf makes the op with op(A) transposed when ta and op(B) when tb.
func OpOf(ta, tb bool) Op {
	switch {
	case ta && tb:
		return OpTT
	case ta:
		return OpTN
	case tb:
		return OpNT
	}
	return OpNN
}

// String is "NN", "NT", "TN" or "TT".
func (o Op) String() string {
	if o == OpNN {
		return "NN"
	}
	return string(o)
}

// Valid reports whether o is one of the four ops.
func (o Op) Valid() bool { return o == OpNN || o == OpNT || o == OpTN || o == OpTT }

// TransA reports whether op(A) is A's transpose (A stored K×M).
func (o Op) TransA() bool { return o == OpTN || o == OpTT }

// TransB reports whether op(B) is B's transpose (B stored N×K).
func (o Op) TransB() bool { return o == OpNT || o == OpTT }

// Index is the op's position in Ops (NN 0, NT 1, TN 2, TT 3): bit 1 is T for A, bit 0 T for B.
func (o Op) Index() int {
	i := 0
	if o.TransA() {
		i |= 2
	}
	if o.TransB() {
		i |= 1
	}
	return i
}

// StoredA is the stored shape (rows, cols) of A for an M×K op(A); its row stride lda must be at
// least cols.
func (o Op) StoredA(m, k int) (rows, cols int) {
	if o.TransA() {
		return k, m
	}
	return m, k
}

// StoredB is the stored shape (rows, cols) of B for a K×N op(B); its row stride ldb must be at
// least cols.
func (o Op) StoredB(k, n int) (rows, cols int) {
	if o.TransB() {
		return n, k
	}
	return k, n
}

// DenseLD returns the smallest leading dimensions of an M×N×K problem under op: lda and ldb are
// the widths of A and B as stored, ldc = N.
func (o Op) DenseLD(m, n, k int) (lda, ldb, ldc int) {
	_, lda = o.StoredA(m, k)
	_, ldb = o.StoredB(k, n)
	return lda, ldb, n
}

// ColumnMajor maps a column-major BLAS call, C = alpha·op(A)·op(B) + beta·C with C m×n (cublasSgemm's
// convention, transa and transb 'N' or 'T'), onto the row-major operation that computes it. A
// column-major matrix is its transpose read row-major, so the call computes Cᵀ = op(B)ᵀ·op(A)ᵀ
// row-major: an n×m result whose first operand is B (row-major op transb) and second is A (op
// transa). The row-major kernel is then launched with M = n, N = m, the operands swapped
// (A ← B with lda ← ldb, B ← A with ldb ← lda) and ldc unchanged: column-major (N,N) is row-major
// NN, (T,T) is TT, (N,T) is TN and (T,N) is NT. 'C' (conjugate transpose) is T for real data.
func ColumnMajor(transa, transb byte) (Op, error) {
	ta, err := transFlag("transa", transa)
	if err != nil {
		return OpNN, err
	}
	tb, err := transFlag("transb", transb)
	if err != nil {
		return OpNN, err
	}
	return OpOf(tb, ta), nil
}

func transFlag(what string, c byte) (bool, error) {
	switch c {
	case 'N', 'n':
		return false, nil
	case 'T', 't', 'C', 'c':
		return true, nil
	}
	return false, fmt.Errorf("%s %q: want 'N' or 'T'", what, rune(c))
}
