package workerproc

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// A reason a worker wrote reaches the terminal, results.csv and reports: one printable line of
// valid UTF-8, however it was written.
func TestOneLine(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"  kernel fault  ", "kernel fault"},
		{"first\nsecond", "first …"},
		{"bad \x1b[31mred\x1b[0m\tcell", "bad ?[31mred?[0m cell"},
		{"bell\x07 and \xff", "bell? and ?"},
	} {
		if got := OneLine(tc.in); got != tc.want {
			t.Errorf("OneLine(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	long := strings.Repeat("é", 400) // 2 bytes each: byte 300 starts a character, 301 does not
	for _, s := range []string{long, "x" + long} {
		got := OneLine(s)
		if !utf8.ValidString(got) || len(got) > 300+len("…") {
			t.Errorf("OneLine of %d bytes: %d bytes, valid UTF-8 %v", len(s), len(got), utf8.ValidString(got))
		}
	}
}
