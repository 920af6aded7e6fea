package export

import (
	"strings"
	"testing"

	"tilegen/internal/variant"
)

// TestStateDoc: kernels whose PTX declares a tg_ module global (a split-K or stream-K workspace or
// counters) are named in the concurrency paragraph of both outputs; read-only tables of the CUDA
// headers and kernels without globals are not.
func TestStateDoc(t *testing.T) {
	mk := func(name, ptx string) Chosen {
		return Chosen{V: variant.Variant{Name: name}, src: source{ptx: ptx}}
	}
	p := &Plan{Variants: []Chosen{
		mk("plain", ".visible .entry plain(\n)\n{\n\tret;\n}\n"),
		mk("table", ".global .align 4 .b8 _ZZN4cuda3std3__48__detail21__stronger_order_cudaEiiE7__xform[16] = {3, 0};\n"),
		mk("splitka_x", ".global .align 16 .b8 tg_ska_ws_splitka_x[16777216];\n.global .align 4 .b8 tg_ska_cnt_splitka_x[33796];\n"),
		mk("streamk_y", ".visible .global .align 16 .b8 tg_sk_ws_streamk_y[64];\n"),
	}}
	d := stateDoc(p, 0)
	if !strings.Contains(d, "2 of the 4 kernels") || !strings.Contains(d, "splitka_x, streamk_y") {
		t.Fatalf("stateDoc names the wrong kernels:\n%s", d)
	}
	if strings.Contains(d, "plain") || strings.Contains(d, "table") {
		t.Fatalf("stateDoc names a kernel without state:\n%s", d)
	}
	if stateDoc(&Plan{Variants: p.Variants[:2]}, 0) != "" {
		t.Fatal("stateDoc without a stateful kernel is not empty")
	}
}
