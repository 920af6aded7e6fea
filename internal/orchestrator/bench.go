package orchestrator

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"tilegen/internal/protocol"
	"tilegen/internal/results"
	"tilegen/internal/resultsdir"
	"tilegen/internal/search"
	"tilegen/internal/stats"
	"tilegen/internal/variant"
	"tilegen/internal/workerproc"
)

// BenchSettings configure the benchmark suite (runner bench).
type BenchSettings struct {
	// Root is where the suite's directory <Root>/<gpu> is made (results/bench).
	Root string
	// PeakPTX is the support module holding tilegen_peak_ffma.
	PeakPTX string
	// Markdown, when set, is the BENCHMARKS.md file rendered from the summary.
	Markdown string
	// Command is the command line recorded in the summary.
	Command string
	// Now stamps the summary (the suite is a dated measurement, unlike results.jsonl).
	Now time.Time
	// LargeFlops: shapes of at least this many FLOPs are measured only for the leaders of the
	// largest other shape (default 1e12: 8192³); LargeTop is how many leaders (default 16).
	LargeFlops float64
	LargeTop   int
}

func (bs BenchSettings) largeFlops() float64 {
	if bs.LargeFlops > 0 {
		return bs.LargeFlops
	}
	return 1e12
}

func (bs BenchSettings) largeTop() int {
	if bs.LargeTop > 0 {
		return bs.LargeTop
	}
	return 16
}

// largeCandidates picks, from the ranking of the largest shape of op, its top verified variants
// and its best seed-family variant (seeds: the catalog's seed families).
func largeCandidates(ranking []results.ShapeRanking, op variant.Op, prec variant.Precision, edgeFailed, seeds map[string]bool, top int) ([]string, string) {
	var from *results.ShapeRanking
	var most float64
	for i := range ranking {
		sh, err := results.ParseShape(ranking[i].Shape)
		if err == nil && sh.Op == op && sh.Precision == prec && sh.Batch == 0 && results.Flops(sh) > most {
			most, from = results.Flops(sh), &ranking[i]
		}
	}
	if from == nil {
		return nil, ""
	}
	var names []string
	seed := false
	for _, e := range from.Entries {
		if e.Kind != results.KindTune || edgeFailed[e.Variant] {
			continue
		}
		switch {
		case len(names) < top:
			names = append(names, e.Variant)
			seed = seed || seeds[e.Family]
		case !seed && seeds[e.Family]:
			names = append(names, e.Variant)
			seed = true
		}
	}
	return names, from.Shape
}

