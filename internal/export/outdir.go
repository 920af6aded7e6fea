package export

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// owned is what a previous export in an existing --out wrote: the only files --force may replace
// or remove.
type owned map[string]bool

// ownedName matches every file name an export writes (see Prepare): a file at the top, or a PTX.
var ownedName = regexp.MustCompile(`^(ptx/)?[A-Za-z0-9_][A-Za-z0-9_.-]*$`)

// previousExport checks an existing out: without force it is refused; with force it must be empty
// (nil owned, non-nil) or hold a previous export, whose provenance says which files it wrote. A
// missing out gives nil.
func previousExport(out string, force bool) (owned, error) {
	fi, err := os.Lstat(out)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("--out: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("--out %s exists and is not a directory", out)
	}
	if !force {
		return nil, fmt.Errorf("--out %s exists (use --force to replace a previous export)", out)
	}
	ents, err := os.ReadDir(out)
	if err != nil {
		return nil, fmt.Errorf("--out: %w", err)
	}
	own := owned{}
	found := len(ents) == 0
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".json") || !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(out, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("--out: %w", err)
		}
		var pv Provenance
		if json.Unmarshal(b, &pv) != nil || pv.Exporter != Exporter {
			continue
		}
		files := pv.Files
		if files == nil {
			files = legacyFiles(pv)
		}
		for _, f := range files {
			if !ownedName.MatchString(f) {
				return nil, fmt.Errorf("--out %s: the previous export's %s lists %q, not a file an export writes: not replacing it",
					out, e.Name(), f)
			}
			own[f] = true
		}
		own[e.Name()] = true
		found = true
	}
	if !found {
		return nil, fmt.Errorf("--out %s is not empty and holds no previous export: not replacing it even with --force", out)
	}
	return own, nil
}

// legacyFiles are the files of an export whose provenance predates its file list: the Go files it
// wrote then, the header and the PTX of its variants.
func legacyFiles(pv Provenance) []string {
	files := []string{"dispatch.go", "sgemm.go", "dynshared.go", pv.Name + ".cuh"}
	for _, v := range pv.Variants {
		files = append(files, "ptx/"+v.Name+".ptx")
	}
	return files
}

func sortedNames(files map[string][]byte) []string {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// stage writes the files into a new temporary directory under dir.
func stage(dir, prefix string, files map[string][]byte) (string, error) {
	tmp, err := os.MkdirTemp(dir, prefix)
	if err != nil {
		return "", fmt.Errorf("write export: %w", err)
	}
	for _, n := range sortedNames(files) {
		p := filepath.Join(tmp, filepath.FromSlash(n))
		err := os.MkdirAll(filepath.Dir(p), 0o755)
		if err == nil {
			err = os.WriteFile(p, files[n], 0o644)
		}
		if err != nil {
			os.RemoveAll(tmp)
			return "", fmt.Errorf("write export: %w", err)
		}
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		os.RemoveAll(tmp)
		return "", fmt.Errorf("write export: %w", err)
	}
	return tmp, nil
}

// writeNew writes the files into a fresh sibling directory and renames it to out, so that a failed
// export leaves nothing behind.
func writeNew(out string, files map[string][]byte) error {
	parent := filepath.Dir(out)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	tmp, err := stage(parent, "."+filepath.Base(out)+".new-", files)
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if _, err := os.Lstat(out); err == nil {
		return fmt.Errorf("--out %s appeared during the export", out)
	}
	if err := os.Rename(tmp, out); err != nil {
		return fmt.Errorf("write export: %w", err)
	}
	return nil
}

// replace puts the files into an existing out that holds a previous export: each is written in
// full beside its place first and then renamed over it, files the previous export wrote and this
// one does not are removed, and nothing else in out is touched. A file in the way that the
// previous export did not write stops the export before anything changes. Every path is resolved
// inside out (os.Root), so a symbolic link cannot lead a write or a removal outside it.
func replace(out string, files map[string][]byte, prev owned) error {
	root, err := os.OpenRoot(out)
	if err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	defer root.Close()
	names := sortedNames(files)
	for _, n := range names {
		if _, err := root.Lstat(n); err == nil && !prev[n] {
			return fmt.Errorf("--out %s: %s exists and was not written by the previous export: not overwriting it", out, n)
		}
	}
	for _, n := range names {
		if d := path.Dir(n); d != "." {
			if err := root.MkdirAll(d, 0o755); err != nil {
				return fmt.Errorf("--out %s: %w", out, err)
			}
		}
	}
	tmp, err := stage(out, ".export-new-", files)
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	rel := filepath.Base(tmp)
	for _, n := range names {
		if err := root.Rename(path.Join(rel, n), n); err != nil {
			return fmt.Errorf("--out %s: %w", out, err)
		}
	}
	for n := range prev {
		if _, ok := files[n]; ok {
			continue
		}
		if err := root.Remove(n); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("--out %s: remove %s of the previous export: %w", out, n, err)
		}
	}
	// ptx/ goes when the previous export's PTX were all it held.
	if ents, err := fs.ReadDir(root.FS(), "ptx"); err == nil && len(ents) == 0 {
		if err := root.Remove("ptx"); err != nil {
			return fmt.Errorf("--out %s: %w", out, err)
		}
	}
	return nil
}
