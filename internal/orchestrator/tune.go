package orchestrator

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"tilegen/internal/protocol"
	"tilegen/internal/results"
	"tilegen/internal/resultsdir"
	"tilegen/internal/search"
	"tilegen/internal/workerproc"
)

// Tune measures cuBLAS and every planned (variant, shape), re-measures each shape's leaders
// interleaved, writes the results into cfg.Out and prints a ranked table per shape.
func Tune(cfg *Config) error {
	_, err := tune(cfg)
	return err
}

// tuneOutcome is what a successful tune wrote into its results directory, kept in memory so that
// bench need not read it back.
type tuneOutcome struct {
	// recs are results.jsonl's records, in its order.
	recs []results.Record
	// ranking is ranking.json's content.
	ranking []results.ShapeRanking
}

func tune(cfg *Config) (*tuneOutcome, error) {
	vs, err := cfg.Filter.Select(cfg.Catalog.Variants())
	if err != nil {
		return nil, err
	}
	items, err := buildPlan(vs, cfg.Shapes, cfg.Strategy, cfg.Shard)
	if err != nil {
		return nil, err
	}
	s, err := openSession(cfg)
	if err != nil {
		return nil, err
	}
	defer s.close()
	s.index(vs)
	s.prog = noProgress{}
	cub := s.planCublas(cfg.Shapes)
	began := time.Now()
	if cfg.Strategy.Name == search.Model {
		if err := s.tuneModel(items, cub); err != nil {
			return nil, err
		}
	} else {
		tasks := s.planVariants(results.KindTune, items)
		total := len(cfg.Shapes) + runnable(items) - s.cost.Skipped
		s.start("tune", total, len(cub)+len(tasks))
		// Variant keys need no cuBLAS time; their watchdogs do, so cuBLAS runs first: ahead of the
		// variants in one queue, not as a phase of its own. With one device that is the same order;
		// with several, a device that takes a shape's first variant before the shape's cuBLAS task
		// has finished elsewhere times cuBLAS there itself (ensureCublas, which every device does
		// anyway), so no device waits at a barrier for the slowest cuBLAS run.
		if err := s.runPhases(append(cub, tasks...)); err != nil {
			return nil, err
		}
		s.cost.Cached = total - len(cub) - len(tasks)
	}
	recs := s.records()
	info := s.runInfo()
	if err := resultsdir.WriteResults(cfg.Out, recs, info); err != nil {
		return nil, err
	}
	if err := writeRunPlan(cfg.Out, planOf(cfg, results.KindTune, vs)); err != nil {
		return nil, err
	}
	rankStart := time.Now()
	ranked, notes, err := s.refine(recs)
	if err != nil {
		return nil, err
	}
	s.cost.RankS = time.Since(rankStart).Seconds()
	var b strings.Builder
	resultsdir.WriteTables(&b, recs, ranked, notes, cfg.TableTop)
	if err := resultsdir.WriteAtomic(outPath(cfg.Out, "ranking.txt"), []byte(b.String())); err != nil {
		return nil, err
	}
	ranking := resultsdir.RankingOf(recs, ranked, notes)
	if err := resultsdir.WriteRankingJSON(outPath(cfg.Out, "ranking.json"), recs, ranked, notes); err != nil {
		return nil, err
	}
	s.cost.WallS = time.Since(began).Seconds()
	if s.cost.WallS > 0 {
		s.cost.PerMinute = float64(s.cost.Measured) / (s.cost.WallS / 60)
	}
	s.mu.Lock()
	s.cost.perDevice(s.slotCosts(), s.dev)
	s.mu.Unlock()
	cj, err := json.MarshalIndent(s.cost, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := resultsdir.WriteAtomic(outPath(cfg.Out, "cost.json"), append(cj, '\n')); err != nil {
		return nil, err
	}
	if _, err = io.WriteString(cfg.Stdout, b.String()); err != nil {
		return nil, err
	}
	fmt.Fprintf(cfg.Stderr, "tune: %s\n", s.cost)
	return &tuneOutcome{recs: recs, ranking: ranking}, nil
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
		tasks = append(tasks, workerproc.Task{Do: func(sl *workerproc.Slot) error {
			note, err := s.remeasure(sl, sh, es, idx)
			if err != nil {
				return err
			}
			resultsdir.Rank(es)
			mu.Lock()
			notes[sh] = note
			mu.Unlock()
			return nil
		}})
	}
	if len(tasks) > 0 {
		fmt.Fprintf(s.cfg.Stderr, "re-measuring the leaders of %d shape(s) interleaved\n", len(tasks))
	}
	if err := s.pool.Run(tasks); err != nil {
		return nil, nil, err
	}
	return ranked, notes, nil
}
