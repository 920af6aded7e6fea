package gpu

// Out-of-core GEMM (protocol.OpOutOfCore): host matrices larger than the device budget, streamed
// through double-buffered device blocks on three streams (host→device copies, kernels,
// device→host copies) ordered by events. The plan comes from tilegen/internal/ooc.

//#cgo LDFLAGS: -lcuda
//#include <cuda.h>
//#include <stdlib.h>
import "C"

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
	"unsafe"

	"gorgonia.org/cu"

	"tilegen/internal/ooc"
	"tilegen/internal/protocol"
	"tilegen/internal/results"
	"tilegen/internal/stats"
	"tilegen/internal/variant"
	"tilegen/internal/verify"
)

// hostMatrix is a float32 host buffer in C memory: page-locked (cuMemHostAlloc) when the driver
// grants it, so that copies are asynchronous DMA, else malloc'd pageable memory.
type hostMatrix struct {
	data   []float32
	ptr    unsafe.Pointer
	pinned bool
}

// allocHost allocates n floats, pinned if possible; the note says why it is not.
func allocHost(n int64) (*hostMatrix, string, error) {
	if n <= 0 {
		return &hostMatrix{}, "", nil
	}
	var p unsafe.Pointer
	r := C.cuMemHostAlloc(&p, C.size_t(n*4), 0)
	if r == C.CUDA_SUCCESS {
		return &hostMatrix{data: unsafe.Slice((*float32)(p), n), ptr: p, pinned: true}, "", nil
	}
	note := fmt.Sprintf("pinned allocation of %s failed (%s): pageable memory, copies are not overlapped", ooc.Bytes(n*4), resultName(r))
	if p = C.malloc(C.size_t(n * 4)); p == nil {
		return nil, note, fmt.Errorf("allocating %s of host memory failed", ooc.Bytes(n*4))
	}
	return &hostMatrix{data: unsafe.Slice((*float32)(p), n), ptr: p}, note, nil
}

func (h *hostMatrix) free() {
	if h == nil || h.ptr == nil {
		return
	}
	if h.pinned {
		C.cuMemFreeHost(h.ptr)
	} else {
		C.free(h.ptr)
	}
	h.ptr, h.data = nil, nil
}

// copy2D enqueues a copy of rows×cols floats between host (row pitch hp floats, starting at
// element offset ho) and device (pitch dp floats) on s. (cu's Memcpy2DAsync cannot be used: its
// parameter conversion dereferences the unused CUarray handle.) Host memory is always C memory
// (pinned, or malloc'd pageable), so the descriptor holds no Go pointer.
func copy2D(toDevice bool, host []float32, ho int64, hp int, dev cu.DevicePtr, dp int, rows, cols int, s cu.Stream) error {
	var p C.CUDA_MEMCPY2D
	p.WidthInBytes, p.Height = C.size_t(cols*4), C.size_t(rows)
	hptr := unsafe.Pointer(&host[ho])
	what := "host to device"
	if toDevice {
		p.srcMemoryType, p.srcHost, p.srcPitch = C.CU_MEMORYTYPE_HOST, hptr, C.size_t(hp*4)
		p.dstMemoryType, p.dstDevice, p.dstPitch = C.CU_MEMORYTYPE_DEVICE, C.CUdeviceptr(dev), C.size_t(dp*4)
	} else {
		what = "device to host"
		p.srcMemoryType, p.srcDevice, p.srcPitch = C.CU_MEMORYTYPE_DEVICE, C.CUdeviceptr(dev), C.size_t(dp*4)
		p.dstMemoryType, p.dstHost, p.dstPitch = C.CU_MEMORYTYPE_HOST, hptr, C.size_t(hp*4)
	}
	if r := C.cuMemcpy2DAsync(&p, C.CUstream(streamHandle(s))); r != C.CUDA_SUCCESS {
		return &FatalError{Err: fmt.Errorf("copy %s: cuMemcpy2DAsync: %s", what, resultName(r))}
	}
	return nil
}

// launchOn launches a variant on stream s per the shared kernel contract.
func launchOn(k *kernel, s cu.Stream, m, n, kk int, alpha float32, a cu.DevicePtr, lda int, b cu.DevicePtr, ldb int,
	beta float32, c cu.DevicePtr, ldc int) error {
	gx, gy, gz := k.grid(m, n, kk)
	args := newArgs().i32(m).i32(n).i32(kk).f32(alpha).ptr(a).i32(lda).ptr(b).i32(ldb).f32(beta).ptr(c).i32(ldc)
	return launchErr(k.fn.Launch(gx, gy, gz, k.v.Block.X, k.v.Block.Y, 1, k.v.DynamicShared, s, args.pointers()))
}

