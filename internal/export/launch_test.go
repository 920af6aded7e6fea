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

// regtileOptions export testdata/regtile: two register-tiled variants from the full H100 sweep, one
// of which needs 64 KiB of dynamic shared memory (more than a launch may use without raising the
// function's limit).
func regtileOptions(out string) Options {
	return Options{Results: []string{"testdata/regtile/results/tune", "testdata/regtile/results/verify"},
		Generated: "testdata/regtile/generated", Out: out, Name: "tg", GoPackage: "example.com/consumer/tgsgemm",
		AllowUnhashed: true}
}

func exportRegtile(t *testing.T) (string, *Plan) {
	t.Helper()
	return runPlan(t, regtileOptions(filepath.Join(t.TempDir(), "tgsgemm")))
}

// TestBigDynamicShared checks that an export whose kernel needs more than 48 KiB of dynamic shared
// memory raises the function's limit on the Go path (Load calls cuFuncSetAttribute through the
// package's driver binding right after looking the function up; TestGoPackageDriver runs it) and
// that the package builds. The .cuh path is checked by running its launcher in TestHeaderLaunches.
func TestBigDynamicShared(t *testing.T) {
	out, p := exportRegtile(t)
	big := ""
	for _, c := range p.Classes {
		if v := p.Variants[c.Variant].V; v.DynamicShared > dynSharedDefault {
			big = v.Name
		}
	}
	if big == "" {
		t.Fatal("no class of the regtile fixture goes to a variant with more than 48 KiB of dynamic shared memory")
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, c := range []struct{ file, want string }{
		{"driver.go", "return tg_drv.func_set_attribute((void*)fn, 8, bytes);"},
		{"sgemm.go", fmt.Sprintf("if err == nil && kernels[i].dynamicShared > %d {\n\t\terr = setMaxDynamicShared(ks.fns[i], kernels[i].dynamicShared)", dynSharedDefault)},
		{"sgemm.go", "kn.dynamicShared, stream, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)"},
		{"dispatch.go", "dynamicShared: 65536,"},
	} {
		if !strings.Contains(read(c.file), c.want) {
			t.Errorf("%s lacks %q", c.file, c.want)
		}
	}
	// Loading a kernel raises the limit right after looking the function up, before any launch can use it.
	sg := read("sgemm.go")
	if i, j := strings.Index(sg, "getFunction(ks.mods[i], name)"), strings.Index(sg, "setMaxDynamicShared(ks.fns[i]"); i < 0 || j < i {
		t.Error("sgemm.go: setMaxDynamicShared does not follow the function lookup in load")
	}
	buildInModule(t, out)

	seed, _ := exportFixture(t)
	if strings.Contains(string(mustRead(t, filepath.Join(seed, "tg.cuh"))), "cudaFuncSetAttribute") {
		t.Error("an export without big dynamic shared memory calls cudaFuncSetAttribute")
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// probeShim replaces the runtime calls the launcher makes on its launch path (after the
// real cuda_runtime.h is included, so only the header's calls are renamed): the launches are
// recorded instead of run, so the launcher is exercised on a machine without a GPU. (Not static:
// an export without big kernels never calls the first two.)
const probeShim = `#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int probe_device = 0, probe_fail_next = 0, probe_attr_calls = 0, probe_sm_calls = 0;
// probe_args: each launch also prints its operands and leading dimensions (A, lda, B, ldb, ldc).
static int probe_args = 0;
static const void* probe_attr_fn[64];
static int probe_attr_dev[64], probe_attr_value[64];

// probe_capture_mode is this thread's capture mode (cudaThreadExchangeStreamCaptureMode).
static cudaStreamCaptureMode probe_capture_mode = cudaStreamCaptureModeGlobal;

cudaError_t probe_exchange_mode(cudaStreamCaptureMode* m)
{
    cudaStreamCaptureMode old = probe_capture_mode;
    probe_capture_mode = *m;
    *m = old;
    return cudaSuccess;
}

cudaError_t probe_get_device(int* d) { *d = probe_device; return cudaSuccess; }

cudaError_t probe_set_attribute(const void* fn, cudaFuncAttribute attr, int value)
{
    if (probe_capture_mode != cudaStreamCaptureModeRelaxed) printf("  attribute set outside relaxed capture mode\n");
    if (attr != cudaFuncAttributeMaxDynamicSharedMemorySize || probe_attr_calls == 64) return cudaErrorInvalidValue;
    probe_attr_fn[probe_attr_calls] = fn;
    probe_attr_dev[probe_attr_calls] = probe_device;
    probe_attr_value[probe_attr_calls] = value;
    probe_attr_calls++;
    return cudaSuccess;
}

// probe_device_attribute answers the SM count: 132 on device 0, 114 on device 1 (H100 SXM, PCIe).
cudaError_t probe_device_attribute(int* v, cudaDeviceAttr attr, int dev)
{
    if (attr != cudaDevAttrMultiProcessorCount) return cudaErrorInvalidValue;
    probe_sm_calls++;
    *v = dev == 0 ? 132 : 114;
    return cudaSuccess;
}

static const char* probe_name(const void* fn);

// probe_launch prints what the real launch would get, with the limit last raised for fn on the
// current device (0: never).
static cudaError_t probe_launch(const void* fn, dim3 grid, dim3 block, void** args, size_t shared, cudaStream_t s)
{
    (void)s;
    int raised = 0;
    for (int i = 0; i < probe_attr_calls; i++)
        if (probe_attr_fn[i] == fn && probe_attr_dev[i] == probe_device) raised = probe_attr_value[i];
    if (probe_fail_next) {
        probe_fail_next = 0;
        printf("  failed launch\n");
        return cudaErrorInvalidValue;
    }
    printf("  dev%d %dx%dx%d %s grid %u,%u,%u block %u,%u,%u shared %zu raised %d attr_calls %d\n", probe_device,
           *(int*)args[0], *(int*)args[1], *(int*)args[2], probe_name(fn), grid.x, grid.y, grid.z, block.x, block.y, block.z,
           shared, raised, probe_attr_calls);
    if (probe_args)
        printf("  args A=%lx lda=%d B=%lx ldb=%d ldc=%d\n", (unsigned long)(uintptr_t)*(const float**)args[4], *(int*)args[5],
               (unsigned long)(uintptr_t)*(const float**)args[6], *(int*)args[7], *(int*)args[10]);
    return cudaSuccess;
}

// The ordering of kernels with state: stream handles print as numbers, events as their creation
// number; logged when probe_order_log is set.
static int probe_order_log = 0, probe_capturing = 0, probe_events = 0, probe_wait_fail = 0;

static int probe_stream(cudaStream_t s) { return (int)(uintptr_t)s; }

cudaError_t probe_is_capturing(cudaStream_t s, cudaStreamCaptureStatus* c)
{
    (void)s;
    *c = probe_capturing ? cudaStreamCaptureStatusActive : cudaStreamCaptureStatusNone;
    return cudaSuccess;
}

cudaError_t probe_event_create(cudaEvent_t* e, unsigned flags)
{
    probe_events++;
    *e = (cudaEvent_t)(uintptr_t)(0x1000 + probe_events);
    if (probe_order_log) printf("  event %d created (flags %u)\n", probe_events, flags);
    return cudaSuccess;
}

cudaError_t probe_wait_event(cudaStream_t s, cudaEvent_t e, unsigned flags)
{
    if (probe_wait_fail) {
        probe_wait_fail = 0;
        if (probe_order_log) printf("  wait fails\n");
        return cudaErrorInvalidResourceHandle;
    }
    if (probe_order_log) printf("  stream %d waits for event %d (flags %u)\n", probe_stream(s), (int)((uintptr_t)e - 0x1000), flags);
    return cudaSuccess;
}

cudaError_t probe_event_record(cudaEvent_t e, cudaStream_t s)
{
    if (probe_order_log) printf("  event %d recorded on stream %d\n", (int)((uintptr_t)e - 0x1000), probe_stream(s));
    return cudaSuccess;
}

cudaError_t probe_stream_sync(cudaStream_t s)
{
    if (probe_order_log) printf("  stream %d synchronized\n", probe_stream(s));
    return cudaSuccess;
}

cudaError_t probe_device_sync()
{
    if (probe_order_log) printf("  device synchronized\n");
    return cudaSuccess;
}

// probe_func_attributes answers cudaFuncGetAttributes (NAME_preload), naming the function.
cudaError_t probe_func_attributes(cudaFuncAttributes* a, const void* fn)
{
    if (probe_capture_mode != cudaStreamCaptureModeRelaxed) printf("  attributes read outside relaxed capture mode\n");
    memset(a, 0, sizeof *a);
    printf("  attributes dev%d %s\n", probe_device, probe_name(fn));
    return cudaSuccess;
}

#define cudaGetDevice probe_get_device
#define cudaFuncGetAttributes probe_func_attributes
#define cudaFuncSetAttribute probe_set_attribute
#define cudaLaunchKernel probe_launch
#define cudaDeviceGetAttribute probe_device_attribute
#define cudaStreamIsCapturing probe_is_capturing
#define cudaEventCreateWithFlags probe_event_create
#define cudaStreamWaitEvent probe_wait_event
#define cudaEventRecord probe_event_record
#define cudaStreamSynchronize probe_stream_sync
#define cudaDeviceSynchronize probe_device_sync
#define cudaThreadExchangeStreamCaptureMode probe_exchange_mode
`

// ptxShim makes the header take its PTX build on a host whose CUDA runtime has no cudaLibrary calls
// (11.8 here): placed between probeShim and the header, it says CUDA 12.5 and records the library
// calls. The first lookup of a kernel prints its name and its PTX's (or fatbin's) length and FNV-1a hash; the
// handle it returns is that record, so probe_name reads the kernel's name from it.
const ptxShim = `#if CUDART_VERSION < 12050
typedef struct probe_library_st* cudaLibrary_t;
typedef struct probe_kernel_st* cudaKernel_t;
#endif
#undef CUDART_VERSION
#define CUDART_VERSION 12050

struct probe_library_st { const char* code; };
struct probe_kernel_st { char name[256]; };

static int probe_loads = 0;

cudaError_t probe_library_load(cudaLibrary_t* lib, const void* code, void* o, void* v, unsigned n, void* lo, void* lv, unsigned ln)
{
    (void)o, (void)v, (void)n, (void)lo, (void)lv, (void)ln;
    if (probe_capture_mode != cudaStreamCaptureModeRelaxed) printf("  library loaded outside relaxed capture mode\n");
    probe_library_st* l = new probe_library_st;
    l->code = (const char*)code;
    *lib = (cudaLibrary_t)l;
    probe_loads++;
    return cudaSuccess;
}

cudaError_t probe_library_get_kernel(cudaKernel_t* k, cudaLibrary_t lib, const char* name)
{
    const char* code = ((probe_library_st*)lib)->code;
    unsigned long long h = 14695981039346656037ULL;
    size_t n = strlen(code);
    const unsigned char* u = (const unsigned char*)code;
    if (u[0] == 0x50 && u[1] == 0xed && u[2] == 0x55 && u[3] == 0xba) { // a fatbin: its header gives its size
        unsigned long long fat = 0;
        for (int i = 15; i >= 8; i--) fat = fat << 8 | u[i];
        n = (size_t)(u[6] | u[7] << 8) + (size_t)fat;
    }
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)code[i]) * 1099511628211ULL;
    probe_kernel_st* r = new probe_kernel_st;
    snprintf(r->name, sizeof r->name, "%s", name);
    printf("  load %s bytes %zu fnv %016llx\n", name, n, h);
    *k = (cudaKernel_t)r;
    return cudaSuccess;
}

cudaError_t probe_library_unload(cudaLibrary_t lib) { delete (probe_library_st*)lib; return cudaSuccess; }

#define cudaLibraryLoadData probe_library_load
#define cudaLibraryGetKernel probe_library_get_kernel
#define cudaLibraryUnload probe_library_unload
`

// probeName is the probe program's probe_name for an export named tg: the kernel a launched function
// is, in either build of the header.
const probeName = `static const char* probe_name(const void* fn)
{
#if tg_PTX
    return ((const probe_kernel_st*)fn)->name;
#else
    int n = 0;
    const tg_kernel_info* k = tg_kernels(&n);
    for (int i = 0; i < n; i++)
        if (k[i].fn == fn) return k[i].name;
    return "?";
#endif
}

`

// fnv64 is FNV-1a over s, as ptxShim hashes the PTX it is given.
func fnv64(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * 1099511628211
	}
	return h
}

// TestHeaderLaunches runs the .cuh launcher of both fixtures with the launch recorded instead of
// run, in both builds of the header (built from source; the PTX build, through ptxShim): the grid,
// block and dynamic shared memory of every class, and the limit raised (once per device, again after
// a failed launch) exactly for kernels above 48 KiB, and grid z by the split rule with each device's
// SM count, asked once per device. The PTX build loads each kernel's tuned PTX, byte for byte, once
// for all devices, before its first launch, in relaxed capture mode, and launches the handle it got;
// it is compiled by the host's C++ compiler, not nvcc. Everything runs on the host.
func TestHeaderLaunches(t *testing.T) {
	nvcc := needTool(t, "nvcc")
	for _, fx := range []struct {
		name   string
		export func(*testing.T) (string, *Plan)
	}{{"seed", exportFixture}, {"regtile", exportRegtile}, {"regimes", exportRegimes}, {"regtile-sass", exportRegtileSASS}} {
		for _, ptx := range []bool{false, true} {
			build := "source"
			if ptx {
				build = "ptx"
			} else if fx.name == "regtile-sass" {
				continue // the source build has no use for the fatbins
			}
			t.Run(fx.name+"/"+build, func(t *testing.T) { testHeaderLaunches(t, nvcc, fx.export, ptx) })
		}
	}
}

func testHeaderLaunches(t *testing.T, nvcc string, export func(*testing.T) (string, *Plan), ptx bool) {
	out, p := export(t)
	var src, want strings.Builder
	src.WriteString(probeShim)
	if ptx {
		src.WriteString(ptxShim)
	}
	src.WriteString("#include \"tg.cuh\"\n\n")
	src.WriteString(probeName)
	src.WriteString("static void call(int M, int N, int K)\n{\n" +
		"    cudaError_t e = tg_sgemm(M, N, K, 1.0f, (const float*)256, K, (const float*)256, N, 0.0f, (float*)256, N, 0);\n" +
		"    if (e != cudaSuccess) printf(\"  error %d\\n\", (int)e);\n}\n\n")
	src.WriteString("int main()\n{\n")

	attrCalls := 0
	raised := map[[2]int]bool{} // kernel, device
	loaded := map[int]bool{}
	expect := func(dev, m, n, k int) {
		i, err := p.Choose(variant.OpNN, m, n, k, k, n, n)
		if err != nil {
			t.Fatal(err)
		}
		v := p.Variants[i].V
		if ptx && !loaded[i] {
			loaded[i] = true
			code := p.Variants[i].src.code()
			fmt.Fprintf(&want, "  load %s bytes %d fnv %016x\n", v.Name, len(code), fnv64(code))
		}
		lim := 0
		if v.DynamicShared > dynSharedDefault {
			if !raised[[2]int{i, dev}] {
				raised[[2]int{i, dev}] = true
				attrCalls++
			}
			lim = v.DynamicShared
		}
		gx, gy, gz := v.Grid(m, n, k, []int{132, 114}[dev])
		fmt.Fprintf(&want, "  dev%d %dx%dx%d %s grid %d,%d,%d block %d,%d,1 shared %d raised %d attr_calls %d\n", dev, m, n, k, v.Name,
			gx, gy, gz, v.Block.X, v.Block.Y, v.DynamicShared, lim, attrCalls)
	}
	bigShape := -1
	for dev := 0; dev < 2; dev++ {
		fmt.Fprintf(&src, "    probe_device = %d;\n", dev)
		fmt.Fprintf(&src, "    printf(\"device %d\\n\");\n", dev)
		fmt.Fprintf(&want, "device %d\n", dev)
		// Every class twice: the second time raises nothing.
		for rep := 0; rep < 2; rep++ {
			for ci, c := range p.Classes {
				fmt.Fprintf(&src, "    call(%d, %d, %d);\n", c.Shape.M, c.Shape.N, c.Shape.K)
				expect(dev, c.Shape.M, c.Shape.N, c.Shape.K)
				if p.Variants[c.Variant].V.DynamicShared > dynSharedDefault {
					bigShape = ci
				}
			}
			for _, s := range launchShapes {
				fmt.Fprintf(&src, "    call(%d, %d, %d);\n", s[0], s[1], s[2])
				expect(dev, s[0], s[1], s[2])
			}
		}
	}
	if bigShape >= 0 {
		// A failed launch of a big kernel (as after cudaDeviceReset) raises the limit again
		// and retries once.
		s := p.Classes[bigShape].Shape
		fmt.Fprintf(&src, "    printf(\"retry\\n\");\n    probe_fail_next = 1;\n    call(%d, %d, %d);\n", s.M, s.N, s.K)
		want.WriteString("retry\n  failed launch\n")
		attrCalls++
		expect(1, s.M, s.N, s.K)
	}
	// The SM count is asked once per device, and only for kernels with a split rule.
	splits := false
	for _, c := range p.Variants {
		splits = splits || c.V.Split != nil
	}
	smCalls := 0
	if splits {
		smCalls = 2
	}
	src.WriteString("    printf(\"sm_calls %d mode %d\\n\", probe_sm_calls, (int)probe_capture_mode);\n")
	// The thread's capture mode (global, 0) is its own again after every call.
	fmt.Fprintf(&want, "sm_calls %d mode 0\n", smCalls)
	if ptx {
		src.WriteString("    printf(\"loads %d\\n\", probe_loads);\n")
		fmt.Fprintf(&want, "loads %d\n", len(loaded))
	}
	src.WriteString("    return 0;\n}\n")

	run := runProbe
	if ptx {
		// The PTX build holds no device code: a host C++ compiler builds it.
		run = runProbeCxx
	}
	if got := run(t, nvcc, out, src.String()); got != want.String() {
		t.Errorf("launches:\n%s\nwant:\n%s", got, want.String())
	}
}

// TestHeaderPreload runs NAME_preload of the fixtures in both builds of the header on two devices,
// the runtime recorded: every kernel in table order has its function (the PTX build: its PTX loaded,
// once for both devices) and its attributes read on each device, and the kernels above 48 KiB their
// limit raised once per device, so that a launch after it raises nothing more.
func TestHeaderPreload(t *testing.T) {
	nvcc := needTool(t, "nvcc")
	for _, fx := range []struct {
		name   string
		export func(*testing.T) (string, *Plan)
	}{{"seed", exportFixture}, {"regtile", exportRegtile}, {"regtile-sass", exportRegtileSASS}} {
		for _, ptx := range []bool{false, true} {
			build := map[bool]string{false: "source", true: "ptx"}[ptx]
			if fx.name == "regtile-sass" && !ptx {
				continue
			}
			t.Run(fx.name+"/"+build, func(t *testing.T) {
				out, p := fx.export(t)
				var src, want strings.Builder
				src.WriteString(probeShim)
				run := runProbe
				if ptx {
					src.WriteString(ptxShim)
					run = runProbeCxx
				}
				src.WriteString("#include \"tg.cuh\"\n\n" + probeName + "int main()\n{\n")
				big := 0
				for dev := 0; dev < 2; dev++ {
					fmt.Fprintf(&src, "    probe_device = %d;\n    {\n        int e = (int)tg_preload();\n"+
						"        printf(\"preload %%d attr_calls %%d\\n\", e, probe_attr_calls);\n    }\n", dev)
					for _, c := range p.Variants {
						if ptx && dev == 0 {
							fmt.Fprintf(&want, "  load %s bytes %d fnv %016x\n", c.V.Name, len(c.src.code()), fnv64(c.src.code()))
						}
						fmt.Fprintf(&want, "  attributes dev%d %s\n", dev, c.V.Name)
						if c.V.DynamicShared > dynSharedDefault {
							big++
						}
					}
					fmt.Fprintf(&want, "preload 0 attr_calls %d\n", big)
				}
				// A class's launch after the preload raises nothing more.
				c := p.Classes[len(p.Classes)-1].Shape
				fmt.Fprintf(&src, "    tg_sgemm(%d, %d, %d, 1.0f, (const float*)256, %d, (const float*)256, %d, 0.0f, (float*)256, %d, 0);\n",
					c.M, c.N, c.K, c.K, c.N, c.N)
				src.WriteString("    printf(\"attr_calls %d\\n\", probe_attr_calls);\n    return 0;\n}\n")
				v := p.Variants[p.Classes[len(p.Classes)-1].Variant].V
				gx, gy, gz := v.Grid(c.M, c.N, c.K, 114)
				lim := 0
				if v.DynamicShared > dynSharedDefault {
					lim = v.DynamicShared
				}
				fmt.Fprintf(&want, "  dev1 %dx%dx%d %s grid %d,%d,%d block %d,%d,1 shared %d raised %d attr_calls %d\nattr_calls %d\n",
					c.M, c.N, c.K, v.Name, gx, gy, gz, v.Block.X, v.Block.Y, v.DynamicShared, lim, big, big)
				if got := run(t, nvcc, out, src.String()); got != want.String() {
					t.Errorf("preload:\n%s\nwant:\n%s", got, want.String())
				}
			})
		}
	}
}

// runProbe compiles src (a probe program with probeShim, including the export in out) with nvcc on
// the host, runs it and returns its output.
func runProbe(t *testing.T, nvcc, out, src string) string {
	t.Helper()
	args := []string{"-arch=sm_90", "-Xcompiler", "-Wall,-Werror", "-I", out}
	if _, err := exec.LookPath("g++-11"); err == nil {
		args = append(args, "-ccbin", "g++-11")
	}
	return buildAndRun(t, nvcc, "probe.cu", src, args, nil)
}

// runProbeCxx is runProbe with the host's C++ compiler instead of nvcc (C++14, the source as C++,
// the CUDA toolkit's include and library folders next to nvcc's where it has them, -lcudart): what
// a program that is not compiled by nvcc does with the header's PTX build.
func runProbeCxx(t *testing.T, nvcc, out, src string) string {
	t.Helper()
	cxx := "g++-11"
	if _, err := exec.LookPath(cxx); err != nil {
		cxx = needTool(t, "g++")
	}
	args, libs := []string{"-std=c++14", "-Wall", "-Werror", "-I", out}, []string{"-lcudart"}
	root := filepath.Dir(filepath.Dir(nvcc))
	for _, d := range []string{"include", "targets/x86_64-linux/include"} {
		if _, err := os.Stat(filepath.Join(root, d, "cuda_runtime.h")); err == nil {
			args = append(args, "-I", filepath.Join(root, d))
		}
	}
	for _, d := range []string{"lib64", "targets/x86_64-linux/lib"} {
		if _, err := os.Stat(filepath.Join(root, d)); err == nil {
			libs = append([]string{"-L", filepath.Join(root, d)}, libs...)
		}
	}
	return buildAndRun(t, cxx, "probe.cc", src, args, libs)
}

// buildAndRun writes src to file in a temporary folder, compiles it there with compiler (flags,
// -o, the file, then libs), runs the program and returns its output.
func buildAndRun(t *testing.T, compiler, file, src string, flags, libs []string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, file), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append(append(flags, "-o", filepath.Join(dir, "probe"), filepath.Join(dir, file)), libs...)
	if b, err := exec.Command(compiler, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", filepath.Base(compiler), err, b)
	}
	b, err := exec.Command(filepath.Join(dir, "probe")).CombinedOutput()
	if err != nil {
		t.Fatalf("probe: %v\n%s", err, b)
	}
	return string(b)
}

// TestExampleCompiles builds examples/export-cuda (the C++ program the GPU check runs) against both
// fixture exports, named through -DTG_EXPORT_NAME as scripts/export-gpu-check.sh does.
func TestExampleCompiles(t *testing.T) {
	nvcc := needTool(t, "nvcc")
	main, err := filepath.Abs("../../examples/export-cuda/main.cu")
	if err != nil {
		t.Fatal(err)
	}
	for _, fx := range []struct {
		name   string
		export func(*testing.T) (string, *Plan)
	}{{"seed", exportFixture}, {"regtile", exportRegtile}, {"regimes", exportRegimes}, {"epilogue", exportEpilogue}} {
		t.Run(fx.name, func(t *testing.T) {
			out, _ := fx.export(t)
			args := []string{"-O2", "-arch=sm_90", "-Xcompiler", "-Wall,-Werror", "-DTG_EXPORT_NAME=tg", "-I", out,
				"-o", filepath.Join(t.TempDir(), "export-cuda"), main, "-lcublas", "-lcuda"}
			if _, err := exec.LookPath("g++-11"); err == nil {
				args = append(args, "-ccbin", "g++-11")
			}
			if b, err := exec.Command(nvcc, args...).CombinedOutput(); err != nil {
				t.Fatalf("nvcc %s: %v\n%s", strings.Join(args, " "), err, b)
			}
		})
	}
}

// exportEpilogue exports the epilogue fixture (fused-epilogue entries for five epilogues).
func exportEpilogue(t *testing.T) (string, *Plan) {
	t.Helper()
	dirs, gen := epilogueFixture(t, variant.EpiBiasGeluRow)
	out := filepath.Join(t.TempDir(), "tgsgemm")
	if err := Run(Options{Results: dirs, Generated: gen, Out: out, Name: "tg"}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, "tg.cuh"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "#define tg_HAS_EPILOGUES 1") {
		t.Fatal("the epilogue export does not say it has epilogues (the example would leave them out)")
	}
	return out, nil
}

// launchShapes are problems the launch tests run besides the classes: deep K with small outputs
// (where a split rule picks many slices), GEMV-like and small ones.
var launchShapes = [][3]int{{32, 32, 100000}, {1, 4096, 4096}, {4096, 8, 4096}, {64, 196, 4608}, {48, 48, 48}}

// regimesOptions export testdata/regimes: five variants of the split-rule families (grid_z: auto)
// with their H100 records from results/regimes-h100 (tune on the 16 regime shapes and the edge
// suite), hashed as runner tune and verify now record them.
func regimesOptions(out string) Options {
	return Options{Results: []string{"testdata/regimes/results/tune", "testdata/regimes/results/verify"},
		Generated: "testdata/regimes/generated", Out: out, Name: "tg", GoPackage: "example.com/consumer/tgsgemm"}
}

// exportRegimes exports testdata/regimes: every class goes to a variant whose grid z its split rule
// picks at launch, so the launchers' grid z must follow the rule with the device's SM count.
func exportRegimes(t *testing.T) (string, *Plan) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "tgsgemm")
	if err := Run(regimesOptions(out)); err != nil {
		t.Fatal(err)
	}
	p, _, err := Prepare(regimesOptions(out))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Classes) != 16 {
		t.Fatalf("%d classes, want the 16 regime shapes", len(p.Classes))
	}
	for _, c := range p.Classes {
		if v := p.Variants[c.Variant].V; v.Split == nil {
			t.Fatalf("class %v goes to %s, which has no split rule", c.Shape, v.Name)
		}
	}
	return out, p
}

