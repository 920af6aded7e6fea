package export

import (
	"math"
	"slices"
	"sort"

	"tilegen/internal/dispatch"
	"tilegen/internal/protocol"
	"tilegen/internal/variant"
)

// borrowBelow is the fewest classes of its own an op needs in a regime class for its rule there to
// be fitted on them alone: below it the NN corpus's classes of that regime join (borrowNN). Two
// large squares say which tile wins on large squares, not what a 384x1024x1024 problem should run
// (a 128x256 tile there leaves 120 of 132 SMs idle: 0.17 of cuBLAS under TN through the header).
const borrowBelow = 8

// Borrowed says what an op's rule took from the NN corpus (borrowNN): Shapes NN classes in the
// Regimes where the op had fewer than borrowBelow classes of its own, timed through Twins of the
// op's variants.
type Borrowed struct {
	Shapes  int      `json:"shapes"`
	Twins   int      `json:"twins"`
	Regimes []string `json:"regimes"`
	// Cost is the op's measured slowdown against NN that scaled the borrowed times: the geometric
	// mean, over the shapes where a variant of the op and its NN twin were both timed, of the
	// variant's time over the twin's (1 when no such pair was timed; a variant's own pairs, where
	// it has some, scale its times instead).
	Cost float64 `json:"cost"`
	// Pairs is how many such pairs Cost is measured on.
	Pairs int `json:"pairs"`
}

// nnTwins maps each exportable one-product variant of op (one whose edge suite passed) to its NN twin: the exportable variant of
// the same template, parameters and precision compiled for NN (the same kernel but for the loads of
// a transposed operand: a family such as regtile_op is regtile's template under the other ops), for
// the variants that have one. Where two NN variants share a template and parameters (families of
// one template that differ in a setting outside the parameters), the first by name is the twin.
func (sel *selection) nnTwins(op variant.Op) map[string]string {
	type key struct {
		template, params string
		prec             variant.Precision
	}
	nn := map[key]string{}
	for n, v := range sel.byName {
		if v.Op == variant.OpNN && !v.Batched && v.Epilogue == variant.EpiNone && sel.why[n] == "" && !isTwin(v) {
			k := key{v.Template, v.ParamString(), v.Precision}
			if t, ok := nn[k]; !ok || n < t {
				nn[k] = n
			}
		}
	}
	out := map[string]string{}
	for n, v := range sel.byName {
		// Eligible: it passed its edge suite under op (a variant without records has no edge entry).
		if _, verified := sel.edge[n]; !verified || v.Op != op || v.Batched || v.Epilogue != variant.EpiNone || isTwin(v) || sel.why[n] != "" {
			continue
		}
		if t, ok := nn[key{v.Template, v.ParamString(), v.Precision}]; ok {
			out[n] = t
		}
	}
	return out
}

