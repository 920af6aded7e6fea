package dispatch

import (
	"fmt"
	"math/bits"
	"sort"
)

// MaxShift bounds Rule.Shift: at most 2^MaxShift buckets per octave.
const MaxShift = 2

// Rule is a compiled dispatch rule: a kernel index for every cell of a bucket grid over M, N and K.
type Rule struct {
	// Shift is log2 of the buckets per octave (0, 1 or 2).
	Shift int `json:"shift"`
	// Lo and Hi are each dimension's (M, N, K) bucket range, inclusive; buckets outside are clamped.
	Lo [3]int `json:"lo"`
	Hi [3]int `json:"hi"`
	// Table holds a kernel index per cell, M-major: cell (i, j, l) is at (i·NN + j)·NK + l, where
	// NN and NK are the sizes of the N and K ranges. It is the cell's kernel for a problem whose M
	// and N the kernel's tile divides.
	Table []int `json:"-"`
	// Unaligned holds, per cell, the kernel for the other problems (partial tiles at the edges of
	// Table's kernel, or a requirement of it not met); General the best kernel without
	// requirements for them, for a problem that neither of the other two takes.
	Unaligned []int `json:"-"`
	General   []int `json:"-"`
	// Default is the robust default's kernel index.
	Default int `json:"default"`
	// Params are the hyperparameters fitted on the whole corpus; RegimeParams those each regime
	// class's cells were compiled with (indexed by regime constant; a class of few training shapes
	// takes Params).
	Params       Params   `json:"params"`
	RegimeParams []Params `json:"regime_params"`
	// Candidates are the kernel indices the table could choose from, ascending.
	Candidates []int `json:"candidates"`
	// Guard is the wave guard (guard.go): a stream-K kernel launched instead of a fixed-grid one
	// whose last wave a large problem would leave mostly empty; nil: none.
	Guard *WaveGuard `json:"wave_guard,omitempty"`
	// Bulk is the bulk guard (guard.go): a big fixed tile launched on the large problems it covers
	// in several nearly full waves; nil: none.
	Bulk *BulkGuard `json:"bulk_guard,omitempty"`
}

// Bucket is the bucket of x ≥ 1 with 2^shift buckets per octave: 2^shift·floor(log2 x) plus the
// shift bits of x after its leading one. The exported artifacts compute the same with integers.
func Bucket(x, shift int) int {
	e := bits.Len64(uint64(x)) - 1
	mask := 1<<shift - 1
	if e >= shift {
		return e<<shift | (x>>(e-shift))&mask
	}
	return e<<shift | (x<<(shift-e))&mask
}

// BucketRange is the range [lo, hi] of the integers in bucket b, or ok = false when no integer
// falls in it (below 2^shift some buckets are empty).
func BucketRange(b, shift int) (lo, hi int, ok bool) {
	if b < 0 {
		return 0, 0, false
	}
	e, sub := b>>shift, b&(1<<shift-1)
	if e >= 62-shift {
		return 0, 0, false
	}
	if e >= shift {
		lo = (1<<shift + sub) << (e - shift)
		return lo, lo + 1<<(e-shift) - 1, true
	}
	step := shift - e
	if sub%(1<<step) != 0 {
		return 0, 0, false
	}
	lo = 1<<e + sub>>step
	return lo, lo, true
}

// Dims are the sizes of the three bucket ranges.
func (r *Rule) Dims() [3]int {
	return [3]int{r.Hi[0] - r.Lo[0] + 1, r.Hi[1] - r.Lo[1] + 1, r.Hi[2] - r.Lo[2] + 1}
}

// Cell is the table index of M×N×K (each at least 1).
func (r *Rule) Cell(m, n, k int) int {
	d := r.Dims()
	c := func(x, i int) int { return min(max(Bucket(x, r.Shift), r.Lo[i]), r.Hi[i]) - r.Lo[i] }
	return (c(m, 0)*d[1]+c(n, 1))*d[2] + c(k, 2)
}

// Pick is the three kernels of M×N×K's cell (each dimension at least 1), before any check.
func (r *Rule) Pick(m, n, k int) (aligned, unaligned, general int) {
	c := r.Cell(m, n, k)
	return r.Table[c], r.Unaligned[c], r.General[c]
}

