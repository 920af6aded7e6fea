// Command runner verifies and autotunes tilegen's generated SGEMM variants against cuBLAS.
//
// It never touches the GPU itself: each device is owned by a tilegen-worker process, and a worker
// that crashes, hangs or writes garbage costs only the measurement in flight. See package
// tilegen/internal/orchestrator for the method; `runner help` lists the commands and
// `runner help CMD` shows a command's flags.
//
// Exit status: 0 on success (help and --version included), 1 when the work failed, 2 for a usage
// error (unknown command or flag, a value out of range, a missing argument), which is printed as
// one line followed by a hint naming the help to read.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"tilegen/generated"
	"tilegen/internal/version"
)

func main() {
	os.Exit(exitStatus(run(os.Args[1:], os.Stdout, os.Stderr), os.Stderr))
}

// exitStatus prints err (if any) the way the runner reports it and returns the process status.
func exitStatus(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	var ee *exitError
	if !errors.As(err, &ee) {
		fmt.Fprintf(stderr, "runner: %v\n", err)
		return 1
	}
	if ee.code == 2 {
		help := "runner help"
		prefix := "runner: "
		if ee.cmd != "" {
			prefix = "runner " + ee.cmd + ": "
		}
		if ee.cmd != "" && ee.cmd != "help" {
			help += " " + ee.cmd
		}
		fmt.Fprintf(stderr, "%s%v\nRun '%s' for usage.\n", prefix, ee.err, help)
	} else {
		fmt.Fprintf(stderr, "runner: %v\n", ee.err)
	}
	return ee.code
}

// exitError carries the exit status an error calls for; code 2 is a usage error of command cmd
// ("" for the runner itself).
type exitError struct {
	code int
	cmd  string
	err  error
}

func (e *exitError) Error() string {
	if e.cmd != "" {
		return e.cmd + ": " + e.err.Error()
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// usageErr makes a usage error of command cmd.
func usageErr(cmd string, format string, args ...any) error {
	return &exitError{code: 2, cmd: cmd, err: fmt.Errorf(format, args...)}
}

// command is one of the runner's subcommands.
type command struct {
	name, summary string
	run           func(args []string, stdout, stderr io.Writer) error
}

// commands are listed in this order by `runner help`. Initialised in init: the help command reads
// the table.
var commands []command

func init() {
	commands = []command{
		{"tune", "verify and time every variant on every shape against cuBLAS, rank per shape (--dry-run: the plan, no GPU)", runTune},
		{"verify", "check variants on edge shapes (degenerate, prime, tile ± 1), no timing", runVerify},
		{"list", "print the variants, their geometry, requirements and resources (no GPU needed)", runList},
		{"devices", "start a worker per device and print what it reports", runDevices},
		{"merge", "combine result directories (shards) into one: runner merge DIR... --out DIR", runMerge},
		{"export", "write the winners as a Go package, a CUDA C++ header and provenance (no GPU needed)", runExport},
		{"workload", "fit the export's dispatch on a tuned workload corpus and cross-validate it: summary.json, chart (no GPU needed)", runWorkload},
		{"study", "run one of the seeds' experiments and write its tables and charts: runner study NAME --out DIR", runStudy},
		{"report", "render result directories into report.md with charts: runner report DIR... --out DIR (no GPU needed)", runReport},
		{"bench", "the benchmark suite: edge suite, tune of the suite's shapes, FFMA peak, summary.json, BENCHMARKS.md", runBench},
		{"outofcore", "multiply matrices larger than device memory by streaming blocks: --shape MxNxK [--device-mem BYTES]", runOutOfCore},
		{"hybrid", "split one product between the GPU and the CPU: --shape MxNxK --cpu-rows F|auto [--sweep waves]", runHybrid},
		{"accuracy", "error of the tensor-core kernels, cuBLAS SGEMM and cuBLAS TF32 on the same inputs vs float64 (uniform and 2^±20 rows): --shape MxNxK [--out FILE]", runAccuracy},
		{"search-eval", "replay the search strategies against exhaustive tunes' records: measurements to reach the winner (no GPU needed)", runSearchEval},
		{"help", "show this list, or a command's flags: runner help CMD", runHelp},
	}
}

func lookupCommand(name string) *command {
	for i := range commands {
		if commands[i].name == name {
			return &commands[i]
		}
	}
	return nil
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: runner <command> [flags]\n\ncommands:")
	width := 0
	for _, c := range commands {
		width = max(width, len(c.name))
	}
	for _, c := range commands {
		fmt.Fprintf(w, "  %-*s %s\n", width, c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'runner help <command>' (or runner <command> --help) for a command's flags;")
	fmt.Fprintln(w, "'runner --version' prints the version, Go, nvcc and git revision.")
}

func run(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usageErr("", "missing command")
	}
	switch args[0] {
	case "-h", "--help", "-help":
		usage(stdout)
		return nil
	case "--version", "-version":
		_, err := fmt.Fprintln(stdout, version.String("runner", generated.NVCC))
		return err
	}
	c := lookupCommand(args[0])
	if c == nil {
		return usageErr("", "unknown command %q", args[0])
	}
	return c.run(args[1:], stdout, stderr)
}

// runHelp prints the command list, or a command's help (its --help).
func runHelp(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		usage(stdout)
		return nil
	}
	c := lookupCommand(args[0])
	if c == nil {
		return &exitError{code: 2, cmd: "help", err: fmt.Errorf("unknown command %q", args[0])}
	}
	if c.name == "help" {
		usage(stdout)
		return nil
	}
	// study hybrid has its own flags: runner help study hybrid.
	return c.run(append(append([]string{}, args[1:]...), "--help"), stdout, stderr)
}
