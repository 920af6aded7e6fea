//go:build !gpu

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// runnerBin and workerBin are this package built as a binary and the test-double worker beside it.
var runnerBin, workerBin string

const catalog = "../internal/orchestrator/testdata/catalog"

func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "runner")
	if err != nil {
		panic(err)
	}
	runnerBin = filepath.Join(dir, "runner")
	workerBin = filepath.Join(dir, "tilegen-worker")
	for _, b := range [][2]string{{runnerBin, "."}, {workerBin, "../internal/workerproc/testdata/fakeworker"}} {
		if out, err := exec.Command(goTool(), "build", "-o", b[0], b[1]).CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "build %s: %v\n%s", b[1], err, out)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func countLines(t *testing.T, path, substr string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	n := 0
	for _, l := range strings.Split(string(b), "\n") {
		if l != "" && strings.Contains(l, substr) {
			n++
		}
	}
	return n
}

// TestKill9Resume kills the runner mid-sweep with SIGKILL and reruns it: the rerun measures only
// what the cache lacks, and the results are complete with each measurement once.
func TestKill9Resume(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "requests.log")
	cache := filepath.Join(dir, "cache.jsonl")
	shapes := "64x64x64,65x64x64,66x64x64,67x64x64,68x64x64,69x64x64,70x64x64,71x64x64,72x64x64,73x64x64"
	args := []string{"tune", "--generated", catalog, "--shapes", shapes, "--variants", "slow_sleepy",
		"--cache", cache, "--out", filepath.Join(dir, "out"), "--progress", "plain", "--rank-rounds", "0"}
	cmd := exec.Command(runnerBin, args...) // the worker is found beside the runner
	cmd.Env = append(os.Environ(), "FAKEWORKER_LOG="+log)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for countLines(t, cache, `"kind":"tune"`) < 3 {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("no progress before the deadline")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	cachedTune := countLines(t, cache, `"kind":"tune"`)
	if cachedTune >= 10 {
		t.Fatalf("the run finished (%d records) before it was killed", cachedTune)
	}
	time.Sleep(300 * time.Millisecond) // let the orphaned worker see EOF and log its last request
	before := countLines(t, log, "run slow_sleepy")

	rerun := exec.Command(runnerBin, args...)
	rerun.Env = append(os.Environ(), "FAKEWORKER_LOG="+log)
	if out, err := rerun.CombinedOutput(); err != nil {
		t.Fatalf("rerun: %v\n%s", err, out)
	}
	after := countLines(t, log, "run slow_sleepy")
	if got, want := after-before, 10-cachedTune; got != want {
		t.Errorf("rerun made %d measurements, want %d (%d were cached)", got, want, cachedTune)
	}
	if lost := before - cachedTune; lost > 1 {
		t.Errorf("the kill lost %d measurements, want at most the one in flight", lost)
	}
	keys := map[string]int{}
	f, _ := os.Open(cache)
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var r struct{ Key, Kind string }
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("cache line: %v", err)
		}
		keys[r.Key]++
	}
	for k, n := range keys {
		if n != 1 {
			t.Errorf("key %s cached %d times", k, n)
		}
	}
	res, _ := os.ReadFile(filepath.Join(dir, "out", "results.csv"))
	if n := strings.Count(string(res), ",slow_sleepy,sleepy,US=900 SLOWMS=150,ok,"); n != 10 {
		t.Errorf("results.csv has %d ok slow_sleepy rows, want 10:\n%s", n, res)
	}
}

// TestNoGPUOneLine: without a GPU every GPU command exits 1 with one line on stderr.
func TestNoGPUOneLine(t *testing.T) {
	for _, args := range [][]string{
		{"tune", "--generated", catalog, "--cache", filepath.Join(t.TempDir(), "c.jsonl"), "--out", t.TempDir()},
		{"verify", "--generated", catalog, "--cache", filepath.Join(t.TempDir(), "c.jsonl"), "--out", t.TempDir()},
		{"devices"},
	} {
		cmd := exec.Command(runnerBin, args...)
		cmd.Env = append(os.Environ(), "FAKEWORKER_NOGPU=1")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
			t.Errorf("%s: exit %v, want 1", args[0], err)
		}
		want := "runner: no usable GPU 0: cuInit: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected\n"
		if stderr.String() != want || stdout.Len() != 0 {
			t.Errorf("%s: stderr %q stdout %q, want %q", args[0], stderr.String(), stdout.String(), want)
		}
	}
}

func TestMissingWorker(t *testing.T) {
	err := run([]string{"devices", "--worker", filepath.Join(t.TempDir(), "none")}, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || strings.Contains(err.Error(), "\n") {
		t.Fatalf("got %v", err)
	}
}

func TestList(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"list", "--generated", catalog, "--family", "aligned"}, &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "1 variants, nvcc release 11.8") ||
		!strings.Contains(lines[2], "aligned_64  aligned  US=600  16x16  64x64  1       0         M%64 N%64 K%8 ld%4  40    8192  0") {
		t.Errorf("list:\n%s", out.String())
	}
}

func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "missing command"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"tune", "--generated", catalog, "--worker", workerBin, "--shard", "3/3"}, `--shard "3/3"`},
		{[]string{"tune", "--generated", catalog, "--worker", workerBin, "--shapes", "12x12"}, "want MxNxK"},
		{[]string{"tune", "--generated", catalog, "--worker", workerBin, "--devices", "x"}, "--devices"},
		{[]string{"tune", "--generated", catalog, "--worker", workerBin, "--progress", "loud"}, "--progress"},
		{[]string{"merge", "a"}, "--out"},
		{[]string{"list", "--generated", filepath.Join(os.TempDir(), "no-such-dir")}, "read catalog"},
	} {
		err := run(tc.args, &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want %q", tc.args, err, tc.want)
		}
	}
	if err := run([]string{"tune", "--help"}, &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
		t.Errorf("--help: %v", err)
	}
}

// TestTuneAndMerge drives the commands end to end through run: two shards merged equal one run.
func TestTuneAndMerge(t *testing.T) {
	dir := t.TempDir()
	base := []string{"tune", "--generated", catalog, "--worker", workerBin, "--shapes", "256x256x256,1041x1247x139",
		"--variants", "fast_*,mid,aligned_64", "--progress", "none", "--rank-rounds", "0", "--cache", filepath.Join(dir, "cache.jsonl")}
	var stdout bytes.Buffer
	if err := run(append(base, "--out", filepath.Join(dir, "all")), &stdout, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), "shape 1041x1247x139") {
		t.Errorf("no ranked table:\n%s", stdout.String())
	}
	for i := 0; i < 2; i++ {
		args := append(base, "--out", filepath.Join(dir, fmt.Sprint("s", i)), "--shard", fmt.Sprintf("%d/2", i),
			"--cache", filepath.Join(dir, fmt.Sprint("c", i)))
		if err := run(args, &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := run([]string{"merge", filepath.Join(dir, "s0"), filepath.Join(dir, "s1"), "--out", filepath.Join(dir, "m")},
		&bytes.Buffer{}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(filepath.Join(dir, "all", "bench.txt"))
	b, _ := os.ReadFile(filepath.Join(dir, "m", "bench.txt"))
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Errorf("bench.txt differs:\n%s\n---\n%s", a, b)
	}
	if !bytes.Contains(a, []byte("BenchmarkSgemm/shape=1041x1247x139/variant=cublas-1")) || !bytes.HasPrefix(a, []byte("goos: ")) {
		t.Errorf("bench.txt:\n%s", a)
	}
}