// TestExampleSeesEpilogues: every header has the fused-epilogue entry, so the example compiles its
// epilogue checks in against any export (they run each epilogue the header holds and expect the
// others refused), and the header defines NAME_HAS_EPILOGUES only when it holds an epilogue kernel.
func TestExampleSeesEpilogues(t *testing.T) {
	nvcc := needTool(t, "nvcc")
	main, err := filepath.Abs("../../examples/export-cuda/main.cu")
	if err != nil {
		t.Fatal(err)
	}
	for _, fx := range []struct {
		name   string
		export func(*testing.T) (string, *Plan)
		has    bool
	}{{"epilogue", exportEpilogue, true}, {"seed", exportFixture, false}} {
		out, _ := fx.export(t)
		args := []string{"-E", "-DTG_EXPORT_NAME=tg", "-I", out, main}
		if _, err := exec.LookPath("g++-11"); err == nil {
			args = append(args, "-ccbin", "g++-11")
		}
		b, err := exec.Command(nvcc, args...).Output()
		if err != nil {
			t.Fatalf("%s: nvcc -E: %v", fx.name, err)
		}
		if !strings.Contains(string(b), "check_epilogue(h, epi,") || !strings.Contains(string(b), "tg_sgemm_epilogue(") {
			t.Errorf("%s: the example's epilogue checks or the header's entry are missing", fx.name)
		}
		cuh, err := os.ReadFile(filepath.Join(out, "tg.cuh"))
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(string(cuh), "#define tg_HAS_EPILOGUES 1"); got != fx.has {
			t.Errorf("%s: tg_HAS_EPILOGUES defined: %v, want %v", fx.name, got, fx.has)
		}
	}
}
