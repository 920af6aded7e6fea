// Package ooc plans and supports GEMMs that go beyond one GPU: products whose operands do not fit
// in device memory (out-of-core) and products split between the GPU and the CPU (hybrid). It is
// pure Go, so everything here is tested without a GPU; the worker (internal/gpu) executes the plans.
//
// Out-of-core method. C (M×N) is cut into blocks of BM×BN; for each block, K is streamed in slices
// of BK: an A slice (BM×BK, part of the block's row panel) and a B slice (BK×BN, part of its column
// panel) are copied in, and the block GEMM of the slice is accumulated into the device copy of the
// C block (β = 0 for the first slice, β = 1 after). Slices are double-buffered so that copying
// slice s+1 overlaps computing slice s, and two C block buffers let the download of one block
// overlap the next block's compute. A plan fixes BM, BN and BK from the device budget:
//
//	device bytes = 4·(SliceBuffers·(BM·BK + BK·BN) + CBuffers·BM·BN)
//	host→device  = 4·(M·K·⌈N/BN⌉ + K·N·⌈M/BM⌉)     (A is re-sent once per block column, B per block row)
//	device→host  = 4·M·N
//
// NewPlan picks, among the block shapes that fit, the one with the least host→device traffic,
// preferring slices of at least MinSliceK (a thin slice makes every block GEMM a poor, memory-bound
// kernel) and then the fewest steps. Every device buffer is also kept below 2^31 elements, because
// the generated kernels index with 32-bit int, and a block's grid within CUDA's limits.
//
// Hybrid method. The GPU computes the first M−F rows of C while a CPU SGEMM (Engine) computes the
// last F. GPUModel predicts both parts from one all-GPU run: kernel time grows with waves of thread
// blocks, so only an F that removes a whole wave (WaveCandidates) can shorten it; PlanF picks the
// candidate with the least predicted overall time among those where the CPU finishes no later than
// the GPU, and SweepWaves the F of a sweep. The runner's hybrid and outofcore commands only parse
// flags, call this package and the worker, and print.
package ooc

import (
	"errors"
	"fmt"

	"tilegen/internal/variant"
)

// Align holds the multiples that block edges must respect: Rows for BM (the variant's tile rows and
// m_multiple), Cols for BN (tile columns, n_multiple, ld_multiple: BN is also the pitch of the B
// and C buffers), K for BK (k_multiple, ld_multiple: BK is the pitch of the A buffers).
type Align struct {
	Rows, Cols, K int
}

// AlignOf is what a variant requires of block edges and buffer pitches.
func AlignOf(v *variant.Variant) Align {
	r := v.Requires
	return Align{
		Rows: lcm(v.Tile.Rows, r.MMultiple),
		Cols: lcm(lcm(v.Tile.Cols, r.NMultiple), r.LDMultiple),
		K:    lcm(r.KMultiple, r.LDMultiple),
	}
}

func lcm(a, b int) int {
	a, b = max(a, 1), max(b, 1)
	x, y := a, b
	for y != 0 {
		x, y = y, x%y
	}
	return a / x * b
}

// Options configure NewPlan.
type Options struct {
	// Budget is the device memory the plan may use, in bytes.
	Budget int64
	// Align constrains the block edges (zero fields mean 1).
	Align Align
	// MinSliceK is the smallest K slice preferred (default 1024, or K when smaller); thinner
	// slices are used only when nothing else fits.
	MinSliceK int
	// MaxElems caps the elements of one device buffer (default 2^31−1: 32-bit kernel indexing).
	MaxElems int64
	// MaxBlockRows caps BM (default 65535·Align.Rows: the grid's y extent).
	MaxBlockRows int
}

// Plan is a blocking of an M×N×K product. BM, BN and BK are the buffer extents (multiples of the
// alignment); edge blocks and the last slice are smaller (see Block and Slice).
type Plan struct {
	M, N, K    int
	BM, BN, BK int
	// BlocksM×BlocksN blocks of C, SlicesK slices of K per block.
	BlocksM, BlocksN, SlicesK int
	// SliceBuffers is the number of (A slice, B slice) buffer pairs (2: double-buffered), CBuffers
	// the number of C block buffers (2 when there is more than one block).
	SliceBuffers, CBuffers int
	// DeviceBytes is what the buffers take on the device.
	DeviceBytes int64
	// H2DBytes and D2HBytes are the bytes the plan moves host→device and device→host.
	H2DBytes, D2HBytes int64
}