// eventRing is how many steps' timing events are in flight before the oldest is read back.
const eventRing = 64

// makeEvents creates n events with the given flags; destroy them with destroyEvents.
func makeEvents(n int, flags cu.EventFlags) ([]cu.Event, error) {
	evs := make([]cu.Event, n)
	for i := range evs {
		var err error
		if evs[i], err = cu.MakeEvent(flags); err != nil {
			destroyEvents(evs[:i])
			return nil, fmt.Errorf("creating events: %w", err)
		}
	}
	return evs, nil
}

func destroyEvents(evs []cu.Event) {
	for i := range evs {
		_ = cu.DestroyEvent(&evs[i])
	}
}

// elapsed waits for stop and returns stop−start in milliseconds.
func elapsed(start, stop cu.Event) (float64, error) {
	if err := stop.Synchronize(); err != nil {
		return 0, &FatalError{Err: fmt.Errorf("waiting for an event: %w", err)}
	}
	ms, err := start.Elapsed(stop)
	if err != nil {
		return 0, fmt.Errorf("reading event times: %w", err)
	}
	return float64(ms), nil
}

// genHost allocates A (M×K), B (K×N) and C (M×N) on the host, pinned where possible, and fills A and
// B from the seed in parallel.
func genHost(m, n, k int, seed uint64) (mats [3]*hostMatrix, pinned bool, note string, allocMS, genMS float64, err error) {
	t0 := time.Now()
	var notes []string
	pinned = true
	for i, sz := range []int64{int64(m) * int64(k), int64(k) * int64(n), int64(m) * int64(n)} {
		var nt string
		mats[i], nt, err = allocHost(sz)
		if err != nil {
			for _, x := range mats[:i] {
				x.free()
			}
			return mats, false, "", 0, 0, err
		}
		if nt != "" {
			pinned = false
			notes = append(notes, "ABC"[i:i+1]+": "+nt)
		}
	}
	allocMS = msSince(t0)
	t1 := time.Now()
	ooc.Fill(mats[0].data, seed, ooc.StreamA, 0)
	ooc.Fill(mats[1].data, seed, ooc.StreamB, 0)
	genMS = msSince(t1)
	return mats, pinned, strings.Join(notes, "; "), allocMS, genMS, nil
}

func msSince(t time.Time) float64 { return float64(time.Since(t).Nanoseconds()) / 1e6 }

// checkHostC verifies C: every element on small runs, else the crossings of sampled rows and
// columns (always including the given extra rows and columns, e.g. block edges).
func checkHostC(m, n, k int, a, b, c []float32, seed uint64, samples int, fullMax, tolFactor float64, extraRows, extraCols []int) (ooc.Check, error) {
	scale := verify.Scale(tolFactor, k)
	if 2*float64(m)*float64(n)*float64(k) <= fullMax {
		return ooc.CheckFull(m, n, k, a, k, b, n, c, n, scale)
	}
	rnd := verify.Rand(seed ^ 0x5a3b1e)
	rows := merge(ooc.SampleIndices(rnd, m, samples), extraRows, m)
	cols := merge(ooc.SampleIndices(rnd, n, samples), extraCols, n)
	return ooc.CheckSample(m, n, k, a, k, b, n, c, n, rows, cols, scale), nil
}

// merge adds the in-range extra indices to a sorted index list.
func merge(idx, extra []int, d int) []int {
	seen := map[int]bool{}
	for _, i := range idx {
		seen[i] = true
	}
	for _, i := range extra {
		if i >= 0 && i < d {
			seen[i] = true
		}
	}
	out := make([]int, 0, len(seen))
	for i := range seen {
		out = append(out, i)
	}
	sort.Ints(out)
	return out
}

