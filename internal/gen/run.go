// Package gen is tilegen's kernel generator: it expands variants.yaml into kernel variants, renders
// them through the CUDA templates, compiles them with nvcc and writes the generated package. The
// command tilegen/gen is its thin main, and its doc comment is the manual (flags, input, output,
// transactions, exit status).
//
// Run is the command: it parses the flags and generates; Report turns its error into the message
// and exit status. Supervise is the small supervisor gen's binary becomes, re-executed, around one
// nvcc or ptxas run (see IsSupervisor).
package gen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"tilegen/internal/version"
	"tilegen/templates"
)

// Report prints err as "gen: err" (and, for a usage error, where to find the usage) and returns the
// exit status: 0, 1, or 2 for a usage error.
func Report(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	fmt.Fprintf(stderr, "gen: %v\n", err)
	code := exitCode(err)
	if code == 2 {
		fmt.Fprintln(stderr, "run 'gen --help' for usage")
	}
	return code
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
	noCompile, explain, help, version         bool
	jobs                                      int
	maxVariants                               int

	// sample, when set, keeps only the variants it returns (tests compile a few per family).
	sample func([]Planned) []Planned
}

func newFlagSet(o *options) *pflag.FlagSet {
	fl := pflag.NewFlagSet("gen", pflag.ContinueOnError)
	fl.SetOutput(io.Discard)
	fl.Usage = func() {}
	fl.SortFlags = false
	fl.StringVar(&o.config, "config", "variants.yaml", "read the variant matrix from `file`")
	fl.StringVar(&o.out, "out", "generated", "write the generated package to `dir`")
	fl.StringVar(&o.arch, "arch", "sm_90", "compile PTX for `arch` (sm_XX)")
	fl.StringVar(&o.nvcc, "nvcc", "", "use the nvcc at `path` (default $NVCC, PATH, /usr/local/cuda/bin/nvcc)")
	fl.StringVar(&o.ccbin, "ccbin", "", "pass `path` to nvcc as the host compiler (default $NVCC_CCBIN, else g++-11 when on PATH)")
	fl.StringVar(&o.templates, "templates", "", "read templates from `dir` instead of the embedded set")
	fl.BoolVar(&o.noCompile, "no-compile", false, "write sources, manifest and a PTX-less registry without running nvcc")
	fl.BoolVar(&o.explain, "explain", false, "print every pruned combination with its reason and write nothing")
	fl.IntVar(&o.jobs, "jobs", runtime.GOMAXPROCS(0), "run `n` nvcc processes at a time")
	fl.IntVar(&o.maxVariants, "max-variants", DefaultMaxVariants, "refuse a matrix of more than `n` parameter combinations (all families, before pruning)")
	fl.BoolVarP(&o.help, "help", "h", false, "print this help and exit")
	fl.BoolVar(&o.version, "version", false, "print the versions of gen, Go, nvcc and the git revision, and exit")
	return fl
}

const usageHead = `Usage: gen [flags]

gen expands variants.yaml into SGEMM kernel variants, renders each through its family's template,
compiles them to PTX with nvcc and writes the generated Go package (go doc tilegen/gen has the
details). Run it from the repository root, or through go generate ./generated.

Flags:
`

func usage(w io.Writer) {
	fmt.Fprint(w, usageHead, newFlagSet(&options{}).FlagUsages())
}

func parseFlags(args []string) (*options, error) {
	o := &options{}
	fl := newFlagSet(o)
	if err := fl.Parse(args); err != nil {
		return nil, &usageError{err}
	}
	if o.help || o.version {
		return o, nil
	}
	if fl.NArg() > 0 {
		return nil, &usageError{fmt.Errorf("unexpected arguments %q", fl.Args())}
	}
	if o.jobs < 1 {
		return nil, &usageError{fmt.Errorf("--jobs %d: must be at least 1", o.jobs)}
	}
	if o.maxVariants < 1 {
		return nil, &usageError{fmt.Errorf("--max-variants %d: must be at least 1", o.maxVariants)}
	}
	if !archRE.MatchString(o.arch) {
		return nil, &usageError{fmt.Errorf("--arch %q: want sm_XX", o.arch)}
	}
	return o, nil
}

// Run runs gen with the command-line arguments args (without the program name), printing to stdout.
// stderr is for the caller's messages: Run itself returns every error.
func Run(args []string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args)
	if err != nil {
		return err
	}
	return runOptions(o, stdout)
}

// runOptions runs parsed options; SIGINT and SIGTERM cancel the run, which kills nvcc and leaves
// --out as it was.
func runOptions(o *options, stdout io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	switch {
	case o.help:
		usage(stdout)
		return nil
	case o.version:
		return printVersion(ctx, o, stdout)
	}
	err := generate(ctx, o, stdout)
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("interrupted: %s is unchanged", o.out)
	}
	return err
}

func generate(ctx context.Context, o *options, stdout io.Writer) error {
	start := time.Now()
	data, err := readInputFile(o.config)
	if err != nil {
		return fmt.Errorf("reading config: %w", err)
	}
	cfg, err := LoadConfig(o.config, data)
	if err != nil {
		return err
	}
	cfg.MaxVariants = o.maxVariants
	exp, err := Expand(cfg)
	if err != nil {
		return err
	}
	if o.sample != nil {
		exp.Variants = o.sample(exp.Variants)
	}
	if o.explain {
		for _, p := range exp.Pruned {
			fmt.Fprintf(stdout, "%s\t%s\n", p.Name, p.Reason)
		}
		fmt.Fprintf(stdout, "%d variants kept, %d combinations pruned\n", len(exp.Variants), len(exp.Pruned))
		return nil
	}

	tsys, desc, closeTemplates, err := openTemplates(templates.FS, o.templates)
	if err != nil {
		return err
	}
	defer closeTemplates()
	ts, err := newTemplateSet(tsys, desc)
	if err != nil {
		return err
	}
	if err := checkOutDirs(o.out); err != nil {
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
	t, err := beginTx(o.out)
	if err != nil {
		return fmt.Errorf("writing %s: %w", o.out, err)
	}
	defer t.close()
	var compiled map[string]*Compiled
	reused := 0
	if tc != nil {
		if compiled, err = CompileAll(ctx, tc, srcs, reuser(t.out, tc), t.scratch(), o.jobs); err != nil {
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
	owned, err := ownedFiles(t.out, out)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	st, err := t.commit(out, owned)
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

// printVersion prints the line every tilegen binary prints for --version (internal/version), naming
// the nvcc that --nvcc, $NVCC or PATH finds, and the output format gen writes.
func printVersion(ctx context.Context, o *options, w io.Writer) error {
	nvcc := "not found"
	if p, err := findNVCC(o.nvcc); err == nil {
		if v, err := nvccVersion(ctx, p); err == nil {
			nvcc = v
		}
	}
	fmt.Fprintln(w, version.String("gen", nvcc))
	fmt.Fprintf(w, "output format: %s\n", GeneratorVersion)
	return nil
}
