package gen

import (
	"bytes"
	"errors"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// decodeDocuments decodes the first YAML document of data and tries a second one, the way
// LoadConfig reads a file. It returns the first document, the second one when there is one, and
// a syntax error from either.
func decodeDocuments(data []byte) (doc, extra *yaml.Node, err error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	doc = new(yaml.Node)
	if err := dec.Decode(doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil, nil
		}
		return nil, nil, err
	}
	extra = new(yaml.Node)
	if err := dec.Decode(extra); err != nil {
		if errors.Is(err, io.EOF) {
			return doc, nil, nil
		}
		return nil, nil, err
	}
	return doc, extra, nil
}

var yamlLineRE = regexp.MustCompile(`^yaml: (?:line (\d+): )?(.*)$`)

// maxLocateBytes bounds the work spent locating a syntax error (bytes parsed in all): the
// search re-parses prefixes of the file, and a huge file must not turn an error into a hang.
const maxLocateBytes = 64 << 20

// yamlSyntaxError turns a yaml.v3 syntax error into file:line:col: message. yaml.v3 reports only
// the line where the enclosing construct starts (0-based for parser errors, and none at all on
// the first line), so the place is found again: the first line whose prefix of the file already
// fails with the same message holds the problem, and within that line, the shortest prefix that
// fails gives the column.
func yamlSyntaxError(file string, data []byte, err error) *InputError {
	full := strings.SplitN(err.Error(), "\n", 2)[0]
	msg, from := strings.TrimPrefix(full, "yaml: "), 1
	if m := yamlLineRE.FindStringSubmatch(full); m != nil {
		msg = m[2]
		if n, err := strconv.Atoi(m[1]); err == nil && n > 0 {
			from = n
		}
	}
	line, col := locateSyntaxError(data, full, from)
	return &InputError{Pos: Pos{file, line, col}, Msg: "not valid YAML: " + msg}
}

// closers are appended to a failing prefix to tell a real problem from a construct that the cut
// merely left open ("families: [" fails at the end of the input, but is not the mistake).
var closers = []string{"]", "}", "]}", "}]", "]]", "}}", "\"", "'", "\"]", "\"}", "']", "'}"}

// locateSyntaxError returns the 1-based line and column where parsing data fails with message
// want, searching lines from line `from` on (the problem never lies before the line yaml.v3
// names). It prefers the first prefix that fails even when a closing bracket or quote is added
// (the problem lies inside it), else the first that fails at all (an unclosed bracket or quote at
// the end of the file: the place that opens it). It falls back to (from, 1) when the search runs
// out of budget.
func locateSyntaxError(data []byte, want string, from int) (line, col int) {
	budget := maxLocateBytes
	fails := func(prefix []byte, suffix string) bool {
		if budget -= len(prefix) + len(suffix); budget < 0 {
			return false
		}
		in := append(append(make([]byte, 0, len(prefix)+len(suffix)), prefix...), suffix...)
		_, _, err := decodeDocuments(in)
		return err != nil && (suffix != "" || strings.SplitN(err.Error(), "\n", 2)[0] == want)
	}
	// strict: the prefix fails with want, and still fails whatever bracket or quote closes it.
	strict := func(n int) bool {
		if !fails(data[:n], "") {
			return false
		}
		for _, c := range closers {
			if !fails(data[:n], "\n"+c) || !fails(data[:n], c) {
				return false
			}
		}
		return true
	}
	lenient := func(n int) bool { return fails(data[:n], "") }
	// starts[i] is the offset of line i+1.
	starts := []int{0}
	for i, b := range data {
		if b == '\n' && i+1 < len(data) {
			starts = append(starts, i+1)
		}
	}
	from = min(max(from, 1), len(starts))
	for _, test := range []func(int) bool{strict, lenient} {
		for l := from; l <= len(starts) && budget >= 0; l++ {
			end := len(data)
			if l < len(starts) {
				end = starts[l]
			}
			if !test(end) {
				continue
			}
			start := starts[l-1]
			text := bytes.TrimRight(data[start:end], "\r\n")
			for c := 0; c < len(text) && budget >= 0; {
				_, size := utf8.DecodeRune(text[c:])
				c += size
				if test(start + c) {
					return l, errorColumn(text, c)
				}
			}
			return l, firstNonBlank(text)
		}
	}
	return from, 1
}

// errorColumn is the 1-based column of the character that ends text[:end], the shortest failing
// prefix of the line. An indicator such as ':' or '-' counts only once a blank follows it, so when
// that blank is what made the prefix fail, the column is the indicator's.
func errorColumn(text []byte, end int) int {
	col := utf8.RuneCount(text[:end])
	if last := text[end-1]; (last == ' ' || last == '\t') && col > 1 {
		if prev, _ := utf8.DecodeLastRune(text[:end-1]); prev != ' ' && prev != '\t' {
			col--
		}
	}
	return col
}

// firstNonBlank is the 1-based column of the first character of line that is not a space or tab.
func firstNonBlank(line []byte) int {
	trimmed := bytes.TrimLeft(line, " \t")
	if len(trimmed) == 0 || trimmed[0] == '\n' || trimmed[0] == '\r' {
		return 1
	}
	return utf8.RuneCount(line[:len(line)-len(trimmed)]) + 1
}
