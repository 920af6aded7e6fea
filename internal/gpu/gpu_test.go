//go:build gpu

// GPU tests: they need a CUDA device (go test -tags gpu ./internal/gpu). Every test drives a real
// worker process (this test binary re-executed in worker mode) over the protocol, which both
// exercises Serve end to end and keeps each CUDA context on one locked thread of its own process;
// faults and hangs then only cost that process.
package gpu

import (
	"bufio"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"tilegen/internal/protocol"
	"tilegen/internal/variant"
)

//go:embed testdata/reference.ptx
var referencePTX string

//go:embed testdata/fixtures.ptx
var fixturesPTX string

const workerEnv = "TILEGEN_GPU_TEST_WORKER"

func TestMain(m *testing.M) {
	if os.Getenv(workerEnv) == "1" {
		os.Exit(workerMain())
	}
	os.Exit(m.Run())
}

// workerMain is the worker binary's body (runner/worker), with the fixture reference PTX.
func workerMain() int {
	runtime.LockOSThread()
	w, err := Open(Options{Ordinal: 0, ReferencePTX: referencePTX, EpiloguePTX: testEpiloguePTX})
	if err := Serve(w, err, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "worker: %v\n", err)
		return 1
	}
	w.Close()
	return 0
}

type client struct {
	t     *testing.T
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan protocol.Response
	next  int64
	hello protocol.Response
}

func startWorker(t *testing.T) *client {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), workerEnv+"=1")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &client{t: t, cmd: cmd, in: in, lines: make(chan protocol.Response, 16)}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			var r protocol.Response
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				r = protocol.Response{Op: "garbage", Error: sc.Text()}
			}
			c.lines <- r
		}
		close(c.lines)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	c.hello = c.recv(60 * time.Second)
	if c.hello.Op != protocol.OpHello || c.hello.Error != "" || c.hello.Version != protocol.Version {
		t.Fatalf("bad hello: %+v", c.hello)
	}
	return c
}

func (c *client) recv(timeout time.Duration) protocol.Response {
	c.t.Helper()
	select {
	case r, ok := <-c.lines:
		if !ok {
			c.t.Fatal("worker closed its output")
		}
		return r
	case <-time.After(timeout):
		c.t.Fatalf("no response within %v", timeout)
	}
	return protocol.Response{}
}

func (c *client) send(req protocol.Request) int64 {
	c.t.Helper()
	c.next++
	req.ID = c.next
	b, err := json.Marshal(req)
	if err != nil {
		c.t.Fatal(err)
	}
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		c.t.Fatal(err)
	}
	return req.ID
}

func (c *client) call(req protocol.Request) protocol.Response {
	c.t.Helper()
	id := c.send(req)
	r := c.recv(180 * time.Second)
	if r.ID != id {
		c.t.Fatalf("response id %d for request %d: %+v", r.ID, id, r)
	}
	return r
}

func fixture(name string, tile, dyn int) *protocol.Kernel {
	return &protocol.Kernel{PTX: fixturesPTX, Variant: variant.Variant{
		Name: name, Family: "fixture", Block: variant.Dim2{X: tile, Y: tile}, Tile: variant.Tile{Rows: tile, Cols: tile},
		GridZ: 1, DynamicShared: dyn,
		Requires: variant.Requirements{MMultiple: 1, NMultiple: 1, KMultiple: 1, LDMultiple: 1},
	}}
}

func verifyAll(seed uint64) *protocol.VerifySettings {
	return &protocol.VerifySettings{Seed: seed, SubMatrix: true, CPUCheckMaxFlops: 1e9, TolFactor: 2}
}

