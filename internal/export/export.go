package export

import (
	"encoding/json"
	"fmt"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"tilegen/internal/dispatch"
	"tilegen/internal/orchestrator"
	"tilegen/internal/protocol"
	"tilegen/internal/results"
	"tilegen/internal/variant"
	"tilegen/internal/workload"
)

// Options are one export's inputs.
type Options struct {
	// Results are results directories (results.jsonl, device.json).
	Results []string
	// Shapes restricts the shapes the dispatch rule is fitted on to these tuned shapes (nil: every
	// tuned shape, or the corpus).
	Shapes []protocol.Shape
	// Corpus, when set, is the workload corpus the dispatch rule is fitted on (every shape must be
	// tuned in the results); nil: the tuned shapes.
	Corpus []workload.Entry
	// BucketsPerOctave is the dispatch table's resolution: 1, 2 or 4 (0: 2).
	BucketsPerOctave int
	// Generated is the generated directory (manifest.json, cuda/, ptx/).
	Generated string
	// Out is the directory to create: the Go package's directory, also holding <Name>.cuh and <Name>.json.
	Out string
	// Name names the header, its launcher (<Name>_sgemm) and the provenance file; a C identifier.
	Name string
	// GoPackage is the Go package's import path; its last element is the package name.
	GoPackage string
	// Force replaces an existing Out that is empty or a previous export, removing only the files
	// that export wrote.
	Force bool
	// AllowUnhashed accepts records without source/PTX hashes (written before results carried them),
	// matching them to the generated kernels by ptxas resources only.
	AllowUnhashed bool
	// Log receives the summary (classes, default, exclusions); nil discards it.
	Log io.Writer
	// Precision is the arithmetic the export's kernels may use (variant.Precision): FP32 (the zero
	// value) exports FP32 kernels only; 3xtf32 also admits the 3xTF32 kernels (FP32-accurate,
	// ratios against cuBLAS SGEMM); tf32 exports TF32 kernels only (ratios against cuBLAS TF32),
	// labelled tf32 in the provenance, the header and the package, never mixed with FP32 ones.
	Precision variant.Precision
	// SASS, when set, makes the export carry each kernel's cubin for its architectures with the PTX
	// (see SASS); nil: the PTX alone.
	SASS *SASS
}

var cKeywords = map[string]bool{}

func init() {
	for _, k := range strings.Fields(`alignas alignof and asm auto bool break case catch char class const constexpr
		const_cast continue decltype default delete do double dynamic_cast else enum explicit export extern false float
		for friend goto if inline int long mutable namespace new noexcept not nullptr operator or private protected
		public register reinterpret_cast restrict return short signed sizeof static static_assert static_cast struct
		switch template this thread_local throw true try typedef typeid typename union unsigned using virtual void
		volatile wchar_t while`) {
		cKeywords[k] = true
	}
}

// ValidName checks a --name: a C identifier of at most 64 characters that is no C++ keyword and
// does not start with an underscore (reserved names).
func ValidName(name string) error {
	switch {
	case !variant.IsIdent(name) || len(name) > 64:
		return fmt.Errorf("name %q: want a C identifier (letters, digits, underscore; at most 64)", name)
	case strings.HasPrefix(name, "_"):
		return fmt.Errorf("name %q: names starting with an underscore are reserved in C", name)
	case cKeywords[name]:
		return fmt.Errorf("name %q is a C++ keyword", name)
	}
	return nil
}

