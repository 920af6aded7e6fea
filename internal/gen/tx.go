package gen

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// A run writes --out as one transaction. Everything is compiled and staged in a private directory
// beside --out (".<out>.gen-tx-*"): its new/ is the complete next --out (gen's files, plus every
// file gen does not own, hard-linked from the old tree), its scratch/ is nvcc's working directory.
// One atomic rename (renameat2 RENAME_EXCHANGE on Linux) then swaps new/ and --out, so a run killed
// at any moment leaves --out either as it was or as the run made it. The private directory is
// removed on every exit path; one left by a run killed with -9 is not locked by any live gen, and
// the next run removes it.

var errNoExchange = errors.New("atomic directory exchange not supported")

const txMarker = ".gen-tx-"

// WriteStats counts what a commit changed.
type WriteStats struct{ Written, Unchanged, Removed int }

// tx is one run's transaction on --out.
type tx struct {
	out     string // --out, absolute, symbolic links resolved
	dir     string // the private directory: new/ and scratch/
	release func()
}

// beginTx removes abandoned transactions of earlier runs and opens a new one for out.
func beginTx(out string) (*tx, error) {
	abs, err := filepath.Abs(out)
	if err != nil {
		return nil, err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if info, err := os.Stat(abs); err == nil && !info.IsDir() {
		return nil, fmt.Errorf("--out %s: not a directory", out)
	}
	parent := filepath.Dir(abs)
	if parent == abs {
		return nil, fmt.Errorf("--out %s: cannot be the root of the file system", out)
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, err
	}
	if err := cleanLeftovers(abs); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(parent, "."+filepath.Base(abs)+txMarker+"*")
	if err != nil {
		return nil, err
	}
	t := &tx{out: abs, dir: dir, release: func() {}}
	if t.release, err = lockDir(dir); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("locking %s: %w", dir, err)
	}
	for _, sub := range []string{"new", "scratch"} {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o755); err != nil {
			t.close()
			return nil, err
		}
	}
	return t, nil
}

func (t *tx) scratch() string { return filepath.Join(t.dir, "scratch") }

// close removes the private directory (after a commit it holds the old tree) and its lock.
func (t *tx) close() {
	os.RemoveAll(t.dir)
	t.release()
}

// cleanLeftovers removes the transaction directories of gens that died. A run killed between the
// two renames of the fallback commit left --out missing and the old tree in old/: that is put back.
func cleanLeftovers(out string) error {
	parent, prefix := filepath.Dir(out), "."+filepath.Base(out)+txMarker
	entries, err := os.ReadDir(parent)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		d := filepath.Join(parent, e.Name())
		if !abandoned(d) {
			continue // a live gen's
		}
		if _, err := os.Lstat(out); errors.Is(err, fs.ErrNotExist) {
			os.Rename(filepath.Join(d, "old"), out) // put back what was --out, when there
		}
		if err := os.RemoveAll(d); err != nil {
			return fmt.Errorf("removing the leftover %s of an interrupted run: %w", d, err)
		}
	}
	return nil
}

// commit stages out in new/ and swaps it in. Files whose bytes are unchanged keep their inode
// (and mtime); files the previous manifest lists (owned) and out lacks are dropped; every other
// file under --out is kept. Nothing is swapped when nothing changed.
func (t *tx) commit(out Output, owned map[string]bool) (WriteStats, error) {
	staged := filepath.Join(t.dir, "new")
	st, err := stage(t.out, staged, out, owned)
	if err != nil || st.Written == 0 && st.Removed == 0 {
		return st, err
	}
	mode := fs.FileMode(0o755)
	if info, err := os.Stat(t.out); err == nil {
		mode = info.Mode().Perm()
	}
	if err := os.Chmod(staged, mode); err != nil {
		return st, err
	}
	if _, err := os.Lstat(t.out); errors.Is(err, fs.ErrNotExist) {
		return st, os.Rename(staged, t.out)
	}
	switch err := exchange(staged, t.out); {
	case errors.Is(err, errNoExchange):
		old := filepath.Join(t.dir, "old")
		if err := os.Rename(t.out, old); err != nil {
			return st, err
		}
		if err := os.Rename(staged, t.out); err != nil {
			return st, errors.Join(err, os.Rename(old, t.out))
		}
		staged = old
	case err != nil:
		return st, err
	}
	// staged now holds the old tree: keep what was created or replaced there while new/ was staged.
	return st, rescue(staged, t.out, func(rel string) bool { _, ours := out[rel]; return !ours && !owned[rel] })
}

