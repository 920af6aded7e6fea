package dispatch

import (
	"hash/fnv"
	"math"
	"math/rand/v2"

	"tilegen/internal/protocol"
)

// A synthetic GPU for the tests: kernels whose times follow a wave-quantized compute model and a
// traffic model, so that which kernel wins depends on the regime the way it does on a real GPU
// (row strips for GEMV-like shapes, split-K for deep K and small outputs, small tiles for small
// problems, big tiles for big ones; vectorized big tiles only where the tile divides M and N),
// plus ±3 % of deterministic noise.

type synthKernel struct {
	name           string
	tr, tc, z, bps int
	eff            float64 // fraction of the SM's FMA rate a full wave reaches
	ldMultiple     int
	robust         bool
	// partial is the slowdown of the compute when the tile does not divide M and N (a
	// bounds-checked path for every tile, as vectorized kernels take).
	partial float64
}

var synthKernels = []synthKernel{
	{"big128x128", 128, 128, 1, 1, 0.90, 1, true, 1.1},
	{"big128x128_vec", 128, 128, 1, 1, 0.99, 1, true, 1.9},
	{"big128x256_v4", 128, 256, 1, 1, 0.97, 4, false, 1.6},
	{"gemv_r1", 1, 256, 1, 8, 0.08, 1, true, 1},
	{"mid64x64", 64, 64, 1, 2, 0.70, 1, true, 1.05},
	{"naive16", 16, 16, 1, 8, 0.10, 1, true, 1},
	{"small32x32", 32, 32, 1, 4, 0.45, 1, true, 1},
	{"splitk16_64x64", 64, 64, 16, 2, 0.60, 1, true, 1.05},
	{"splitk64_32x32", 32, 32, 64, 4, 0.40, 1, true, 1},
}

const (
	synthSMs     = 132
	synthSMRate  = 66.9e12 / synthSMs // flop/s per SM
	synthBW      = 2.5e12             // bytes/s
	synthLaunch  = 3e-6               // s
	synthReduce  = 2e-6               // s, a split-K reduction's extra launch
	synthCublasL = 4e-6
)

func synthTime(k synthKernel, m, n, kk int) float64 {
	tm, tn := (m+k.tr-1)/k.tr, (n+k.tc-1)/k.tc
	tiles := float64(tm * tn * k.z)
	waves := math.Ceil(tiles / float64(synthSMs*k.bps))
	kz := math.Ceil(float64(kk) / float64(k.z))
	compute := waves * float64(k.tr*k.tc) * kz * 2 * float64(k.bps) / (synthSMRate * k.eff)
	if m%k.tr != 0 || n%k.tc != 0 {
		compute *= k.partial
	}
	traffic := 4 * (float64(m)*float64(kk)*float64(tn) + float64(kk)*float64(n)*float64(tm) + float64(m)*float64(n)*float64(k.z))
	t := synthLaunch + math.Max(compute, traffic/synthBW)
	if k.z > 1 {
		t += synthReduce + 8*float64(m)*float64(n)*float64(k.z)/synthBW
	}
	return t
}

// synthCublas is a library that always runs one of three good kernels well.
func synthCublas(m, n, k int) float64 {
	best := math.Inf(1)
	for _, c := range []synthKernel{{"", 128, 128, 1, 1, 0.95, 1, false, 1.1}, {"", 64, 64, 1, 2, 0.75, 1, false, 1}, {"", 64, 64, 8, 2, 0.65, 1, false, 1}} {
		best = math.Min(best, synthTime(c, m, n, k))
	}
	return best + synthCublasL - synthLaunch
}

func noise(name string, s protocol.Shape) float64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	h.Write([]byte{byte(s.M), byte(s.M >> 8), byte(s.N), byte(s.N >> 8), byte(s.K), byte(s.K >> 8)})
	return 1 + 0.06*(float64(h.Sum64()%1000)/1000-0.5)
}

// synthCorpus is a corpus like the project's: transformer projections at several token counts,
// im2col convolutions, Gram products, and log-uniform random shapes.
func synthCorpus(random int, seed uint64) []protocol.Shape {
	var out []protocol.Shape
	seen := map[protocol.Shape]bool{}
	add := func(m, n, k int) {
		s := protocol.Shape{M: m, N: n, K: k}
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, tok := range []int{1, 8, 32, 128, 512, 2048} {
		for _, nk := range [][2]int{{768, 768}, {3072, 768}, {768, 3072}, {4096, 4096}, {11008, 4096}} {
			add(tok, nk[0], nk[1])
		}
	}
	for _, c := range []int{64, 128, 256, 512} {
		for _, hw := range []int{49, 196, 784, 3136} {
			add(c, hw, 9*c/2)
		}
	}
	for _, g := range [][3]int{{32, 32, 100000}, {64, 64, 50000}, {128, 128, 20000}, {16, 16, 65536}} {
		add(g[0], g[1], g[2])
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	for range random {
		d := func() int { return int(math.Round(math.Exp2(rng.Float64() * 13))) }
		add(d(), d(), d())
	}
	return out
}

// synthData measures every kernel on every shape (none where a kernel cannot take it).
func synthData(shapes []protocol.Shape) *Data {
	d := &Data{SMs: synthSMs}
	for _, k := range synthKernels {
		ld := k.ldMultiple
		d.Kernels = append(d.Kernels, Kernel{Name: k.name, TileRows: k.tr, TileCols: k.tc, GridZ: k.z, BlocksPerSM: k.bps,
			Robust: k.robust, General: ld == 1, Supports: func(m, n, kk int) bool { return n%ld == 0 && kk%ld == 0 }})
	}
	for _, s := range shapes {
		d.Samples = append(d.Samples, Sample{Shape: s, CublasMS: 1e3 * synthCublas(s.M, s.N, s.K) * noise("cublas", s)})
		row := make([]float64, len(synthKernels))
		for j, k := range synthKernels {
			if d.Kernels[j].Supports(s.M, s.N, s.K) {
				row[j] = 1e3 * synthTime(k, s.M, s.N, s.K) * noise(k.name, s)
			}
		}
		d.Times = append(d.Times, row)
	}
	return d
}

func protoShape(m, n, k int) protocol.Shape { return protocol.Shape{M: m, N: n, K: k} }
