package workerproc

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

// exitGrace is how long a worker's last output may take to arrive after it exited, and how long a
// worker that printed something other than its hello gets to exit (gorgonia.org/cu's init prints
// its failure on stdout, then exits 1).
const exitGrace = time.Second

// killWait bounds the wait for a killed worker to end: one stuck in the driver can take long.
const killWait = 5 * time.Second

// workerProc is one running worker process that owns one device. Its pipes are the runner's own
// (os.Pipe, not exec's): the request is written under the request's deadline, a reader goroutine
// hands over complete lines up to protocol.MaxResponseBytes, and a waiter goroutine notices the
// exit even when something the worker started still holds its output open.
type workerProc struct {
	bin, visible string
	cmd          *exec.Cmd
	group        *group
	stdin        *os.File      // write end of the worker's stdin
	stdout       *os.File      // read end of its stdout, closed to stop the reader
	errOut       *os.File      // read end of its stderr
	lines        chan []byte   // complete lines; unbuffered, so each is handed over before outDone closes
	outDone      chan struct{} // closed when stdout ended; out says how
	out          outEnd
	stderr       *tailBuffer
	errDone      chan struct{} // closed when stderr ended
	exited       chan struct{} // closed when the worker has been reaped; waitErr says how it ended
	waitErr      error
	stop         chan struct{} // closed on release: the reader stops handing over lines
	device       protocol.Device
	nextID       int64
	helloed      bool
	early        []byte // a line that was not a response, printed before the hello
	dead         bool
}

// outEnd says how a worker's stdout ended.
type outEnd struct {
	partial int  // bytes of an unfinished line at the end
	over    bool // a line grew past protocol.MaxResponseBytes
}

// group is a worker's process group; signals to it are ordered against reaping the worker.
type group struct {
	mu     sync.Mutex
	pid    int
	reaped bool
}

func (g *group) kill() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.reaped {
		killGroup(g.pid)
	}
}

// errWorker is a failure of the worker process (crash, hang, garbage): the process is gone, the
// request in flight is lost and the slot needs a fresh worker.
type errWorker struct{ reason string }

func (e *errWorker) Error() string { return e.reason }

// IsWorkerFailure reports whether err is a failure of the worker process (crash, hang, garbage)
// rather than of the request: the worker is gone and the request in flight is lost.
func IsWorkerFailure(err error) bool {
	var we *errWorker
	return errors.As(err, &we)
}

// startWorker starts bin for a device (selected through CUDA_VISIBLE_DEVICES, so the worker always
// opens its ordinal 0) and waits for its hello.
func startWorker(bin string, args []string, visible string, helloTimeout time.Duration) (*workerProc, error) {
	w, err := spawnWorker(bin, args, visible)
	if err != nil {
		return nil, err
	}
	resp, err := w.receive(0, time.Now().Add(helloTimeout), helloTimeout, "starting")
	if err != nil {
		var se *startupError
		if errors.As(err, &se) {
			return nil, err // it names the worker already
		}
		return nil, fmt.Errorf("worker %s for device %s: %w", bin, visible, err)
	}
	w.helloed = true
	if resp.Op != protocol.OpHello {
		w.kill()
		return nil, fmt.Errorf("worker %s for device %s: first line is %q, not hello", bin, visible, resp.Op)
	}
	if resp.Version != protocol.Version {
		w.kill()
		return nil, fmt.Errorf("worker %s for device %s speaks protocol %d, the runner %d: rebuild both", bin, visible, resp.Version, protocol.Version)
	}
	if resp.Error != "" || resp.Device == nil {
		w.quit()
		msg := resp.Error
		if msg == "" {
			msg = "no device in hello"
		}
		return nil, &noDeviceError{visible: visible, msg: OneLine(msg)}
	}
	w.device = *resp.Device
	return w, nil
}

