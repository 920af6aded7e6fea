package export

import (
	"encoding/json"
	"fmt"
	"sort"

	"tilegen/internal/dispatch"
	"tilegen/internal/protocol"
	"tilegen/internal/variant"
)

// Exporter is the provenance file's "exporter" value; --force replaces only directories whose
// provenance carries it.
const Exporter = "tilegen export"

// Provenance is <name>.json: where every number of the export came from.
type Provenance struct {
	Exporter  string `json:"exporter"`
	Name      string `json:"name"`
	GoPackage string `json:"go_package"`
	// Precision is the arithmetic of the exported kernels: 3xtf32 (FP32 accuracy on TF32 tensor
	// cores, with FP32 kernels) or tf32 (TF32 accuracy, ratios against cuBLAS TF32); absent: FP32,
	// as every export before the precision axis.
	Precision variant.Precision `json:"precision,omitempty"`
	// Generator, NVCC and Arch are the generated directory's manifest (the PTX's compiler).
	Generator string `json:"generator"`
	NVCC      string `json:"nvcc"`
	Arch      string `json:"arch"`
	// ResultsNVCC is the nvcc the results' device.json recorded.
	ResultsNVCC string `json:"results_nvcc"`
	// SASSPTXAS is the ptxas that built the kernels' SASS (--sass), else empty.
	SASSPTXAS string `json:"sass_ptxas,omitempty"`
	GPU       string `json:"gpu"`
	// Devices are the devices of the inputs (name, UUID, driver, cuBLAS version, clocks).
	Devices []protocol.Device `json:"devices"`
	Inputs  []Input           `json:"inputs"`
	// ContentHash is the SHA-256 over the deduplicated records, each as JSON, sorted by key.
	ContentHash string `json:"results_content_hash"`
	// UnhashedRecords counts the records (tune and verify) without source/PTX hashes, accepted with
	// --allow-unhashed (AllowUnhashed) on the ptxas-resources check alone.
	UnhashedRecords int  `json:"unhashed_records"`
	AllowUnhashed   bool `json:"allow_unhashed"`
	// RatioDefinition says what every "ratio" here is.
	RatioDefinition string       `json:"ratio_definition"`
	Dispatch        DispatchDoc  `json:"dispatch"`
	Variants        []VariantDoc `json:"variants"`
	Excluded        []Exclusion  `json:"excluded"`
	// Files are the files of the export, this one included, relative to its directory: the files
	// a later export with --force replaces or removes (and no others).
	Files []string `json:"files"`
}

// DispatchDoc is the dispatch: one rule per op the export has kernels for.
type DispatchDoc struct {
	Rule string `json:"rule"`
	// Ops are the ops' rules, in NN, NT, TN, TT order.
	Ops []OpDispatchDoc `json:"ops"`
	// Corpus says whether the rules were fitted on a workload corpus (else the tuned shapes).
	Corpus bool `json:"corpus"`
	// Classes are the shapes fitted on with the variant launched there; Untimed the shapes where that
	// variant was not timed.
	Classes []ClassDoc       `json:"classes"`
	Untimed []protocol.Shape `json:"untimed"`
}

// OpDispatchDoc is one op's dispatch rule.
type OpDispatchDoc struct {
	Op      string `json:"op"`
	Default string `json:"default"`
	// BucketsPerOctave, Lo and Hi are the table's buckets (internal/dispatch's Rule).
	BucketsPerOctave int    `json:"buckets_per_octave"`
	Lo               [3]int `json:"bucket_lo"`
	Hi               [3]int `json:"bucket_hi"`
	// Params are the fitted hyperparameters; Candidates the variants the table chose from.
	Params     dispatch.Params `json:"params"`
	Candidates []string        `json:"candidates"`
	// FittedOn is how many shapes of the op the rule was fitted on.
	FittedOn int `json:"fitted_on_shapes"`
	// Borrowed is what the rule took from the NN corpus in the regime classes where the op had no
	// shape of its own (absent when nothing).
	Borrowed *Borrowed `json:"borrowed_from_nn,omitempty"`
	// WaveGuard is the rule's wave guard (internal/dispatch's WaveGuard), absent when it has none.
	WaveGuard *WaveGuardDoc `json:"wave_guard,omitempty"`
	// BulkGuard is the rule's bulk guard (internal/dispatch's BulkGuard), absent when it has none.
	BulkGuard *BulkGuardDoc `json:"bulk_guard,omitempty"`
}

// WaveGuardDoc is an op's wave guard: its kernel replaces a kernel with wave_slots (a fixed grid,
// or a launch-time split, its slices computed for SMs) on a problem of M·N·K ≥ MinWork on which it
// has MinTiles output tiles or more covering at most M·N/EdgeDen beyond M×N, that is not one of
// the Keep shapes (MxNxK, where the kernel was measured faster than the guard's), and whose blocks
// fill ceil(blocks/slots)·slots·WavesDen ≥ blocks·WavesNum (slots: the variant's wave_slots) or,
// with Cover > 0, whose tiles cover at least Cover × M·N.
type WaveGuardDoc struct {
	Variant  string   `json:"variant"`
	MinWork  int64    `json:"min_work"`
	WavesNum int      `json:"waves_num"`
	WavesDen int      `json:"waves_den"`
	MinTiles int      `json:"min_tiles"`
	EdgeDen  int      `json:"edge_den"`
	SMs      int      `json:"sms"`
	Cover    int      `json:"cover,omitempty"`
	Keep     []string `json:"keep,omitempty"`
}

