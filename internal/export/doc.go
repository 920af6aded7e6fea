// Package export turns a tilegen results set into artifacts another project uses with no tilegen
// code at run time: a Go package (PTX embedded with //go:embed, its own cgo binding of the CUDA
// driver), a CUDA C++ header (<name>.cuh, kernel source plus an inline launcher) and a provenance
// file (<name>.json).
//
// Inputs. One or more results directories: a `runner tune` directory (kind "tune" and "cublas"
// records) and a `runner verify` directory (kind "verify", the edge suite), or one directory made by
// `runner merge`; results.jsonl.gz is read when results.jsonl is absent (the provenance hashes the
// uncompressed records either way). Records with the same key are read once. Kernel source and PTX
// come from a generated directory (manifest.json, cuda/<name>.cu, ptx/<name>.ptx); each file's
// SHA-256 must equal the manifest's hash, and the ptxas resources recorded in the results must equal
// the manifest's, so stale results or a stale generated directory are refused rather than exported.
//
// Hashes. Every tune and verify record names the SHA-256 of the source and PTX it measured
// (source_hash, ptx_hash). A variant with a record whose hashes differ from the manifest's (it was
// regenerated after tuning) is excluded, with the variant and the runner tune / runner verify
// commands to rerun. Records without hashes (written before results carried them, as the committed
// H100 evidence was) are refused, the whole set when none has hashes, else per variant, unless
// AllowUnhashed (--allow-unhashed): then they are matched by ptxas resources alone, and the
// provenance counts them (unhashed_records).
//
// Eligibility. A variant may be exported only when no record anywhere says it failed (status
// "failed" or a verification check that did not pass), and every edge shape of
// orchestrator.EdgeShapes that the variant accepts has an ok verify record. Others are excluded with
// the reason (printed, and listed under "excluded" in the provenance).
//
// Selection. The dispatch rule is fitted on a set of shapes: a workload corpus (Options.Corpus,
// --corpus: every shape must have been tuned), or --shapes, or every tuned shape. Its input is, per
// shape, cuBLAS's median time and the median of every eligible variant timed there; when a
// (variant, shape) was timed on several devices the larger median is used, and every ratio is
// cuBLAS time / tilegen time on the same shape and device (above 1: faster than cuBLAS), as in
// bench and the reports. The rule (package internal/dispatch) picks the robust default — an
// eligible variant that passed its whole edge suite with no shape skipped, timed on the most
// shapes, with the best worst-case ratio there — and the variants its tables launch. The exported
// set is those variants plus the default, sorted by name (then the batched ones, below). The classes (Classes() in the Go package,
// <name>_classes in the header) are the fitted shapes with the variant the rule launches there and
// its time; a shape where that variant was not timed is listed in the provenance (untimed) instead.
// A variant that was fastest on a fitted shape but is not eligible is listed with the shapes it
// would have won.
//
// Strided batches. The batched tunes (shapes with a batch) are not fitted on: each op with eligible
// batched kernels gets a BatchRule, its batch classes (every batched shape of the op, with the
// fastest eligible batched kernel there) and a robust default (the batched kernel without
// requirements, timed on all the op's batch classes, with the best geometric mean of its time over
// the fastest). The strided-batched entries (SgemmStridedBatched(Op), <name>_sgemm_strided_batched
// (_op)) launch the kernel of the nearest class (batchDistance: integer buckets of M, N, K and the
// batch) when it takes the problem, else the default; the batched kernels follow the one-product
// ones in the exported set, each group sorted by name.
//
// Dispatch (identical in the Go package and the header; internal/dispatch's Rule.Dispatch). M, N
// and K each go into a bucket (2^s per octave: floor(log2 x) and the s bits after the leading one,
// clamped to the fitted range) with integer operations; three tables give the cell's variant for
// problems whose M and N its tile divides, its variant for the other problems, and its best
// variant without requirements (fitted for problems with a leading dimension not a multiple of 4).
// The aligned variant is launched when its tile divides M and N and it accepts the problem
// (dimensions, leading-dimension and alignment requirements, the kernels' 32-bit ints, grid
// limits); else the first of the unaligned, general and aligned variants and the robust default
// that accepts it; a problem with a leading dimension not a multiple of 4 and M and N above 16
// (dispatch.Vec) tries the general variant first; when none accepts it, the call returns an error
// and launches nothing.
// Misaligned twins (misalignedTwins): an exported variant's twins are the same template and
// parameters with MIS added (MIS = 1: a B ring that copies rows that are not 16-byte aligned
// coalesced; MIS = 3: also A's loads dealt for such rows). For each misalignment class of a problem
// (MisClass: B, A or both misaligned, by ldb and lda modulo 4) the twin measured fastest over the
// variant on the tuned shapes of that class, if faster at all and exportable, comes into the
// exported set; wherever the dispatch launches the variant on a problem of that class it launches
// the twin (when the twin takes the problem), in Plan.Choose and in both artifacts (twin[class],
// <name>_twinned). Twins are no candidates of the rule's cells. The provenance names each twin,
// its class and its measured gain.
// A call never launches a kernel on a problem the kernel was not built for, and costs a few
// integer operations and three table reads: no allocation, no floating point. The tests compile
// the Go package and the header and compare their choices with Plan.Choose (which follows
// Rule.Dispatch) on about 1300 shapes.
//
// Launch (the runner's contract): block (Block.X, Block.Y, 1), grid (ceil(N/Tile.Cols),
// ceil(M/Tile.Rows), z), dynamic shared memory DynamicShared bytes; above 48 KiB the kernel's
// maximum dynamic shared size attribute is raised first: by Load in the Go package (per context),
// once per device in the header (again if a launch fails, as after cudaDeviceReset). z is GridZ,
// or for a variant with a launch-time split rule (variants.yaml grid_z: auto) what the rule
// (variant.SplitRule.Slices) picks from the shape and the device's SM count; both outputs carry
// a copy of the rule (splitSlices, <name>_split_slices), tested to agree with the Go original on
// many shapes. The Go package reads the SM count in Load; the header once per device, at the first
// launch of such a kernel (cudaGetDevice on each of its launches). The header's launcher otherwise
// keeps the CUDA runtime off its per-call path apart from the launch itself: it reads the
// rule's tables and calls cudaLaunchKernel from a table of kernels. Built with CUDA 12.5 or later the
// header launches each kernel's exported PTX (cudaLibraryLoadData at its first launch, the
// cudaKernel_t handle read atomically after that); with NAME_FROM_SOURCE or an older CUDA it compiles the
// kernels' source, which it also carries. With Options.SASS (runner export --sass) both artifacts
// load, per kernel, a compressed fatbin of the cubins the toolkit's ptxas built and the PTX instead
// (see SASS).
//
// The Go package imports only the standard library and does not import gorgonia.org/cu (whose init
// exits the process without a GPU). driver.go (cgo, Linux) opens libcuda.so.1 with dlopen when Load
// is first called and calls eight driver entry points through it (cuInit, cuCtxGetCurrent,
// cuModuleLoadData, cuModuleGetFunction, cuFuncSetAttribute, cuLaunchKernel, cuModuleUnload,
// cuGetErrorString); it links only libc and libdl. A program importing the package therefore builds
// without the CUDA toolkit and starts anywhere; without a driver, device or current context Load
// returns an error (wrapping ErrUnavailable for the first two), and builds without cgo get
// driver_unsupported.go, whose Load always fails. Device pointers and the stream are uintptr.
//
// Input text. Text from the inputs that reaches generated code or printed output (device names,
// nvcc and generator versions, families, parameter names, failure reasons, variant names from
// results files; a corpus's sources never reach the export) is written as it is when it is plain
// printable ASCII that cannot end a comment, and Go-quoted otherwise (one line, no control
// characters, "*/" broken up); Go string literals are quoted by the Go renderer and the provenance
// by encoding/json. Variant names, which are identifiers in the generated code, must be C
// identifiers or the export is refused.
//
// Output. Nothing in the output depends on time or map order: the same inputs give byte-identical
// artifacts. The provenance lists every file of the export (files). An existing --out directory is
// used only with --force, and only when it is empty or holds a previous export (its provenance
// names the exporter); then the files that export wrote (its list, or for exports older than the
// list the names exports wrote then) are replaced or removed and every other file is kept, and a
// file in the way that the previous export did not write stops the export before anything changes.
package export