// BenchShapes is the suite: the cuBLAS-sized squares, 1024³, the awkward shapes, and the large
// squares under the other ops (issue 16: each against cuBLAS with the same op), with their targets
// (best verified variant / cuBLAS, measured in the same run).
var BenchShapes = []struct {
	Shape  string
	Target float64 // 0: no target
	Group  string
}{
	{"4096x4096x4096", 0.95, "large"}, {"8192x8192x8192", 0.95, "large"}, {"2048x2048x2048", 0.90, "large"},
	{"1024x1024x1024", 0, "large"},
	{"4096x4096x32", 1, "awkward"}, {"1041x1247x139", 1, "awkward"}, {"535x792x414", 1, "awkward"},
	{"224x256x192", 1, "awkward"}, {"1000x1000x1000", 1, "awkward"}, {"127x4097x513", 1, "awkward"},
	{"4096x4096x4096:NT", 0.95, "ops"}, {"4096x4096x4096:TN", 0.95, "ops"}, {"4096x4096x4096:TT", 0.95, "ops"},
	{"8192x8192x8192:NT", 0.95, "ops"}, {"8192x8192x8192:TN", 0.95, "ops"}, {"8192x8192x8192:TT", 0.95, "ops"},
	// The strided-batch suite (against cublasSgemmStridedBatched): no shape below 0.9, and the
	// group's geometric mean at least BatchGeomeanTarget.
	{"512x512x64:b64", 0.9, "batch"}, {"512x512x64:NT:b64", 0.9, "batch"}, {"512x512x64:TN:b64", 0.9, "batch"}, {"512x512x64:TT:b64", 0.9, "batch"},
	{"128x128x128:b64", 0.9, "batch"}, {"128x128x128:NT:b64", 0.9, "batch"}, {"128x128x128:TN:b64", 0.9, "batch"}, {"128x128x128:TT:b64", 0.9, "batch"},
	{"64x64x64:b1024", 0.9, "batch"}, {"64x64x64:NT:b1024", 0.9, "batch"}, {"64x64x64:TN:b1024", 0.9, "batch"}, {"64x64x64:TT:b1024", 0.9, "batch"},
	{"384x384x64:b12", 0.9, "batch"}, {"384x384x64:NT:b12", 0.9, "batch"}, {"384x384x64:TN:b12", 0.9, "batch"}, {"384x384x64:TT:b12", 0.9, "batch"},
	{"4096x4096x64:b8", 0.9, "batch"},
	// Fused epilogues (a layer's bias per output feature: per column of the row-major C), each
	// against cuBLAS + the same epilogue as a separate kernel and against cublasLt's fused epilogue
	// (two rows per shape): faster than the first, at least as fast as the second.
	{"4096x4096x1024:bias_relu_col", 1, "epilogue"}, {"4096x4096x1024:bias_gelu_col", 1, "epilogue"},
	{"8192x1024x4096:bias_relu_col", 1, "epilogue"}, {"8192x1024x4096:bias_gelu_col", 1, "epilogue"},
}

// BatchGeomeanTarget is the least geometric mean of the batch group's ratios (issue 16).
const BatchGeomeanTarget = 1.2

// PrecisionTargets are the targets of the suite's squares under the tensor-core precisions (issue
// 18; bench --precision runs them): 3xTF32 against cuBLAS SGEMM, TF32 against cuBLAS in TF32 math.
// Their rows form the group "precision".
var PrecisionTargets = map[variant.Precision]map[string]float64{
	variant.Precision3xTF32: {"4096x4096x4096": 2.0, "8192x8192x8192": 2.0},
	variant.PrecisionTF32:   {"4096x4096x4096": 0.9, "8192x8192x8192": 0.9},
}

// BenchSummary is summary.json.
type BenchSummary struct {
	Date       string               `json:"date"`
	Command    string               `json:"command"`
	GPU        string               `json:"gpu"`
	UUID       string               `json:"uuid"`
	Driver     int                  `json:"driver"`
	Cublas     string               `json:"cublas"`
	NVCC       string               `json:"nvcc"`
	Arch       string               `json:"arch"`
	PeakGFLOPS float64              `json:"peak_gflops"`
	Peak       *protocol.PeakResult `json:"peak"`
	Variants   int                  `json:"variants"`
	EdgeFailed []string             `json:"edge_failed"`
	TuneWall   string               `json:"tune_wall"`
	Note       string               `json:"note,omitempty"`
	Shapes     []BenchShape         `json:"shapes"`
}

// BenchShape is one shape of the summary.
type BenchShape struct {
	// Shape is MxNxK; Op the operation (NN, NT, TN, TT) and Batch the batch count (1: one product).
	Shape string `json:"shape"`
	Op    string `json:"op"`
	Batch int    `json:"batch"`
	// Epilogue is the fused epilogue's kind (none, bias, bias_relu, bias_gelu) and Bias where its
	// bias runs (row or col of C; empty for none).
	Epilogue string `json:"epilogue"`
	Bias     string `json:"bias,omitempty"`
	// Precision is the arithmetic (fp32, 3xtf32, tf32; variant.Precision's label).
	Precision string `json:"precision"`
	// Baseline names what Ratio compares with: cublas (cublasSgemm with the same op; for tf32 in
	// TF32 tensor-op math), cublas_batched (cublasSgemmStridedBatched, same op and batch), and for a
	// fused epilogue cublas+epilogue (cublasSgemm, then the epilogue as a separate kernel) or
	// cublaslt (cublasLtMatmul with its fused epilogue); a shape with an epilogue has a row for each.
	Baseline string      `json:"baseline"`
	Group    string      `json:"group"`
	Target   float64     `json:"target,omitempty"`
	Met      *bool       `json:"met,omitempty"`
	Best     *BenchEntry `json:"best"`
	Cublas   *BenchEntry `json:"cublas"`
	// Ratio is cuBLAS's median time over the best variant's (>1: faster than cuBLAS).
	Ratio     float64     `json:"ratio"`
	BestSeed  *BenchEntry `json:"best_seed"`
	SeedRatio float64     `json:"seed_ratio"`
}

