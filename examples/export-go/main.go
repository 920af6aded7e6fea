// Command export-go uses a Go package written by `runner export` (here tgsgemm, exported from the
// H100 sweep in results/h100-seeds): it loads the embedded kernels into device 0's primary
// context, multiplies two random matrices with Sgemm and checks a sample of rows against float64
// on the CPU. The exported package needs no tilegen code and no module beyond the standard library
// (it opens the CUDA driver itself when Load is called); this program uses gorgonia.org/cu for the
// context, memory and stream, and passes their raw handles as uintptr.
//
//	go run ./examples/export-go [-m 1000 -n 1000 -k 1000]
package main

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"unsafe"

	"gorgonia.org/cu"

	"tilegen/examples/export-go/tgsgemm"
)

func main() {
	m := flag.Int("m", 1000, "rows of A and C")
	n := flag.Int("n", 1000, "columns of B and C")
	k := flag.Int("k", 1000, "columns of A, rows of B")
	flag.Parse()
	if err := run(*m, *n, *k); err != nil {
		fmt.Fprintf(os.Stderr, "export-go: %v\n", err)
		os.Exit(1)
	}
}

func run(m, n, k int) error {
	// A cu context is current on one OS thread.
	runtime.LockOSThread()
	dev := cu.Device(0)
	ctx, err := dev.RetainPrimaryCtx()
	if err != nil {
		return fmt.Errorf("primary context: %w", err)
	}
	defer dev.ReleasePrimaryCtx()
	if err := cu.SetCurrentContext(ctx); err != nil {
		return err
	}
	ks, err := tgsgemm.Load()
	if err != nil {
		return err
	}
	defer ks.Unload()
	name, err := tgsgemm.Choose(m, n, k, k, n, n)
	if err != nil {
		return err
	}

	rng := rand.New(rand.NewPCG(1, 2))
	a, b := make([]float32, m*k), make([]float32, k*n)
	for i := range a {
		a[i] = rng.Float32()*2 - 1
	}
	for i := range b {
		b[i] = rng.Float32()*2 - 1
	}
	dA, err := upload(a)
	if err != nil {
		return err
	}
	defer cu.MemFree(dA)
	dB, err := upload(b)
	if err != nil {
		return err
	}
	defer cu.MemFree(dB)
	dC, err := cu.MemAlloc(int64(4 * m * n))
	if err != nil {
		return err
	}
	defer cu.MemFree(dC)
	stream, err := cu.MakeStream(cu.NonBlocking)
	if err != nil {
		return err
	}
	defer stream.Destroy()

	if err := ks.Sgemm(m, n, k, 1, uintptr(dA), k, uintptr(dB), n, 0, uintptr(dC), n, uintptr(unsafe.Pointer(stream.C()))); err != nil {
		return err
	}
	if err := stream.Synchronize(); err != nil {
		return err
	}
	c := make([]float32, m*n)
	if err := cu.MemcpyDtoH(unsafe.Pointer(&c[0]), dC, int64(4*len(c))); err != nil {
		return err
	}
	// Check 16 rows against float64: |C - A·B| within 2·(K+2)·2^-24·(|A|·|B|).
	worst := 0.0
	for s := 0; s < 16; s++ {
		i := s * (m - 1) / 15
		for j := 0; j < n; j++ {
			var r, abs float64
			for p := 0; p < k; p++ {
				x, y := float64(a[i*k+p]), float64(b[p*n+j])
				r += x * y
				abs += math.Abs(x * y)
			}
			tol := 2*float64(k+2)*math.Ldexp(1, -24)*abs + 1e-30
			worst = max(worst, math.Abs(float64(c[i*n+j])-r)/tol)
		}
	}
	fmt.Printf("%dx%dx%d with %s: worst error %.3f of the tolerance\n", m, n, k, name, worst)
	if worst > 1 {
		return fmt.Errorf("result outside the tolerance")
	}
	return nil
}

func upload(h []float32) (cu.DevicePtr, error) {
	d, err := cu.MemAlloc(int64(4 * len(h)))
	if err != nil {
		return 0, err
	}
	if err := cu.MemcpyHtoD(d, unsafe.Pointer(&h[0]), int64(4*len(h))); err != nil {
		cu.MemFree(d)
		return 0, err
	}
	return d, nil
}
