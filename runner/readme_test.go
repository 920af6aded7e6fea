//go:build !gpu

package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// docsWithCommands are the documents whose ```sh blocks TestDocCommands runs, relative to the
// repository root.
var docsWithCommands = []string{"README.md", "docs/gpu-runs.md"}

// shBlock is one ```sh block of a document and the readme-test marker before it.
type shBlock struct {
	file string
	line int    // of the opening fence
	mode string // run, slow, gpu or skip
	why  string // skip's reason
	text string
}

// markerPrefix opens the HTML comment that says how a block is tested:
//
//	<!-- readme-test: run -->          runs everywhere, also with -short
//	<!-- readme-test: slow -->         runs without -short (builds, go run)
//	<!-- readme-test: gpu -->          needs a GPU: never run here
//	<!-- readme-test: skip: REASON --> not run, for the reason given
const markerPrefix = "<!-- readme-test:"

// shBlocks parses a Markdown document's ```sh blocks; a block without a marker on the nearest
// non-blank line before it is an error, so that no command goes untested by oversight.
func shBlocks(path, name string) ([]shBlock, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []shBlock
	var errs []string
	sc := bufio.NewScanner(f)
	prev := "" // the last non-blank line outside a block
	var cur *shBlock
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		switch {
		case cur != nil && trimmed == "```":
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.text += line + "\n"
		case trimmed == "```sh":
			cur = &shBlock{file: name, line: n}
			m := strings.TrimSpace(strings.TrimPrefix(prev, markerPrefix))
			if !strings.HasPrefix(prev, markerPrefix) || !strings.HasSuffix(m, "-->") {
				errs = append(errs, fmt.Sprintf("%s:%d: ```sh block without a %s run|slow|gpu|skip: REASON --> line before it", name, n, markerPrefix))
				continue
			}
			m = strings.TrimSpace(strings.TrimSuffix(m, "-->"))
			mode, why, _ := strings.Cut(m, ":")
			cur.mode, cur.why = strings.TrimSpace(mode), strings.TrimSpace(why)
			switch {
			case cur.mode == "skip" && cur.why == "":
				errs = append(errs, fmt.Sprintf("%s:%d: readme-test skip needs a reason", name, n))
			case cur.mode != "run" && cur.mode != "slow" && cur.mode != "gpu" && cur.mode != "skip":
				errs = append(errs, fmt.Sprintf("%s:%d: unknown readme-test mode %q", name, n, cur.mode))
			}
		case trimmed != "":
			prev = trimmed
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if cur != nil {
		errs = append(errs, fmt.Sprintf("%s:%d: unterminated ```sh block", name, cur.line))
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return out, nil
}

// TestShBlocksParse: the parser finds blocks, their markers and refuses unmarked blocks.
func TestShBlocksParse(t *testing.T) {
	dir := t.TempDir()
	doc := "# x\n\n<!-- readme-test: run -->\n```sh\necho a \\\n  b\n```\n\ntext\n\n<!-- readme-test: skip: needs X -->\n\n```sh\nfalse\n```\n"
	p := filepath.Join(dir, "d.md")
	os.WriteFile(p, []byte(doc), 0o644)
	bs, err := shBlocks(p, "d.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 2 || bs[0].mode != "run" || bs[0].line != 4 || bs[0].text != "echo a \\\n  b\n" ||
		bs[1].mode != "skip" || bs[1].why != "needs X" {
		t.Errorf("blocks: %+v", bs)
	}
	for _, bad := range []string{"```sh\nls\n```\n", "<!-- readme-test: sometimes -->\n```sh\nls\n```\n",
		"<!-- readme-test: skip -->\n```sh\nls\n```\n", "text\n```sh\nls\n```\n"} {
		os.WriteFile(p, []byte(bad), 0o644)
		if _, err := shBlocks(p, "d.md"); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

// TestDocCommands runs every command the README and docs show for machines without a GPU, each
// block in a fresh bash in a copy of the repository (so that commands that write into it change
// nothing here), with bin/runner built from this package. Blocks marked slow (builds, go run) run
// only without -short; GPU blocks never run here.
func TestDocCommands(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	var blocks []shBlock
	for _, name := range docsWithCommands {
		bs, err := shBlocks(filepath.Join(root, name), name)
		if err != nil {
			t.Fatal(err)
		}
		blocks = append(blocks, bs...)
	}
	var work string // the copy, made when the first block runs
	t.Cleanup(func() {
		if work != "" {
			os.RemoveAll(work)
		}
	})
	for _, b := range blocks {
		t.Run(fmt.Sprintf("%s:%d", b.file, b.line), func(t *testing.T) {
			switch {
			case b.mode == "gpu":
				t.Skip("needs a GPU")
			case b.mode == "skip":
				t.Skip(b.why)
			case b.mode == "slow" && testing.Short():
				t.Skip("slow (builds or go run): runs without -short")
			}
			if work == "" {
				if work, err = os.MkdirTemp("", "tilegen-doc-commands"); err != nil {
					t.Fatal(err)
				}
				if err := copyTree(root, work); err != nil {
					t.Fatal(err)
				}
				if err := copyFile(runnerBin, filepath.Join(work, "bin", "runner"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", b.text)
			cmd.Dir = work
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Errorf("%s:%d: %v\n%s\noutput:\n%s", b.file, b.line, err, b.text, out)
			}
		})
	}
}

// copyTree copies the repository at src to dst, leaving out .git and bin (build outputs).
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		if d.IsDir() && (rel == ".git" || rel == "bin") {
			return filepath.SkipDir
		}
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case info.Mode()&fs.ModeSymlink != 0:
			link, err := os.Readlink(path)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		case info.Mode().IsRegular():
			return copyFile(path, target, info.Mode().Perm())
		}
		return nil
	})
}

func copyFile(src, dst string, perm fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
