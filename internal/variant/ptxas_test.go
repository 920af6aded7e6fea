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