// key is the shape as the ranking and BenchShapes write it (results.ShapeString).
func (b BenchShape) key() string {
	out := b.Shape
	if b.Op != "" && b.Op != variant.OpNN.String() {
		out += ":" + b.Op
	}
	if b.Baseline == protocol.BaselineCublasBatched {
		out += fmt.Sprintf(":b%d", b.Batch)
	}
	if b.Epilogue != "" && b.Epilogue != variant.EpiNone.String() {
		out += ":" + b.Epilogue + "_" + b.Bias
	}
	if b.Precision != "" && b.Precision != variant.PrecisionFP32.Label() {
		out += ":" + b.Precision
	}
	return out
}

// targetCell is the row's target as the Markdown tables show it: "≥ T" with ✓ or ✗, or – without one.
func (b BenchShape) targetCell() string {
	if b.Target <= 0 {
		return "–"
	}
	cell := fmt.Sprintf("≥ %.2f", b.Target)
	if b.Met != nil {
		if *b.Met {
			cell += " ✓"
		} else {
			cell += " ✗"
		}
	}
	return cell
}

// label is the shape as the Markdown table shows it: its key, and for a fused epilogue the
// baseline of the row (the cuBLAS column then holds that baseline).
func (b BenchShape) label() string {
	if b.Baseline == protocol.BaselineCublasEpilogue || b.Baseline == protocol.BaselineCublasLt {
		return b.key() + " vs " + b.Baseline
	}
	return b.key()
}

// BenchEntry is one measured kernel of a shape.
type BenchEntry struct {
	Variant  string  `json:"variant"`
	Family   string  `json:"family,omitempty"`
	Params   string  `json:"params,omitempty"`
	TFLOPS   float64 `json:"tflops"`
	MedianMS float64 `json:"median_ms"`
	LoMS     float64 `json:"ci_lo_ms"`
	HiMS     float64 `json:"ci_hi_ms"`
	StdMS    float64 `json:"std_ms"`
	N        int     `json:"n"`
	PctPeak  float64 `json:"pct_peak"`
	// NormRel is the largest ‖C−R‖_F / ‖R‖_F of the entry's verification checks on the shape in
	// this run (R the float64 reference of the check's inputs; 0: no check recorded): the error
	// figure the precision rows set side by side (issue 18).
	NormRel float64 `json:"norm_rel,omitempty"`
}

// normRelOf is the largest ‖C−R‖/‖R‖ of the verification checks that the passing records of the
// named variant (or cuBLAS, KindCublas) on sh hold.
func normRelOf(recs []results.Record, name string, cublas bool, sh protocol.Shape) float64 {
	worst := 0.0
	for _, r := range recs {
		if r.Shape != sh || r.Status != results.StatusOK || (r.Kind == results.KindCublas) != cublas || r.Variant != name {
			continue
		}
		for _, v := range r.Verify {
			worst = max(worst, v.NormRel)
		}
	}
	return worst
}

var slugRE = regexp.MustCompile(`[^a-z0-9]+`)

