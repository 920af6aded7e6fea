package gpu

import (
	"crypto/sha256"
	"fmt"
	"runtime"
	"sync"
	"time"

	"gorgonia.org/cu"

	"tilegen/internal/protocol"
)

// maxPreloadErrors bounds the errors a preload reports (the runs that need the modules report
// theirs in full).
const maxPreloadErrors = 5

// preload answers OpPreload: the driver JIT-compiles each PTX module on its own OS thread (with the
// worker's context current there), one thread per CPU, so a sweep pays for the slowest modules
// rather than for the sum of all of them. Loaded modules join the worker's module cache, where
// loadKernel finds them.
func (w *Worker) preload(req protocol.Request, resp *protocol.Response) error {
	start := time.Now()
	res := &protocol.PreloadResult{Threads: runtime.NumCPU()}
	resp.Preload = res
	type job struct {
		key [sha256.Size]byte
		ptx string
	}
	var jobs []job
	seen := map[[sha256.Size]byte]bool{}
	for _, ptx := range req.Preload {
		key := sha256.Sum256([]byte(ptx))
		if _, ok := w.modules[key]; ok || seen[key] {
			res.Cached++
			continue
		}
		seen[key] = true
		jobs = append(jobs, job{key, ptx})
	}
	type done struct {
		key [sha256.Size]byte
		mod cu.Module
		err error
	}
	results := make([]done, len(jobs))
	next := make(chan int)
	var wg sync.WaitGroup
	for t := 0; t < min(res.Threads, len(jobs)); t++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			ctxErr := cu.SetCurrentContext(w.ctx)
			for i := range next {
				results[i].key = jobs[i].key
				if ctxErr != nil {
					results[i].err = fmt.Errorf("making the context current: %w", ctxErr)
					continue
				}
				results[i].mod, results[i].err = jit(jobs[i].ptx)
			}
		}()
	}
	for i := range jobs {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, r := range results {
		if r.err != nil {
			res.Failed++
			if len(res.Errors) < maxPreloadErrors {
				res.Errors = append(res.Errors, r.err.Error())
			}
			if sticky(r.err) {
				return &FatalError{Err: fmt.Errorf("preloading modules: %w", r.err)}
			}
			continue
		}
		w.modules[r.key] = r.mod
		res.Loaded++
	}
	res.WallMS = msSince(start)
	return nil
}
