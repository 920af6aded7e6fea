//go:build gpu

package gpu

import (
	"strings"
	"testing"

	"tilegen/generated"
	"tilegen/internal/protocol"
)

// seedKernel is the best seed variant from the generated registry.
func seedKernel(t *testing.T) *protocol.Kernel {
	t.Helper()
	v, ok := generated.Lookup("micro1d_t64_r16")
	if !ok {
		t.Fatal("micro1d_t64_r16 not in the registry")
	}
	ptx, err := generated.PTX(v.Name)
	if err != nil {
		t.Fatal(err)
	}
	return &protocol.Kernel{Variant: v, PTX: ptx}
}

// TestOutOfCoreEqualsInCore streams products through small budgets and compares every element with
// the variant run once in device memory and with the float64 reference.
func TestOutOfCoreEqualsInCore(t *testing.T) {
	c := startWorker(t)
	k := seedKernel(t)
	for _, tc := range []struct {
		shape         protocol.Shape
		budget        int64
		wantBlocks    bool // more than one C block
		wantSlices    bool // more than one K slice
		wantIdentical bool // K not sliced: the same kernel on the same data, bit for bit
	}{
		{protocol.Shape{M: 2048, N: 1536, K: 3000}, 8 << 20, true, true, false},
		{protocol.Shape{M: 1000, N: 1000, K: 700}, 8 << 20, true, false, true},
		{protocol.Shape{M: 777, N: 1001, K: 2100}, 2 << 20, true, true, false},
	} {
		r := c.call(protocol.Request{Op: protocol.OpOutOfCore, Kernel: k, Shape: tc.shape, OutOfCore: &protocol.OutOfCoreRequest{
			Seed: 3, Budget: tc.budget, Samples: 32, FullCheckMaxFlops: 2e10, TolFactor: 2, CompareInCore: true}})
		o := r.OutOfCoreResult
		if r.Error != "" || o == nil {
			t.Fatalf("%+v: %+v", tc.shape, r)
		}
		t.Logf("%+v: %dx%d blocks of %dx%d, %d slices of %d, %d device bytes; wall %.2f ms kernels %.2f h2d %.2f d2h %.2f; in-core identical %d/%d max %.3g",
			tc.shape, o.BlocksM, o.BlocksN, o.BM, o.BN, o.SlicesK, o.BK, o.DeviceBytes, o.WallMS, o.KernelMS, o.H2DMS, o.D2HMS,
			o.InCore.Identical, o.InCore.Elements, o.InCore.MaxAbs)
		if !o.Pass || !o.Check.Full || o.Check.Elements != int64(tc.shape.M*tc.shape.N) {
			t.Errorf("%+v: check %+v %s", tc.shape, o.Check, o.Reason)
		}
		if o.DeviceBytes > tc.budget || (o.BlocksM*o.BlocksN > 1) != tc.wantBlocks || (o.SlicesK > 1) != tc.wantSlices {
			t.Errorf("%+v: plan %+v", tc.shape, o)
		}
		if !o.HostPinned || o.WallMS <= 0 || o.KernelMS <= 0 || o.H2DMS <= 0 || o.D2HMS <= 0 || o.BoundMS <= 0 {
			t.Errorf("%+v: times %+v", tc.shape, o)
		}
		if in := o.InCore; in == nil || in.Elements != int64(tc.shape.M*tc.shape.N) ||
			(tc.wantIdentical && in.Identical != in.Elements) || in.MaxAbs > 1e-2 {
			t.Errorf("%+v: in-core comparison %+v", tc.shape, o.InCore)
		}
	}
	// A budget that cannot hold one block is refused before anything is allocated.
	r := c.call(protocol.Request{Op: protocol.OpOutOfCore, Kernel: k, Shape: protocol.Shape{M: 4096, N: 4096, K: 4096},
		OutOfCore: &protocol.OutOfCoreRequest{Seed: 1, Budget: 4 << 10, Samples: 8, TolFactor: 2}})
	if !strings.Contains(r.Error, "device budget too small") {
		t.Errorf("impossible budget: %+v", r)
	}
}

// TestHybridEqualsGPUOnly: GPU rows of a hybrid product are the all-GPU rows bit for bit, CPU rows
// agree with the float64 reference, for several F including 0 and M.
func TestHybridEqualsGPUOnly(t *testing.T) {
	c := startWorker(t)
	k := seedKernel(t)
	s := protocol.Shape{M: 1000, N: 768, K: 512}
	for _, engine := range []string{"blocked", "gonum"} {
		for _, f := range []int{0, 1, 64, 333, 999, 1000} {
			r := c.call(protocol.Request{Op: protocol.OpHybrid, Kernel: k, Shape: s, Hybrid: &protocol.HybridRequest{
				Seed: 4, CPURows: f, Engine: engine, Reps: 2, Samples: 16, FullCheckMaxFlops: 1e10, TolFactor: 2,
				CompareGPUOnly: true, ProbeRows: 32}})
			h := r.HybridResult
			if r.Error != "" || h == nil {
				t.Fatalf("%s F=%d: %+v", engine, f, r)
			}
			if !h.Pass || !h.Check.Full || h.GPURows != s.M-f || h.CPURows != f || len(h.OverallSamples) != 2 {
				t.Errorf("%s F=%d: %+v", engine, f, h)
			}
			if g := h.GPUOnlyGPURows; g == nil || g.Elements != int64((s.M-f)*s.N) || g.Identical != g.Elements {
				t.Errorf("%s F=%d: GPU rows differ from the all-GPU product: %+v", engine, f, g)
			}
			if (f > 0) != (h.CPUMS > 0) || (f < s.M) != (h.KernelMS > 0) || h.OverallMS < max(h.CPUMS, h.GPUMS)*0.999 {
				t.Errorf("%s F=%d: times %+v", engine, f, h)
			}
			if len(h.Probe) != 2 || h.Probe[0].GFLOPS <= 0 || h.Probe[1].GFLOPS <= 0 {
				t.Errorf("%s F=%d: probe %+v", engine, f, h.Probe)
			}
			t.Logf("%s F=%d: kernel %.3f h2d %.3f d2h %.3f GPU %.3f CPU %.3f overall %.3f ms; probe %+v",
				engine, f, h.KernelMS, h.H2DMS, h.D2HMS, h.GPUMS, h.CPUMS, h.OverallMS, h.Probe)
		}
	}
}
