package orchestrator

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"tilegen/internal/protocol"
	"tilegen/internal/results"
	"tilegen/internal/resultsdir"
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
	s.preloadModules()
	var err error
	for _, p := range phases {
		if err = s.pool.Run(p); err != nil {
			break
		}
	}
	s.prog.done()
	if err != nil {
		return err
	}
	return s.putErr
}

// Cost is where a run's time went: cost.json in the results directory and the last line tune prints.
type Cost struct {
	// WallS is the command's wall time, from start to written results (re-measurement included).
	WallS float64 `json:"wall_s"`
	// Measured (variant, shape) pairs and cuBLAS runs, and those found in the cache.
	Measured int `json:"measured"`
	Cached   int `json:"cached"`
	// Skipped pairs the plan left out with a reason (split-K where the grid already fills the GPU).
	Skipped int `json:"skipped"`
	// PerMinute is Measured per minute of WallS.
	PerMinute float64 `json:"measured_per_minute"`
	// Preload is the driver's JIT of the planned modules ahead of the sweep (helper processes and
	// OpPreload), wall time.
	PreloadS       float64 `json:"preload_s"`
	PreloadModules int     `json:"preload_modules"`
	PreloadThreads int     `json:"preload_threads"`
	// JITHelpers is the number of helper workers that compiled shares of the modules first.
	JITHelpers int `json:"jit_helpers"`
	// LoadS, VerifyS and TimingS sum the workers' phases over the measurements.
	LoadS   float64 `json:"load_s"`
	VerifyS float64 `json:"verify_s"`
	TimingS float64 `json:"timing_s"`
	// RankS is the interleaved re-measurement of the leaders.
	RankS float64 `json:"rank_s"`
}

func (c Cost) String() string {
	return fmt.Sprintf("%d measured (%d cached, %d skipped) in %.1f s, %.0f per minute; JIT: %.1f s to preload %d modules "+
		"(%d helper processes, then %d threads); worker time: module loads %.1f s, verification %.1f s, timing %.1f s; "+
		"re-measuring leaders %.1f s",
		c.Measured, c.Cached, c.Skipped, c.WallS, c.PerMinute, c.PreloadS, c.PreloadModules, c.JITHelpers, c.PreloadThreads,
		c.LoadS, c.VerifyS, c.TimingS, c.RankS)
}

