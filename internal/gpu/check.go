package gpu

import (
	"fmt"
	"math"
	"unsafe"

	"gorgonia.org/cu"

	"tilegen/internal/variant"
	"tilegen/internal/verify"
)

// Verification on the device (templates/support/reference.cu.tmpl, in the reference kernel's
// module): tilegen_fill draws a check's inputs from its seed, tilegen_expect turns the reference's
// sums into the expectation and bound, and tilegen_check compares the kernel's C with them and
// moves one record per block to the host. Before, the host drew every input (fresh per variant
// below --shared-inputs-above), downloaded the sums (16 bytes per element), computed the
// expectation and compared C on every CPU: most of a verification's time, and on two GPUs of one
// host the part of a tune that did not scale (results/tuning-throughput-h100x2).

const (
	// checkThreads is CHECK_THREADS in reference.cu.tmpl.
	checkThreads = 256
	// checkMaxBlocks caps tilegen_check's grid: enough blocks to fill a GPU, few enough records.
	checkMaxBlocks = 1024
	// checkPartWords is the size of a tg_check_part in 8-byte words: 5 doubles, 5 long longs.
	checkPartWords = 10
	// checkNone is CHECK_NONE: "no such element" in a record's first_bad and first_sentinel.
	checkNone = math.MaxInt64
)

// deviceCheck is the check's kernels and the buffer tilegen_check's records are written to.
type deviceCheck struct {
	fn           cu.Function  // tilegen_check
	fill, expect cu.Function  // tilegen_fill, tilegen_expect
	out          cu.DevicePtr // checkMaxBlocks records
	host         []float64    // the records, downloaded
}

// newDeviceCheck finds the check's kernels in the reference module; (nil, nil) when the module
// lacks one (a catalog generated before they existed: the worker draws, references and compares
// on the host, as then).
func newDeviceCheck(mod cu.Module) (*deviceCheck, error) {
	d := &deviceCheck{}
	for _, f := range []struct {
		name string
		fn   *cu.Function
	}{{"tilegen_check", &d.fn}, {"tilegen_fill", &d.fill}, {"tilegen_expect", &d.expect}} {
		fn, err := mod.Function(f.name)
		if err != nil {
			return nil, nil
		}
		*f.fn = fn
	}
	out, err := cu.MemAlloc(checkMaxBlocks * checkPartWords * 8)
	if err != nil {
		return nil, fmt.Errorf("allocating the comparison's records: %w", err)
	}
	d.out, d.host = out, make([]float64, checkMaxBlocks*checkPartWords)
	return d, nil
}

func (d *deviceCheck) close() { _ = cu.MemFree(d.out) }

// checkGrid is the number of blocks tilegen_check runs on a buffer of n floats.
func checkGrid(n int64) int {
	return int(min(checkMaxBlocks, max(1, (n+checkThreads-1)/checkThreads)))
}

// compareOnDevice compares the result in.dC (the whole buffer: guards, results, padding and gaps)
// with in's expectation on the device; the check's key gives the layout. It returns CompareBatch's
// metrics over the products × M × N results and SentinelBrokenBatch's answer: the index into the
// buffer of the first element outside the results that no longer holds the sentinel, or -1.
func (w *Worker) compareOnDevice(in *checkInputs, scale float64) (verify.Metrics, int, error) {
	d := w.check
	products, m, n, sc, ldc := max(in.key.batch, 1), in.key.m, in.key.n, in.key.sc, in.key.ldc
	blocks := checkGrid(int64(in.nc))
	a := newArgs().ptr(in.dC).i64(int64(in.nc)).i64(guard).i32(products).i32(m).i32(n).i32(ldc).i64(sc).
		ptr(in.dE).ptr(in.dBound).f64(scale).f64(verify.Tiny).i32(int(verify.Sentinel)).ptr(d.out)
	if err := launchErr(d.fn.Launch(blocks, 1, 1, checkThreads, 1, 1, 0, w.stream, a.pointers())); err != nil {
		return verify.Metrics{}, -1, fmt.Errorf("comparison kernel: %w", err)
	}
	recs := d.host[:blocks*checkPartWords]
	if err := copyErr("device to host", cu.MemcpyDtoHAsync(unsafe.Pointer(&recs[0]), d.out, int64(len(recs))*8, w.stream)); err != nil {
		return verify.Metrics{}, -1, err
	}
	if err := w.sync("comparison kernel"); err != nil {
		return verify.Metrics{}, -1, err
	}
	parts, broken := decodeCheckParts(recs)
	return verify.Merge(parts, products*m*n), broken, nil
}

