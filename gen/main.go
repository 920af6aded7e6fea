// Command gen is tilegen's kernel generator: it expands variants.yaml into concrete SGEMM kernel
// variants, renders each through its family's CUDA template, compiles them to PTX with nvcc, reads
// their register/shared-memory/spill use from ptxas, and writes the generated Go package that the
// runner and worker load kernels from.
//
// Usage (from the repository root; `go generate ./...` runs the same through generated/doc.go):
//
//	go run ./gen [--config variants.yaml] [--out generated] [--arch sm_90] [--jobs N]
//	             [--nvcc PATH] [--ccbin PATH] [--templates DIR] [--no-compile] [--explain]
//
// # Input
//
// variants.yaml lists families. Each family names a template (a plain file name under templates/),
// an ordered mapping of integer parameters, optional constraints (expr-lang booleans; false prunes
// the combination with the constraint's reason), geometry (block_x, block_y, tile_rows, tile_cols,
// grid_z, shared_bytes, dynamic_shared) and requires (m/n/k/ld_multiple) as integer expressions over
// the parameters. The file is read strictly through yaml.Node: unknown or duplicate keys, wrong
// value types, non-integer parameter values, anchors/aliases, a second document, unknown names in
// an expression, non-integral or out-of-range geometry (dims and tiles must lie in [1, 4096]) are
// errors, each printed as `gen: file:line:col: message`.
//
// The cartesian product of each family's parameters (last parameter fastest) is filtered by the
// constraints (evaluated first, so they may guard the geometry) and by built-in resource checks:
// at most 1024 threads per block, a multiple of 32 with warp_multiple, shared_bytes <= 48 KiB (or
// shared_bytes + dynamic_shared <= 227 KiB with dynamic_shared_ok). --explain prints every pruned
// combination (variant name, reason) and the kept count, and writes nothing. A family whose every
// combination is pruned is an error that counts the reasons. Variant names come from variant_name
// ("shared_w{W}") or default to family + "_" + lower(param)+value for each parameter; they must be
// identifiers and unique across families.
//
// # Templates
//
// Templates come from the embedded tilegen/templates FS, or from --templates DIR. Each family
// template is parsed with common.cu.tmpl (when present) and executed with TemplateData; each
// templates/support/<name>.cu.tmpl is executed with SupportData. Helpers: add sub mul div mod min
// max log2 seq ispow2 (div, mod and log2 fail rather than return a wrong number). Template errors
// keep text/template's file:line:col and name the variant.
//
// # Output
//
// Under --out: cuda/<variant>.cu (with a generated-code header naming the nvcc version and the
// variant's parameters), ptx/<variant>.ptx, support/<name>.ptx, manifest.json (variant.Manifest,
// sorted by name) and registry.go (package generated: Variants, Lookup, PTX, SupportPTX, NVCC,
// Arch, GeneratorVersion, with the PTX embedded). Everything is rendered and compiled in memory
// first; nothing is written unless every step succeeded. A file is rewritten only when its bytes
// change; .cu/.ptx files of variants that no longer exist are removed; other files (doc.go) are
// never touched. Output is deterministic: sorted, no timestamps, no absolute paths.
//
// nvcc runs --jobs at a time (default GOMAXPROCS) in a private temporary directory; a variant whose
// source, nvcc version, arch and generator version match the existing manifest, and whose PTX file
// still has the recorded hash, is not recompiled. After nvcc, `ptxas -arch=ARCH -v` (ptxas beside
// nvcc) fills each variant's Resources. nvcc is --nvcc, else $NVCC, else nvcc on PATH, else
// /usr/local/cuda/bin/nvcc; the host compiler is --ccbin, else $NVCC_CCBIN, else g++-11 when on
// PATH (nvcc 11.8 rejects newer g++). A compile error shows nvcc's message and the generated source
// lines around each line it names.
//
// --no-compile needs no CUDA toolkit: it writes the sources, a manifest without PTX hashes or
// resources (nvcc ""), and a registry whose PTX and SupportPTX return errors; existing PTX files
// under --out are removed so the package stays consistent. Regenerate without it before running
// kernels.
//
// Exit status: 0 on success, 1 on bad input or a failed compile, 2 on a usage error.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"
	"time"

	"github.com/spf13/pflag"

	"tilegen/templates"
)

func main() {
	err := run(os.Args[1:], os.Stdout, os.Stderr)
	if err == nil {
		return
	}
	fmt.Fprintf(os.Stderr, "gen: %v\n", err)
	os.Exit(exitCode(err))
}

// exitCode is 2 for usage errors and 1 for everything else.
func exitCode(err error) int {
	var ue *usageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ue):
		return 2
	default:
		return 1
	}
}

// usageError is a command-line mistake (exit status 2).
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }

