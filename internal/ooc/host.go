package ooc

import (
	"bufio"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"

	"tilegen/internal/cpugemm"
	"tilegen/internal/verify"
)

// ParseBytes parses a byte count: a plain integer or float ("2e9") or a number with a unit
// (KiB, MiB, GiB, TiB binary; KB, MB, GB, TB decimal; case-insensitive; B optional).
func ParseBytes(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	mult := 1.0
	for _, u := range []struct {
		suffix string
		m      float64
	}{{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40},
		{"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"tb", 1e12}, {"b", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.m
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v <= 0 || math.IsInf(v, 0) || v*mult > math.MaxInt64/2 {
		return 0, fmt.Errorf("byte count %q: want a positive number with an optional unit (e.g. 256MiB, 2GiB, 8e9)", s)
	}
	return int64(v * mult), nil
}

// MemAvailable returns the host's available memory from /proc/meminfo (Linux), in bytes.
func MemAvailable() (int64, error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, fmt.Errorf("reading host memory: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemAvailable:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("reading host memory: %q: %w", sc.Text(), err)
			}
			return kb << 10, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("reading host memory: %w", err)
	}
	return 0, fmt.Errorf("reading host memory: no MemAvailable in /proc/meminfo")
}

// HostMargin is host memory left free beyond the matrices (the process itself, the page cache the
// system needs, pinned-memory bookkeeping).
const HostMargin = 4 << 30

// CheckHost reports whether need bytes of host memory can be allocated out of available (with
// HostMargin to spare); the error says how much is missing.
func CheckHost(need, available int64) error {
	if need+HostMargin > available {
		return fmt.Errorf("host memory too small: the matrices need %s (+%s margin), the host has %s available",
			Bytes(need), Bytes(HostMargin), Bytes(available))
	}
	return nil
}

// HostFits checks, before anything is allocated, that the host has the memory of an M×N×K
// product's matrices (HostBytes) available with HostMargin to spare.
func HostFits(m, n, k int) error {
	avail, err := MemAvailable()
	if err != nil {
		return err
	}
	return CheckHost(HostBytes(m, n, k), avail)
}

// fillChunk is the number of elements one generator stream fills; fixed so that the values do
// not depend on how many goroutines fill.
const fillChunk = 1 << 18

// Fill writes uniform values in [-1, 1) into dst, deterministically from (seed, stream) whatever
// the number of workers (< 1: GOMAXPROCS). Each chunk of fillChunk elements has its own PCG
// stream; a value is a 24-bit integer scaled exactly, so float32 holds it without rounding.
func Fill(dst []float32, seed, stream uint64, workers int) {
	if workers < 1 {
		workers = runtime.GOMAXPROCS(0)
	}
	chunks := (len(dst) + fillChunk - 1) / fillChunk
	var next sync.Mutex
	c := 0
	var wg sync.WaitGroup
	for range min(workers, max(chunks, 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				next.Lock()
				i := c
				c++
				next.Unlock()
				if i >= chunks {
					return
				}
				part := dst[i*fillChunk : min((i+1)*fillChunk, len(dst))]
				r := rand.New(rand.NewPCG(seed, stream<<40^uint64(i)))
				for x := 0; x < len(part); x += 2 {
					u := r.Uint64()
					part[x] = float32(int32(u&0xFFFFFF))*(1.0/(1<<23)) - 1
					if x+1 < len(part) {
						part[x+1] = float32(int32((u>>32)&0xFFFFFF))*(1.0/(1<<23)) - 1
					}
				}
			}
		}()
	}
	wg.Wait()
}

// Streams of Fill for the operands, so A and B differ under one seed.
const (
	StreamA = 1
	StreamB = 2
)

// SampleIndices returns up to count distinct sorted indices in [0, d): always 0 and d−1 (the first
// and last rows or columns, which edge blocks own), the rest uniformly drawn.
func SampleIndices(r *rand.Rand, d, count int) []int {
	if count >= d {
		out := make([]int, d)
		for i := range out {
			out[i] = i
		}
		return out
	}
	seen := map[int]bool{0: true, d - 1: true}
	for len(seen) < max(count, 2) {
		seen[r.IntN(d)] = true
	}
	out := make([]int, 0, len(seen))
	for i := range seen {
		out = append(out, i)
	}
	sort.Ints(out)
	return out
}

// Check is the result of comparing C with a float64 reference on a set of elements.
type Check struct {
	// Elements compared; Full when that is all of C.
	Elements int64 `json:"elements"`
	Full     bool  `json:"full"`
	// Bad counts elements over tolerance (NaN and Inf included).
	Bad int64 `json:"bad"`
	// MaxAbs is the largest |C−R|; MaxErr the largest |C−R| / tol_ij (≤ 1 passes).
	MaxAbs float64 `json:"max_abs"`
	MaxErr float64 `json:"max_err"`
	// FirstBadRow, FirstBadCol locate the first bad element in row-major order (−1 if none).
	FirstBadRow int `json:"first_bad_row"`
	FirstBadCol int `json:"first_bad_col"`
}

// Pass reports whether every compared element was within tolerance.
func (c Check) Pass() bool { return c.Bad == 0 && c.Elements > 0 }

