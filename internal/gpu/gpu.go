// Package gpu is tilegen's GPU worker: it owns one CUDA device through gorgonia.org/cu (and is the
// only package that links CUDA), speaks the worker side of internal/protocol, and verifies and
// times generated kernels and the cuBLAS baseline.
//
// Threading: CUDA contexts are current per OS thread, so Open and every later call on the Worker
// must come from one goroutine locked to its thread (runtime.LockOSThread). The worker uses the
// device's primary context: it is the context the CUDA runtime inside cuBLAS would pick anyway, so
// generated kernels and cuBLAS share memory, stream and context without interop questions.
//
// Per request (protocol.OpRun): the PTX is JIT-loaded (the JIT error log becomes the failure
// reason), the function's attributes and occupancy are read, the kernel is verified against a
// float64 GPU reference (fresh seeded inputs per check; NaN-poisoned C; a sub-matrix check with
// random alpha, beta ≠ 0, padded leading dimensions and sentinel padding that must stay
// untouched; inputs, expectation and comparison on the device, check.go), and only then timed
// with one CUDA event pair per launch. OpCublas does the same for cuBLAS's SGEMM. See
// internal/verify for the tolerance.
//
// Faults: a kernel that faults (illegal address, ...) leaves the context unusable. The worker
// answers that request with an Error describing the fault and Serve returns a *FatalError, on which
// the process must exit non-zero; the orchestrator starts a fresh worker. A kernel that never ends
// blocks the worker; the orchestrator's watchdog kills it.
package gpu

import (
	"bufio"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"gorgonia.org/cu"

	"tilegen/internal/protocol"
)

// Options configure a Worker.
type Options struct {
	// Ordinal is the CUDA device number.
	Ordinal int
	// ReferencePTX is the module holding the float64 reference kernel "reference"
	// (templates/support/reference.cu.tmpl). Without it the worker can time but not verify.
	ReferencePTX string
	// EpiloguePTX is the module holding "tilegen_bias_act" (templates/support/epilogue.cu.tmpl),
	// the separate epilogue pass of the cublas+epilogue baseline. Without it cuBLAS on a shape with
	// an epilogue is skipped with a note.
	EpiloguePTX string
	// GatePTX is the module holding "tilegen_gate" (templates/support/gate.cu.tmpl), which holds the
	// stream while a batch of timed launches is queued (timing.go). Without it batches run ungated.
	GatePTX string
}

// FatalError marks a failure after which the CUDA context is unusable: the caller must exit.
type FatalError struct{ Err error }

func (e *FatalError) Error() string { return protocol.FatalPrefix + e.Err.Error() }
func (e *FatalError) Unwrap() error { return e.Err }

// Worker is one opened device.
type Worker struct {
	dev     cu.Device
	ctx     cu.CUContext
	stream  cu.Stream
	info    protocol.Device
	ref     *cu.Function // nil without Options.ReferencePTX
	check   *deviceCheck // the device-side comparison (check.go); nil when the reference module has none
	blas    *cublas      // nil when cuBLAS could not be opened
	blasErr error
	epi     *cu.Function // tilegen_bias_act; nil without Options.EpiloguePTX
	gate    *gate        // nil without Options.GatePTX, or when mapped host memory is unavailable
	lt      *cublasLt    // nil when cublasLt could not be opened (ltErr says why)
	ltErr   error
	modules map[[sha256.Size]byte]cu.Module
	// host is a cache of uniform random values the timing inputs are cut from, so that large
	// problems do not pay for random generation on every request.
	host []float32
	// checks caches the inputs and expectations of the latest verification checks (run.go).
	checks []*checkInputs
}

// Open makes the device's primary context current on the calling (locked) thread, loads the
// reference kernel and tries to open cuBLAS.
func Open(opt Options) (*Worker, error) {
	n, err := cu.NumDevices()
	if err != nil {
		return nil, fmt.Errorf("counting devices: %w", err)
	}
	if opt.Ordinal < 0 || opt.Ordinal >= n {
		return nil, fmt.Errorf("device %d does not exist (%d devices)", opt.Ordinal, n)
	}
	w := &Worker{dev: cu.Device(opt.Ordinal), modules: map[[sha256.Size]byte]cu.Module{}}
	if w.ctx, err = w.dev.RetainPrimaryCtx(); err != nil {
		return nil, fmt.Errorf("retaining the primary context of device %d: %w", opt.Ordinal, err)
	}
	if err = cu.SetCurrentContext(w.ctx); err != nil {
		return nil, fmt.Errorf("making the primary context current: %w", err)
	}
	if w.stream, err = cu.MakeStream(cu.NonBlocking); err != nil {
		return nil, fmt.Errorf("creating a stream: %w", err)
	}
	if w.info, err = deviceInfo(w.dev, opt.Ordinal); err != nil {
		return nil, err
	}
	// The support kernels the runner passes (templates/support): each optional, and each an error
	// when given but unusable.
	for _, sup := range []struct {
		ptx, what, kernel string
		set               func(cu.Function)
	}{
		{opt.ReferencePTX, "reference", "reference", func(fn cu.Function) { w.ref = &fn }},
		{opt.EpiloguePTX, "epilogue", "tilegen_bias_act", func(fn cu.Function) { w.epi = &fn }},
		// Without mapped host memory the worker times ungated, as before the gate existed.
		{opt.GatePTX, "gate", "tilegen_gate", func(fn cu.Function) { w.gate, _ = newGate(fn) }},
	} {
		if sup.ptx == "" {
			continue
		}
		mod, err := w.loadModule(sup.ptx)
		if err != nil {
			return nil, fmt.Errorf("loading the %s kernel: %w", sup.what, err)
		}
		fn, err := mod.Function(sup.kernel)
		if err != nil {
			return nil, fmt.Errorf("%s module has no kernel %q: %w", sup.what, sup.kernel, err)
		}
		sup.set(fn)
	}
	if w.ref != nil {
		mod, err := w.loadModule(opt.ReferencePTX) // loaded above: the worker's module cache
		if err != nil {
			return nil, fmt.Errorf("loading the reference kernel: %w", err)
		}
		if w.check, err = newDeviceCheck(mod); err != nil {
			return nil, err
		}
	}
	if w.lt, w.ltErr = openCublasLt(w.stream); w.lt != nil {
		w.info.CublasLtVersion, w.info.CublasLtLibrary = w.lt.Version, w.lt.Path
	}
	if w.blas, w.blasErr = openCublas(w.stream); w.blas != nil {
		w.info.CublasVersion = w.blas.Version
		w.info.CublasLibrary = w.blas.Path
	}
	return w, nil
}

