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
	// JITHelpers is the number of helper workers that compiled shares of the modules; with
	// PreloadOverlapped they did so alongside the measurements (PreloadS is then their wall time,
	// not time the GPUs waited), else the slots' workers preloaded before the sweep.
	JITHelpers        int  `json:"jit_helpers"`
	PreloadOverlapped bool `json:"preload_overlapped,omitempty"`
	// LoadS, VerifyS and TimingS sum the workers' phases over the measurements.
	LoadS   float64 `json:"load_s"`
	VerifyS float64 `json:"verify_s"`
	TimingS float64 `json:"timing_s"`
	// RankS is the interleaved re-measurement of the leaders.
	RankS float64 `json:"rank_s"`
	// Devices is the same per GPU, in the pool's order: how evenly the work spread and how much of
	// the wall time each GPU's worker spent measuring.
	Devices []DeviceCost `json:"devices,omitempty"`
}

// DeviceCost is one GPU's share of a run.
type DeviceCost struct {
	// Slot is the pool position, Visible the CUDA_VISIBLE_DEVICES value its workers ran under.
	Slot    int    `json:"slot"`
	Visible string `json:"visible"`
	Name    string `json:"name"`
	UUID    string `json:"uuid"`
	// Measured counts the measurements this GPU made; PerMinute is Measured per minute of the run's
	// wall time.
	Measured  int     `json:"measured"`
	PerMinute float64 `json:"measured_per_minute"`
	// WorkerS sums the worker's phases (module load, verification, timing) of those measurements;
	// Busy is WorkerS over the wall time (the rest: JIT, the orchestrator, waiting at phase ends,
	// re-measuring leaders).
	WorkerS float64 `json:"worker_s"`
	Busy    float64 `json:"busy"`
	// VerifyS and TimingS are WorkerS's verification and timing parts, and PerMeasurementMS the
	// worker's mean time per measurement: the same work taking longer on one GPU of several than on
	// one alone shows contention on the host (input generation and comparison run on its CPUs).
	VerifyS          float64 `json:"verify_s"`
	TimingS          float64 `json:"timing_s"`
	PerMeasurementMS float64 `json:"per_measurement_ms"`
}

// perDevice fills c.Devices from the counts by device UUID, in the order of slots.
func (c *Cost) perDevice(slots []DeviceCost, counts map[string]*DeviceCost) {
	c.Devices = nil
	for _, d := range slots {
		if n := counts[d.UUID]; n != nil {
			d.Measured, d.WorkerS, d.VerifyS, d.TimingS = n.Measured, n.WorkerS, n.VerifyS, n.TimingS
		}
		if d.Measured > 0 {
			d.PerMeasurementMS = 1e3 * d.WorkerS / float64(d.Measured)
		}
		if c.WallS > 0 {
			d.PerMinute = float64(d.Measured) / (c.WallS / 60)
			d.Busy = d.WorkerS / c.WallS
		}
		c.Devices = append(c.Devices, d)
	}
}

func (c Cost) String() string {
	jit := fmt.Sprintf("%.1f s to preload %d modules (%d helper processes, then %d threads)", c.PreloadS, c.PreloadModules,
		c.JITHelpers, c.PreloadThreads)
	if c.PreloadOverlapped {
		jit = fmt.Sprintf("%d modules compiled by %d helper processes in %.1f s alongside the measurements", c.PreloadModules,
			c.JITHelpers, c.PreloadS)
	}
	return fmt.Sprintf("%d measured (%d cached, %d skipped) in %.1f s, %.0f per minute; JIT: %s; worker time: module loads "+
		"%.1f s, verification %.1f s, timing %.1f s; re-measuring leaders %.1f s",
		c.Measured, c.Cached, c.Skipped, c.WallS, c.PerMinute, jit, c.LoadS, c.VerifyS, c.TimingS, c.RankS) + c.deviceString()
}

func (c Cost) deviceString() string {
	if len(c.Devices) < 2 {
		return ""
	}
	out := "; per GPU:"
	for _, d := range c.Devices {
		out += fmt.Sprintf(" [%d] %d (%.0f/min, busy %.0f %%, %.0f ms each)", d.Slot, d.Measured, d.PerMinute, 100*d.Busy, d.PerMeasurementMS)
	}
	return out
}

// slotCosts lists the pool's GPUs (the per-device entries before counting).
func (s *session) slotCosts() []DeviceCost {
	if s.pool == nil {
		return nil
	}
	out := make([]DeviceCost, 0, len(s.pool.Slots))
	for _, sl := range s.pool.Slots {
		out = append(out, DeviceCost{Slot: sl.Index, Visible: sl.Visible, Name: sl.Device.Name, UUID: sl.Device.UUID})
	}
	return out
}
