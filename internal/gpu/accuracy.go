package gpu

import (
	"fmt"
	"math"

	"tilegen/internal/protocol"
	"tilegen/internal/variant"
	"tilegen/internal/verify"
)

// accuracy handles OpAccuracy: one NN product C = A·B of fresh inputs, computed by every kernel of
// the request, by cuBLAS SGEMM and by cuBLAS with TF32 tensor-op math, each compared with the
// float64 reference of the same inputs (issue 18: accuracy measured, not assumed).
func (w *Worker) accuracy(req protocol.Request, resp *protocol.Response) error {
	a := req.Accuracy
	if a == nil {
		return fmt.Errorf("accuracy request without settings")
	}
	if w.ref == nil {
		return fmt.Errorf("worker started without the reference kernel: cannot measure accuracy")
	}
	s := req.Shape
	if s.Op != variant.OpNN || s.Batch != 0 {
		return fmt.Errorf("accuracy measures one NN product, not %s batch %d", s.Op, s.Batch)
	}
	m, n, k := s.M, s.N, s.K
	if m < 1 || n < 1 || k < 1 {
		return fmt.Errorf("shape %dx%dx%d: every dimension must be at least 1", m, n, k)
	}
	span := a.Span
	if span == 0 {
		span = 20
	}
	rnd := verify.Rand(a.Seed)
	ha, hb := make([]float32, m*k), make([]float32, k*n)
	verify.Uniform(rnd, ha)
	verify.Uniform(rnd, hb)
	switch a.Inputs {
	case protocol.InputsUniform:
		span = 0
	case protocol.InputsWide:
		scaleRows := func(x []float32, rows, cols int) {
			for i := 0; i < rows; i++ {
				f := float32(math.Ldexp(1, rnd.IntN(2*span+1)-span))
				for j := 0; j < cols; j++ {
					x[i*cols+j] *= f
				}
			}
		}
		scaleRows(ha, m, k)
		scaleRows(hb, k, n)
	default:
		return fmt.Errorf("inputs %q: want %s or %s", a.Inputs, protocol.InputsUniform, protocol.InputsWide)
	}
	var ar arena
	defer ar.free()
	dA, err := ar.upload(w.stream, ha)
	if err != nil {
		return err
	}
	dB, err := ar.upload(w.stream, hb)
	if err != nil {
		return err
	}
	mn := int64(m) * int64(n)
	dR, err := ar.alloc(mn * 8)
	if err != nil {
		return err
	}
	dS, err := ar.alloc(mn * 8)
	if err != nil {
		return err
	}
	dC, err := ar.alloc(mn * 4)
	if err != nil {
		return err
	}
	refArgs := newArgs().i32(m).i32(n).i32(k).i32(0).i32(0).ptr(dA).i32(k).ptr(dB).i32(n).ptr(dR).ptr(dS).i32(n)
	if err := launchErr(w.ref.Launch((n+refTile-1)/refTile, (m+refTile-1)/refTile, 1, refTile, refTile, 1, 0,
		w.stream, refArgs.pointers())); err != nil {
		return fmt.Errorf("reference kernel: %w", err)
	}
	if err := w.sync("reference kernel"); err != nil {
		return err
	}
	r, sAbs := make([]float64, mn), make([]float64, mn)
	if err := ar.download(w.stream, r, dR); err != nil {
		return err
	}
	if err := ar.download(w.stream, sAbs, dS); err != nil {
		return err
	}
	hc := make([]float32, mn)
	measure := func(name string, p variant.Precision, g gemmFunc) error {
		if err := g(m, n, k, 1, dA, k, dB, n, 0, dC, n, batchArgs{}); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if err := w.sync(name); err != nil {
			return err
		}
		if err := ar.download(w.stream, hc, dC); err != nil {
			return err
		}
		row := accuracyRow(hc, r, sAbs)
		row.Name, row.Precision = name, p.Label()
		resp.Accuracy.Rows = append(resp.Accuracy.Rows, row)
		return nil
	}
	resp.Accuracy = &protocol.AccuracyResult{Inputs: a.Inputs, Span: span}
	for i := range a.Kernels {
		kr, err := w.loadKernel(&a.Kernels[i])
		if err != nil {
			return fmt.Errorf("variant %s: %w", a.Kernels[i].Variant.Name, err)
		}
		if err := fits(&kr.v, protocol.Shape{M: m, N: n, K: k, Precision: kr.v.Precision}, w.info.SMs); err != nil {
			return err
		}
		if err := measure(kr.v.Name, kr.v.Precision, w.gemm(kr)); err != nil {
			return err
		}
	}
	if w.blas == nil {
		resp.Note = fmt.Sprintf("cuBLAS not available: %v", w.blasErr)
		return nil
	}
	if err := measure("cublas_sgemm", variant.PrecisionFP32, w.blas.gemmPrecision(variant.OpNN, variant.PrecisionFP32)); err != nil {
		return err
	}
	return measure("cublas_tf32", variant.PrecisionTF32, w.blas.gemmPrecision(variant.OpNN, variant.PrecisionTF32))
}

// accuracyRow computes the error figures of c against the reference r (bound: |A|·|B|).
func accuracyRow(c []float32, r, bound []float64) protocol.AccuracyRow {
	var row protocol.AccuracyRow
	var num, den float64
	for i, x := range c {
		xf := float64(x)
		if math.IsNaN(xf) || math.IsInf(xf, 0) {
			row.NonFinite++
			continue
		}
		d := math.Abs(xf - r[i])
		num += d * d
		den += r[i] * r[i]
		if r[i] != 0 {
			row.MaxRel = math.Max(row.MaxRel, d/math.Abs(r[i]))
		}
		if bound[i] > 0 {
			row.MaxRelBound = math.Max(row.MaxRelBound, d/bound[i])
		}
	}
	if den > 0 {
		row.NormRel = math.Sqrt(num / den)
	}
	return row
}