// preloadModules has every worker JIT-compile the modules of the planned measurements before the
// sweep (OpPreload). The driver compiles one module at a time per process (measured on an H100
// host: 194 modules took 76 s with 16 threads in one process), so first several short-lived
// helper workers compile shares of the modules in parallel; the driver's JIT cache on disk then
// serves the worker that keeps them. It only saves time: a failed preload is reported and the runs
// load (and compile) their modules themselves.
func (s *session) preloadModules() {
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
		return
	}
	timeout := s.cfg.Watchdog.Hello + time.Duration(len(ptxs))*2*time.Second
	began := time.Now()
	var wg sync.WaitGroup
	for _, sl := range s.pool.Slots {
		wg.Add(1)
		go func(sl *workerproc.Slot) {
			defer wg.Done()
			s.warmJITCache(sl, ptxs, timeout)
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
}

// jitHelpers is how many helper workers compile modules for one device: one per eight modules, at
// most one per CPU (shared between the devices) and at most maxJITHelpers.
func jitHelpers(modules, devices int) int {
	return min(maxJITHelpers, max(1, runtime.NumCPU()/max(devices, 1)), modules/8)
}

const maxJITHelpers = 8

// warmJITCache compiles the modules in helper workers, a share each, in parallel, so that the
// driver's on-disk JIT cache holds them when the slot's own worker preloads. Each helper opens its
// own context on the device; failures only cost the time saved.
func (s *session) warmJITCache(sl *workerproc.Slot, ptxs []string, timeout time.Duration) {
	n := jitHelpers(len(ptxs), len(s.pool.Slots))
	if n < 2 || os.Getenv("CUDA_CACHE_DISABLE") == "1" {
		return
	}
	var wg sync.WaitGroup
	for h := 0; h < n; h++ {
		var share []string
		for i := h; i < len(ptxs); i += n {
			share = append(share, ptxs[i])
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			w, err := sl.StartHelper()
			if err != nil {
				return
			}
			defer w.Close()
			_, _ = w.Call(protocol.Request{Op: protocol.OpPreload, Preload: share}, timeout)
		}()
	}
	wg.Wait()
	s.mu.Lock()
	s.cost.JITHelpers = max(s.cost.JITHelpers, n)
	s.mu.Unlock()
}

// start prints the plan's size and sets up progress for the measurements still to make.
func (s *session) start(what string, total, todo int) {
	fmt.Fprintf(s.cfg.Stderr, "%s: %d measurements, %d cached, %d to run on %d device(s)\n",
		what, total, total-todo, todo, len(s.pool.Slots))
	s.prog = newProgress(s.cfg.Stderr, s.cfg.Progress, todo)
}

// Tune measures cuBLAS and every planned (variant, shape), re-measures each shape's leaders
// interleaved, writes the results into cfg.Out and prints a ranked table per shape.
func Tune(cfg *Config) error {
	vs, err := cfg.Filter.Select(cfg.Catalog.Variants())
	if err != nil {
		return err
	}
	items, err := buildPlan(vs, cfg.Shapes, cfg.Strategy, cfg.Shard)
	if err != nil {
		return err
	}
	s, err := openSession(cfg)
	if err != nil {
		return err
	}
	defer s.close()
	s.index(vs)
	s.prog = noProgress{}
	cub := s.planCublas(cfg.Shapes)
	tasks := s.planVariants(results.KindTune, items)
	began := time.Now()
	total := len(cfg.Shapes) + runnable(items) - s.cost.Skipped
	s.start("tune", total, len(cub)+len(tasks))
	// Variant keys need no cuBLAS time; their watchdogs do, so cuBLAS runs first.
	if err := s.runPhases(cub, tasks); err != nil {
		return err
	}
	s.cost.Cached = total - len(cub) - len(tasks)
	recs := s.records()
	info := s.runInfo()
	if err := resultsdir.WriteResults(cfg.Out, recs, info); err != nil {
		return err
	}
	if err := writeRunPlan(cfg.Out, planOf(cfg, results.KindTune, vs)); err != nil {
		return err
	}
	rankStart := time.Now()
	ranked, notes, err := s.refine(recs)
	if err != nil {
		return err
	}
	s.cost.RankS = time.Since(rankStart).Seconds()
	var b strings.Builder
	resultsdir.WriteTables(&b, recs, ranked, notes, cfg.TableTop)
	if err := resultsdir.WriteAtomic(outPath(cfg.Out, "ranking.txt"), []byte(b.String())); err != nil {
		return err
	}
	if err := resultsdir.WriteRankingJSON(outPath(cfg.Out, "ranking.json"), recs, ranked, notes); err != nil {
		return err
	}
	s.cost.WallS = time.Since(began).Seconds()
	if s.cost.WallS > 0 {
		s.cost.PerMinute = float64(s.cost.Measured) / (s.cost.WallS / 60)
	}
	cj, err := json.MarshalIndent(s.cost, "", "  ")
	if err != nil {
		return err
	}
	if err := resultsdir.WriteAtomic(outPath(cfg.Out, "cost.json"), append(cj, '\n')); err != nil {
		return err
	}
	if _, err = io.WriteString(cfg.Stdout, b.String()); err != nil {
		return err
	}
	fmt.Fprintf(cfg.Stderr, "tune: %s\n", s.cost)
	return nil
}

func (s *session) index(vs []variant.Variant) {
	s.byName = map[string]*variant.Variant{}
	for i := range vs {
		s.byName[vs[i].Name] = &vs[i]
	}
}

// refine ranks every shape, re-measuring its leaders interleaved (one task per shape, so that the
// candidates of a shape alternate on one device).
func (s *session) refine(recs []results.Record) (map[protocol.Shape][]resultsdir.Entry, map[protocol.Shape]string, error) {
	ranked := resultsdir.SweepRanking(recs)
	notes := map[protocol.Shape]string{}
	if s.cfg.Rank.Rounds <= 0 {
		return ranked, notes, nil
	}
	var mu sync.Mutex
	var tasks []workerproc.Task
	for _, sh := range results.ShapesOf(recs) {
		sh := sh
		es := ranked[sh]
		idx := leaders(es, s.cfg.Rank)
		if len(idx) < 2 {
			continue
		}
		tasks = append(tasks, func(sl *workerproc.Slot) error {
			note, err := s.remeasure(sl, sh, es, idx)
			if err != nil {
				return err
			}
			resultsdir.Rank(es)
			mu.Lock()
			notes[sh] = note
			mu.Unlock()
			return nil
		})
	}
	if len(tasks) > 0 {
		fmt.Fprintf(s.cfg.Stderr, "re-measuring the leaders of %d shape(s) interleaved\n", len(tasks))
	}
	if err := s.pool.Run(tasks); err != nil {
		return nil, nil, err
	}
	return ranked, notes, nil
}

// Verify runs the edge-shape suite (or cfg.Shapes) for every selected variant without timing,
// writes the results into cfg.Out and prints one line per variant. It fails when a variant fails a
// shape it accepts.
func Verify(cfg *Config) error {
	vs, err := cfg.Filter.Select(cfg.Catalog.Variants())
	if err != nil {
		return err
	}
	var items []item
	for i := range vs {
		shapes := cfg.Shapes
		if shapes == nil {
			shapes = EdgeShapes(&vs[i])
		}
		it, err := buildPlan(vs[i:i+1], shapes, Strategy{}, Shard{0, 1})
		if err != nil {
			return err
		}
		items = append(items, it...)
	}
	if cfg.Shard.N > 1 {
		var part []item
		for i, it := range items {
			if i%cfg.Shard.N == cfg.Shard.I {
				part = append(part, it)
			}
		}
		items = part
	}
	s, err := openSession(cfg)
	if err != nil {
		return err
	}
	defer s.close()
	s.index(vs)
	s.prog = noProgress{}
	tasks := s.planVariants(results.KindVerify, items)
	s.start("verify", runnable(items), len(tasks))
	if err := s.runPhases(tasks); err != nil {
		return err
	}
	recs := s.records()
	// Edge order (not SortRecords order) decides which failure is "first" for a variant.
	summary, failed := edgeSummary(vs, items, recs)
	if err := resultsdir.WriteResults(cfg.Out, recs, s.runInfo()); err != nil {
		return err
	}
	if err := writeRunPlan(cfg.Out, planOf(cfg, results.KindVerify, vs)); err != nil {
		return err
	}
	if err := resultsdir.WriteAtomic(outPath(cfg.Out, "edge.txt"), []byte(summary)); err != nil {
		return err
	}
	if _, err := io.WriteString(cfg.Stdout, summary); err != nil {
		return err
	}
	if failed > 0 {
		return fmt.Errorf("%d variant(s) failed verification (see %s)", failed, outPath(cfg.Out, "results.csv"))
	}
	return nil
}

// edgeSummary renders one line per variant: what it claims, how many shapes passed, were skipped,
// and its first failure.
func edgeSummary(vs []variant.Variant, items []item, recs []results.Record) (string, int) {
	byID := map[string]results.Record{}
	for _, r := range recs {
		byID[ident(r.Kind, r.Variant, r.Shape)] = r
	}
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "variant\tclaims\tpassed\tskipped\tedge_suite\t")
	failedVariants := 0
	for i := range vs {
		v := &vs[i]
		var passed, skipped, checked int
		verdict := ""
		for _, it := range items {
			if it.V.Name != v.Name {
				continue
			}
			r, ok := byID[ident(results.KindVerify, v.Name, it.Shape)]
			if !ok {
				continue
			}
			checked++
			switch r.Status {
			case results.StatusOK:
				passed++
			case results.StatusSkipped:
				skipped++
			case results.StatusFailed:
				if verdict == "" {
					verdict = fmt.Sprintf("failed at %s: %s", results.ShapeString(r.Shape), r.Reason)
				}
			}
		}
		if checked == 0 {
			continue
		}
		switch {
		case verdict != "":
			failedVariants++
		case passed == 0:
			verdict = "not run (no shape fits)"
		default:
			verdict = "passed"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t\n", v.Name, claims(v.Requires), passed, skipped, verdict)
	}
	tw.Flush()
	return b.String(), failedVariants
}

// claims renders requirements: "any shape" or "M%64 N%64 K%8 ld%4".
func claims(r variant.Requirements) string {
	if r.Arbitrary() {
		return "any shape"
	}
	var parts []string
	for _, c := range []struct {
		n string
		v int
	}{{"M", r.MMultiple}, {"N", r.NMultiple}, {"K", r.KMultiple}, {"ld", r.LDMultiple}} {
		if c.v > 1 {
			parts = append(parts, fmt.Sprintf("%s%%%d", c.n, c.v))
		}
	}
	return strings.Join(parts, " ")
}

// Devices starts a worker per device and prints what each reports.
func Devices(worker string, devices []int, wd Watchdog, stdout io.Writer) error {
	p, err := workerproc.OpenPool(worker, nil, devices, wd.Hello)
	if err != nil {
		return err
	}
	defer p.Close()
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "index\tname\tuuid\tcc\tSMs\tmemory\tL2\tdriver\tclock MHz\tcuBLAS\t")
	for _, sl := range p.Slots {
		d := sl.Device
		cublas := "-"
		if d.CublasVersion > 0 {
			cublas = fmt.Sprint(d.CublasVersion)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%.1f GiB\t%d MiB\t%d\t%d\t%s\t\n", sl.Visible, d.Name, d.UUID,
			d.ComputeCapability, d.SMs, float64(d.MemoryBytes)/(1<<30), d.L2Bytes>>20, d.DriverVersion, d.ClockKHz/1000, cublas)
	}
	return tw.Flush()
}

// List prints the catalog's variants: geometry, requirements and resources. It needs no GPU.
func List(c Catalog, f Filter, stdout io.Writer) error {
	vs, err := f.Select(c.Variants())
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%d variants, nvcc %s, %s\n", len(vs), c.NVCC(), c.Arch())
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "variant\tfamily\tparams\tblock\ttile\tgrid_z\tdyn smem\trequires\tregs\tsmem\tspills\t")
	for i := range vs {
		v := &vs[i]
		r := v.Resources
		fmt.Fprintf(tw, "%s\t%s\t%s\t%dx%d\t%dx%d\t%d\t%d\t%s\t%d\t%d\t%d\t\n", v.Name, v.Family, v.ParamString(),
			v.Block.X, v.Block.Y, v.Tile.Rows, v.Tile.Cols, v.GridZ, v.DynamicShared, claims(v.Requires),
			r.Registers, r.SharedStatic, r.SpillStores+r.SpillLoads)
	}
	return tw.Flush()
}
