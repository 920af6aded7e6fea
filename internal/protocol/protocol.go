// Package protocol is the versioned JSON-lines protocol between the runner's orchestrator (which
// never links CUDA) and a GPU worker process (which owns one device through gorgonia.org/cu).
//
// The orchestrator writes one Request per line on the worker's stdin; the worker answers each with
// exactly one Response line on stdout, in order, carrying the request's ID. Anything the worker
// prints that is not a Response goes to stderr. A worker that dies or stops answering costs the
// request in flight only: the orchestrator records it as failed and starts a fresh worker.
//
// Session: the worker first writes an unsolicited Response with Op "hello" and Version, plus the
// Device it opened (or Error when it could not open one). Then requests follow until "quit" or EOF.
// A worker that exits before its hello (gorgonia.org/cu's init prints its cuInit failure on stdout
// and exits 1 on a host without a GPU) is reported with its exit status and last output. Lines are
// bounded (MaxRequestBytes, MaxResponseBytes); the orchestrator's deadline for a request covers
// writing it, so a worker that stops reading cannot block the orchestrator.
package protocol

import "tilegen/internal/variant"

// Version is bumped on any incompatible change; both sides refuse a mismatch. 2: Shape.Op and
// Shape.Batch (a worker of version 1 would ignore them and compute one NN product). 3:
// Shape.Epilogue (a worker of version 2 would launch a bias kernel without its bias).
// 4: Shape.Precision (a worker of version 3 would verify a TF32 kernel against the FP32 tolerance
// and time cuBLAS without TF32) and OpAccuracy.
const Version = 4

// FatalPrefix starts a Response.Error after which the worker exits (see Response.Error).
const FatalPrefix = "fatal: "

// Ops a Request may carry.
const (
	OpHello  = "hello"  // worker → orchestrator, unsolicited, first line
	OpRun    = "run"    // verify, then (if it passed and Timing is set) time one variant on one shape
	OpCublas = "cublas" // time cuBLAS (and verify it) on one shape, same settings as a run
	OpQuit   = "quit"   // worker exits 0
	// OpPeak times the FP32 FFMA throughput probe (Kernel carries the support module "peak";
	// Timing its settings) and answers with Peak.
	OpPeak = "peak"
	// OpBreakdown verifies a variant (when Verify is set), then Runs times allocates A, B and C on
	// the device, copies A and B to it, launches the kernel, copies C back and frees, timing each
	// phase; it answers with Breakdown.
	OpBreakdown = "breakdown"
	// OpOutOfCore multiplies host matrices larger than the device budget by streaming blocks
	// (Request.OutOfCore; the worker generates A and B from the seed in its own pinned memory).
	OpOutOfCore = "outofcore"
	// OpHybrid splits one product between the GPU (first M−F rows) and the CPU (last F rows).
	OpHybrid = "hybrid"
	// OpPreload JIT-compiles the PTX modules in Request.Preload concurrently and keeps them for
	// later runs; it answers with Preload. It only saves time: a module that fails to load here is
	// loaded (and its error reported) again by the run that needs it.
	OpPreload = "preload"
	// OpAccuracy measures the error of kernels and of cuBLAS (SGEMM and TF32 math) against the
	// float64 reference on the same inputs (Request.Accuracy, Shape); it answers with Accuracy.
	OpAccuracy = "accuracy"
)

