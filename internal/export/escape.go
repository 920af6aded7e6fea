package export

import (
	"strconv"
	"strings"
)

// safeText renders text that came from an input file (a device name, an nvcc version, a failure
// reason, a variant name from a results file) for a comment of generated code or a line of printed
// output. Plain printable ASCII that cannot end a comment is returned as it is; anything else is
// returned Go-quoted (also a valid C string literal's spelling) with "*/" broken up: one line, no
// control characters, and ending in a quote, never in a backslash that would splice the next
// line into a C++ line comment.
func safeText(s string) string {
	if plainText(s) {
		return s
	}
	return strings.ReplaceAll(strconv.QuoteToASCII(s), "*/", `*\/`)
}

func plainText(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '\\' || c == '"' {
			return false
		}
	}
	return !strings.Contains(s, "*/")
}
