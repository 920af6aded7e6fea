package export

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"tilegen/internal/dispatch"
	"tilegen/internal/orchestrator"
	"tilegen/internal/protocol"
	"tilegen/internal/results"
	"tilegen/internal/stats"
	"tilegen/internal/variant"
	"tilegen/internal/workload"
)

// Measure is one tuned time of a variant with the cuBLAS time on the same shape and device.
type Measure struct {
	Shape    protocol.Shape `json:"shape"`
	MedianMS float64        `json:"median_ms"`
	MinMS    float64        `json:"min_ms"`
	MaxMS    float64        `json:"max_ms"`
	Reps     int            `json:"reps"`
	// InputSets is how many rotated input sets the timing used (L2 not reused between launches).
	InputSets int     `json:"input_sets"`
	CublasMS  float64 `json:"cublas_median_ms"`
	// Ratio is CublasMS / MedianMS: cuBLAS time / tilegen time (above 1: faster than cuBLAS).
	Ratio  float64 `json:"ratio"`
	GPU    string  `json:"gpu"`
	UUID   string  `json:"gpu_uuid"`
	Driver int     `json:"driver"`
	Key    string  `json:"record_key"`
	// Verify are the checks run before the timing.
	Verify []protocol.VerifyResult `json:"verify"`
}

// EdgeSuite summarizes a variant's verify records on orchestrator.EdgeShapes.
type EdgeSuite struct {
	Shapes  int `json:"shapes"`
	Passed  int `json:"passed"`
	Skipped int `json:"skipped"`
	// WorstNormRel and WorstMaxAbs are the largest errors of any edge check.
	WorstNormRel float64 `json:"worst_norm_rel"`
	WorstMaxAbs  float64 `json:"worst_max_abs"`
	Checks       int     `json:"checks"`
}

// Chosen is an exported variant.
type Chosen struct {
	V   variant.Variant
	src source
	// Won are the shape classes the rule launches it on.
	Won []protocol.Shape
	// Tuned are its times on every class it was measured on.
	Tuned []Measure
	Edge  EdgeSuite
	// WorstRatio is the smallest Ratio over Tuned (its worst case against cuBLAS), or over its NN
	// twin's when it has no times of its own and its rule borrowed the twin's (TimedAs: the twin).
	WorstRatio float64
	TimedAs    string
	// Twins are its misaligned twins (misalignedTwins) by misalignment class (MisClass: 1 a
	// misaligned B, 2 a misaligned A, 3 both; entry 0 is unused): the kernel launched instead of it
	// on a problem of that class, Index 0 when it has none there (a twin's name extends its own, so
	// it sorts after it and is never index 0).
	Twins [4]Twin
}

// Twin is an exported variant's twin for one misalignment class and its evidence: Gain, the
// geometric mean of the variant's time over the twin's on the Shapes tuned shapes of that class
// where both were timed (above 1: the twin is faster).
type Twin struct {
	Index  int
	Gain   float64
	Shapes int
}

// MisClass is the misalignment class of a row-major NN problem's operands for the twins: bit 0 a
// B whose rows are not 16-byte aligned (ldb not a multiple of 4), bit 1 such an A (lda). Of a tuned
// shape (packed leading dimensions: lda = K, ldb = N) it is MisClass(K, N).
func MisClass(lda, ldb int) int {
	c := 0
	if ldb&3 != 0 {
		c |= 1
	}
	if lda&3 != 0 {
		c |= 2
	}
	return c
}

// misClassNames names the classes in reports and provenance.
var misClassNames = [4]string{"", "B", "A", "A+B"}

// misClassConds says when each class is taken, as the artifacts test it.
var misClassConds = [4]string{"", "ldb % 4 != 0 and lda % 4 == 0", "lda % 4 != 0 and ldb % 4 == 0", "lda % 4 != 0 and ldb % 4 != 0"}

// Class is a shape (dimensions and op) the rule of its op was fitted on and the exported variant
// launched there.
type Class struct {
	Shape    protocol.Shape
	Variant  int // index into Plan.Variants
	MedianMS float64
	CublasMS float64
}

// Ratio is cuBLAS time / tilegen time at the class (above 1: faster than cuBLAS), the convention
// of every tilegen report.
func (c Class) Ratio() float64 { return c.CublasMS / c.MedianMS }

// Exclusion is a variant that may not be exported, and why.
type Exclusion struct {
	Variant string `json:"variant"`
	Reason  string `json:"reason"`
	// WouldHaveWon lists the classes where it was fastest.
	WouldHaveWon []protocol.Shape `json:"would_have_won,omitempty"`
}

// Plan is the content of an export, decided before anything is written.
type Plan struct {
	Name      string
	GoPackage string
	PkgName   string
	Manifest  variant.Manifest // Variants unused
	Variants  []Chosen         // the one-product kernels sorted by name, then the strided-batched ones
	Classes   []Class          // the shapes fitted on, sorted by op (variant.Ops order), then M, N, K
	Excluded  []Exclusion
	Inputs    []Input
	Content   string
	Devices   []protocol.Device
	GPU       string
	// Unhashed counts the records (tune and verify, not skipped) without source/PTX hashes, accepted
	// with AllowUnhashed.
	Unhashed      int
	AllowUnhashed bool
	// Precision is the export's arithmetic (Options.Precision).
	Precision variant.Precision
	// SASS, when set, is how the kernels' fatbins were built (Options.SASS).
	SASS *SASS
	// tunedRegs are the registers the driver's compile gave each variant at tuning (its records'
	// attributes; absent when they carry none).
	tunedRegs map[string]int
	// Rules holds the dispatch of every op the export has kernels for, in variant.Ops order: each
	// op has its own rule, fitted on that op's shapes and variants (kernel indices into Variants).
	// Corpus says whether the shapes were a workload corpus (else the tuned shapes).
	Rules  []OpRule
	Corpus bool
	// Batched holds the strided-batched dispatch of every op the export has batched kernels for, in
	// variant.Ops order (see BatchRule); the batched kernels come after the one-product ones in
	// Variants.
	Batched []BatchRule
	// Untimed are the shapes fitted on where the variant launched was not timed (no class).
	Untimed []protocol.Shape
	// Epilogues are the fused-epilogue entries (row-major NN with a bias): per epilogue the one
	// variant it launches, in variant.Epilogues order; empty when the results hold none.
	Epilogues []EpiEntry
}