// Request is one line from orchestrator to worker.
type Request struct {
	// ID echoes back in the Response.
	ID int64 `json:"id"`
	// Op is one of the Op constants.
	Op string `json:"op"`
	// Kernel is the variant to run (OpRun).
	Kernel *Kernel `json:"kernel,omitempty"`
	// Shape is the problem (OpRun, OpCublas).
	Shape Shape `json:"shape"`
	// Verify settings; nil skips verification (never done for ranking runs).
	Verify *VerifySettings `json:"verify,omitempty"`
	// Timing settings; nil means verify only.
	Timing *TimingSettings `json:"timing,omitempty"`
	// Runs is the number of end-to-end repetitions of an OpBreakdown.
	Runs int `json:"runs,omitempty"`
	// OutOfCore settings (OpOutOfCore, with Kernel and Shape).
	OutOfCore *OutOfCoreRequest `json:"outofcore,omitempty"`
	// Hybrid settings (OpHybrid, with Kernel and Shape).
	Hybrid *HybridRequest `json:"hybrid,omitempty"`
	// Preload is the PTX text of each module to load (OpPreload).
	Preload []string `json:"preload,omitempty"`
	// Baselines asks an OpCublas for more baselines than cuBLAS's on the same shape and settings,
	// answered in Response.Baselines: BaselineCublasLt (cublasLt's matmul with its fused epilogue,
	// for a shape with an epilogue).
	Baselines []string `json:"baselines,omitempty"`
	// Accuracy settings (OpAccuracy, with Shape).
	Accuracy *AccuracyRequest `json:"accuracy,omitempty"`
}

// Baseline names: what a bench row's ratio compares with.
const (
	BaselineCublas         = "cublas"          // cublasSgemm with the same op
	BaselineCublasBatched  = "cublas_batched"  // cublasSgemmStridedBatched
	BaselineCublasEpilogue = "cublas+epilogue" // cublasSgemm, then the epilogue as a separate kernel
	BaselineCublasLt       = "cublaslt"        // cublasLtMatmul with its BIAS / RELU_BIAS / GELU_BIAS epilogue
)

// BaselineResult is one extra baseline of an OpCublas (Request.Baselines): verified like a
// variant, then timed; Note says why it was skipped (the library or the epilogue not available).
type BaselineResult struct {
	Name   string         `json:"name"`
	Verify []VerifyResult `json:"verify,omitempty"`
	Timing *TimingResult  `json:"timing,omitempty"`
	Note   string         `json:"note,omitempty"`
	Error  string         `json:"error,omitempty"`
}

// Input distributions of an accuracy measurement.
const (
	// InputsUniform: every element of A and B uniform in [-1, 1).
	InputsUniform = "uniform"
	// InputsWide: uniform elements, each row of A and of B scaled by 2^e with e uniform in
	// [-Span, Span] (rows spanning 2^±20 by default): products of very different magnitudes meet in
	// one sum.
	InputsWide = "wide"
)

// AccuracyRequest asks for the error of each kernel, of cuBLAS SGEMM and of cuBLAS with TF32
// tensor-op math on one NN product C = A·B (alpha 1, beta 0) of fresh inputs from Seed.
type AccuracyRequest struct {
	Seed uint64 `json:"seed"`
	// Inputs is InputsUniform or InputsWide; Span the exponent range of InputsWide (0: 20).
	Inputs string `json:"inputs"`
	Span   int    `json:"span,omitempty"`
	// Kernels are the variants measured (any precision).
	Kernels []Kernel `json:"kernels"`
}

// AccuracyResult answers OpAccuracy: one row per kernel, then cuBLAS SGEMM and cuBLAS TF32.
type AccuracyResult struct {
	Inputs string        `json:"inputs"`
	Span   int           `json:"span,omitempty"`
	Rows   []AccuracyRow `json:"rows"`
}

// AccuracyRow is one computation's error against the float64 reference R of the same inputs.
type AccuracyRow struct {
	// Name is the variant, or cublas_sgemm / cublas_tf32.
	Name string `json:"name"`
	// Precision is its label (fp32, 3xtf32, tf32).
	Precision string `json:"precision"`
	// NormRel is ‖C−R‖_F / ‖R‖_F.
	NormRel float64 `json:"norm_rel"`
	// MaxRel is max |C−R|/|R| over the elements with R ≠ 0.
	MaxRel float64 `json:"max_rel"`
	// MaxRelBound is max |C−R| / (|A|·|B|), the verifier's normalization (no blow-up where R cancels).
	MaxRelBound float64 `json:"max_rel_bound"`
	// NonFinite counts elements of C that are NaN or infinite.
	NonFinite int `json:"non_finite"`
}

