package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"tilegen/internal/ooc"
	"tilegen/internal/protocol"
	"tilegen/internal/results"
	"tilegen/internal/shapes"
	"tilegen/internal/variant"
	"tilegen/internal/workerproc"
)

// seedVariant is the best seed variant on the H100 (results/h100-seeds): what --variant's default,
// best, falls back to when --results holds no tune timings.
const seedVariant = "micro1d_t64_r16"

// beyondFlags are the flags outofcore and hybrid share.
type beyondFlags struct {
	catalogFlags
	workerFlags
	shape, variant, results, out string
	device                       int
	seed                         uint64
	samples                      int
	fullCheck, tolFactor         float64
	timeout                      time.Duration
	// fallback says why --variant's default became seedVariant ("" when it did not).
	fallback string
}

// settle applies --variant's default after parsing: best when --results holds tune timings, else
// seedVariant (the summary says so). A --variant or --results given on the command line is kept as
// is, and an error about it surfaces when the kernel is picked.
func (b *beyondFlags) settle(fs *pflag.FlagSet) {
	if fs.Changed("variant") || fs.Changed("results") || b.variant != "best" {
		return
	}
	if _, _, err := rankedVariants(b.results, protocol.Shape{M: 1, N: 1, K: 1}); err != nil {
		b.variant = seedVariant
		b.fallback = fmt.Sprintf("default: no tune timings in %s", b.results)
	}
}

// why is how the kernel was chosen, for the summary.
func (b *beyondFlags) why(picked string) string {
	if b.fallback != "" {
		return b.fallback
	}
	return picked
}

func (b *beyondFlags) flags(defaultOut string) *pflag.FlagSet {
	fs := group()
	fs.StringVar(&b.shape, "shape", "", "problem `MxNxK` (required)")
	fs.StringVar(&b.variant, "variant", "best", "variant `name`, or best: the tuned winner of --results for the nearest shape (for outofcore: nearest the plan's block); by default best, or "+seedVariant+" when the default --results holds no tune timings")
	fs.StringVar(&b.results, "results", "results/tune", "tune results `dir` that --variant best reads")
	fs.AddFlagSet(b.sourceFlags())
	fs.AddFlagSet(b.workerFlags.flags(false))
	fs.IntVar(&b.device, "device", 0, "GPU `index`")
	fs.Uint64Var(&b.seed, "seed", 1, "`seed` of the random A and B")
	fs.IntVar(&b.samples, "samples", 64, "verify the crossings of `n` random rows and n random columns (plus block edges)")
	fs.Float64Var(&b.fullCheck, "full-check-max-flops", 2e10, "verify every element when 2MNK is at most `flops`")
	fs.AddFlagSet(tolFactorFlags(&b.tolFactor))
	fs.DurationVar(&b.timeout, "timeout", 20*time.Minute, "give up on the worker after `duration`")
	fs.StringVar(&b.out, "out", defaultOut, "write result.json and summary.txt into `dir` (empty: print only)")
	atLeast(fs, ">=0", "device", "seed", "samples", "full-check-max-flops")
	atLeast(fs, ">0", "timeout")
	return fs
}

// pickKernel resolves --variant: a catalog name, or best from a tune results directory.
func pickKernel(generated, name, results string, s protocol.Shape) (*protocol.Kernel, string, error) {
	cat, err := loadCatalog(generated)
	if err != nil {
		return nil, "", err
	}
	why := "named"
	if name == "best" {
		if name, why, err = bestVariant(results, s); err != nil {
			return nil, "", err
		}
	}
	var v *variant.Variant
	for _, x := range cat.Variants() {
		if x.Name == name {
			v = &x
			break
		}
	}
	if v == nil {
		return nil, "", fmt.Errorf("variant %q is not in the catalog (runner list shows them)", name)
	}
	ptx, err := cat.PTX(name)
	if err != nil {
		return nil, "", err
	}
	return &protocol.Kernel{Variant: *v, PTX: ptx}, why, nil
}

