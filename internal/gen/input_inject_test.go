package gen

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestReservedNames: the runner loads support kernels by name (reference, peak); a variant with
// such a name, or a support kernel's entry symbol, would get the wrong PTX.
func TestReservedNames(t *testing.T) {
	for _, name := range []string{"reference", "peak", "tilegen_peak_ffma"} {
		if reservedBy(name) == "" {
			t.Errorf("%s is not reserved (support templates: %v)", name, reservedNames())
		}
	}
	for _, c := range []struct{ old, new, want string }{
		{`"tiny_{W}_u{U}"`, `"reference"`, "f.yaml:5:19: family tiny, variant reference (W=8 U=1): the name reference is reserved for the support kernel reference (templates/support/reference.cu.tmpl); rename the variant"},
		{`"tiny_{W}_u{U}"`, `"peak"`, "f.yaml:5:19: family tiny, variant peak (W=8 U=1): the name peak is reserved for the support kernel peak"},
		{`"tiny_{W}_u{U}"`, `"tilegen_peak_ffma"`, "is reserved for an entry point of the support kernel peak (templates/support/peak.cu.tmpl)"},
		{`"tiny_{W}_u{U}"`, `"tilegen_{W}_{U}"`, "f.yaml:5:19: family tiny, variant tilegen_8_1 (W=8 U=1): the name tilegen_8_1 is reserved for support kernels (names starting with tilegen_)"},
		{"    variant_name: \"tiny_{W}_u{U}\"\n", "", "f.yaml:2:11: family tilegen, variant tilegen_w8_u1"},
	} {
		src := edit(t, baseYAML, c.old, c.new)
		if c.new == "" {
			src = edit(t, src, "name: tiny", "name: tilegen")
		}
		_, err := loadAndExpand(src, 0)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.new, err, c.want)
		}
	}
}

// TestInjectedText puts a newline, "*/", a quote and a backslash into every text field of the
// YAML. Each must be rejected at its place, or (a quote in doc or reason) reach no generated file
// and no line of --explain but its own.
func TestInjectedText(t *testing.T) {
	fields := []struct {
		name, old, key string
		accept         string // payloads that are harmless in this field
	}{
		{"family", "name: tiny", "name", ""},
		{"parameter", "W: [8, 16, 64]", "W", ""},
		{"doc", `doc: "test family"`, "doc", `"`},
		{"reason", `reason: "block of W*W threads exceeds 1024"`, "reason", `"`},
		{"template", "template: tiny.cu.tmpl", "template", ""},
		{"variant_name", `variant_name: "tiny_{W}_u{U}"`, "variant_name", ""},
		{"expr", "        reason: \"block of W*W threads exceeds 1024\"\n", "", ""},
	}
	payloads := []string{"\ntiny_8_u1\tforged", "*/ forged", `" forged`, `\ forged`}
	dir := t.TempDir()
	for _, f := range fields {
		for _, p := range payloads {
			src := baseYAML
			line := strings.Count(src[:strings.Index(src, f.old)], "\n") + 1
			if f.name == "expr" {
				// No reason: the expression itself is what --explain prints.
				src = edit(t, src, f.old, "")
				src = edit(t, src, `expr: "W * W <= 1024"`, "expr: "+strconv.Quote("W * W <= 1024 "+strings.ReplaceAll(p, "\t", " ")))
				line = 10
			} else {
				src = edit(t, src, f.old, f.key+": "+strconv.Quote(strings.TrimPrefix(f.old, f.key+": ")+p))
				if f.name == "parameter" {
					src = edit(t, src, "W: "+strconv.Quote("[8, 16, 64]"+p), strconv.Quote("W"+p)+": [8, 16, 64]")
				}
			}
			file := filepath.Join(dir, "v.yaml")
			if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			var explain bytes.Buffer
			err := Run([]string{"--config", file, "--templates", "testdata/templates", "--explain"}, &explain, &bytes.Buffer{})
			what := f.name + " + " + strconv.Quote(p)
			if err != nil {
				msg := err.Error()
				if strings.Contains(f.accept, strings.TrimSpace(p)[:1]) {
					t.Errorf("%s: rejected: %v", what, err)
				}
				if !regexp.MustCompile(`^` + regexp.QuoteMeta(file) + `:` + strconv.Itoa(line) + `:\d+: `).MatchString(msg) {
					t.Errorf("%s: the error does not point at line %d: %s", what, line, msg)
				}
				for _, l := range strings.Split(msg, "\n") {
					if !strings.HasPrefix(l, file+":") {
						t.Errorf("%s: the error forges a line: %q", what, l)
					}
				}
				continue
			}
			if f.accept == "" || !strings.Contains(f.accept, strings.TrimSpace(p)[:1]) {
				t.Errorf("%s: accepted; want it rejected", what)
			}
			lines := strings.Split(strings.TrimSuffix(explain.String(), "\n"), "\n")
			for _, l := range lines[:len(lines)-1] {
				if !regexp.MustCompile(`^tiny_64_u[14]\t[^\t]*$`).MatchString(l) {
					t.Errorf("%s: --explain line %q", what, l)
				}
			}
			out := t.TempDir()
			if err := Run([]string{"--config", file, "--templates", "testdata/templates", "--out", out, "--no-compile"}, &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
				t.Errorf("%s: generating: %v", what, err)
				continue
			}
			for name, b := range snapshot(t, out) {
				if bytes.Contains(b, []byte("forged")) {
					t.Errorf("%s: %s contains the text", what, name)
				}
			}
		}
	}
}