// Bench runs the suite: the edge suite for every selected variant, a tune of the suite's shapes,
// the FFMA peak probe, then summary.json (and BENCHMARKS.md) from what passed. A variant that failed
// any edge shape or its own shape is never reported as a winner.
func Bench(cfg *Config, bs BenchSettings) error {
	if bs.PeakPTX == "" {
		return fmt.Errorf("bench: no peak probe module")
	}
	// The peak probe first: it also names the GPU, and so the suite's directory.
	p, err := workerproc.OpenPool(cfg.Worker, cfg.WorkerArgs, cfg.Devices, cfg.Watchdog.Hello)
	if err != nil {
		return err
	}
	dev := p.Slots[0].Device
	peakTiming := protocol.TimingSettings{Warmup: 5, Reps: 50, MinTimeMS: 200, MaxReps: 1000}
	resp, err := p.Slots[0].Call(protocol.Request{Op: protocol.OpPeak, Kernel: &protocol.Kernel{PTX: bs.PeakPTX},
		Timing: &peakTiming}, time.Minute)
	p.Close()
	if err == nil && resp.Error != "" {
		err = fmt.Errorf("%s", resp.Error)
	}
	if err != nil || resp.Peak == nil {
		return fmt.Errorf("bench: peak probe: %v", err)
	}
	peak := resp.Peak
	fmt.Fprintf(cfg.Stderr, "bench: %s FP32 FFMA peak %.1f TFLOP/s\n", dev.Name, peak.GFLOPS/1e3)

	dir := filepath.Join(bs.Root, strings.Trim(slugRE.ReplaceAllString(strings.ToLower(dev.Name), "-"), "-"))
	if err := resultsdir.EnsureDir(dir); err != nil {
		return err
	}
	vcfg := *cfg
	vcfg.Shapes, vcfg.Out = nil, filepath.Join(dir, "verify")
	vcfg.Stdout = io.Discard
	// A variant failing the edge suite fails Verify; the suite goes on and leaves it out.
	vrecs, written, verr := verify(&vcfg)
	if !written {
		return verr
	}
	edgeFailed := map[string]bool{}
	for _, r := range vrecs {
		if r.Kind == results.KindVerify && r.Status == results.StatusFailed {
			edgeFailed[r.Variant] = true
		}
	}

	// The suite's largest shapes (8192³: a naive kernel takes seconds a launch) are measured for
	// the leaders of the largest other shape only.
	var small, large []protocol.Shape
	shapes := cfg.Shapes
	if shapes == nil {
		for _, b := range BenchShapes {
			sh, _ := results.ParseShape(b.Shape)
			if len(cfg.Filter.Ops) == 0 || slices.Contains(cfg.Filter.Ops, sh.Op) {
				shapes = append(shapes, sh)
			}
		}
		// Every suite shape under every precision --precision allows (FP32 alone by default).
		shapes = results.WithPrecisions(shapes, cfg.Filter.Precisions)
	}
	for _, sh := range shapes {
		if results.Flops(sh) >= bs.largeFlops() && len(shapes) > 1 {
			large = append(large, sh)
		} else {
			small = append(small, sh)
		}
	}
	tableFile, err := os.Create(filepath.Join(dir, "tune-stdout.txt"))
	if err != nil {
		return err
	}
	defer tableFile.Close()
	t0 := time.Now()
	tcfg := *cfg
	tcfg.Out, tcfg.Shapes = filepath.Join(dir, "tune"), small
	tcfg.Stdout = io.MultiWriter(cfg.Stdout, tableFile)
	tuned, err := tune(&tcfg)
	if err != nil {
		return err
	}
	ranking, recs := tuned.ranking, tuned.recs
	seeds := variant.SeedFamilies(cfg.Catalog.Variants())
	var largeNote string
	if len(large) > 0 {
		// The leaders of each op's (and precision's) largest shape run that op's large shapes.
		var names, froms []string
		for _, op := range variant.Ops {
			for _, prec := range variant.Precisions {
				if !slices.ContainsFunc(large, func(s protocol.Shape) bool { return s.Op == op && s.Precision == prec }) {
					continue
				}
				n, from := largeCandidates(ranking, op, prec, edgeFailed, seeds, bs.largeTop())
				if len(n) > 0 {
					names = append(names, n...)
					froms = append(froms, from)
				}
			}
		}
		from := strings.Join(froms, ", ")
		if len(names) > 0 {
			lcfg := *cfg
			lcfg.Out, lcfg.Shapes = filepath.Join(dir, "tune-large"), large
			// The leaders by name; the precisions the run allows, so that a tensor-core leader
			// runs its precision's large shapes.
			lcfg.Filter = Filter{Globs: names, Precisions: cfg.Filter.Precisions}
			// The leaders are a selection already: each is measured.
			lcfg.Strategy.Name, lcfg.Strategy.Budget = search.Exhaustive, search.Budget{}
			lcfg.Stdout = io.MultiWriter(cfg.Stdout, tableFile)
			lt, err := tune(&lcfg)
			if err != nil {
				return err
			}
			ranking = append(ranking, lt.ranking...)
			recs = append(recs, lt.recs...) // the large shapes' own records (their error figures)
			largeNote = fmt.Sprintf("Shapes of ≥ %.0f GFLOP were measured for the %d leaders at %s (its best %d verified variants and its best seed-family variant); see tune-large/.",
				bs.largeFlops()/1e9, len(names), from, bs.largeTop())
		}
	}
	wall := time.Since(t0)
	sum := summarize(ranking, recs, edgeFailed, seeds, peak)
	sum.Date = bs.Now.UTC().Format("2006-01-02")
	sum.Command, sum.GPU, sum.UUID, sum.Driver = bs.Command, dev.Name, dev.UUID, dev.DriverVersion
	sum.Cublas = fmt.Sprintf("%d (%s)", dev.CublasVersion, filepath.Base(dev.CublasLibrary))
	sum.NVCC, sum.Arch = cfg.Catalog.NVCC(), cfg.Catalog.Arch()
	sum.Variants = len(cfg.Catalog.Variants())
	sum.TuneWall = wall.Round(time.Second).String()
	sum.Note = largeNote
	for v := range edgeFailed {
		sum.EdgeFailed = append(sum.EdgeFailed, v)
	}
	sort.Strings(sum.EdgeFailed)
	b, err := json.MarshalIndent(sum, "", "  ")
	if err != nil {
		return err
	}
	if err := resultsdir.WriteAtomic(filepath.Join(dir, "summary.json"), append(b, '\n')); err != nil {
		return err
	}
	md := BenchMarkdown(sum, filepath.ToSlash(dir))
	if bs.Markdown != "" {
		old, err := os.ReadFile(bs.Markdown)
		if err != nil && !os.IsNotExist(err) {
			return err
		}
		if err := resultsdir.WriteAtomic(bs.Markdown, []byte(KeepWritten(md, string(old)))); err != nil {
			return err
		}
	}
	_, err = io.WriteString(cfg.Stdout, md)
	return err
}

