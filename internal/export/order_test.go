package export

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"tilegen/internal/variant"
)

// TestHeaderOrdersStateLaunches runs the .cuh launcher of the regimes fixture (every class on a
// split kernel that keeps state) with the runtime calls recorded: the first launch on a device makes
// its event, every launch records it on its stream, a launch waits for it only when the previous one
// went to another stream or the stream is a default stream (0 is a different stream on every thread
// under --default-stream per-thread), a failed wait makes the event again, a stream being captured is
// not ordered, a device ordinal above 63 runs the launch to completion, and each device has its own
// event. The seed fixture, without such kernels, has no pool and makes none of these calls.
func TestHeaderOrdersStateLaunches(t *testing.T) {
	nvcc := needTool(t, "nvcc")
	run := func(out, body string) string {
		t.Helper()
		src := probeShim + "#include \"tg.cuh\"\n\n" + probeName +
			"static void call(int M, int N, int K, long long s)\n{\n" +
			"    printf(\"call %dx%dx%d stream %lld\\n\", M, N, K, s);\n" +
			"    cudaError_t e = tg_sgemm(M, N, K, 1.0f, (const float*)256, K, (const float*)256, N, 0.0f, (float*)256, N, (cudaStream_t)s);\n" +
			"    if (e != cudaSuccess) printf(\"  error %d\\n\", (int)e);\n}\n\n" +
			"int main()\n{\n    probe_order_log = 1;\n" + body + "    return 0;\n}\n"
		return runProbe(t, nvcc, out, src)
	}
	// launchLine drops the probe's launch line to its kernel name.
	launchLine := regexp.MustCompile(`(?m)^  dev(\d+) \S+ (\S+) grid .*$`)

	out, p := exportRegimes(t)
	c := p.Classes[0].Shape
	v := p.Variants[p.Classes[0].Variant]
	if !v.hasState() {
		t.Fatalf("fixture class %v goes to %s, which keeps no state", c, v.V.Name)
	}
	cuh := string(mustRead(t, filepath.Join(out, "tg.cuh")))
	for _, mm := range ptxStateRE.FindAllStringSubmatch(v.src.ptx, -1) {
		typ := "unsigned"
		if strings.Contains(mm[1], "_ws_") {
			typ = "float4"
		}
		for _, want := range []string{"\n__device__ " + typ + " tg_state_" + typ + "[", "\n#define " + mm[1] + " tg_state_" + typ + "\n",
			"\n#undef " + mm[1] + "\n"} {
			if !strings.Contains(cuh, want) {
				t.Errorf("tg.cuh lacks %q", want)
			}
		}
	}
	if !strings.Contains(cuh, "Concurrency:") || !strings.Contains(cuh, "MiB of device memory") {
		t.Error("tg.cuh lacks its concurrency paragraph")
	}
	call := func(s int) string { return fmt.Sprintf("    call(%d, %d, %d, %d);\n", c.M, c.N, c.K, s) }
	var body strings.Builder
	body.WriteString(call(7) + call(7) + call(9) + call(0) + call(0))
	body.WriteString("    probe_wait_fail = 1;\n" + call(7))
	body.WriteString("    probe_capturing = 1;\n" + call(9) + "    probe_capturing = 0;\n")
	body.WriteString("    probe_device = 1;\n" + call(9) + call(9))
	body.WriteString("    probe_device = 70;\n" + call(5))
	got := launchLine.ReplaceAllString(run(out, body.String()), "  launch $2 on device $1")
	l := "  launch " + v.V.Name + " on device "
	head := func(s int) string { return fmt.Sprintf("call %dx%dx%d stream %d\n", c.M, c.N, c.K, s) }
	want := head(7) + "  event 1 created (flags 2)\n" + l + "0\n  event 1 recorded on stream 7\n" +
		head(7) + l + "0\n  event 1 recorded on stream 7\n" +
		head(9) + "  stream 9 waits for event 1 (flags 0)\n" + l + "0\n  event 1 recorded on stream 9\n" +
		head(0) + "  stream 0 waits for event 1 (flags 0)\n" + l + "0\n  event 1 recorded on stream 0\n" +
		head(0) + "  stream 0 waits for event 1 (flags 0)\n" + l + "0\n  event 1 recorded on stream 0\n" +
		head(7) + "  wait fails\n  event 2 created (flags 2)\n" + l + "0\n  event 2 recorded on stream 7\n" +
		head(9) + l + "0\n" +
		head(9) + "  event 3 created (flags 2)\n" + l + "1\n  event 3 recorded on stream 9\n" +
		head(9) + l + "1\n  event 3 recorded on stream 9\n" +
		head(5) + "  device synchronized\n" + l + "70\n  stream 5 synchronized\n"
	if got != want {
		t.Errorf("ordering:\n%s\nwant:\n%s", got, want)
	}

	seed, sp := exportFixture(t)
	if s := string(mustRead(t, filepath.Join(seed, "tg.cuh"))); strings.Contains(s, "_state_") || strings.Contains(s, "Concurrency:") {
		t.Error("an export without kernels that keep state has a state pool or a concurrency paragraph")
	}
	sc := sp.Classes[0].Shape
	if got := run(seed, fmt.Sprintf("    call(%d, %d, %d, 7);\n    call(%d, %d, %d, 9);\n", sc.M, sc.N, sc.K, sc.M, sc.N, sc.K)); strings.Contains(got, "event") ||
		strings.Contains(got, "wait") || strings.Contains(got, "synchronized") {
		t.Errorf("a kernel without state is ordered:\n%s", got)
	}
}