// bestVariant is the fastest verified variant of a tune results directory on the tuned one-product
// NN shape nearest to s (shapes.Best: sum of |log| ratios of M, N and K; ties to the faster median, then
// the smaller name).
func bestVariant(dir string, s protocol.Shape) (string, string, error) {
	ranked, why, err := rankedVariants(dir, s)
	if err != nil {
		return "", "", err
	}
	return ranked[0], why, nil
}

// rankedVariants lists the verified variants of a tune results directory timed on the tuned
// one-product NN shape nearest to s, fastest first (median time, then name), and says where from.
func rankedVariants(dir string, s protocol.Shape) ([]string, string, error) {
	recs, _, err := results.ReadDir(dir)
	if err != nil {
		return nil, "", fmt.Errorf("--variant best: %w", err)
	}
	var tuned []results.Record
	for _, r := range recs {
		// Out-of-core and hybrid run one NN product: records of other ops and of batches do not count.
		if r.Kind == results.KindTune && r.Status == results.StatusOK && r.Timing != nil && r.Variant != "" &&
			r.Shape.Op == variant.OpNN && r.Shape.Batch == 0 {
			tuned = append(tuned, r)
		}
	}
	faster := func(a, b results.Record) bool {
		return a.Timing.MedianMS < b.Timing.MedianMS || (a.Timing.MedianMS == b.Timing.MedianMS && a.Variant < b.Variant)
	}
	i := shapes.Nearest(shapes.Best, s.M, s.N, s.K, len(tuned), func(i int) (int, int, int) {
		t := tuned[i].Shape
		return t.M, t.N, t.K
	}, func(i, best int) bool { return faster(tuned[i], tuned[best]) })
	if i < 0 {
		return nil, "", fmt.Errorf("--variant best: no verified timing in %s", dir)
	}
	at := tuned[i].Shape
	var here []results.Record
	for _, r := range tuned {
		if r.Shape == at {
			here = append(here, r)
		}
	}
	sort.SliceStable(here, func(i, j int) bool { return faster(here[i], here[j]) })
	var names []string
	seen := map[string]bool{}
	for _, r := range here {
		if !seen[r.Variant] {
			seen[r.Variant] = true
			names = append(names, r.Variant)
		}
	}
	return names, fmt.Sprintf("best of %s at %s (%.4f ms)", dir, results.ShapeString(at), here[0].Timing.MedianMS), nil
}

// bestForBlocks resolves --variant best for out-of-core: the kernel runs the plan's block GEMMs, not
// the whole problem, so it is the fastest variant tuned at the shape nearest to the block that
// accepts its own plan. The plan is made here with the budget the worker will be sent, so the
// worker plans the same blocks.
func bestForBlocks(generated, dir string, s protocol.Shape, o ooc.Options) (*protocol.Kernel, string, error) {
	p0, err := ooc.NewPlan(s.M, s.N, s.K, o)
	if err != nil {
		return nil, "", err
	}
	block := protocol.Shape{M: p0.BM, N: p0.BN, K: p0.BK}
	ranked, why, err := rankedVariants(dir, block)
	if err != nil {
		return nil, "", err
	}
	var rejected []string
	for i, name := range ranked {
		k, _, err := pickKernel(generated, name, dir, s)
		if err != nil {
			rejected = append(rejected, fmt.Sprintf("%s: %v", name, err))
			continue
		}
		vo := o
		vo.Align = ooc.AlignOf(&k.Variant)
		p, err := ooc.NewPlan(s.M, s.N, s.K, vo)
		if err == nil {
			err = p.CheckVariant(&k.Variant)
		}
		if err != nil {
			rejected = append(rejected, fmt.Sprintf("%s: %v", name, err))
			continue
		}
		return k, fmt.Sprintf("rank %d %s, for blocks of %s", i+1, why, results.ShapeString(protocol.Shape{M: p.BM, N: p.BN, K: p.BK})), nil
	}
	return nil, "", fmt.Errorf("--variant best: no variant of %s runs the plan's blocks (%s)", dir, strings.Join(rejected, "; "))
}

// writeOut writes result.json (the request and response) and summary.txt into dir.
func writeOut(dir string, v any, summary string) error {
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "result.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "summary.txt"), []byte(summary), 0o644)
}