// ErrBudget is wrapped by NewPlan when the budget cannot hold even the smallest block.
var ErrBudget = errors.New("device budget too small")

const (
	defaultMinSliceK = 1024
	defaultMaxElems  = 1<<31 - 1
	maxGridY         = 65535
	// maxCandidates bounds the block counts tried per dimension; beyond it blocks are already
	// thin enough that traffic only grows.
	maxCandidates = 4096
)

// NewPlan chooses a plan for M×N×K under the options.
func NewPlan(m, n, k int, o Options) (Plan, error) {
	if m < 1 || n < 1 || k < 1 {
		return Plan{}, fmt.Errorf("shape %dx%dx%d: every dimension must be at least 1", m, n, k)
	}
	ar, ac, ak := max(o.Align.Rows, 1), max(o.Align.Cols, 1), max(o.Align.K, 1)
	minK := o.MinSliceK
	if minK <= 0 {
		minK = defaultMinSliceK
	}
	minK = min(minK, k)
	maxElems := o.MaxElems
	if maxElems <= 0 {
		maxElems = defaultMaxElems
	}
	maxRows := o.MaxBlockRows
	if maxRows <= 0 {
		maxRows = maxGridY * ar
	}
	words := o.Budget / 4
	var best Plan
	found := false
	for _, bm := range edges(m, ar) {
		if bm > maxRows {
			continue
		}
		for _, bn := range edges(n, ac) {
			if int64(bm)*int64(bn) > maxElems {
				continue
			}
			p, ok := fit(m, n, k, bm, bn, ak, words, maxElems)
			if ok && (!found || better(p, best, minK)) {
				best, found = p, true
			}
		}
	}
	if !found {
		bm, bn, bk := min(roundUp(m, ar), ar), min(roundUp(n, ac), ac), min(roundUp(k, ak), ak)
		need := 4 * (2*(int64(bm)*int64(bk)+int64(bk)*int64(bn)) + min(2, int64(variant.CeilDiv(m, bm))*int64(variant.CeilDiv(n, bn)))*int64(bm)*int64(bn))
		return Plan{}, fmt.Errorf("%w: %s cannot hold one step of %dx%dx%d; the smallest (C block %dx%d, K slice %d, double-buffered) needs %s",
			ErrBudget, Bytes(o.Budget), m, n, k, bm, bn, bk, Bytes(need))
	}
	return best, nil
}

// DeviceMargin is device memory left free when the request names no budget (the context's own
// allocations, cuBLAS workspace, fragmentation).
func DeviceMargin(free int64) int64 { return max(512<<20, free/50) }

// DeviceBudget is the device memory a plan may use: requested, or when that is 0 the free memory
// less DeviceMargin. The budget is returned with the error when it exceeds the free memory.
func DeviceBudget(requested, free int64) (int64, error) {
	budget := requested
	if budget == 0 {
		budget = free - DeviceMargin(free)
	}
	if budget > free {
		return budget, fmt.Errorf("device budget %s exceeds the device's free memory %s", Bytes(budget), Bytes(free))
	}
	return budget, nil
}

// CheckVariant reports whether v accepts every distinct block GEMM of the plan: edge blocks and the
// last slice are smaller, and the pitches are the buffer extents.
func (p Plan) CheckVariant(v *variant.Variant) error {
	for _, b := range []int{0, p.Blocks() - 1} {
		_, rows, _, cols := p.Block(b)
		for _, sl := range []int{0, p.SlicesK - 1} {
			_, depth := p.Slice(sl)
			if err := v.Supports(rows, cols, depth, p.BK, p.BN, p.BN); err != nil {
				return fmt.Errorf("variant %s rejects block %dx%dx%d of the plan: %w", v.Name, rows, cols, depth, err)
			}
		}
	}
	return nil
}

// edges lists the distinct aligned block edges for a dimension of length d: ⌈d/b⌉ rounded up to the
// alignment for b = 1, 2, ... blocks (largest first).
func edges(d, align int) []int {
	var out []int
	last := -1
	for nb := 1; nb <= min(variant.CeilDiv(d, align), maxCandidates); nb++ {
		e := roundUp(variant.CeilDiv(d, nb), align)
		if e != last {
			out = append(out, e)
			last = e
		}
	}
	return out
}