// PreloadResult answers OpPreload.
type PreloadResult struct {
	// Modules loaded now, already loaded before, and failed (Errors holds the first few).
	Loaded  int      `json:"loaded"`
	Cached  int      `json:"cached"`
	Failed  int      `json:"failed"`
	Errors  []string `json:"errors,omitempty"`
	Threads int      `json:"threads"`
	WallMS  float64  `json:"wall_ms"`
}

// Phases is where a run's time went inside the worker (wall clock, milliseconds): loading the
// module (the driver's JIT when it was not preloaded), verification (inputs, reference, kernel,
// comparison) and timing (uploads, warm-up and timed launches).
type Phases struct {
	LoadMS   float64 `json:"load_ms"`
	VerifyMS float64 `json:"verify_ms"`
	TimeMS   float64 `json:"time_ms"`
}

// OutOfCoreRequest asks for C = A·B on host matrices streamed through at most Budget bytes of
// device memory (see tilegen/internal/ooc for the method).
type OutOfCoreRequest struct {
	// Seed generates A and B.
	Seed uint64 `json:"seed"`
	// Budget is the device memory the blocks may use; 0 means what the device has free less a margin.
	Budget int64 `json:"budget,omitempty"`
	// MinSliceK is the smallest K slice the planner prefers (0: its default).
	MinSliceK int `json:"min_slice_k,omitempty"`
	// Samples is the number of rows and of columns whose crossings are checked against float64 dot
	// products (Samples² elements); every element is checked when 2MNK ≤ FullCheckMaxFlops.
	Samples           int     `json:"samples"`
	FullCheckMaxFlops float64 `json:"full_check_max_flops"`
	TolFactor         float64 `json:"tol_factor"`
	// CompareInCore also runs the same variant on the whole problem in device memory (it must fit)
	// and compares every element with the out-of-core result.
	CompareInCore bool `json:"compare_in_core,omitempty"`
	// BlockReps times the variant in device memory on the plan's full block GEMM (BM×BN×BK, the
	// same buffers and pitches as a step) this many times after one warm-up, once the streamed
	// product is done: the in-core rate the streamed one is judged against. 0 skips it.
	BlockReps int `json:"block_reps,omitempty"`
}

// HybridRequest asks for C = A·B with rows [0, M−CPURows) on the GPU and the last CPURows rows on
// the CPU, concurrently, in the worker process.
type HybridRequest struct {
	Seed    uint64 `json:"seed"`
	CPURows int    `json:"cpu_rows"`
	// Engine is the CPU SGEMM ("blocked" or "gonum"); Workers its goroutines (0: GOMAXPROCS−1).
	Engine  string `json:"engine"`
	Workers int    `json:"workers,omitempty"`
	// Reps timed runs after one warm-up; the run with the median overall time is reported.
	Reps int `json:"reps"`
	// Samples, FullCheckMaxFlops and TolFactor as for OutOfCoreRequest (the sampled rows always
	// include the first and last GPU and CPU rows).
	Samples           int     `json:"samples"`
	FullCheckMaxFlops float64 `json:"full_check_max_flops"`
	TolFactor         float64 `json:"tol_factor"`
	// CompareGPUOnly also computes every row on the GPU and compares: GPU rows must be bitwise
	// identical, CPU rows within the tolerance.
	CompareGPUOnly bool `json:"compare_gpu_only,omitempty"`
	// ProbeRows > 0 also times every CPU engine on that many rows (for choosing F and the engine).
	ProbeRows int `json:"probe_rows,omitempty"`
}

// Kernel is what the worker needs to load and launch a variant: no registry lookup on its side.
type Kernel struct {
	// Variant carries name, geometry and requirements.
	Variant variant.Variant `json:"variant"`
	// PTX is the module text.
	PTX string `json:"ptx"`
}

