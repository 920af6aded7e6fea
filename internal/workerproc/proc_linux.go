package workerproc

import (
	"errors"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"unsafe"
)

// Workers run in their own process group, so that killing the group also ends anything a worker
// started, and with a parent-death signal, so that a runner killed with -9 leaves no worker
// behind. The kernel sends Pdeathsig when the thread that forked the child exits, not when the
// process does, and Go ends OS threads at will (a goroutine that exits while locked to its
// thread takes the thread along): every worker is therefore forked from one thread that is locked
// for the life of the process.

type spawnReq struct {
	cmd  *exec.Cmd
	done chan error
}

var (
	spawnOnce sync.Once
	spawnCh   chan spawnReq
)

func spawner() {
	runtime.LockOSThread() // never unlocked: the thread lives as long as the runner
	for r := range spawnCh {
		r.done <- r.cmd.Start()
	}
}

// startProcess starts cmd in a new process group with SIGKILL as its parent-death signal.
func startProcess(cmd *exec.Cmd) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	spawnOnce.Do(func() {
		spawnCh = make(chan spawnReq)
		go spawner()
	})
	done := make(chan error, 1)
	spawnCh <- spawnReq{cmd, done}
	return <-done
}

// waitProcess waits for the worker cmd to exit, kills what is left of its process group g and
// reaps it. The group is killed before reaping: while the worker is a zombie its pid is still its
// group's id, so the signal cannot reach a process that reused the number.
func waitProcess(cmd *exec.Cmd, g *group) error {
	var info [128]byte // siginfo_t
	for {
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, 1 /* P_PID */, uintptr(g.pid),
			uintptr(unsafe.Pointer(&info[0])), syscall.WEXITED|syscall.WNOWAIT, 0, 0)
		if !errors.Is(errno, syscall.EINTR) {
			break
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	killGroup(g.pid)
	err := cmd.Wait()
	g.reaped = true
	return err
}

// killGroup sends SIGKILL to every process of the group led by pid (the worker and anything it
// started that did not leave the group).
func killGroup(pid int) {
	_ = syscall.Kill(-pid, syscall.SIGKILL)
}
