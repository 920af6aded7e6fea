package gen

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// Pos is a place in a YAML file; every input error names one.
type Pos struct {
	File      string
	Line, Col int
}

func (p Pos) String() string { return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col) }

// InputError is an error in the generator's input (variants.yaml or a template); main prints it
// as "gen: file:line:col: message".
type InputError struct {
	Pos Pos
	Msg string
}

// Error is always one line: the message is text from the input at times, and a newline in it
// must not forge a second "file:line:col:" line.
func (e *InputError) Error() string { return e.Pos.String() + ": " + oneLine(e.Msg) }

func errAt(file string, n *yaml.Node, format string, args ...any) *InputError {
	return &InputError{Pos: Pos{File: file, Line: n.Line, Col: n.Column}, Msg: fmt.Sprintf(format, args...)}
}

// maxReported is how many errors of one file an ErrorList prints before "too many errors", as the
// Go compiler does: past that they are mostly consequences of the first ones.
const maxReported = 20

// ErrorList is every input error found in one file, sorted by position; it prints one
// "file:line:col: message" line per error.
type ErrorList []*InputError

func (l ErrorList) Error() string {
	var b strings.Builder
	for i, e := range l {
		if i == maxReported {
			fmt.Fprintf(&b, "\n%s: too many errors (%d more)", e.Pos.File, len(l)-maxReported)
			break
		}
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// Unwrap lets errors.As find an *InputError in the list.
func (l ErrorList) Unwrap() []error {
	out := make([]error, len(l))
	for i, e := range l {
		out[i] = e
	}
	return out
}

// diags collects the input errors of one file, so that one run reports all of them.
type diags struct {
	file string
	list []*InputError
	// suggested holds the keys offered as "did you mean" for an unknown key of a mapping.
	suggested map[suggestion]bool
}

type suggestion struct {
	mapping *yaml.Node
	key     string
}

// add records an error at n; it returns false so that callers can write `return d.add(...)`.
func (d *diags) add(n *yaml.Node, format string, args ...any) bool {
	d.list = append(d.list, errAt(d.file, n, format, args...))
	return false
}

func (d *diags) ok() bool { return len(d.list) == 0 }

// err returns nil, the only error, or every error sorted by position (duplicates dropped).
func (d *diags) err() error {
	switch len(d.list) {
	case 0:
		return nil
	case 1:
		return d.list[0]
	}
	l := append(ErrorList(nil), d.list...)
	sort.SliceStable(l, func(i, j int) bool {
		if l[i].Pos.Line != l[j].Pos.Line {
			return l[i].Pos.Line < l[j].Pos.Line
		}
		return l[i].Pos.Col < l[j].Pos.Col
	})
	out := l[:1]
	for _, e := range l[1:] {
		if last := out[len(out)-1]; e.Pos != last.Pos || e.Msg != last.Msg {
			out = append(out, e)
		}
	}
	if len(out) == 1 {
		return out[0]
	}
	return out
}

// kindName describes a node for a message: "a mapping", "string \"x\"", "int 7".
func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a sequence"
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!str":
			return fmt.Sprintf("string %q", n.Value)
		case "!!null":
			return "null"
		default:
			return fmt.Sprintf("%s %s", strings.TrimPrefix(n.Tag, "!!"), n.Value)
		}
	}
	return "an unsupported node"
}

// oneLine escapes what would break a one-line message: control characters, line and paragraph
// separators, invalid UTF-8.
func oneLine(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || !unicode.IsPrint(r) && r != '\t' {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	q := strconv.QuoteToGraphic(s)
	return q[1 : len(q)-1]
}

// printableLine reports why s cannot be copied verbatim into one line of generated text (a C or Go
// comment, a tab-separated --explain line), or "" when it can: it must be printable text without
// a newline, and without "/*", "*/" or a backslash, which end a comment or splice the next line
// into it.
func printableLine(s string) string {
	for _, r := range s {
		if r == '\n' || r == '\r' {
			return "must be one line (no newline)"
		}
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			return fmt.Sprintf("must be printable text (found %s)", strconv.QuoteRuneToASCII(r))
		}
	}
	switch {
	case strings.Contains(s, "*/"), strings.Contains(s, "/*"):
		return "must not contain \"/*\" or \"*/\""
	case strings.Contains(s, `\`):
		return "must not contain a backslash"
	}
	return ""
}

// suggest returns the candidate nearest to s by edit distance when it is close enough to be a
// likely typo, else "": a distance of at most a third of the longer name (at least 1), and less
// than its length (x is no typo of w).
func suggest(s string, candidates []string) string {
	best, bestD := "", -1
	for _, c := range candidates {
		d := editDistance(strings.ToLower(s), strings.ToLower(c))
		if bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	if best == "" || best == s {
		return ""
	}
	longest := max(utf8.RuneCountInString(s), utf8.RuneCountInString(best))
	if bestD > max(1, longest/3) || bestD >= longest {
		return ""
	}
	return best
}

// didYouMean is "; did you mean \"x\"?" for a close candidate, else "".
func didYouMean(s string, candidates []string) string {
	if m := suggest(s, candidates); m != "" {
		return fmt.Sprintf("; did you mean %q?", m)
	}
	return ""
}

// editDistance is the optimal string alignment distance between a and b (in runes): insertions,
// deletions, substitutions and transpositions of neighbours ("nmae") cost 1.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	rows := [3][]int{make([]int, len(rb)+1), make([]int, len(rb)+1), make([]int, len(rb)+1)}
	for j := range rows[1] {
		rows[1][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		pp, prev, cur := rows[0], rows[1], rows[2]
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], pp[j-2]+1)
			}
		}
		rows = [3][]int{prev, cur, pp}
	}
	return rows[1][len(rb)]
}
