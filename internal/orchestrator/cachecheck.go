package orchestrator

import (
	"fmt"

	"tilegen/internal/protocol"
	"tilegen/internal/results"
	"tilegen/internal/workerproc"
)

// maxStaleWarnings bounds the cache-mismatch warnings a run prints one by one (a cache written by
// an older runner mismatches on every line); the rest are counted in one line.
const maxStaleWarnings = 5

// lookup finds a cached record under the key any of the pool's devices would give it. A record is
// served only when it is what the request asks for: want holds the request's kind, variant, shape,
// hashes, seed and settings; the device is the slot's. One that is not (a hand-edited or foreign
// line, or one written before records carried their hashes) is reported on stderr and measured
// again; the new measurement is appended and wins from then on.
func (s *session) lookup(key func(d protocol.Device) string, want results.Record) (results.Record, bool) {
	return s.lookupOn(s.pool.Slots, key, want)
}

// lookupOn is lookup over the given slots' devices only.
func (s *session) lookupOn(slots []*workerproc.Slot, key func(d protocol.Device) string, want results.Record) (results.Record, bool) {
	for _, sl := range slots {
		k := key(sl.Device)
		r, ok := s.cache.Get(k)
		if !ok {
			continue
		}
		if r.Status == results.StatusFailed && s.cfg.RetryFailed {
			continue
		}
		w := want
		w.Key, w.Device = k, results.RefOf(sl.Device)
		if r.SourceHash == "" && r.PTXHash == "" && r.SettingsHash == "" {
			// Written before records carried their hashes: the key was computed from the very same
			// hashes and settings, so it vouches for them.
			r.SourceHash, r.PTXHash, r.SettingsHash = w.SourceHash, w.PTXHash, w.SettingsHash
			s.mu.Lock()
			s.unhashed++
			s.mu.Unlock()
		}
		if why := mismatch(r, w); why != "" {
			s.staleHit(r, w, why)
			continue
		}
		return r, true
	}
	return results.Record{}, false
}

// mismatch says how a cached record differs from the one requested ("" when it may be served).
func mismatch(got, want results.Record) string {
	for _, f := range []struct{ name, got, want string }{
		{"key", got.Key, want.Key},
		{"kind", got.Kind, want.Kind},
		{"variant", got.Variant, want.Variant},
		{"shape", results.ShapeString(got.Shape), results.ShapeString(want.Shape)},
		{"source hash", got.SourceHash, want.SourceHash},
		{"PTX hash", got.PTXHash, want.PTXHash},
		{"settings", got.SettingsHash, want.SettingsHash},
		{"seed", fmt.Sprint(got.Seed), fmt.Sprint(want.Seed)},
		{"device", deviceString(got.Device), deviceString(want.Device)},
	} {
		if f.got != f.want {
			return fmt.Sprintf("%s %q, want %q", f.name, f.got, f.want)
		}
	}
	switch got.Status {
	case results.StatusFailed:
		if got.Reason == "" {
			return "a failure without a reason"
		}
	case results.StatusOK:
		if len(got.Verify) == 0 {
			return "ok without verification results"
		}
		if got.Kind != results.KindVerify && (got.Timing == nil || got.Timing.Reps == 0) {
			return "ok without timing"
		}
	default:
		return fmt.Sprintf("status %q, want ok or failed", got.Status)
	}
	return ""
}

func deviceString(d *results.DeviceRef) string {
	if d == nil {
		return "none"
	}
	return fmt.Sprintf("%s %s driver %d", d.Name, d.UUID, d.Driver)
}

// staleHit reports a cached record that does not match its request.
func (s *session) staleHit(got, want results.Record, why string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stale++
	if s.stale <= maxStaleWarnings {
		fmt.Fprintf(s.cfg.Stderr, "warning: cache %s: the record under key %s does not match %s %s on %s (%s): measuring it again\n",
			s.cfg.CachePath, want.Key, want.Variant, results.ShapeString(want.Shape), want.Device.UUID, why)
	}
}

// reportStale prints how many mismatched records of the plan just made were not warned about one
// by one, and starts counting afresh.
func (s *session) reportStale() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := s.stale - maxStaleWarnings; n > 0 {
		fmt.Fprintf(s.cfg.Stderr, "warning: cache %s: %d more cached records did not match their requests: measuring them again\n",
			s.cfg.CachePath, n)
	}
	if s.unhashed > 0 {
		fmt.Fprintf(s.cfg.Stderr, "cache %s: %d records written before records carried source, PTX and settings hashes "+
			"are served with the hashes their keys were made from\n", s.cfg.CachePath, s.unhashed)
	}
	s.stale, s.unhashed = 0, 0
}