// Device returns the facts reported in the hello.
func (w *Worker) Device() protocol.Device { return w.info }

// Close releases cuBLAS, the modules and the context (best effort: after a fault it cannot).
func (w *Worker) Close() {
	if w.blas != nil {
		w.blas.close()
	}
	if w.lt != nil {
		w.lt.close()
	}
	w.dropChecks()
	if w.check != nil {
		w.check.close()
	}
	if w.gate != nil {
		w.gate.close()
	}
	for _, m := range w.modules {
		_ = m.Unload()
	}
	_ = w.stream.Destroy()
	_ = w.dev.ReleasePrimaryCtx()
}

// Serve writes the hello, then answers each request line on in with one Response line on out,
// in order, until a quit request or EOF (nil). It returns a *FatalError after answering a request
// whose kernel left the context unusable, and other errors when out cannot be written.
func Serve(w *Worker, openErr error, in io.Reader, out io.Writer) error {
	enc := json.NewEncoder(out) // one value per line: Encode appends '\n'
	hello := protocol.Response{Op: protocol.OpHello, Version: protocol.Version}
	if openErr != nil {
		hello.Error = openErr.Error()
		if err := enc.Encode(hello); err != nil {
			return fmt.Errorf("writing hello: %w", err)
		}
		return openErr
	}
	dev := w.Device()
	hello.Device = &dev
	if w.blas == nil && w.blasErr != nil {
		hello.Note = w.blasErr.Error()
	}
	if err := enc.Encode(hello); err != nil {
		return fmt.Errorf("writing hello: %w", err)
	}
	r := bufio.NewReaderSize(in, 1<<20)
	for {
		line, err := readLine(r)
		if errors.Is(err, io.EOF) && len(line) == 0 {
			return nil
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("reading request: %w", err)
		}
		if len(line) == 0 {
			continue
		}
		var req protocol.Request
		var resp protocol.Response
		var fatal error
		if uerr := json.Unmarshal(line, &req); uerr != nil {
			resp = protocol.Response{ID: req.ID, Op: req.Op, Error: fmt.Sprintf("bad request: %v", uerr)}
		} else if req.Op == protocol.OpQuit {
			return enc.Encode(protocol.Response{ID: req.ID, Op: req.Op})
		} else {
			resp, fatal = w.Handle(req)
		}
		b, err := protocol.MarshalResponse(resp)
		if err != nil {
			return err
		}
		if _, err := out.Write(b); err != nil {
			return fmt.Errorf("writing response %d: %w", req.ID, err)
		}
		if fatal != nil {
			return fatal
		}
	}
}

func readLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > protocol.MaxRequestBytes {
			return nil, fmt.Errorf("request line longer than %d bytes", protocol.MaxRequestBytes)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if len(line) > 0 && line[len(line)-1] == '\n' {
			line = line[:len(line)-1]
		}
		return line, err
	}
}

// Handle carries out one request. The second result is non-nil (a *FatalError) when the context
// is unusable afterwards; the Response then already describes the failure.
func (w *Worker) Handle(req protocol.Request) (protocol.Response, error) {
	resp := protocol.Response{ID: req.ID, Op: req.Op}
	var err error
	switch req.Op {
	case protocol.OpRun:
		err = w.run(req, &resp)
	case protocol.OpCublas:
		err = w.runCublas(req, &resp)
	case protocol.OpPreload:
		err = w.preload(req, &resp)
	case protocol.OpPeak:
		w.dropChecks()
		err = w.peak(req, &resp)
	case protocol.OpBreakdown:
		w.dropChecks()
		err = w.breakdown(req, &resp)
	case protocol.OpOutOfCore:
		w.dropChecks() // it plans with the device's free memory
		err = w.outOfCore(req, &resp)
	case protocol.OpHybrid:
		w.dropChecks()
		err = w.hybrid(req, &resp)
	case protocol.OpAccuracy:
		w.dropChecks()
		err = w.accuracy(req, &resp)
	case protocol.OpHello:
		dev := w.Device()
		resp.Version, resp.Device = protocol.Version, &dev
	default:
		err = fmt.Errorf("unknown op %q", req.Op)
	}
	if err == nil {
		return resp, nil
	}
	resp.Error = err.Error()
	var fe *FatalError
	if errors.As(err, &fe) {
		return resp, fe
	}
	return resp, nil
}
