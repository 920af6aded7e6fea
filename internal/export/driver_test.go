package export

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"tilegen/internal/variant"
)

// consumerMain is a program that imports the exported package (as example.com/consumer/tgsgemm):
// it prints Choose for every probe, then loads the kernels; when that fails it prints the error and
// exits 0, otherwise it runs every class through Sgemm with recognizable arguments, one refused
// problem, and Unload. With TG_ALLOCS set it prints instead how many allocations a dispatch of
// every probe Choose accepts makes (testing.AllocsPerRun).
func consumerMain() string {
	var b strings.Builder
	b.WriteString(`package main

import (
	"errors"
	"fmt"
	"os"
	"testing"

	"example.com/consumer/tgsgemm"
)

var probes = [][6]int{
`)
	for _, q := range probes {
		fmt.Fprintf(&b, "\t{%d, %d, %d, %d, %d, %d},\n", q[0], q[1], q[2], q[3], q[4], q[5])
	}
	b.WriteString(`}

func main() {
	if os.Getenv("TG_ALLOCS") != "" {
		var ok [][6]int
		for _, q := range probes {
			if _, err := tgsgemm.Choose(q[0], q[1], q[2], q[3], q[4], q[5]); err == nil {
				ok = append(ok, q)
			}
		}
		fmt.Printf("allocations per dispatch of %d problems: %v\n", len(ok), testing.AllocsPerRun(10, func() {
			for _, q := range ok {
				tgsgemm.Choose(q[0], q[1], q[2], q[3], q[4], q[5])
			}
		}))
		return
	}
	for _, q := range probes {
		name := "-"
		if v, err := tgsgemm.Choose(q[0], q[1], q[2], q[3], q[4], q[5]); err == nil {
			name = v
		}
		fmt.Printf("%dx%dx%d %s\n", q[0], q[1], q[2], name)
	}
	ks, err := tgsgemm.Load()
	if err != nil {
		fmt.Printf("load error: %v (unavailable: %v)\n", err, errors.Is(err, tgsgemm.ErrUnavailable))
		return
	}
	for _, c := range tgsgemm.Classes() {
		fmt.Println("sgemm", ks.Sgemm(c.M, c.N, c.K, 1.5, 256, c.K, 512, c.N, 0, 1024, c.N, 0x77))
	}
	for _, s := range [][3]int{
`)
	for _, s := range launchShapes {
		fmt.Fprintf(&b, "\t\t{%d, %d, %d},\n", s[0], s[1], s[2])
	}
	b.WriteString(`	} {
		fmt.Println("sgemm", ks.Sgemm(s[0], s[1], s[2], 1.5, 256, s[2], 512, s[1], 0, 1024, s[1], 0x77))
	}
	if c := tgsgemm.Classes(); len(c) > 0 {
		// The first class again on another stream, then twice on the legacy default stream.
		for _, s := range []uintptr{0x99, 0, 0} {
			fmt.Println("sgemm", ks.Sgemm(c[0].M, c[0].N, c[0].K, 1.5, 256, c[0].K, 512, c[0].N, 0, 1024, c[0].N, s))
		}
	}
	fmt.Println("lda < K refused:", ks.Sgemm(4, 4, 4, 1, 256, 3, 256, 4, 0, 256, 4, 0) != nil)
	fmt.Println("unload", ks.Unload())
}
`)
	return b.String()
}

// buildConsumer builds consumerMain against the export in out, with cgo and without (nocgo).
func buildConsumer(t *testing.T, out string) (cgo, nocgo string) {
	t.Helper()
	mod, gocmd := buildInModule(t, out)
	if err := os.MkdirAll(filepath.Join(mod, "consumer"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mod, "consumer", "main.go"), []byte(consumerMain()), 0o644); err != nil {
		t.Fatal(err)
	}
	cgo, nocgo = filepath.Join(mod, "consumer.bin"), filepath.Join(mod, "consumer-nocgo.bin")
	gocmd(mod, []string{"CGO_ENABLED=1"}, "build", "-o", cgo, "./consumer")
	gocmd(mod, []string{"CGO_ENABLED=0"}, "build", "-o", nocgo, "./consumer")
	return cgo, nocgo
}

