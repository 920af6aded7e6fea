package orchestrator

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"time"

	"tilegen/internal/cache"
	"tilegen/internal/protocol"
	"tilegen/internal/results"
	"tilegen/internal/variant"
	"tilegen/internal/workerproc"
)

// Watchdog bounds how long one request may take before its worker is killed. The expected launch
// time is cuBLAS's median on the shape times Factor, or (without a cuBLAS time) 2·M·N·K at
// FloorGFLOPS; the request's budget adds the warm-up, timed and verification launches, the minimum
// timing time and a fixed start-up allowance, clamped to [Floor, Cap].
type Watchdog struct {
	Floor       time.Duration
	Cap         time.Duration
	Factor      float64
	FloorGFLOPS float64
	// Hello bounds a worker's start-up (process start, cuInit, context creation).
	Hello time.Duration
}

// DefaultWatchdog returns the default watchdog settings.
func DefaultWatchdog() Watchdog {
	return Watchdog{Floor: 10 * time.Second, Cap: 120 * time.Second, Factor: 20, FloorGFLOPS: 200, Hello: 60 * time.Second}
}

// verifyLaunches is a generous count of kernel-equivalents per verification: the β = 0 and
// sub-matrix checks plus the float64 reference of each.
const verifyLaunches = 6

// verifyChecks is the checks of one verification (β = 0, then the sub-matrix check);
// verifyNSPerElement the host time per input/output element of a check (random generation,
// copies, comparison), generously; refGFLOPS the float64 reference kernel's rate, low.
const (
	verifyChecks       = 2
	verifyNSPerElement = 50
	refGFLOPS          = 1000
)

// startupAllowance covers module load (PTX JIT), allocation and input generation.
const startupAllowance = 2 * time.Second

// timeout is the watchdog for one request on shape s; cublasMS <= 0 means unknown.
func (w Watchdog) timeout(s protocol.Shape, cublasMS float64, t *protocol.TimingSettings, v *protocol.VerifySettings) time.Duration {
	launchMS := results.Flops(s) / (w.FloorGFLOPS * 1e6)
	if cublasMS > 0 {
		launchMS = cublasMS * w.Factor
	}
	ms := float64(startupAllowance.Milliseconds())
	if v != nil {
		ms += verifyLaunches * launchMS
		// Each check draws fresh inputs, runs the float64 reference (about 1 TFLOP/s) and
		// compares every element on the host: at 8192³ this dominates a fast kernel's launches.
		// A batch has every product's elements and a third (broadcast) check.
		elems := (float64(s.M)*float64(s.K) + float64(s.K)*float64(s.N) + float64(s.M)*float64(s.N)) * float64(s.Products())
		checks := float64(verifyChecks)
		if s.Batch > 0 {
			checks++
		}
		ms += checks * (elems*verifyNSPerElement/1e6 + results.Flops(s)/refGFLOPS/1e6)
		if results.Flops(s) <= v.CPUCheckMaxFlops {
			ms += results.Flops(s) / 1e6 // a float64 CPU reference at about 1 GFLOP/s
		}
	}
	if t != nil {
		ms += float64(t.Warmup+t.Reps)*launchMS + t.MinTimeMS
	}
	d := time.Duration(ms * float64(time.Millisecond))
	if d < w.Floor {
		d = w.Floor
	}
	if d > w.Cap {
		d = w.Cap
	}
	return d
}

// Config is what a tune or verify run needs.
type Config struct {
	Catalog Catalog
	// Worker is the worker binary's path.
	Worker string
	// WorkerArgs are passed to every worker (see WorkerArgs).
	WorkerArgs []string
	// Devices are device indexes; nil means all.
	Devices []int
	// Shapes to tune on; for verify, nil means each variant's edge suite.
	Shapes []protocol.Shape
	// Sources says where shapes come from (a shapes file's comments); it travels into run.json.
	Sources  map[protocol.Shape]string
	Filter   Filter
	Strategy Strategy
	Shard    Shard
	Timing   protocol.TimingSettings
	// Verify's Seed is ignored: each request's seed is derived from (variant, shape, Strategy.Seed),
	// or from (shape, Strategy.Seed) alone when 2·M·N·K exceeds SharedInputsAbove.
	Verify protocol.VerifySettings
	// SharedInputsAbove (flops, 2·M·N·K; 0: never) is the problem size above which every variant of
	// a run is verified on the same fresh inputs per shape, so that a worker draws them and runs
	// the float64 reference once per shape instead of once per variant.
	SharedInputsAbove float64
	// SharedInputsElements (0: never) shares them too when the result has more than this many
	// elements (M·N, times the batch): there the host's part of a check (drawing C, moving it and
	// the float64 expectation, comparing) outweighs the launches, several times a fast kernel's
	// timing (4096×4096×32: 0.68 s per verification against 0.06 s of timing on an H100 host), and is
	// what GPUs sharing one host contend for.
	SharedInputsElements float64
	Watchdog             Watchdog
	// CachePath is the append-only cache file.
	CachePath string
	// Out is the results directory.
	Out string
	// RetryFailed re-measures cached failures instead of reusing them.
	RetryFailed bool
	Rank        RankSettings
	// Progress is auto, bar, plain or none.
	Progress string
	// TableTop limits the ranked rows printed per shape (0: all).
	TableTop int
	Stdout   io.Writer
	Stderr   io.Writer
}

