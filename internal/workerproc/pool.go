package workerproc

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"tilegen/internal/protocol"
)

// Slot is one device and the worker process currently serving it (nil after a crash, until the next
// request starts a fresh one).
type Slot struct {
	// Index is the slot's position in the pool.
	Index int
	// Visible is the CUDA_VISIBLE_DEVICES value for its workers.
	Visible string
	// Device is what its first worker reported in its hello.
	Device protocol.Device
	w      *workerProc
	bin    string
	args   []string
	hello  time.Duration
}

// errStart is a worker that could not be (re)started: the slot retires and its task goes back to the
// queue for another device.
type errStart struct{ err error }

func (e *errStart) Error() string { return e.err.Error() }
func (e *errStart) Unwrap() error { return e.err }

// IsStartError reports whether err is a slot's failure to start a worker: the slot retires and
// its task goes to another.
func IsStartError(err error) bool {
	var es *errStart
	return errors.As(err, &es)
}

// Call runs one request on the slot's worker, starting a fresh worker first when needed. A start
// failure is reported as one IsStartError recognizes; a worker failure (crash, hang, garbage: the
// worker is gone) as one IsWorkerFailure recognizes.
func (s *Slot) Call(req protocol.Request, timeout time.Duration) (protocol.Response, error) {
	if s.w == nil {
		w, err := startWorker(s.bin, s.args, s.Visible, s.hello)
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

// StartHelper starts one more worker on the slot's device, with the slot's binary and arguments,
// for the caller to drive and close (the engine's JIT cache warmers).
func (s *Slot) StartHelper() (*Worker, error) {
	p, err := startWorker(s.bin, s.args, s.Visible, s.hello)
	if err != nil {
		return nil, err
	}
	return &Worker{p: p}, nil
}

func (s *Slot) close() {
	if s.w != nil {
		s.w.quit()
		s.w = nil
	}
}

// Pool holds one slot per device. Work is handed out dynamically: each slot takes the next task when
// it is free.
type Pool struct {
	// Slots are the devices, in the order they were opened.
	Slots []*Slot
	// owner maps a task key to the slot that took the first task of that key (see Run); it
	// outlives a Run, so the later phases of a session keep the same slots on the same modules.
	owner map[string]int
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

// OpenPool starts one worker per device. devices nil means all: workers are started for indexes
// 0, 1, ... until one fails to open its device.
func OpenPool(bin string, args []string, devices []int, hello time.Duration) (*Pool, error) {
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
	p := &Pool{}
	open := func(i int) (*workerProc, string, error) {
		v, ok := visible(i)
		if !ok {
			return nil, "", fmt.Errorf("device %d: only %d visible through CUDA_VISIBLE_DEVICES", i, len(vis))
		}
		w, err := startWorker(bin, args, v, hello)
		return w, v, err
	}
	add := func(w *workerProc, v string) {
		p.Slots = append(p.Slots, &Slot{Index: len(p.Slots), Visible: v, Device: w.device, w: w, bin: bin, args: args, hello: hello})
	}
	if devices == nil {
		for i := 0; ; i++ {
			w, v, err := open(i)
			if err != nil {
				if i == 0 {
					return nil, err
				}
				break
			}
			add(w, v)
		}
		return p, nil
	}
	// A named list starts its workers at once (each start is a process, cuInit and a context: most
	// of a second) and keeps them in the list's order; any failure closes them all and reports the
	// first failing device's error.
	type started struct {
		w   *workerProc
		v   string
		err error
	}
	res := make([]started, len(devices))
	var wg sync.WaitGroup
	for k, d := range devices {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[k].w, res[k].v, res[k].err = open(d)
		}()
	}
	wg.Wait()
	var first error
	for _, r := range res {
		if r.err != nil && first == nil {
			first = r.err
		}
		if r.w != nil {
			add(r.w, r.v)
		}
	}
	if first != nil {
		p.Close()
		return nil, first
	}
	return p, nil
}

// Devices lists what each slot's worker reported, in slot order.
func (p *Pool) Devices() []protocol.Device {
	out := make([]protocol.Device, len(p.Slots))
	for i, s := range p.Slots {
		out[i] = s.Device
	}
	return out
}

// Close asks every slot's worker to quit (killing those that do not).
func (p *Pool) Close() {
	for _, s := range p.Slots {
		s.close()
	}
}

// Task is one unit of work run on a slot.
type Task struct {
	// Key is the task's affinity, "" for none: the tasks of one key (a variant's measurements,
	// which all load its module) go to the slot that took the first of them, while it runs. With
	// several devices handing out a shape-major queue in order sent every device through every
	// variant, so each worker loaded (and, ahead of the JIT helpers, compiled) every module: on two
	// H200s that was the larger part of the per-measurement time two devices lost over one.
	Key string
	// Do runs the task on s. It returns an errStart when the slot could not start a worker; every
	// other failure it records itself.
	Do func(s *Slot) error
}

// Run hands tasks out to the slots in order until none are left: each slot takes the first task
// in the queue that has no key or whose key is its own or nobody's (claiming that key), and when
// only tasks of other slots' keys are left, the first of those (so no slot idles while another
// has a backlog). A slot whose worker cannot be restarted retires, giving up its keys, and its task
// goes to another slot; when every slot has retired, Run reports why.
func (p *Pool) Run(tasks []Task) error {
	var mu sync.Mutex
	queue := append([]Task(nil), tasks...)
	var startErr error
	alive := append([]*Slot(nil), p.Slots...)
	if p.owner == nil {
		p.owner = map[string]int{}
	}
	// A slot that retires puts its task back; slots that already found the queue empty then need
	// another round.
	for len(queue) > 0 && len(alive) > 0 {
		var wg sync.WaitGroup
		retired := map[*Slot]bool{}
		for _, s := range alive {
			wg.Add(1)
			go func(s *Slot) {
				defer wg.Done()
				for {
					mu.Lock()
					if len(queue) == 0 {
						mu.Unlock()
						return
					}
					i := pick(queue, p.owner, s.Index)
					t := queue[i]
					if i == 0 {
						queue = queue[1:]
					} else {
						queue = slices.Delete(queue, i, i+1)
					}
					mu.Unlock()
					err := t.Do(s)
					var es *errStart
					if errors.As(err, &es) {
						mu.Lock()
						queue = append([]Task{t}, queue...)
						startErr = es.err
						retired[s] = true
						for k, o := range p.owner {
							if o == s.Index {
								delete(p.owner, k)
							}
						}
						mu.Unlock()
						return
					}
				}
			}(s)
		}
		wg.Wait()
		var next []*Slot
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

// pick is the index of the task slot takes from a non-empty queue (see Run), claiming its key in
// owner when nobody held it.
func pick(queue []Task, owner map[string]int, slot int) int {
	for i, t := range queue {
		if t.Key == "" {
			return i
		}
		o, held := owner[t.Key]
		if !held {
			owner[t.Key] = slot
			return i
		}
		if o == slot {
			return i
		}
	}
	return 0
}
