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

// cStringLines renders s (a kernel's PTX) as a C string literal for an array initializer: one quoted
// piece per line of s, pieces joined by newlines (the compiler concatenates them). Backslashes,
// double quotes, '?' (so that no trigraph forms) and every byte outside printable ASCII are escaped
// (tab as \t, newline as \n, others as three octal digits), so nothing in s can end the literal or
// reach the compiler as code. An empty s is "".
func cStringLines(s string) string {
	if s == "" {
		return `""`
	}
	var b strings.Builder
	b.Grow(len(s) + len(s)/16)
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\n':
			b.WriteString(`\n"`)
			if i+1 < len(s) {
				b.WriteString("\n\"")
			}
			continue
		case c == '\t':
			b.WriteString(`\t`)
		case c == '\\' || c == '"' || c == '?':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c > 0x7e:
			b.WriteByte('\\')
			b.WriteByte('0' + c>>6)
			b.WriteByte('0' + c>>3&7)
			b.WriteByte('0' + c&7)
		default:
			b.WriteByte(c)
		}
		if i+1 == len(s) {
			b.WriteByte('"')
		}
	}
	return b.String()
}
