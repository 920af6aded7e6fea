package orchestrator

import (
	"fmt"
)

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