// outOfCore handles OpOutOfCore.
func (w *Worker) outOfCore(req protocol.Request, resp *protocol.Response) error {
	o, s := req.OutOfCore, req.Shape
	if o == nil || req.Kernel == nil {
		return fmt.Errorf("outofcore request without settings or kernel")
	}
	v := req.Kernel.Variant
	if v.Op != variant.OpNN || s.Op != variant.OpNN || v.Batched || s.Batch > 0 || v.Epilogue != variant.EpiNone || s.Epilogue != variant.EpiNone {
		return fmt.Errorf("out-of-core runs one NN product (variant %s computes %s, batched %v; the problem is %s)", v.Name, v.Op, v.Batched, results.ShapeString(s))
	}
	if err := v.Supports(s.M, s.N, s.K, s.K, s.N, s.N); err != nil {
		return fmt.Errorf("variant %s does not support %dx%dx%d: %w", v.Name, s.M, s.N, s.K, err)
	}
	free, _, err := cu.MemInfo()
	if err != nil {
		return fmt.Errorf("reading free device memory: %w", err)
	}
	res := &protocol.OutOfCoreResult{DeviceFree: free, HostBytes: ooc.HostBytes(s.M, s.N, s.K)}
	resp.OutOfCoreResult = res
	if res.Budget, err = ooc.DeviceBudget(o.Budget, free); err != nil {
		return err
	}
	plan, err := ooc.NewPlan(s.M, s.N, s.K, ooc.Options{Budget: res.Budget, Align: ooc.AlignOf(&v), MinSliceK: o.MinSliceK})
	if err != nil {
		return err
	}
	res.BM, res.BN, res.BK = plan.BM, plan.BN, plan.BK
	res.BlocksM, res.BlocksN, res.SlicesK, res.Steps = plan.BlocksM, plan.BlocksN, plan.SlicesK, plan.Steps()
	res.DeviceBytes, res.H2DBytes, res.D2HBytes = plan.DeviceBytes, plan.H2DBytes, plan.D2HBytes
	if err := plan.CheckVariant(&v); err != nil {
		return err
	}
	if err := ooc.HostFits(s.M, s.N, s.K); err != nil {
		return err
	}
	k, err := w.loadKernel(req.Kernel)
	if err != nil {
		return fmt.Errorf("variant %s: %w", v.Name, err)
	}
	mats, pinned, note, allocMS, genMS, err := genHost(s.M, s.N, s.K, o.Seed)
	if err != nil {
		return err
	}
	ha, hb, hc := mats[0], mats[1], mats[2]
	defer ha.free()
	defer hb.free()
	defer hc.free()
	res.HostPinned, res.HostNote, res.AllocMS, res.GenerateMS = pinned, note, allocMS, genMS

	if err := w.runPlan(plan, k, ha.data, hb.data, hc.data, o.BlockReps, res); err != nil {
		return err
	}
	res.BoundMS, res.BoundBy = res.KernelMS, "compute"
	if res.H2DMS > res.BoundMS {
		res.BoundMS, res.BoundBy = res.H2DMS, "host→device copies"
	}
	if res.D2HMS > res.BoundMS {
		res.BoundMS, res.BoundBy = res.D2HMS, "device→host copies"
	}
	var edgeRows, edgeCols []int
	for b := range plan.Blocks() {
		i0, rows, j0, cols := plan.Block(b)
		edgeRows = append(edgeRows, i0, i0+rows-1)
		edgeCols = append(edgeCols, j0, j0+cols-1)
	}
	chk, err := checkHostC(s.M, s.N, s.K, ha.data, hb.data, hc.data, o.Seed, o.Samples, o.FullCheckMaxFlops, o.TolFactor, edgeRows, edgeCols)
	if err != nil {
		return err
	}
	res.Check = protocol.ElementCheck(chk)
	res.Pass, res.Reason = chk.Pass(), chk.Reason()
	if o.CompareInCore {
		cmp, ms, err := w.inCore(k, s.M, s.N, s.K, ha.data, hb.data, hc.data)
		if err != nil {
			return fmt.Errorf("in-core comparison: %w", err)
		}
		res.InCore, res.InCoreMS = cmp, ms
	}
	return nil
}

