package orchestrator

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"tilegen/internal/protocol"
)

// slot is one device and the worker process currently serving it (nil after a crash, until the next
// request starts a fresh one).
type slot struct {
	index   int    // position in the pool
	visible string // CUDA_VISIBLE_DEVICES value for its workers
	device  protocol.Device
	w       *workerProc
	bin     string
	args    []string
	hello   time.Duration
}

// errStart is a worker that could not be (re)started: the slot retires and its task goes back to the
// queue for another device.
type errStart struct{ err error }

func (e *errStart) Error() string { return e.err.Error() }
func (e *errStart) Unwrap() error { return e.err }

// call runs one request on the slot's worker, starting a fresh worker first when needed.
func (s *slot) call(req protocol.Request, timeout time.Duration) (protocol.Response, error) {
	if s.w == nil {
		w, err := startWorker(s.bin, s.args, s.visible, s.hello)
		if err != nil {
			return protocol.Response{}, &errStart{err}
		}
		s.w = w
	}
	resp, err := s.w.call(req, timeout)
	var we *errWorker
	if errors.As(err, &we) {
		s.w = nil
	} else if err == nil && strings.HasPrefix(resp.Error, protocol.FatalPrefix) {
		// The worker answered, and is exiting: its context is unusable. The next request
		// must not find it.
		s.w.kill()
		s.w = nil
	}
	return resp, err
}

func (s *slot) close() {
	if s.w != nil {
		s.w.quit()
		s.w = nil
	}
}

// pool holds one slot per device. Work is handed out dynamically: each slot takes the next task when
// it is free.
type pool struct {
	slots []*slot
}

// visibleList maps device indexes to CUDA_VISIBLE_DEVICES values, respecting a restriction the
// runner itself was started under.
func visibleList() []string {
	if v, ok := os.LookupEnv("CUDA_VISIBLE_DEVICES"); ok && strings.TrimSpace(v) != "" {
		var out []string
		for _, f := range strings.Split(v, ",") {
			if f = strings.TrimSpace(f); f != "" {
				out = append(out, f)
			}
		}
		return out
	}
	return nil
}

// ParseDevices parses --devices: "all" (nil) or a comma-separated list of indexes.
func ParseDevices(s string) ([]int, error) {
	if s == "all" {
		return nil, nil
	}
	var out []int
	seen := map[int]bool{}
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 0 {
			return nil, fmt.Errorf("--devices %q: want all or a list of device indexes like 0,1", s)
		}
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out, nil
}

// openPool starts one worker per device. devices nil means all: workers are started for indexes
// 0, 1, ... until one fails to open its device.
func openPool(bin string, args []string, devices []int, hello time.Duration) (*pool, error) {
	vis := visibleList()
	visible := func(i int) (string, bool) {
		if vis == nil {
			return strconv.Itoa(i), true
		}
		if i < len(vis) {
			return vis[i], true
		}
		return "", false
	}
	p := &pool{}
	start := func(i int) error {
		v, ok := visible(i)
		if !ok {
			return fmt.Errorf("device %d: only %d visible through CUDA_VISIBLE_DEVICES", i, len(vis))
		}
		w, err := startWorker(bin, args, v, hello)
		if err != nil {
			return err
		}
		p.slots = append(p.slots, &slot{index: len(p.slots), visible: v, device: w.device, w: w, bin: bin, args: args, hello: hello})
		return nil
	}
	if devices == nil {
		for i := 0; ; i++ {
			if err := start(i); err != nil {
				if i == 0 {
					return nil, err
				}
				break
			}
		}
		return p, nil
	}
	for _, d := range devices {
		if err := start(d); err != nil {
			p.close()
			return nil, err
		}
	}
	return p, nil
}

func (p *pool) devices() []protocol.Device {
	out := make([]protocol.Device, len(p.slots))
	for i, s := range p.slots {
		out[i] = s.device
	}
	return out
}

func (p *pool) close() {
	for _, s := range p.slots {
		s.close()
	}
}

// task is one unit of work run on a slot. It returns an errStart when the slot could not start a
// worker; every other failure it records itself.
type task func(s *slot) error

// run hands tasks out to the slots in order until none are left. A slot whose worker cannot be
// restarted retires and its task goes to another slot; when every slot has retired, run reports why.
func (p *pool) run(tasks []task) error {
	var mu sync.Mutex
	queue := append([]task(nil), tasks...)
	var startErr error
	alive := append([]*slot(nil), p.slots...)
	// A slot that retires puts its task back; slots that already found the queue empty then need
	// another round.
	for len(queue) > 0 && len(alive) > 0 {
		var wg sync.WaitGroup
		retired := map[*slot]bool{}
		for _, s := range alive {
			wg.Add(1)
			go func(s *slot) {
				defer wg.Done()
				for {
					mu.Lock()
					if len(queue) == 0 {
						mu.Unlock()
						return
					}
					t := queue[0]
					queue = queue[1:]
					mu.Unlock()
					err := t(s)
					var es *errStart
					if errors.As(err, &es) {
						mu.Lock()
						queue = append([]task{t}, queue...)
						startErr = es.err
						retired[s] = true
						mu.Unlock()
						return
					}
				}
			}(s)
		}
		wg.Wait()
		var next []*slot
		for _, s := range alive {
			if !retired[s] {
				next = append(next, s)
			}
		}
		alive = next
	}
	if len(queue) > 0 {
		return fmt.Errorf("no worker left to run %d remaining measurements: %w", len(queue), startErr)
	}
	return nil
}
