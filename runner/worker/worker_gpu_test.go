//go:build gpu

package main

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"tilegen/internal/protocol"
	"tilegen/internal/workerproc"
)

// This test binary links gorgonia.org/cu like the worker, so it only runs on a GPU host. It doubles
// as the worker: with TILEGEN_TEST_AS_WORKER=1 it serves the protocol instead of running tests,
// so the orchestrator's process handling (own pipes, process group, parent-death signal) is
// checked against the real worker without building a second binary there.
//
//	go test -c -tags gpu -o bin/worker.test ./runner/worker   # here
//	bin/worker.test -test.v                                   # on the GPU host
func TestMain(m *testing.M) {
	if os.Getenv("TILEGEN_TEST_AS_WORKER") == "1" {
		if err := run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr); err != nil {
			fmt.Fprintf(os.Stderr, "tilegen-worker: %v\n", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestWorkerProcess(t *testing.T) {
	t.Setenv("TILEGEN_TEST_AS_WORKER", "1")
	w, err := workerproc.StartWorker(os.Args[0], nil, 0, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if d := w.Device(); d.Name == "" || d.SMs == 0 || d.DriverVersion == 0 {
		t.Fatalf("hello without a device: %+v", d)
	}
	// A request far larger than a pipe's buffer: written under the request's deadline while the
	// worker reads it. Comment-only PTX does not load; the worker counts it as failed.
	big := strings.Repeat("// padding padding padding padding padding padding padding\n", 1<<14)
	resp, err := w.Call(protocol.Request{Op: protocol.OpPreload, Preload: []string{big}}, time.Minute)
	if err != nil || resp.Preload == nil || resp.Preload.Loaded+resp.Preload.Failed != 1 {
		t.Fatalf("preload of %d bytes: %+v %v", len(big), resp.Preload, err)
	}
	start := time.Now()
	w.Close()
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("quit took %s", d)
	}
	if _, err := w.Call(protocol.Request{Op: protocol.OpHello}, time.Minute); err == nil {
		t.Error("a call after Close succeeded")
	}
}