// summarize picks, per shape of the ranking, the best variant that passed verification there and on
// the whole edge suite, the best variant of a seed family (variants.yaml seed: true) likewise, and
// cuBLAS.
func summarize(ranking []results.ShapeRanking, recs []results.Record, edgeFailed, seeds map[string]bool, peak *protocol.PeakResult) BenchSummary {
	targets := map[string]BenchShape{}
	for _, b := range BenchShapes {
		targets[b.Shape] = BenchShape{Target: b.Target, Group: b.Group}
	}
	var out BenchSummary
	out.Peak, out.PeakGFLOPS = peak, peak.GFLOPS
	for _, sr := range ranking {
		bsh := targets[sr.Shape]
		bsh.Shape, bsh.Op, bsh.Batch, bsh.Baseline = sr.Shape, variant.OpNN.String(), 1, protocol.BaselineCublas
		bsh.Epilogue = variant.EpiNone.String()
		bsh.Precision = variant.PrecisionFP32.Label()
		sh, perr := results.ParseShape(sr.Shape)
		if perr == nil {
			bsh.Shape, bsh.Op, bsh.Batch = results.DimsString(sh), sh.Op.String(), sh.Products()
			bsh.Epilogue, bsh.Bias = sh.Epilogue.Kind(), sh.Epilogue.Placement()
			bsh.Precision = sh.Precision.Label()
			if sh.Precision != variant.PrecisionFP32 {
				bsh.Group, bsh.Target = "precision", PrecisionTargets[sh.Precision][results.DimsString(sh)]
			}
			if sh.Batch > 0 {
				bsh.Baseline = protocol.BaselineCublasBatched
			}
			if sh.Epilogue != variant.EpiNone {
				bsh.Baseline = protocol.BaselineCublasEpilogue
			}
		}
		if bsh.Group == "" {
			bsh.Group = "other"
		}
		for _, e := range sr.Entries {
			be := &BenchEntry{Variant: e.Variant, Family: e.Family, Params: e.Params, TFLOPS: e.GFLOPS / 1e3,
				MedianMS: e.Median, LoMS: e.Lo, HiMS: e.Hi, StdMS: e.Std, N: e.N}
			if peak.GFLOPS > 0 {
				be.PctPeak = 100 * e.GFLOPS / peak.GFLOPS
			}
			if perr == nil {
				be.NormRel = normRelOf(recs, e.Variant, e.Kind == results.KindCublas, sh)
			}
			switch {
			case e.Kind == results.KindCublas:
				if bsh.Cublas == nil {
					bsh.Cublas = be
				}
			case edgeFailed[e.Variant]:
				// never a winner
			default:
				if bsh.Best == nil {
					bsh.Best = be
				}
				if seeds[e.Family] && bsh.BestSeed == nil {
					bsh.BestSeed = be
				}
			}
		}
		if bsh.Cublas != nil && bsh.Best != nil {
			bsh.Ratio = bsh.Cublas.MedianMS / bsh.Best.MedianMS
			if bsh.Target > 0 {
				met := bsh.Ratio >= bsh.Target
				bsh.Met = &met
			}
		}
		if bsh.Cublas != nil && bsh.BestSeed != nil {
			bsh.SeedRatio = bsh.Cublas.MedianMS / bsh.BestSeed.MedianMS
		}
		out.Shapes = append(out.Shapes, bsh)
		if perr == nil && sh.Epilogue != variant.EpiNone {
			// The second baseline of a fused epilogue: cublasLt's, from the cuBLAS record's
			// extra baselines (a row without it when the device's cuBLAS has none).
			lt := bsh
			lt.Baseline, lt.Cublas, lt.Ratio, lt.Met, lt.SeedRatio = protocol.BaselineCublasLt, nil, 0, nil, 0
			if e := baselineEntry(recs, sh, protocol.BaselineCublasLt, peak); e != nil {
				lt.Cublas = e
				if lt.Best != nil {
					lt.Ratio = e.MedianMS / lt.Best.MedianMS
					if lt.Target > 0 {
						met := lt.Ratio >= lt.Target
						lt.Met = &met
					}
				}
				if lt.BestSeed != nil {
					lt.SeedRatio = e.MedianMS / lt.BestSeed.MedianMS
				}
			}
			out.Shapes = append(out.Shapes, lt)
		}
	}
	order := map[string]int{}
	for i, b := range BenchShapes {
		order[b.Shape] = i + 1
	}
	sort.SliceStable(out.Shapes, func(i, j int) bool {
		oi, oj := order[out.Shapes[i].key()], order[out.Shapes[j].key()]
		if oi == 0 {
			oi = len(BenchShapes) + 1
		}
		if oj == 0 {
			oj = len(BenchShapes) + 1
		}
		return oi < oj
	})
	return out
}

