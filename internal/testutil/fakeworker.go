// Package testutil holds test doubles that the tests of several packages share. Only tests import it.
package testutil

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
)

// GoTool is the go command that runs the tests: on PATH, else the one of this Go root.
func GoTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}

// FakeWorkerSource is the directory of the test-double worker (internal/workerproc/testdata/fakeworker).
func FakeWorkerSource() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "workerproc", "testdata", "fakeworker")
}

// BuildFakeWorker builds the test-double worker into a fresh temporary directory as tilegen-worker
// and returns its path and a function that removes the directory.
func BuildFakeWorker() (string, func(), error) {
	dir, err := os.MkdirTemp("", "fakeworker")
	if err != nil {
		return "", nil, err
	}
	cleanup := func() { os.RemoveAll(dir) }
	bin := filepath.Join(dir, "tilegen-worker")
	if out, err := exec.Command(GoTool(), "build", "-o", bin, FakeWorkerSource()).CombinedOutput(); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("build fake worker: %v\n%s", err, out)
	}
	return bin, cleanup, nil
}

// MainWithFakeWorker builds the fake worker into *path, runs the package's tests and exits: the
// body of a TestMain.
func MainWithFakeWorker(run func() int, path *string) {
	bin, cleanup, err := BuildFakeWorker()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	*path = bin
	code := run()
	cleanup()
	os.Exit(code)
}