func TestHelloAndProtocol(t *testing.T) {
	c := startWorker(t)
	d := c.hello.Device
	if d == nil || d.Name == "" || !strings.HasPrefix(d.UUID, "GPU-") || d.SMs < 1 || d.L2Bytes < 1 ||
		d.MemoryBytes < 1 || d.DriverVersion < 1 || d.ComputeCapability == "" {
		t.Fatalf("device facts incomplete: %+v", d)
	}
	if d.CublasVersion < 1 || d.CublasLibrary == "" {
		t.Errorf("cuBLAS not found: %+v note %q", d, c.hello.Note)
	}
	t.Logf("device: %+v", *d)
	if r := c.call(protocol.Request{Op: "frobnicate"}); !strings.Contains(r.Error, "unknown op") {
		t.Errorf("unknown op: %+v", r)
	}
	bad := fixture("good", 16, 0) // a variant that fits the shape, so that loading its PTX is what fails
	bad.PTX = "not ptx"
	if r := c.call(protocol.Request{Op: protocol.OpRun, Kernel: bad, Shape: protocol.Shape{M: 1, N: 1, K: 1}}); !strings.Contains(r.Error, "loading PTX") {
		t.Errorf("bad PTX: %+v", r)
	} else {
		t.Logf("bad PTX error: %s", r.Error)
	}
	k := fixture("good", 16, 0)
	k.Variant.Requires.MMultiple = 64
	if r := c.call(protocol.Request{Op: protocol.OpRun, Kernel: k, Shape: protocol.Shape{M: 100, N: 64, K: 64}}); !strings.Contains(r.Error, "not a multiple") {
		t.Errorf("unsupported shape: %+v", r)
	}
	// quit answers and the process exits 0
	c.send(protocol.Request{Op: protocol.OpQuit})
	if r := c.recv(30 * time.Second); r.Op != protocol.OpQuit {
		t.Errorf("quit: %+v", r)
	}
	if err := c.cmd.Wait(); err != nil {
		t.Errorf("worker exit after quit: %v", err)
	}
}

func TestGoodKernelVerifiesAndTimes(t *testing.T) {
	c := startWorker(t)
	for _, tc := range []struct {
		k     *protocol.Kernel
		shape protocol.Shape
	}{
		{fixture("good", 16, 0), protocol.Shape{M: 100, N: 75, K: 37}},
		{fixture("good", 16, 0), protocol.Shape{M: 1, N: 1, K: 1}},
		{fixture("good", 16, 0), protocol.Shape{M: 1024, N: 1024, K: 1024}},
		{fixture("good_dyn", 16, 65536+2*16*17*4), protocol.Shape{M: 129, N: 64, K: 300}},
	} {
		r := c.call(protocol.Request{Op: protocol.OpRun, Kernel: tc.k, Shape: tc.shape, Verify: verifyAll(7),
			Timing: &protocol.TimingSettings{Warmup: 2, Reps: 20, MinTimeMS: 20, MaxReps: 2000}})
		if r.Error != "" || len(r.Verify) != 2 || r.Timing == nil || r.Attributes == nil {
			t.Fatalf("%s %+v: %+v", tc.k.Variant.Name, tc.shape, r)
		}
		for _, v := range r.Verify {
			if !v.Pass || v.FirstBad != -1 || v.Reason != "" {
				t.Errorf("%s %+v: verify %+v", tc.k.Variant.Name, tc.shape, v)
			}
			cross := 2*float64(tc.shape.M*tc.shape.N*tc.shape.K) <= 1e9
			if v.RefCrossChecked != cross {
				t.Errorf("cross-checked %v, want %v", v.RefCrossChecked, cross)
			}
		}
		if sub := r.Verify[1]; sub.Beta == 0 || sub.LDA == tc.shape.K || sub.LDC == tc.shape.N {
			t.Errorf("sub-matrix check did not use beta/padding: %+v", sub)
		}
		a := r.Attributes
		gx, gy, _ := tc.k.Variant.Grid(tc.shape.M, tc.shape.N, tc.shape.K, 1)
		if a.Registers < 1 || a.BlocksPerSM < 1 || a.Blocks != gx*gy || a.Waves <= 0 || a.MaxThreadsPerBlock < 256 {
			t.Errorf("attributes %+v", a)
		}
		tm := r.Timing
		enough := tm.MeanMS*float64(tm.Reps) >= 20*0.999 || tm.Reps == 2000 // min time reached, or capped
		if tm.Reps < 20 || len(tm.Samples) != tm.Reps || tm.MedianMS <= 0 || tm.MinMS > tm.MedianMS ||
			tm.MaxMS < tm.MedianMS || !enough {
			t.Errorf("timing %+v", *tm)
		}
		t.Logf("%s %dx%dx%d: regs %d blocks/SM %d waves %.2f; verify maxrel %.3g / %.3g; median %.4f ms (%d reps, %d sets)",
			tc.k.Variant.Name, tc.shape.M, tc.shape.N, tc.shape.K, a.Registers, a.BlocksPerSM, a.Waves,
			r.Verify[0].MaxRel, r.Verify[1].MaxRel, tm.MedianMS, tm.Reps, tm.InputSets)
	}
	// Cold timing flushes L2 between launches and so cannot be faster than warm timing by much.
	shape := protocol.Shape{M: 256, N: 256, K: 256}
	warm := c.call(protocol.Request{Op: protocol.OpRun, Kernel: fixture("good", 16, 0), Shape: shape,
		Timing: &protocol.TimingSettings{Warmup: 3, Reps: 50, MaxReps: 50}})
	cold := c.call(protocol.Request{Op: protocol.OpRun, Kernel: fixture("good", 16, 0), Shape: shape,
		Timing: &protocol.TimingSettings{Warmup: 3, Reps: 50, MaxReps: 50, Cold: true}})
	if warm.Error != "" || cold.Error != "" || !cold.Timing.Cold || cold.Timing.InputSets != 1 || warm.Timing.InputSets < 2 ||
		warm.Timing.Reps != 50 {
		t.Fatalf("warm %+v cold %+v", warm, cold)
	}
	t.Logf("256^3 warm median %.4f ms (%d sets), cold median %.4f ms", warm.Timing.MedianMS, warm.Timing.InputSets, cold.Timing.MedianMS)
}

