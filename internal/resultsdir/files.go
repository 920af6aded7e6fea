package resultsdir

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"tilegen/internal/analysis"
	"tilegen/internal/protocol"
	"tilegen/internal/results"
)

// EnsureDir creates a results directory and its parents.
func EnsureDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("results directory: %w", err)
	}
	return nil
}

// WriteAtomic writes a file through a temporary file and a rename, so readers never see half of it.
func WriteAtomic(path string, data []byte) error {
	// A temporary name of its own (not path+".tmp"): two runners writing the same file at once
	// (the shared reference kernel, one --out) each rename a complete file, and the last one wins.
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	_, werr := f.Write(data)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(tmp, 0o644)
	}
	if werr == nil {
		werr = os.Rename(tmp, path)
	}
	if werr != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, werr)
	}
	return nil
}

// csvHeader are results.csv's columns. ratio is cuBLAS's median time on the shape (same device
// when there is one) over the row's (> 1: faster than cuBLAS), the convention of every table and
// JSON file.
var csvHeader = []string{"kind", "shape", "m", "n", "k", "variant", "family", "params", "status", "reason", "rank",
	"median_ms", "min_ms", "max_ms", "std_ms", "reps", "gflops", "ratio", "registers", "shared_bytes", "spill_bytes",
	"blocks_per_sm", "waves", "max_abs_err", "max_rel_err", "norm_rel_err", "seed", "gpu",
	"gflop", "traffic_model", "model_mbytes", "intensity", "model_gbs", "pct_roof", "bound", "wave_note"}

// analysisColumns are the roofline columns of a record (internal/analysis): FLOPs, the family's
// modelled global-memory traffic and intensity, achieved GB/s over that model, the position under
// the roof of the device's theoretical peaks, and a wave-quantization note. Timing columns are
// empty for records without a median; the peaks come from the record's device in device.json.
func analysisColumns(r *results.Record, devs map[string]protocol.Device) []string {
	var rows, cols int
	if r.Tile != nil {
		rows, cols = r.Tile.Rows, r.Tile.Cols
	}
	var pk analysis.Peaks
	var sms int
	if r.Device != nil {
		if d, ok := devs[r.Device.UUID]; ok {
			pk = analysis.TheoreticalPeaks(d.ComputeCapability, d.SMs, d.ClockKHz, d.MemClockKHz, d.MemBusWidth)
			sms = d.SMs
		}
	}
	ms := 0.0
	if r.Timing != nil && r.Status == results.StatusOK {
		ms = r.Timing.MedianMS
	}
	p := analysis.PlaceBatch(r.Family, rows, cols, r.Shape.M, r.Shape.N, r.Shape.K, r.Shape.Products(), ms, pk)
	out := []string{strconv.FormatFloat(p.Flops/1e9, 'g', 6, 64), p.Traffic.Model,
		strconv.FormatFloat(p.Traffic.Bytes()/1e6, 'g', 6, 64), strconv.FormatFloat(p.Intensity, 'g', 4, 64)}
	if ms > 0 {
		roof := ""
		if p.Attainable > 0 {
			roof = strconv.FormatFloat(p.PctOfRoof, 'f', 1, 64)
		}
		out = append(out, strconv.FormatFloat(p.GBps, 'f', 1, 64), roof, p.Bound)
	} else {
		out = append(out, "", "", "")
	}
	note := ""
	if a := r.Attributes; a != nil && sms > 0 {
		note = analysis.WavesOf(a.Blocks, a.BlocksPerSM, sms).Note
	}
	return append(out, note)
}

func ff(x float64) string { return strconv.FormatFloat(x, 'g', 6, 64) }

