package resultsdir

import (
	"bufio"
	"bytes"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"tilegen/internal/protocol"
	"tilegen/internal/results"
)

// benchLine is one parsed result line of Go benchmark format (golang.org/x/perf/benchfmt):
// name, iteration count, then value–unit pairs.
type benchLine struct {
	name  string
	iters int
	units map[string]float64
}

var (
	benchConfig = regexp.MustCompile(`^[^\sA-Z][^\s:]*: .*$`) // "key: value", key not capitalised
	benchName   = regexp.MustCompile(`^BenchmarkSgemm/shape=\d+x\d+x\d+/variant=[A-Za-z0-9_]+-1$`)
)

// parseBench reads bench.txt the way benchfmt does and fails the test on any other line.
func parseBench(t *testing.T, b []byte) (map[string]string, []benchLine) {
	t.Helper()
	config := map[string]string{}
	var out []benchLine
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "Benchmark"):
			f := strings.Fields(line)
			if len(f) < 4 || len(f)%2 != 0 || !benchName.MatchString(f[0]) {
				t.Fatalf("bench.txt:%d: not a benchmark line: %q", n, line)
			}
			iters, err := strconv.Atoi(f[1])
			if err != nil || iters < 1 {
				t.Fatalf("bench.txt:%d: iterations %q", n, f[1])
			}
			bl := benchLine{name: f[0], iters: iters, units: map[string]float64{}}
			for i := 2; i < len(f); i += 2 {
				v, err := strconv.ParseFloat(f[i], 64)
				if err != nil {
					t.Fatalf("bench.txt:%d: value %q", n, f[i])
				}
				bl.units[f[i+1]] = v
			}
			out = append(out, bl)
		case benchConfig.MatchString(line):
			k, v, _ := strings.Cut(line, ": ")
			config[k] = v
		case strings.TrimSpace(line) == "":
		default:
			t.Fatalf("bench.txt:%d: neither configuration nor benchmark: %q", n, line)
		}
	}
	return config, out
}

// TestBenchTxtOneLinePerRun: benchstat needs several values per benchmark for a confidence
// interval; bench.txt gives each record min(samples, BenchRuns) lines whose iteration counts add
// up to the samples and whose means are the runs' means, and a record without samples its median.
func TestBenchTxtOneLinePerRun(t *testing.T) {
	sh := protocol.Shape{M: 256, N: 256, K: 256}
	many := make([]float64, 25)
	for i := range many {
		many[i] = 1 + float64(i)/100
	}
	recs := []results.Record{
		{Kind: results.KindCublas, Variant: results.CublasName, Shape: sh, Status: results.StatusOK, Timing: &protocol.TimingResult{Reps: 25, MedianMS: 1.12, Samples: many}},
		{Kind: results.KindTune, Variant: "few", Shape: sh, Status: results.StatusOK, Timing: &protocol.TimingResult{Reps: 4, MedianMS: 0.5, Samples: []float64{0.5, 0.4, 0.6, 0.5}}},
		{Kind: results.KindTune, Variant: "old", Shape: sh, Status: results.StatusOK, Timing: &protocol.TimingResult{Reps: 40, MedianMS: 0.25}},
		{Kind: results.KindTune, Variant: "broken", Shape: sh, Status: results.StatusFailed},
		{Kind: results.KindVerify, Variant: "verified", Shape: sh, Status: results.StatusOK, Timing: &protocol.TimingResult{Reps: 1, MedianMS: 1}},
	}
	info := results.RunInfo{GOOS: "linux", GOARCH: "amd64", NVCC: "11.8", Arch: "sm_90", Devices: []protocol.Device{{Name: "Test GPU", DriverVersion: 13000}}}
	config, lines := parseBench(t, encodeBench(recs, info))
	for k, want := range map[string]string{"goos": "linux", "gpu": "Test GPU", "driver": "13000", "nvcc": "11.8", "arch": "sm_90"} {
		if config[k] != want {
			t.Errorf("config %s = %q, want %q", k, config[k], want)
		}
	}
	by := map[string][]benchLine{}
	for _, l := range lines {
		v := l.name[strings.Index(l.name, "variant=")+len("variant=") : len(l.name)-2]
		by[v] = append(by[v], l)
	}
	if len(by) != 3 || by["broken"] != nil || by["verified"] != nil {
		t.Errorf("benchmarks %v: want cublas, few and old only", by)
	}
	check := func(v string, samples []float64, runs int) {
		t.Helper()
		ls := by[v]
		if len(ls) != runs {
			t.Fatalf("%s: %d lines, want %d", v, len(ls), runs)
		}
		i := 0
		for _, l := range ls {
			sum := 0.0
			for _, x := range samples[i : i+l.iters] {
				sum += x
			}
			i += l.iters
			if want := sum / float64(l.iters) * 1e6; math.Abs(l.units["ns/op"]-want) > 0.5 {
				t.Errorf("%s: %g ns/op, want the run's mean %g", v, l.units["ns/op"], want)
			}
			if want := 2 * 256 * 256 * 256 / l.units["ns/op"]; math.Abs(l.units["GFLOP/s"]-want) > 0.05*want {
				t.Errorf("%s: %g GFLOP/s, want %g", v, l.units["GFLOP/s"], want)
			}
		}
		if i != len(samples) {
			t.Errorf("%s: lines cover %d samples, want %d", v, i, len(samples))
		}
	}
	check(results.CublasName, many, BenchRuns)
	check("few", []float64{0.5, 0.4, 0.6, 0.5}, 4)
	if ls := by["old"]; len(ls) != 1 || ls[0].iters != 40 || ls[0].units["ns/op"] != 250000 {
		t.Errorf("record without samples: %+v, want its median once with its 40 repetitions", ls)
	}
	if BenchRuns < 6 {
		t.Errorf("BenchRuns %d: benchstat needs 6 values for a 95 %% interval", BenchRuns)
	}
}
