//go:build !unix

package cache

import "os"

const (
	lockShared = iota
	lockExclusive
	lockRelease
)

// flock is a no-op where flock(2) does not exist: there, runners must not share a cache file.
func flock(*os.File, int) error { return nil }
