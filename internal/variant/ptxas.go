package variant

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

var (
	ptxasFuncRE  = regexp.MustCompile(`Function properties for (\S+)`)
	ptxasFrameRE = regexp.MustCompile(`(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads`)
	ptxasUsedRE  = regexp.MustCompile(`Used (\d+) registers`)
	ptxasSmemRE  = regexp.MustCompile(`(\d+) bytes smem`)
	ptxasEntryRE = regexp.MustCompile(`Compiling entry function '([^']+)'`)
)

// ParsePTXAS reads `ptxas -v` output for the named entry function:
//
//	ptxas info    : Compiling entry function 'k' for 'sm_90'
//	ptxas info    : Function properties for k
//	    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
//	ptxas info    : Used 10 registers, 1024 bytes smem, 380 bytes cmem[0]
func ParsePTXAS(out, entry string) (Resources, error) {
	var r Resources
	cur := ""
	found, used := false, false
	for _, line := range strings.Split(out, "\n") {
		if m := ptxasEntryRE.FindStringSubmatch(line); m != nil {
			cur = m[1]
			continue
		}
		if m := ptxasFuncRE.FindStringSubmatch(line); m != nil {
			cur = m[1]
			continue
		}
		if cur != entry {
			continue
		}
		if m := ptxasFrameRE.FindStringSubmatch(line); m != nil {
			r.StackFrame, _ = strconv.Atoi(m[1])
			r.SpillStores, _ = strconv.Atoi(m[2])
			r.SpillLoads, _ = strconv.Atoi(m[3])
			found = true
		}
		if m := ptxasUsedRE.FindStringSubmatch(line); m != nil {
			r.Registers, _ = strconv.Atoi(m[1])
			if s := ptxasSmemRE.FindStringSubmatch(line); s != nil {
				r.SharedStatic, _ = strconv.Atoi(s[1])
			}
			used = true
		}
	}
	if !found || !used {
		return r, fmt.Errorf("ptxas -v reported no resources for entry %s:\n%s", entry, strings.TrimRight(out, "\n"))
	}
	return r, nil
}

// ParseCUDARelease extracts a CUDA tool's release ("release 11.8, V11.8.89") from its --version output
// (nvcc's, ptxas's); "" when it has none.
func ParseCUDARelease(out string) string {
	for _, line := range strings.Split(out, "\n") {
		if i := strings.Index(line, "release "); i >= 0 {
			return strings.TrimSpace(line[i:])
		}
	}
	return ""
}