func TestBrokenKernelsFail(t *testing.T) {
	c := startWorker(t)
	shape := protocol.Shape{M: 100, N: 75, K: 37}
	edge := c.call(protocol.Request{Op: protocol.OpRun, Kernel: fixture("edge", 16, 0), Shape: shape, Verify: verifyAll(1),
		Timing: &protocol.TimingSettings{Reps: 5}})
	if edge.Error != "" || len(edge.Verify) != 2 || edge.Verify[0].Pass || edge.Timing != nil {
		t.Fatalf("edge: %+v", edge)
	}
	if v := edge.Verify[0]; v.FirstBad != int64((shape.M-1)*shape.N) || v.MismatchPct < 100.0/float64(shape.M)*0.999 {
		t.Errorf("edge: %+v", v)
	}
	t.Logf("edge: %s", edge.Verify[0].Reason)

	pad := c.call(protocol.Request{Op: protocol.OpRun, Kernel: fixture("pad", 16, 0), Shape: shape, Verify: verifyAll(2)})
	if pad.Error != "" || len(pad.Verify) != 2 || !pad.Verify[0].Pass || pad.Verify[1].Pass ||
		!strings.Contains(pad.Verify[1].Reason, "padding column") {
		t.Fatalf("pad: %+v", pad)
	}
	t.Logf("pad: %s", pad.Verify[1].Reason)

	// The race depends on warp scheduling; it fails on essentially every run, and a kernel this
	// broken passing three independent checks would itself be a finding.
	fails := 0
	for seed := uint64(1); seed <= 3; seed++ {
		r := c.call(protocol.Request{Op: protocol.OpRun, Kernel: fixture("race", 32, 0),
			Shape: protocol.Shape{M: 256, N: 256, K: 512}, Verify: verifyAll(seed)})
		if r.Error != "" {
			t.Fatalf("race: %+v", r)
		}
		if !r.Verify[0].Pass || (len(r.Verify) > 1 && !r.Verify[1].Pass) {
			fails++
			t.Logf("race seed %d: %s", seed, r.Verify[0].Reason)
		}
	}
	if fails == 0 {
		t.Error("kernel without barriers passed verification 3 times")
	}
}

func TestCublas(t *testing.T) {
	c := startWorker(t)
	r := c.call(protocol.Request{Op: protocol.OpCublas, Shape: protocol.Shape{M: 257, N: 129, K: 300}, Verify: verifyAll(3)})
	if r.Error != "" || r.Note != "" || len(r.Verify) != 2 || !r.Verify[0].Pass || !r.Verify[1].Pass {
		t.Fatalf("cuBLAS verify: %+v", r)
	}
	for _, n := range []int{1024, 4096} {
		set := &protocol.VerifySettings{Seed: 5, SubMatrix: true, CPUCheckMaxFlops: 0, TolFactor: 2}
		r := c.call(protocol.Request{Op: protocol.OpCublas, Shape: protocol.Shape{M: n, N: n, K: n}, Verify: set,
			Timing: &protocol.TimingSettings{Warmup: 5, Reps: 20, MinTimeMS: 100, MaxReps: 5000}})
		if r.Error != "" || r.Timing == nil || !r.Verify[0].Pass || !r.Verify[1].Pass {
			t.Fatalf("cuBLAS %d^3: %+v", n, r)
		}
		tf := 2 * float64(n) * float64(n) * float64(n) / (r.Timing.MedianMS * 1e-3) / 1e12
		t.Logf("cuBLAS %d^3: median %.4f ms = %.2f TFLOP/s (min %.4f, %d reps, %d sets); verify maxrel %.3g normrel %.3g",
			n, r.Timing.MedianMS, tf, r.Timing.MinMS, r.Timing.Reps, r.Timing.InputSets, r.Verify[0].MaxRel, r.Verify[0].NormRel)
	}
}