// decodeCheckParts turns tilegen_check's records (checkPartWords words each) into verify.Parts and
// the least first_sentinel (-1 when none).
func decodeCheckParts(recs []float64) ([]verify.Part, int) {
	parts := make([]verify.Part, len(recs)/checkPartWords)
	broken := int64(checkNone)
	word := func(r []float64, i int) int64 { return int64(math.Float64bits(r[i])) }
	for b := range parts {
		r := recs[b*checkPartWords : (b+1)*checkPartWords]
		p := verify.Part{Metrics: verify.Metrics{MaxAbs: r[0], MaxRel: r[1], Worst: r[2],
			Bad: int(word(r, 5)), NonFinite: int(word(r, 6)), FirstBad: word(r, 8)}, SumSq: r[3], SumRef: r[4], Finite: int(word(r, 7))}
		if p.FirstBad == checkNone {
			p.FirstBad = -1
		}
		parts[b] = p
		broken = min(broken, word(r, 9))
	}
	if broken == checkNone {
		return parts, -1
	}
	return parts, int(broken)
}

// newCheckInputs builds a check's inputs: on the device when the reference module has the
// check's kernels (newCheckInputsDevice), else on the host (newCheckInputsHost).
func (w *Worker) newCheckInputs(key checkKey, cpuCheckMaxFlops float64) (*checkInputs, error) {
	// in is freed on every error return, whatever the builder had allocated (a failed reference
	// launch once became a nil dereference that killed the worker, when the cleanup went through a
	// result the error path had set to nil).
	in := &checkInputs{key: key}
	var err error
	if w.check != nil {
		err = w.buildCheckInputsDevice(in, cpuCheckMaxFlops)
	} else {
		err = w.buildCheckInputsHost(in, cpuCheckMaxFlops)
	}
	if err != nil {
		in.ar.free()
		return nil, err
	}
	return in, nil
}

// Streams of a check's seed: each input is drawn from its own (fillSeed).
const (
	streamA = iota + 1
	streamB
	streamC
	streamBias
)

// fillSeed is the seed tilegen_fill draws input `stream` of a check with seed `seed` from.
func fillSeed(seed uint64, stream int) uint64 { return seed ^ uint64(stream)*0x632b_e59b_d9b4_e019 }

// matrixElems is the length of a buffer of `products` matrices of rows rows (row stride ld) at
// stride elements apart; stride 0 is one matrix every product shares (batchMatrices' layout).
func matrixElems(products, rows, ld int, stride int64) int {
	if stride == 0 {
		return rows * ld
	}
	return int(stride)*(products-1) + rows*ld
}

// fill launches tilegen_fill on buf (n floats): the matrices (count, stride, rows×cols, ld) from
// `front` on are uniform from seed (uniform) or all `inside`, everything else pad.
func (w *Worker) fill(buf cu.DevicePtr, n int, front int, count int, stride int64, rows, cols, ld int, seed uint64, uniform bool,
	inside, pad uint32) error {
	if stride == 0 {
		count = 1
	}
	a := newArgs().ptr(buf).i64(int64(n)).i64(int64(front)).i32(count).i64(stride).i32(rows).i32(cols).i32(ld).
		i64(int64(seed)).i32(b2i(uniform)).i32(int(int32(inside))).i32(int(int32(pad)))
	return launchErr(w.check.fill.Launch(checkGrid(int64(n)), 1, 1, checkThreads, 1, 1, 0, w.stream, a.pointers()))
}