// EpiEntry is one fused epilogue of the export: the variant (an index into Plan.Variants) with the
// best geometric-mean ratio against cuBLAS + the separate epilogue over the shapes it was timed on
// with that epilogue, among the variants verified there, on the whole edge suite of that epilogue and
// with matching hashes.
type EpiEntry struct {
	Epilogue variant.Epilogue
	Kernel   int
	Ratio    float64
	Shapes   []protocol.Shape
}

// epiCandidate is an eligible epilogue variant's timings (tune records against the cuBLAS record of
// the same shape and device).
type epiCandidate struct {
	name   string
	ratios []float64
	shapes []protocol.Shape
}

// epilogueEntries picks, per epilogue, the eligible variant (why empty, full edge suite) with the
// best geometric-mean ratio over its timed shapes of that epilogue (ties: the name).
func epilogueEntries(recs []results.Record, byName map[string]*variant.Variant, why map[string]string, fullEdge map[string]bool) map[variant.Epilogue]epiCandidate {
	// A fused-epilogue record whose device timed no cuBLAS + epilogue of its shape (a run that timed
	// cuBLAS on one device per shape) is left out rather than refused: it has no same-device ratio.
	all, _ := measuresOf(recs, func(s protocol.Shape) bool {
		return s.Epilogue != variant.EpiNone && s.Op == variant.OpNN && s.Batch == 0
	}, true)
	shapes := make([]protocol.Shape, 0, len(all))
	for s := range all {
		shapes = append(shapes, s)
	}
	sort.Slice(shapes, func(i, j int) bool { return results.ShapeString(shapes[i]) < results.ShapeString(shapes[j]) })
	cands := map[string]*epiCandidate{}
	for _, s := range shapes {
		for n, m := range all[s] {
			v := byName[n]
			if v == nil || v.Epilogue != s.Epilogue || why[n] != "" || !fullEdge[n] {
				continue
			}
			if cands[n] == nil {
				cands[n] = &epiCandidate{name: n}
			}
			cands[n].ratios = append(cands[n].ratios, m.Ratio)
			cands[n].shapes = append(cands[n].shapes, s)
		}
	}
	best := map[variant.Epilogue]epiCandidate{}
	names := make([]string, 0, len(cands))
	for n := range cands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		c, e := *cands[n], byName[n].Epilogue
		if b, ok := best[e]; !ok || stats.Geomean(c.ratios) > stats.Geomean(b.ratios) {
			best[e] = c
		}
	}
	return best
}

// OpRule is one op's dispatch: the rule, its robust default (an index into Plan.Variants), the
// names of the variants it was fitted to choose from, and how many shapes it was fitted on.
type OpRule struct {
	Op         variant.Op
	Rule       *dispatch.Rule
	Default    int
	Candidates []string
	// FitShapes is how many of the op's own shapes the rule was fitted on; Borrowed what it took
	// from the NN corpus where those say nothing (borrowNN).
	FitShapes int
	Borrowed  Borrowed
}

// WaveSlots is what the artifacts hold for variant i's wave guard: its slots (SMs × blocks per
// SM) when its op's rule has a guard that may replace it, else 0.
func (p *Plan) WaveSlots(i int) int {
	for _, r := range p.Rules {
		if g := r.Rule.Guard; g != nil && i < len(g.Kernels) && i != g.Kernel && p.Variants[i].V.Op == r.Op {
			return g.Kernels[i].Slots
		}
	}
	return 0
}

// RuleOf is op's dispatch, or nil when the export has no kernel for op.
func (p *Plan) RuleOf(op variant.Op) *OpRule {
	for i := range p.Rules {
		if p.Rules[i].Op == op {
			return &p.Rules[i]
		}
	}
	return nil
}

// DefaultOf is op's robust default (an index into Variants), or -1.
func (p *Plan) DefaultOf(op variant.Op) int {
	if r := p.RuleOf(op); r != nil {
		return r.Default
	}
	return -1
}

// opsList names the ops the export has kernels for.
func (p *Plan) opsList() string {
	var ops []string
	for _, r := range p.Rules {
		ops = append(ops, r.Op.String())
	}
	return strings.Join(ops, ", ")
}

// eligibility returns, per variant name in the results, why it may not be exported ("" when it may),
// and its edge-suite summary.
func eligibility(recs []results.Record, byName map[string]*variant.Variant, allowUnhashed bool) (map[string]string, map[string]EdgeSuite, map[string]bool) {
	why := map[string]string{}
	fullEdge := map[string]bool{}
	edge := map[string]EdgeSuite{}
	verified := map[string]map[protocol.Shape]results.Record{}
	names := map[string]bool{}
	for _, r := range recs {
		if r.Kind == results.KindCublas {
			continue
		}
		names[r.Variant] = true
		if why[r.Variant] != "" {
			continue
		}
		v := byName[r.Variant]
		other := ""
		if v != nil {
			other = otherBuild(r, v, allowUnhashed)
		}
		switch {
		case v == nil:
			why[r.Variant] = "not in the generated catalog"
		case other != "":
			why[r.Variant] = other
		case r.Status == results.StatusFailed:
			why[r.Variant] = fmt.Sprintf("failed %s at %s: %s", r.Kind, results.ShapeString(r.Shape), safeText(r.Reason))
		}
		for _, c := range r.Verify {
			if !c.Pass && why[r.Variant] == "" {
				why[r.Variant] = fmt.Sprintf("failed verification at %s (alpha=%g beta=%g): %s", results.ShapeString(r.Shape),
					c.Alpha, c.Beta, safeText(c.Reason))
			}
		}
		if r.Kind == results.KindVerify && r.Status == results.StatusOK {
			if verified[r.Variant] == nil {
				verified[r.Variant] = map[protocol.Shape]results.Record{}
			}
			verified[r.Variant][r.Shape] = r
		}
	}
	for name := range names {
		v := byName[name]
		if v == nil {
			continue
		}
		var es EdgeSuite
		missing := ""
		for _, s := range orchestrator.EdgeShapes(v) {
			es.Shapes++
			if v.SupportsDense(s.M, s.N, s.K) != nil {
				es.Skipped++
				continue
			}
			r, ok := verified[name][s]
			if !ok {
				if missing == "" {
					missing = results.ShapeString(s)
				}
				continue
			}
			es.Passed++
			for _, c := range r.Verify {
				es.Checks++
				es.WorstNormRel = math.Max(es.WorstNormRel, c.NormRel)
				es.WorstMaxAbs = math.Max(es.WorstMaxAbs, c.MaxAbs)
			}
		}
		edge[name] = es
		fullEdge[name] = missing == "" && es.Skipped == 0
		if why[name] == "" && missing != "" {
			why[name] = fmt.Sprintf("never verified on the edge suite (no ok verify record at %s; pass a runner verify results directory)", missing)
		}
	}
	return why, edge, fullEdge
}

