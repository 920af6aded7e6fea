package gpu

import (
	"fmt"

	"gorgonia.org/cu"

	"tilegen/internal/protocol"
)

// Peak probe geometry: 8 resident 256-thread blocks per SM (2048 threads, the SM's maximum) keep
// every scheduler's FFMA pipe fed; 8 independent chains per thread (TG_PEAK_CHAINS in
// templates/support/peak.cu.tmpl) hide the FFMA latency; 8192 iterations make one launch ~1 ms on
// an H100, long against launch overhead.
const (
	peakThreads      = 256
	peakBlocksPerSM  = 8
	peakChains       = 8
	peakIters        = 8192
	peakKernelSymbol = "tilegen_peak_ffma"
)

// peak times the FFMA throughput probe with the request's timing settings. It reuses the GEMM
// timing loop through a launcher that ignores the (1×1×1) problem it is handed.
func (w *Worker) peak(req protocol.Request, resp *protocol.Response) error {
	if req.Kernel == nil || req.Timing == nil {
		return fmt.Errorf("peak: request needs the probe module (kernel) and timing settings")
	}
	mod, err := w.loadModule(req.Kernel.PTX)
	if err != nil {
		return err
	}
	fn, err := mod.Function(peakKernelSymbol)
	if err != nil {
		return fmt.Errorf("peak: module has no %s: %w", peakKernelSymbol, err)
	}
	var ar arena
	defer ar.free()
	out, err := ar.alloc(4)
	if err != nil {
		return err
	}
	blocks := w.info.SMs * peakBlocksPerSM
	launch := func(_, _, _ int, _ float32, _ cu.DevicePtr, _ int, _ cu.DevicePtr, _ int, _ float32, _ cu.DevicePtr, _ int, _ batchArgs) error {
		args := newArgs().ptr(out).i32(peakIters)
		return launchErr(fn.Launch(blocks, 1, 1, peakThreads, 1, 1, 0, w.stream, args.pointers()))
	}
	t, err := w.time(launch, protocol.Shape{M: 1, N: 1, K: 1}, req.Timing)
	if err != nil {
		return fmt.Errorf("peak: %w", err)
	}
	flops := 2 * float64(peakChains) * peakIters * peakThreads * float64(blocks)
	resp.Peak = &protocol.PeakResult{
		Blocks: blocks, Threads: peakThreads, Iters: peakIters, Chains: peakChains,
		FlopsPerLaunch: flops, GFLOPS: flops / (t.MedianMS * 1e-3) / 1e9, Timing: t,
	}
	return nil
}