// session is one tune or verify run: the cache, the workers and the records gathered so far.
type session struct {
	cfg   *Config
	cache *cache.Cache
	pool  *workerproc.Pool
	prog  progress

	mu      sync.Mutex
	recs    map[string]results.Record // by ident
	order   []string
	putErr  error
	ptxMu   sync.Mutex
	ptxHash map[string]string
	byName  map[string]*variant.Variant
	// preload lists the variants whose measurements are planned, for OpPreload.
	preload []*variant.Variant
	cost    Cost
	// dev counts measurements and worker seconds per device UUID (cost.json's devices).
	dev map[string]*DeviceCost
	// stale counts cache hits that did not match their request, unhashed those that predate the
	// records' hashes (see lookup).
	stale, unhashed int
	// cublasT is the best cuBLAS median per shape (the watchdog's yardstick); cublasOn marks the
	// (device UUID, shape) pairs that have a cuBLAS record, so that every device compares its kernels
	// with its own cuBLAS (ensureCublas).
	cublasT    map[protocol.Shape]float64
	cublasOn   map[string]bool
	cublasSeen map[protocol.Shape]bool
}

func ident(kind, name string, s protocol.Shape) string {
	return kind + "\x00" + name + "\x00" + results.ShapeString(s)
}

func openSession(cfg *Config) (*session, error) {
	rc, err := cache.Open(cfg.CachePath)
	if err != nil {
		return nil, err
	}
	for _, w := range rc.Warnings {
		fmt.Fprintf(cfg.Stderr, "warning: %s\n", w)
	}
	p, err := workerproc.OpenPool(cfg.Worker, cfg.WorkerArgs, cfg.Devices, cfg.Watchdog.Hello)
	if err != nil {
		rc.Close()
		return nil, err
	}
	return &session{cfg: cfg, cache: rc, pool: p, recs: map[string]results.Record{}, ptxHash: map[string]string{}}, nil
}

func (s *session) close() {
	s.pool.Close()
	s.cache.Close()
}

// add collects a record for the outputs (the last one for an ident wins).
func (s *session) add(r results.Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := recKey(r)
	if _, ok := s.recs[id]; !ok {
		s.order = append(s.order, id)
	}
	s.recs[id] = r
	if r.Kind == results.KindCublas {
		if s.cublasOn == nil {
			s.cublasOn, s.cublasT, s.cublasSeen = map[string]bool{}, map[protocol.Shape]float64{}, map[protocol.Shape]bool{}
		}
		s.cublasOn[cublasPair(results.DeviceUUID(r), r.Shape)] = true
		s.cublasSeen[r.Shape] = true
		if r.Status == results.StatusOK && r.Timing != nil {
			if t, ok := s.cublasT[r.Shape]; !ok || r.Timing.MedianMS < t {
				s.cublasT[r.Shape] = r.Timing.MedianMS
			}
		}
	}
}

// recKey identifies a record among the session's: kind, variant and shape, and for cuBLAS also the
// device (each device of a run times its own cuBLAS, as runner merge keeps them).
func recKey(r results.Record) string {
	id := ident(r.Kind, r.Variant, r.Shape)
	if r.Kind == results.KindCublas {
		id += "\x00" + results.DeviceUUID(r)
	}
	return id
}

func cublasPair(uuid string, sh protocol.Shape) string {
	return uuid + "\x00" + results.ShapeString(sh)
}

// hasCublas says whether the session holds a cuBLAS record of the shape on any device.
func (s *session) hasCublas(sh protocol.Shape) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cublasSeen[sh]
}

