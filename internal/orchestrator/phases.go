package orchestrator

import (
	"fmt"
	"runtime"

	"tilegen/internal/results"
	"tilegen/internal/variant"
	"tilegen/internal/workerproc"
)

func (s *session) runInfo() results.RunInfo {
	return results.RunInfo{GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, NVCC: s.cfg.Catalog.NVCC(), Arch: s.cfg.Catalog.Arch(),
		Devices: s.pool.Devices()}
}

func (s *session) variantByName(name string) *variant.Variant {
	return s.byName[name]
}

func (s *session) index(vs []variant.Variant) {
	s.byName = map[string]*variant.Variant{}
	for i := range vs {
		s.byName[vs[i].Name] = &vs[i]
	}
}

// runnable counts the plan items that are not skipped.
func runnable(items []item) int {
	n := 0
	for _, it := range items {
		if it.Skip == "" {
			n++
		}
	}
	return n
}

// runPhases runs each phase's tasks on the pool, one phase after the other, ends the progress
// display, and reports the first failure: of the pool, or of writing the cache.
func (s *session) runPhases(phases ...[]workerproc.Task) error {
	wait := s.preloadModules()
	var err error
	for _, p := range phases {
		if err = s.pool.Run(p); err != nil {
			break
		}
	}
	wait()
	s.prog.done()
	if err != nil {
		return err
	}
	return s.putErr
}

// start prints the plan's size and sets up progress for the measurements still to make.
func (s *session) start(what string, total, todo int) {
	fmt.Fprintf(s.cfg.Stderr, "%s: %d measurements, %d cached, %d to run on %d device(s)\n",
		what, total, total-todo, todo, len(s.pool.Slots))
	s.prog = newProgress(s.cfg.Stderr, s.cfg.Progress, todo)
}
