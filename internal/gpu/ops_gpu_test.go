//go:build gpu

package gpu

import (
	"strings"
	"testing"

	"tilegen/generated"
	"tilegen/internal/protocol"
	"tilegen/internal/variant"
)

// catalogKernel is a variant of the generated catalog with its PTX.
func catalogKernel(t *testing.T, name string) *protocol.Kernel {
	t.Helper()
	v, ok := generated.Lookup(name)
	if !ok {
		t.Fatalf("no variant %s in the catalog", name)
	}
	ptx, err := generated.PTX(name)
	if err != nil {
		t.Fatal(err)
	}
	return &protocol.Kernel{Variant: v, PTX: ptx}
}

func passed(r protocol.Response) bool {
	if r.Error != "" || len(r.Verify) == 0 {
		return false
	}
	for _, v := range r.Verify {
		if !v.Pass {
			return false
		}
	}
	return true
}

// TestOpsVerify: under every op, the float64 reference (cross-checked against the CPU), cuBLAS with
// the same op and the catalog's kernels of that op agree, on odd shapes with padded leading
// dimensions and NaN padding; a kernel computing another op than it claims fails.
func TestOpsVerify(t *testing.T) {
	c := startWorker(t)
	for _, op := range variant.Ops {
		suffix := ""
		if op != variant.OpNN {
			suffix = "_" + strings.ToLower(op.String())
		}
		for _, s := range []protocol.Shape{{M: 97, N: 89, K: 83, Op: op}, {M: 127, N: 129, K: 131, Op: op}, {M: 1, N: 300, K: 5, Op: op}} {
			if r := c.call(protocol.Request{Op: protocol.OpCublas, Shape: s, Verify: verifyAll(11)}); !passed(r) || !r.Verify[0].RefCrossChecked {
				t.Errorf("cuBLAS %s %+v: %+v", op, s, r)
			}
			for _, name := range []string{"naive_32x8", "shared_w16_pad1", "micro1d_t32_r4", "micro1d_t64_r8"} {
				r := c.call(protocol.Request{Op: protocol.OpRun, Kernel: catalogKernel(t, name+suffix), Shape: s, Verify: verifyAll(12)})
				if !passed(r) || len(r.Verify) != 2 {
					t.Errorf("%s%s %+v: %+v", name, suffix, s, r)
				}
			}
		}
		if op == variant.OpNN {
			continue
		}
		// The NN kernel's PTX presented as a kernel of op: its result is op NN's, which the
		// reference of op must reject.
		k := catalogKernel(t, "micro1d_t32_r4")
		k.Variant.Op = op
		r := c.call(protocol.Request{Op: protocol.OpRun, Kernel: k, Shape: protocol.Shape{M: 96, N: 96, K: 96, Op: op}, Verify: verifyAll(13)})
		if r.Error != "" || len(r.Verify) == 0 || r.Verify[0].Pass {
			t.Errorf("NN kernel claiming %s passed: %+v", op, r)
		} else {
			t.Logf("NN kernel claiming %s: %s", op, r.Verify[0].Reason)
		}
	}
	// A problem of another op than the kernel's is refused before anything runs.
	r := c.call(protocol.Request{Op: protocol.OpRun, Kernel: catalogKernel(t, "micro1d_t32_r4_tn"), Shape: protocol.Shape{M: 8, N: 8, K: 8}, Verify: verifyAll(1)})
	if !strings.Contains(r.Error, "computes TN, the problem is NN") {
		t.Errorf("op mismatch: %+v", r)
	}
}

// TestBatchesVerify: strided batches under every op pass the dense, gapped (NaN gaps, sentinels
// between the Cs) and broadcast (strideB = 0) checks, for cuBLAS and the catalog's batched
// kernels; a kernel that ignores the batch fails.
func TestBatchesVerify(t *testing.T) {
	c := startWorker(t)
	for _, op := range variant.Ops {
		suffix := "_sb"
		if op != variant.OpNN {
			suffix = "_" + strings.ToLower(op.String()) + "_sb"
		}
		for _, s := range []protocol.Shape{{M: 97, N: 89, K: 83, Op: op, Batch: 3}, {M: 64, N: 64, K: 64, Op: op, Batch: 7}} {
			r := c.call(protocol.Request{Op: protocol.OpCublas, Shape: s, Verify: verifyAll(21)})
			if !passed(r) || len(r.Verify) != 3 || r.Verify[2].StrideB != 0 || r.Verify[1].StrideA <= int64(s.M*s.K) {
				t.Errorf("cuBLAS batched %s %+v: %+v", op, s, r)
			}
			for _, name := range []string{"micro1d_t32_r4", "micro1d_t64_r8"} {
				r := c.call(protocol.Request{Op: protocol.OpRun, Kernel: catalogKernel(t, name+suffix), Shape: s, Verify: verifyAll(22),
					Timing: &protocol.TimingSettings{Warmup: 1, Reps: 5, MaxReps: 5}})
				if !passed(r) || len(r.Verify) != 3 || r.Timing == nil || r.Attributes.Blocks%s.Batch != 0 {
					t.Errorf("%s%s %+v: %+v", name, suffix, s, r)
				}
			}
		}
	}
	// The unbatched kernel presented as batched: it ignores the strides and grid z, so every block
	// of z writes product 0 and products 1 and 2 keep their NaN.
	k := catalogKernel(t, "micro1d_t32_r4")
	k.Variant.Batched = true
	r := c.call(protocol.Request{Op: protocol.OpRun, Kernel: k, Shape: protocol.Shape{M: 64, N: 64, K: 64, Batch: 3}, Verify: verifyAll(23)})
	if r.Error != "" || len(r.Verify) == 0 || r.Verify[0].Pass || !strings.Contains(r.Verify[0].Reason, "of product 1") {
		t.Errorf("kernel ignoring the batch: %+v", r)
	} else {
		t.Logf("kernel ignoring the batch: %s", r.Verify[0].Reason)
	}
	// A batch for an unbatched kernel is refused.
	r = c.call(protocol.Request{Op: protocol.OpRun, Kernel: catalogKernel(t, "micro1d_t32_r4"), Shape: protocol.Shape{M: 8, N: 8, K: 8, Batch: 2}, Verify: verifyAll(1)})
	if !strings.Contains(r.Error, "does not take a problem of batch 2") {
		t.Errorf("batch for an unbatched kernel: %+v", r)
	}
}