func TestFaultReportsAndExits(t *testing.T) {
	c := startWorker(t)
	r := c.call(protocol.Request{Op: protocol.OpRun, Kernel: fixture("oob", 16, 0), Shape: protocol.Shape{M: 64, N: 64, K: 64},
		Verify: verifyAll(1)})
	if !strings.Contains(r.Error, "fatal") {
		t.Fatalf("oob: %+v", r)
	}
	t.Logf("oob error: %s", r.Error)
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("worker exited 0 after a fault")
		}
		t.Logf("worker exit: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("worker did not exit after a fault")
	}
}

func TestHangIsKillable(t *testing.T) {
	c := startWorker(t)
	id := c.send(protocol.Request{Op: protocol.OpRun, Kernel: fixture("hang", 16, 0), Shape: protocol.Shape{M: 64, N: 64, K: 64},
		Timing: &protocol.TimingSettings{Warmup: 1, Reps: 1}})
	select {
	case r := <-c.lines:
		t.Fatalf("hanging kernel answered (request %d): %+v", id, r)
	case <-time.After(3 * time.Second):
	}
	start := time.Now()
	if err := c.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	select {
	case <-done:
		t.Logf("hung worker killed in %v", time.Since(start))
	case <-time.After(30 * time.Second):
		t.Fatal("hung worker survived SIGKILL for 30 s")
	}
}

// TestTallShapes: products whose M puts the float64 reference's grid past 65535 blocks in y (VGG-16
// conv1 as im2col at batch 32, M = 1605632) verify, the reference launched in bands of rows; the
// band edge is cross-checked on the CPU (under both layouts of A, where a band moves A's pointer by
// rows or by columns). A kernel whose own grid is too tall is a clear error. Before the fix the
// worker died with a nil dereference on the reference's failed launch.
func TestTallShapes(t *testing.T) {
	c := startWorker(t)
	edge := 65535*refTile + 37 // one band plus 37 rows
	for _, op := range []variant.Op{variant.OpNN, variant.OpTN} {
		s := protocol.Shape{M: edge, N: 3, K: 5, Op: op}
		r := c.call(protocol.Request{Op: protocol.OpCublas, Shape: s, Verify: verifyAll(11)})
		if r.Error != "" || len(r.Verify) != 2 || !r.Verify[0].Pass || !r.Verify[1].Pass || !r.Verify[0].RefCrossChecked {
			t.Fatalf("cuBLAS %s %dx3x5: %+v", op, edge, r)
		}
	}
	for _, k := range []int{27, 576} {
		s := protocol.Shape{M: 1605632, N: 64, K: k, Op: variant.OpNN}
		r := c.call(protocol.Request{Op: protocol.OpCublas, Shape: s, Verify: verifyAll(12),
			Timing: &protocol.TimingSettings{Warmup: 2, Reps: 10, MinTimeMS: 20, MaxReps: 1000}})
		if r.Error != "" || len(r.Verify) != 2 || !r.Verify[0].Pass || !r.Verify[1].Pass || r.Timing == nil {
			t.Fatalf("cuBLAS 1605632x64x%d: %+v", k, r)
		}
		t.Logf("cuBLAS 1605632x64x%d: median %.4f ms, verify maxrel %.3g", k, r.Timing.MedianMS, r.Verify[0].MaxRel)
	}
	r := c.call(protocol.Request{Op: protocol.OpRun, Kernel: fixture("good", 16, 0),
		Shape: protocol.Shape{M: 1605632, N: 64, K: 27}, Verify: verifyAll(13)})
	if !strings.Contains(r.Error, "grid y=100352") {
		t.Fatalf("16-row tiles on M=1605632: want a grid y error, got %+v", r)
	}
}