// finish stores a measured record in the cache, collects it and reports progress.
func (s *session) finish(r results.Record, cache bool) {
	if cache {
		if err := s.cache.Put(r); err != nil {
			s.mu.Lock()
			if s.putErr == nil {
				s.putErr = err
			}
			s.mu.Unlock()
		}
	}
	s.add(r)
	s.mu.Lock()
	s.cost.Measured++
	uuid := ""
	if r.Device != nil {
		uuid = r.Device.UUID
	}
	if s.dev == nil {
		s.dev = map[string]*DeviceCost{}
	}
	d := s.dev[uuid]
	if d == nil {
		d = &DeviceCost{}
		s.dev[uuid] = d
	}
	d.Measured++
	if p := r.Phases; p != nil {
		s.cost.LoadS += p.LoadMS / 1e3
		s.cost.VerifyS += p.VerifyMS / 1e3
		s.cost.TimingS += p.TimeMS / 1e3
		d.VerifyS += p.VerifyMS / 1e3
		d.TimingS += p.TimeMS / 1e3
		d.WorkerS += (p.LoadMS + p.VerifyMS + p.TimeMS) / 1e3
	}
	s.mu.Unlock()
	s.prog.step(r)
}

func (s *session) records() []results.Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]results.Record, 0, len(s.order))
	for _, id := range s.order {
		out = append(out, s.recs[id])
	}
	return out
}

// ptxHashOf is the manifest's PTX hash, or the hash of the PTX text when the manifest has none.
func (s *session) ptxHashOf(v *variant.Variant) (string, error) {
	if v.PTXHash != "" {
		return v.PTXHash, nil
	}
	s.ptxMu.Lock()
	defer s.ptxMu.Unlock()
	if h, ok := s.ptxHash[v.Name]; ok {
		return h, nil
	}
	ptx, err := s.cfg.Catalog.PTX(v.Name)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(ptx))
	h := hex.EncodeToString(sum[:])
	s.ptxHash[v.Name] = h
	return h, nil
}

func (s *session) variantKey(kind string, v *variant.Variant, sh protocol.Shape, d protocol.Device,
	vs *protocol.VerifySettings, ts *protocol.TimingSettings) (string, error) {
	ph, err := s.ptxHashOf(v)
	if err != nil {
		return "", err
	}
	return keyOf(keyInput{Kind: kind, Variant: v.Name, SourceHash: v.SourceHash, PTXHash: ph,
		Arch: s.cfg.Catalog.Arch(), Shape: sh, Verify: vs, Timing: ts,
		GPU: d.Name, GPUUUID: d.UUID, Driver: d.DriverVersion}), nil
}

func (s *session) cublasKey(sh protocol.Shape, d protocol.Device, vs *protocol.VerifySettings, ts *protocol.TimingSettings) string {
	return keyOf(keyInput{Kind: results.KindCublas, Variant: results.CublasName, Shape: sh, Verify: vs, Timing: ts,
		GPU: d.Name, GPUUUID: d.UUID, Driver: d.DriverVersion, Cublas: d.CublasVersion})
}

func (s *session) verifySettings(name string, sh protocol.Shape) *protocol.VerifySettings {
	v := s.cfg.Verify
	if s.cfg.sharedInputs(sh) {
		name = sharedSeedName
	}
	v.Seed = DeriveSeed(name, sh, s.cfg.Strategy.Seed)
	return &v
}

// sharedInputs reports whether every variant of a run verifies on shape sh's one set of inputs.
func (c *Config) sharedInputs(sh protocol.Shape) bool {
	if t := c.SharedInputsAbove; t > 0 && results.Flops(sh) > t {
		return true
	}
	t := c.SharedInputsElements
	return t > 0 && float64(sh.M)*float64(sh.N)*float64(sh.Products()) > t
}

// sharedSeedName stands for the variant in DeriveSeed when a shape's inputs are shared.
const sharedSeedName = "\x00shared"

// cublasMS is the best cuBLAS median known for the shape in this run (0 if none).
func (s *session) cublasMS(sh protocol.Shape) float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cublasT[sh]
}

// planCublas returns the cuBLAS measurements still to make, collecting cached ones. With several
// devices each also times cuBLAS on every shape it measures a variant of, before the first one
// (ensureCublas), so that a kernel's ratio compares two times of one device.
func (s *session) planCublas(shapes []protocol.Shape) []workerproc.Task {
	var tasks []workerproc.Task
	for _, sh := range shapes {
		sh := sh
		base, vs, ts := s.cublasBase(sh)
		if r, ok := s.lookup(func(d protocol.Device) string { return s.cublasKey(sh, d, vs, ts) }, base); ok {
			s.add(r)
			continue
		}
		tasks = append(tasks, workerproc.Task{Do: func(sl *workerproc.Slot) error {
			rec, err := s.measureCublas(sl, sh)
			if isStart(err) {
				return err
			}
			s.finish(rec, cacheable(err))
			return nil
		}})
	}
	return tasks
}