var pathElem = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.~-]*$`)

// PackageName checks a --go-package import path and returns its package name (the last element,
// which must be a Go identifier, not a keyword, not "main").
func PackageName(path string) (string, error) {
	if path == "" || strings.HasPrefix(path, "/") || strings.HasSuffix(path, "/") || len(path) > 200 {
		return "", fmt.Errorf("go package %q: want an import path like example.com/project/sgemm", path)
	}
	elems := strings.Split(path, "/")
	for _, e := range elems {
		if e == "." || e == ".." || !pathElem.MatchString(e) {
			return "", fmt.Errorf("go package %q: element %q is not allowed in an import path", path, e)
		}
	}
	name := elems[len(elems)-1]
	if !token.IsIdentifier(name) || token.IsKeyword(name) || name == "main" || strings.HasPrefix(name, "_") {
		return "", fmt.Errorf("go package %q: its last element %q must be a Go identifier usable as a package name", path, name)
	}
	return name, nil
}

// load reads the results and the generated directory's manifest and checks that they belong
// together; unhashed counts the records without source/PTX hashes.
func load(o Options) (rs *resultsSet, m variant.Manifest, unhashed int, err error) {
	if rs, err = readResults(o.Results); err != nil {
		return nil, m, 0, err
	}
	cat, err := orchestrator.LoadDir(o.Generated)
	if err != nil {
		return nil, m, 0, err
	}
	m = variant.Manifest{NVCC: cat.NVCC(), Arch: cat.Arch(), Variants: cat.Variants()}
	b, err := os.ReadFile(filepath.Join(o.Generated, "manifest.json"))
	if err != nil {
		return nil, m, 0, fmt.Errorf("read catalog: %w", err)
	}
	var head struct {
		Generator string `json:"generator"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return nil, m, 0, fmt.Errorf("manifest: %w", err)
	}
	m.Generator = head.Generator
	if !o.Precision.Valid() {
		return nil, m, 0, fmt.Errorf("precision %q: want fp32, 3xtf32 or tf32", string(o.Precision))
	}
	kept := precisionRecords(rs.records, o.Precision)
	if tuned(kept) == 0 && tuned(rs.records) > 0 {
		var other []string
		for _, r := range rs.records {
			if l := r.Shape.Precision.Label(); r.Kind == results.KindTune && !slices.Contains(other, l) {
				other = append(other, l)
			}
		}
		return nil, m, 0, fmt.Errorf("the results hold no tune record of precision %s (they have %s): pass --precision to export those",
			o.Precision, strings.Join(other, ", "))
	}
	rs.records = kept
	if rs.info.Arch != "" && m.Arch != rs.info.Arch {
		return nil, m, 0, fmt.Errorf("results were measured with %s PTX, the generated directory has %s", rs.info.Arch, m.Arch)
	}
	unhashed, measured := rs.unhashed()
	if unhashed == measured && measured > 0 && !o.AllowUnhashed {
		return nil, m, 0, fmt.Errorf("no record of %s carries source/PTX hashes (they were written before results recorded them), "+
			"so export cannot tell whether the generated kernels are the ones measured: rerun runner tune and runner verify "+
			"with this generated directory, or pass --allow-unhashed to match them by ptxas resources only", strings.Join(o.Results, ", "))
	}
	return rs, m, unhashed, nil
}

// tuned counts the tune records of recs.
func tuned(recs []results.Record) int {
	n := 0
	for _, r := range recs {
		if r.Kind == results.KindTune {
			n++
		}
	}
	return n
}

// precisionRecords keeps the records of the precisions an export of precision p admits (p itself;
// FP32 too under 3xtf32, as both meet the FP32 tolerance and are timed against cuBLAS SGEMM), their
// tune and cuBLAS shapes made FP32: the export's classes are problems, and its precision is the
// export's label. Verify records keep their shapes, which the edge suite of each variant's own
// precision (orchestrator.EdgeShapes) is matched against.
func precisionRecords(recs []results.Record, p variant.Precision) []results.Record {
	var out []results.Record
	for _, r := range recs {
		sp := r.Shape.Precision
		if sp != p && !(p == variant.Precision3xTF32 && sp == variant.PrecisionFP32) {
			continue
		}
		if r.Kind != results.KindVerify {
			r.Shape.Precision = variant.PrecisionFP32
		}
		out = append(out, r)
	}
	return out
}

// Workload is op's dispatch rule's fitting input as an export would fit it (o.Corpus, or the
// tuned shapes: the same records, eligibility and exclusions), for cross-validating the rule, and
// the GPU: its name and the first of the inputs' devices of that name with memory clock and bus
// width (zero when none says).
func Workload(o Options, op variant.Op) (*dispatch.Data, string, protocol.Device, error) {
	rs, m, _, err := load(o)
	if err != nil {
		return nil, "", protocol.Device{}, err
	}
	sel, err := selectInputs(rs, m, o)
	if err != nil {
		return nil, "", protocol.Device{}, err
	}
	d := sel.data[op]
	if d == nil || len(d.Kernels) == 0 {
		return nil, "", protocol.Device{}, fmt.Errorf("no exportable %s variant was timed on the %s shapes", op, op)
	}
	var dev protocol.Device
	for _, x := range rs.info.Devices {
		if x.Name == sel.gpu && x.MemClockKHz > 0 && x.MemBusWidth > 0 {
			dev = x
			break
		}
	}
	return d, sel.gpu, dev, nil
}