// baselineEntry is the extra baseline name measured with the cuBLAS record of sh, or nil.
func baselineEntry(recs []results.Record, sh protocol.Shape, name string, peak *protocol.PeakResult) *BenchEntry {
	for _, r := range recs {
		if r.Kind != results.KindCublas || r.Shape != sh || r.Status != results.StatusOK {
			continue
		}
		for _, b := range r.Baselines {
			if b.Name != name || b.Timing == nil || b.Error != "" || firstFailure(b.Verify) != "" || len(b.Verify) == 0 {
				continue
			}
			t := b.Timing
			lo, hi := t.MinMS, t.MaxMS
			if len(t.Samples) > 0 {
				sum := stats.Summarize(t.Samples)
				lo, hi = sum.Lo, sum.Hi
			}
			e := &BenchEntry{Variant: name, TFLOPS: results.Flops(sh) / (t.MedianMS * 1e-3) / 1e12, MedianMS: t.MedianMS,
				LoMS: lo, HiMS: hi, StdMS: t.StdMS, N: t.Reps}
			if peak != nil && peak.GFLOPS > 0 {
				e.PctPeak = 100 * e.TFLOPS * 1e3 / peak.GFLOPS
			}
			return e
		}
	}
	return nil
}

// precisionTable writes the precision rows' speed and error side by side: each against its baseline
// (cuBLAS SGEMM for 3xtf32, cuBLAS in TF32 math for tf32), the error the largest ‖C−R‖/‖R‖ of the
// run's verification checks of the best variant and of the baseline.
func precisionTable(b *strings.Builder, s BenchSummary) {
	var rows []BenchShape
	for _, sh := range s.Shapes {
		if sh.Group == "precision" {
			rows = append(rows, sh)
		}
	}
	if len(rows) == 0 {
		return
	}
	b.WriteString("\nPrecisions (issue 18): 3xtf32 is FP32-accurate on TF32 tensor cores, against cuBLAS SGEMM (TF32 off); tf32 is\n" +
		"one TF32 product, against cuBLAS in TF32 math. Error: the largest ‖C−R‖/‖R‖ of the run's verification\n" +
		"checks (uniform inputs, float64 reference R) of the best variant and of its baseline.\n\n")
	b.WriteString("| shape | precision | best variant | TFLOP/s | ratio | target | error | baseline error | × baseline |\n")
	b.WriteString("|---|---|---|---:|---:|---|---:|---:|---:|\n")
	num := func(v float64, f string) string {
		if v == 0 {
			return "–"
		}
		return fmt.Sprintf(f, v)
	}
	for _, sh := range rows {
		variant, tf, e, be := "–", 0.0, 0.0, 0.0
		if sh.Best != nil {
			variant, tf, e = "`"+sh.Best.Variant+"`", sh.Best.TFLOPS, sh.Best.NormRel
		}
		if sh.Cublas != nil {
			be = sh.Cublas.NormRel
		}
		times := 0.0
		if e > 0 && be > 0 {
			times = e / be
		}
		target := sh.targetCell()
		shape := sh.Shape
		if sh.Op != "" && sh.Op != "NN" {
			shape += ":" + sh.Op
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", shape, sh.Precision, variant,
			num(tf, "%.1f"), num(sh.Ratio, "%.3f"), target, num(e, "%.2e"), num(be, "%.2e"), num(times, "%.2f"))
	}
}