// otherBuild says why record r did not measure the generated code of its variant v ("" when it did):
// another family or parameters, or, for a record that ran (not skipped), other PTX or source
// (staleHashes), no hashes at all (unless allowUnhashed: then the ptxas resources are the match) or
// other ptxas resources.
func otherBuild(r results.Record, v *variant.Variant, allowUnhashed bool) string {
	switch {
	case r.Family != "" && r.Family != v.Family, r.Params != "" && r.Params != v.ParamString():
		return fmt.Sprintf("results are of another build (family %s params %q; the manifest says %s %q)",
			safeText(r.Family), r.Params, safeText(v.Family), v.ParamString())
	case r.Status == results.StatusSkipped:
		return ""
	case staleHashes(r, v):
		return fmt.Sprintf("its %s record at %s measured source %s, PTX %s; the generated directory now has source %s, PTX %s "+
			"(regenerated since): %s", r.Kind, results.ShapeString(r.Shape), short(r.SourceHash), short(r.PTXHash),
			short(v.SourceHash), short(v.PTXHash), rerun(v.Name))
	case r.SourceHash == "" && !allowUnhashed:
		return fmt.Sprintf("its %s record at %s carries no source/PTX hash (written before results recorded them), "+
			"so the measured kernel cannot be matched to the generated one: %s, or pass --allow-unhashed", r.Kind,
			results.ShapeString(r.Shape), rerun(v.Name))
	case r.Resources != v.Resources:
		return fmt.Sprintf("ptxas resources in the results (%+v) differ from the manifest's (%+v): stale results or generated directory",
			r.Resources, v.Resources)
	}
	return ""
}

// tunedGPU is the GPU model of the tune records, "" when none names one; an error names them when
// they mix models (what: whose records, for the message).
func tunedGPU(recs []results.Record, what string) (string, error) {
	gpus := map[string]bool{}
	for _, r := range recs {
		if r.Kind == results.KindTune && r.Device != nil {
			gpus[r.Device.Name] = true
		}
	}
	if len(gpus) > 1 {
		var names []string
		for g := range gpus {
			names = append(names, g)
		}
		sort.Strings(names)
		return "", fmt.Errorf("%s mix GPU models (%s): give one model's", what, strings.Join(names, ", "))
	}
	for g := range gpus {
		return g, nil
	}
	return "", nil
}

// staleHashes says whether a record measured other code than the manifest's. The PTX is what ran:
// a record with a PTX hash is stale when that differs, whatever the source (a template refactor that
// leaves the PTX byte-identical changes only the source hash, and the measured kernel is still the
// one exported). A record with only a source hash is stale when that differs; one without hashes
// names no code.
func staleHashes(r results.Record, v *variant.Variant) bool {
	if r.PTXHash != "" {
		return r.PTXHash != v.PTXHash
	}
	return r.SourceHash != "" && r.SourceHash != v.SourceHash
}

// rerun says how to measure a variant again.
func rerun(name string) string {
	return fmt.Sprintf("rerun `runner tune --variants %s` on the tuned shapes and `runner verify --variants %s`", name, name)
}

// measures collects the ok tune records of single products per shape and variant (the larger
// median when a pair was timed on several devices), pairing each with cuBLAS on the same device.
func measures(recs []results.Record) (map[protocol.Shape]map[string]Measure, error) {
	return measuresOf(recs, func(s protocol.Shape) bool { return s.Batch == 0 && s.Epilogue == variant.EpiNone }, false)
}

// measuresOf is measures for the shapes keep selects: the single products (the dispatch classes of
// the one-product entries), the batched shapes (the strided-batched entry's) or those with a fused
// epilogue. A tune record needs the cuBLAS record of its shape and device (an error without one),
// unless skipUnpaired leaves such a record out.
func measuresOf(recs []results.Record, keep func(protocol.Shape) bool, skipUnpaired bool) (map[protocol.Shape]map[string]Measure, error) {
	cublas := map[string]results.Record{} // shape+uuid
	ck := func(s protocol.Shape, d *results.DeviceRef) string {
		u := ""
		if d != nil {
			u = d.UUID
		}
		return results.ShapeString(s) + "/" + u
	}
	for _, r := range recs {
		if r.Kind == results.KindCublas && r.Status == results.StatusOK && r.Timing != nil {
			cublas[ck(r.Shape, r.Device)] = r
		}
	}
	out := map[protocol.Shape]map[string]Measure{}
	for _, r := range recs {
		if r.Kind != results.KindTune || r.Status != results.StatusOK || r.Timing == nil || !keep(r.Shape) {
			continue
		}
		c, ok := cublas[ck(r.Shape, r.Device)]
		if !ok && skipUnpaired {
			continue
		}
		if !ok {
			return nil, fmt.Errorf("no cuBLAS time for %s on the device of %s's record (ratios need one)",
				results.ShapeString(r.Shape), r.Variant)
		}
		m := Measure{Shape: r.Shape, MedianMS: r.Timing.MedianMS, MinMS: r.Timing.MinMS, MaxMS: r.Timing.MaxMS,
			Reps: r.Timing.Reps, InputSets: r.Timing.InputSets, CublasMS: c.Timing.MedianMS,
			Ratio: c.Timing.MedianMS / r.Timing.MedianMS, Key: r.Key, Verify: r.Verify}
		if r.Device != nil {
			m.GPU, m.UUID, m.Driver = r.Device.Name, r.Device.UUID, r.Device.Driver
		}
		if out[r.Shape] == nil {
			out[r.Shape] = map[string]Measure{}
		}
		if old, ok := out[r.Shape][r.Variant]; !ok || m.MedianMS > old.MedianMS {
			out[r.Shape][r.Variant] = m
		}
	}
	return out, nil
}

