package export

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"tilegen/internal/dispatch"
	"tilegen/internal/protocol"
	"tilegen/internal/results"
	"tilegen/internal/variant"
	"tilegen/internal/workload"
)

func fixtureCorpus(t *testing.T) []workload.Entry {
	t.Helper()
	es, err := workload.ReadFile("testdata/corpus.txt")
	if err != nil {
		t.Fatal(err)
	}
	return es
}

// TestCorpusExport fits the dispatch on a corpus: the shapes and sources come from it, the
// provenance says so, and a corpus shape the results did not tune is refused by name.
func TestCorpusExport(t *testing.T) {
	o := fixtureOptions("")
	o.Corpus = fixtureCorpus(t)
	p, files, err := Prepare(o)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Corpus || p.RuleOf(variant.OpNN).FitShapes != 9 {
		t.Errorf("corpus %v, fitted on %d shapes; want true, 9", p.Corpus, p.RuleOf(variant.OpNN).FitShapes)
	}
	var pv Provenance
	if err := json.Unmarshal(files["tg.json"], &pv); err != nil {
		t.Fatal(err)
	}
	if !pv.Dispatch.Corpus || len(pv.Dispatch.Ops) != 1 || pv.Dispatch.Ops[0].FittedOn != 9 || pv.Dispatch.Ops[0].BucketsPerOctave != 2 ||
		len(pv.Dispatch.Ops[0].Candidates) == 0 {
		t.Errorf("provenance dispatch %+v", pv.Dispatch)
	}
	if doc := string(files["dispatch.go"]); !strings.Contains(doc, "NN 2 buckets per octave, fitted on 9 shapes") || !strings.Contains(doc, "fitted on the timings of a workload corpus") {
		t.Error("the package doc does not say the rule was fitted on a corpus")
	}

	d, gpu, dev, err := Workload(o, variant.OpNN)
	if err != nil {
		t.Fatal(err)
	}
	if dev.MemClockKHz > 0 && (dev.Name != gpu || dev.MemBusWidth <= 0) {
		t.Errorf("device %+v: not the GPU %q with its memory clock and bus width", dev, gpu)
	}
	if gpu != "NVIDIA H100 80GB HBM3" || d.SMs != 132 || len(d.Samples) != 9 || len(d.Kernels) != 6 {
		t.Errorf("gpu %q, %d SMs, %d shapes, %d kernels; want the H100's 132, 9, 6", gpu, d.SMs, len(d.Samples), len(d.Kernels))
	}
	// The fixture's corpus is NN only: another op's rule has nothing to be fitted on.
	if _, _, _, err := Workload(o, variant.OpNT); err == nil || !strings.Contains(err.Error(), "no exportable NT variant was timed on the NT shapes") {
		t.Errorf("Workload of op NT on an NN corpus: %v", err)
	}
	for _, s := range d.Samples {
		if s.Shape == (protocol.Shape{M: 1024, N: 1024, K: 1024}) && s.Source != "square; listed twice, from another model: one shape, two sources" {
			t.Errorf("1024³ source %q", s.Source)
		}
	}

	// A batched or fused-epilogue corpus line is no dispatch class: those entries choose from their
	// own records, so the rule is the one fitted on the single products.
	o.Corpus = append(fixtureCorpus(t), workload.Entry{Shape: protocol.Shape{M: 64, N: 64, K: 64, Batch: 8}, Source: "batch"},
		workload.Entry{Shape: protocol.Shape{M: 64, N: 64, K: 64, Epilogue: variant.EpiBiasReluRow}, Source: "epilogue"})
	if p, _, err := Prepare(o); err != nil || p.RuleOf(variant.OpNN).FitShapes != 9 {
		t.Errorf("a corpus with batch and epilogue lines: %v", err)
	}
	o.Corpus = append(fixtureCorpus(t), workload.Entry{Shape: protocol.Shape{M: 77, N: 88, K: 99}, Source: "untuned"})
	if _, _, err := Prepare(o); err == nil || !strings.Contains(err.Error(), "77x88x99") {
		t.Errorf("an untuned corpus shape: %v", err)
	}
	o.Corpus, o.Shapes = fixtureCorpus(t), []protocol.Shape{{M: 224, N: 256, K: 192}}
	if _, _, err := Prepare(o); err == nil || !strings.Contains(err.Error(), "give one") {
		t.Errorf("a corpus and --shapes: %v", err)
	}
}