// fit completes a plan for block edges bm×bn with the deepest K slice the budget allows.
func fit(m, n, k, bm, bn, ak int, words, maxElems int64) (Plan, bool) {
	p := Plan{M: m, N: n, K: k, BM: bm, BN: bn, BlocksM: variant.CeilDiv(m, bm), BlocksN: variant.CeilDiv(n, bn)}
	blocks := p.BlocksM * p.BlocksN
	p.CBuffers = min(2, blocks)
	left := words - int64(p.CBuffers)*int64(bm)*int64(bn)
	if left <= 0 {
		return Plan{}, false
	}
	full := int64(roundUp(k, ak))
	// A single step needs one slice buffer pair; anything more is double-buffered.
	p.SliceBuffers = 2
	if blocks == 1 && left/int64(bm+bn) >= full {
		p.SliceBuffers = 1
	}
	bk := left / (int64(p.SliceBuffers) * int64(bm+bn))
	bk = min(bk, maxElems/int64(bm), maxElems/int64(bn), full)
	bk -= bk % int64(ak)
	if bk < 1 {
		return Plan{}, false
	}
	p.SlicesK = variant.CeilDiv(k, int(bk))
	// Balance the slices: the same count with the least padding.
	p.BK = roundUp(variant.CeilDiv(k, p.SlicesK), ak)
	p.DeviceBytes = 4 * (int64(p.SliceBuffers)*(int64(bm)*int64(p.BK)+int64(p.BK)*int64(bn)) + int64(p.CBuffers)*int64(bm)*int64(bn))
	p.H2DBytes = 4 * (int64(m)*int64(k)*int64(p.BlocksN) + int64(k)*int64(n)*int64(p.BlocksM))
	p.D2HBytes = 4 * int64(m) * int64(n)
	return p, true
}

// better orders plans: slices of at least minK first, then less traffic, fewer steps, deeper slices.
func better(a, b Plan, minK int) bool {
	ak, bk := a.BK >= minK, b.BK >= minK
	if ak != bk {
		return ak
	}
	if a.H2DBytes != b.H2DBytes {
		return a.H2DBytes < b.H2DBytes
	}
	if a.Steps() != b.Steps() {
		return a.Steps() < b.Steps()
	}
	return a.BK > b.BK
}

// Blocks is the number of C blocks.
func (p Plan) Blocks() int { return p.BlocksM * p.BlocksN }

// Steps is the number of block GEMMs (blocks × slices).
func (p Plan) Steps() int { return p.Blocks() * p.SlicesK }

// Block returns block b's first row and row count, first column and column count; blocks are
// numbered row-major (all blocks of a block row, then the next), so consecutive blocks share
// their A row panel.
func (p Plan) Block(b int) (i0, rows, j0, cols int) {
	bi, bj := b/p.BlocksN, b%p.BlocksN
	i0, j0 = bi*p.BM, bj*p.BN
	return i0, min(p.BM, p.M-i0), j0, min(p.BN, p.N-j0)
}

// Slice returns slice s's first k and depth.
func (p Plan) Slice(s int) (k0, depth int) {
	k0 = s * p.BK
	return k0, min(p.BK, p.K-k0)
}

// Flops is 2·M·N·K.
func (p Plan) Flops() float64 { return 2 * float64(p.M) * float64(p.N) * float64(p.K) }

// String summarizes the plan in one line.
func (p Plan) String() string {
	return fmt.Sprintf("%dx%d blocks of %dx%d, %d K slices of %d (%d steps), %d slice buffer pairs, %d C buffers: %s on the device, %s host→device, %s device→host",
		p.BlocksM, p.BlocksN, p.BM, p.BN, p.SlicesK, p.BK, p.Steps(), p.SliceBuffers, p.CBuffers,
		Bytes(p.DeviceBytes), Bytes(p.H2DBytes), Bytes(p.D2HBytes))
}

// HostBytes is the host memory an out-of-core M×N×K product needs: A, B and C in float32.
func HostBytes(m, n, k int) int64 {
	return 4 * (int64(m)*int64(k) + int64(k)*int64(n) + int64(m)*int64(n))
}

// Bytes renders a byte count with a binary unit.
func Bytes(b int64) string {
	const unit = 1024
	if b < unit {
		return fmt.Sprintf("%d B", b)
	}
	div, exp := int64(unit), 0
	for x := b / unit; x >= unit && exp < 4; x /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.2f %ciB", float64(b)/float64(div), "KMGTP"[exp])
}

func roundUp(x, m int) int { return variant.CeilDiv(x, m) * m }
