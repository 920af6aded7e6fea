//go:build linux

package workerproc

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"tilegen/internal/protocol"
	"tilegen/internal/variant"
)

// The worker process boundary: each test drives the fake worker into one misbehaviour and checks
// that the runner notices in time, says why, and leaves no process behind.

// fakeRun is a run request for a fake variant whose parameters choose the fake worker's
// behaviour (see testdata/fakeworker).
func fakeRun(params ...variant.Param) protocol.Request {
	return protocol.Request{Op: protocol.OpRun, Shape: protocol.Shape{M: 8, N: 8, K: 8},
		Kernel: &protocol.Kernel{Variant: variant.Variant{Name: "fake", Params: params}}}
}

// callWithin runs call in a goroutine and fails the test when it takes longer than limit: a
// blocked call must fail the test, not hang it.
func callWithin(t *testing.T, limit time.Duration, call func() error) (error, time.Duration) {
	t.Helper()
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- call() }()
	select {
	case err := <-done:
		return err, time.Since(start)
	case <-time.After(limit):
		t.Fatalf("still blocked after %s", limit)
		return nil, 0
	}
}

// gone reports whether process pid has ended (a zombie counts: only its parent can reap it).
func gone(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// "pid (comm) S ...": the state follows the last ')'.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && (f[0] == "Z" || f[0] == "X")
}

func waitGone(t *testing.T, pid int, within time.Duration) {
	t.Helper()
	for end := time.Now().Add(within); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if gone(pid) {
			return
		}
	}
	syscall.Kill(pid, syscall.SIGKILL)
	t.Fatalf("process %d still running %s later", pid, within)
}

// logPID returns the pid the fake worker logged after word ("grandchild 1234").
func logPID(t *testing.T, log, word string) int {
	t.Helper()
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) == 2 && f[0] == word {
			pid, err := strconv.Atoi(f[1])
			if err == nil {
				return pid
			}
		}
	}
	t.Fatalf("no %q line in the fake worker's log:\n%s", word, b)
	return 0
}

// Item 1: a request larger than the pipe's buffer to a worker that does not read must hit the
// watchdog, not block before it starts.
func TestWorkerLargeRequestToStuckWorker(t *testing.T) {
	t.Setenv("FAKEWORKER_NOREAD", "1")
	w, err := StartWorker(fakeWorker, nil, 0, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	pid := w.p.cmd.Process.Pid
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	req := protocol.Request{Op: protocol.OpPreload, Preload: []string{strings.Repeat("x", 1<<20)}}
	err, took := callWithin(t, 10*time.Second, func() error {
		_, err := w.Call(req, 300*time.Millisecond)
		return err
	})
	if err == nil || !strings.HasPrefix(err.Error(), "timeout after 300ms (watchdog)") {
		t.Fatalf("got %v", err)
	}
	if took > 3*time.Second {
		t.Errorf("the watchdog of 300ms took %s", took)
	}
	waitGone(t, pid, 3*time.Second)
}

// Item 2: something the worker started that holds its stdout and stderr must not delay shutdown
// or the report of a crash, and must not outlive the worker.
func TestWorkerGrandchildHoldsOutput(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(w *Worker) error
		want string
	}{
		{"quit", func(w *Worker) error { w.Close(); return nil }, ""},
		{"crash", func(w *Worker) error {
			_, err := w.Call(fakeRun(variant.Param{Name: "CRASH", Value: 1}), 20*time.Second)
			return err
		}, "worker crashed (exit status 2) while running: fake: illegal memory access"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := filepath.Join(t.TempDir(), "log")
			t.Setenv("FAKEWORKER_LOG", log)
			t.Setenv("FAKEWORKER_GRANDCHILD", "1")
			w, err := StartWorker(fakeWorker, nil, 0, 10*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			gc := logPID(t, log, "grandchild")
			t.Cleanup(func() { syscall.Kill(gc, syscall.SIGKILL) })
			err, took := callWithin(t, 40*time.Second, func() error { return tc.end(w) })
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || err.Error() != tc.want) {
				t.Errorf("got %v, want %q", err, tc.want)
			}
			if took > 3*time.Second {
				t.Errorf("took %s with a grandchild holding the worker's output", took)
			}
			waitGone(t, gc, 3*time.Second)
		})
	}
}