func runOutOfCore(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("outofcore", "--shape MxNxK [--device-mem BYTES] [--variant NAME|best] [flags]", stdout)
	var b beyondFlags
	fs.AddFlagSet(b.flags(""))
	deviceMem := fs.String("device-mem", "", "device memory `budget` for the blocks, e.g. 256MiB or 2GiB (default: free memory less a margin)")
	minSliceK := fs.Int("min-slice-k", 0, "smallest K slice the planner prefers (`n`; 0: 1024)")
	inCore := fs.Bool("compare-in-core", false, "also run the variant in device memory on the whole problem and compare every element")
	blockReps := fs.Int("block-reps", 3, "afterwards time the variant `n` times in device memory on one full block (the in-core rate the streamed one is judged against; 0: skip)")
	atLeast(fs, ">=0", "min-slice-k", "block-reps")
	if ok, err := parse(fs, args); !ok || err != nil {
		return err
	}
	if fs.NArg() > 0 || b.shape == "" {
		return usageErr("outofcore", "want --shape MxNxK and no arguments")
	}
	b.settle(fs)
	s, err := results.ParseShape(b.shape)
	if err != nil {
		return usageErr("outofcore", "--shape: %v", err)
	}
	var budget int64
	if *deviceMem != "" {
		if budget, err = ooc.ParseBytes(*deviceMem); err != nil {
			return usageErr("outofcore", "--device-mem: %v", err)
		}
	}
	if err := ooc.HostFits(s.M, s.N, s.K); err != nil {
		return err
	}
	var k *protocol.Kernel
	var why string
	if b.variant != "best" {
		if k, why, err = pickKernel(b.generated, b.variant, b.results, s); err != nil {
			return err
		}
		// Refuse impossible requests before starting anything: the worker runs on this host.
		if budget > 0 {
			if _, err := ooc.NewPlan(s.M, s.N, s.K, ooc.Options{Budget: budget, Align: ooc.AlignOf(&k.Variant), MinSliceK: *minSliceK}); err != nil {
				return err
			}
		}
	}
	wc, err := startWorker(b.worker, b.device)
	if err != nil {
		return err
	}
	defer wc.Close()
	if b.variant == "best" {
		// The block shape depends on the budget, the budget on the device's free memory: plan here
		// with the budget the worker is then sent.
		free := wc.Device().FreeBytes
		if free <= 0 {
			return fmt.Errorf("--variant best: the worker did not report its free device memory")
		}
		if budget, err = ooc.DeviceBudget(budget, free); err != nil {
			return err
		}
		if k, why, err = bestForBlocks(b.generated, b.results, s, ooc.Options{Budget: budget, MinSliceK: *minSliceK}); err != nil {
			return err
		}
	}
	req := protocol.Request{Op: protocol.OpOutOfCore, Kernel: k, Shape: s, OutOfCore: &protocol.OutOfCoreRequest{
		Seed: b.seed, Budget: budget, MinSliceK: *minSliceK, Samples: b.samples, FullCheckMaxFlops: b.fullCheck,
		TolFactor: b.tolFactor, CompareInCore: *inCore, BlockReps: *blockReps}}
	resp, err := wc.Call(req, b.timeout)
	if err != nil {
		return err
	}
	r := resp.OutOfCoreResult
	if r == nil {
		return fmt.Errorf("worker answered without an out-of-core result")
	}
	summary := outOfCoreSummary(s, k.Variant.Name, b.why(why), wc.Device(), r)
	fmt.Fprint(stdout, summary)
	req.Kernel = &protocol.Kernel{Variant: k.Variant} // the PTX is in the catalog
	if err := writeOut(b.out, struct {
		Device   *protocol.Device  `json:"device"`
		Request  protocol.Request  `json:"request"`
		Response protocol.Response `json:"response"`
	}{wc.Device(), req, resp}, summary); err != nil {
		return err
	}
	if !r.Pass {
		return fmt.Errorf("verification failed: %s", r.Reason)
	}
	if r.InCore != nil && r.InCore.Identical != r.InCore.Elements && r.SlicesK == 1 {
		return fmt.Errorf("out-of-core differs from in-core on %d elements although K was not sliced", r.InCore.Elements-r.InCore.Identical)
	}
	return nil
}

