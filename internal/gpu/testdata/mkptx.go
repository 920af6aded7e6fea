//go:build ignore

// mkptx compiles the GPU tests' PTX fixtures (run through go generate in internal/gpu): the
// reference support kernel rendered from templates/support/reference.cu.tmpl, and fixtures.cu.
// The PTX is committed so that the GPU machine needs no CUDA toolkit build step.
package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"text/template"

	"tilegen/templates"
)

const arch = "sm_90"

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "mkptx: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	tmp, err := os.MkdirTemp("", "mkptx")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	t, err := template.ParseFS(templates.FS, "support/reference.cu.tmpl")
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, struct{ Arch string }{arch}); err != nil {
		return err
	}
	ref := filepath.Join(tmp, "reference.cu")
	if err := os.WriteFile(ref, buf.Bytes(), 0o644); err != nil {
		return err
	}
	for src, dst := range map[string]string{ref: "testdata/reference.ptx", "testdata/fixtures.cu": "testdata/fixtures.ptx"} {
		cmd := exec.Command("nvcc", "-ccbin", "g++-11", "-ptx", "-arch="+arch, "-o", dst, src)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("nvcc %s: %w", src, err)
		}
	}
	return nil
}
