// Command runner verifies and autotunes tilegen's generated SGEMM variants against cuBLAS.
//
// It never touches the GPU itself: each device is owned by a tilegen-worker process, and a worker
// that crashes, hangs or writes garbage costs only the measurement in flight. See package
// tilegen/internal/orchestrator for the method; `runner help` lists the commands.
package main

import (
	"fmt"
	"io"
	"os"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "runner: %v\n", err)
		os.Exit(1)
	}
}

const usage = `usage: runner <command> [flags]

commands:
  tune      verify and time every variant on every shape against cuBLAS, rank per shape
  verify    check variants on edge shapes (degenerate, prime, tile ± 1), no timing
  list      print the variants, their geometry, requirements and resources (no GPU needed)
  devices   start a worker per device and print what it reports
  merge     combine result directories (shards) into one: runner merge DIR... --out DIR
  export    write the winners as a Go package, a CUDA C++ header and provenance (no GPU needed)
  study     run one of the seeds' experiments and write its tables and charts: runner study NAME --out DIR
  report    render result directories into report.md with charts: runner report DIR... --out DIR
  bench     the benchmark suite: edge suite, tune of the suite's shapes, FFMA peak, summary.json, BENCHMARKS.md
  outofcore multiply matrices larger than device memory by streaming blocks: --shape MxNxK [--device-mem BYTES]
  hybrid    split one product between the GPU and the CPU: --shape MxNxK --cpu-rows F|auto [--sweep waves]

Run "runner <command> --help" for a command's flags.
`

func run(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return fmt.Errorf("missing command")
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "tune":
		return runTune(rest, stdout, stderr)
	case "verify":
		return runVerify(rest, stdout, stderr)
	case "list":
		return runList(rest, stdout, stderr)
	case "devices":
		return runDevices(rest, stdout, stderr)
	case "merge":
		return runMerge(rest, stdout, stderr)
	case "export":
		return runExport(rest, stdout, stderr)
	case "bench":
		return runBench(rest, stdout, stderr)
	case "study":
		return runStudy(rest, stdout, stderr)
	case "report":
		return runReport(rest, stdout, stderr)
	case "outofcore":
		return runOutOfCore(rest, stdout, stderr)
	case "hybrid":
		return runHybrid(rest, stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", cmd)
}
