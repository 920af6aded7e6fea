package export

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"tilegen/internal/dispatch"
	"tilegen/internal/protocol"
	"tilegen/internal/results"
	"tilegen/internal/variant"
)

// The strided-batched entry (cublasSgemmStridedBatched): batch products C_i = alpha·op(A_i)·op(B_i)
// + beta·C_i with X_i = X + i·strideX, launched as one grid whose z is the product. Its dispatch is
// per op and batch regime: each op's batch classes (the tuned batched shapes, each with the fastest
// eligible batched kernel of the op there) and a robust default; a problem goes to the kernel of
// the nearest class, nearest in integer buckets of M, N, K and the batch (batchShift buckets per
// octave, squared differences summed, the first class in order on a tie), or to the default when
// that kernel cannot take it. The same integer rule is emitted into the header and the Go package.

// batchShift is the bucket resolution of the batched dispatch: 2 buckets per octave.
const batchShift = 1

// BatchRule is one op's strided-batched dispatch.
type BatchRule struct {
	Op variant.Op
	// Classes are the op's batched shapes, sorted by M, N, K, batch; Variant (an index into
	// Plan.Variants) is the fastest eligible batched kernel there.
	Classes []Class
	// Default is the batched kernel of op (an index into Plan.Variants) with the best geometric mean
	// of its time over the fastest one's across the classes, among those timed on all of them,
	// without requirements and with the whole edge suite passed.
	Default int
}

// BatchRuleOf is op's strided-batched dispatch, or nil when the export has no batched kernel for op.
func (p *Plan) BatchRuleOf(op variant.Op) *BatchRule {
	for i := range p.Batched {
		if p.Batched[i].Op == op {
			return &p.Batched[i]
		}
	}
	return nil
}

// batchOpsList names the ops the export has batched kernels for.
func (p *Plan) batchOpsList() string {
	var ops []string
	for _, r := range p.Batched {
		ops = append(ops, r.Op.String())
	}
	if len(ops) == 0 {
		return "none"
	}
	return strings.Join(ops, ", ")
}

// batchDistance is the batched dispatch's distance between a problem and a class: the squared
// differences of their buckets of M, N, K and the batch, summed.
func batchDistance(m, n, k, batch int, c protocol.Shape) int {
	d := 0
	for _, x := range [4][2]int{{m, c.M}, {n, c.N}, {k, c.K}, {batch, c.Batch}} {
		e := dispatch.Bucket(x[0], batchShift) - dispatch.Bucket(x[1], batchShift)
		d += e * e
	}
	return d
}

// batchedLimits checks what a strided-batched call needs beyond one product's rules: batch in
// [1, 65535] (grid z), non-negative strides, and C's products apart (strideC at least one
// product's extent, (m-1)·ldc + n, when batch > 1).
func batchedLimits(m, n, ldc int, strideA, strideB, strideC int64, batch int) error {
	if batch < 1 || batch > 65535 {
		return fmt.Errorf("batch %d: want 1 to 65535", batch)
	}
	if strideA < 0 || strideB < 0 || strideC < 0 {
		return fmt.Errorf("strides %d, %d, %d: want non-negative strides", strideA, strideB, strideC)
	}
	if batch > 1 && strideC < int64(m-1)*int64(ldc)+int64(n) {
		return fmt.Errorf("strideC %d overlaps the products' C (at least (M-1)·ldc + N = %d)", strideC, int64(m-1)*int64(ldc)+int64(n))
	}
	return nil
}

// ChooseBatched is the strided-batched dispatch of the exported artifacts: the index into p.Variants
// launched for batch row-major products of op (strides in elements), or why none can be (an op the
// export has no batched kernel for included).
func (p *Plan) ChooseBatched(op variant.Op, m, n, k, lda, ldb, ldc int, strideA, strideB, strideC int64, batch int) (int, error) {
	if m < 1 || n < 1 || k < 1 {
		return -1, fmt.Errorf("shape %dx%dx%d: every dimension must be at least 1", m, n, k)
	}
	if !op.Valid() {
		return -1, fmt.Errorf("op %q: want NN, NT, TN or TT", string(op))
	}
	r := p.BatchRuleOf(op)
	if r == nil {
		return -1, fmt.Errorf("no strided-batched %s kernel in this export (it has batched %s)", op, p.batchOpsList())
	}
	if err := batchedLimits(m, n, ldc, strideA, strideB, strideC, batch); err != nil {
		return -1, err
	}
	best, bestD := 0, math.MaxInt
	for i, c := range r.Classes {
		if d := batchDistance(m, n, k, batch, c.Shape); d < bestD {
			best, bestD = i, d
		}
	}
	why := func(j int) error {
		v := &p.Variants[j].V
		if ldm := int64(atLeast1(v.Requires.LDMultiple)); strideA%ldm != 0 || strideB%ldm != 0 || strideC%ldm != 0 {
			return fmt.Errorf("strides %d, %d, %d are not multiples of %d", strideA, strideB, strideC, ldm)
		}
		return supports(v, m, n, k, lda, ldb, ldc)
	}
	j := r.Classes[best].Variant
	if why(j) == nil {
		return j, nil
	}
	if why(r.Default) == nil {
		return r.Default, nil
	}
	return -1, fmt.Errorf("no exported strided-batched %s variant takes %dx%dx%d (lda=%d ldb=%d ldc=%d): %s: %v; default %s: %v", op, m, n, k,
		lda, ldb, ldc, p.Variants[j].V.Name, why(j), p.Variants[r.Default].V.Name, why(r.Default))
}

