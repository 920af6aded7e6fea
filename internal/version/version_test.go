package version

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestFormat(t *testing.T) {
	bi := &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261124133800-de58333abcde+dirty"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "de58333abcdef0123456789"}, {Key: "vcs.modified", Value: "true"}}}
	for _, tc := range []struct {
		nvcc string
		bi   *debug.BuildInfo
		want string
	}{
		{"release 11.8, V11.8.89", bi,
			"runner v0.0.0-20261124133800-de58333abcde+dirty (go1.26.8, nvcc release 11.8, V11.8.89, git de58333abcde+dirty)"},
		{"", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}},
			"runner unknown (go1.26.8, no embedded PTX, git unknown)"},
		{"", nil, "runner unknown (go1.26.8, no embedded PTX, git unknown)"},
	} {
		if got := format("runner", tc.nvcc, "go1.26.8", tc.bi); got != tc.want {
			t.Errorf("got  %q\nwant %q", got, tc.want)
		}
	}
	// The test binary itself: one line, this Go.
	if s := String("x", ""); strings.Contains(s, "\n") || !strings.Contains(s, "go1.") {
		t.Errorf("String: %q", s)
	}
}
