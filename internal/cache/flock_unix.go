//go:build unix

package cache

import (
	"errors"
	"os"
	"syscall"
)

const (
	lockShared    = syscall.LOCK_SH
	lockExclusive = syscall.LOCK_EX
	lockRelease   = syscall.LOCK_UN
)

// flock takes or releases an advisory lock on the whole file (flock(2)); the lock belongs to the
// open file description, so two opens of one file exclude each other even within a process.
func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}
