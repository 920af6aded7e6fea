//go:build !linux

package workerproc

import (
	"os/exec"
	"syscall"
)

// Without Linux's parent-death signal a runner killed with -9 can leave its workers behind; they
// still get their own process group, killed on shutdown.

func startProcess(cmd *exec.Cmd) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd.Start()
}

// waitProcess reaps the worker, then kills what is left of its group g.
func waitProcess(cmd *exec.Cmd, g *group) error {
	err := cmd.Wait()
	g.mu.Lock()
	defer g.mu.Unlock()
	killGroup(g.pid)
	g.reaped = true
	return err
}

func killGroup(pid int) {
	_ = syscall.Kill(-pid, syscall.SIGKILL)
}