func lessShape(a, b protocol.Shape) bool {
	if a.Op != b.Op {
		return a.Op.Index() < b.Op.Index()
	}
	if a.M != b.M {
		return a.M < b.M
	}
	if a.N != b.N {
		return a.N < b.N
	}
	return a.K < b.K
}

// selection is what the export knows before fitting the dispatch rule: the classes (the corpus's
// shapes, or the tuned shapes), every eligible variant's times there, and the exclusions.
type selection struct {
	byName  map[string]*variant.Variant
	ms      map[protocol.Shape]map[string]Measure
	classes []protocol.Shape // sorted by op, then M, N, K
	sources map[protocol.Shape]string
	edge    map[string]EdgeSuite
	excl    []Exclusion
	gpu     string
	// data is each op's fitting input (the ops with classes only).
	data map[variant.Op]*dispatch.Data
	// why and fullEdge are eligibility's: why a variant may not be exported ("" when it may) and
	// whether it passed its whole edge suite.
	why      map[string]string
	fullEdge map[string]bool
	// blocksPerSM is each variant's occupancy at tuning (its tune records' largest; absent when
	// none says).
	blocksPerSM map[string]int
	// batch is the strided-batched entry's input.
	batch *batchSelection
	// epi is each fused epilogue's chosen variant (epilogueEntries).
	epi map[variant.Epilogue]epiCandidate
}

// selectInputs checks the records and gathers the fitting input of the dispatch rule.
func selectInputs(rs *resultsSet, manifest variant.Manifest, o Options) (*selection, error) {
	sel := &selection{byName: map[string]*variant.Variant{}, sources: map[protocol.Shape]string{}}
	for i := range manifest.Variants {
		sel.byName[manifest.Variants[i].Name] = &manifest.Variants[i]
	}
	gpu, err := tunedGPU(rs.records, "tune results")
	if err != nil {
		return nil, err
	}
	sel.gpu = gpu
	ms, err := measures(rs.records)
	if err != nil {
		return nil, err
	}
	if len(ms) == 0 {
		return nil, fmt.Errorf("no ok tune records: pass a runner tune results directory")
	}
	sel.ms = ms
	switch {
	case o.Corpus != nil && o.Shapes != nil:
		return nil, fmt.Errorf("a corpus and --shapes both choose the shapes to fit on: give one")
	case o.Corpus != nil:
		var missing []string
		for _, s := range workload.Unique(o.Corpus) {
			if s.Batch > 0 || s.Epilogue != variant.EpiNone {
				// The strided-batched and fused-epilogue entries choose from their own records
				// (selectBatched, epilogueEntries); the dispatch rules are the single products'.
				continue
			}
			if ms[s] == nil {
				missing = append(missing, results.ShapeString(s))
				continue
			}
			sel.classes = append(sel.classes, s)
		}
		if len(missing) > 0 {
			return nil, fmt.Errorf("%d corpus shape(s) have no ok tune record in the results (tune the corpus first): %s",
				len(missing), abbreviate(missing, 8))
		}
		sel.sources = workload.Sources(o.Corpus)
	case o.Shapes != nil:
		for _, s := range o.Shapes {
			if ms[s] == nil {
				return nil, fmt.Errorf("--shapes: %s was not tuned in the results", results.ShapeString(s))
			}
			sel.classes = append(sel.classes, s)
		}
	default:
		for s := range ms {
			sel.classes = append(sel.classes, s)
		}
	}
	sort.Slice(sel.classes, func(i, j int) bool { return lessShape(sel.classes[i], sel.classes[j]) })
	why, edge, fullEdge := eligibility(rs.records, sel.byName, o.AllowUnhashed)
	sel.edge, sel.why, sel.fullEdge = edge, why, fullEdge
	sel.blocksPerSM = map[string]int{}
	for _, r := range rs.records {
		if r.Kind == results.KindTune && r.Attributes != nil {
			sel.blocksPerSM[r.Variant] = max(sel.blocksPerSM[r.Variant], r.Attributes.BlocksPerSM)
		}
	}
	if sel.batch, err = selectBatched(rs.records, sel.byName, why, fullEdge); err != nil {
		return nil, err
	}
	sel.epi = epilogueEntries(rs.records, sel.byName, why, fullEdge)

	// Exclusions, with the classes where an excluded variant was the fastest.
	excl := map[string]*Exclusion{}
	for _, s := range sel.classes {
		names := make([]string, 0, len(ms[s]))
		for n := range ms[s] {
			names = append(names, n)
		}
		sort.Slice(names, func(i, j int) bool {
			a, b := ms[s][names[i]].MedianMS, ms[s][names[j]].MedianMS
			if a != b {
				return a < b
			}
			return names[i] < names[j]
		})
		won := false
		for _, n := range names {
			if why[n] == "" {
				won = true
				break
			}
			if excl[n] == nil {
				excl[n] = &Exclusion{Variant: n, Reason: why[n]}
			}
			excl[n].WouldHaveWon = append(excl[n].WouldHaveWon, s)
		}
		if !won {
			return nil, fmt.Errorf("no exportable variant for %s (%d timed, all excluded; e.g. %s: %s)",
				results.ShapeString(s), len(names), safeText(names[0]), why[names[0]])
		}
	}
	for n, w := range why {
		if w != "" && excl[n] == nil {
			excl[n] = &Exclusion{Variant: n, Reason: w}
		}
	}
	for _, e := range excl {
		sel.excl = append(sel.excl, *e)
	}
	sort.Slice(sel.excl, func(i, j int) bool { return sel.excl[i].Variant < sel.excl[j].Variant })

	sel.data = map[variant.Op]*dispatch.Data{}
	for _, op := range variant.Ops {
		if slices.ContainsFunc(sel.classes, func(s protocol.Shape) bool { return s.Op == op }) {
			sel.data[op] = fitData(rs, sel, why, fullEdge, op)
		}
	}
	return sel, nil
}

