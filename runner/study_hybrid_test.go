package main

import (
	"bytes"
	"strings"
	"testing"
)

// runner study hybrid is the hybrid F sweep: it takes runner hybrid's flags, not the studies'.
func TestStudyHybridIsTheHybridSweep(t *testing.T) {
	var out, errb bytes.Buffer
	err := run([]string{"study", "hybrid", "--cpu-rows", "auto"}, &out, &errb)
	if err == nil || !strings.Contains(err.Error(), "shape") {
		t.Fatalf("study hybrid without --shape: %v", err)
	}
	err = run([]string{"study", "hybrid", "--help"}, &out, &errb)
	if err != nil || !strings.Contains(errb.String()+out.String(), "--sweep") {
		t.Fatalf("study hybrid --help: %v\n%s%s", err, out.String(), errb.String())
	}
}
