package gen

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// mainEnv makes the test binary run gen's main instead of the tests, so tests can run gen as a
// separate process (exit status, signals) without building it.
const mainEnv = "TILEGEN_GEN_TEST_MAIN"

// cmdMain is what the command's main (tilegen/gen) does.
func cmdMain() {
	if IsSupervisor() {
		os.Exit(Supervise(os.Args[1:]))
	}
	os.Exit(Report(Run(os.Args[1:], os.Stdout, os.Stderr), os.Stderr))
}

// beforeMain runs in such a child before main (a platform test file may add to it).
var beforeMain []func()

func TestMain(m *testing.M) {
	if os.Getenv(mainEnv) == "1" || os.Getenv(supervisorEnv) == "1" {
		for _, f := range beforeMain {
			f()
		}
		cmdMain()
		os.Exit(0) // cmdMain always exits; this is for the reader
	}
	code := m.Run()
	shipped.cleanup()
	os.Exit(code)
}

// genCommand returns gen as a child process running args (the test binary in mainEnv mode).
func genCommand(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, args...)
	cmd.Env = append(os.Environ(), mainEnv+"=1")
	return cmd
}

// runGen runs gen as a child and returns its exit status, stdout and stderr.
func runGen(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := genCommand(t, args...)
	cmd.Env = append(cmd.Env, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), stdout.String(), stderr.String()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0, stdout.String(), stderr.String()
}

// fakeNVCC writes an nvcc and a ptxas (shell scripts) into a new directory and returns the nvcc.
// They compile nothing: the PTX names the kernel and ptxas reports fixed resources. With
// $FAKE_NVCC_HANG set to a directory, nvcc appends its pid and that of a background sleep (a child
// of its own, as cicc is of nvcc) to $FAKE_NVCC_HANG/pids and waits for it.
func fakeNVCC(t *testing.T) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the fake toolchain is a shell script")
	}
	dir := t.TempDir()
	nvcc := `#!/bin/sh
if [ "$1" = "--version" ]; then echo "Cuda compilation tools, release 99.9, V99.9.9"; exit 0; fi
out=""; in=""
while [ $# -gt 0 ]; do
	case "$1" in
	-o) out="$2"; shift ;;
	*.cu) in="$1" ;;
	esac
	shift
done
if [ -n "$FAKE_NVCC_HANG" ]; then
	sleep 300 &
	echo "$$ $!" >> "$FAKE_NVCC_HANG/pids"
	wait
fi
printf '.version 7.8\n.target sm_90\n.visible .entry %s(\n)\n{\n\tret;\n}\n' "$(basename "$in" .cu)" > "$out"
`
	ptxas := `#!/bin/sh
for a; do case "$a" in *.ptx) f="$a" ;; esac; done
n=$(basename "$f" .ptx)
echo "ptxas info    : Compiling entry function '$n' for 'sm_90'"
echo "ptxas info    : Function properties for $n"
echo "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads"
echo "ptxas info    : Used 10 registers, 0 bytes smem, 380 bytes cmem[0]"
`
	for name, body := range map[string]string{"nvcc": nvcc, "ptxas": ptxas} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "nvcc")
}

// goodVariant writes testdata/good.yaml with its W values replaced by ws ("8, 16") and returns
// the path: more or fewer variants of the same family.
func goodVariant(t *testing.T, ws string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/good.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(b), "W: [8, 16, 64]", "W: ["+ws+"]", 1)
	if s == string(b) {
		t.Fatal("testdata/good.yaml no longer has W: [8, 16, 64]")
	}
	p := filepath.Join(t.TempDir(), "variants.yaml")
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// genArgs is gen's command line over testdata/templates into out with the fake nvcc.
func genArgs(cfg, out, nvcc string, extra ...string) []string {
	return append([]string{"--config", cfg, "--templates", "testdata/templates", "--out", out, "--nvcc", nvcc}, extra...)
}

// mustGen runs gen in-process and fails the test on an error.
func mustGen(t *testing.T, args ...string) string {
	t.Helper()
	var stdout bytes.Buffer
	if err := callRun(t, args, &stdout, &bytes.Buffer{}); err != nil {
		t.Fatalf("gen %v: %v", args, err)
	}
	return stdout.String()
}

// leftovers lists the transaction directories beside out.
func leftovers(t *testing.T, out string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(filepath.Dir(out), "."+filepath.Base(out)+txMarker+"*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func writeFile(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// sameTree fails unless got and want hold the same files with the same bytes.
func sameTree(t *testing.T, what string, got, want map[string][]byte) {
	t.Helper()
	if g, w := strings.Join(keys(got), " "), strings.Join(keys(want), " "); g != w {
		t.Fatalf("%s: files differ\n got: %s\nwant: %s", what, g, w)
	}
	for k := range want {
		if !bytes.Equal(got[k], want[k]) {
			t.Errorf("%s: %s changed", what, k)
		}
	}
}
