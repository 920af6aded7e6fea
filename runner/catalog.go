package main

import (
	"tilegen/generated"
	"tilegen/internal/analysis"
	"tilegen/internal/orchestrator"
)

// defaultCatalog is the catalog used without --generated: the registry compiled into the runner,
// so a built runner needs no files beside it. --generated DIR reads a generated directory instead
// (another --out of gen, or a test fixture).
func defaultCatalog() orchestrator.Catalog {
	return orchestrator.FuncCatalog{
		List:        generated.Variants,
		Load:        generated.PTX,
		Support:     generated.SupportPTX,
		NVCCVersion: generated.NVCC,
		Target:      generated.Arch,
	}
}

func loadCatalog(dir string) (orchestrator.Catalog, error) {
	if dir == "" {
		return defaultCatalog(), nil
	}
	c, err := orchestrator.LoadDir(dir)
	if err != nil {
		return nil, err
	}
	// Records carry only a family name: the reports model them as this catalog's variants.yaml says.
	analysis.UseCatalog(c.Variants())
	return c, nil
}