// buildCheckInputsDevice builds in's inputs without the host: A, B, C and the bias drawn by
// tilegen_fill from the check's seed (NaN padding and gaps in A and B; C NaN where β = 0, else
// uniform, sentinels around and between the results), the reference's sums turned into the
// expectation and bound in place by tilegen_expect. Only a cross-checked shape (2MNK at most
// cpuCheckMaxFlops) moves A, B and the sums to the host, to recompute them on the CPU.
func (w *Worker) buildCheckInputsDevice(in *checkInputs, cpuCheckMaxFlops float64) (err error) {
	key := in.key
	m, n, k := key.m, key.n, key.k
	products := max(key.batch, 1)
	nan := math.Float32bits(float32(math.NaN()))
	ar, ac := key.op.StoredA(m, k)
	br, bc := key.op.StoredB(k, n)
	in.na, in.nb = matrixElems(products, ar, key.lda, key.sa), matrixElems(products, br, key.ldb, key.sb)
	in.nc = guard + matrixElems(products, m, key.ldc, key.sc) + guard
	mn := int64(m) * int64(n)
	var dR, dS cu.DevicePtr
	for _, b := range []struct {
		p     *cu.DevicePtr
		bytes int64
	}{{&in.dA0, int64(in.na) * 4}, {&in.dB0, int64(in.nb) * 4}, {&in.dA, int64(in.na) * 4}, {&in.dB, int64(in.nb) * 4},
		{&in.dC0, int64(in.nc) * 4}, {&in.dC, int64(in.nc) * 4}, {&dR, mn * int64(products) * 8}, {&dS, mn * int64(products) * 8}} {
		if *b.p, err = in.ar.alloc(b.bytes); err != nil {
			return err
		}
	}
	if err := w.fill(in.dA0, in.na, 0, products, key.sa, ar, ac, key.lda, fillSeed(key.seed, streamA), true, 0, nan); err != nil {
		return fmt.Errorf("drawing A: %w", err)
	}
	if err := w.fill(in.dB0, in.nb, 0, products, key.sb, br, bc, key.ldb, fillSeed(key.seed, streamB), true, 0, nan); err != nil {
		return fmt.Errorf("drawing B: %w", err)
	}
	// C: NaN where β = 0, so an element the kernel never writes fails.
	if err := w.fill(in.dC0, in.nc, guard, products, key.sc, m, n, key.ldc, fillSeed(key.seed, streamC), key.beta != 0, nan,
		verify.Sentinel); err != nil {
		return fmt.Errorf("drawing C: %w", err)
	}
	if key.epi.HasBias() {
		nb := key.epi.BiasLen(m, n)
		if in.dBias, err = in.ar.alloc(int64(nb) * 4); err != nil {
			return err
		}
		if err := w.fill(in.dBias, nb, 0, 1, 0, 1, nb, nb, fillSeed(key.seed, streamBias), true, 0, nan); err != nil {
			return fmt.Errorf("drawing the bias: %w", err)
		}
	}
	if err := w.reference(key, in.dA0, in.dB0, dR, dS); err != nil {
		return err
	}
	if err := w.sync("drawing the inputs and the reference kernel"); err != nil {
		return err
	}
	if 2*float64(m)*float64(n)*float64(k)*float64(products) <= cpuCheckMaxFlops {
		if err := w.crossCheck(key, in, dR, dS); err != nil {
			return err
		}
		in.crossChecked = true
	}
	act := map[string]int{variant.ActNone: 0, variant.ActReLU: 1, variant.ActGELU: 2}[key.epi.Activation()]
	a := newArgs().ptr(dR).ptr(dS).i64(mn * int64(products)).i32(m).i32(n).ptr(in.dC0).i64(guard).i64(key.sc).i32(key.ldc).
		f32(key.alpha).f32(key.beta).ptr(in.dBias).i32(act).i32(b2i(key.epi.BiasPerRow())).f64(verify.EpilogueSlope(key.epi, k))
	if err := launchErr(w.check.expect.Launch(checkGrid(mn*int64(products)), 1, 1, checkThreads, 1, 1, 0, w.stream, a.pointers())); err != nil {
		return fmt.Errorf("expectation kernel: %w", err)
	}
	if err := w.sync("expectation kernel"); err != nil {
		return err
	}
	in.dE, in.dBound = dR, dS
	return nil
}

// crossCheck recomputes the reference's sums of check `in` on the CPU from the drawn A and B and
// compares them with the device's (dR, dS).
func (w *Worker) crossCheck(key checkKey, in *checkInputs, dR, dS cu.DevicePtr) error {
	mn, products := key.m*key.n, max(key.batch, 1)
	a, b := make([]float32, in.na), make([]float32, in.nb)
	r, s := make([]float64, mn*products), make([]float64, mn*products)
	for _, d := range []struct {
		dst any
		src cu.DevicePtr
	}{{a, in.dA0}, {b, in.dB0}, {r, dR}, {s, dS}} {
		if err := in.ar.download(w.stream, d.dst, d.src); err != nil {
			return err
		}
	}
	return crossCheckSums(key, a, b, r, s)
}

// crossCheckSums recomputes the reference's sums r and s (dense, product after product) on the
// CPU from A and B as key lays them out in a and b, and compares them.
func crossCheckSums(key checkKey, a, b []float32, r, s []float64) error {
	m, n, k := key.m, key.n, key.k
	mn := m * n
	ar, ac := key.op.StoredA(m, k)
	br, bc := key.op.StoredB(k, n)
	la, lb := (ar-1)*key.lda+ac, (br-1)*key.ldb+bc
	for p := 0; p < max(key.batch, 1); p++ {
		oa, ob := p*int(key.sa), p*int(key.sb)
		cr, cs, err := verify.ReferenceOp(key.op, m, n, k, a[oa:oa+la], key.lda, b[ob:ob+lb], key.ldb)
		if err != nil {
			return fmt.Errorf("CPU reference: %w", err)
		}
		if err := verify.CrossCheck(r[mn*p:mn*(p+1)], s[mn*p:mn*(p+1)], cr, cs, n, crossCheckTol); err != nil {
			return fmt.Errorf("GPU reference disagrees with the CPU reference (product %d): %w", p, err)
		}
	}
	return nil
}
