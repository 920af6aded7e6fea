// Package templates holds the CUDA kernel templates tilegen renders, one file per family
// (<family>.cu.tmpl), the shared blocks they use (common.cu.tmpl), the CUDA header library the
// families include (include/tilegen/*.cuh: loaders, fragment math, main loops, epilogue, edge
// guards, split-K reductions; the generator inlines it into each generated source) and the support
// kernels the runner needs (support/<name>.cu.tmpl: the float64 reference, the FP32 peak probe).
//
// Adding a family is adding a template file here and an entry in variants.yaml: the files are
// embedded by pattern, so no Go change is needed.
package templates

import "embed"

// FS holds every template.
//
//go:embed *.cu.tmpl support/*.cu.tmpl include/tilegen/*.cuh
var FS embed.FS
