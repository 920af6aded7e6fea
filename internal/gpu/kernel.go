//go:generate go run ./testdata/mkptx.go

package gpu

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"math"
	"strings"
	"unsafe"

	"gorgonia.org/cu"

	"tilegen/internal/protocol"
	"tilegen/internal/variant"
)

// defaultDynamicSharedLimit is the dynamic shared memory a launch may use without opting in.
const defaultDynamicSharedLimit = 48 << 10

// loadModule JIT-compiles PTX for this device, reusing a module already loaded from the same text
// (interleaved re-measurement sends the same kernel again). A JIT failure carries ptxas's log.
func (w *Worker) loadModule(ptx string) (cu.Module, error) {
	key := sha256.Sum256([]byte(ptx))
	if m, ok := w.modules[key]; ok {
		return m, nil
	}
	m, err := jit(ptx)
	if err != nil {
		return cu.Module{}, fmt.Errorf("loading PTX: %w", err)
	}
	w.modules[key] = m
	return m, nil
}

// jit has the driver compile and load one PTX module in the calling thread's context; a failure
// carries ptxas's log.
func jit(ptx string) (cu.Module, error) {
	errLog := &cu.JITErrorLogBuffer{Buffer: make([]byte, 16<<10)}
	m, err := cu.LoadDataEx(ptx, errLog)
	if err != nil {
		if msg := strings.TrimSpace(string(bytes.TrimRight(errLog.Buffer, "\x00"))); msg != "" {
			err = fmt.Errorf("%w: %s", err, msg)
		}
	}
	return m, err
}

// kernel is a loaded variant ready to launch on a device of sms multiprocessors (the split-K rule
// of a grid_z: auto variant chooses its grid z from them).
type kernel struct {
	fn  cu.Function
	v   variant.Variant
	sms int
}

// grid is the kernel's launch grid for an M×N×K problem (variant.Variant.Grid on this device).
func (k *kernel) grid(m, n, kk int) (x, y, z int) { return k.v.Grid(m, n, kk, k.sms) }

// loadKernel loads the variant's function and prepares it for its dynamic shared memory.
func (w *Worker) loadKernel(k *protocol.Kernel) (*kernel, error) {
	mod, err := w.loadModule(k.PTX)
	if err != nil {
		return nil, err
	}
	fn, err := mod.Function(k.Variant.Name)
	if err != nil {
		return nil, fmt.Errorf("PTX has no kernel %q: %w", k.Variant.Name, err)
	}
	// The default limit covers static plus dynamic shared memory: beyond it the function must opt in.
	static, err := fn.Attribute(cu.SharedSizeBytes)
	if err != nil {
		return nil, fmt.Errorf("function attribute %v: %w", cu.SharedSizeBytes, err)
	}
	if k.Variant.DynamicShared+static > defaultDynamicSharedLimit {
		if err := setMaxDynamicShared(fn, k.Variant.DynamicShared); err != nil {
			return nil, err
		}
	}
	return &kernel{fn: fn, v: k.Variant, sms: w.info.SMs}, nil
}

// attributes reads the driver's view of the function and its occupancy on an M×N×K problem (a
// batch of them when batch > 0).
func (w *Worker) attributes(k *kernel, m, n, kk, batch int) (*protocol.Attributes, error) {
	a := &protocol.Attributes{}
	for _, f := range []struct {
		attr cu.FunctionAttribute
		dst  *int
	}{
		{cu.NumRegs, &a.Registers}, {cu.SharedSizeBytes, &a.SharedStatic},
		{cu.LocalSizeBytes, &a.LocalBytes}, {cu.FnMaxThreadsPerBlock, &a.MaxThreadsPerBlock},
	} {
		v, err := k.fn.Attribute(f.attr)
		if err != nil {
			return nil, fmt.Errorf("function attribute %v: %w", f.attr, err)
		}
		*f.dst = v
	}
	if t := k.v.Threads(); t > a.MaxThreadsPerBlock {
		return a, fmt.Errorf("block of %d threads exceeds the kernel's limit of %d (registers: %d)",
			t, a.MaxThreadsPerBlock, a.Registers)
	}
	bps, err := k.fn.MaxActiveBlocksPerMultiProcessor(k.v.Threads(), int64(k.v.DynamicShared))
	if err != nil {
		return nil, fmt.Errorf("occupancy: %w", err)
	}
	a.BlocksPerSM = bps
	gx, gy, gz := k.grid(m, n, kk)
	gz *= max(batch, 1)
	a.Blocks = gx * gy * gz
	if bps > 0 && w.info.SMs > 0 {
		a.Waves = float64(a.Blocks) / float64(w.info.SMs*bps)
	}
	if bps == 0 {
		return a, fmt.Errorf("kernel cannot be resident: 0 blocks per SM with %d threads and %d bytes of dynamic shared memory",
			k.v.Threads(), k.v.DynamicShared)
	}
	return a, nil
}