// fakeCUDALib builds fakeCUDA as libcuda.so.1 in a folder of its own (for LD_LIBRARY_PATH) and
// returns the folder.
func fakeCUDALib(t *testing.T) string {
	t.Helper()
	gcc := needTool(t, "gcc")
	lib := t.TempDir()
	if err := os.WriteFile(filepath.Join(lib, "fake.c"), []byte(fakeCUDA), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := exec.Command(gcc, "-shared", "-fPIC", "-Wall", "-Werror", "-o", filepath.Join(lib, "libcuda.so.1"),
		filepath.Join(lib, "fake.c")).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, b)
	}
	return lib
}

// buildMain writes src as the consumer program of the module mod (goModule) and builds it with
// env, returning the binary.
func buildMain(t *testing.T, mod string, gocmd func(dir string, env []string, args ...string) string, src string, env ...string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(mod, "consumer"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mod, "consumer", "main.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(mod, "consumer.bin")
	gocmd(mod, env, "build", "-o", bin, "./consumer")
	return bin
}

func runConsumer(t *testing.T, bin string, env ...string) string {
	t.Helper()
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), env...)
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v (a program importing the export must start and exit normally)\n%s", bin, env, err, b)
	}
	return string(b)
}

// TestGoPackageBuilds builds the exported package in a module of its own that requires nothing
// (so an empty module cache and GOPROXY=off suffice), and runs a program importing it on this host,
// which has no GPU: it starts, its Choose agrees with Plan.Choose on every probe (an export with
// variants that have requirements, so that both of the rule's tables are exercised), and Load
// returns an error, both with cgo (the driver opened by dlopen, or missing) and without.
func TestGoPackageBuilds(t *testing.T) {
	out, p := requirementsFixture(t)
	cgo, nocgo := buildConsumer(t, out)
	choices := planChoices(p)
	for _, c := range []struct {
		bin, want string
	}{
		{cgo, "load error: tgsgemm: load: "},
		{nocgo, "load error: tgsgemm: load: CUDA driver unavailable: this build has no CUDA driver binding (it needs Linux and cgo) (unavailable: true)\n"},
	} {
		got := runConsumer(t, c.bin)
		if !strings.HasPrefix(got, choices) {
			t.Errorf("%s: dispatch\n%s\nwant (Plan.Choose)\n%s", filepath.Base(c.bin), got, choices)
			continue
		}
		rest := strings.TrimPrefix(got, choices)
		if !strings.HasPrefix(rest, c.want) || strings.Count(rest, "\n") != 1 {
			t.Errorf("%s: after the dispatch %q, want one line starting %q", filepath.Base(c.bin), rest, c.want)
		}
		t.Logf("%s: %s", filepath.Base(c.bin), strings.TrimSpace(rest))
	}
	// The dispatch allocates nothing on a problem it accepts (a variant's requirements included).
	got := runConsumer(t, cgo, "TG_ALLOCS=1")
	if !strings.HasPrefix(got, "allocations per dispatch of ") || !strings.HasSuffix(got, ": 0\n") {
		t.Errorf("dispatch allocates: %s", got)
	}
	t.Log(strings.TrimSpace(got))
}