// EncodeCSV renders results.csv: one row per record, with the sweep rank of ok timed rows.
func EncodeCSV(rs []results.Record, info results.RunInfo) ([]byte, error) {
	devs := map[string]protocol.Device{}
	for _, d := range info.Devices {
		devs[d.UUID] = d
	}
	ranks := map[*results.Record]string{}
	for _, sh := range results.ShapesOf(rs) {
		es := candidates(rs, sh)
		Rank(es)
		for _, e := range es {
			ranks[e.Rec] = RankLabel(e)
		}
	}
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write(csvHeader)
	for i := range rs {
		r := &rs[i]
		row := []string{r.Kind, results.ShapeString(r.Shape), fmt.Sprint(r.Shape.M), fmt.Sprint(r.Shape.N), fmt.Sprint(r.Shape.K),
			r.Variant, r.Family, r.Params, r.Status, r.Reason, ranks[r]}
		if t := r.Timing; t != nil && r.Status == results.StatusOK {
			ratio := ""
			if c := results.CublasFor(rs, r); c != nil && t.MedianMS > 0 {
				ratio = ff(c.Timing.MedianMS / t.MedianMS)
			}
			row = append(row, ff(t.MedianMS), ff(t.MinMS), ff(t.MaxMS), ff(t.StdMS), fmt.Sprint(t.Reps),
				strconv.FormatFloat(results.GFLOPS(r.Shape, t.MedianMS), 'f', 1, 64), ratio)
		} else {
			row = append(row, "", "", "", "", "", "", "")
		}
		if r.Kind == results.KindCublas {
			row = append(row, "", "", "")
		} else {
			regs := r.Resources.Registers
			if regs == 0 && r.Attributes != nil {
				regs = r.Attributes.Registers
			}
			row = append(row, fmt.Sprint(regs), fmt.Sprint(r.Resources.SharedStatic+r.DynamicShared),
				fmt.Sprint(r.Resources.SpillStores+r.Resources.SpillLoads))
		}
		if a := r.Attributes; a != nil {
			row = append(row, fmt.Sprint(a.BlocksPerSM), strconv.FormatFloat(a.Waves, 'f', 2, 64))
		} else {
			row = append(row, "", "")
		}
		if len(r.Verify) > 0 {
			var abs, rel, norm float64
			for _, v := range r.Verify {
				abs, rel, norm = max(abs, v.MaxAbs), max(rel, v.MaxRel), max(norm, v.NormRel)
			}
			row = append(row, ff(abs), ff(rel), ff(norm))
		} else {
			row = append(row, "", "", "")
		}
		seed := ""
		if r.Seed != 0 {
			seed = strconv.FormatUint(r.Seed, 10)
		}
		gpu := ""
		if r.Device != nil {
			gpu = r.Device.Name
		}
		row = append(row, seed, gpu)
		row = append(row, analysisColumns(r, devs)...)
		w.Write(row)
	}
	w.Flush()
	return b.Bytes(), w.Error()
}

// BenchRuns is how many benchmark lines bench.txt gives a record with samples, the `go test
// -count` convention: the samples split into up to BenchRuns consecutive runs, each line the run's
// iteration count and mean time, so that benchstat sees n values and prints a confidence interval
// (it needs at least 6). A record with fewer samples gets one line per sample; one without samples
// (older results) gets its median once, with its repetition count.
const BenchRuns = 10

// encodeBench renders bench.txt in Go benchmark format for benchstat.
func encodeBench(rs []results.Record, info results.RunInfo) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "goos: %s\ngoarch: %s\n", info.GOOS, info.GOARCH)
	var gpus []string
	driver := ""
	for _, d := range info.Devices {
		if !slices.Contains(gpus, d.Name) {
			gpus = append(gpus, d.Name)
		}
		if driver == "" {
			driver = fmt.Sprint(d.DriverVersion)
		}
	}
	fmt.Fprintf(&b, "gpu: %s\ndriver: %s\nnvcc: %s\narch: %s\n", strings.Join(gpus, ", "), driver, info.NVCC, info.Arch)
	for _, r := range rs {
		if r.Status != results.StatusOK || r.Timing == nil || (r.Kind != results.KindTune && r.Kind != results.KindCublas) {
			continue
		}
		name := fmt.Sprintf("BenchmarkSgemm/shape=%s/variant=%s-1", results.ShapeString(r.Shape), r.Variant)
		for _, run := range benchRuns(r.Timing) {
			fmt.Fprintf(&b, "%s\t%8d\t%12.0f ns/op\t%10.1f GFLOP/s\n", name, run.n, run.ms*1e6, results.GFLOPS(r.Shape, run.ms))
		}
	}
	return b.Bytes()
}

// benchRun is one line of bench.txt: n launches of mean time ms.
type benchRun struct {
	n  int
	ms float64
}

// benchRuns splits a timing's samples into at most BenchRuns consecutive runs of near-equal size.
func benchRuns(t *protocol.TimingResult) []benchRun {
	if len(t.Samples) == 0 {
		return []benchRun{{n: max(t.Reps, 1), ms: t.MedianMS}}
	}
	k := min(len(t.Samples), BenchRuns)
	out := make([]benchRun, 0, k)
	for i := 0; i < k; i++ {
		part := t.Samples[i*len(t.Samples)/k : (i+1)*len(t.Samples)/k]
		sum := 0.0
		for _, x := range part {
			sum += x
		}
		out = append(out, benchRun{n: len(part), ms: sum / float64(len(part))})
	}
	return out
}

