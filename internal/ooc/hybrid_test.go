package ooc

import (
	"strings"
	"testing"
)

// h100 is micro1d_t64_r16 at 8192³ on an H100-like device: 64×64 tiles (128 column tiles), 132
// SMs × 3 blocks = 396 blocks a wave, so a wave covers 3 row bands (192 rows) and 8192 rows take
// ceil(128·128/396) = 42 waves.
func h100(cpuGFLOPS float64) GPUModel {
	return GPUModel{M: 8192, N: 8192, K: 8192, TileRows: 64, TileCols: 64, SMs: 132, BlocksPerSM: 3,
		KernelMS: 48, H2DMS: 11, D2HMS: 5.5, CPUGFLOPS: cpuGFLOPS}
}

func TestWaveCandidates(t *testing.T) {
	g := h100(100)
	if w := g.Waves(8192); w != 42 {
		t.Fatalf("waves(8192) = %d", w)
	}
	c := g.WaveCandidates()
	if c[0] != 0 || len(c) != 43 {
		t.Fatalf("candidates %v", c)
	}
	// 41 waves hold 41·396/128 = 126 full bands = 8064 rows: F = 128 removes the partial wave.
	if c[1] != 128 || g.Waves(8192-c[1]) != 41 || g.Waves(8192-c[1]+1) != 42 {
		t.Errorf("first candidate %d", c[1])
	}
	for i := 1; i < len(c); i++ {
		if g.Waves(8192-c[i]) >= g.Waves(8192-c[i-1]) {
			t.Errorf("candidate %d (F=%d) removes no wave", i, c[i])
		}
	}
}

func TestPlanF(t *testing.T) {
	// A slow CPU: even the first wave (128 rows, 17 GFLOP) takes it longer than the whole GPU part.
	f, why := PlanF(h100(50))
	if f != 0 || !strings.Contains(strings.Join(why, "\n"), "CPU would finish after the GPU") {
		t.Errorf("slow CPU: F=%d\n%s", f, strings.Join(why, "\n"))
	}
	// A fast CPU takes some waves, and never finishes after the GPU.
	g := h100(2000)
	f, why = PlanF(g)
	if f == 0 || g.CPUMS(f) > g.GPUMS(8192-f) {
		t.Errorf("fast CPU: F=%d cpu %.3f gpu %.3f\n%s", f, g.CPUMS(f), g.GPUMS(8192-f), strings.Join(why, "\n"))
	}
	isCandidate := false
	for _, c := range g.WaveCandidates() {
		isCandidate = isCandidate || c == f
	}
	if !isCandidate {
		t.Errorf("F=%d is not a wave boundary", f)
	}
	t.Log(strings.Join(why, "\n"))
}
