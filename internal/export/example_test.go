package export

import (
	"bytes"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// exampleResults are the results the committed export of examples/export-go is made from: the
// seed-family tune (it predates record hashes), the register-tiled ops (NT, TN, TT; NT and TT also
// with the transposed B in the cp.async ring), the strided
// batches and the fused epilogues, all measured on the H100.
var exampleResults = []string{
	"results/h100-seeds/tune",
	"results/h100-seeds/verify",
	"results/ops-h100/regtile-op/tune-ops",
	"results/ops-h100/regtile-op/verify",
	"results/ops-h100/btring/tune",
	"results/ops-h100/btring/verify",
	"results/batch-h100/call1/tune-batch",
	"results/batch-h100/call2/tune-batch",
	"results/batch-h100/call2/verify",
	"results/epilogue-h100/run3/bench/nvidia-h100-80gb-hbm3/tune",
	"results/epilogue-h100/run3/bench/nvidia-h100-80gb-hbm3/verify",
}

// exampleCommand regenerates the committed export of examples/export-go (README, "Export the
// winners").
var exampleCommand = "bin/runner export" + func() string {
	var b strings.Builder
	for _, r := range exampleResults {
		b.WriteString(" --results " + r)
	}
	return b.String()
}() + " --allow-unhashed --out examples/export-go/tgsgemm --name tgsgemm --go-package tilegen/examples/export-go/tgsgemm --force"

// TestCommittedExampleIsCurrent re-exports the committed results as the README says and compares
// every file with examples/export-go/tgsgemm: the committed example is what export writes today,
// and no file of it is left over from an older export.
func TestCommittedExampleIsCurrent(t *testing.T) {
	t.Chdir("../..")
	_, files, err := Prepare(Options{Results: exampleResults,
		Generated: "generated", Name: "tgsgemm", GoPackage: "tilegen/examples/export-go/tgsgemm", AllowUnhashed: true})
	if err != nil {
		t.Fatalf("%v\n(the committed example cannot be regenerated with: %s)", err, exampleCommand)
	}
	committed := tree(t, filepath.Join("examples", "export-go", "tgsgemm"))
	var stale []string
	for _, name := range sortedNames(files) {
		if got, ok := committed[name]; !ok || !bytes.Equal([]byte(got), files[name]) {
			stale = append(stale, name)
		}
		delete(committed, name)
	}
	for name := range committed {
		stale = append(stale, name+" (not written by export)")
	}
	sort.Strings(stale)
	if len(stale) > 0 {
		t.Errorf("examples/export-go/tgsgemm is stale: %s\nregenerate it with: %s", strings.Join(stale, ", "), exampleCommand)
	}
}