// ChooseBatchedColumnMajor is ChooseBatched for a column-major call with
// cublasSgemmStridedBatched's arguments: the row-major kernel of the swapped problem.
func (p *Plan) ChooseBatchedColumnMajor(transa, transb byte, m, n, k, lda, ldb, ldc int, strideA, strideB, strideC int64, batch int) (int, error) {
	op, err := variant.ColumnMajor(transa, transb)
	if err != nil {
		return -1, err
	}
	if err := blasLD(transa, transb, m, n, k, lda, ldb, ldc); err != nil {
		return -1, err
	}
	return p.ChooseBatched(op, n, m, k, ldb, lda, ldc, strideB, strideA, strideC, batch)
}

// batchSelection gathers, per op, the batched classes and the eligible batched variants timed there.
type batchSelection struct {
	ms      map[protocol.Shape]map[string]Measure
	classes map[variant.Op][]protocol.Shape
}

// selectBatched keeps the batched shapes of the records and, per shape, the times of the eligible
// batched kernels of its op (why == "", the whole edge suite passed).
func selectBatched(recs []results.Record, byName map[string]*variant.Variant, why map[string]string, fullEdge map[string]bool) (*batchSelection, error) {
	all, err := measuresOf(recs, func(s protocol.Shape) bool { return s.Batch > 0 && s.Epilogue == variant.EpiNone }, false)
	if err != nil {
		return nil, err
	}
	bs := &batchSelection{ms: map[protocol.Shape]map[string]Measure{}, classes: map[variant.Op][]protocol.Shape{}}
	for s, byVariant := range all {
		for n, m := range byVariant {
			v := byName[n]
			if v == nil || !v.Batched || v.Op != s.Op || why[n] != "" || !fullEdge[n] {
				continue
			}
			if bs.ms[s] == nil {
				bs.ms[s] = map[string]Measure{}
				bs.classes[s.Op] = append(bs.classes[s.Op], s)
			}
			bs.ms[s][n] = m
		}
	}
	for op := range bs.classes {
		cs := bs.classes[op]
		sort.Slice(cs, func(i, j int) bool { return lessBatchShape(cs[i], cs[j]) })
	}
	return bs, nil
}

// lessBatchShape orders by op, M, N, K, then the batch.
func lessBatchShape(a, b protocol.Shape) bool {
	if lessShape(a, b) || lessShape(b, a) {
		return lessShape(a, b)
	}
	return a.Batch < b.Batch
}

// winners returns, per op (variant.Ops order), the fastest variant of every class and the
// robust default, by name.
func (bs *batchSelection) winners(byName map[string]*variant.Variant) (map[variant.Op][]string, map[variant.Op]string, error) {
	win := map[variant.Op][]string{}
	def := map[variant.Op]string{}
	for _, op := range variant.Ops {
		cs := bs.classes[op]
		if len(cs) == 0 {
			continue
		}
		score := map[string]float64{}
		count := map[string]int{}
		for _, s := range cs {
			best, bestMS := "", math.Inf(1)
			for n, m := range bs.ms[s] {
				if m.MedianMS < bestMS || m.MedianMS == bestMS && n < best {
					best, bestMS = n, m.MedianMS
				}
			}
			win[op] = append(win[op], best)
			for n, m := range bs.ms[s] {
				score[n] += math.Log(m.MedianMS / bestMS)
				count[n]++
			}
		}
		bestScore := math.Inf(1)
		for n, sc := range score {
			r := byName[n].Requires
			general := atLeast1(r.MMultiple) == 1 && atLeast1(r.NMultiple) == 1 && atLeast1(r.KMultiple) == 1 && atLeast1(r.LDMultiple) == 1
			if count[n] != len(cs) || !general || byName[n].Split != nil {
				continue
			}
			if sc < bestScore || sc == bestScore && n < def[op] {
				def[op], bestScore = n, sc
			}
		}
		if def[op] == "" {
			return nil, nil, fmt.Errorf("no strided-batched %s variant without requirements was timed on every %s batch shape (%d shapes): "+
				"tune the batched variants on all of them", op, op, len(cs))
		}
	}
	return win, def, nil
}
