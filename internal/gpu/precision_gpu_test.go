//go:build gpu

package gpu

import (
	"testing"

	"tilegen/internal/protocol"
	"tilegen/internal/variant"
)

// TestPrecisionVerify (issue 18): the 3xTF32 kernels pass the FP32 verification on odd shapes
// with padded leading dimensions; the TF32 kernels pass their own tolerance but not the FP32 one
// (a TF32 kernel passed off as FP32 is caught); cuBLAS passes under each precision's baseline;
// a kernel is refused on a problem of another precision.
func TestPrecisionVerify(t *testing.T) {
	c := startWorker(t)
	const x3, tf = "mma_tf32_128x128x32_w64x32_s3_3xtf32", "mma_tf32_128x128x32_w64x32_s3_tf32"
	for _, s := range []protocol.Shape{{M: 97, N: 89, K: 83}, {M: 127, N: 129, K: 131}, {M: 300, N: 260, K: 1000}} {
		for _, p := range []variant.Precision{variant.Precision3xTF32, variant.PrecisionTF32} {
			s.Precision = p
			if r := c.call(protocol.Request{Op: protocol.OpCublas, Shape: s, Verify: verifyAll(21)}); !passed(r) {
				t.Errorf("cuBLAS %+v: %+v", s, r)
			}
		}
		s.Precision = variant.Precision3xTF32
		if r := c.call(protocol.Request{Op: protocol.OpRun, Kernel: catalogKernel(t, x3), Shape: s, Verify: verifyAll(22)}); !passed(r) || len(r.Verify) != 2 {
			t.Errorf("%s %+v: %+v", x3, s, r)
		}
		s.Precision = variant.PrecisionTF32
		if r := c.call(protocol.Request{Op: protocol.OpRun, Kernel: catalogKernel(t, tf), Shape: s, Verify: verifyAll(23)}); !passed(r) {
			t.Errorf("%s %+v: %+v", tf, s, r)
		}
		if s.K > 200 {
			continue // the FP32 tolerance grows with K; TF32's error per product does not
		}
		// The TF32 kernel claiming FP32: the FP32 tolerance rejects it.
		k := catalogKernel(t, tf)
		k.Variant.Precision = variant.PrecisionFP32
		s.Precision = variant.PrecisionFP32
		if r := c.call(protocol.Request{Op: protocol.OpRun, Kernel: k, Shape: s, Verify: verifyAll(24)}); r.Error != "" || passed(r) {
			t.Errorf("TF32 kernel claiming FP32 at %+v passed: %+v", s, r)
		}
	}
	s := protocol.Shape{M: 64, N: 64, K: 64}
	if r := c.call(protocol.Request{Op: protocol.OpRun, Kernel: catalogKernel(t, x3), Shape: s, Verify: verifyAll(25)}); r.Error == "" {
		t.Errorf("3xtf32 kernel ran an FP32 problem: %+v", r)
	}
}

// TestAccuracy: on uniform inputs the 3xTF32 kernel's error is within 2x of cuBLAS SGEMM's and the
// TF32 kernel's is of TF32's order; both figures come back for cuBLAS too.
func TestAccuracy(t *testing.T) {
	c := startWorker(t)
	ks := []protocol.Kernel{*catalogKernel(t, "mma_tf32_128x128x32_w64x32_s3_3xtf32"), *catalogKernel(t, "mma_tf32_128x128x32_w64x32_s3_tf32")}
	for _, in := range []string{protocol.InputsUniform, protocol.InputsWide} {
		r := c.call(protocol.Request{Op: protocol.OpAccuracy, Shape: protocol.Shape{M: 1024, N: 1024, K: 2048},
			Accuracy: &protocol.AccuracyRequest{Seed: 3, Inputs: in, Kernels: ks}})
		if r.Error != "" || r.Accuracy == nil || len(r.Accuracy.Rows) != 4 {
			t.Fatalf("%s: %+v", in, r)
		}
		rows := r.Accuracy.Rows
		x3, tf, sg, ctf := rows[0], rows[1], rows[2], rows[3]
		if sg.Name != "cublas_sgemm" || ctf.Name != "cublas_tf32" || x3.Precision != "3xtf32" || tf.Precision != "tf32" {
			t.Fatalf("%s: rows %+v", in, rows)
		}
		if x3.NormRel > 2*sg.NormRel || x3.NormRel == 0 {
			t.Errorf("%s: 3xtf32 error %g, cuBLAS SGEMM %g: not within 2x", in, x3.NormRel, sg.NormRel)
		}
		if tf.NormRel < 1e-5 || tf.NormRel > 4*ctf.NormRel {
			t.Errorf("%s: tf32 error %g, cuBLAS TF32 %g", in, tf.NormRel, ctf.NormRel)
		}
	}
}
