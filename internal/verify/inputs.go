package verify

import (
	"math"
	"math/rand/v2"
)

// Rand is the seeded generator every check draws its inputs from; the same seed gives the same
// inputs on every machine and Go version (PCG is specified exactly).
func Rand(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, 0x7469_6c65_6765_6e00)) // second word: "tilegen\0"
}

// CheckSeed is the seed of verification check i under a run's seed: check 0 uses the seed itself,
// later checks seeds spread by the golden-ratio increment.
func CheckSeed(seed uint64, i int) uint64 { return seed + uint64(i)*0x9e37_79b9_7f4a_7c15 }

// Uniform fills dst with values drawn uniformly from [-1, 1).
func Uniform(r *rand.Rand, dst []float32) {
	for i := range dst {
		dst[i] = float32(2*r.Float64() - 1)
	}
}

// Matrix returns a rows×cols matrix with row stride ld (ld ≥ cols) whose elements are uniform in
// [-1, 1) and whose padding columns cols..ld-1 hold pad (a NaN there proves a kernel never reads
// past the matrix width).
func Matrix(r *rand.Rand, rows, cols, ld int, pad float32) []float32 {
	m := make([]float32, rows*ld)
	for i := 0; i < rows; i++ {
		Uniform(r, m[i*ld:i*ld+cols])
		for j := cols; j < ld; j++ {
			m[i*ld+j] = pad
		}
	}
	return m
}

// SentinelFloat is Sentinel as a float32 (a NaN: compare bits, never values).
func SentinelFloat() float32 { return math.Float32frombits(Sentinel) }