// Item 3: a response line without a newline is cut off at protocol.MaxResponseBytes; the request
// fails with that reason and the slot starts a fresh worker for the next one.
func TestWorkerResponseLineCap(t *testing.T) {
	s := &Slot{Visible: "0", bin: fakeWorker, hello: 10 * time.Second}
	defer s.close()
	err, _ := callWithin(t, 30*time.Second, func() error {
		_, err := s.Call(fakeRun(variant.Param{Name: "FLOOD", Value: 1}), 20*time.Second)
		return err
	})
	var we *errWorker
	if !errors.As(err, &we) || err.Error() != "worker response over 64 MiB without a newline while running (worker killed)" {
		t.Fatalf("got %v", err)
	}
	if s.w != nil {
		t.Fatal("the slot kept the killed worker")
	}
	resp, err := s.Call(protocol.Request{Op: protocol.OpCublas, Shape: protocol.Shape{M: 8, N: 8, K: 8},
		Timing: &protocol.TimingSettings{Reps: 3}}, 10*time.Second)
	if err != nil || resp.Timing == nil {
		t.Fatalf("no fresh worker after the cut-off: %+v %v", resp, err)
	}
}

// Item 4: a worker that dies in the middle of a response line is reported with its exit status
// and its stderr, not as garbage.
func TestWorkerDiesMidLine(t *testing.T) {
	for _, tc := range []struct {
		mode int
		want string
	}{
		{1, "worker crashed (exit status 3) while running, 23 bytes into a response line: fake: died mid-line"},
		{2, "worker crashed (signal: killed) while running, 23 bytes into a response line: fake: died mid-line"},
	} {
		w, err := StartWorker(fakeWorker, nil, 0, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		_, err = w.Call(fakeRun(variant.Param{Name: "PARTIAL", Value: tc.mode}), 10*time.Second)
		if err == nil || err.Error() != tc.want {
			t.Errorf("PARTIAL=%d: got %v, want %q", tc.mode, err, tc.want)
		}
	}
}

// Item 5: a runner killed with -9 takes its workers along. The test binary re-runs itself as a
// runner (TestHelperRunner) that starts a worker busy with a request that never ends.
func TestWorkerDiesWithRunner(t *testing.T) {
	parent := exec.Command(os.Args[0], "-test.run=^TestHelperRunner$")
	parent.Env = append(os.Environ(), "TILEGEN_HELPER_RUNNER="+fakeWorker)
	parent.Stderr = os.Stderr
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	defer parent.Process.Kill()
	var pid int
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if _, err := fmt.Sscanf(sc.Text(), "worker %d", &pid); err == nil {
			break
		}
	}
	if pid == 0 {
		t.Fatalf("the helper runner printed no worker pid: %v", sc.Err())
	}
	if gone(pid) {
		t.Fatal("the worker is not running")
	}
	parent.Process.Signal(syscall.SIGKILL)
	parent.Wait()
	waitGone(t, pid, 5*time.Second)
}