// spawnWorker starts the process (see startProcess: own process group, parent-death signal) and
// the goroutines that read its output and wait for its end.
func spawnWorker(bin string, args []string, visible string) (*workerProc, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "CUDA_VISIBLE_DEVICES="+visible)
	if _, ok := os.LookupEnv("CUDA_CACHE_MAXSIZE"); !ok {
		// The driver's JIT cache (default 256 MiB) must hold a whole sweep's modules for the
		// engine's parallel preloading to pay off; 1 GiB leaves room for several catalogs.
		cmd.Env = append(cmd.Env, "CUDA_CACHE_MAXSIZE=1073741824")
	}
	var ends [6]*os.File // stdin r/w, stdout r/w, stderr r/w
	for i := 0; i < len(ends); i += 2 {
		r, w, err := os.Pipe()
		if err != nil {
			closeFiles(ends[:i]...)
			return nil, fmt.Errorf("start worker %s: %w", bin, err)
		}
		ends[i], ends[i+1] = r, w
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = ends[0], ends[3], ends[5]
	err := startProcess(cmd)
	closeFiles(ends[0], ends[3], ends[5]) // the worker holds its own copies
	if err != nil {
		closeFiles(ends[1], ends[2], ends[4])
		return nil, fmt.Errorf("start worker %s: %w", bin, err)
	}
	w := &workerProc{bin: bin, visible: visible, cmd: cmd, group: &group{pid: cmd.Process.Pid},
		stdin: ends[1], stdout: ends[2], errOut: ends[4], stderr: &tailBuffer{max: 4096},
		lines: make(chan []byte), outDone: make(chan struct{}), errDone: make(chan struct{}),
		exited: make(chan struct{}), stop: make(chan struct{})}
	go w.readStdout()
	go func() {
		defer close(w.errDone)
		_, _ = io.Copy(w.stderr, w.errOut)
	}()
	go func() {
		w.waitErr = waitProcess(cmd, w.group)
		close(w.exited)
	}()
	return w, nil
}

func closeFiles(fs ...*os.File) {
	for _, f := range fs {
		_ = f.Close()
	}
}

// readStdout hands over the worker's output line by line until it ends, a line grows past
// protocol.MaxResponseBytes, or the worker is released.
func (w *workerProc) readStdout() {
	defer close(w.outDone)
	r := bufio.NewReaderSize(w.stdout, 64<<10)
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		n := len(line) + len(chunk)
		if err == nil {
			n-- // the newline
		}
		if n > protocol.MaxResponseBytes {
			w.out.over = true
			return
		}
		line = append(line, chunk...)
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == nil:
			select {
			case w.lines <- line:
			case <-w.stop:
				return
			}
			line = nil
		default:
			w.out.partial = len(line)
			return
		}
	}
}

// noDeviceError is a worker that started but could not open its GPU.
type noDeviceError struct{ visible, msg string }

func (e *noDeviceError) Error() string { return fmt.Sprintf("no usable GPU %s: %s", e.visible, e.msg) }

// call sends one request and waits for its response for at most timeout, writing included. An
// errWorker means the worker is dead (and killed); a response with Error set is returned as is.
func (w *workerProc) call(req protocol.Request, timeout time.Duration) (protocol.Response, error) {
	if w.dead {
		return protocol.Response{}, &errWorker{"worker is no longer running"}
	}
	// The watchdog covers the write: a worker that does not read (a hung kernel, a busy loop)
	// blocks a request larger than the pipe's buffer (64 KiB).
	deadline := time.Now().Add(timeout)
	w.nextID++
	req.ID = w.nextID
	b, err := json.Marshal(req)
	if err != nil {
		return protocol.Response{}, fmt.Errorf("encode request: %w", err)
	}
	if len(b) > protocol.MaxRequestBytes {
		return protocol.Response{}, fmt.Errorf("request of %d bytes is over the protocol's limit of %d", len(b), protocol.MaxRequestBytes)
	}
	if err := w.stdin.SetWriteDeadline(deadline); err != nil {
		w.kill()
		return protocol.Response{}, fmt.Errorf("request deadline: %w", err)
	}
	if _, err := w.stdin.Write(append(b, '\n')); errors.Is(err, os.ErrDeadlineExceeded) {
		w.kill()
		return protocol.Response{}, &errWorker{fmt.Sprintf("timeout after %s (watchdog) while sending the request: the worker did not read it", roundDuration(timeout))}
	}
	// Any other write error means the worker closed its input or exited: receive says how.
	return w.receive(req.ID, deadline, timeout, "running")
}