// runPlan runs the plan: for each C block (row-major) and K slice, copy the A and B slices into the
// step's slice buffers (h2d stream, after the kernel that last used them), accumulate the block GEMM
// into the block's C buffer (compute stream, after the upload and, on a block's first slice, after
// the download that last used the C buffer), and after a block's last slice copy the block out
// (d2h stream). Timing events are read back eventRing steps behind.
func (w *Worker) runPlan(p ooc.Plan, k *kernel, a, b, c []float32, blockReps int, res *protocol.OutOfCoreResult) error {
	var ar arena
	defer ar.free()
	dA, dB, dC := make([]cu.DevicePtr, p.SliceBuffers), make([]cu.DevicePtr, p.SliceBuffers), make([]cu.DevicePtr, p.CBuffers)
	for i := range p.SliceBuffers {
		var err error
		if dA[i], err = ar.alloc(4 * int64(p.BM) * int64(p.BK)); err != nil {
			return err
		}
		if dB[i], err = ar.alloc(4 * int64(p.BK) * int64(p.BN)); err != nil {
			return err
		}
	}
	for i := range p.CBuffers {
		var err error
		if dC[i], err = ar.alloc(4 * int64(p.BM) * int64(p.BN)); err != nil {
			return err
		}
	}
	var streams [3]cu.Stream
	for i := range streams {
		var err error
		if streams[i], err = cu.MakeStream(cu.NonBlocking); err != nil {
			return fmt.Errorf("creating a stream: %w", err)
		}
		defer streams[i].Destroy()
	}
	h2d, comp, d2h := streams[0], streams[1], streams[2]
	// Ordering events: uploaded/computed per slice buffer, blockDone/downloaded per C buffer.
	order, err := makeEvents(2*p.SliceBuffers+2*p.CBuffers, cu.DisableTiming)
	if err != nil {
		return err
	}
	defer destroyEvents(order)
	uploaded, computed := order[:p.SliceBuffers], order[p.SliceBuffers:2*p.SliceBuffers]
	blockDone, downloaded := order[2*p.SliceBuffers:2*p.SliceBuffers+p.CBuffers], order[2*p.SliceBuffers+p.CBuffers:]
	// Timing events: per step (upload pair, kernel pair) and per block (download pair).
	tev, err := makeEvents(6*eventRing, cu.DefaultEvent)
	if err != nil {
		return err
	}
	defer destroyEvents(tev)
	stepEv := func(t int) []cu.Event { x := (t % eventRing) * 4; return tev[x : x+4] }
	blockEv := func(b int) []cu.Event { x := 4*eventRing + (b%eventRing)*2; return tev[x : x+2] }
	readStep := func(t int) error {
		e := stepEv(t)
		up, err := elapsed(e[0], e[1])
		if err != nil {
			return err
		}
		kr, err := elapsed(e[2], e[3])
		if err != nil {
			return err
		}
		res.H2DMS += up
		res.KernelMS += kr
		return nil
	}
	readBlock := func(b int) error {
		e := blockEv(b)
		ms, err := elapsed(e[0], e[1])
		res.D2HMS += ms
		return err
	}

	start := time.Now()
	for blk := range p.Blocks() {
		i0, rows, j0, cols := p.Block(blk)
		cs := blk % p.CBuffers
		if blk >= eventRing {
			if err := readBlock(blk - eventRing); err != nil {
				return err
			}
		}
		for sl := range p.SlicesK {
			t := blk*p.SlicesK + sl
			ss := t % p.SliceBuffers
			if t >= eventRing {
				if err := readStep(t - eventRing); err != nil {
					return err
				}
			}
			k0, depth := p.Slice(sl)
			e := stepEv(t)
			if t >= p.SliceBuffers {
				if err := h2d.Wait(computed[ss], 0); err != nil {
					return fmt.Errorf("stream wait: %w", err)
				}
			}
			if err := e[0].Record(h2d); err != nil {
				return fmt.Errorf("recording event: %w", err)
			}
			if err := copy2D(true, a, int64(i0)*int64(p.K)+int64(k0), p.K, dA[ss], p.BK, rows, depth, h2d); err != nil {
				return err
			}
			if err := copy2D(true, b, int64(k0)*int64(p.N)+int64(j0), p.N, dB[ss], p.BN, depth, cols, h2d); err != nil {
				return err
			}
			if err := firstErr(e[1].Record(h2d), uploaded[ss].Record(h2d), comp.Wait(uploaded[ss], 0)); err != nil {
				return fmt.Errorf("ordering the upload: %w", err)
			}
			if sl == 0 && blk >= p.CBuffers {
				if err := comp.Wait(downloaded[cs], 0); err != nil {
					return fmt.Errorf("stream wait: %w", err)
				}
			}
			beta := float32(1)
			if sl == 0 {
				beta = 0 // the C buffer still holds the previous block: not read
			}
			if err := e[2].Record(comp); err != nil {
				return fmt.Errorf("recording event: %w", err)
			}
			if err := launchOn(k, comp, rows, cols, depth, 1, dA[ss], p.BK, dB[ss], p.BN, beta, dC[cs], p.BN); err != nil {
				return err
			}
			if err := firstErr(e[3].Record(comp), computed[ss].Record(comp)); err != nil {
				return fmt.Errorf("recording event: %w", err)
			}
		}
		be := blockEv(blk)
		if err := firstErr(blockDone[cs].Record(comp), d2h.Wait(blockDone[cs], 0), be[0].Record(d2h)); err != nil {
			return fmt.Errorf("ordering the download: %w", err)
		}
		if err := copy2D(false, c, int64(i0)*int64(p.N)+int64(j0), p.N, dC[cs], p.BN, rows, cols, d2h); err != nil {
			return err
		}
		if err := firstErr(be[1].Record(d2h), downloaded[cs].Record(d2h)); err != nil {
			return fmt.Errorf("recording event: %w", err)
		}
	}
	for _, st := range streams {
		if err := st.Synchronize(); err != nil {
			return &FatalError{Err: fmt.Errorf("out-of-core pipeline: %w", err)}
		}
	}
	res.WallMS = msSince(start)
	for t := max(p.Steps()-eventRing, 0); t < p.Steps(); t++ {
		if err := readStep(t); err != nil {
			return err
		}
	}
	for blk := max(p.Blocks()-eventRing, 0); blk < p.Blocks(); blk++ {
		if err := readBlock(blk); err != nil {
			return err
		}
	}
	if blockReps > 0 {
		ms, err := timeBlock(k, comp, p, dA[0], dB[0], dC[0], blockReps)
		if err != nil {
			return fmt.Errorf("timing the block in device memory: %w", err)
		}
		res.BlockMS = ms
	}
	return nil
}

