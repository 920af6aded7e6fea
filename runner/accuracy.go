package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"tilegen/internal/orchestrator"
	"tilegen/internal/protocol"
	"tilegen/internal/results"
	"tilegen/internal/variant"
	"tilegen/internal/workerproc"
)

// accuracyReport is accuracy.json: the device, the shape and one result per input distribution.
type accuracyReport struct {
	Device  *protocol.Device           `json:"device"`
	Shape   string                     `json:"shape"`
	Seed    uint64                     `json:"seed"`
	Results []*protocol.AccuracyResult `json:"results"`
}

// runAccuracy measures, on the same inputs, the error of the selected variants (by default every
// 3xtf32 and tf32 one of the mma_tf32 family's tiles given by --variants), of cuBLAS SGEMM and of
// cuBLAS TF32 against the float64 reference, for uniform inputs and rows spanning 2^±span.
func runAccuracy(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("accuracy", "[--shape MxNxK] [--variants GLOB] [--precision 3xtf32,tf32] [--out FILE] [flags]", stdout)
	var c catalogFlags
	var wf workerFlags
	fs.AddFlagSet(c.sourceFlags())
	fs.AddFlagSet(c.filterFlags())
	redefault(fs, "precision", "3xtf32,tf32")
	fs.AddFlagSet(wf.flags(false))
	shape := fs.String("shape", "4096x4096x4096", "one NN product `MxNxK`")
	inputs := fs.String("inputs", "uniform,wide", "input `distributions` (comma-separated uniform, wide)")
	span := fs.Int("span", 20, "wide inputs scale each row by 2^e, e uniform in [-`n`, n]")
	seed := fs.Uint64("seed", 1, "`seed` of the random A and B")
	device := fs.Int("device", 0, "GPU `index`")
	out := fs.String("out", "", "write the report as JSON to `file` (empty: print only)")
	timeout := fs.Duration("timeout", 10*time.Minute, "give up on the worker after `duration`")
	atLeast(fs, ">=0", "device", "seed")
	atLeast(fs, ">0", "span", "timeout")
	if ok, err := parse(fs, args); !ok || err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErr("accuracy", "want no arguments")
	}
	s, err := results.ParseShape(*shape)
	if err != nil {
		return usageErr("accuracy", "--shape: %v", err)
	}
	if s.Op != variant.OpNN || s.Batch != 0 || s.Precision != variant.PrecisionFP32 {
		return usageErr("accuracy", "--shape: one NN product MxNxK (the precisions come from the variants)")
	}
	var dists []string
	for _, d := range strings.Split(*inputs, ",") {
		d = strings.TrimSpace(d)
		if d != protocol.InputsUniform && d != protocol.InputsWide {
			return usageErr("accuracy", "--inputs %q: want uniform, wide or both", d)
		}
		dists = append(dists, d)
	}
	flt, err := c.filter("accuracy")
	if err != nil {
		return err
	}
	cat, err := c.catalog()
	if err != nil {
		return err
	}
	vs, err := flt.Select(cat.Variants())
	if err != nil {
		return err
	}
	var kernels []protocol.Kernel
	for i := range vs {
		if vs[i].Op != variant.OpNN || vs[i].Batched {
			continue
		}
		ptx, err := cat.PTX(vs[i].Name)
		if err != nil {
			return err
		}
		kernels = append(kernels, protocol.Kernel{Variant: vs[i], PTX: ptx})
	}
	bin, err := workerproc.FindWorker(wf.worker)
	if err != nil {
		return err
	}
	wargs, err := orchestrator.WorkerArgs(cat)
	if err != nil {
		return err
	}
	wc, err := workerproc.StartWorker(bin, wargs, *device, time.Minute)
	if err != nil {
		return err
	}
	defer wc.Close()
	rep := accuracyReport{Device: wc.Device(), Shape: results.ShapeString(s), Seed: *seed}
	for _, d := range dists {
		resp, err := wc.Call(protocol.Request{Op: protocol.OpAccuracy, Shape: s,
			Accuracy: &protocol.AccuracyRequest{Seed: *seed, Inputs: d, Span: *span, Kernels: kernels}}, *timeout)
		if err != nil {
			return err
		}
		if resp.Accuracy == nil {
			return fmt.Errorf("worker answered without an accuracy result")
		}
		if resp.Note != "" {
			fmt.Fprintf(stderr, "runner accuracy: %s\n", resp.Note)
		}
		rep.Results = append(rep.Results, resp.Accuracy)
	}
	fmt.Fprint(stdout, accuracySummary(&rep))
	if *out == "" {
		return nil
	}
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(*out), 0o755); err != nil {
		return err
	}
	return os.WriteFile(*out, append(b, '\n'), 0o644)
}

// accuracySummary is the report as a table, each error also as a multiple of cuBLAS SGEMM's.
func accuracySummary(r *accuracyReport) string {
	var b stringsBuilder
	dev := ""
	if r.Device != nil {
		dev = " on " + r.Device.Name
	}
	b.f("accuracy of C = A·B at %s%s (seed %d), against the float64 reference\n", r.Shape, dev, r.Seed)
	for _, res := range r.Results {
		what := "uniform [-1, 1)"
		if res.Inputs == protocol.InputsWide {
			what = fmt.Sprintf("uniform, rows scaled by 2^e, e in [-%d, %d]", res.Span, res.Span)
		}
		b.f("\ninputs %s: %s\n", res.Inputs, what)
		var ref *protocol.AccuracyRow
		for i := range res.Rows {
			if res.Rows[i].Name == "cublas_sgemm" {
				ref = &res.Rows[i]
			}
		}
		b.f("  %-44s %-7s %12s %12s %12s %8s %9s\n", "computation", "prec", "|C-R|/|R|", "max rel", "max/|A||B|", "x sgemm", "nonfinite")
		for _, row := range res.Rows {
			x := "-"
			if ref != nil && ref.NormRel > 0 {
				x = fmt.Sprintf("%.2f", row.NormRel/ref.NormRel)
			}
			b.f("  %-44s %-7s %12.3e %12.3e %12.3e %8s %9d\n", row.Name, row.Precision, row.NormRel, row.MaxRel, row.MaxRelBound, x, row.NonFinite)
		}
	}
	return b.String()
}