// batchArgs are a launch's arguments beyond BLAS's: a strided batch (the number of products and
// the element strides between their matrices; count 0: one unbatched product, strides unused) and
// the bias vector of a fused epilogue (0 without one).
type batchArgs struct {
	count      int
	sa, sb, sc int64
	bias       cu.DevicePtr
}

// gemmFunc enqueues C = alpha·op(A)·op(B) + beta·C on the worker's stream (row-major, leading
// dimensions in elements; the op is the kernel's or, for cuBLAS, chosen when the function is made),
// or a strided batch of them; it does not wait.
type gemmFunc func(m, n, k int, alpha float32, a cu.DevicePtr, lda int, b cu.DevicePtr, ldb int,
	beta float32, c cu.DevicePtr, ldc int, bt batchArgs) error

// gemm returns the launcher of a variant per the shared kernel contract: a batched variant gets the
// strides as three more parameters and the batch in grid z (GridZ per product); a variant with an
// epilogue gets the bias pointer last (variant.EpilogueSignature).
func (w *Worker) gemm(k *kernel) gemmFunc {
	return func(m, n, kk int, alpha float32, a cu.DevicePtr, lda int, b cu.DevicePtr, ldb int,
		beta float32, c cu.DevicePtr, ldc int, bt batchArgs) error {
		if k.v.Batched != (bt.count > 0) {
			return fmt.Errorf("variant %s (batched %v) launched with a batch of %d", k.v.Name, k.v.Batched, bt.count)
		}
		gx, gy, gz := k.grid(m, n, kk)
		gz *= max(bt.count, 1)
		if err := variant.CheckGrid(gx, gy, gz); err != nil {
			return fmt.Errorf("variant %s on %dx%dx%d: %w", k.v.Name, m, n, kk, err)
		}
		args := newArgs().i32(m).i32(n).i32(kk).f32(alpha).ptr(a).i32(lda).ptr(b).i32(ldb).f32(beta).ptr(c).i32(ldc)
		if k.v.Batched {
			args.i64(bt.sa).i64(bt.sb).i64(bt.sc)
		}
		if k.v.Epilogue.HasBias() {
			if bt.bias == 0 {
				return fmt.Errorf("variant %s (epilogue %s) launched without a bias", k.v.Name, k.v.Epilogue)
			}
			args.ptr(bt.bias)
		}
		return launchErr(k.fn.Launch(gx, gy, gz, k.v.Block.X, k.v.Block.Y, 1, k.v.DynamicShared, w.stream, args.pointers()))
	}
}

// args holds kernel arguments one per 8-byte slot: cu's Launch copies 8 bytes per argument and the
// driver takes each parameter's own size from the front of its slot (little-endian).
type args struct{ slots []uint64 }

func newArgs() *args { return &args{} }

func (a *args) i32(v int) *args {
	a.slots = append(a.slots, uint64(uint32(int32(v))))
	return a
}

func (a *args) i64(v int64) *args {
	a.slots = append(a.slots, uint64(v))
	return a
}

func (a *args) f32(v float32) *args {
	a.slots = append(a.slots, uint64(*(*uint32)(unsafe.Pointer(&v))))
	return a
}

func (a *args) f64(v float64) *args {
	a.slots = append(a.slots, math.Float64bits(v))
	return a
}

func (a *args) ptr(p cu.DevicePtr) *args {
	a.slots = append(a.slots, uint64(p))
	return a
}

func (a *args) pointers() []unsafe.Pointer {
	ps := make([]unsafe.Pointer, len(a.slots))
	for i := range a.slots {
		ps[i] = unsafe.Pointer(&a.slots[i])
	}
	return ps
}

// launchErr classifies a launch error: most are about the launch configuration and leave the
// context usable; a sticky one (an earlier asynchronous fault surfacing) does not.
func launchErr(err error) error {
	if err == nil {
		return nil
	}
	if sticky(err) {
		return &FatalError{Err: fmt.Errorf("launch: %w", err)}
	}
	return fmt.Errorf("launch: %w", err)
}

// sticky reports whether err is one of the driver errors after which the context is unusable.
func sticky(err error) bool {
	for _, e := range []error{cu.IllegalAddress, cu.LaunchFailed, cu.HardwareStackError, cu.IllegalInstruction,
		cu.MisalignedAddress, cu.InvalidAddressSpace, cu.InvalidPc, cu.Assert, cu.LaunchTimeout,
		cu.EccUncorrectable, cu.ContextIsDestroyed} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// sync waits for the stream. Any error here is the asynchronous report of a kernel fault, and
// after one the context cannot be trusted: always fatal.
func (w *Worker) sync(what string) error {
	if err := w.stream.Synchronize(); err != nil {
		return &FatalError{Err: fmt.Errorf("%s: %w", what, err)}
	}
	return nil
}