// BulkGuardDoc is an op's bulk guard: its kernel, a TileRows×TileCols tile, runs where K ≥ MinK,
// its blocks fill at least MinWaves waves of Slots, and the output area its waves cover beyond M×N
// is at most (FullNum−FullDen)/FullDen of M×N.
type BulkGuardDoc struct {
	Variant  string `json:"variant"`
	TileRows int    `json:"tile_rows"`
	TileCols int    `json:"tile_cols"`
	Slots    int    `json:"slots"`
	MinWaves int    `json:"min_waves"`
	MinK     int    `json:"min_k"`
	FullNum  int    `json:"full_num"`
	FullDen  int    `json:"full_den"`
}

// ClassDoc is one shape class.
type ClassDoc struct {
	Shape    protocol.Shape `json:"shape"`
	Variant  string         `json:"variant"`
	MedianMS float64        `json:"median_ms"`
	CublasMS float64        `json:"cublas_median_ms"`
	Ratio    float64        `json:"ratio"`
}

// VariantDoc is one exported variant.
type VariantDoc struct {
	Name          string               `json:"name"`
	Family        string               `json:"family"`
	Params        []variant.Param      `json:"params"`
	Block         variant.Dim2         `json:"block"`
	Tile          variant.Tile         `json:"tile"`
	GridZ         int                  `json:"grid_z"`
	Split         *variant.SplitRule   `json:"split,omitempty"` // grid z chosen at launch by this rule (then GridZ is its max)
	DynamicShared int                  `json:"dynamic_shared"`
	Requires      variant.Requirements `json:"requires"`
	Resources     variant.Resources    `json:"resources"`
	SourceSHA256  string               `json:"source_sha256"`
	PTXSHA256     string               `json:"ptx_sha256"`
	// SASSArchs and FatbinSHA256: with --sass, the architectures of the kernel's SASS and the
	// fatbin (SASS and PTX) the artifacts load.
	SASSArchs    []string `json:"sass_archs,omitempty"`
	FatbinSHA256 string   `json:"fatbin_sha256,omitempty"`
	// SASSRegisters are the registers of each of SASSArchs's cubins; TunedRegisters those the
	// driver's compile of the PTX had at tuning (0: not recorded), for comparison.
	SASSRegisters  []int `json:"sass_registers,omitempty"`
	TunedRegisters int   `json:"tuned_registers,omitempty"`
	// Op is the operation the kernel computes (NN, NT, TN, TT); Default whether it is its op's
	// robust default.
	Op         string           `json:"op"`
	Default    bool             `json:"robust_default"`
	Won        []protocol.Shape `json:"won"`
	WorstRatio float64          `json:"worst_ratio"`
	Tuned      []Measure        `json:"tuned"`
	// TimedAs names the NN twin whose times its op's rule borrowed, for a variant never timed under
	// its own op (WorstRatio is then the twin's).
	TimedAs   string    `json:"timed_as,omitempty"`
	EdgeSuite EdgeSuite `json:"edge_suite"`
	// WaveSlots: SMs × blocks per SM, for the op's wave guard (WaveGuardDoc), when it may replace
	// this kernel.
	WaveSlots int `json:"wave_slots,omitempty"`
	// MisalignedTwins are the variants launched instead of this one on problems whose operands'
	// rows are not 16-byte aligned, one per misalignment class.
	MisalignedTwins []TwinDoc `json:"misaligned_twins,omitempty"`
}

// TwinDoc is one misaligned twin of an exported variant: Class (B, A or A+B) and When (the test on
// the leading dimensions), the Twin launched there, and its evidence: Gain, the geometric mean of
// this variant's time over the twin's on Shapes tuned shapes of the class.
type TwinDoc struct {
	Class  string  `json:"class"`
	When   string  `json:"when"`
	Twin   string  `json:"twin"`
	Gain   float64 `json:"gain"`
	Shapes int     `json:"shapes"`
}

const rule = "the rule of the problem's op (an op without one is an error): table of the cell of bucket(M), bucket(N), bucket(K) " +
	"(buckets_per_octave buckets per octave, clamped to [bucket_lo, bucket_hi]), fitted by internal/dispatch on the op's shapes' timings; " +
	"the cell's variant when it accepts the problem, else the cell's variant without requirements, else the op's robust default, " +
	"else an error; a column-major call (transa, transb) runs the row-major op (transb, transa) on the swapped operands"

const ratioDefinition = "ratio = cuBLAS median time / tilegen median time on the same shape and device (above 1: faster than cuBLAS); " +
	"worst_ratio is a variant's smallest ratio over the shapes fitted on where it was timed"

