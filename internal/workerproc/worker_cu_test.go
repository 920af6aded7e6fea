//go:build linux

package workerproc

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"tilegen/internal/testutil"
)

// TestRealWorkerWithoutGPU builds the real worker (cgo, gorgonia.org/cu) and starts it on a host
// without a GPU: cu's init exits before the hello, and the runner must say that there is no CUDA
// device rather than that the worker wrote garbage. It needs the CUDA headers to build and takes
// half a minute cold, so -short skips it; where a GPU answers there is nothing to show.
func TestRealWorkerWithoutGPU(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the real worker (-short)")
	}
	headers := false
	for _, d := range []string{"/usr/include", "/usr/local/cuda/include"} {
		if _, err := os.Stat(filepath.Join(d, "cuda.h")); err == nil {
			headers = true
		}
	}
	if !headers {
		t.Skip("no cuda.h: the real worker cannot be built here")
	}
	bin := filepath.Join(t.TempDir(), WorkerName)
	cmd := exec.Command(testutil.GoTool(), "build", "-tags", "gpu", "-o", bin, "../../runner/worker")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the worker: %v\n%s", err, out)
	}
	w, err := StartWorker(bin, nil, 0, 30*time.Second)
	if err == nil {
		w.Close()
		t.Skip("this host has a GPU: the worker said hello")
	}
	const want = "no CUDA device found (driver: "
	if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), bin+" for device 0 exited before its hello (exit status 1)") {
		t.Fatalf("got %v, want %s…", err, want)
	}
}
