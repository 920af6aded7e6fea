//go:build linux

package orchestrator

import (
	"bytes"
	"strings"
	"testing"
)

// Without a GPU (the fake worker exits before its hello the way gorgonia.org/cu's init does),
// runner devices and runner tune report it through the same start as internal/workerproc's
// TestWorkerNoCUDADevice: that there is no CUDA device, on one line.
func TestNoCUDADeviceThroughCommands(t *testing.T) {
	t.Setenv("FAKEWORKER_CUINIT", "1")
	wantPrefix := "no CUDA device found (driver: cuInit failed with NoDevice, no CUDA-capable device is visible; "
	if err := Devices(fakeWorker, nil, DefaultWatchdog(), &bytes.Buffer{}); err == nil || !strings.HasPrefix(err.Error(), wantPrefix) {
		t.Errorf("devices: %v", err)
	}
	cfg, _, _ := testConfig(t, t.TempDir(), "fast_a")
	if err := Tune(cfg); err == nil || !strings.HasPrefix(err.Error(), wantPrefix) || strings.Contains(err.Error(), "\n") {
		t.Errorf("tune: %v", err)
	}
}
