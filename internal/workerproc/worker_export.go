package workerproc

import (
	"fmt"
	"strconv"
	"time"

	"tilegen/internal/protocol"
)

// Worker is one worker process driven directly by a caller that sends its own requests, one at a
// time (runner outofcore and hybrid: a single long request each). It is the same process handling
// as the pool's: device chosen through CUDA_VISIBLE_DEVICES, hello and version checked, garbage and
// crashes reported with the worker's last stderr line, the timeout enforced by killing it.
type Worker struct{ p *workerProc }

// StartWorker starts bin (with args, see WorkerArgs) on device index device and waits at most
// hello for it to open its GPU.
func StartWorker(bin string, args []string, device int, hello time.Duration) (*Worker, error) {
	p, err := startWorker(bin, args, strconv.Itoa(device), hello)
	if err != nil {
		return nil, err
	}
	return &Worker{p: p}, nil
}

// Device is what the worker reported in its hello.
func (w *Worker) Device() *protocol.Device {
	d := w.p.device
	return &d
}

// Call sends req and waits at most timeout for the answer; a response Error becomes an error.
// After a timeout, a crash or garbage the worker is dead and every later Call fails.
func (w *Worker) Call(req protocol.Request, timeout time.Duration) (protocol.Response, error) {
	if w.p.dead {
		return protocol.Response{}, fmt.Errorf("worker is no longer running")
	}
	resp, err := w.p.call(req, timeout)
	if err != nil {
		return resp, err
	}
	if resp.Error != "" {
		return resp, fmt.Errorf("worker: %s", resp.Error)
	}
	return resp, nil
}

// Close asks the worker to quit (killing it if it does not).
func (w *Worker) Close() { w.p.quit() }
