package orchestrator

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"tilegen/internal/protocol"
)

// WorkerName is the GPU worker binary's name.
const WorkerName = "tilegen-worker"

// FindWorker locates the worker binary: the explicit path, else tilegen-worker beside the running
// executable, else on PATH.
func FindWorker(explicit string) (string, error) {
	if explicit != "" {
		if _, err := os.Stat(explicit); err != nil {
			return "", fmt.Errorf("worker %s: %w", explicit, err)
		}
		return explicit, nil
	}
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), WorkerName)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
	}
	if p, err := exec.LookPath(WorkerName); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("GPU worker %s not found beside the runner or on PATH (build it with `make build`, or pass --worker)", WorkerName)
}

// workerProc is one running worker process that owns one device. Its stdout is read by a goroutine
// into lines; a request waits for its answer, the process's end, or the watchdog.
type workerProc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan []byte
	stderr *tailBuffer
	device protocol.Device
	nextID int64
	dead   bool
}

// errWorker is a failure of the worker process (crash, hang, garbage): the process is gone, the
// request in flight is lost and the slot needs a fresh worker.
type errWorker struct{ reason string }

func (e *errWorker) Error() string { return e.reason }

// startWorker starts bin for a device (selected through CUDA_VISIBLE_DEVICES, so the worker always
// opens its ordinal 0) and waits for its hello.
func startWorker(bin string, args []string, visible string, helloTimeout time.Duration) (*workerProc, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "CUDA_VISIBLE_DEVICES="+visible)
	if _, ok := os.LookupEnv("CUDA_CACHE_MAXSIZE"); !ok {
		// The driver's JIT cache (default 256 MiB) must hold a whole sweep's modules for
		// parallel preloading (commands.go) to pay off; 1 GiB leaves room for several catalogs.
		cmd.Env = append(cmd.Env, "CUDA_CACHE_MAXSIZE=1073741824")
	}
	cmd.WaitDelay = 2 * time.Second
	w := &workerProc{cmd: cmd, lines: make(chan []byte, 1), stderr: &tailBuffer{max: 4096}}
	cmd.Stderr = w.stderr
	var err error
	if w.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, fmt.Errorf("start worker: %w", err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("start worker: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start worker %s: %w", bin, err)
	}
	go func() {
		r := bufio.NewReaderSize(out, 1<<16)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				w.lines <- line
			}
			if err != nil {
				close(w.lines)
				return
			}
		}
	}()
	resp, err := w.receive(0, helloTimeout, "starting")
	if err != nil {
		return nil, fmt.Errorf("worker for device %s: %w", visible, err)
	}
	if resp.Op != protocol.OpHello {
		w.kill()
		return nil, fmt.Errorf("worker for device %s: first line is %q, not hello", visible, resp.Op)
	}
	if resp.Version != protocol.Version {
		w.kill()
		return nil, fmt.Errorf("worker for device %s speaks protocol %d, the runner %d: rebuild both", visible, resp.Version, protocol.Version)
	}
	if resp.Error != "" || resp.Device == nil {
		w.quit()
		msg := resp.Error
		if msg == "" {
			msg = "no device in hello"
		}
		return nil, &noDeviceError{visible: visible, msg: oneLine(msg)}
	}
	w.device = *resp.Device
	return w, nil
}

// noDeviceError is a worker that started but could not open its GPU.
type noDeviceError struct{ visible, msg string }

func (e *noDeviceError) Error() string { return fmt.Sprintf("no usable GPU %s: %s", e.visible, e.msg) }

// call sends one request and waits for its response for at most timeout. An errWorker means the
// worker is dead (and killed); a response with Error set is returned as is.
func (w *workerProc) call(req protocol.Request, timeout time.Duration) (protocol.Response, error) {
	w.nextID++
	req.ID = w.nextID
	b, err := json.Marshal(req)
	if err != nil {
		return protocol.Response{}, fmt.Errorf("encode request: %w", err)
	}
	if _, err := w.stdin.Write(append(b, '\n')); err != nil {
		return protocol.Response{}, w.crashed("writing the request")
	}
	return w.receive(req.ID, timeout, "running")
}

func (w *workerProc) receive(id int64, timeout time.Duration, doing string) (protocol.Response, error) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case line, ok := <-w.lines:
		if !ok {
			return protocol.Response{}, w.crashed(doing)
		}
		var resp protocol.Response
		if err := json.Unmarshal(line, &resp); err != nil {
			w.kill()
			return protocol.Response{}, &errWorker{fmt.Sprintf("worker wrote garbage while %s: %q", doing, oneLine(string(line)))}
		}
		if resp.ID != id {
			w.kill()
			return protocol.Response{}, &errWorker{fmt.Sprintf("worker answered request %d while %s request %d", resp.ID, doing, id)}
		}
		return resp, nil
	case <-timer.C:
		w.kill()
		return protocol.Response{}, &errWorker{fmt.Sprintf("timeout after %s (watchdog)", roundDuration(timeout))}
	}
}

// crashed waits for the exited process and describes its end.
func (w *workerProc) crashed(doing string) error {
	w.dead = true
	w.stdin.Close()
	for range w.lines {
	}
	err := w.cmd.Wait()
	status := "exit status 0"
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		status = ee.ProcessState.String()
	} else if err != nil {
		status = err.Error()
	}
	msg := fmt.Sprintf("worker crashed (%s) while %s", status, doing)
	if last := w.stderr.lastLine(); last != "" {
		msg += ": " + oneLine(last)
	}
	return &errWorker{msg}
}

// kill ends the process and reaps it.
func (w *workerProc) kill() {
	if w.dead {
		return
	}
	w.dead = true
	w.cmd.Process.Kill()
	w.stdin.Close()
	for range w.lines {
	}
	w.cmd.Wait()
}

// quit asks the worker to exit and kills it if it does not within a second.
func (w *workerProc) quit() {
	if w.dead {
		return
	}
	b, _ := json.Marshal(protocol.Request{ID: w.nextID + 1, Op: protocol.OpQuit})
	w.stdin.Write(append(b, '\n'))
	w.stdin.Close()
	done := make(chan struct{})
	go func() {
		for range w.lines {
		}
		close(done)
	}()
	select {
	case <-done:
		w.dead = true
		w.cmd.Wait()
	case <-time.After(time.Second):
		w.kill()
	}
}

// tailBuffer keeps the last max bytes written (the worker's stderr) for error messages.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append([]byte(nil), t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) lastLine() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := strings.Split(strings.TrimSpace(string(t.b)), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

func roundDuration(d time.Duration) time.Duration {
	if d >= 10*time.Second {
		return d.Round(time.Second)
	}
	return d.Round(100 * time.Millisecond)
}
