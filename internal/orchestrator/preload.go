package orchestrator

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"

	"tilegen/internal/protocol"
	"tilegen/internal/workerproc"
)

// preloadModules gets the modules of the planned measurements JIT-compiled ahead of their runs.
// The driver compiles one module at a time per process (measured on an H100 host: 194 modules took
// 76 s with 16 threads in one process), so short-lived helper workers compile shares of the modules
// in parallel into the driver's on-disk JIT cache, which then serves the workers that measure. The
// helpers run alongside the measurements: the slots start at once and load each module when its
// first run needs it, by then (the helpers compile tens of modules a second, the slots measure a few
// a second, in the order the modules were dealt) from the cache. Waiting for the whole JIT first
// kept every GPU idle for it and was the part of a two-GPU tune that did not shrink. Without helpers
// (few modules, the JIT cache disabled) each slot's worker preloads the modules itself before the
// sweep. It only saves time: a failed compile is reported and the runs load their modules
// themselves. The returned function waits for the helpers; call it before the pool closes.
func (s *session) preloadModules() (wait func()) {
	vs := s.preload
	s.preload = nil
	var ptxs []string
	seen := map[string]bool{}
	for _, v := range vs {
		if seen[v.Name] {
			continue
		}
		seen[v.Name] = true
		if ptx, err := s.cfg.Catalog.PTX(v.Name); err == nil {
			ptxs = append(ptxs, ptx)
		}
	}
	if len(ptxs) < 2 {
		return func() {}
	}
	timeout := s.cfg.Watchdog.Hello + time.Duration(len(ptxs))*2*time.Second
	began := time.Now()
	if shares := jitShares(len(ptxs), len(s.pool.Slots)); len(shares) >= 2 && os.Getenv("CUDA_CACHE_DISABLE") != "1" {
		done := make(chan struct{})
		s.mu.Lock()
		s.cost.PreloadModules = len(ptxs)
		s.cost.PreloadOverlapped = true
		s.mu.Unlock()
		go func() {
			defer close(done)
			s.warmJITCache(ptxs, shares, timeout)
			s.mu.Lock()
			s.cost.PreloadS = time.Since(began).Seconds()
			s.mu.Unlock()
		}()
		return func() { <-done }
	}
	var wg sync.WaitGroup
	for _, sl := range s.pool.Slots {
		wg.Add(1)
		go func(sl *workerproc.Slot) {
			defer wg.Done()
			resp, err := sl.Call(protocol.Request{Op: protocol.OpPreload, Preload: ptxs}, timeout)
			s.mu.Lock()
			defer s.mu.Unlock()
			switch {
			case err != nil:
				fmt.Fprintf(s.cfg.Stderr, "warning: preloading modules on device %d: %v\n", sl.Index, err)
			case resp.Error != "":
				fmt.Fprintf(s.cfg.Stderr, "warning: preloading modules on device %d: %s\n", sl.Index, workerproc.OneLine(resp.Error))
			case resp.Preload != nil:
				p := resp.Preload
				s.cost.PreloadModules = max(s.cost.PreloadModules, p.Loaded)
				s.cost.PreloadThreads = max(s.cost.PreloadThreads, p.Threads)
				if p.Failed > 0 {
					fmt.Fprintf(s.cfg.Stderr, "warning: %d module(s) failed to preload on device %d (their runs will report why): %s\n",
						p.Failed, sl.Index, workerproc.OneLine(strings.Join(p.Errors, "; ")))
				}
			}
		}(sl)
	}
	wg.Wait()
	s.cost.PreloadS = time.Since(began).Seconds()
	return func() {}
}

// jitHelpers is how many helper workers compile modules on each device: together at least eight
// modules each, at most one per CPU (shared between the devices) and at most maxJITHelpers per
// device.
func jitHelpers(modules, devices int) int {
	devices = max(devices, 1)
	return min(maxJITHelpers, max(1, runtime.NumCPU()/devices), modules/(8*devices))
}

const maxJITHelpers = 8

// warmJITCache compiles the modules in helper workers, a share each, in parallel, so that the
// driver's on-disk JIT cache holds them when the slots' workers load them. The cache is one per host
// and user, shared by every device of the same architecture, so the modules are split among the
// helpers of all slots together: with two GPUs each compiles half, instead of both compiling all.
// Each helper opens its own context on its slot's device and reports the modules that failed to
// compile (their runs report why in full); other failures only cost the time saved.
func (s *session) warmJITCache(ptxs []string, shares []jitShare, timeout time.Duration) {
	var wg sync.WaitGroup
	for _, sh := range shares {
		var share []string
		for _, i := range sh.modules {
			share = append(share, ptxs[i])
		}
		sl := s.pool.Slots[sh.slot]
		wg.Add(1)
		go func() {
			defer wg.Done()
			w, err := sl.StartHelper()
			if err != nil {
				return
			}
			defer w.Close()
			resp, err := w.Call(protocol.Request{Op: protocol.OpPreload, Preload: share}, timeout)
			if err == nil && resp.Preload != nil && resp.Preload.Failed > 0 {
				s.mu.Lock()
				fmt.Fprintf(s.cfg.Stderr, "warning: %d module(s) failed to compile on device %d (their runs will report why): %s\n",
					resp.Preload.Failed, sl.Index, workerproc.OneLine(strings.Join(resp.Preload.Errors, "; ")))
				s.mu.Unlock()
			}
		}()
	}
	wg.Wait()
	s.mu.Lock()
	s.cost.JITHelpers = max(s.cost.JITHelpers, len(shares))
	s.mu.Unlock()
}

// jitShare is one helper's work: the slot it runs on and the indexes of the modules it compiles.
type jitShare struct {
	slot    int
	modules []int
}

// jitShares deals the modules round-robin to jitHelpers(modules, devices) helpers on each of the
// devices: every module once, the helpers' shares differing by at most one.
func jitShares(modules, devices int) []jitShare {
	per := jitHelpers(modules, devices)
	total := per * max(devices, 1)
	if per < 1 || total < 2 {
		return nil
	}
	out := make([]jitShare, total)
	for h := range out {
		out[h].slot = h % max(devices, 1)
	}
	for i := range modules {
		out[i%total].modules = append(out[i%total].modules, i)
	}
	return out
}
