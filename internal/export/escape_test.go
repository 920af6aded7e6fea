package export

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCStringLines compiles cStringLines's literal of hostile texts into a C++ program that writes
// the array back out (its size less the terminating NUL): the bytes must come back unchanged, so no
// quote, backslash, trigraph, comment opener, control byte or non-ASCII byte in a PTX text can end
// the literal or change it. Each piece of the literal is one source line.
func TestCStringLines(t *testing.T) {
	cxx := "g++-11"
	if _, err := exec.LookPath(cxx); err != nil {
		cxx = needTool(t, "g++")
	}
	texts := []string{
		"",
		"\n",
		".version 7.8\n.target sm_90\n\tmov.u32 \t%r1, %tid.x;\n",
		"no final newline",
		`a "quoted" \ backslash \n not a newline` + "\n",
		"??= ??/ ??' trigraphs?\n",
		"*/ /* // comment openers\n\"\n",
		"\x00\x01\x1f\x7f\x80\xff\r\v\f bytes\n",
		"tab\there\n\n\nblank lines\n",
		"\"); system(\"x\"); //\n",
	}
	dir := t.TempDir()
	var src strings.Builder
	src.WriteString("#include <stdio.h>\n\n")
	for i, s := range texts {
		lit := cStringLines(s)
		for _, line := range strings.Split(lit, "\n") {
			if !strings.HasPrefix(line, `"`) || !strings.HasSuffix(line, `"`) || strings.ContainsAny(line, "\r\x00") {
				t.Errorf("text %d: piece %q is not one quoted line", i, line)
			}
		}
		src.WriteString("static const char text" + string(rune('a'+i)) + "[] =\n" + lit + ";\n")
	}
	src.WriteString("\nint main()\n{\n")
	for i := range texts {
		n := "text" + string(rune('a'+i))
		src.WriteString("    fwrite(" + n + ", 1, sizeof " + n + " - 1, stdout);\n    fputc('|', stdout);\n")
	}
	src.WriteString("    return 0;\n}\n")
	for _, std := range []string{"-std=c++14", "-std=c++17"} {
		if err := os.WriteFile(filepath.Join(dir, "lit.cc"), []byte(src.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		bin := filepath.Join(dir, "lit")
		if b, err := exec.Command(cxx, std, "-Wall", "-Werror", "-o", bin, filepath.Join(dir, "lit.cc")).CombinedOutput(); err != nil {
			t.Fatalf("%s %s: %v\n%s", cxx, std, err, b)
		}
		out, err := exec.Command(bin).Output()
		if err != nil {
			t.Fatal(err)
		}
		if want := strings.Join(texts, "|") + "|"; string(out) != want {
			t.Errorf("%s: the literals read back as\n%q\nwant\n%q", std, out, want)
		}
	}
}
