//go:build !linux

package gen

import (
	"context"
	"os"
	"os/exec"
	"time"
)

// Outside Linux there is no atomic directory exchange, no parent-death signal and no flock in the
// syscall package: commit swaps --out with two renames (a run killed between them leaves --out
// missing, and the next run restores it), leftovers count as abandoned after an hour, and a
// cancelled nvcc is killed alone.

func exchange(a, b string) error { return errNoExchange }

func lockDir(dir string) (release func(), err error) { return func() {}, nil }

func abandoned(dir string) bool {
	st, err := os.Stat(dir)
	return err == nil && time.Since(st.ModTime()) > time.Hour
}

func toolCommand(ctx context.Context, dir, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

func killOwnGroup(cmd *exec.Cmd) { cmd.Process.Kill() }

func exitStatus(err error) int {
	if err == nil {
		return 0
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	return 1
}