// BatchGeomean is the geometric mean of the batch group's ratios and how many it has (shapes without
// a ratio, where no variant passed, count as missing, not as zero).
func (s BenchSummary) BatchGeomean() (float64, int) {
	var ratios []float64
	for _, sh := range s.Shapes {
		if sh.Group == "batch" && sh.Ratio > 0 {
			ratios = append(ratios, sh.Ratio)
		}
	}
	if len(ratios) == 0 {
		return 0, 0
	}
	return stats.Geomean(ratios), len(ratios)
}

// WrittenMarker starts the part of BENCHMARKS.md written by hand (analysis, profiling, the workload
// and per-issue evidence): runner bench replaces what comes before it and keeps it and what follows.
const WrittenMarker = "<!-- Written by hand from here on: runner bench keeps it. -->"

// KeepWritten is the page md (the generated summary) followed by the hand-written part of old (from
// WrittenMarker on), or md alone when old has none.
func KeepWritten(md, old string) string {
	i := strings.Index(old, WrittenMarker)
	if i < 0 {
		return md
	}
	return strings.TrimRight(md, "\n") + "\n\n" + old[i:]
}

// BenchMarkdown renders a summary as the BENCHMARKS.md page.
func BenchMarkdown(s BenchSummary, dir string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Benchmarks\n\n")
	fmt.Fprintf(&b, "Measured %s on %s (driver %d, cuBLAS %s), PTX from nvcc %s for %s; %d variants.\n",
		s.Date, s.GPU, s.Driver, s.Cublas, s.NVCC, s.Arch, s.Variants)
	fmt.Fprintf(&b, "Command: `%s`. Files: `%s/` (summary.json, tune/, verify/).\n\n", s.Command, dir)
	fmt.Fprintf(&b, "Measured FP32 FFMA peak (probe kernel): **%.1f TFLOP/s**. Tune wall time: %s.\n\n", s.PeakGFLOPS/1e3, s.TuneWall)
	b.WriteString("Each time is the median of many launches after warm-up (CUDA events, rotated inputs); the leaders\n" +
		"and cuBLAS are re-measured interleaved, and the interval is a 95 % confidence interval of the median.\n" +
		"Ratio = baseline median time / variant median time, both from this run (> 1: faster than the baseline);\n" +
		"the baseline is cuBLAS with the same op (cublasSgemmStridedBatched for a batch), and for a fused epilogue\n" +
		"cuBLAS followed by the epilogue as a separate kernel (cublas+epilogue) and cublasLt's fused epilogue (cublaslt);\n" +
		"the target is a least ratio, and the seed ratio is the best seed-family variant's.\n" +
		"A variant that failed verification on the shape or on any edge shape is never listed.\n\n")
	b.WriteString("| shape | best variant | TFLOP/s | 95 % CI (ms) | cuBLAS TFLOP/s | ratio | target | % of peak | best seed variant | seed TFLOP/s | seed ratio |\n")
	b.WriteString("|---|---|---:|---|---:|---:|---|---:|---|---:|---:|\n")
	for _, sh := range s.Shapes {
		best, cub, seed := sh.Best, sh.Cublas, sh.BestSeed
		cell := func(e *BenchEntry, f func(*BenchEntry) string) string {
			if e == nil {
				return "–"
			}
			return f(e)
		}
		target := sh.targetCell()
		seedRatio := "–" // no seed-family variant timed (a budgeted search may skip them)
		if seed != nil {
			seedRatio = fmt.Sprintf("%.3f", sh.SeedRatio)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %.3f | %s | %s | %s | %s | %s |\n", sh.label(),
			cell(best, func(e *BenchEntry) string { return "`" + e.Variant + "`" }),
			cell(best, func(e *BenchEntry) string { return fmt.Sprintf("%.2f", e.TFLOPS) }),
			cell(best, func(e *BenchEntry) string { return fmt.Sprintf("%.4f–%.4f", e.LoMS, e.HiMS) }),
			cell(cub, func(e *BenchEntry) string { return fmt.Sprintf("%.2f", e.TFLOPS) }),
			sh.Ratio, target,
			cell(best, func(e *BenchEntry) string { return fmt.Sprintf("%.1f", e.PctPeak) }),
			cell(seed, func(e *BenchEntry) string { return "`" + e.Variant + "`" }),
			cell(seed, func(e *BenchEntry) string { return fmt.Sprintf("%.2f", e.TFLOPS) }),
			seedRatio)
	}
	if g, n := s.BatchGeomean(); n > 0 {
		verdict := "✗"
		if g >= BatchGeomeanTarget {
			verdict = "✓"
		}
		fmt.Fprintf(&b, "\nStrided-batch suite (baseline cublasSgemmStridedBatched): geometric mean ratio %.3f over %d shapes (target ≥ %.1f %s).\n",
			g, n, BatchGeomeanTarget, verdict)
	}
	precisionTable(&b, s)
	if s.Note != "" {
		fmt.Fprintf(&b, "\n%s\n", s.Note)
	}
	if len(s.EdgeFailed) > 0 {
		fmt.Fprintf(&b, "\nExcluded for failing the edge suite: %s.\n", strings.Join(s.EdgeFailed, ", "))
	}
	return b.String()
}
