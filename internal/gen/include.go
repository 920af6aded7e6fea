package gen

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strings"
)

// The CUDA header library (templates/include/tilegen/*.cuh) is plain CUDA that family templates
// include with `#include "tilegen/NAME.cuh"`. The generator inlines it: every generated source
// stays one self-contained translation unit (nvcc needs no -I, the export concatenates sources as
// they are), and a change to a header changes the source hash of, and so recompiles, exactly the
// variants that include it. Each header is inlined where it is first included and dropped where
// it is included again; its include guard does the same across the sources that the export puts
// into one header file.

// libraryDir is where the library lies inside the template directory; an include names a file
// below it.
const libraryDir = "include"

var (
	// libraryIncludeRE matches an include line of the library (the whole line).
	libraryIncludeRE = regexp.MustCompile(`^[ \t]*#[ \t]*include[ \t]*"(tilegen/[A-Za-z0-9_]+\.cuh)"[ \t]*(//.*)?$`)
	// anyTilegenIncludeRE catches lines that look like a library include but do not name a
	// library file the way libraryIncludeRE wants (a subdirectory, "..", another suffix).
	anyTilegenIncludeRE = regexp.MustCompile(`^[ \t]*#[ \t]*include[ \t]*["<]tilegen/`)
)

// inlineLibrary replaces the library includes of src (the rendered text of what) by the headers'
// text, recursively.
func (ts *templateSet) inlineLibrary(src []byte, what string) ([]byte, error) {
	var out bytes.Buffer
	if err := ts.inlineInto(&out, src, what, map[string]bool{}); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

func (ts *templateSet) inlineInto(out *bytes.Buffer, src []byte, what string, seen map[string]bool) error {
	lines := bytes.SplitAfter(src, []byte("\n"))
	for i, line := range lines {
		text := strings.TrimRight(string(line), "\r\n")
		m := libraryIncludeRE.FindStringSubmatch(text)
		if m == nil {
			if anyTilegenIncludeRE.MatchString(text) {
				return fmt.Errorf("%s line %d: %s: a library include is #include \"tilegen/NAME.cuh\" (NAME of letters, digits and _)",
					what, i+1, strings.TrimSpace(text))
			}
			out.Write(line)
			continue
		}
		name := m[1]
		if seen[name] {
			continue
		}
		seen[name] = true
		file := path.Join(libraryDir, name)
		hdr, err := ts.libraryFile(file)
		if err != nil {
			return fmt.Errorf("%s line %d: #include %q: %w", what, i+1, name, err)
		}
		if err := ts.inlineInto(out, hdr, file, seen); err != nil {
			return err
		}
		if len(hdr) > 0 && hdr[len(hdr)-1] != '\n' {
			out.WriteByte('\n')
		}
	}
	return nil
}

// libraryFile reads a header of the library once.
func (ts *templateSet) libraryFile(file string) ([]byte, error) {
	if b, ok := ts.library[file]; ok {
		return b, nil
	}
	b, err := readFSFile(ts.fsys, file, ts.desc)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("no %s in %s", file, ts.desc)
		}
		return nil, templateReadError(file, ts.desc, err)
	}
	ts.library[file] = b
	return b, nil
}
