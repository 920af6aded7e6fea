// Command gen is tilegen's kernel generator: it expands variants.yaml into concrete SGEMM kernel
// variants, renders each through its family's CUDA template, compiles them to PTX with nvcc, reads
// their register/shared-memory/spill use from ptxas, and writes the generated Go package that the
// runner and worker load kernels from.
//
// Usage (from the repository root; `go generate ./...` runs the same through generated/doc.go):
//
//	go run ./gen [--config variants.yaml] [--out generated] [--arch sm_90] [--jobs N]
//	             [--nvcc PATH] [--ccbin PATH] [--templates DIR] [--no-compile] [--explain]
//	             [--max-variants N]
//	go run ./gen --help | --version
//
// --help prints the flags to stdout; --version prints, in the line every tilegen binary prints,
// gen's module version, Go's, nvcc's (or "nvcc not found") and the git revision gen was built from
// ("unknown" under go run or -buildvcs=false), then gen's output format.
//
// # Input
//
// variants.yaml lists families. Each family names a template (a plain file name under templates/),
// an ordered mapping of integer parameters, optional constraints (expr-lang booleans; false prunes
// the combination with the constraint's reason), geometry (block_x, block_y, tile_rows, tile_cols,
// grid_z, shared_bytes, dynamic_shared) and requires (m/n/k/ld_multiple) as integer expressions over
// the parameters. grid_z: auto instead chooses grid z at launch by the rule in geometry.split (max,
// k_step, min_k, blocks_per_sm, workspace_floats; variant.SplitRule), copied onto every variant.
// Two optional keys carry what the rest of tilegen knows about a family, so that
// adding one needs no Go: traffic_model (naive, coalesced, tiled or compulsory, the default; the
// global-memory traffic model internal/analysis applies to it) and seed (true for a family taken
// from the founding documents; the bench summary reports the best of them). Both are copied onto
// every variant of the family in manifest.json and registry.go. The file is read strictly through
// yaml.Node: unknown or duplicate keys, wrong value types, non-integer parameter values, an
// unknown traffic_model, anchors/aliases, a second document, unknown names in an expression,
// non-integral or out-of-range geometry (dims and tiles must lie in [1, 4096]) are
// errors, each printed as `gen: file:line:col: message`; every error of the file is reported at
// once, in file order, with the nearest known key or parameter as a "did you mean" for a typo.
// Expressions are loop-free (no ranges, predicates, let, calls or strings: see Expr), and integer
// + - * that would leave 64 bits is an error, never a wrapped value. doc and reason are one line
// of printable text without "/*", "*/" or a backslash. The parameter combinations of all families
// are counted before expansion and capped at --max-variants (default 200000).
//
// The cartesian product of each family's parameters (last parameter fastest) is filtered by the
// constraints (evaluated first, so they may guard the geometry) and by built-in resource checks:
// at most 1024 threads per block, a multiple of 32 with warp_multiple, shared_bytes <= 48 KiB (or
// shared_bytes + dynamic_shared <= 227 KiB with dynamic_shared_ok). --explain prints every pruned
// combination (variant name, reason) and the kept count, and writes nothing. A family whose every
// combination is pruned is an error that counts the reasons. Variant names come from variant_name
// ("shared_w{W}") or default to family + "_" + lower(param)+value for each parameter; they must be
// identifiers, unique across families, and not a support kernel's name or entry point (reference,
// peak, anything starting with tilegen_).
//
// # Templates
//
// Templates come from the embedded tilegen/templates FS, or from --templates DIR, opened as an
// os.Root: a symbolic link that leads out of DIR is refused. The config and every template are
// read up to 8 MiB; a larger (or endless, like /dev/zero) file is an error naming it. Each family
// template is parsed with common.cu.tmpl (when present) and executed with TemplateData; each
// templates/support/<name>.cu.tmpl is executed with SupportData. Helpers: add sub mul div mod min
// max log2 seq ispow2 (div, mod and log2 fail rather than return a wrong number). Template errors
// keep text/template's file:line:col and name the variant. A line `#include "tilegen/NAME.cuh"` of
// a rendered source (or of a header it includes) is replaced by include/tilegen/NAME.cuh from the
// same template directory, plain CUDA: the CUDA header library that the families share. Each
// header is inlined where it is first included and dropped where it is included again (its
// include guard does the same when the export puts several sources into one file), so every
// generated source is self-contained; a header that is missing, or an include of tilegen/ that does
// not name one, is an error naming the line.
//
// # Output
//
// Under --out: cuda/<variant>.cu (with a generated-code header naming the nvcc version and the
// variant's parameters), ptx/<variant>.ptx, support/<name>.ptx, manifest.json (variant.Manifest,
// sorted by name) and registry.go (package generated: Variants, Lookup, PTX, SupportPTX, NVCC,
// Arch, GeneratorVersion, with the PTX embedded). manifest.json also lists every file gen wrote
// ("files"); the next run removes only listed files that it no longer writes, never anything else
// under --out (doc.go, a hand-written .cu), and refuses to overwrite an unlisted file. cuda/, ptx/
// or support/ as a symbolic link is refused. Output is deterministic: sorted, no timestamps, no
// absolute paths.
//
// A run is one transaction: it renders, compiles and stages the complete next --out (unchanged files
// hard-linked, so their inode and mtime stay) in a private directory beside it,
// .<out>.gen-tx-*, and then swaps the two with one atomic rename (renameat2 RENAME_EXCHANGE on Linux;
// elsewhere two renames, undone by the next run when interrupted between them). Killed at any
// moment, even by kill -9, a run leaves --out as it was or as the run made it. Nothing is swapped
// when no file changed. The private directory is removed on every exit, SIGINT and SIGTERM
// included; one left by kill -9 is no longer locked (flock) and the next run removes it. As --out
// becomes a new directory, a shell whose working directory is inside it must cd there again to
// see the new files.
//
// nvcc runs --jobs at a time (default GOMAXPROCS) in the private directory; a variant whose
// source, nvcc version, arch and generator version match the existing manifest, and whose PTX file
// still has the recorded hash, is not recompiled. After nvcc, `ptxas -arch=ARCH -v` (ptxas beside
// nvcc) fills each variant's Resources. nvcc is --nvcc, else $NVCC, else nvcc on PATH, else
// /usr/local/cuda/bin/nvcc; the host compiler is --ccbin, else $NVCC_CCBIN, else g++-11 when on
// PATH (nvcc 11.8 rejects newer g++). A compile error shows nvcc's message and the generated source
// lines around each line it names. Each nvcc and ptxas runs in a process group of its own under a
// small supervisor (gen's own binary, re-executed): cancelling kills the group, and when gen dies,
// even by kill -9, the kernel signals the supervisor (Pdeathsig), which kills the group, so no
// compiler outlives gen.
//
// --no-compile needs no CUDA toolkit: it writes the sources, a manifest without PTX hashes or
// resources (nvcc ""), and a registry whose PTX and SupportPTX return errors; PTX files an earlier
// run wrote are removed so the package stays consistent. Regenerate without it before running
// kernels.
//
// Exit status: 0 on success (and for --help, --version), 1 on bad input, a failed compile or an
// interrupt, 2 on a usage error (printed with "run 'gen --help' for usage").
//
// The generator itself is package tilegen/internal/gen; this command only runs it.
package main

import (
	"os"

	"tilegen/internal/gen"
)

func main() {
	if gen.IsSupervisor() {
		os.Exit(gen.Supervise(os.Args[1:]))
	}
	os.Exit(gen.Report(gen.Run(os.Args[1:], os.Stdout, os.Stderr), os.Stderr))
}