// cublasBase is the cuBLAS record of a shape before it is measured, and its settings.
func (s *session) cublasBase(sh protocol.Shape) (results.Record, *protocol.VerifySettings, *protocol.TimingSettings) {
	ts := s.cfg.Timing
	vs := s.verifySettings(results.CublasName, sh)
	return results.Record{Kind: results.KindCublas, Variant: results.CublasName, Shape: sh, Seed: vs.Seed,
		SettingsHash: settingsHash(s.cfg.Catalog.Arch(), vs, &ts)}, vs, &ts
}

// measureCublas verifies and times cuBLAS (and, for a fused epilogue, cublasLt's) on sl; the error is
// the call's (a start error retires the slot).
func (s *session) measureCublas(sl *workerproc.Slot, sh protocol.Shape) (results.Record, error) {
	rec, vs, ts := s.cublasBase(sh)
	rec.Key, rec.Device = s.cublasKey(sh, sl.Device, vs, ts), results.RefOf(sl.Device)
	req := protocol.Request{Op: protocol.OpCublas, Shape: sh, Verify: vs, Timing: ts}
	if sh.Epilogue != variant.EpiNone {
		// The fused epilogue's other baseline, cublasLt's matmul with the same epilogue,
		// verified and timed by the same worker right after cuBLAS + the separate pass.
		req.Baselines = []string{protocol.BaselineCublasLt}
	}
	resp, err := sl.Call(req, time.Duration(1+len(req.Baselines))*s.cfg.Watchdog.timeout(sh, 0, ts, vs))
	if !isStart(err) {
		fill(&rec, resp, err, true)
	}
	return rec, err
}

// ensureCublas gives sl's device a cuBLAS record of sh before it times a kernel there, when the run
// has several devices (with one, planCublas's phase already did): from the cache if it holds one for
// this device, else measured now. It adds to the records and the cache but not to the progress
// count (the plan counted one cuBLAS measurement per shape).
func (s *session) ensureCublas(sl *workerproc.Slot, sh protocol.Shape) error {
	if len(s.pool.Slots) < 2 {
		return nil
	}
	// No lock around the check and the measurement: a slot runs one task at a time, so only this
	// slot's tasks look at its device's pairs.
	s.mu.Lock()
	done := s.cublasOn[cublasPair(sl.Device.UUID, sh)]
	s.mu.Unlock()
	if done {
		return nil
	}
	base, vs, ts := s.cublasBase(sh)
	if r, ok := s.lookupOn([]*workerproc.Slot{sl}, func(d protocol.Device) string { return s.cublasKey(sh, d, vs, ts) }, base); ok {
		s.add(r)
		return nil
	}
	rec, err := s.measureCublas(sl, sh)
	if isStart(err) {
		return err
	}
	if cacheable(err) {
		if perr := s.cache.Put(rec); perr != nil {
			s.mu.Lock()
			if s.putErr == nil {
				s.putErr = perr
			}
			s.mu.Unlock()
		}
	}
	s.add(rec)
	return nil
}

