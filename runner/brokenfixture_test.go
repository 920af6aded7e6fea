package main

import (
	"bytes"
	"os"
	"testing"

	"tilegen/templates"
)

// TestBrokenFixtureReferenceIsCurrent: the GPU test's catalog of broken kernels (testdata/broken)
// carries its own copy of the reference support template, and the worker verifies its sweep with
// the PTX generated from it. A copy left behind the real one fails there on the GPU only (it did:
// the reference gained the op arguments and the fixture's kept the old signature, so every launch
// faulted). After changing templates/support/reference.cu.tmpl, copy it and regenerate:
//
//	cp templates/support/reference.cu.tmpl runner/testdata/broken/templates/support/
//	go run ./gen --config runner/testdata/broken/variants.yaml --templates runner/testdata/broken/templates --out runner/testdata/broken/generated
func TestBrokenFixtureReferenceIsCurrent(t *testing.T) {
	want, err := templates.FS.ReadFile("support/reference.cu.tmpl")
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("testdata/broken/templates/support/reference.cu.tmpl")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("testdata/broken/templates/support/reference.cu.tmpl differs from templates/support/reference.cu.tmpl: copy it and regenerate (see this test's comment)")
	}
}
