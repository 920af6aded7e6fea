package orchestrator

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"tilegen/internal/resultsdir"
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

// SupportCatalog is a Catalog that also holds the support kernels (templates/support): the
// float64 reference the workers verify against, the FFMA peak probe.
type SupportCatalog interface {
	Catalog
	SupportPTX(name string) (string, error)
}

// WorkerArgs are the worker arguments a catalog implies: the runner hands its workers the
// reference kernel of the catalog it plans from (written to a content-addressed file in the temp
// directory), so that a worker never carries a catalog of its own and always verifies against the
// reference generated with the variants. A catalog without one gives no arguments; such a worker
// can time but not verify, and says so.
func WorkerArgs(c Catalog) ([]string, error) {
	sc, ok := c.(SupportCatalog)
	if !ok {
		return nil, nil
	}
	var args []string
	// The reference verifies; the epilogue kernel is the separate pass of the cublas+epilogue
	// baseline (issue 16); the gate holds the stream while a batch of timed launches is queued. A
	// catalog without one gives no argument for it.
	for _, sup := range []struct{ name, flag string }{{"reference", "--reference-ptx"}, {"epilogue", "--epilogue-ptx"}, {"gate", "--gate-ptx"}} {
		ptx, err := sc.SupportPTX(sup.name)
		if err != nil {
			continue
		}
		sum := sha256.Sum256([]byte(ptx))
		path := filepath.Join(os.TempDir(), "tilegen-"+sup.name+"-"+hex.EncodeToString(sum[:8])+".ptx")
		if b, err := os.ReadFile(path); err != nil || string(b) != ptx {
			if err := resultsdir.WriteAtomic(path, []byte(ptx)); err != nil {
				return nil, fmt.Errorf("writing the %s kernel for the workers: %w", sup.name, err)
			}
		}
		args = append(args, sup.flag, path)
	}
	return args, nil
}

// FuncCatalog adapts the generated registry package (generated.Variants, generated.PTX,
// generated.NVCC, generated.Arch) to a Catalog without this package importing it.
type FuncCatalog struct {
	List        func() []variant.Variant
	Load        func(name string) (string, error)
	Support     func(name string) (string, error)
	NVCCVersion string
	Target      string
}

func (c FuncCatalog) Variants() []variant.Variant {
	vs := append([]variant.Variant(nil), c.List()...)
	variant.SortByName(vs)
	return vs
}
func (c FuncCatalog) PTX(name string) (string, error) { return c.Load(name) }
func (c FuncCatalog) SupportPTX(name string) (string, error) {
	if c.Support == nil {
		return "", fmt.Errorf("support kernel %q: catalog has none", name)
	}
	return c.Support(name)
}
func (c FuncCatalog) NVCC() string { return c.NVCCVersion }
func (c FuncCatalog) Arch() string { return c.Target }

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

// SupportPTX reads dir/support/<name>.ptx.
func (c *DirCatalog) SupportPTX(name string) (string, error) {
	if !variant.IsIdent(name) {
		return "", fmt.Errorf("support kernel %q: not a name", name)
	}
	b, err := os.ReadFile(filepath.Join(c.dir, "support", name+".ptx"))
	if err != nil {
		return "", fmt.Errorf("support kernel %s: %w", name, err)
	}
	return string(b), nil
}

func (c *DirCatalog) NVCC() string { return c.m.NVCC }
func (c *DirCatalog) Arch() string { return c.m.Arch }
