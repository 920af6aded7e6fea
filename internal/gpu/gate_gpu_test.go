//go:build gpu

package gpu

import (
	"runtime"
	"testing"
	"time"

	"gorgonia.org/cu"

	"tilegen/generated"
	"tilegen/internal/protocol"
)

// TestGateTimesTheGPUAlone: a "kernel" whose host call sleeps before it queues a short memset (a
// host that falls behind the GPU: descheduled, or a slow library call) times as the memset under the
// gate, and as the host's delay without it. The gate is what keeps host contention (other workers,
// the JIT helpers compiling alongside the measurements) out of the timings.
func TestGateTimesTheGPUAlone(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	ptx, err := generated.SupportPTX("gate")
	if err != nil {
		t.Fatal(err)
	}
	w, err := Open(Options{Ordinal: 0, GatePTX: ptx})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if w.gate == nil {
		t.Fatal("no gate: mapped host memory unavailable?")
	}
	const delay = 2 * time.Millisecond
	slowHost := func(m, n, k int, alpha float32, a cu.DevicePtr, lda int, b cu.DevicePtr, ldb int, beta float32, c cu.DevicePtr,
		ldc int, bt batchArgs) error {
		time.Sleep(delay)
		return cu.MemsetD32Async(c, 0, int64(m*n), w.stream)
	}
	s := protocol.Shape{M: 64, N: 64, K: 1}
	ts := &protocol.TimingSettings{Warmup: 1, Reps: 12, MaxReps: 12}
	gated, err := w.time(slowHost, s, ts)
	if err != nil {
		t.Fatal(err)
	}
	g := w.gate
	w.gate = nil
	ungated, err := w.time(slowHost, s, ts)
	w.gate = g
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("median gated %.4f ms, ungated %.4f ms (host delay %v per launch)", gated.MedianMS, ungated.MedianMS, delay)
	if gated.MedianMS > 0.2 {
		t.Errorf("gated median %.4f ms: the host's %v delay leaked into the GPU time", gated.MedianMS, delay)
	}
	if ungated.MedianMS < 1 {
		t.Errorf("ungated median %.4f ms: the test's host delay did not reach the events (the test proves nothing)", ungated.MedianMS)
	}
	// A batch the host never releases costs the gate's timeout, not a hang.
	start := time.Now()
	if err := w.gate.hold(w.stream); err != nil {
		t.Fatal(err)
	}
	if err := w.sync("gate timeout"); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el < gateTimeoutNS*time.Nanosecond/2 || el > 10*gateTimeoutNS*time.Nanosecond {
		t.Errorf("an unreleased gate held the stream %v (timeout %v)", el, gateTimeoutNS*time.Nanosecond)
	}
}
