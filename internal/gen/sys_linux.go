//go:build linux

package gen

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"time"
	"unsafe"
)

// sysRenameat2 is renameat2's system call number; the syscall package defines SYS_RENAMEAT2 only on
// some architectures. 0: unknown here, exchange falls back to two renames.
var sysRenameat2 = map[string]uintptr{
	"amd64": 316, "arm64": 276, "riscv64": 276, "loong64": 276, "386": 353, "arm": 382,
	"ppc64": 357, "ppc64le": 357, "s390x": 347,
}[runtime.GOARCH]

const renameExchangeFlag = 1 << 1 // RENAME_EXCHANGE

// exchange atomically swaps the directory entries a and b (renameat2 RENAME_EXCHANGE). It returns
// errNoExchange when the kernel or the file system cannot.
func exchange(a, b string) error {
	if sysRenameat2 == 0 {
		return errNoExchange
	}
	pa, err := syscall.BytePtrFromString(a)
	if err != nil {
		return err
	}
	pb, err := syscall.BytePtrFromString(b)
	if err != nil {
		return err
	}
	cwd := -100 // AT_FDCWD
	_, _, e := syscall.Syscall6(sysRenameat2, uintptr(cwd), uintptr(unsafe.Pointer(pa)),
		uintptr(cwd), uintptr(unsafe.Pointer(pb)), renameExchangeFlag, 0)
	switch e {
	case 0:
		return nil
	case syscall.ENOSYS, syscall.EINVAL, syscall.EOPNOTSUPP:
		return errNoExchange
	default:
		return &os.LinkError{Op: "renameat2 exchange", Old: a, New: b, Err: e}
	}
}

// lockDir takes an exclusive flock on dir, held until release; a run killed with -9 loses it, which
// is how the next run recognises its leftovers.
func lockDir(dir string) (release func(), err error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}

// abandoned reports whether the leftover transaction directory dir belongs to no live gen: nobody
// holds its lock.
func abandoned(dir string) bool {
	release, err := lockDir(dir)
	if err != nil {
		return false
	}
	release()
	return true
}

// toolCommand runs name with args in dir so that neither it nor anything it starts outlives gen:
// it runs under a supervisor (gen itself, re-executed) in a process group of its own. The
// supervisor gets SIGTERM when gen dies, even by kill -9 (Pdeathsig), and then kills the whole
// group; cancelling ctx kills the group directly.
func toolCommand(ctx context.Context, dir, name string, args ...string) *exec.Cmd {
	var cmd *exec.Cmd
	if self, err := os.Executable(); err == nil {
		cmd = exec.CommandContext(ctx, self, append([]string{name}, args...)...)
		cmd.Env = append(os.Environ(), supervisorEnv+"=1")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	} else {
		// No supervisor: the tool itself still dies with gen; its own children may not.
		cmd = exec.CommandContext(ctx, name, args...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	}
	cmd.Dir = dir
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// killOwnGroup kills the supervisor's process group: the tool, its children and the supervisor.
func killOwnGroup(*exec.Cmd) { syscall.Kill(0, syscall.SIGKILL) }

// exitStatus maps a finished child to the status the supervisor exits with.
func exitStatus(err error) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return 1
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ee.ExitCode()
}
