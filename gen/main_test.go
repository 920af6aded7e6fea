package main

import (
	"bytes"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

// mainEnv makes the test binary run main instead of the tests. The generator's own tests
// (tilegen/internal/gen) run its copy of main; these check that this one is wired the same way.
const mainEnv = "TILEGEN_GEN_CMD_TEST_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(mainEnv) == "1" {
		main()
	}
	os.Exit(m.Run())
}

// runMain runs main in a child with args and env and returns its exit status, stdout and stderr.
func runMain(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, args...)
	cmd.Env = append(append(os.Environ(), mainEnv+"=1"), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), stdout.String(), stderr.String()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0, stdout.String(), stderr.String()
}

// TestExitStatus: main prints Run's error with the usage hint and exits 2 for a usage error, 1 for
// bad input, 0 on success.
func TestExitStatus(t *testing.T) {
	for _, c := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"--bogus"}, 2, "gen: unknown flag: --bogus\nrun 'gen --help' for usage\n"},
		{[]string{"--config", t.TempDir(), "--explain"}, 1, "gen: reading config: "},
		{[]string{"--config", "../variants.yaml", "--explain"}, 0, ""},
	} {
		code, _, stderr := runMain(t, nil, c.args...)
		if code != c.code || !strings.HasPrefix(stderr, c.stderr) || (c.stderr == "" && stderr != "") {
			t.Errorf("gen %v: exit %d, stderr %q; want exit %d and %q", c.args, code, stderr, c.code, c.stderr)
		}
	}
}

// TestSupervisor: started as a supervisor, main runs the tool and exits with its status.
func TestSupervisor(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("needs sh")
	}
	code, stdout, _ := runMain(t, []string{"TILEGEN_GEN_SUPERVISE=1"}, "sh", "-c", "echo tool; exit 3")
	if code != 3 || stdout != "tool\n" {
		t.Errorf("supervisor: exit %d, stdout %q; want 3 and the tool's output", code, stdout)
	}
}
