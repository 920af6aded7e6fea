package orchestrator

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"tilegen/internal/variant"
)

// Catalog is where the runner gets its variants and their PTX: the generated registry compiled into
// the runner, or a generated directory on disk (manifest.json + ptx/<name>.ptx).
type Catalog interface {
	// Variants returns every variant, sorted by name.
	Variants() []variant.Variant
	// PTX returns the PTX text of the named variant.
	PTX(name string) (string, error)
	// NVCC is the nvcc version line the PTX was compiled with.
	NVCC() string
	// Arch is the PTX target (sm_90).
	Arch() string
}

// FuncCatalog adapts the generated registry package (generated.Variants, generated.PTX,
// generated.NVCC, generated.Arch) to a Catalog without this package importing it.
type FuncCatalog struct {
	List        func() []variant.Variant
	Load        func(name string) (string, error)
	NVCCVersion string
	Target      string
}

func (c FuncCatalog) Variants() []variant.Variant {
	vs := append([]variant.Variant(nil), c.List()...)
	variant.SortByName(vs)
	return vs
}
func (c FuncCatalog) PTX(name string) (string, error) { return c.Load(name) }
func (c FuncCatalog) NVCC() string                    { return c.NVCCVersion }
func (c FuncCatalog) Arch() string                    { return c.Target }

// DirCatalog reads a generated directory: manifest.json and ptx/<name>.ptx.
type DirCatalog struct {
	dir string
	m   variant.Manifest
}

// LoadDir reads dir/manifest.json; PTX files are read on demand.
func LoadDir(dir string) (*DirCatalog, error) {
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		return nil, fmt.Errorf("read catalog: %w", err)
	}
	c := &DirCatalog{dir: dir}
	if err := json.Unmarshal(b, &c.m); err != nil {
		return nil, fmt.Errorf("parse %s: %w", filepath.Join(dir, "manifest.json"), err)
	}
	variant.SortByName(c.m.Variants)
	return c, nil
}

func (c *DirCatalog) Variants() []variant.Variant {
	return append([]variant.Variant(nil), c.m.Variants...)
}

func (c *DirCatalog) PTX(name string) (string, error) {
	if !variant.IsIdent(name) {
		return "", fmt.Errorf("ptx %q: not a variant name", name)
	}
	b, err := os.ReadFile(filepath.Join(c.dir, "ptx", name+".ptx"))
	if err != nil {
		return "", fmt.Errorf("ptx of %s: %w", name, err)
	}
	return string(b), nil
}

func (c *DirCatalog) NVCC() string { return c.m.NVCC }
func (c *DirCatalog) Arch() string { return c.m.Arch }
