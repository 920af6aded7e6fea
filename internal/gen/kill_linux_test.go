package gen

import (
	"bytes"
	"errors"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fsizeEnv sets RLIMIT_FSIZE (bytes) in a gen child: a write past it fails with EFBIG.
const fsizeEnv = "TILEGEN_GEN_TEST_FSIZE"

func init() {
	beforeMain = append(beforeMain, func() {
		n, err := strconv.ParseUint(os.Getenv(fsizeEnv), 10, 64)
		if err != nil {
			return
		}
		signal.Ignore(syscall.SIGXFSZ) // fail the write instead of killing the process
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: n, Max: n}); err != nil {
			panic(err)
		}
	})
}

// TestKilledRunLeavesOutUnchanged kills gen while nvcc runs (each fake nvcc has a child of its
// own, as the real one has cicc): with SIGINT and SIGTERM gen kills the compilers and removes its
// transaction; with SIGKILL the kernel's parent-death signal does it. In every case no compiler
// process survives and --out is exactly what it was; the next run removes what SIGKILL left.
func TestKilledRunLeavesOutUnchanged(t *testing.T) {
	nvcc := fakeNVCC(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			mustGen(t, genArgs(goodVariant(t, "8"), out, nvcc)...)
			writeFile(t, filepath.Join(out, "doc.go"), "package generated\n")
			before := snapshot(t, out)

			hang := t.TempDir()
			cmd := genCommand(t, genArgs("testdata/good.yaml", out, nvcc, "--jobs", "2")...)
			cmd.Env = append(cmd.Env, "FAKE_NVCC_HANG="+hang)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			pids := waitPIDs(t, filepath.Join(hang, "pids"), 4) // two nvcc, two children
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			err := cmd.Wait()
			if sig != syscall.SIGKILL && (err == nil || !strings.Contains(stderr.String(), "interrupted")) {
				t.Errorf("gen after %v: %v, stderr %q; want a failure saying it was interrupted", sig, err, stderr.String())
			}
			for _, pid := range pids {
				if !gone(pid, 10*time.Second) {
					t.Errorf("compiler process %d outlived gen", pid)
					syscall.Kill(pid, syscall.SIGKILL)
				}
			}
			sameTree(t, "--out after "+sig.String(), snapshot(t, out), before)
			l := leftovers(t, out)
			if sig != syscall.SIGKILL && len(l) != 0 {
				t.Errorf("transaction directories left after %v: %v", sig, l)
			}
			mustGen(t, genArgs("testdata/good.yaml", out, nvcc)...)
			if l := leftovers(t, out); len(l) != 0 {
				t.Errorf("the next run left %v", l)
			}
			if _, err := os.Stat(filepath.Join(out, "ptx", "tiny_16_u4.ptx")); err != nil {
				t.Errorf("the next run did not complete: %v", err)
			}
		})
	}
}

// TestWriteFailureLeavesOutUnchanged: a write that fails part-way through (the file size limit,
// as a full disk would) leaves --out as it was and no transaction behind.
func TestWriteFailureLeavesOutUnchanged(t *testing.T) {
	nvcc := fakeNVCC(t)
	out := filepath.Join(t.TempDir(), "out")
	mustGen(t, genArgs(goodVariant(t, "8"), out, nvcc)...)
	before := snapshot(t, out)
	// Sources and PTX are under the limit, manifest.json (written after cuda/) is over it.
	limit := 0
	for k, b := range before {
		if k != "manifest.json" && k != "registry.go" {
			limit = max(limit, len(b)+1)
		}
	}
	limit *= 2 // the new run's sources are a little longer
	if len(before["manifest.json"]) <= limit {
		t.Fatalf("manifest.json (%d bytes) is not larger than the other files (%d)", len(before["manifest.json"]), limit)
	}
	code, _, stderr := runGen(t, []string{fsizeEnv + "=" + strconv.Itoa(limit)}, genArgs("testdata/good.yaml", out, nvcc)...)
	if code != 1 || !strings.Contains(stderr, "staging manifest.json") || !strings.Contains(stderr, "file too large") {
		t.Fatalf("exit %d, stderr %q; want a failure writing manifest.json", code, stderr)
	}
	sameTree(t, "--out after a failed write", snapshot(t, out), before)
	if l := leftovers(t, out); len(l) != 0 {
		t.Errorf("transaction directories left: %v", l)
	}
}

// waitPIDs waits until file lists n pids (two per line) and returns them.
func waitPIDs(t *testing.T, file string, n int) []int {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		b, _ := os.ReadFile(file)
		var pids []int
		for _, f := range strings.Fields(string(b)) {
			if p, err := strconv.Atoi(f); err == nil {
				pids = append(pids, p)
			}
		}
		if len(pids) >= n {
			return pids
		}
		if time.Now().After(deadline) {
			t.Fatalf("the fake nvcc did not start %d processes in time (pids: %v)", n, pids)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// gone waits up to d for pid to exit; a zombie (exited, not yet reaped by init) counts as gone.
func gone(pid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		err := syscall.Kill(pid, 0)
		if errors.Is(err, syscall.ESRCH) {
			return true
		}
		if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
			if i := bytes.LastIndexByte(b, ')'); i > 0 && i+2 < len(b) && b[i+2] == 'Z' {
				return true
			}
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}