// TestWorkloadUntimedPick: when the variant the rule launches on a shape was not timed there, the
// shape is no class (its time is unknown), the provenance lists it, and cross-validation counts
// it as the slowest variant timed there.
func TestWorkloadUntimedPick(t *testing.T) {
	tune, verify, gen := copyFixture(t)
	o := Options{Results: []string{tune, verify}, Generated: gen, Name: "tg"}
	p, _, err := Prepare(o)
	if err != nil {
		t.Fatal(err)
	}
	target := protocol.Shape{M: 2048, N: 2048, K: 2048}
	i, err := p.Choose(variant.OpNN, 2048, 2048, 2048, 2048, 2048, 2048)
	if err != nil {
		t.Fatal(err)
	}
	name := p.Variants[i].V.Name
	editRecords(t, filepath.Join(tune, "results.jsonl"), func(r *results.Record) bool {
		return !(r.Kind == results.KindTune && r.Variant == name && r.Shape == target)
	})
	d, _, _, err := Workload(o, variant.OpNN)
	if err != nil {
		t.Fatal(err)
	}
	v, err := dispatch.CrossValidate(d, 3, dispatch.Config{})
	if err != nil {
		t.Fatal(err)
	}
	s := v.Summary(d)
	for _, r := range s.Shapes {
		if r.Shape != "2048x2048x2048" {
			continue
		}
		slowest := 1e9
		for j := range d.Kernels {
			if r, imp, ok := d.Ratio(indexOf(d, target), j); ok && !imp {
				slowest = min(slowest, r)
			}
		}
		t.Logf("2048³: the rule launches %s (untimed %v, ratio %.3f; held out: %s untimed %v); %s was untimed", r.Variant, r.Untimed, r.Ratio,
			r.VariantCV, r.UntimedCV, name)
		for _, c := range []struct {
			variant string
			untimed bool
			ratio   float64
		}{{r.Variant, r.Untimed, r.Ratio}, {r.VariantCV, r.UntimedCV, r.RatioCV}} {
			if c.variant == name && (!c.untimed || c.ratio != slowest) {
				t.Errorf("2048³: %s untimed=%v ratio %.3f, want untimed at the slowest timed ratio %.3f", name, c.untimed, c.ratio, slowest)
			}
			if c.variant != name && c.untimed {
				t.Errorf("2048³: %s (timed) marked untimed", c.variant)
			}
		}
		if r.VariantCV != name {
			t.Errorf("2048³ held out: %s; the fixture's rule without it was expected to launch the untimed %s there", r.VariantCV, name)
		}
	}
	p, _, err = Prepare(o)
	if err != nil {
		t.Fatal(err)
	}
	if i, _ := p.Choose(variant.OpNN, 2048, 2048, 2048, 2048, 2048, 2048); p.Variants[i].V.Name == name {
		if len(p.Untimed) != 1 || p.Untimed[0] != target || len(p.Classes) != 8 {
			t.Errorf("untimed %v, %d classes; want 2048³ untimed and 8 classes", p.Untimed, len(p.Classes))
		}
	} else if len(p.Untimed) != 0 {
		t.Errorf("untimed %v, but the rule now launches %s at 2048³", p.Untimed, p.Variants[i].V.Name)
	}
}

func indexOf(d *dispatch.Data, s protocol.Shape) int {
	for i, x := range d.Samples {
		if x.Shape == s {
			return i
		}
	}
	return -1
}