// Shape is a problem: C (M×N) = alpha·op(A)·op(B) + beta·C with op(A) M×K and op(B) K×N, row-major
// (see variant.Op for the stored layouts), or Batch such products at once (strided-batched, as
// cublasSgemmStridedBatched; Batch 0 is one product, unbatched). Op is OpNN ("") for NN and Batch
// 0 for one product, so such a shape serializes as it did before ops and batches existed and keeps
// its record keys; those zero values are the only spellings (use variant.ParseOp and Batch 0, never
// 1, for one product), so that shapes compare and key maps correctly.
//
// Epilogue is the fused epilogue (variant.Epilogue; EpiNone, "", for a plain GEMM, which keeps the
// serialization and keys of before epilogues existed): C = act(alpha·op(A)·op(B) + beta·C + bias),
// the worker drawing the bias. OpCublas on a shape with an epilogue times cuBLAS's SGEMM followed by
// the same epilogue as a separate kernel (the "cublas+epilogue" baseline).
type Shape struct {
	M        int              `json:"m"`
	N        int              `json:"n"`
	K        int              `json:"k"`
	Op       variant.Op       `json:"op,omitempty"`
	Batch    int              `json:"batch,omitempty"`
	Epilogue variant.Epilogue `json:"epilogue,omitempty"`
	// Precision is the arithmetic the product is computed in (variant.Precision; FP32, the zero
	// value, unless the user allows another): variants of that precision only take it, it sets the
	// verification tolerance (TF32: variant.TF32ToleranceScale wider) and the cuBLAS baseline (SGEMM
	// for fp32 and 3xtf32, TF32 tensor-op math for tf32).
	Precision variant.Precision `json:"precision,omitempty"`
}

// Products is the number of M×N×K products: Batch, or 1 when unbatched.
func (s Shape) Products() int { return max(s.Batch, 1) }

// Dense returns the smallest leading dimensions of the shape under its op.
func (s Shape) Dense() (lda, ldb, ldc int) { return s.Op.DenseLD(s.M, s.N, s.K) }

// VerifySettings control one verification.
type VerifySettings struct {
	// Seed for the random inputs (recorded in results); each check draws fresh inputs from its own
	// generator derived from it. A worker keeps the inputs and float64 reference of its latest
	// checks, so runs that share a seed and shape (the orchestrator shares one per shape for large
	// problems) draw and compute them once; the inputs are restored from a pristine device copy
	// before every kernel.
	Seed uint64 `json:"seed"`
	// SubMatrix also runs a second check with random alpha, beta ≠ 0 and leading dimensions larger
	// than the matrix widths (lda = K+pad, ldb = ldc = N+pad), proving sub-matrix use.
	SubMatrix bool `json:"sub_matrix"`
	// CPUCheckMaxFlops: when 2·M·N·K is at most this, the GPU float64 reference is cross-checked
	// against a CPU float64 reference.
	CPUCheckMaxFlops float64 `json:"cpu_check_max_flops"`
	// TolFactor scales the tolerance: tol = TolFactor · K · 2^-24 · (|A|·|B|)_ij bound.
	TolFactor float64 `json:"tol_factor"`
}

// TimingSettings control one timing.
type TimingSettings struct {
	// Warmup launches before timing.
	Warmup int `json:"warmup"`
	// Reps is the minimum number of timed launches.
	Reps int `json:"reps"`
	// MinTimeMS is the minimum total timed time in milliseconds; reps grow until reached.
	MinTimeMS float64 `json:"min_time_ms"`
	// MaxReps caps the repetitions.
	MaxReps int `json:"max_reps"`
	// Cold flushes L2 before every timed launch.
	Cold bool `json:"cold"`
}

