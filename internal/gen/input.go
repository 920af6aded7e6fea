package gen

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// maxInputBytes caps every file gen reads (the config, each template): a variant matrix or a
// template is a few KiB, and a path like /dev/zero must fail instead of reading forever.
const maxInputBytes = 8 << 20

// readCapped reads r to the end, failing once it passes maxInputBytes; name is for the message.
func readCapped(r io.Reader, name string) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxInputBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	if len(b) > maxInputBytes {
		return nil, fmt.Errorf("%s: larger than %d MiB, the limit for an input file", name, maxInputBytes>>20)
	}
	return b, nil
}

// readInputFile reads a file named on the command line (--config), capped.
func readInputFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return nil, fmt.Errorf("%s: is a directory", path)
	}
	return readCapped(f, path)
}

// readFSFile reads name from fsys, capped; desc names fsys in messages.
func readFSFile(fsys fs.FS, name, desc string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readCapped(f, name+" in "+desc)
}

// openTemplates returns the embedded templates, or the --templates directory opened as an os.Root:
// nothing inside it, symbolic links included, can reach a file outside it.
func openTemplates(embedded fs.FS, dir string) (fsys fs.FS, desc string, closeFn func(), err error) {
	if dir == "" {
		return embedded, "the embedded templates", func() {}, nil
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, "", nil, &usageError{fmt.Errorf("--templates %s: not a directory", dir)}
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, "", nil, fmt.Errorf("--templates %s: %w", dir, err)
	}
	return root.FS(), dir, func() { root.Close() }, nil
}

// templateReadError explains a failed template read; os.Root reports a link out of the
// directory as "path escapes from parent".
func templateReadError(file, desc string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("template %s not found in %s", file, desc)
	case isEscape(err):
		return fmt.Errorf("%s in %s: a symbolic link leads out of the template directory; "+
			"templates must lie inside it", file, desc)
	default:
		return fmt.Errorf("reading template %s from %s: %w", file, desc, err)
	}
}

// isEscape reports whether err is os.Root refusing a path that leaves its root.
func isEscape(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && pe.Err != nil && pe.Err.Error() == "path escapes from parent"
}
