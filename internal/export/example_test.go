package export

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"tilegen/internal/protocol"
	"tilegen/internal/workload"
)

// The committed export of examples/export-go is made from the results listed in
// examples/export-go/results.txt (the H100 workload corpus's tunes and edge suites, the
// register-tiled kernels of the other ops, the strided batches and the fused epilogues), its
// dispatch fitted on the corpus (its shapes for NN), the corpus's products as NT, TN and TT
// (exampleOpCorpora) and examples/export-go/shapes.txt (the ops' squares).
const (
	exampleResultsFile = "examples/export-go/results.txt"
	exampleShapesFile  = "examples/export-go/shapes.txt"
	exampleCorpusFile  = "results/workload/nvidia-h100-80gb-hbm3/corpus-measured.txt"
)

// exampleOpCorpora are the corpus's products under the other ops, each shape measured.
var exampleOpCorpora = []string{
	"results/workload/nvidia-h100-80gb-hbm3/portfolio/nt/shapes.txt",
	"results/workload/nvidia-h100-80gb-hbm3/portfolio/nt/shapes-gemv.txt",
	"results/workload/nvidia-h100-80gb-hbm3/portfolio/tn/shapes.txt",
	"results/workload/nvidia-h100-80gb-hbm3/portfolio/tt/shapes.txt",
}

// exampleCommand regenerates the committed export of examples/export-go (README, "Export the
// winners").
var exampleCommand = "bin/runner export $(sed -n 's/^[^#]/--results &/p' " + exampleResultsFile + ") --corpus " + exampleCorpusFile +
	" --corpus " + strings.Join(exampleOpCorpora, " --corpus ") + " --corpus " + exampleShapesFile +
	" --force --out examples/export-go/tgsgemm --name tgsgemm --go-package tilegen/examples/export-go/tgsgemm"

// exampleFit reads the shapes the example is fitted on: the corpus's, the ops' corpora, then the
// ops' squares.
func exampleFit(t *testing.T) []workload.Entry {
	t.Helper()
	var all []workload.Entry
	for _, f := range append(append([]string{exampleCorpusFile}, exampleOpCorpora...), exampleShapesFile) {
		es, err := workload.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, es...)
	}
	return all
}

// exampleResults reads the results list (run from the repository root).
func exampleResults(t *testing.T) []string {
	t.Helper()
	f, err := os.Open(exampleResultsFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var dirs []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" && !strings.HasPrefix(l, "#") {
			if _, err := os.Stat(l); err != nil {
				t.Fatalf("%s: %v", exampleResultsFile, err)
			}
			dirs = append(dirs, l)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return dirs
}

// TestCommittedExampleIsCurrent re-exports the committed results as the README says and compares
// every file with examples/export-go/tgsgemm: the committed example is what export writes today,
// and no file of it is left over from an older export.
func TestCommittedExampleIsCurrent(t *testing.T) {
	t.Chdir("../..")
	_, files, err := Prepare(Options{Results: exampleResults(t), Corpus: exampleFit(t),
		Generated: "generated", Name: "tgsgemm", GoPackage: "tilegen/examples/export-go/tgsgemm"})
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

// TestExampleShapesAreTheCorpus: the example's NN shapes are the workload corpus's (its ops' shapes
// files add no NN shape), so that the committed export's dispatch is the one the corpus evaluation
// (runner workload) judges.
func TestExampleShapesAreTheCorpus(t *testing.T) {
	t.Chdir("../..")
	ex := exampleFit(t)
	corpus, err := workload.ReadFile(exampleCorpusFile)
	if err != nil {
		t.Fatal(err)
	}
	var nn, ops []protocol.Shape
	for _, s := range workload.Unique(ex) {
		if s.Op == "" {
			nn = append(nn, s)
		} else {
			ops = append(ops, s)
		}
	}
	want := workload.Unique(corpus)
	less := func(a, b protocol.Shape) int {
		if lessShape(a, b) {
			return -1
		}
		if lessShape(b, a) {
			return 1
		}
		return 0
	}
	slices.SortFunc(nn, less)
	slices.SortFunc(want, less)
	if !slices.Equal(nn, want) {
		t.Errorf("the example's fit has %d NN shapes, %s has %d (or others): %s and %s hold NT, TN and TT shapes only", len(nn), exampleCorpusFile, len(want), exampleShapesFile, strings.Join(exampleOpCorpora, ", "))
	}
	if len(ops) == 0 {
		t.Errorf("%s has no NT, TN or TT shape: the export would carry no rule for those ops", exampleShapesFile)
	}
}
