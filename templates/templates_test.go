package templates

import (
	"io/fs"
	"strings"
	"testing"
)

// TestSplitFixupCopiesAgree: the families with a launch-time split rule (deepk, gemvm, gemvn) each
// carry the same include-guarded fix-up (tg_ska_fixup, tg_ska_slice), so that each template stays
// self-contained; a header that concatenates several of them compiles the first copy only, so the
// copies must be identical.
func TestSplitFixupCopiesAgree(t *testing.T) {
	files, err := fs.Glob(FS, "*.cu.tmpl")
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "#ifndef TG_SKA_FIXUP", "#endif // TG_SKA_FIXUP"
	var want, wantFile string
	copies := 0
	for _, f := range files {
		b, err := fs.ReadFile(FS, f)
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		i := strings.Index(s, begin)
		if i < 0 {
			continue
		}
		j := strings.Index(s[i:], end)
		if j < 0 {
			t.Fatalf("%s: %q without %q", f, begin, end)
		}
		block := s[i : i+j+len(end)]
		copies++
		if want == "" {
			want, wantFile = block, f
		} else if block != want {
			t.Errorf("%s: the split fix-up differs from %s's copy", f, wantFile)
		}
	}
	if copies < 3 {
		t.Errorf("%d templates carry the split fix-up, want deepk, gemvm and gemvn", copies)
	}
}