// Response is one line from worker to orchestrator.
type Response struct {
	ID      int64  `json:"id"`
	Op      string `json:"op"`
	Version int    `json:"version,omitempty"`
	// Error is set when the request could not be carried out at all (bad request, no device,
	// load failure). A kernel that runs but computes wrong answers is not an Error: it is a
	// Verify with Pass false. An Error that starts with FatalPrefix means the kernel left the
	// device context unusable: the worker exits after this response, and the orchestrator starts
	// a fresh one for the next request.
	Error string `json:"error,omitempty"`
	// Device is set on hello.
	Device *Device `json:"device,omitempty"`
	// Attributes of the loaded function and occupancy for this shape (OpRun).
	Attributes *Attributes `json:"attributes,omitempty"`
	// Verify results, one per check (β = 0 first, then the sub-matrix check when asked).
	Verify []VerifyResult `json:"verify,omitempty"`
	// Timing statistics (when timed and verification passed).
	Timing *TimingResult `json:"timing,omitempty"`
	// Peak is the FFMA probe's result (OpPeak).
	Peak *PeakResult `json:"peak,omitempty"`
	// Breakdown is the per-phase timing of an OpBreakdown.
	Breakdown *BreakdownResult `json:"breakdown,omitempty"`
	// Note carries non-fatal remarks (e.g. "cuBLAS not available: ...").
	Note string `json:"note,omitempty"`
	// OutOfCoreResult answers OpOutOfCore.
	OutOfCoreResult *OutOfCoreResult `json:"outofcore_result,omitempty"`
	// HybridResult answers OpHybrid.
	HybridResult *HybridResult `json:"hybrid_result,omitempty"`
	// Accuracy answers OpAccuracy.
	Accuracy *AccuracyResult `json:"accuracy,omitempty"`
	// Preload answers OpPreload.
	Preload *PreloadResult `json:"preload,omitempty"`
	// Phases of an OpRun or OpCublas.
	Phases *Phases `json:"phases,omitempty"`
	// Baselines answers Request.Baselines, one per name asked, in order.
	Baselines []BaselineResult `json:"baselines,omitempty"`
}

// ElementCheck compares computed elements with float64 dot products
// (tol_ij = TolFactor·(K+2)·2^-24·(|A|·|B|)_ij).
type ElementCheck struct {
	Elements    int64   `json:"elements"`
	Full        bool    `json:"full"`
	Bad         int64   `json:"bad"`
	MaxAbs      float64 `json:"max_abs"`
	MaxErr      float64 `json:"max_err"` // largest |C−R|/tol_ij; ≤ 1 passes
	FirstBadRow int     `json:"first_bad_row"`
	FirstBadCol int     `json:"first_bad_col"`
}

// ResultCompare compares two float32 results of one product element by element.
type ResultCompare struct {
	Elements  int64   `json:"elements"`
	Identical int64   `json:"identical"`
	MaxAbs    float64 `json:"max_abs"`
}

// OutOfCoreResult reports one out-of-core product.
type OutOfCoreResult struct {
	// The plan: C blocks of BM×BN, K slices of BK.
	BM          int   `json:"bm"`
	BN          int   `json:"bn"`
	BK          int   `json:"bk"`
	BlocksM     int   `json:"blocks_m"`
	BlocksN     int   `json:"blocks_n"`
	SlicesK     int   `json:"slices_k"`
	Steps       int   `json:"steps"`
	Budget      int64 `json:"budget"`
	DeviceBytes int64 `json:"device_bytes"`
	DeviceFree  int64 `json:"device_free"`
	HostBytes   int64 `json:"host_bytes"`
	// HostPinned is false when pinned host memory could not be had (HostNote says why) and the
	// copies ran from pageable memory.
	HostPinned bool    `json:"host_pinned"`
	HostNote   string  `json:"host_note,omitempty"`
	AllocMS    float64 `json:"alloc_ms"`
	GenerateMS float64 `json:"generate_ms"`
	// WallMS is the streamed product from the first copy to the last byte of C on the host.
	WallMS float64 `json:"wall_ms"`
	// KernelMS, H2DMS and D2HMS are sums of event-timed kernels and copies.
	KernelMS float64 `json:"kernel_ms"`
	H2DMS    float64 `json:"h2d_ms"`
	D2HMS    float64 `json:"d2h_ms"`
	H2DBytes int64   `json:"h2d_bytes"`
	D2HBytes int64   `json:"d2h_bytes"`
	// BoundMS = max(KernelMS, H2DMS, D2HMS): what perfect overlap would take; BoundBy names it.
	BoundMS float64      `json:"bound_ms"`
	BoundBy string       `json:"bound_by"`
	Check   ElementCheck `json:"check"`
	Pass    bool         `json:"pass"`
	Reason  string       `json:"reason,omitempty"`
	// InCore (CompareInCore) compares with the variant run once on the whole problem.
	InCore   *ResultCompare `json:"in_core,omitempty"`
	InCoreMS float64        `json:"in_core_ms,omitempty"`
	// BlockMS is the median of BlockReps in-device runs of the full block GEMM (BlockReps > 0).
	BlockMS float64 `json:"block_ms,omitempty"`
}