// timeBlock times the variant on the plan's full block GEMM (BM×BN×BK with the step's buffers and
// pitches, β = 0) reps times after one warm-up, in device memory, and returns the median.
func timeBlock(k *kernel, s cu.Stream, p ooc.Plan, a, b, c cu.DevicePtr, reps int) (float64, error) {
	ev, err := makeEvents(2, cu.DefaultEvent)
	if err != nil {
		return 0, err
	}
	defer destroyEvents(ev)
	times := make([]float64, 0, reps)
	for i := range reps + 1 {
		if err := ev[0].Record(s); err != nil {
			return 0, fmt.Errorf("recording event: %w", err)
		}
		if err := launchOn(k, s, p.BM, p.BN, p.BK, 1, a, p.BK, b, p.BN, 0, c, p.BN); err != nil {
			return 0, err
		}
		if err := ev[1].Record(s); err != nil {
			return 0, fmt.Errorf("recording event: %w", err)
		}
		ms, err := elapsed(ev[0], ev[1])
		if err != nil {
			return 0, err
		}
		if i > 0 {
			times = append(times, ms)
		}
	}
	return stats.Median(times), nil
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// inCore runs the variant once on the whole problem in device memory and compares every element
// with the out-of-core C; it returns the comparison and the kernel's time.
func (w *Worker) inCore(k *kernel, m, n, kk int, a, b, c []float32) (*protocol.ResultCompare, float64, error) {
	var ar arena
	defer ar.free()
	dA, err := ar.upload(w.stream, a[:m*kk])
	if err != nil {
		return nil, 0, err
	}
	dB, err := ar.upload(w.stream, b[:kk*n])
	if err != nil {
		return nil, 0, err
	}
	dC, err := ar.alloc(4 * int64(m) * int64(n))
	if err != nil {
		return nil, 0, err
	}
	ev, err := makeEvents(2, cu.DefaultEvent)
	if err != nil {
		return nil, 0, err
	}
	defer destroyEvents(ev)
	if err := ev[0].Record(w.stream); err != nil {
		return nil, 0, fmt.Errorf("recording event: %w", err)
	}
	if err := w.gemm(k)(m, n, kk, 1, dA, kk, dB, n, 0, dC, n, batchArgs{}); err != nil {
		return nil, 0, err
	}
	if err := ev[1].Record(w.stream); err != nil {
		return nil, 0, fmt.Errorf("recording event: %w", err)
	}
	ms, err := elapsed(ev[0], ev[1])
	if err != nil {
		return nil, 0, err
	}
	full := make([]float32, m*n)
	if err := ar.download(w.stream, full, dC); err != nil {
		return nil, 0, err
	}
	d := ooc.Diff(m, n, c, n, full, n)
	cmp := protocol.ResultCompare(d)
	if math.IsNaN(cmp.MaxAbs) {
		cmp.MaxAbs = math.MaxFloat64
	}
	return &cmp, ms, nil
}
