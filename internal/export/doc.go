// Package export turns a tilegen results set into artifacts another project uses with no tilegen
// code at run time: a Go package (cu driver API, PTX embedded with //go:embed), a CUDA C++ header
// (<name>.cuh, kernel source plus an inline launcher) and a provenance file (<name>.json).
//
// Inputs. One or more results directories: a `runner tune` directory (kind "tune" and "cublas"
// records) and a `runner verify` directory (kind "verify", the edge suite), or one directory made by
// `runner merge`; results.jsonl.gz is read when results.jsonl is absent (the provenance hashes the
// uncompressed records either way). Records with the same key are read once. Kernel source and PTX
// come from a generated directory (manifest.json, cuda/<name>.cu, ptx/<name>.ptx); each file's
// SHA-256 must equal the manifest's hash, and the ptxas resources recorded in the results must equal
// the manifest's, so stale results or a stale generated directory are refused rather than exported.
//
// Eligibility. A variant may be exported only when no record anywhere says it failed (status
// "failed" or a verification check that did not pass), and every edge shape of
// orchestrator.EdgeShapes that the variant accepts has an ok verify record. Others are excluded with
// the reason (printed, and listed under "excluded" in the provenance).
//
// Selection. The shape classes are the tuned shapes (all of them, or --shapes). Each class gets the
// eligible variant with the lowest median time there (ties: by name). When a (variant, shape) was
// timed on several devices the larger median is used. The robust default is the eligible variant
// that was timed on every class and passed its whole edge suite with no shape skipped, with the best
// (lowest) worst-case ratio of its time to cuBLAS's over the classes. The exported set is the class
// winners plus the default, sorted by name.
//
// Dispatch (identical in the Go package and the header). For M×N×K the class nearest by
// log-distance, d = ln²(M/Mc) + ln²(N/Nc) + ln²(K/Kc), is chosen (ties: the first class in M, N, K
// order), and its variant is launched when it accepts the problem (dimensions, leading-dimension
// and alignment requirements, grid limits). Otherwise the robust default is launched when it
// accepts the problem; otherwise the call returns an error and launches nothing. A call never
// launches a kernel on a problem the kernel was not built for.
//
// Launch (the runner's contract): block (Block.X, Block.Y, 1), grid (ceil(N/Tile.Cols),
// ceil(M/Tile.Rows), GridZ), dynamic shared memory DynamicShared bytes; above 48 KiB the kernel's
// maximum dynamic shared size attribute is raised first: by Load in the Go package (per context),
// once per device in the header (again if a launch fails, as after cudaDeviceReset). The header's
// launcher keeps the CUDA runtime off its per-call path apart from the launch itself: it remembers
// the nearest class of the last shape per thread and calls cudaLaunchKernel from a table.
//
// Output. Nothing in the output depends on time or map order: the same inputs give byte-identical
// artifacts. An existing --out directory is replaced only with --force, and only when it is empty
// or holds a previous export (its provenance file names the exporter).
package export