// Prepare validates the options and decides the export without writing anything.
func Prepare(o Options) (*Plan, map[string][]byte, error) {
	if err := ValidName(o.Name); err != nil {
		return nil, nil, err
	}
	if o.GoPackage == "" {
		o.GoPackage = strings.ToLower(o.Name)
	}
	pkg, err := PackageName(o.GoPackage)
	if err != nil {
		return nil, nil, err
	}
	rs, m, unhashed, err := load(o)
	if err != nil {
		return nil, nil, err
	}
	p, err := choose(rs, m, o)
	if err != nil {
		return nil, nil, err
	}
	p.Name, p.GoPackage, p.PkgName = o.Name, o.GoPackage, pkg
	p.Unhashed, p.AllowUnhashed = unhashed, o.AllowUnhashed
	var chosen []variant.Variant
	for _, c := range p.Variants {
		chosen = append(chosen, c.V)
	}
	srcs, err := readSources(o.Generated, chosen)
	if err != nil {
		return nil, nil, err
	}
	for i := range p.Variants {
		p.Variants[i].src = srcs[p.Variants[i].V.Name]
	}
	if o.SASS != nil {
		if p.SASS, err = o.SASS.resolve(p.GPU, p.Devices); err != nil {
			return nil, nil, err
		}
		if err := p.SASS.buildImages(p); err != nil {
			return nil, nil, err
		}
	}

	files, err := goFiles(p)
	if err != nil {
		return nil, nil, err
	}
	for _, c := range p.Variants {
		files["ptx/"+c.V.Name+".ptx"] = []byte(c.src.ptx)
		if c.src.image != nil {
			files["ptx/"+c.V.Name+".fatbin"] = c.src.image
		}
	}
	if files[o.Name+".cuh"], err = cuhFile(p); err != nil {
		return nil, nil, err
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	if files[o.Name+".json"], err = provenanceFile(p, rs.info.NVCC, names); err != nil {
		return nil, nil, err
	}
	return p, files, nil
}

// Run exports: Prepare, then write the files into o.Out (replacing it only with o.Force).
func Run(o Options) error {
	out := filepath.Clean(o.Out)
	if o.Out == "" || out == "." || out == "/" || out == ".." || strings.HasSuffix(out, string(filepath.Separator)+"..") {
		return fmt.Errorf("--out %q: want a new directory", o.Out)
	}
	prev, err := previousExport(out, o.Force)
	if err != nil {
		return err
	}
	p, files, err := Prepare(o)
	if err != nil {
		return err
	}
	if prev == nil {
		err = writeNew(out, files)
	} else {
		err = replace(out, files, prev)
	}
	if err != nil {
		return err
	}
	if o.Log != nil {
		summary(o.Log, p, out)
	}
	return nil
}

// opLabel is " for OP" when the export holds kernels of another op than NN, else "" (an NN-only
// export reads as before ops existed).
func (p *Plan) opLabel(op variant.Op) string {
	if p.opsList() == "NN" {
		return ""
	}
	return " for " + op.String()
}

func summary(w io.Writer, p *Plan, out string) {
	fmt.Fprintf(w, "exported %d variant(s), %d shape class(es) on %s into %s (package %s, %s.cuh, %s.json)\n",
		len(p.Variants), len(p.Classes), safeText(p.GPU), safeText(out), p.GoPackage, p.Name, p.Name)
	fmt.Fprintf(w, "  ratio = cuBLAS time / tilegen time (above 1: faster than cuBLAS)\n")
	if p.SASS != nil {
		fmt.Fprintf(w, "  SASS for %s (ptxas %s) with the PTX, per kernel\n", strings.Join(p.SASS.Archs, ", "), safeText(p.SASS.Version))
		for _, c := range p.Variants {
			if c.src.image == nil {
				target := "an unknown architecture"
				if m := ptxTarget.FindStringSubmatch(c.src.ptx); m != nil {
					target = m[1]
				}
				fmt.Fprintf(w, "  %s: PTX alone (it targets %s: no architecture asked for takes it, or this ptxas cannot build it)\n", c.V.Name, target)
			}
		}
		if warn := p.SASS.staleWarning(p.GPU, p.Devices); warn != "" {
			fmt.Fprintf(w, "  %s\n", warn)
		}
		if arch := timingArch(p.GPU, p.Devices); arch != "" {
			n, differ := fidelity(p, arch, p.tunedRegs)
			fmt.Fprintf(w, "  %d of %d %s cubins have the registers of the driver's compile at tuning (a sign of the same code)\n", n-len(differ), n, arch)
			for _, d := range differ {
				fmt.Fprintf(w, "    differs: %s\n", d)
			}
		}
	}
	for _, c := range p.Classes {
		fmt.Fprintf(w, "  %-19s %-24s %9.4f ms  ratio %.2f\n", results.ShapeString(c.Shape),
			p.Variants[c.Variant].V.Name, c.MedianMS, c.Ratio())
	}
	fitted := "the tuned shapes"
	if p.Corpus {
		fitted = "the corpus"
	}
	for _, r := range p.Rules {
		d := p.Variants[r.Default]
		fmt.Fprintf(w, "  robust default%s: %s (worst ratio %.2f, edge suite %d/%d passed)\n", p.opLabel(r.Op), d.V.Name, d.WorstRatio,
			d.Edge.Passed, d.Edge.Shapes)
		dims := r.Rule.Dims()
		fmt.Fprintf(w, "  dispatch%s: %d×%d×%d tables (M×N×K buckets, %d per octave) fitted on %d shapes (%s)%s, hyperparameters per regime class:\n",
			p.opLabel(r.Op), dims[0], dims[1], dims[2], 1<<r.Rule.Shift, r.FitShapes, fitted, borrowedText(r.Borrowed))
		for reg, pr := range r.Rule.RegimeParams {
			fmt.Fprintf(w, "    %-6s bandwidth %g octaves (adaptive %g), ridge %g, waves %g, edge %g, cross-regime %g, alignment %g, reach %g, pinned cells %v\n",
				dispatch.RegimeNames[reg], pr.Bandwidth, pr.Adaptive, pr.Ridge, pr.Waves, pr.Edge, pr.CrossRegime, pr.Align, pr.Reach, pr.Pin)
		}
		if g := r.Rule.Guard; g != nil {
			n := 0
			for i := range p.Variants {
				if p.WaveSlots(i) > 0 {
					n++
				}
			}
			fmt.Fprintf(w, "    wave guard: %s replaces %d variant(s) where M·N·K ≥ %d, it has %d output tiles or more covering at most 1/%d of M×N beyond it and their waves would run at most %d/%d full, except on %d shape(s) measured faster without it\n",
				p.Variants[g.Kernel].V.Name, n, g.MinWork, g.MinTiles, g.EdgeDen, g.WavesDen, g.WavesNum, len(g.Keep))
		}
		if g := r.Rule.Bulk; g != nil {
			fmt.Fprintf(w, "    bulk guard: %s runs where K ≥ %d, its %dx%d tiles fill %d waves of %d or more and they cover at most %d/%d more than M×N\n",
				p.Variants[g.Kernel].V.Name, g.MinK, g.TileRows, g.TileCols, g.MinWaves, g.Slots, g.FullNum-g.FullDen, g.FullDen)
		}
	}
	for _, c := range p.Variants {
		for cls := 1; cls < 4; cls++ {
			if tw := c.Twins[cls]; tw.Index > 0 {
				fmt.Fprintf(w, "  misaligned twin (%s): %s runs instead of %s where %s (%.3fx on %d tuned shape(s))\n",
					misClassNames[cls], p.Variants[tw.Index].V.Name, c.V.Name, misClassConds[cls], tw.Gain, tw.Shapes)
			}
		}
	}
	for _, r := range p.Batched {
		for _, c := range r.Classes {
			fmt.Fprintf(w, "  %-19s %-24s %9.4f ms  ratio %.2f (cublasSgemmStridedBatched)\n", results.ShapeString(c.Shape),
				p.Variants[c.Variant].V.Name, c.MedianMS, c.Ratio())
		}
		fmt.Fprintf(w, "  strided-batched default for %s: %s\n", r.Op, p.Variants[r.Default].V.Name)
	}
	for _, e := range p.Epilogues {
		fmt.Fprintf(w, "  epilogue %s: %s (ratio %.2f against cuBLAS + separate epilogue over %d shape(s))\n", e.Epilogue,
			p.Variants[e.Kernel].V.Name, e.Ratio, len(e.Shapes))
	}
	for _, s := range p.Untimed {
		fmt.Fprintf(w, "  note: at %s the rule launches a variant that was not timed there\n", results.ShapeString(s))
	}
	if p.Unhashed > 0 {
		fmt.Fprintf(w, "  warning: %d record(s) carry no source/PTX hash (--allow-unhashed): matched to the generated kernels by ptxas resources only\n",
			p.Unhashed)
	}
	n := 0
	for _, e := range p.Excluded {
		if len(e.WouldHaveWon) > 0 {
			var ss []string
			for _, s := range e.WouldHaveWon {
				ss = append(ss, results.ShapeString(s))
			}
			fmt.Fprintf(w, "  excluded %s (fastest at %s): %s\n", safeText(e.Variant), strings.Join(ss, ", "), safeText(e.Reason))
		} else {
			n++
		}
	}
	if n > 0 {
		fmt.Fprintf(w, "  %d other variant(s) excluded (reasons in %s.json)\n", n, p.Name)
	}
}