// stage builds dst (an empty directory) as the next --out from old's tree and out.
func stage(old, dst string, out Output, owned map[string]bool) (WriteStats, error) {
	var st WriteStats
	outDirs := map[string]bool{}
	for rel := range out {
		outDirs[path.Dir(rel)] = true
	}
	done := map[string]bool{}
	var conflicts, dirs []string
	err := filepath.WalkDir(old, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == old && errors.Is(err, fs.ErrNotExist) {
				return fs.SkipAll // a first run
			}
			return err
		}
		if p == old {
			return nil
		}
		rel := filepath.ToSlash(p[len(old)+1:])
		if outDirs[rel] && !d.IsDir() {
			return linkedDirError(old, rel)
		}
		if d.IsDir() {
			dirs = append(dirs, rel)
			return os.Mkdir(filepath.Join(dst, rel), 0o755)
		}
		if want, ours := out[rel]; ours {
			if d.Type().IsRegular() && sameBytes(p, want) {
				done[rel] = true
				st.Unchanged++
				return carry(p, filepath.Join(dst, rel))
			}
			if !owned[rel] {
				conflicts = append(conflicts, rel)
			}
			return nil // written below
		}
		if owned[rel] {
			st.Removed++
			return nil
		}
		return carry(p, filepath.Join(dst, rel))
	})
	if err != nil {
		return st, err
	}
	if len(conflicts) > 0 {
		return st, conflictError(old, conflicts)
	}
	for _, rel := range sortedKeys(out) {
		if done[rel] {
			continue
		}
		p := filepath.Join(dst, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return st, err
		}
		if err := os.WriteFile(p, out[rel], 0o644); err != nil {
			return st, fmt.Errorf("staging %s: %w", rel, err)
		}
		st.Written++
	}
	for _, rel := range dirs { // after their contents: a read-only folder is filled first
		info, err := os.Stat(filepath.Join(old, rel))
		if err != nil {
			return st, err
		}
		if err := os.Chmod(filepath.Join(dst, rel), info.Mode().Perm()); err != nil {
			return st, err
		}
	}
	for _, d := range ownedDirs {
		os.Remove(filepath.Join(dst, d)) // only when empty: no empty ptx/ after --no-compile
	}
	return st, nil
}

// rescue moves into the new --out every file of the old tree that is not gen's (keep) and was
// created or replaced (editors save by rename) after stage linked it.
func rescue(oldTree, out string, keep func(rel string) bool) error {
	return filepath.WalkDir(oldTree, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel := p[len(oldTree)+1:]
		if !keep(filepath.ToSlash(rel)) {
			return nil
		}
		target := filepath.Join(out, rel)
		a, err1 := os.Lstat(p)
		b, err2 := os.Lstat(target)
		if err1 == nil && err2 == nil && os.SameFile(a, b) {
			return nil
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		return os.Rename(p, target)
	})
}

func sortedKeys(out Output) []string {
	names := make([]string, 0, len(out))
	for n := range out {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func sameBytes(p string, want []byte) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || st.Size() != int64(len(want)) {
		return false
	}
	got, err := io.ReadAll(f)
	return err == nil && bytes.Equal(got, want)
}

// carry puts src's file at dst: a hard link (the same inode, so the same bytes and mtime; a
// symbolic link is linked, not followed), or a copy where the file system refuses links.
func carry(src, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	lerr := os.Link(src, dst)
	if lerr == nil {
		return nil
	}
	info, err := os.Lstat(src)
	if err != nil {
		return err
	}
	switch {
	case info.Mode()&fs.ModeSymlink != 0:
		target, err := os.Readlink(src)
		if err != nil {
			return err
		}
		return os.Symlink(target, dst)
	case info.Mode().IsRegular():
		b, err := os.ReadFile(src)
		if err != nil {
			return fmt.Errorf("keeping %s: %w", src, err)
		}
		if err := os.WriteFile(dst, b, info.Mode().Perm()); err != nil {
			return err
		}
		return os.Chtimes(dst, info.ModTime(), info.ModTime())
	default:
		return fmt.Errorf("keeping %s: %w", src, lerr)
	}
}

// linkedDirError refuses an output folder that is a symbolic link (or not a directory): gen would
// otherwise write into, or delete from, the place it points to.
func linkedDirError(out, rel string) error {
	p := filepath.Join(out, filepath.FromSlash(rel))
	if target, err := os.Readlink(p); err == nil {
		return fmt.Errorf("%s is a symbolic link (to %s): gen writes only into real directories under --out "+
			"and will not follow it; replace it with a directory", p, target)
	}
	return fmt.Errorf("%s is not a directory: gen writes its %s files there; move it away", p, rel)
}

// checkOutDirs refuses, before any work, output folders under out that are not directories.
func checkOutDirs(out string) error {
	for _, d := range ownedDirs {
		if info, err := os.Lstat(filepath.Join(out, d)); err == nil && !info.IsDir() {
			return linkedDirError(out, d)
		}
	}
	return nil
}

func conflictError(out string, rels []string) error {
	sort.Strings(rels)
	n := len(rels)
	if n > 5 {
		rels = append(rels[:5], fmt.Sprintf("and %d more", n-5))
	}
	return fmt.Errorf("%s: %d file(s) that gen would overwrite are not listed in %s as generated by gen: %s "+
		"(move them away, or restore the manifest that lists them)",
		out, n, filepath.Join(out, "manifest.json"), strings.Join(rels, ", "))
}