// EngineRate is a CPU engine's measured SGEMM rate.
type EngineRate struct {
	Engine string  `json:"engine"`
	Rows   int     `json:"rows"`
	MS     float64 `json:"ms"`
	GFLOPS float64 `json:"gflops"`
}

// HybridResult reports one hybrid product.
type HybridResult struct {
	GPURows int    `json:"gpu_rows"`
	CPURows int    `json:"cpu_rows"`
	Engine  string `json:"engine"`
	Workers int    `json:"workers"`
	// Event-timed GPU parts, the GPU part's wall time (copies, kernel, waiting), the CPU part's
	// wall time and the whole product's wall time, of the run with the median overall time.
	H2DMS     float64 `json:"h2d_ms"`
	KernelMS  float64 `json:"kernel_ms"`
	D2HMS     float64 `json:"d2h_ms"`
	GPUMS     float64 `json:"gpu_ms"`
	CPUMS     float64 `json:"cpu_ms"`
	OverallMS float64 `json:"overall_ms"`
	// OverallSamples are every timed run's overall time.
	OverallSamples []float64 `json:"overall_samples"`
	HostPinned     bool      `json:"host_pinned"`
	// Kernel geometry for wave arithmetic: blocks in the GPU part's grid, resident blocks per SM.
	Blocks      int          `json:"blocks"`
	BlocksPerSM int          `json:"blocks_per_sm"`
	SMs         int          `json:"sms"`
	Check       ElementCheck `json:"check"`
	Pass        bool         `json:"pass"`
	Reason      string       `json:"reason,omitempty"`
	// GPUOnlyGPURows and GPUOnlyCPURows (CompareGPUOnly) compare the GPU and CPU rows with an
	// all-GPU product.
	GPUOnlyGPURows *ResultCompare `json:"gpu_only_gpu_rows,omitempty"`
	GPUOnlyCPURows *ResultCompare `json:"gpu_only_cpu_rows,omitempty"`
	// Probe (ProbeRows > 0): every CPU engine's rate on ProbeRows rows.
	Probe []EngineRate `json:"probe,omitempty"`
}

// Device describes the GPU a worker owns; recorded with every result.
type Device struct {
	Ordinal           int    `json:"ordinal"`
	Name              string `json:"name"`
	UUID              string `json:"uuid"`
	ComputeCapability string `json:"compute_capability"`
	SMs               int    `json:"sms"`
	MemoryBytes       int64  `json:"memory_bytes"`
	L2Bytes           int    `json:"l2_bytes"`
	DriverVersion     int    `json:"driver_version"`
	ClockKHz          int    `json:"clock_khz,omitempty"`
	MemClockKHz       int    `json:"mem_clock_khz,omitempty"`
	MemBusWidth       int    `json:"mem_bus_width,omitempty"`
	CublasVersion     int    `json:"cublas_version,omitempty"`
	CublasLibrary     string `json:"cublas_library,omitempty"`
	// FreeBytes is the device memory free when the worker said hello (its context created): what an
	// out-of-core plan may budget for before the request reaches the worker.
	FreeBytes int64 `json:"free_bytes,omitempty"`
	// CublasLtVersion and CublasLtLibrary describe the cublasLt the worker opened (the cublaslt
	// baseline of fused epilogues); empty when it has none.
	CublasLtVersion int    `json:"cublaslt_version,omitempty"`
	CublasLtLibrary string `json:"cublaslt_library,omitempty"`
}

// Attributes are the driver's view of a loaded kernel and its occupancy on a shape.
type Attributes struct {
	Registers          int `json:"registers"`
	SharedStatic       int `json:"shared_static"`
	LocalBytes         int `json:"local_bytes"`
	MaxThreadsPerBlock int `json:"max_threads_per_block"`
	// BlocksPerSM from cuOccupancyMaxActiveBlocksPerMultiprocessor.
	BlocksPerSM int `json:"blocks_per_sm"`
	// Blocks in the grid for this shape.
	Blocks int `json:"blocks"`
	// Waves = Blocks / (SMs · BlocksPerSM).
	Waves float64 `json:"waves"`
}