// receive waits until deadline (timeout after the request began) for the response to request id
// (0: the hello).
func (w *workerProc) receive(id int64, deadline time.Time, timeout time.Duration, doing string) (protocol.Response, error) {
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	exited := w.exited
	var grace <-chan time.Time
	for {
		select {
		case line := <-w.lines:
			var resp protocol.Response
			if err := json.Unmarshal(line, &resp); err != nil {
				if !w.helloed && w.early == nil {
					w.early = line // cu's init failure: wait for the exit that follows it
					if grace == nil {
						grace = time.After(exitGrace)
					}
					continue
				}
				w.kill()
				return protocol.Response{}, garbage(line, doing)
			}
			if w.early != nil {
				w.kill()
				return protocol.Response{}, garbage(w.early, doing)
			}
			if resp.ID != id {
				w.kill()
				return protocol.Response{}, &errWorker{fmt.Sprintf("worker answered request %d while %s request %d", resp.ID, doing, id)}
			}
			return resp, nil
		case <-w.outDone:
			return protocol.Response{}, w.ended(doing)
		case <-exited:
			// What it wrote before exiting may still be in the pipe.
			exited = nil
			if grace == nil {
				grace = time.After(exitGrace)
			}
		case <-grace:
			return protocol.Response{}, w.ended(doing)
		case <-timer.C:
			w.kill()
			return protocol.Response{}, &errWorker{fmt.Sprintf("timeout after %s (watchdog)", roundDuration(timeout))}
		}
	}
}

func garbage(line []byte, doing string) error {
	return &errWorker{fmt.Sprintf("worker wrote garbage while %s: %q", doing, OneLine(string(line)))}
}

// ended describes a worker whose output ended, that exited, or that printed something other than
// its hello and kept running, and makes sure it is gone.
func (w *workerProc) ended(doing string) error {
	overLimit := &errWorker{fmt.Sprintf("worker response over %d MiB without a newline while %s (worker killed)", protocol.MaxResponseBytes>>20, doing)}
	select {
	case <-w.outDone:
		if w.out.over {
			w.kill()
			return overLimit
		}
	default:
	}
	expired := make(chan struct{}) // closed, so that every select below sees it
	t := time.AfterFunc(exitGrace, func() { close(expired) })
	defer t.Stop()
	select {
	case <-w.exited:
	case <-expired:
		w.kill()
		if w.early != nil {
			return garbage(w.early, doing)
		}
		return &errWorker{fmt.Sprintf("worker closed its output while %s (worker killed)", doing)}
	}
	// Its group is dead too, so both pipes end: collect the rest of stderr and of a torn line.
	for _, done := range []chan struct{}{w.outDone, w.errDone} {
		select {
		case <-done:
		case <-expired:
		}
	}
	partial, over := 0, false
	select {
	case <-w.outDone:
		partial, over = w.out.partial, w.out.over
	default:
	}
	w.release()
	if over {
		return overLimit
	}
	status := exitStatus(w.waitErr)
	last := w.stderr.lastLine()
	if !w.helloed {
		return earlyExit(w.bin, w.visible, status, last, w.early)
	}
	msg := fmt.Sprintf("worker crashed (%s) while %s", status, doing)
	if partial > 0 {
		msg += fmt.Sprintf(", %d bytes into a response line", partial)
	}
	if last != "" {
		msg += ": " + OneLine(last)
	}
	return &errWorker{msg}
}

func exitStatus(err error) string {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return "exit status 0"
	case errors.As(err, &ee):
		return ee.ProcessState.String()
	default:
		return err.Error()
	}
}

// kill ends the worker's process group and releases its pipes.
func (w *workerProc) kill() {
	if w.dead {
		return
	}
	w.group.kill()
	select {
	case <-w.exited:
	case <-time.After(killWait):
	}
	w.release()
}

// release closes the runner's ends of the pipes and stops the reader: nothing waits on a pipe
// that something the worker started may still hold.
func (w *workerProc) release() {
	if w.dead {
		return
	}
	w.dead = true
	close(w.stop)
	closeFiles(w.stdin, w.stdout, w.errOut)
}

// quit asks the worker to exit and kills its group if it does not within a second.
func (w *workerProc) quit() {
	if w.dead {
		return
	}
	b, _ := json.Marshal(protocol.Request{ID: w.nextID + 1, Op: protocol.OpQuit})
	if w.stdin.SetWriteDeadline(time.Now().Add(time.Second)) == nil {
		_, _ = w.stdin.Write(append(b, '\n'))
	}
	_ = w.stdin.Close()
	select {
	case <-w.exited:
		w.release()
	case <-time.After(time.Second):
		w.kill()
	}
}

// tailBuffer keeps the last max bytes written (the worker's stderr) for error messages; lastLine
// is safe to print.
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
	return strings.TrimSpace(printable(lines[len(lines)-1]))
}

func roundDuration(d time.Duration) time.Duration {
	if d >= 10*time.Second {
		return d.Round(time.Second)
	}
	return d.Round(100 * time.Millisecond)
}