// TestHelperRunner is TestWorkerDiesWithRunner's runner; it does nothing in a normal test run.
func TestHelperRunner(t *testing.T) {
	bin := os.Getenv("TILEGEN_HELPER_RUNNER")
	if bin == "" {
		t.Skip("helper process of TestWorkerDiesWithRunner")
	}
	w, err := StartWorker(bin, nil, 0, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	go w.Call(fakeRun(variant.Param{Name: "HANG", Value: 1}), time.Hour)
	time.Sleep(100 * time.Millisecond) // let the request reach the worker
	fmt.Printf("worker %d\n", w.p.cmd.Process.Pid)
	time.Sleep(time.Minute) // until killed
}

// Item 6 (section 5): without a GPU, gorgonia.org/cu's init prints its failure on stdout and exits
// 1 before the hello. The runner says there is no CUDA device, and names the worker, its exit
// status and what it printed.
func TestWorkerNoCUDADevice(t *testing.T) {
	t.Setenv("FAKEWORKER_CUINIT", "1")
	_, err := StartWorker(fakeWorker, nil, 0, 10*time.Second)
	wantPrefix := "no CUDA device found (driver: cuInit failed with NoDevice, no CUDA-capable device is visible; "
	wantSuffix := fmt.Sprintf("): worker %s for device 0 exited before its hello (exit status 1): Error in initialization, please refer to \"https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__INITIALIZE.html\" for details on: NoDevice", fakeWorker)
	if err == nil || !strings.HasPrefix(err.Error(), wantPrefix) || !strings.HasSuffix(err.Error(), wantSuffix) {
		t.Fatalf("got  %v\nwant %s…%s", err, wantPrefix, wantSuffix)
	}
	// runner devices and runner tune go through the same start: the engine's
	// TestNoCUDADeviceThroughCommands.
}

// Any worker that exits before its hello is named with its exit status and stderr's last line.
func TestWorkerExitsBeforeHello(t *testing.T) {
	_, err := StartWorker(fakeWorker, nil, 5, 10*time.Second) // the fake has one device
	want := fmt.Sprintf("worker %s for device 5 exited before its hello (exit status 1): cuInit: no CUDA-capable device is detected", fakeWorker)
	if err == nil || err.Error() != want {
		t.Fatalf("got  %v\nwant %s", err, want)
	}
}

func TestNvidiaModuleAndDriverProblem(t *testing.T) {
	f := filepath.Join(t.TempDir(), "version")
	old := nvidiaVersionFile
	t.Cleanup(func() { nvidiaVersionFile = old })
	nvidiaVersionFile = f
	if got := nvidiaModule(); got != "no NVIDIA kernel module loaded" {
		t.Errorf("without the file: %q", got)
	}
	os.WriteFile(f, []byte("NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.95.05  Tue Sep 23 2025\nGCC version: gcc 13\n"), 0o644)
	if got := nvidiaModule(); got != "NVIDIA kernel module 580.95.05" {
		t.Errorf("got %q", got)
	}
	for in, want := range map[string]string{
		"tilegen-worker: error while loading shared libraries: libcuda.so.1: cannot open shared object file: No such file or directory": "libcuda.so.1 is not installed",
		`Error in initialization, please refer to "x" for details on: UnknownErrorCode:999`:                                             "cuInit failed with UnknownErrorCode:999",
		"panic: something else": "",
	} {
		if got := driverProblem(in); got != want {
			t.Errorf("driverProblem(%q) = %q, want %q", in, got, want)
		}
	}
	if got := printable("red \x1b[31mtext\x1b[0m\tand \xff"); got != "red ?[31mtext?[0m and ?" {
		t.Errorf("printable: %q", got)
	}
}

// TestOpenPoolNamed: a named device list starts its workers at once and keeps the list's order;
// a device that cannot be opened fails the whole pool with its own error, the others closed.
func TestOpenPoolNamed(t *testing.T) {
	t.Setenv("FAKEWORKER_DEVICES", "4")
	t.Setenv("CUDA_VISIBLE_DEVICES", "1,3")
	p, err := OpenPool(fakeWorker, nil, []int{1, 0}, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Slots) != 2 || p.Slots[0].Visible != "3" || p.Slots[1].Visible != "1" || p.Slots[0].Index != 0 || p.Slots[1].Index != 1 ||
		p.Slots[0].Device.UUID != "GPU-fake-3" {
		t.Errorf("slots %+v, %+v: want visible 3 then 1, indexes 0 and 1", *p.Slots[0], *p.Slots[1])
	}
	p.Close()
	if _, err := OpenPool(fakeWorker, nil, []int{0, 2}, 10*time.Second); err == nil || !strings.Contains(err.Error(), "device 2: only 2 visible") {
		t.Errorf("device 2 of 2 visible: err %v", err)
	}
	t.Setenv("CUDA_VISIBLE_DEVICES", "1,7")
	if _, err := OpenPool(fakeWorker, nil, []int{0, 1}, 10*time.Second); err == nil || !strings.Contains(err.Error(), "for device 7") {
		t.Errorf("device 7 cannot open: err %v", err)
	}
}