// TestStatePoolsCatalog rewrites one kernel of each family that keeps state, from the generated
// catalog, onto one set of pools and compiles them in one translation unit: each declaration in the
// templates' form is found and replaced, the pools are as large as the largest kernel's state (from its
// PTX), and every kernel's static_assert holds. A kernel whose PTX keeps state its source does not
// declare in that form is refused.
func TestStatePoolsCatalog(t *testing.T) {
	root := "../../generated"
	b, err := os.ReadFile(filepath.Join(root, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m variant.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	p := &Plan{}
	var srcs []string
	for _, v := range m.Variants {
		pre := v.Name[:strings.IndexByte(v.Name, '_')]
		if seen[pre] {
			continue
		}
		cu, err := os.ReadFile(filepath.Join(root, "cuda", v.Name+".cu"))
		if err != nil {
			t.Fatal(err)
		}
		ptx, err := os.ReadFile(filepath.Join(root, "ptx", v.Name+".ptx"))
		if err != nil {
			t.Fatal(err)
		}
		c := Chosen{V: v, src: source{cu: string(cu), ptx: string(ptx)}}
		if !c.hasState() {
			continue
		}
		seen[pre] = true
		p.Variants = append(p.Variants, c)
		srcs = append(srcs, stripHeader(c.src.cu))
	}
	for _, f := range []string{"deepk", "gemvm", "gemvn", "gemvnd", "gemvng", "splitk", "splitka", "streamk", "streamka"} {
		if !seen[f] {
			t.Errorf("no kernel of %s keeps state in the catalog", f)
		}
	}
	out, undefs, pools, err := statePools(p, "tg", srcs)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{}
	for _, c := range p.Variants {
		for _, mm := range ptxStateRE.FindAllStringSubmatch(c.src.ptx, -1) {
			var n int64
			fmt.Sscan(mm[2], &n)
			typ := "unsigned"
			if strings.Contains(mm[1], "_ws_") {
				typ = "float4"
			}
			want[typ] = max(want[typ], n/poolElemBytes[typ])
		}
	}
	if len(pools) != 2 || pools[0].Type != "float4" || pools[0].Elems != want["float4"] || pools[1].Type != "unsigned" || pools[1].Elems != want["unsigned"] {
		t.Errorf("pools %+v, want float4 %d and unsigned %d elements", pools, want["float4"], want["unsigned"])
	}
	var tu strings.Builder
	tu.WriteString("#include <cuda_runtime.h>\n#include <stdint.h>\n#include <math.h>\n")
	for _, q := range pools {
		fmt.Fprintf(&tu, "__device__ %s %s[%d];\n", q.Type, q.Name, q.Elems)
	}
	for i, s := range out {
		if len(undefs[i]) != 2 || stateDeclRE.MatchString(s) {
			t.Errorf("%s: state names %v, declarations left: %v", p.Variants[i].V.Name, undefs[i], stateDeclRE.FindAllString(s, -1))
		}
		tu.WriteString(s + "\n")
		for _, u := range undefs[i] {
			tu.WriteString("#undef " + u + "\n")
		}
	}
	nvcc := needTool(t, "nvcc")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "pool.cu"), []byte(tu.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-arch=sm_90", "-c", "-o", filepath.Join(dir, "pool.o"), filepath.Join(dir, "pool.cu")}
	if _, err := exec.LookPath("g++-11"); err == nil {
		args = append(args, "-ccbin", "g++-11")
	}
	if b, err := exec.Command(nvcc, args...).CombinedOutput(); err != nil {
		t.Fatalf("nvcc: %v\n%s", err, b)
	}

	for i, c := range p.Variants {
		for _, q := range pools {
			if strings.Contains(out[i], " "+q.Name) && !strings.Contains(out[i], fmt.Sprintf("<= %dLL", q.Elems)) {
				t.Errorf("%s: its static_assert does not bound it by %s's %d elements", c.V.Name, q.Name, q.Elems)
			}
		}
	}

	// State the source does not declare in the templates' form is refused.
	bad := []string{strings.Replace(srcs[0], "__device__ float4 tg_", "__device__ __align__(16) float4 tg_", 1)}
	if _, _, _, err := statePools(&Plan{Variants: p.Variants[:1]}, "tg", bad); err == nil || !strings.Contains(err.Error(), "does not declare") {
		t.Errorf("an undeclared state array: %v", err)
	}
}