// fakeCUDA is a libcuda.so.1 with the entry points the exported package uses, for running its
// driver path on a host without a GPU. FAKE_CUDA selects a failure: noinit (cuInit fails as
// without a device) or nocontext (no current context); otherwise every call succeeds and prints
// what it was given. A module handle is a copy of its PTX image; a function handle its name.
const fakeCUDA = `#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int mode(const char* m) { const char* e = getenv("FAKE_CUDA"); return e && strcmp(e, m) == 0; }

int cuInit(unsigned flags) { return mode("noinit") || flags ? 100 : 0; }

int cuCtxGetCurrent(void** ctx) { *ctx = mode("nocontext") ? NULL : (void*)0x1000; return 0; }

int cuCtxGetDevice(int* dev) { *dev = 0; return 0; }

// CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT (16): the H100's 132.
int cuDeviceGetAttribute(int* v, int attr, int dev) { *v = attr == 16 && dev == 0 ? 132 : -1; return attr == 16 ? 0 : 1; }

int cuModuleLoadData(void** mod, const void* image)
{
    if (!strstr((const char*)image, ".entry")) return 218;
    *mod = strdup((const char*)image);
    return 0;
}

int cuModuleGetFunction(void** fn, void* mod, const char* name)
{
    char entry[256];
    snprintf(entry, sizeof entry, ".entry %s(", name);
    if (!strstr((const char*)mod, entry)) return 500;
    *fn = strdup(name);
    return 0;
}

int cuFuncSetAttribute(void* fn, int attr, int value)
{
    printf("attr %s %d %d\n", (const char*)fn, attr, value);
    fflush(stdout);
    return 0;
}

int cuLaunchKernel(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned shared,
                   void* stream, void** p, void** extra)
{
    printf("launch %s grid %u,%u,%u block %u,%u,%u shared %u stream %llx extra %d M=%d N=%d K=%d alpha=%g A=%llx lda=%d "
           "B=%llx ldb=%d beta=%g C=%llx ldc=%d\n", (const char*)f, gx, gy, gz, bx, by, bz, shared,
           (unsigned long long)(uintptr_t)stream, extra != NULL, *(int*)p[0], *(int*)p[1], *(int*)p[2], *(float*)p[3],
           *(unsigned long long*)p[4], *(int*)p[5], *(unsigned long long*)p[6], *(int*)p[7], *(float*)p[8],
           *(unsigned long long*)p[9], *(int*)p[10]);
    fflush(stdout);
    return 0;
}

int cuModuleUnload(void* mod) { free(mod); return 0; }

// Events are numbered as created; CU_EVENT_DISABLE_TIMING is 2.
static int events = 0;

int cuEventCreate(void** ev, unsigned flags)
{
    *ev = (void*)(uintptr_t)(0x1000 + ++events);
    printf("event %d created flags %u\n", events, flags);
    fflush(stdout);
    return 0;
}

int cuEventRecord(void* ev, void* stream)
{
    printf("event %d recorded on stream %llx\n", (int)((uintptr_t)ev - 0x1000), (unsigned long long)(uintptr_t)stream);
    fflush(stdout);
    return 0;
}

int cuEventDestroy_v2(void* ev)
{
    printf("event %d destroyed\n", (int)((uintptr_t)ev - 0x1000));
    fflush(stdout);
    return 0;
}

int cuStreamWaitEvent(void* stream, void* ev, unsigned flags)
{
    printf("stream %llx waits for event %d flags %u\n", (unsigned long long)(uintptr_t)stream, (int)((uintptr_t)ev - 0x1000), flags);
    fflush(stdout);
    return 0;
}

int cuStreamIsCapturing(void* stream, int* status) { (void)stream; *status = 0; return 0; }

int cuStreamSynchronize(void* stream)
{
    printf("stream %llx synchronized\n", (unsigned long long)(uintptr_t)stream);
    fflush(stdout);
    return 0;
}

int cuGetErrorString(int r, const char** s)
{
    *s = r == 100 ? "no CUDA-capable device is detected" : "fake error";
    return 0;
}
`