// RenderResultFiles rewrites those of results.csv and bench.txt that dir has from its results.jsonl
// (or .gz) and device.json, and leaves the records untouched: how committed results follow a change
// of those formats without a GPU.
func RenderResultFiles(dir string) error {
	recs, info, err := results.ReadDir(dir)
	if err != nil {
		return err
	}
	results.SortRecords(recs)
	cs, err := EncodeCSV(recs, info)
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	n := 0
	for _, f := range []struct {
		name string
		data []byte
	}{{"results.csv", cs}, {"bench.txt", encodeBench(recs, info)}} {
		if _, err := os.Stat(filepath.Join(dir, f.name)); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err := WriteAtomic(filepath.Join(dir, f.name), f.data); err != nil {
			return err
		}
		n++
	}
	if n == 0 {
		return fmt.Errorf("%s has neither results.csv nor bench.txt to rewrite", dir)
	}
	return nil
}

// WriteResults writes results.jsonl, results.csv, bench.txt and device.json into dir.
func WriteResults(dir string, rs []results.Record, info results.RunInfo) error {
	if err := EnsureDir(dir); err != nil {
		return err
	}
	results.SortRecords(rs)
	jl, err := results.EncodeJSONL(rs)
	if err != nil {
		return err
	}
	cs, err := EncodeCSV(rs, info)
	if err != nil {
		return err
	}
	dj, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		data []byte
	}{{"results.jsonl", jl}, {"results.csv", cs}, {"bench.txt", encodeBench(rs, info)}, {"device.json", append(dj, '\n')}} {
		if err := WriteAtomic(filepath.Join(dir, f.name), f.data); err != nil {
			return err
		}
	}
	return nil
}

// WriteTables prints one ranked table per shape (cuBLAS as a row; ratio = cuBLAS median / median),
// then the shape's failures and skips as counts. top limits the ranked rows (0: all); cuBLAS is always shown.
func WriteTables(w io.Writer, rs []results.Record, ranked map[protocol.Shape][]Entry, notes map[protocol.Shape]string, top int) {
	for _, sh := range results.ShapesOf(rs) {
		es := ranked[sh]
		var failed, skipped int
		for _, r := range rs {
			if r.Shape == sh && r.Kind == results.KindTune {
				switch r.Status {
				case results.StatusFailed:
					failed++
				case results.StatusSkipped:
					skipped++
				}
			}
		}
		fmt.Fprintf(w, "shape %s (%.3g GFLOP)\n", results.ShapeString(sh), results.Flops(sh)/1e9)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "rank\tvariant\tmedian ms\t95% CI ms\tGFLOP/s\tratio\tregs\tblocks/SM\twaves\tn\t")
		var cub *Entry
		for i := range es {
			if es[i].Rec.Kind == results.KindCublas {
				cub = &es[i]
			}
		}
		for i, e := range es {
			if top > 0 && i >= top && e.Rec.Kind != results.KindCublas {
				continue
			}
			ratio := "-"
			if cub != nil && e.Sum.Median > 0 {
				ratio = fmt.Sprintf("%.3f", cub.Sum.Median/e.Sum.Median)
			}
			regs, bps, waves := "-", "-", "-"
			if e.Rec.Kind != results.KindCublas && e.Rec.Resources.Registers > 0 {
				regs = fmt.Sprint(e.Rec.Resources.Registers)
			}
			if a := e.Rec.Attributes; a != nil {
				bps, waves = fmt.Sprint(a.BlocksPerSM), fmt.Sprintf("%.2f", a.Waves)
				if regs == "-" && e.Rec.Kind != results.KindCublas && a.Registers > 0 {
					regs = fmt.Sprint(a.Registers)
				}
			}
			n := fmt.Sprint(e.Sum.N)
			if e.Refined {
				n += "*"
			}
			fmt.Fprintf(tw, "%s\t%s\t%.4f\t%.4f-%.4f\t%.1f\t%s\t%s\t%s\t%s\t%s\t\n", RankLabel(e), e.Rec.Variant, e.Sum.Median,
				e.Sum.Lo, e.Sum.Hi, results.GFLOPS(sh, e.Sum.Median), ratio, regs, bps, waves, n)
		}
		tw.Flush()
		if len(es) == 0 {
			fmt.Fprintln(w, "  no successful measurement")
		}
		if top > 0 && len(es) > top {
			fmt.Fprintf(w, "  (%d more ranked rows in results.csv)\n", len(es)-top)
		}
		if failed+skipped > 0 {
			fmt.Fprintf(w, "  %d failed, %d skipped (see results.csv)\n", failed, skipped)
		}
		if note := notes[sh]; note != "" {
			fmt.Fprintf(w, "  %s\n", note)
		}
		fmt.Fprintln(w)
	}
}

// SweepRanking ranks every shape from the sweep's own samples.
func SweepRanking(rs []results.Record) map[protocol.Shape][]Entry {
	out := map[protocol.Shape][]Entry{}
	for _, sh := range results.ShapesOf(rs) {
		es := candidates(rs, sh)
		Rank(es)
		out[sh] = es
	}
	return out
}