// VerifyResult is one check against the float64 reference.
type VerifyResult struct {
	Pass  bool    `json:"pass"`
	Seed  uint64  `json:"seed"`
	Alpha float32 `json:"alpha"`
	Beta  float32 `json:"beta"`
	LDA   int     `json:"lda"`
	LDB   int     `json:"ldb"`
	LDC   int     `json:"ldc"`
	// StrideA, StrideB and StrideC are the element strides between the products of a batched
	// shape (0 for one product; StrideB 0 with several: every product shares one B).
	StrideA int64   `json:"stride_a,omitempty"`
	StrideB int64   `json:"stride_b,omitempty"`
	StrideC int64   `json:"stride_c,omitempty"`
	MaxAbs  float64 `json:"max_abs"`
	MaxRel  float64 `json:"max_rel"`
	// NormRel is ‖C−R‖_F / ‖R‖_F.
	NormRel float64 `json:"norm_rel"`
	// MismatchPct is the percentage of elements over the tolerance (NaN counts as over).
	MismatchPct float64 `json:"mismatch_pct"`
	MSE         float64 `json:"mse"`
	// Tol is the tolerance scale TolFactor·(K+2)·2^-24; an element's bound is Tol·((|α|·|A|·|B|)_ij + |β·C0_ij|).
	Tol float64 `json:"tol"`
	// FirstBad is the row-major index (i*N+j) of the first failing element, -1 if none.
	FirstBad int64 `json:"first_bad"`
	// Reason explains a failure in one line.
	Reason string `json:"reason,omitempty"`
	// RefCrossChecked is true when the GPU reference was checked against the CPU reference.
	RefCrossChecked bool `json:"ref_cross_checked"`
}

// TimingResult holds per-launch times in milliseconds.
type TimingResult struct {
	Reps     int     `json:"reps"`
	MedianMS float64 `json:"median_ms"`
	MinMS    float64 `json:"min_ms"`
	MaxMS    float64 `json:"max_ms"`
	MeanMS   float64 `json:"mean_ms"`
	StdMS    float64 `json:"std_ms"`
	// Samples are the individual times (kept for interleaved re-measurement and confidence
	// intervals; the orchestrator may drop them from reports).
	Samples []float64 `json:"samples,omitempty"`
	// Cold is true when L2 was flushed before each launch.
	Cold bool `json:"cold"`
	// InputSets is how many rotated input sets were used.
	InputSets int `json:"input_sets"`
}

// PeakResult is the measured FP32 FFMA throughput of the device: the ceiling that makes every
// variant's GFLOP/s readable as a fraction of what the chip can issue.
type PeakResult struct {
	// Blocks and Threads of the probe launch, Iters per thread, Chains of independent FFMAs.
	Blocks  int `json:"blocks"`
	Threads int `json:"threads"`
	Iters   int `json:"iters"`
	Chains  int `json:"chains"`
	// FlopsPerLaunch = 2·Chains·Iters·Threads·Blocks.
	FlopsPerLaunch float64 `json:"flops_per_launch"`
	// GFLOPS from the median launch time.
	GFLOPS float64       `json:"gflops"`
	Timing *TimingResult `json:"timing"`
}

// BreakdownResult holds one sample per run and phase, in milliseconds. Alloc, HtoD, DtoH and Free
// are host wall-clock times of synchronous steps (host buffers are pageable Go memory); Kernel is
// the event time of the launch.
type BreakdownResult struct {
	Runs     int       `json:"runs"`
	AllocMS  []float64 `json:"alloc_ms"`
	HtoDMS   []float64 `json:"htod_ms"`
	KernelMS []float64 `json:"kernel_ms"`
	DtoHMS   []float64 `json:"dtoh_ms"`
	FreeMS   []float64 `json:"free_ms"`
	// Bytes copied per run: A and B to the device, C back.
	HtoDBytes int64 `json:"htod_bytes"`
	DtoHBytes int64 `json:"dtoh_bytes"`
}
