package main

import (
	"tilegen/generated"
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
	return orchestrator.LoadDir(dir)
}