type options struct {
	config, out, arch, nvcc, ccbin, templates string
	noCompile, explain                        bool
	jobs                                      int
}

func parseFlags(args []string, stderr io.Writer) (*options, error) {
	o := &options{}
	fl := pflag.NewFlagSet("gen", pflag.ContinueOnError)
	fl.SetOutput(stderr)
	fl.StringVar(&o.config, "config", "variants.yaml", "read the variant matrix from `file`")
	fl.StringVar(&o.out, "out", "generated", "write the generated package to `dir`")
	fl.StringVar(&o.arch, "arch", "sm_90", "compile PTX for `arch` (sm_XX)")
	fl.StringVar(&o.nvcc, "nvcc", "", "use the nvcc at `path` (default $NVCC, PATH, /usr/local/cuda/bin/nvcc)")
	fl.StringVar(&o.ccbin, "ccbin", "", "pass `path` to nvcc as the host compiler (default $NVCC_CCBIN, else g++-11 when on PATH)")
	fl.StringVar(&o.templates, "templates", "", "read templates from `dir` instead of the embedded set")
	fl.BoolVar(&o.noCompile, "no-compile", false, "write sources, manifest and a PTX-less registry without running nvcc")
	fl.BoolVar(&o.explain, "explain", false, "print every pruned combination with its reason and write nothing")
	fl.IntVar(&o.jobs, "jobs", runtime.GOMAXPROCS(0), "run `n` nvcc processes at a time")
	if err := fl.Parse(args); err != nil {
		return nil, &usageError{err}
	}
	if fl.NArg() > 0 {
		return nil, &usageError{fmt.Errorf("unexpected arguments %q", fl.Args())}
	}
	if o.jobs < 1 {
		return nil, &usageError{fmt.Errorf("--jobs %d: must be at least 1", o.jobs)}
	}
	if !archRE.MatchString(o.arch) {
		return nil, &usageError{fmt.Errorf("--arch %q: want sm_XX", o.arch)}
	}
	return o, nil
}

func run(args []string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		if errors.Is(err.(*usageError).err, pflag.ErrHelp) {
			return nil
		}
		return err
	}
	return generate(context.Background(), o, stdout)
}

func generate(ctx context.Context, o *options, stdout io.Writer) error {
	start := time.Now()
	data, err := os.ReadFile(o.config)
	if err != nil {
		return fmt.Errorf("reading config: %w", err)
	}
	cfg, err := LoadConfig(o.config, data)
	if err != nil {
		return err
	}
	exp, err := Expand(cfg)
	if err != nil {
		return err
	}
	if o.explain {
		for _, p := range exp.Pruned {
			fmt.Fprintf(stdout, "%s\t%s\n", p.Name, p.Reason)
		}
		fmt.Fprintf(stdout, "%d variants kept, %d combinations pruned\n", len(exp.Variants), len(exp.Pruned))
		return nil
	}

	var tsys fs.FS = templates.FS
	desc := "the embedded templates"
	if o.templates != "" {
		if st, err := os.Stat(o.templates); err != nil || !st.IsDir() {
			return &usageError{fmt.Errorf("--templates %s: not a directory", o.templates)}
		}
		tsys, desc = os.DirFS(o.templates), o.templates
	}
	ts, err := newTemplateSet(tsys, desc)
	if err != nil {
		return err
	}

	var tc *Toolchain
	version := ""
	if !o.noCompile {
		if tc, err = FindToolchain(ctx, o.nvcc, o.ccbin, o.arch); err != nil {
			return err
		}
		version = tc.Version
	}
	srcs, err := RenderAll(ts, cfg, exp, version, o.arch)
	if err != nil {
		return err
	}
	var compiled map[string]*Compiled
	reused := 0
	if tc != nil {
		if compiled, err = CompileAll(ctx, tc, srcs, reuser(o.out, tc), o.jobs); err != nil {
			return err
		}
		for _, c := range compiled {
			if c.Reused {
				reused++
			}
		}
	}
	out, err := BuildOutput(srcs, compiled, tc, o.arch)
	if err != nil {
		return err
	}
	st, err := Write(o.out, out)
	if err != nil {
		return fmt.Errorf("writing %s: %w", o.out, err)
	}
	mode := "compiled with nvcc " + version
	if tc == nil {
		mode = "not compiled (--no-compile)"
	}
	fmt.Fprintf(stdout, "gen: %d variants (%d pruned), %d support kernels, %s, %d PTX reused; %d files written, %d unchanged, %d removed in %s\n",
		len(exp.Variants), len(exp.Pruned), len(srcs)-len(exp.Variants), mode, reused,
		st.Written, st.Unchanged, st.Removed, time.Since(start).Round(time.Millisecond))
	return nil
}