// borrowNN is op's fitting input d (op ≠ NN) with the NN corpus's evidence where op has little: the
// NN classes of every regime class (dispatch.Regime) in which op has fewer than borrowBelow classes of its own join as
// op's problems of the same size, each timed for every variant of op whose NN twin (nnTwins) was
// timed there, at the twin's time times the op's measured cost (Borrowed.Cost). A kernel's time
// under one op says nothing certain about another; but an op whose rule is fitted on a few large
// squares alone launches a large tile on every deep-K, skinny or small problem, where one of its
// split-K or small-tile kernels, verified on the op's own edge suite, is known to run its NN twin's
// algorithm. The regime classes the op has measured well keep to the op's own evidence (the fitted rule
// leaves out, per cell, a candidate never timed on its regime class); in one it measured on a few
// shapes, those keep their own times (a cell holding one is pinned to what was measured there) and
// a kernel of op without a twin counts, on a borrowed shape, as the slowest timed there; a shape
// the op has measured is never borrowed. Nothing changes where op has no twins or NN no classes.
func borrowNN(sel *selection, d *dispatch.Data, op variant.Op) (*dispatch.Data, Borrowed) {
	var b Borrowed
	own := map[int]int{}
	measured := map[[3]int]bool{}
	for _, s := range d.Samples {
		own[dispatch.Regime(float64(s.Shape.M), float64(s.Shape.N), float64(s.Shape.K))]++
		measured[[3]int{s.Shape.M, s.Shape.N, s.Shape.K}] = true
	}
	twins := sel.nnTwins(op)
	// The classes to borrow, and the twins timed on one of them.
	var borrow []protocol.Shape
	regimes := map[int]bool{}
	timed := map[string]bool{}
	for _, s := range sel.classes {
		reg := dispatch.Regime(float64(s.M), float64(s.N), float64(s.K))
		if s.Op != variant.OpNN || own[reg] >= borrowBelow || measured[[3]int{s.M, s.N, s.K}] {
			continue
		}
		used := false
		for n, t := range twins {
			if _, ok := sel.ms[s][t]; ok {
				timed[n], used = true, true
			}
		}
		if used {
			borrow = append(borrow, s)
			regimes[reg] = true
		}
	}
	if len(borrow) == 0 {
		return d, b
	}
	// The op's cost: every shape where a variant of op and its twin were both timed.
	own1 := map[string][]float64{}
	var all []float64
	for s, byName := range sel.ms {
		if s.Op != op || s.Batch > 0 || s.Epilogue != variant.EpiNone {
			continue
		}
		nnShape := s
		nnShape.Op = variant.OpNN
		for n, m := range byName {
			t, ok := twins[n]
			if !ok {
				continue
			}
			if mt, ok := sel.ms[nnShape][t]; ok && m.MedianMS > 0 && mt.MedianMS > 0 {
				l := math.Log(m.MedianMS / mt.MedianMS)
				own1[n] = append(own1[n], l)
				all = append(all, l)
			}
		}
	}
	// Summed in sorted order: map iteration order must not move the last bits (the export is
	// deterministic).
	mean := func(xs []float64) float64 {
		xs = slices.Clone(xs)
		slices.Sort(xs)
		sum := 0.0
		for _, x := range xs {
			sum += x
		}
		return math.Exp(sum / float64(len(xs)))
	}
	b.Cost, b.Pairs = 1, len(all)
	if len(all) > 0 {
		b.Cost = mean(all)
	}
	cost := func(n string) float64 {
		if xs := own1[n]; len(xs) > 0 {
			return mean(xs)
		}
		return b.Cost
	}

	// The borrowed twins join the kernels (those the op timed keep their index), by name.
	out := &dispatch.Data{SMs: d.SMs, Samples: slices.Clone(d.Samples), Kernels: slices.Clone(d.Kernels)}
	idx := map[string]int{}
	for j, k := range out.Kernels {
		idx[k.Name] = j
	}
	var add []string
	for n := range timed {
		if _, ok := idx[n]; !ok {
			add = append(add, n)
		}
	}
	sort.Strings(add)
	for _, n := range add {
		idx[n] = len(out.Kernels)
		out.Kernels = append(out.Kernels, sel.kernel(n, twins[n]))
	}
	for _, row := range d.Times {
		out.Times = append(out.Times, append(slices.Clone(row), make([]float64, len(add))...))
	}
	for _, s := range borrow {
		cub := math.Inf(1)
		for _, m := range sel.ms[s] {
			cub = math.Min(cub, m.CublasMS)
		}
		row := make([]float64, len(out.Kernels))
		for n, j := range idx {
			t, ok := twins[n]
			if !ok {
				continue
			}
			if m, ok := sel.ms[s][t]; ok {
				row[j] = cub / m.Ratio * cost(n)
			}
		}
		sh := s
		sh.Op = op
		out.Samples = append(out.Samples, dispatch.Sample{Shape: sh, Source: sel.sources[s], CublasMS: cub})
		out.Times = append(out.Times, row)
	}
	b.Shapes, b.Twins = len(borrow), len(timed)
	for reg := range dispatch.RegimeNames {
		if regimes[reg] {
			b.Regimes = append(b.Regimes, dispatch.RegimeNames[reg])
		}
	}
	return out, b
}