// Dispatch is the kernel launched on M×N×K: the cell's aligned kernel when its tile divides M and
// N (fits) and it takes the problem (takes), else the first of the cell's unaligned kernel, its
// general kernel, the aligned one and the default that takes it; −1 when none does. A problem with
// a leading dimension not a multiple of 4 (vec false, see Vec) tries the general kernel first. The bulk guard
// then launches its kernel where it applies (BulkGuard.Takes), else the wave guard replaces that
// kernel with its own where it applies (WaveGuard.Replaces), each only where its kernel takes the
// problem.
func (r *Rule) Dispatch(m, n, k int, vec bool, takes, fits func(j int) bool) int {
	a, u, g := r.Pick(m, n, k)
	return r.guarded(dispatchChain(a, u, g, r.Default, vec, takes, fits), m, n, k, takes)
}

// Vec is Dispatch's vec argument for an M×N problem with leading dimensions lda, ldb and ldc:
// false when they are not all multiples of 4, as the tiled kernels' float4 loads and stores need
// (they load such operands element by element), and M and N are both above the GEMV classes'
// threshold (GEMV-like and tiny products have kernels of their own, fitted on every shape alike).
// The rule sends a problem with vec false to its cell's general kernel first, fitted on the
// training shapes like it.
func Vec(m, n, lda, ldb, ldc int) bool { return (lda|ldb|ldc)&3 == 0 || m <= VecSide || n <= VecSide }

// VecSide is the largest M or N for which Vec is true whatever the leading dimensions.
const VecSide = gemvMax

// vec is Vec of sample i with its packed leading dimensions.
func (d *Data) vec(i int) bool {
	s := d.Samples[i].Shape
	lda, ldb, ldc := s.Dense()
	return Vec(s.M, s.N, lda, ldb, ldc)
}

// Check says whether the rule is well formed for nk kernels.
func (r *Rule) Check(nk int) error {
	if r.Shift < 0 || r.Shift > MaxShift {
		return fmt.Errorf("dispatch rule: shift %d out of [0, %d]", r.Shift, MaxShift)
	}
	size := 1
	for i := range 3 {
		if r.Lo[i] < 0 || r.Hi[i] < r.Lo[i] || r.Hi[i] > 31<<r.Shift {
			return fmt.Errorf("dispatch rule: bucket range [%d, %d] of dimension %d", r.Lo[i], r.Hi[i], i)
		}
		size *= r.Hi[i] - r.Lo[i] + 1
	}
	if len(r.Table) != size || len(r.Unaligned) != size || len(r.General) != size {
		return fmt.Errorf("dispatch rule: tables of %d, %d and %d cells, want %d", len(r.Table), len(r.Unaligned), len(r.General), size)
	}
	if r.Default < 0 || r.Default >= nk {
		return fmt.Errorf("dispatch rule: default %d of %d kernels", r.Default, nk)
	}
	for i := range r.Table {
		for _, j := range []int{r.Table[i], r.Unaligned[i], r.General[i]} {
			if j < 0 || j >= nk {
				return fmt.Errorf("dispatch rule: cell %d holds kernel %d of %d", i, j, nk)
			}
		}
	}
	if err := r.Guard.check(nk); err != nil {
		return err
	}
	return r.Bulk.check(nk)
}

// Used lists the kernel indices the table holds, with the default and the guards' kernels,
// ascending.
func (r *Rule) Used() []int {
	seen := map[int]bool{r.Default: true}
	if r.Guard != nil {
		seen[r.Guard.Kernel] = true
	}
	if r.Bulk != nil {
		seen[r.Bulk.Kernel] = true
	}
	for i := range r.Table {
		seen[r.Table[i]], seen[r.Unaligned[i]], seen[r.General[i]] = true, true, true
	}
	out := make([]int, 0, len(seen))
	for j := range seen {
		out = append(out, j)
	}
	sort.Ints(out)
	return out
}

// Remap returns a copy whose kernel indices are f(old index); f must give an index for every one
// of Used() and may give −1 for other candidates, which are then left out of Candidates.
func (r *Rule) Remap(f func(int) int) *Rule {
	c := *r
	c.Table, c.Unaligned, c.General = make([]int, len(r.Table)), make([]int, len(r.Table)), make([]int, len(r.Table))
	for i := range r.Table {
		c.Table[i], c.Unaligned[i], c.General[i] = f(r.Table[i]), f(r.Unaligned[i]), f(r.General[i])
	}
	c.Default = f(r.Default)
	c.Guard = r.Guard.remap(f)
	c.Bulk = r.Bulk.remap(f)
	c.Candidates = nil
	for _, j := range r.Candidates {
		if x := f(j); x >= 0 {
			c.Candidates = append(c.Candidates, x)
		}
	}
	sort.Ints(c.Candidates)
	return &c
}