func outOfCoreSummary(s protocol.Shape, name, why string, d *protocol.Device, r *protocol.OutOfCoreResult) string {
	var b stringsBuilder
	flops := 2 * float64(s.M) * float64(s.N) * float64(s.K)
	b.f("out-of-core %s with %s (%s) on %s\n", results.ShapeString(s), name, why, d.Name)
	b.f("  host matrices   %s (%s), device has %s, free %s, budget %s\n", ooc.Bytes(r.HostBytes),
		map[bool]string{true: "pinned", false: "pageable"}[r.HostPinned], ooc.Bytes(d.MemoryBytes), ooc.Bytes(r.DeviceFree), ooc.Bytes(r.Budget))
	if r.HostNote != "" {
		b.f("  note            %s\n", r.HostNote)
	}
	b.f("  plan            %dx%d blocks of %dx%d, %d K slices of %d = %d steps, %s of device buffers\n",
		r.BlocksM, r.BlocksN, r.BM, r.BN, r.SlicesK, r.BK, r.Steps, ooc.Bytes(r.DeviceBytes))
	b.f("  host prep       alloc %.0f ms, generate A and B %.0f ms\n", r.AllocMS, r.GenerateMS)
	b.f("  wall            %.1f ms = %.2f TFLOP/s\n", r.WallMS, flops/(r.WallMS*1e9))
	b.f("  kernels         %.1f ms (sum) = %.2f TFLOP/s while computing\n", r.KernelMS, flops/(r.KernelMS*1e9))
	b.f("  host→device     %s in %.1f ms (sum) = %.1f GB/s\n", ooc.Bytes(r.H2DBytes), r.H2DMS, float64(r.H2DBytes)/(r.H2DMS*1e6))
	b.f("  device→host     %s in %.1f ms (sum) = %.1f GB/s\n", ooc.Bytes(r.D2HBytes), r.D2HMS, float64(r.D2HBytes)/(r.D2HMS*1e6))
	b.f("  bound           %.1f ms (%s); wall is %.2f× the bound (1.00 = perfect overlap)\n", r.BoundMS, r.BoundBy, r.WallMS/r.BoundMS)
	if r.BlockMS > 0 {
		in := 2 * float64(r.BM) * float64(r.BN) * float64(r.BK) / (r.BlockMS * 1e9)
		b.f("  in-core block   %dx%dx%d in %.1f ms (median) = %.2f TFLOP/s; out of core reaches %.1f %% of it\n",
			r.BM, r.BN, r.BK, r.BlockMS, in, 100*flops/(r.WallMS*1e9)/in)
	}
	kind := fmt.Sprintf("sampled %d elements", r.Check.Elements)
	if r.Check.Full {
		kind = fmt.Sprintf("all %d elements", r.Check.Elements)
	}
	status := "PASS"
	if !r.Pass {
		status = "FAIL: " + r.Reason
	}
	b.f("  verify          %s vs float64: %s (max |err| %.3g, worst %.3g of tolerance)\n", kind, status, r.Check.MaxAbs, r.Check.MaxErr)
	if r.InCore != nil {
		b.f("  vs in-core      %d of %d elements bitwise identical, max |diff| %.3g (in-core kernel %.1f ms)\n",
			r.InCore.Identical, r.InCore.Elements, r.InCore.MaxAbs, r.InCoreMS)
	}
	return b.String()
}

// stringsBuilder is a strings.Builder with Printf.
type stringsBuilder struct{ buf []byte }

func (b *stringsBuilder) f(format string, a ...any) { b.buf = fmt.Appendf(b.buf, format, a...) }
func (b *stringsBuilder) String() string            { return string(b.buf) }

// startWorker starts one worker (--worker path, or the one beside the runner) on device for a
// single long request (outofcore, hybrid); these ops verify on the CPU, so no reference kernel.
func startWorker(path string, device int) (*workerproc.Worker, error) {
	bin, err := workerproc.FindWorker(path)
	if err != nil {
		return nil, err
	}
	return workerproc.StartWorker(bin, nil, device, time.Minute)
}
