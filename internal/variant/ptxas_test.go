package variant

import (
	"testing"
)

func TestParsePTXAS(t *testing.T) {
	out := `ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'other' for 'sm_90'
ptxas info    : Function properties for other
    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads
ptxas info    : Used 255 registers, 100 bytes smem, 380 bytes cmem[0]
ptxas info    : Compiling entry function 'k' for 'sm_90'
ptxas info    : Function properties for k
    16 bytes stack frame, 12 bytes spill stores, 8 bytes spill loads
ptxas info    : Used 40 registers, 8192 bytes smem, 380 bytes cmem[0]
`
	r, err := ParsePTXAS(out, "k")
	if err != nil {
		t.Fatal(err)
	}
	if r.Registers != 40 || r.SharedStatic != 8192 || r.StackFrame != 16 || r.SpillStores != 12 || r.SpillLoads != 8 {
		t.Errorf("got %+v", r)
	}
	if _, err := ParsePTXAS(out, "missing"); err == nil {
		t.Error("want an error for an entry ptxas did not report")
	}
}

func TestParseCUDARelease(t *testing.T) {
	out := "nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 11.8, V11.8.89\nBuild cuda_11.8.r11.8/compiler.31833905_0\n"
	if got := ParseCUDARelease(out); got != "release 11.8, V11.8.89" {
		t.Errorf("got %q", got)
	}
	if got := ParseCUDARelease("ptxas: NVIDIA (R) Ptx optimizing assembler\nCuda compilation tools, release 13.0, V13.0.88\n"); got != "release 13.0, V13.0.88" {
		t.Errorf("ptxas: got %q", got)
	}
	if got := ParseCUDARelease("no version here\n"); got != "" {
		t.Errorf("no release: got %q", got)
	}
}
