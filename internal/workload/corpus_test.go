package workload

import (
	"path/filepath"
	"strings"
	"testing"

	"tilegen/internal/protocol"
)

// corpusPath is the committed workload corpus, relative to this package.
var corpusPath = filepath.Join("..", "..", "workloads", "corpus.txt")

// Corpus bounds: the issue asks for at least 150 distinct shapes; a product must fit one 80 GB GPU
// (A, B and C in float32) and stay affordable to tune (at most about 2·10¹² flops).
const (
	corpusMinShapes = 150
	corpusMaxBytes  = 80e9
	corpusMaxFlops  = 2e12
)

// TestCorpus: workloads/corpus.txt parses, holds enough distinct shapes, names a source
// ("model: layer") on every line, and every product fits a GPU and a tuning budget.
func TestCorpus(t *testing.T) {
	es, err := ReadFile(corpusPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		model, layer, ok := strings.Cut(e.Source, ": ")
		if !ok || strings.TrimSpace(model) == "" || strings.TrimSpace(layer) == "" {
			t.Errorf("%s:%d: source %q: want `model: layer (tokens or batch)`", corpusPath, e.Line, e.Source)
		}
		s := e.Shape
		m, n, k := float64(s.M), float64(s.N), float64(s.K)
		if b := 4 * (m*k + k*n + m*n); b > corpusMaxBytes {
			t.Errorf("%s:%d: %dx%dx%d needs %.3g bytes for A, B and C, over %.3g", corpusPath, e.Line, s.M, s.N, s.K, b, corpusMaxBytes)
		}
		if f := 2 * m * n * k; f > corpusMaxFlops {
			t.Errorf("%s:%d: %dx%dx%d is %.3g flops, over %.3g", corpusPath, e.Line, s.M, s.N, s.K, f, corpusMaxFlops)
		}
	}
	u := Unique(es)
	if len(u) < corpusMinShapes {
		t.Errorf("%d distinct shapes, want at least %d", len(u), corpusMinShapes)
	}
	// The regimes the corpus is for: each must be represented.
	regimes := []struct {
		name string
		in   func(protocol.Shape) bool
	}{
		{"batch-1 (M = 1)", func(s protocol.Shape) bool { return s.M == 1 }},
		{"small batch (2 <= M <= 16)", func(s protocol.Shape) bool { return s.M >= 2 && s.M <= 16 }},
		{"deep K over a small output (K >= 10·M·N)", func(s protocol.Shape) bool { return s.K >= 10*s.M*s.N }},
		{"tall-skinny (N <= 32, M >= 65536)", func(s protocol.Shape) bool { return s.N <= 32 && s.M >= 65536 }},
		{"small (M·N·K <= 128³)", func(s protocol.Shape) bool { return s.M*s.N*s.K <= 128*128*128 }},
		{"tiny output (M, N <= 16)", func(s protocol.Shape) bool { return s.M <= 16 && s.N <= 16 }},
		{"large (M·N·K >= 2048³)", func(s protocol.Shape) bool { return s.M*s.N*s.K >= 2048*2048*2048 }},
	}
	for _, r := range regimes {
		n := 0
		for _, s := range u {
			if r.in(s) {
				n++
			}
		}
		if n < 3 {
			t.Errorf("regime %s: %d shapes, want at least 3", r.name, n)
		}
	}
	t.Logf("%d lines, %d distinct shapes", len(es), len(u))
}

// TestUnseen: workloads/unseen.txt and unseen-small.txt, the shapes an export is checked on without
// tuning or fitting on them (examples/export-cuda --shapes), parse, name a source on every line, fit
// a GPU, and share no shape with the corpus or with each other (or they would not be unseen).
func TestUnseen(t *testing.T) {
	cs, err := ReadFile(corpusPath)
	if err != nil {
		t.Fatal(err)
	}
	inCorpus := map[protocol.Shape]bool{}
	for _, s := range Unique(cs) {
		inCorpus[s] = true
	}
	big := checkUnseen(t, "unseen.txt", inCorpus, 60)
	for _, s := range Unique(big) {
		inCorpus[s] = true
	}
	checkUnseen(t, "unseen-small.txt", inCorpus, 20)
}

// checkUnseen checks one unseen shapes file of workloads/ against the shapes in seen and returns it.
func checkUnseen(t *testing.T, name string, inCorpus map[protocol.Shape]bool, least int) []Entry {
	t.Helper()
	path := filepath.Join("..", "..", "workloads", name)
	es, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if _, _, ok := strings.Cut(e.Source, ": "); !ok {
			t.Errorf("%s:%d: source %q: want `model: layer`", path, e.Line, e.Source)
		}
		s := e.Shape
		if inCorpus[s] {
			t.Errorf("%s:%d: %dx%dx%d is in the corpus (or an earlier unseen file)", path, e.Line, s.M, s.N, s.K)
		}
		if b := 4 * (float64(s.M)*float64(s.K) + float64(s.K)*float64(s.N) + float64(s.M)*float64(s.N)); b > corpusMaxBytes {
			t.Errorf("%s:%d: %dx%dx%d needs %.3g bytes", path, e.Line, s.M, s.N, s.K, b)
		}
	}
	if u := Unique(es); len(u) != len(es) || len(u) < least {
		t.Errorf("%s: %d lines, %d distinct shapes: want distinct shapes, at least %d", path, len(es), len(u), least)
	}
	return es
}