// provenanceFile renders <name>.json; files are the other files of the export.
func provenanceFile(p *Plan, resultsNVCC string, files []string) ([]byte, error) {
	pv := Provenance{
		Exporter: Exporter, Name: p.Name, GoPackage: p.GoPackage, Precision: p.Precision, Generator: p.Manifest.Generator, NVCC: p.Manifest.NVCC,
		Arch: p.Manifest.Arch, ResultsNVCC: resultsNVCC, GPU: p.GPU, Devices: p.Devices, Inputs: p.Inputs,
		ContentHash: p.Content, UnhashedRecords: p.Unhashed, AllowUnhashed: p.AllowUnhashed, RatioDefinition: ratioDefinition,
		Excluded: p.Excluded, Files: append(append([]string(nil), files...), p.Name+".json"),
		Dispatch: DispatchDoc{Rule: rule, Corpus: p.Corpus, Classes: []ClassDoc{}, Untimed: append([]protocol.Shape{}, p.Untimed...)},
	}
	if p.SASS != nil {
		pv.SASSPTXAS = p.SASS.Version
	}
	for _, r := range p.Rules {
		pv.Dispatch.Ops = append(pv.Dispatch.Ops, OpDispatchDoc{Op: r.Op.String(), Default: p.Variants[r.Default].V.Name,
			BucketsPerOctave: 1 << r.Rule.Shift, Lo: r.Rule.Lo, Hi: r.Rule.Hi, Params: r.Rule.Params, Candidates: r.Candidates,
			FittedOn: r.FitShapes, Borrowed: borrowedDoc(r.Borrowed)})
		if g := r.Rule.Guard; g != nil {
			pv.Dispatch.Ops[len(pv.Dispatch.Ops)-1].WaveGuard = &WaveGuardDoc{Variant: p.Variants[g.Kernel].V.Name, MinWork: g.MinWork,
				WavesNum: g.WavesNum, WavesDen: g.WavesDen, MinTiles: g.MinTiles, EdgeDen: g.EdgeDen, SMs: g.SMs, Cover: g.Cover}
			for _, x := range g.Keep {
				pv.Dispatch.Ops[len(pv.Dispatch.Ops)-1].WaveGuard.Keep = append(pv.Dispatch.Ops[len(pv.Dispatch.Ops)-1].WaveGuard.Keep,
					fmt.Sprintf("%dx%dx%d", x[0], x[1], x[2]))
			}
		}
		if g := r.Rule.Bulk; g != nil {
			pv.Dispatch.Ops[len(pv.Dispatch.Ops)-1].BulkGuard = &BulkGuardDoc{Variant: p.Variants[g.Kernel].V.Name, TileRows: g.TileRows,
				TileCols: g.TileCols, Slots: g.Slots, MinWaves: g.MinWaves, MinK: g.MinK, FullNum: g.FullNum, FullDen: g.FullDen}
		}
	}
	sort.Strings(pv.Files)
	if pv.Excluded == nil {
		pv.Excluded = []Exclusion{}
	}
	for _, c := range p.Classes {
		pv.Dispatch.Classes = append(pv.Dispatch.Classes, ClassDoc{Shape: c.Shape, Variant: p.Variants[c.Variant].V.Name,
			MedianMS: c.MedianMS, CublasMS: c.CublasMS, Ratio: c.Ratio()})
	}
	for i, c := range p.Variants {
		v := c.V
		won := c.Won
		if won == nil {
			won = []protocol.Shape{}
		}
		pv.Variants = append(pv.Variants, VariantDoc{
			Name: v.Name, Family: v.Family, Params: v.Params, Block: v.Block, Tile: v.Tile, GridZ: v.GridZ, Split: v.Split,
			DynamicShared: v.DynamicShared, Requires: v.Requires, Resources: v.Resources, SourceSHA256: v.SourceHash,
			PTXSHA256: v.PTXHash, Op: v.Op.String(), Default: i == p.DefaultOf(v.Op), Won: won, WorstRatio: c.WorstRatio, Tuned: c.Tuned, TimedAs: c.TimedAs, EdgeSuite: c.Edge,
			SASSArchs: c.src.archs, SASSRegisters: c.src.regs, WaveSlots: p.WaveSlots(i),
		})
		if c.src.image != nil {
			pv.Variants[len(pv.Variants)-1].TunedRegisters = p.tunedRegs[v.Name]
		}
		for cls := 1; cls < 4; cls++ {
			if tw := c.Twins[cls]; tw.Index > 0 {
				d := &pv.Variants[len(pv.Variants)-1]
				d.MisalignedTwins = append(d.MisalignedTwins, TwinDoc{Class: misClassNames[cls], When: misClassConds[cls],
					Twin: p.Variants[tw.Index].V.Name, Gain: tw.Gain, Shapes: tw.Shapes})
			}
		}
		if c.src.image != nil {
			pv.Variants[len(pv.Variants)-1].FatbinSHA256 = sha(c.src.image)
		}
	}
	b, err := json.MarshalIndent(pv, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("provenance: %w", err)
	}
	return append(b, '\n'), nil
}

// borrowedDoc is b for the provenance, nil when the rule borrowed nothing.
func borrowedDoc(b Borrowed) *Borrowed {
	if b.Shapes == 0 {
		return nil
	}
	return &b
}
