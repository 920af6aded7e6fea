// Command tilegen-worker owns one GPU for the tilegen runner: it answers the JSON-lines protocol of
// tilegen/internal/protocol on stdin/stdout (hello first, then one response per request, in
// order) and exits 0 on quit or end of input. It exits non-zero when the device cannot be opened
// or a kernel fault left the CUDA context unusable; the runner then starts a fresh worker. On a host
// without a usable GPU it cannot even say hello: gorgonia.org/cu's package init prints its cuInit
// failure on stdout and exits 1 before main runs, and the runner reports that as "no CUDA device
// found (driver: …)". The runner starts it in its own process group with SIGKILL as its
// parent-death signal, so it never outlives the runner.
//
// Usage:
//
//	tilegen-worker [--device N] [--reference-ptx FILE] [--epilogue-ptx FILE] [--gate-ptx FILE]
//	tilegen-worker --version
//
// The float64 reference kernel the worker verifies against comes from the runner, which writes
// its catalog's support kernel "reference" to a file and passes --reference-ptx. The worker embeds
// no kernels of its own: everything it runs arrives from the orchestrator. Without the flag it can
// time but every verification request fails with that reason. Likewise --epilogue-ptx, the
// support kernel "epilogue" (the separate epilogue pass of the cublas+epilogue baseline), and
// --gate-ptx, the support kernel "gate" that holds the stream while a batch of timed launches is
// queued, so that the events time the GPU alone (without it, batches run ungated).
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"

	"github.com/spf13/pflag"

	"tilegen/internal/gpu"
	"tilegen/internal/version"
)

func main() {
	if err := run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "tilegen-worker: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := pflag.NewFlagSet("tilegen-worker", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	device := fs.Int("device", 0, "CUDA device `ordinal` to open")
	refPath := fs.String("reference-ptx", "", "PTX `file` holding the float64 reference kernel \"reference\" (the runner passes its catalog's)")
	epiPath := fs.String("epilogue-ptx", "", "PTX `file` holding the separate epilogue kernel \"tilegen_bias_act\" of the cublas+epilogue baseline (the runner passes its catalog's)")
	gatePath := fs.String("gate-ptx", "", "PTX `file` holding \"tilegen_gate\", which holds the stream while a batch of timed launches is queued (the runner passes its catalog's; without it batches run ungated)")
	showVersion := fs.Bool("version", false, "print the version, Go toolchain and git revision, and exit")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *showVersion {
		_, err := fmt.Fprintln(stdout, version.String("tilegen-worker", ""))
		return err
	}
	if fs.NArg() != 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	opt := gpu.Options{Ordinal: *device}
	// The support kernels' PTX, each optional.
	for _, sup := range []struct {
		path *string
		what string
		dst  *string
	}{{refPath, "reference", &opt.ReferencePTX}, {epiPath, "epilogue", &opt.EpiloguePTX}, {gatePath, "gate", &opt.GatePTX}} {
		if *sup.path == "" {
			continue
		}
		b, err := os.ReadFile(*sup.path)
		if err != nil {
			return fmt.Errorf("reading the %s PTX: %w", sup.what, err)
		}
		*sup.dst = string(b)
	}
	// CUDA contexts are current per OS thread: every CUDA call from here on must come from this
	// goroutine on this thread.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	w, err := gpu.Open(opt)
	err = gpu.Serve(w, err, stdin, stdout)
	var fatal *gpu.FatalError
	if w != nil && !errors.As(err, &fatal) {
		// After a fault the context cannot be torn down cleanly; exiting releases it.
		w.Close()
	}
	return err
}
