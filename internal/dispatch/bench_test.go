package dispatch

import "testing"

func BenchmarkTune(b *testing.B) {
	d := synthData(synthCorpus(80, 7))
	var all []int
	for i := range d.Samples {
		all = append(all, i)
	}
	m, _ := newModel(d, all, 1)
	for b.Loop() {
		m.loo(grid[len(grid)/2])
	}
}

func BenchmarkCompile(b *testing.B) {
	d := synthData(synthCorpus(80, 7))
	var all []int
	for i := range d.Samples {
		all = append(all, i)
	}
	m, _ := newModel(d, all, 1)
	for b.Loop() {
		r := &Rule{Shift: 1, Lo: [3]int{0, 0, 0}, Hi: [3]int{30, 30, 30}}
		m.compile(r, uniformParams(grid[len(grid)/2]))
	}
}
