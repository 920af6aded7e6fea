package export

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"tilegen/internal/orchestrator"
	"tilegen/internal/protocol"
	"tilegen/internal/results"
	"tilegen/internal/shapes"
	"tilegen/internal/variant"
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
	// Won are the shape classes it was chosen for.
	Won []protocol.Shape
	// Tuned are its times on every class it was measured on.
	Tuned []Measure
	Edge  EdgeSuite
	// WorstRatio is the smallest Ratio over Tuned (its worst case against cuBLAS).
	WorstRatio float64
}

// Class is a tuned shape (dimensions and op) and the exported variant chosen for it.
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
	Variants  []Chosen         // sorted by name
	Classes   []Class          // sorted by op (variant.Ops order), then M, N, K
	// Defaults holds, per op (indexed by variant.Op.Index), the robust default's index into
	// Variants, or -1 when the export has no kernel for that op.
	Defaults [4]int
	Excluded []Exclusion
	Inputs   []Input
	Content  string
	Devices  []protocol.Device
	GPU      string
	// Unhashed counts the records (tune and verify, not skipped) without source/PTX hashes, accepted
	// with AllowUnhashed.
	Unhashed      int
	AllowUnhashed bool
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
		switch {
		case v == nil:
			why[r.Variant] = "not in the generated catalog"
		case v.Batched:
			why[r.Variant] = "a strided-batched kernel: the export has no strided-batched entry"
		case r.Family != "" && r.Family != v.Family, r.Params != "" && r.Params != v.ParamString():
			why[r.Variant] = fmt.Sprintf("results are of another build (family %s params %q; the manifest says %s %q)",
				safeText(r.Family), r.Params, safeText(v.Family), v.ParamString())
		case r.Status != results.StatusSkipped && staleHashes(r, v):
			why[r.Variant] = fmt.Sprintf("its %s record at %s measured source %s, PTX %s; the generated directory now has source %s, PTX %s "+
				"(regenerated since): %s", r.Kind, results.ShapeString(r.Shape), short(r.SourceHash), short(r.PTXHash),
				short(v.SourceHash), short(v.PTXHash), rerun(v.Name))
		case r.Status != results.StatusSkipped && r.SourceHash == "" && !allowUnhashed:
			why[r.Variant] = fmt.Sprintf("its %s record at %s carries no source/PTX hash (written before results recorded them), "+
				"so the measured kernel cannot be matched to the generated one: %s, or pass --allow-unhashed", r.Kind,
				results.ShapeString(r.Shape), rerun(v.Name))
		case r.Status != results.StatusSkipped && r.Resources != v.Resources:
			why[r.Variant] = fmt.Sprintf("ptxas resources in the results (%+v) differ from the manifest's (%+v): stale results or generated directory",
				r.Resources, v.Resources)
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

// staleHashes says whether a record names a source or PTX other than the manifest's (a record
// without hashes names none).
func staleHashes(r results.Record, v *variant.Variant) bool {
	return r.SourceHash != "" && r.SourceHash != v.SourceHash || r.PTXHash != "" && r.PTXHash != v.PTXHash
}

// rerun says how to measure a variant again.
func rerun(name string) string {
	return fmt.Sprintf("rerun `runner tune --variants %s` on the tuned shapes and `runner verify --variants %s`", name, name)
}

// measures collects the ok tune records per shape and variant (the larger median when a pair was
// timed on several devices), pairing each with cuBLAS on the same device.
func measures(recs []results.Record) (map[protocol.Shape]map[string]Measure, error) {
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
		// Batched shapes are no dispatch classes: the entries run one product.
		if r.Kind != results.KindTune || r.Status != results.StatusOK || r.Timing == nil || r.Shape.Batch > 0 {
			continue
		}
		c, ok := cublas[ck(r.Shape, r.Device)]
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

// choose decides the exported variants, the classes and the default.
func choose(rs *resultsSet, manifest variant.Manifest, shapes []protocol.Shape, allowUnhashed bool) (*Plan, error) {
	byName := map[string]*variant.Variant{}
	for i := range manifest.Variants {
		byName[manifest.Variants[i].Name] = &manifest.Variants[i]
	}
	gpus := map[string]bool{}
	for _, r := range rs.records {
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
		return nil, fmt.Errorf("tune results mix GPU models (%s): export one model's results", strings.Join(names, ", "))
	}
	ms, err := measures(rs.records)
	if err != nil {
		return nil, err
	}
	if len(ms) == 0 {
		return nil, fmt.Errorf("no ok tune records: pass a runner tune results directory")
	}
	var classes []protocol.Shape
	if shapes == nil {
		for s := range ms {
			classes = append(classes, s)
		}
	} else {
		for _, s := range shapes {
			if ms[s] == nil {
				return nil, fmt.Errorf("--shapes: %s was not tuned in the results", results.ShapeString(s))
			}
			classes = append(classes, s)
		}
	}
	sort.Slice(classes, func(i, j int) bool { return lessShape(classes[i], classes[j]) })
	why, edge, fullEdge := eligibility(rs.records, byName, allowUnhashed)

	excl := map[string]*Exclusion{}
	winners := map[protocol.Shape]string{}
	for _, s := range classes {
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
		for _, n := range names {
			if v := byName[n]; v != nil && v.Op != s.Op {
				continue // records of a variant at a problem of another op: no candidate
			}
			if why[n] == "" {
				winners[s] = n
				break
			}
			if excl[n] == nil {
				excl[n] = &Exclusion{Variant: n, Reason: why[n]}
			}
			excl[n].WouldHaveWon = append(excl[n].WouldHaveWon, s)
		}
		if winners[s] == "" {
			return nil, fmt.Errorf("no exportable variant for %s (%d timed, all excluded; e.g. %s: %s)",
				results.ShapeString(s), len(names), safeText(names[0]), why[names[0]])
		}
	}
	for n, w := range why {
		if w != "" && excl[n] == nil {
			excl[n] = &Exclusion{Variant: n, Reason: w}
		}
	}

	// The robust default of each op: timed on every class of the op, whole edge suite passed, best
	// worst-case ratio (the largest smallest cuBLAS time / tilegen time).
	var candidates []string
	for n := range byName {
		candidates = append(candidates, n)
	}
	sort.Strings(candidates)
	defaults := map[variant.Op]string{}
	for _, op := range variant.Ops {
		if !slices.ContainsFunc(classes, func(s protocol.Shape) bool { return s.Op == op }) {
			continue // no class of this op: the export has no kernel for it
		}
		bestDef, bestWorst := "", math.Inf(-1)
		for _, n := range candidates {
			if byName[n].Op != op || why[n] != "" || !fullEdge[n] {
				continue
			}
			worst, all := math.Inf(1), true
			for _, s := range classes {
				if s.Op != op {
					continue
				}
				m, ok := ms[s][n]
				if !ok {
					all = false
					break
				}
				worst = math.Min(worst, m.Ratio)
			}
			if all && worst > bestWorst {
				bestDef, bestWorst = n, worst
			}
		}
		if bestDef == "" {
			return nil, fmt.Errorf("no robust default for %s: no exportable %s variant was timed on every %s class and passed its whole edge suite with no shape skipped", op, op, op)
		}
		defaults[op] = bestDef
	}

	chosen := map[string]bool{}
	for _, n := range defaults {
		chosen[n] = true
	}
	for _, n := range winners {
		chosen[n] = true
	}
	p := &Plan{Manifest: variant.Manifest{Generator: manifest.Generator, NVCC: manifest.NVCC, Arch: manifest.Arch},
		Inputs: rs.inputs, Content: rs.contentHash, Devices: rs.info.Devices}
	for g := range gpus {
		p.GPU = g
	}
	idx := map[string]int{}
	var names []string
	for n := range chosen {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		c := Chosen{V: *byName[n], Edge: edge[n], WorstRatio: math.Inf(1)}
		for _, s := range classes {
			if m, ok := ms[s][n]; ok {
				c.Tuned = append(c.Tuned, m)
				c.WorstRatio = math.Min(c.WorstRatio, m.Ratio)
			}
			if winners[s] == n {
				c.Won = append(c.Won, s)
			}
		}
		idx[n] = len(p.Variants)
		p.Variants = append(p.Variants, c)
	}
	for i, op := range variant.Ops {
		p.Defaults[i] = -1
		if n, ok := defaults[op]; ok {
			p.Defaults[i] = idx[n]
		}
	}
	for _, s := range classes {
		m := ms[s][winners[s]]
		p.Classes = append(p.Classes, Class{Shape: s, Variant: idx[winners[s]], MedianMS: m.MedianMS, CublasMS: m.CublasMS})
	}
	for _, e := range excl {
		p.Excluded = append(p.Excluded, *e)
	}
	sort.Slice(p.Excluded, func(i, j int) bool { return p.Excluded[i].Variant < p.Excluded[j].Variant })
	return p, nil
}

// Choose is the dispatch rule of the exported artifacts (see the package doc): the index into
// p.Variants launched for the row-major problem of op, or an error saying why none can be. Pointer
// alignment is not known here; the artifacts also check it.
func (p *Plan) Choose(op variant.Op, m, n, k, lda, ldb, ldc int) (int, error) {
	if m < 1 || n < 1 || k < 1 {
		return -1, fmt.Errorf("shape %dx%dx%d: every dimension must be at least 1", m, n, k)
	}
	if !op.Valid() {
		return -1, fmt.Errorf("op %q: want NN, NT, TN or TT", string(op))
	}
	def := p.Defaults[op.Index()]
	if def < 0 {
		return -1, fmt.Errorf("no %s kernel in this export (it was tuned for %s)", op, p.opsList())
	}
	// The classes of op (contiguous: classes are sorted by op first).
	var cls []Class
	for _, c := range p.Classes {
		if c.Shape.Op == op {
			cls = append(cls, c)
		}
	}
	best := def
	if i := shapes.Nearest(shapes.Dispatch, m, n, k, len(cls), func(i int) (int, int, int) {
		c := cls[i].Shape
		return c.M, c.N, c.K
	}, nil); i >= 0 {
		best = cls[i].Variant
	}
	err := supports(&p.Variants[best].V, m, n, k, lda, ldb, ldc)
	if err == nil {
		return best, nil
	}
	if best == def {
		return -1, fmt.Errorf("%s: %w", p.Variants[best].V.Name, err)
	}
	derr := supports(&p.Variants[def].V, m, n, k, lda, ldb, ldc)
	if derr == nil {
		return def, nil
	}
	return -1, fmt.Errorf("%s (nearest class): %v; default %s: %w", p.Variants[best].V.Name, err, p.Variants[def].V.Name, derr)
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

// opsList names the ops the export has kernels for.
func (p *Plan) opsList() string {
	var ops []string
	for i, op := range variant.Ops {
		if p.Defaults[i] >= 0 {
			ops = append(ops, op.String())
		}
	}
	return strings.Join(ops, ", ")
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