// TestGoPackageDriver runs the exported package's driver binding against fakeCUDA (through
// LD_LIBRARY_PATH): the errors of a host without a device or context, and, where every call
// succeeds, that Load loads every kernel without state and a kernel with state is loaded on its
// first launch, each raising the dynamic shared memory limit exactly of those above 48 KiB, that the
// launches of kernels with state are ordered across streams (an event), and that Sgemm launches the kernel Plan.Choose picks with its grid, block,
// shared memory, stream and the eleven parameters in order, its grid z from the split rule with the
// device's SM count (132 here) where the variant has one.
func TestGoPackageDriver(t *testing.T) {
	lib := fakeCUDALib(t)
	for _, fx := range []struct {
		name   string
		export func(*testing.T) (string, *Plan)
	}{{"seed", exportFixture}, {"regtile", exportRegtile}, {"regimes", exportRegimes}} {
		t.Run(fx.name, func(t *testing.T) {
			out, p := fx.export(t)
			bin, _ := buildConsumer(t, out)
			choices := planChoices(p)
			env := func(mode string) []string { return []string{"LD_LIBRARY_PATH=" + lib, "FAKE_CUDA=" + mode} }
			for mode, want := range map[string]string{
				"noinit":    "load error: tgsgemm: load: CUDA driver unavailable: cuInit: no CUDA-capable device is detected (CUresult 100) (unavailable: true)\n",
				"nocontext": "load error: tgsgemm: load: no CUDA context is current on this thread (lock the OS thread and make one current first) (unavailable: false)\n",
			} {
				if got := runConsumer(t, bin, env(mode)...); got != choices+want {
					t.Errorf("FAKE_CUDA=%s:\n%s\nwant\n%s", mode, got, choices+want)
				}
			}

			var want strings.Builder
			want.WriteString(choices)
			// Load loads the kernels without state (raising the limit of those above 48 KiB); a
			// kernel that keeps state is loaded on its first launch.
			for _, c := range p.Variants {
				if c.V.DynamicShared > dynSharedDefault && !c.hasState() {
					fmt.Fprintf(&want, "attr %s 8 %d\n", c.V.Name, c.V.DynamicShared)
				}
			}
			lazy := map[int]bool{}
			shapes := launchShapes
			for i := len(p.Classes) - 1; i >= 0; i-- {
				s := p.Classes[i].Shape
				shapes = append([][3]int{{s.M, s.N, s.K}}, shapes...)
			}
			// Kernels that keep state: the first launch makes the event, each records it on its
			// stream, and one on another stream than the last, or on the default stream, waits first.
			event, last := false, -1
			streams := make([]int, len(shapes))
			for i := range streams {
				streams[i] = 0x77
			}
			if len(p.Classes) > 0 {
				s := p.Classes[0].Shape
				shapes = append(shapes, [3]int{s.M, s.N, s.K}, [3]int{s.M, s.N, s.K}, [3]int{s.M, s.N, s.K})
				streams = append(streams, 0x99, 0, 0)
			}
			for si, s := range shapes {
				m, n, k := s[0], s[1], s[2]
				i, err := p.Choose(variant.OpNN, m, n, k, k, n, n)
				if err != nil {
					t.Fatal(err)
				}
				v := p.Variants[i].V
				st := streams[si]
				state := p.Variants[i].hasState()
				if state && !lazy[i] && v.DynamicShared > dynSharedDefault {
					fmt.Fprintf(&want, "attr %s 8 %d\n", v.Name, v.DynamicShared)
				}
				lazy[i] = lazy[i] || state
				switch {
				case state && !event:
					want.WriteString("event 1 created flags 2\n")
					event = true
				case state && (last != st || st == 0):
					fmt.Fprintf(&want, "stream %x waits for event 1 flags 0\n", st)
				}
				gx, gy, gz := v.Grid(m, n, k, 132)
				fmt.Fprintf(&want, "launch %s grid %d,%d,%d block %d,%d,1 shared %d stream %x extra 0 M=%d N=%d K=%d alpha=1.5 "+
					"A=100 lda=%d B=200 ldb=%d beta=0 C=400 ldc=%d\n", v.Name, gx, gy, gz, v.Block.X, v.Block.Y,
					v.DynamicShared, st, m, n, k, k, n, n)
				if state {
					fmt.Fprintf(&want, "event 1 recorded on stream %x\n", st)
					last = st
				}
				want.WriteString("sgemm <nil>\n")
			}
			want.WriteString("lda < K refused: true\n")
			if event {
				want.WriteString("event 1 destroyed\n")
			}
			want.WriteString("unload <nil>\n")
			if got := runConsumer(t, bin, env("ok")...); got != want.String() {
				t.Errorf("FAKE_CUDA=ok:\n%s\nwant\n%s", got, want.String())
			}
		})
	}
}
