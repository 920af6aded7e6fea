// Package version describes a tilegen binary in one line: its module version, the Go toolchain
// that built it, the nvcc that compiled the PTX it carries and the git revision of the source.
// Both the runner and the GPU worker print it for --version.
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// String is the --version line of the program prog, e.g.
//
//	runner v0.0.0-20261124133800-de58333abcde+dirty (go1.26.8, nvcc release 11.8, V11.8.89, git de58333abcde+dirty)
//
// nvcc names the compiler of the PTX the binary embeds; "" says the binary embeds none. Values the
// build did not record (go run, a build outside a git checkout) read "unknown".
func String(prog, nvcc string) string {
	bi, _ := debug.ReadBuildInfo()
	return format(prog, nvcc, runtime.Version(), bi)
}

func format(prog, nvcc, goVersion string, bi *debug.BuildInfo) string {
	mod, rev, dirty := "unknown", "unknown", false
	if bi != nil {
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			mod = v
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
				if len(rev) > 12 {
					rev = rev[:12]
				}
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	if dirty && rev != "unknown" {
		rev += "+dirty"
	}
	if nvcc == "" {
		nvcc = "no embedded PTX"
	} else {
		nvcc = "nvcc " + nvcc
	}
	return fmt.Sprintf("%s %s (%s, %s, git %s)", prog, mod, goVersion, nvcc, rev)
}
