package workerproc

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// fakeWorker is the test-double worker binary (testdata/fakeworker), built once for the package's
// tests.
var fakeWorker string

func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "fakeworker")
	if err != nil {
		panic(err)
	}
	fakeWorker = filepath.Join(dir, "tilegen-worker")
	out, err := exec.Command(goTool(), "build", "-o", fakeWorker, "./testdata/fakeworker").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build fake worker: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