// planVariants returns the variant measurements still to make (kind tune or verify), collecting
// cached and skipped records.
func (s *session) planVariants(kind string, items []item) []workerproc.Task {
	var tasks []workerproc.Task
	var ts *protocol.TimingSettings
	if kind == results.KindTune {
		t := s.cfg.Timing
		ts = &t
	}
	sms := 0
	for _, sl := range s.pool.Slots {
		if sms == 0 || sl.Device.SMs < sms {
			sms = sl.Device.SMs
		}
	}
	for _, it := range items {
		it := it
		v := it.V
		if it.Skip == "" && kind == results.KindTune {
			if it.Skip = splitKPointless(v, it.Shape, sms); it.Skip != "" {
				s.cost.Skipped++
			}
		}
		tile := v.Tile
		base := results.Record{Kind: kind, Variant: v.Name, Family: v.Family, Params: v.ParamString(),
			SourceHash: v.SourceHash, PTXHash: v.PTXHash, Shape: it.Shape,
			Tile: &tile, Resources: v.Resources, DynamicShared: v.DynamicShared}
		if it.Skip != "" {
			r := base
			r.Key = skipKey(kind, v, it.Shape)
			r.Status = results.StatusSkipped
			r.Reason = it.Skip
			s.add(r)
			continue
		}
		vs := s.verifySettings(v.Name, it.Shape)
		base.Seed = vs.Seed
		base.SettingsHash = settingsHash(s.cfg.Catalog.Arch(), vs, ts)
		if ph, err := s.ptxHashOf(v); err == nil {
			want := base
			want.PTXHash = ph
			if r, ok := s.lookup(func(d protocol.Device) string {
				k, _ := s.variantKey(kind, v, it.Shape, d, vs, ts)
				return k
			}, want); ok {
				s.add(r)
				continue
			}
		}
		s.preload = append(s.preload, v)
		tasks = append(tasks, workerproc.Task{Key: v.Name, Do: func(sl *workerproc.Slot) error {
			if ts != nil {
				if err := s.ensureCublas(sl, it.Shape); isStart(err) {
					return err
				}
			}
			rec := base
			rec.Device = results.RefOf(sl.Device)
			key, err := s.variantKey(kind, v, it.Shape, sl.Device, vs, ts)
			var ptx string
			if err == nil {
				ptx, err = s.cfg.Catalog.PTX(v.Name)
			}
			if err == nil {
				// The hash of what the worker is sent: export compares it with the manifest's.
				sum := sha256.Sum256([]byte(ptx))
				rec.PTXHash = hex.EncodeToString(sum[:])
			}
			if err != nil {
				rec.Status, rec.Reason = results.StatusFailed, workerproc.OneLine(err.Error())
				s.finish(rec, false)
				return nil
			}
			rec.Key = key
			req := protocol.Request{Op: protocol.OpRun, Kernel: &protocol.Kernel{Variant: *v, PTX: ptx},
				Shape: it.Shape, Verify: vs, Timing: ts}
			resp, err := sl.Call(req, s.cfg.Watchdog.timeout(it.Shape, s.cublasMS(it.Shape), ts, vs))
			if isStart(err) {
				return err
			}
			fill(&rec, resp, err, ts != nil)
			s.finish(rec, cacheable(err))
			return nil
		}})
	}
	s.reportStale()
	return tasks
}

// splitKPointless is the reason a split-K variant is not tuned on a shape whose unsplit grid already
// has at least variant.SplitKUntunedTilesPerSM tiles per SM: splitting K only adds partial sums to
// reduce there. "" when the variant does not split K or the shape is small enough for it to help. A
// variant whose grid z is chosen at launch (grid_z: auto) is never left out: its rule already picks
// one slice where splitting cannot help, and it is then a kernel like any other.
func splitKPointless(v *variant.Variant, sh protocol.Shape, sms int) string {
	if v.GridZ <= 1 || v.Split != nil || sms <= 0 {
		return ""
	}
	gx, gy, _ := v.Grid(sh.M, sh.N, sh.K, sms)
	if !variant.SplitKUntuned(v.GridZ, v.Split, gx, gy, sms) {
		return ""
	}
	return fmt.Sprintf("split-K not tuned: %d output tiles already give the %d SMs %d or more each", gx*gy, sms, variant.SplitKUntunedTilesPerSM)
}

func isStart(err error) bool { return workerproc.IsStartError(err) }

// cacheable: worker failures (crash, hang, garbage) are properties of the variant and cached like
// results; anything else (an encoding error) is not a measurement.
func cacheable(err error) bool {
	return err == nil || workerproc.IsWorkerFailure(err)
}

// fill turns a response (or the worker's failure) into the record's status and data.
func fill(rec *results.Record, resp protocol.Response, err error, timed bool) {
	if err != nil {
		rec.Status, rec.Reason = results.StatusFailed, workerproc.OneLine(err.Error())
		return
	}
	rec.Attributes = resp.Attributes
	rec.Verify = resp.Verify
	rec.Timing = resp.Timing
	rec.Phases = resp.Phases
	rec.Note = workerproc.OneLine(resp.Note)
	rec.Baselines = resp.Baselines
	switch {
	case resp.Error != "":
		rec.Status, rec.Reason = results.StatusFailed, workerproc.OneLine(resp.Error)
	case len(resp.Verify) == 0:
		rec.Status, rec.Reason = results.StatusFailed, "worker returned no verification"
	case firstFailure(resp.Verify) != "":
		rec.Status, rec.Reason = results.StatusFailed, "wrong results: "+firstFailure(resp.Verify)
	case timed && (resp.Timing == nil || resp.Timing.Reps == 0):
		rec.Status, rec.Reason = results.StatusFailed, "worker returned no timing"
	default:
		rec.Status = results.StatusOK
	}
}

func firstFailure(vs []protocol.VerifyResult) string {
	for _, v := range vs {
		if !v.Pass {
			r := v.Reason
			if r == "" {
				r = fmt.Sprintf("max rel error %.3g over tolerance", v.MaxRel)
			}
			return workerproc.OneLine(r)
		}
	}
	return ""
}

func outPath(dir, name string) string { return filepath.Join(dir, name) }