// abbreviate joins the first n of xs, saying how many more there are.
func abbreviate(xs []string, n int) string {
	if len(xs) <= n {
		return strings.Join(xs, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(xs[:n], ", "), len(xs)-n)
}

// fitData is the dispatch rule's input for op: every eligible variant of op timed on a class of op,
// by name, and its times on those classes. A time is stored as the class's cuBLAS time over the variant's ratio, so
// that each ratio stays the one measured on one device even when devices differ.
func fitData(rs *resultsSet, sel *selection, why map[string]string, fullEdge map[string]bool, op variant.Op) *dispatch.Data {
	var classes []protocol.Shape
	for _, s := range sel.classes {
		if s.Op == op {
			classes = append(classes, s)
		}
	}
	d := &dispatch.Data{SMs: orchestrator.DefaultSMs}
	for _, dev := range rs.info.Devices {
		if dev.SMs > 0 && (sel.gpu == "" || dev.Name == sel.gpu) {
			d.SMs = dev.SMs
			break
		}
	}
	// Misaligned twins (a MIS parameter) are no candidates: they run only on the problems of the
	// misalignment class they were measured faster on (misalignedTwins), and a cell's rule would
	// launch them on every class.
	timed := map[string]bool{}
	for _, s := range classes {
		for n := range sel.ms[s] {
			if why[n] == "" && sel.byName[n].Op == op && !isTwin(sel.byName[n]) {
				timed[n] = true
			}
		}
	}
	var names []string
	for n := range timed {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		d.Kernels = append(d.Kernels, sel.kernel(n, n))
	}
	for _, s := range classes {
		cub := math.Inf(1)
		for _, m := range sel.ms[s] {
			cub = math.Min(cub, m.CublasMS)
		}
		row := make([]float64, len(names))
		for j, n := range names {
			if m, ok := sel.ms[s][n]; ok {
				row[j] = cub / m.Ratio
			}
		}
		d.Samples = append(d.Samples, dispatch.Sample{Shape: s, Source: sel.sources[s], CublasMS: cub})
		d.Times = append(d.Times, row)
	}
	return d
}

// kernel is variant n as the dispatch rule sees it, its occupancy that of variant occ at tuning
// (n itself, or the twin whose times it borrows when it was never timed: the same code but for the
// loads).
func (sel *selection) kernel(n, occ string) dispatch.Kernel {
	v := sel.byName[n]
	r := v.Requires
	bps := sel.blocksPerSM[n]
	if bps == 0 {
		bps = sel.blocksPerSM[occ]
	}
	return dispatch.Kernel{Name: n, TileRows: v.Tile.Rows, TileCols: v.Tile.Cols, GridZ: atLeast1(v.GridZ), Split: v.Split,
		BlocksPerSM: max(bps, 1), Robust: sel.fullEdge[n],
		General: atLeast1(r.MMultiple) == 1 && atLeast1(r.NMultiple) == 1 && atLeast1(r.KMultiple) == 1 && atLeast1(r.LDMultiple) == 1,
		Supports: func(m, nn, k int) bool {
			lda, ldb, ldc := v.Op.DenseLD(m, nn, k)
			return supports(v, m, nn, k, lda, ldb, ldc) == nil
		}}
}

// choose decides the exported variants, each op's dispatch rule and default, and the classes.
func choose(rs *resultsSet, manifest variant.Manifest, o Options) (*Plan, error) {
	sel, err := selectInputs(rs, manifest, o)
	if err != nil {
		return nil, err
	}
	p := &Plan{Manifest: variant.Manifest{Generator: manifest.Generator, NVCC: manifest.NVCC, Arch: manifest.Arch},
		Inputs: rs.inputs, Content: rs.contentHash, Devices: rs.info.Devices, GPU: sel.gpu, Excluded: sel.excl,
		Corpus: o.Corpus != nil, Precision: o.Precision, tunedRegs: map[string]int{}}
	for _, r := range rs.records {
		if r.Kind == results.KindTune && r.Attributes != nil && r.Attributes.Registers > 0 {
			p.tunedRegs[r.Variant] = max(p.tunedRegs[r.Variant], r.Attributes.Registers)
		}
	}
	// Fit each op's rule on its own shapes and variants, then number the variants the rules use,
	// all ops together, by name.
	type fitted struct {
		op   variant.Op
		data *dispatch.Data
		rule *dispatch.Rule
		lent Borrowed
	}
	var fits []fitted
	usedNames := map[string]bool{}
	for _, op := range variant.Ops {
		d := sel.data[op]
		if d == nil {
			continue
		}
		if len(d.Kernels) == 0 {
			return nil, fmt.Errorf("no exportable %s variant was timed on the %s shapes", op, op)
		}
		var lent Borrowed
		if op != variant.OpNN {
			d, lent = borrowNN(sel, d, op)
		}
		rule, err := dispatch.Fit(d, nil, dispatch.Config{BucketsPerOctave: o.BucketsPerOctave})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		fits = append(fits, fitted{op, d, rule, lent})
		for _, j := range rule.Used() {
			usedNames[d.Kernels[j].Name] = true
		}
	}
	if len(fits) == 0 {
		return nil, fmt.Errorf("no exportable variant was timed on the shapes")
	}
	for _, e := range variant.Epilogues {
		if c, ok := sel.epi[e]; ok {
			usedNames[c.name] = true
		}
	}
	twins := misalignedTwins(sel, usedNames)
	for _, tws := range twins {
		for _, tw := range tws {
			if tw.twin != "" {
				usedNames[tw.twin] = true
			}
		}
	}
	names := make([]string, 0, len(usedNames))
	for n := range usedNames {
		names = append(names, n)
	}
	sort.Strings(names)
	// The strided-batched kernels follow the one-product ones (whose indices the rules' tables
	// encode as one character each), by name too.
	batchWin, batchDef, err := sel.batch.winners(sel.byName)
	if err != nil {
		return nil, err
	}
	batchUsed := map[string]bool{}
	for op, ws := range batchWin {
		for _, n := range ws {
			batchUsed[n] = true
		}
		batchUsed[batchDef[op]] = true
	}
	var batchNames []string
	for n := range batchUsed {
		batchNames = append(batchNames, n)
	}
	sort.Strings(batchNames)
	names = append(names, batchNames...)
	idx := map[string]int{}
	for i, n := range names {
		idx[n] = i
		p.Variants = append(p.Variants, Chosen{V: *sel.byName[n], Edge: sel.edge[n], WorstRatio: math.Inf(1)})
	}
	for name, tws := range twins {
		c := &p.Variants[idx[name]]
		for cls, tw := range tws {
			if tw.twin != "" {
				c.Twins[cls] = Twin{Index: idx[tw.twin], Gain: tw.gain, Shapes: tw.shapes}
			}
		}
	}
	for _, f := range fits {
		r := OpRule{Op: f.op, FitShapes: len(f.data.Samples) - f.lent.Shapes, Borrowed: f.lent}
		for _, j := range f.rule.Candidates {
			r.Candidates = append(r.Candidates, f.data.Kernels[j].Name)
		}
		used := map[int]bool{}
		for _, j := range f.rule.Used() {
			used[j] = true
		}
		r.Rule = f.rule.Remap(func(j int) int {
			if i, ok := idx[f.data.Kernels[j].Name]; ok && used[j] {
				return i
			}
			return -1
		})
		if n := len(ruleKernels(r.Rule)); n > maxRuleKernels {
			return nil, fmt.Errorf("%s: the dispatch tables hold %d variants, more than the %d a rule encodes", f.op, n, maxRuleKernels)
		}
		r.Default = r.Rule.Default
		p.Rules = append(p.Rules, r)
	}
	for _, op := range variant.Ops {
		if batchDef[op] == "" {
			continue
		}
		br := BatchRule{Op: op, Default: idx[batchDef[op]]}
		for j, s := range sel.batch.classes[op] {
			i := idx[batchWin[op][j]]
			m := sel.batch.ms[s][batchWin[op][j]]
			br.Classes = append(br.Classes, Class{Shape: s, Variant: i, MedianMS: m.MedianMS, CublasMS: m.CublasMS})
			p.Variants[i].Won = append(p.Variants[i].Won, s)
		}
		p.Batched = append(p.Batched, br)
	}
	for _, e := range variant.Epilogues {
		if c, ok := sel.epi[e]; ok {
			p.Epilogues = append(p.Epilogues, EpiEntry{Epilogue: e, Kernel: idx[c.name], Ratio: stats.Geomean(c.ratios), Shapes: c.shapes})
		}
	}
	borrowedTwin := map[string]string{}
	for _, f := range fits {
		if f.lent.Shapes > 0 {
			for n, t := range sel.nnTwins(f.op) {
				borrowedTwin[n] = t
			}
		}
	}
	for i := range p.Variants {
		c := &p.Variants[i]
		classes := sel.classes
		ms := sel.ms
		if c.V.Batched {
			classes, ms = sel.batch.classes[c.V.Op], sel.batch.ms
		}
		for _, s := range classes {
			if m, ok := ms[s][c.V.Name]; ok {
				c.Tuned = append(c.Tuned, m)
				c.WorstRatio = math.Min(c.WorstRatio, m.Ratio)
			}
		}
		// A variant the rule took on its NN twin's times only: the twin's measurements.
		if len(c.Tuned) == 0 && !c.V.Batched {
			if t := borrowedTwin[c.V.Name]; t != "" {
				c.TimedAs = t
				for _, s := range classes {
					if m, ok := ms[s][t]; ok {
						c.WorstRatio = math.Min(c.WorstRatio, m.Ratio)
					}
				}
			}
		}
		// An epilogue kernel's worst ratio is against cuBLAS + the separate epilogue.
		if e, ok := sel.epi[c.V.Epilogue]; ok && c.V.Epilogue != variant.EpiNone && e.name == c.V.Name {
			for _, r := range e.ratios {
				c.WorstRatio = math.Min(c.WorstRatio, r)
			}
		}
	}
	// The classes: every shape fitted on, with the variant its op's rule launches there (packed
	// leading dimensions, aligned pointers) and its time; a shape where that variant was not timed
	// is counted in Untimed instead.
	for _, s := range sel.classes {
		lda, ldb, ldc := s.Dense()
		i, err := p.Choose(s.Op, s.M, s.N, s.K, lda, ldb, ldc)
		if err != nil {
			return nil, fmt.Errorf("the dispatch rule launches nothing on the tuned shape %s: %w", results.ShapeString(s), err)
		}
		m, ok := sel.ms[s][p.Variants[i].V.Name]
		if !ok {
			p.Untimed = append(p.Untimed, s)
			continue
		}
		p.Classes = append(p.Classes, Class{Shape: s, Variant: i, MedianMS: m.MedianMS, CublasMS: m.CublasMS})
		p.Variants[i].Won = append(p.Variants[i].Won, s)
	}
	return p, nil
}

// Choose is the dispatch rule of the exported artifacts (see the package doc): the index into
// p.Variants launched for the row-major problem of op, or an error saying why none can be (an op
// the export has no kernel for included). Pointer alignment is not known here; the artifacts also
// check it. A problem whose op(A) or op(B) is a vector runs as variant.Op.Restate writes it (NN's
// GEMV kernels for every op) when the export has kernels for that op and one takes it
// (ChooseRestated says which problem).
func (p *Plan) Choose(op variant.Op, m, n, k, lda, ldb, ldc int) (int, error) {
	i, _, err := p.ChooseRestated(op, m, n, k, lda, ldb, ldc)
	return i, err
}

// ChooseRestated is Choose with the problem the kernel is launched on: op's own, or the restated
// one (variant.Restated; its Swap exchanges the A and B operands).
func (p *Plan) ChooseRestated(op variant.Op, m, n, k, lda, ldb, ldc int) (int, variant.Restated, error) {
	if r := op.Restate(m, n, k, lda, ldb, ldc); r.Changed(op, m, n, k, lda, ldb, ldc) && p.RuleOf(r.Op) != nil {
		if i, err := p.chooseOp(r.Op, r.M, r.N, r.K, r.LDA, r.LDB, r.LDC); err == nil {
			return i, r, nil
		}
	}
	i, err := p.chooseOp(op, m, n, k, lda, ldb, ldc)
	return i, variant.Restated{Op: op, M: m, N: n, K: k, LDA: lda, LDB: ldb, LDC: ldc}, err
}

// chooseOp is Choose for the problem as given.
func (p *Plan) chooseOp(op variant.Op, m, n, k, lda, ldb, ldc int) (int, error) {
	if m < 1 || n < 1 || k < 1 {
		return -1, fmt.Errorf("shape %dx%dx%d: every dimension must be at least 1", m, n, k)
	}
	if !op.Valid() {
		return -1, fmt.Errorf("op %q: want NN, NT, TN or TT", string(op))
	}
	r := p.RuleOf(op)
	if r == nil {
		return -1, fmt.Errorf("no %s kernel in this export (it has %s)", op, p.opsList())
	}
	aligned, unaligned, general := r.Rule.Pick(m, n, k)
	fits := func(j int) bool { return m%p.Variants[j].V.Tile.Rows == 0 && n%p.Variants[j].V.Tile.Cols == 0 }
	why := func(j int) error { return supports(&p.Variants[j].V, m, n, k, lda, ldb, ldc) }
	// The bulk and wave guards (internal/dispatch's BulkGuard and WaveGuard) may replace the kernel
	// the cell's chain launches.
	guarded := func(j int) int {
		if g := r.Rule.Bulk; g.Takes(j, m, n, k) && why(g.Kernel) == nil {
			return g.Kernel
		}
		if g := r.Rule.Guard; g.Replaces(j, m, n, k) && why(g.Kernel) == nil {
			return g.Kernel
		}
		return j
	}
	// A leading dimension not a multiple of 4 (M and N above 16) tries the general kernel first
	// (dispatch.Vec).
	vec := dispatch.Vec(m, n, lda, ldb, ldc)
	if vec && fits(aligned) && why(aligned) == nil {
		return p.twinned(guarded(aligned), lda, ldb, why), nil
	}
	order := []int{unaligned, general, aligned, r.Default}
	if !vec {
		order = []int{general, unaligned, aligned, r.Default}
	}
	for _, j := range order {
		if why(j) == nil {
			return p.twinned(guarded(j), lda, ldb, why), nil
		}
	}
	var errs []string
	seen := map[int]bool{}
	for _, j := range []int{aligned, unaligned, general, r.Default} {
		if !seen[j] {
			seen[j] = true
			errs = append(errs, fmt.Sprintf("%s: %v", p.Variants[j].V.Name, why(j)))
		}
	}
	return -1, fmt.Errorf("no exported %s variant takes %dx%dx%d (lda=%d ldb=%d ldc=%d): %s", op, m, n, k, lda, ldb, ldc, strings.Join(errs, "; "))
}

// twinned is the kernel launched when the dispatch chose j: j's twin for the problem's
// misalignment class (MisClass) when it has one there and the twin takes the problem; else j.
func (p *Plan) twinned(j, lda, ldb int, why func(int) error) int {
	if c := MisClass(lda, ldb); c > 0 {
		if t := p.Variants[j].Twins[c].Index; t > 0 && why(t) == nil {
			return t
		}
	}
	return j
}

// twinEvidence is misalignedTwins' finding for one exported variant and misalignment class.
type twinEvidence struct {
	twin   string
	gain   float64 // geometric mean of (variant's time / twin's time) on the class's shapes
	shapes int
}

// misalignedTwins pairs exported variants with their misaligned twins: variants of the same
// template, op (NN), precision and parameters with MIS added (variants.yaml regtile_mis,
// splitk_auto_mis: MIS = 1 a B ring that copies a misaligned B coalesced, templates/include/
// tilegen/misaligned.cuh; MIS = 3 also A's loads dealt for a misaligned A, misaligned_a.cuh). For
// each misalignment class (MisClass of the tuned shapes: an N, a K, or both not a multiple of 4)
// it takes the twin that the results show fastest over the variant on the tuned shapes of that
// class where both were timed, when that geometric mean of the time ratios is above twinMinGain
// and the twin may be exported (its edge suite passed, no failure). The dispatch then launches
// that twin wherever it would launch the variant on a problem of the class (Plan.Choose and both
// artifacts); on aligned problems the variant stays (the twins' aligned paths are the same
// kernel's with another register allocation, or, MIS = 3, scalar A loads: 0.88-1.01 of their
// variants on an H200). Classes are measured apart because the twins differ by class: MIS = 3
// gains on a misaligned A alone and loses to MIS = 1 on a misaligned B alone.
func misalignedTwins(sel *selection, used map[string]bool) map[string][4]twinEvidence {
	key := func(v *variant.Variant) (string, int) {
		mis, _ := v.Param("MIS")
		var ps []string
		for _, q := range v.Params {
			if q.Name != "MIS" {
				ps = append(ps, fmt.Sprintf("%s=%d", q.Name, q.Value))
			}
		}
		sort.Strings(ps)
		return fmt.Sprintf("%s|%s|%s|%t|%s|%s", v.Template, v.Op, v.Precision, v.Batched, v.Epilogue, strings.Join(ps, " ")), mis
	}
	twinsByKey := map[string][]string{}
	for name, v := range sel.byName {
		if k, mis := key(v); mis > 0 && sel.why[name] == "" && v.Op == variant.OpNN {
			twinsByKey[k] = append(twinsByKey[k], name)
		}
	}
	out := map[string][4]twinEvidence{}
	if len(twinsByKey) == 0 {
		return out
	}
	for _, names := range twinsByKey {
		sort.Strings(names) // deterministic: the first of equal gains wins
	}
	for name := range used {
		v := sel.byName[name]
		if v == nil {
			continue
		}
		k, mis := key(v)
		cands, ok := twinsByKey[k]
		if mis != 0 || !ok {
			continue
		}
		// Per class, the log time ratios (variant over twin) of each candidate by shape.
		var logs [4]map[string]map[protocol.Shape]float64
		for c := range logs {
			logs[c] = map[string]map[protocol.Shape]float64{}
		}
		for s, byVariant := range sel.ms {
			c := MisClass(s.K, s.N)
			a, okA := byVariant[name]
			if s.Op != variant.OpNN || c == 0 || !okA || a.MedianMS <= 0 {
				continue
			}
			for _, tw := range cands {
				if b, ok := byVariant[tw]; ok && b.MedianMS > 0 {
					if logs[c][tw] == nil {
						logs[c][tw] = map[protocol.Shape]float64{}
					}
					logs[c][tw][s] = math.Log(a.MedianMS / b.MedianMS)
				}
			}
		}
		var best [4]twinEvidence
		for c := 1; c < 4; c++ {
			if tw := fastestTwin(cands, logs[c]); tw != "" {
				if g, n := geomean(logs[c][tw]); g > twinMinGain {
					best[c] = twinEvidence{twin: tw, gain: g, shapes: n}
				}
			}
		}
		if best[1].twin != "" || best[2].twin != "" || best[3].twin != "" {
			out[name] = best
		}
	}
	return out
}

// fastestTwin is the candidate twin (names sorted) with the largest median log ratio over the
// shapes of one class that every candidate timed there was timed on, so that twins measured on
// different shapes are compared on the same ones, and one outlier shape does not decide (a mean
// did: a twin 26 % ahead on one shape and behind on eight was taken, and ran 2 % slower through
// the header on 68 random problems, results/workload/nvidia-h200/unseen/run14); without such a
// shape, the one timed on the most shapes (then the largest geometric mean). "" when none was timed.
func fastestTwin(cands []string, logs map[string]map[protocol.Shape]float64) string {
	var timed []string
	for _, tw := range cands {
		if len(logs[tw]) > 0 {
			timed = append(timed, tw)
		}
	}
	if len(timed) == 0 {
		return ""
	}
	var common []protocol.Shape
	for s := range logs[timed[0]] {
		all := true
		for _, tw := range timed[1:] {
			if _, ok := logs[tw][s]; !ok {
				all = false
				break
			}
		}
		if all {
			common = append(common, s)
		}
	}
	sort.Slice(common, func(i, j int) bool { return lessShape(common[i], common[j]) })
	best, bestN, bestMean := "", -1, math.Inf(-1)
	for _, tw := range timed {
		n, sum := 0, 0.0 // every candidate on the common shapes: compare medians only
		if len(common) > 0 {
			xs := make([]float64, len(common))
			for i, s := range common {
				xs[i] = logs[tw][s]
			}
			sort.Float64s(xs)
			sum = (xs[(len(xs)-1)/2] + xs[len(xs)/2]) / 2
		} else {
			var g float64
			g, n = geomean(logs[tw])
			sum = math.Log(g)
		}
		if n > bestN || n == bestN && sum > bestMean {
			best, bestN, bestMean = tw, n, sum
		}
	}
	return best
}

// geomean is the geometric mean of the ratios whose logs are xs (summed in sorted order, so that
// its last bits do not depend on map order) and their count.
func geomean(xs map[protocol.Shape]float64) (float64, int) {
	v := make([]float64, 0, len(xs))
	for _, x := range xs {
		v = append(v, x)
	}
	sort.Float64s(v)
	sum := 0.0
	for _, x := range v {
		sum += x
	}
	if len(v) == 0 {
		return 0, 0
	}
	return math.Exp(sum / float64(len(v))), len(v)
}

// isTwin says whether v is a misaligned twin (variants.yaml MIS > 0).
func isTwin(v *variant.Variant) bool {
	mis, _ := v.Param("MIS")
	return mis > 0
}

// twinMinGain is the smallest measured gain for which a twin replaces its variant.
const twinMinGain = 1.01

// ChooseEpilogue is the fused-epilogue entry's choice for a row-major NN problem with epilogue epi:
// the export's variant of epi, or an error when it holds none or that variant cannot take the
// problem.
func (p *Plan) ChooseEpilogue(epi variant.Epilogue, m, n, k, lda, ldb, ldc int) (int, error) {
	if epi == variant.EpiNone || !epi.Valid() {
		return -1, fmt.Errorf("epilogue %q: want one of bias_row, bias_col, bias_relu_row, bias_relu_col, bias_gelu_row, bias_gelu_col", string(epi))
	}
	for _, e := range p.Epilogues {
		if e.Epilogue != epi {
			continue
		}
		v := &p.Variants[e.Kernel].V
		if err := v.Supports(m, n, k, lda, ldb, ldc); err != nil {
			return -1, fmt.Errorf("epilogue %s: %s: %w", epi, v.Name, err)
		}
		return e.Kernel, nil
	}
	return -1, fmt.Errorf("epilogue %s: the export holds no kernel for it", epi)
}

// ChooseColumnMajor is Choose for a column-major BLAS call (cublasSgemm's arguments, transa and
// transb 'N' or 'T'; see variant.ColumnMajor): the row-major kernel of the swapped problem.
func (p *Plan) ChooseColumnMajor(transa, transb byte, m, n, k, lda, ldb, ldc int) (int, error) {
	op, err := variant.ColumnMajor(transa, transb)
	if err != nil {
		return -1, err
	}
	if err := blasLD(transa, transb, m, n, k, lda, ldb, ldc); err != nil {
		return -1, err
	}
	return p.Choose(op, n, m, k, ldb, lda, ldc)
}

// blasLD checks cublasSgemm's leading-dimension rules: lda ≥ max(1, transa == N ? m : k),
// ldb ≥ max(1, transb == N ? k : n), ldc ≥ max(1, m).
func blasLD(transa, transb byte, m, n, k, lda, ldb, ldc int) error {
	wa, wb := k, n
	if transa == 'N' || transa == 'n' {
		wa = m
	}
	if transb == 'N' || transb == 'n' {
		wb = k
	}
	if lda < max(1, wa) || ldb < max(1, wb) || ldc < max(1, m) {
		return fmt.Errorf("leading dimensions lda=%d ldb=%d ldc=%d too small for transa=%c transb=%c m=%d n=%d k=%d (at least %d, %d, %d)",
			lda, ldb, ldc, transa, transb, m, n, k, max(1, wa), max(1, wb), max(1, m))
	}
	return nil
}

// supports is variant.Supports plus the 32-bit limit of the kernels' int parameters.
func supports(v *variant.Variant, m, n, k, lda, ldb, ldc int) error {
	for _, x := range []int{m, n, k, lda, ldb, ldc} {
		if x > math.MaxInt32 {
			return fmt.Errorf("dimension %d exceeds the kernels' 32-bit int", x)
		}
	}
	return v.Supports(m, n, k, lda, ldb, ldc)
}
