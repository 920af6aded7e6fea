// Package generated holds tilegen's generated SGEMM kernels: one CUDA source (cuda/<variant>.cu) and
// one PTX module (ptx/<variant>.ptx) per variant of variants.yaml, the support kernels' PTX
// (support/<name>.ptx), manifest.json and registry.go, which embeds the PTX and exposes
//
//	Variants() []variant.Variant          // sorted by name
//	Lookup(name string) (variant.Variant, bool)
//	PTX(name string) (string, error)
//	SupportPTX(name string) (string, error)
//	NVCC, Arch, GeneratorVersion          // how the PTX was made
//
// Everything here except this file is written by the generator (gen/) and committed; do not edit
// it by hand. Regenerate after changing variants.yaml or templates/ with `go generate ./...` (or
// `make generate`, or `go run ./gen` from the repository root); `make check-generated` fails when
// the committed files are stale. Only variants whose source changed are recompiled.
package generated

//go:generate go run ../gen --config ../variants.yaml --out .
