package export

import (
	"encoding/json"
	"fmt"
	"sort"

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
	// Generator, NVCC and Arch are the generated directory's manifest (the PTX's compiler).
	Generator string `json:"generator"`
	NVCC      string `json:"nvcc"`
	Arch      string `json:"arch"`
	// ResultsNVCC is the nvcc the results' device.json recorded.
	ResultsNVCC string `json:"results_nvcc"`
	GPU         string `json:"gpu"`
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

// DispatchDoc is the dispatch table.
type DispatchDoc struct {
	Rule string `json:"rule"`
	// Default is the robust default of NN (empty when the export has no NN kernel); Defaults names
	// the robust default of every op the export has kernels for.
	Default  string            `json:"default"`
	Defaults map[string]string `json:"defaults"`
	Classes  []ClassDoc        `json:"classes"`
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
	DynamicShared int                  `json:"dynamic_shared"`
	Requires      variant.Requirements `json:"requires"`
	Resources     variant.Resources    `json:"resources"`
	SourceSHA256  string               `json:"source_sha256"`
	PTXSHA256     string               `json:"ptx_sha256"`
	// Op is the operation the kernel computes (NN, NT, TN, TT).
	Op         string           `json:"op"`
	Default    bool             `json:"robust_default"`
	Won        []protocol.Shape `json:"won"`
	WorstRatio float64          `json:"worst_ratio"`
	Tuned      []Measure        `json:"tuned"`
	EdgeSuite  EdgeSuite        `json:"edge_suite"`
}

const rule = "among the tuned shape classes of the problem's op, the nearest by squared log-distance ln²(M/Mc)+ln²(N/Nc)+ln²(K/Kc) " +
	"(ties: first class in M,N,K order); its variant when it accepts the problem, else the op's robust default when it does, " +
	"else an error (also for an op without kernels); a column-major call (transa, transb) runs the row-major op (transb, transa) " +
	"on the swapped operands"

const ratioDefinition = "ratio = cuBLAS median time / tilegen median time on the same shape and device (above 1: faster than cuBLAS); " +
	"worst_ratio is a variant's smallest ratio over the classes it was timed on"

// provenanceFile renders <name>.json; files are the other files of the export.
func provenanceFile(p *Plan, resultsNVCC string, files []string) ([]byte, error) {
	pv := Provenance{
		Exporter: Exporter, Name: p.Name, GoPackage: p.GoPackage, Generator: p.Manifest.Generator, NVCC: p.Manifest.NVCC,
		Arch: p.Manifest.Arch, ResultsNVCC: resultsNVCC, GPU: p.GPU, Devices: p.Devices, Inputs: p.Inputs,
		ContentHash: p.Content, UnhashedRecords: p.Unhashed, AllowUnhashed: p.AllowUnhashed, RatioDefinition: ratioDefinition,
		Excluded: p.Excluded, Files: append(append([]string(nil), files...), p.Name+".json"),
		Dispatch: DispatchDoc{Rule: rule, Defaults: map[string]string{}},
	}
	for i, op := range variant.Ops {
		if d := p.Defaults[i]; d >= 0 {
			pv.Dispatch.Defaults[op.String()] = p.Variants[d].V.Name
		}
	}
	pv.Dispatch.Default = pv.Dispatch.Defaults[variant.OpNN.String()]
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
			Name: v.Name, Family: v.Family, Params: v.Params, Block: v.Block, Tile: v.Tile, GridZ: v.GridZ,
			DynamicShared: v.DynamicShared, Requires: v.Requires, Resources: v.Resources, SourceSHA256: v.SourceHash,
			PTXSHA256: v.PTXHash, Op: v.Op.String(), Default: i == p.Defaults[v.Op.Index()], Won: won, WorstRatio: c.WorstRatio, Tuned: c.Tuned, EdgeSuite: c.Edge,
		})
	}
	b, err := json.MarshalIndent(pv, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("provenance: %w", err)
	}
	return append(b, '\n'), nil
}
