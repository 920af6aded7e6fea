package orchestrator

import (
	"strings"
	"testing"

	"tilegen/internal/protocol"
	"tilegen/internal/variant"
)

// TestFilterPrecision: without --precision only FP32 variants are selected (a tensor-core kernel
// runs only when allowed); --precision selects exactly the named precisions; the plan pairs a
// variant only with problems of its precision.
func TestFilterPrecision(t *testing.T) {
	mk := func(name string, p variant.Precision) variant.Variant {
		return variant.Variant{Name: name, Family: "f", Precision: p, Block: variant.Dim2{X: 32, Y: 1},
			Tile: variant.Tile{Rows: 32, Cols: 32}, GridZ: 1}
	}
	all := []variant.Variant{mk("a", variant.PrecisionFP32), mk("a_3xtf32", variant.Precision3xTF32), mk("a_tf32", variant.PrecisionTF32)}
	names := func(vs []variant.Variant) string {
		var out []string
		for _, v := range vs {
			out = append(out, v.Name)
		}
		return strings.Join(out, ",")
	}
	got, err := Filter{}.Select(all)
	if err != nil || names(got) != "a" {
		t.Errorf("default: %s %v, want a", names(got), err)
	}
	got, err = Filter{Precisions: []variant.Precision{variant.Precision3xTF32, variant.PrecisionTF32}}.Select(all)
	if err != nil || names(got) != "a_3xtf32,a_tf32" {
		t.Errorf("3xtf32,tf32: %s %v", names(got), err)
	}
	if _, err := (Filter{Globs: []string{"a_*"}}).Select(all); err == nil || !strings.Contains(err.Error(), "--precision") {
		t.Errorf("a_* without --precision: %v, want an error pointing at --precision", err)
	}
	shapes := []protocol.Shape{{M: 64, N: 64, K: 64}, {M: 64, N: 64, K: 64, Precision: variant.Precision3xTF32}}
	items, err := buildPlan(all, shapes, Strategy{}, Shard{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		if it.V != nil && it.V.Precision != it.Shape.Precision {
			t.Errorf("planned %s on %+v", it.V.Name, it.Shape)
		}
	}
	if len(items) != 2 {
		t.Errorf("%d items, want 2 (a on FP32, a_3xtf32 on 3xtf32)", len(items))
	}
}