// CheckSample compares the elements (rows × cols) of C = A·B (row-major, leading dimensions lda,
// ldb, ldc) against float64 dot products, with tolerance scale·(|A|·|B|)_ij + tiny (scale from
// verify.Scale). Work is spread over K ranges: each worker gathers the sampled columns of its rows
// of B once and accumulates every sampled element, so the B reads are K·len(cols), not
// K·len(rows)·len(cols).
func CheckSample(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, rows, cols []int, scale float64) Check {
	nr, nc := len(rows), len(cols)
	workers := min(runtime.GOMAXPROCS(0), max(k/256, 1))
	type part struct{ r, s []float64 }
	parts := make([]part, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p0, p1 := k*w/workers, k*(w+1)/workers
			r, s := make([]float64, nr*nc), make([]float64, nr*nc)
			bv := make([]float64, nc)
			for p := p0; p < p1; p++ {
				brow := b[p*ldb : p*ldb+n]
				for jj, j := range cols {
					bv[jj] = float64(brow[j])
				}
				for ii, i := range rows {
					av := float64(a[i*lda+p])
					aa := math.Abs(av)
					rr, ss := r[ii*nc:(ii+1)*nc], s[ii*nc:(ii+1)*nc]
					for jj, x := range bv {
						rr[jj] += av * x
						ss[jj] += aa * math.Abs(x)
					}
				}
			}
			parts[w] = part{r, s}
		}()
	}
	wg.Wait()
	res := Check{Elements: int64(nr) * int64(nc), Full: nr == m && nc == n, FirstBadRow: -1, FirstBadCol: -1}
	for ii, i := range rows {
		for jj, j := range cols {
			var want, bound float64
			for _, p := range parts {
				want += p.r[ii*nc+jj]
				bound += p.s[ii*nc+jj]
			}
			res.add(i, j, float64(c[i*ldc+j]), want, scale*bound+verify.Tiny)
		}
	}
	return res
}

func (c *Check) add(i, j int, got, want, tol float64) {
	d := math.Abs(got - want)
	bad := !(d <= tol) // NaN compares false
	if !math.IsNaN(d) {
		c.MaxAbs = max(c.MaxAbs, d)
		c.MaxErr = max(c.MaxErr, d/tol)
	} else {
		c.MaxErr = math.MaxFloat64 // JSON has no Inf
	}
	if bad {
		if c.Bad == 0 {
			c.FirstBadRow, c.FirstBadCol = i, j
		}
		c.Bad++
	}
}

// Reason describes a failed check in one line ("" when it passed).
func (c Check) Reason() string {
	switch {
	case c.Elements == 0:
		return "no elements checked"
	case c.Bad == 0:
		return ""
	}
	return fmt.Sprintf("%d of %d checked elements over tolerance, first at (%d,%d), worst %.3g× tolerance",
		c.Bad, c.Elements, c.FirstBadRow, c.FirstBadCol, c.MaxErr)
}

// Compare is the element-by-element comparison of two float32 results of one product: how many
// are bitwise identical and the largest absolute difference.
type Compare struct {
	Elements  int64   `json:"elements"`
	Identical int64   `json:"identical"`
	MaxAbs    float64 `json:"max_abs"`
}

// Diff compares got and want (rows×cols, leading dimensions ldg and ldw).
func Diff(rows, cols int, got []float32, ldg int, want []float32, ldw int) Compare {
	res := Compare{Elements: int64(rows) * int64(cols)}
	for i := 0; i < rows; i++ {
		g, w := got[i*ldg:i*ldg+cols], want[i*ldw:i*ldw+cols]
		for j := range g {
			if math.Float32bits(g[j]) == math.Float32bits(w[j]) {
				res.Identical++
				continue
			}
			d := math.Abs(float64(g[j]) - float64(w[j]))
			if math.IsNaN(d) {
				d = math.MaxFloat64
			}
			res.MaxAbs = max(res.MaxAbs, d)
		}
	}
	return res
}

// CPU SGEMM engines for the hybrid split: C (β = 0) = A·B on row-major operands.
const (
	// EngineBlocked is tilegen's cache-blocked Go SGEMM over goroutines (internal/cpugemm).
	EngineBlocked = "blocked"
	// EngineGonum is gonum's pure-Go blas32 Sgemm (its own goroutines, GOMAXPROCS wide).
	EngineGonum = "gonum"
)

// Engines lists the CPU engines by name.
var Engines = []string{EngineBlocked, EngineGonum}

// SGEMM is a CPU SGEMM: C = A·B (C not read) using up to workers goroutines where the engine
// allows choosing (< 1: GOMAXPROCS).
type SGEMM func(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, workers int)

// Engine returns the named CPU SGEMM.
func Engine(name string) (SGEMM, error) {
	switch name {
	case EngineBlocked:
		return cpugemm.Blocked, nil
	case EngineGonum:
		return func(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, _ int) {
			// gonum's blas is row-major, like tilegen's kernels.
			blas32.Implementation().Sgemm(blas.NoTrans, blas.NoTrans, m, n, k, 1, a, lda, b, ldb, 0, c, ldc)
		}, nil
	}
	return nil, fmt.Errorf("unknown CPU engine %q (want %s)", name, strings.Join(Engines, " or "))
}

// CheckFull compares every element of C = A·B with the float64 reference of internal/verify (for
// small runs: it holds two M×N float64 matrices).
func CheckFull(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, scale float64) (Check, error) {
	r, s, err := verify.Reference(m, n, k, a, lda, b, ldb)
	if err != nil {
		return Check{}, err
	}
	res := Check{Elements: int64(m) * int64(n), Full: true, FirstBadRow: -1, FirstBadCol: -1}
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			res.add(i, j, float64(c[i*ldc+j]), r[i*n+j], scale*s[i*n+j]+verify.Tiny)
		}
	}
	return res, nil
}
