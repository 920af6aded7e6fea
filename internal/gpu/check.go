package gpu

import (
	"errors"
	"fmt"
	"math"
	"unsafe"

	"gorgonia.org/cu"

	"tilegen/internal/verify"
)

// The device-side comparison (tilegen_check in templates/support/reference.cu.tmpl, in the
// reference kernel's module): a verification compares the kernel's C with the float64 expectation
// where both already are, and moves one record per block to the host instead of C (4 bytes per
// element) and, before that, the host's share of comparing it (the expectation and bound, 16 bytes
// per element, read on every CPU). On two GPUs of one host the host's share was the part of a tune
// that did not scale (results/tuning-throughput-h100x2).

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

// deviceCheck is tilegen_check and the buffer its records are written to.
type deviceCheck struct {
	fn   cu.Function
	out  cu.DevicePtr // checkMaxBlocks records
	host []float64    // the records, downloaded
}

// newDeviceCheck finds tilegen_check in the reference module; (nil, nil) when the module has none
// (a catalog generated before it existed: the worker compares on the host, as then).
func newDeviceCheck(mod cu.Module) (*deviceCheck, error) {
	fn, err := mod.Function("tilegen_check")
	if err != nil {
		return nil, nil
	}
	out, err := cu.MemAlloc(checkMaxBlocks * checkPartWords * 8)
	if err != nil {
		return nil, fmt.Errorf("allocating the comparison's records: %w", err)
	}
	return &deviceCheck{fn: fn, out: out, host: make([]float64, checkMaxBlocks*checkPartWords)}, nil
}

func (d *deviceCheck) close() { _ = cu.MemFree(d.out) }

// checkGrid is the number of blocks tilegen_check runs on a buffer of n floats.
func checkGrid(n int64) int {
	return int(min(checkMaxBlocks, max(1, (n+checkThreads-1)/checkThreads)))
}

// compareOnDevice compares the result in.dC (the whole buffer: guards, results, padding and gaps)
// with in's expectation on the device. It returns CompareBatch's metrics over the products × M × N
// results and SentinelBrokenBatch's answer: the index into the buffer of the first element outside
// the results that no longer holds the sentinel, or -1.
func (w *Worker) compareOnDevice(in *checkInputs, products, m, n int, sc int64, ldc int, scale float64) (verify.Metrics, int, error) {
	d := w.check
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

// uploadExpectation puts in's expectation and bound on the device for compareOnDevice and drops
// the host copies. When the device cannot hold them (a result of hundreds of millions of
// elements next to its inputs) they stay on the host and the comparison runs there; any other
// failure is returned.
func (w *Worker) uploadExpectation(in *checkInputs) error {
	var sub arena
	dE, err := sub.uploadF64(w.stream, in.e)
	if err == nil {
		var dB cu.DevicePtr
		if dB, err = sub.uploadF64(w.stream, in.bound); err == nil {
			in.dE, in.dBound = dE, dB
			in.ar.ptrs = append(in.ar.ptrs, sub.ptrs...)
			in.e, in.bound = nil, nil
			return nil
		}
	}
	sub.free()
	if fatal := (*FatalError)(nil); errors.As(err, &fatal) {
		return err
	}
	return nil
}
