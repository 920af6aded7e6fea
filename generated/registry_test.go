package generated

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"

	"tilegen/internal/variant"
)

// TestRegistryMatchesManifest: the registry (the built-in catalog the runner and its worker launch
// by) and manifest.json (what an export reads) describe every variant field for field. A field the
// registry left out once (the split rule's balance) made the tuner time the _b0 kernels on another
// slice count than the export launches them with.
func TestRegistryMatchesManifest(t *testing.T) {
	b, err := os.ReadFile("manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	var m variant.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	got := Variants()
	if len(got) != len(m.Variants) {
		t.Fatalf("registry has %d variants, manifest.json %d", len(got), len(m.Variants))
	}
	for i := range got {
		g, w := got[i], m.Variants[i]
		if !reflect.DeepEqual(g.Split, w.Split) {
			t.Errorf("%s: split rule: registry %+v, manifest %+v", w.Name, g.Split, w.Split)
		}
		g.Split, w.Split = nil, nil
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s: registry %+v\nmanifest %+v", w.Name, g, w)
		}
	}
}
