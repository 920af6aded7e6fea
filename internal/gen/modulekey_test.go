package gen

import (
	"context"
	"testing"

	"tilegen/internal/variant"
)

// A variant named like a support kernel keeps its own PTX: compiled modules are keyed by kind and
// name, not by the bare name (issue 14 §2; the YAML check rejects such names as well).
func TestVariantNamedLikeSupportKernel(t *testing.T) {
	srcs := []Source{
		{Name: "reference", Support: true, Code: []byte("support source")},
		{Name: "reference", Code: []byte("variant source"), Planned: &Planned{V: variant.Variant{Name: "reference"}}},
	}
	ptx := map[bool]string{true: "// support PTX\n", false: "// variant PTX\n"}
	serve := func(s Source) (*Compiled, bool) { return &Compiled{PTX: []byte(ptx[s.Support]), Reused: true}, true }
	compiled, err := CompileAll(context.Background(), nil, srcs, serve, t.TempDir(), 1)
	if err != nil {
		t.Fatal(err)
	}
	out, err := BuildOutput(srcs, compiled, &Toolchain{Version: "release 11.8, V11.8.89", Arch: "sm_90"}, "sm_90")
	if err != nil {
		t.Fatal(err)
	}
	if got := string(out["ptx/reference.ptx"]); got != ptx[false] {
		t.Errorf("variant reference got PTX %q, want %q", got, ptx[false])
	}
	if got := string(out["support/reference.ptx"]); got != ptx[true] {
		t.Errorf("support kernel reference got PTX %q, want %q", got, ptx[true])
	}
}
