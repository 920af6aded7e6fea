package export

import (
	_ "embed"
	"fmt"
	"strconv"
	"strings"
	"text/template"

	"tilegen/internal/dispatch"
	"tilegen/internal/variant"
)

//go:embed cuh.tmpl
var cuhText string

var cuhTmpl = template.Must(template.New("cuh").Parse(cuhText))

type cuhKernel struct {
	Name, Family, Params, Hash, Source, OpName string
	// PTXHash and PTXLit: the kernel's PTX as the manifest hashes it and as a C string literal.
	PTXHash, PTXLit string
	// Image says what PTXLit holds: the PTX, or a fatbin of SASS and the PTX.
	Image                                string
	Op, Batched, BX, BY, TR, TC, GZ, Dyn int
	MM, NM, KM, LDM                      int
	// The launch-time split-K rule (variant.SplitRule); all 0 when grid z is fixed.
	SplitMax, KStep, MinK, BlocksPerSM, Balance, WorkspaceFloats int
	// StreamK: 1 for a stream-K kernel (variant.SplitRule.StreamK): split_max blocks at most.
	StreamK int
	// State: 1 when the kernel keeps partial sums and tile counters in the header's pools (its launches
	// are ordered across streams); Undefs are its state names, #undef'd after its source.
	State  int
	Undefs []string
	// WaveSlots: SMs × blocks per SM when the op's wave guard may replace the kernel (Plan.WaveSlots).
	WaveSlots int
	// Twin: the twins' indices by misalignment class (Chosen.Twins), as a C initializer.
	Twin string
}

// cuhEpi is one fused-epilogue entry of the header.
type cuhEpi struct {
	Value                       int // the epilogue's number in the header's enum (variant.Epilogues order)
	Name, Upper, Variant, Ratio string
	Kernel, Shapes              int
}

// epiIndex is e's number in the exported enums: its position in variant.Epilogues (none is 0).
func epiIndex(e variant.Epilogue) int {
	for i, x := range variant.Epilogues {
		if x == e {
			return i
		}
	}
	return -1
}

// precisionLines is precisionDoc as comment lines, ending with an empty one (none for FP32).
func precisionLines(p variant.Precision) []string {
	return docLines(precisionDoc(p))
}

// docLines is a doc paragraph (ending in an empty line) as comment lines; none for "".
func docLines(d string) []string {
	if d == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(d, "\n"), "\n")
}

// stripHeader removes the generator's leading comment lines ("// Code generated ...", nvcc, the
// variant's parameters): the header has one generated-code line of its own and names each kernel.
func stripHeader(src string) string {
	lines := strings.SplitAfter(src, "\n")
	i := 0
	for i < len(lines) && strings.HasPrefix(lines[i], "//") {
		i++
	}
	return strings.TrimRight(strings.Join(lines[i:], ""), "\n")
}

// cDouble renders x as a C double literal that reads back exactly.
func cDouble(x float64) string {
	s := strconv.FormatFloat(x, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eE") {
		s += ".0"
	}
	return s
}

func cuhFile(p *Plan) ([]byte, error) {
	td := targetDoc(p)
	data := struct {
		Header, Name, Guard, GPU, NVCC, Arch, Generator, Content string
		// ArchFlag is the nvcc option the usage line suggests (sm_90a when a kernel needs it).
		ArchFlag string
		// Ops lists the ops with kernels; DefaultTable is the C initializer of the per-op defaults,
		// GuardTable that of the per-op wave guards ({kernel, min_work, waves_num, waves_den, min_tiles,
		// edge_den, sms, keep offset, keep count, cover}),
		// BulkTable that of the per-op bulk guards ({kernel, min_waves, min_k, full_num, full_den, slots}).
		Ops, DefaultTable, GuardTable, BulkTable string
		// KeepTable lists the wave guards' kept shapes ({M, N, K}, each op's sorted, at its offset).
		KeepTable string
		// VecSide is the largest M or N that always takes the float4 chain (dispatch.VecSide).
		VecSide                     int
		PrecisionDoc                []string
		DynDefault                  int
		Classes, ClassRows, RuleDoc []string
		Kernels                     []cuhKernel
		Rules                       []cuhRule
		// BigDyn: some kernel needs more than DynDefault bytes of dynamic shared memory.
		BigDyn bool
		// The strided-batched entry: the ops with batched kernels, the batch classes (comment lines
		// and C initializers; one placeholder row when there are none, BatchClassCount 0) and the
		// per-op batched defaults.
		BatchOps, BatchDefaultTable  string
		BatchClasses, BatchClassRows []string
		BatchClassCount              int
		// Epilogues are the fused-epilogue entries (none: no epilogue section).
		Epilogues []cuhEpi
		// Pools hold the state of the kernels that keep it (statePools); none when no kernel does.
		Pools []cuhPool
		// SASS: some kernel's literal is a fatbin with SASS (Plan.SASS).
		SASS bool
	}{
		Header: header, Name: p.Name, Guard: strings.ToUpper(p.Name) + "_CUH", GPU: safeText(p.GPU),
		Ops: p.opsList(), NVCC: safeText(p.Manifest.NVCC), Arch: safeText(p.Manifest.Arch),
		Generator: safeText(p.Manifest.Generator), Content: p.Content, DynDefault: dynSharedDefault, BigDyn: p.needsDynShared(),
		PrecisionDoc: append(precisionLines(p.Precision), docLines(td)...),
		ArchFlag:     "-arch=sm_90", SASS: p.SASS != nil,
		RuleDoc: strings.Split(ruleDoc(p, p.Name+"_sgemm returns cudaErrorInvalidValue ("+p.Name+"_variant: NULL)"), "\n"),
	}
	if td != "" {
		data.ArchFlag = "-gencode arch=compute_90a,code=sm_90a"
	}
	var table, guards, bulks, keep []string
	for _, op := range variant.Ops {
		table = append(table, strconv.Itoa(p.DefaultOf(op)))
		g, b := "{-1, 0, 1, 1, 0, 1, 1, 0, 0, 0}", "{-1, 1, 1, 1, 1, 1}"
		if r := p.RuleOf(op); r != nil {
			data.Rules = append(data.Rules, cuhRuleData(r))
			if rg := r.Rule.Guard; rg != nil {
				g = fmt.Sprintf("{%d, %dLL, %d, %d, %d, %d, %d, %d, %d, %d}", rg.Kernel, rg.MinWork, rg.WavesNum, rg.WavesDen, rg.MinTiles,
					rg.EdgeDen, rg.SMs, len(keep), len(rg.Keep), rg.Cover)
				for _, x := range rg.Keep {
					keep = append(keep, fmt.Sprintf("{%d, %d, %d}", x[0], x[1], x[2]))
				}
			}
			if rb := r.Rule.Bulk; rb != nil {
				b = fmt.Sprintf("{%d, %d, %d, %d, %d, %d}", rb.Kernel, rb.MinWaves, rb.MinK, rb.FullNum, rb.FullDen, rb.Slots)
			}
		}
		guards, bulks = append(guards, g), append(bulks, b)
	}
	data.DefaultTable = strings.Join(table, ", ")
	data.GuardTable = strings.Join(guards, ", ")
	if len(keep) == 0 {
		keep = []string{"{0, 0, 0}"} // no empty arrays in C++; every op's count is 0
	}
	data.KeepTable = strings.Join(keep, ", ")
	data.VecSide = dispatch.VecSide
	data.BulkTable = strings.Join(bulks, ", ")
	data.BatchOps = p.batchOpsList()
	var btable []string
	for _, op := range variant.Ops {
		d := -1
		if r := p.BatchRuleOf(op); r != nil {
			d = r.Default
		}
		btable = append(btable, strconv.Itoa(d))
	}
	data.BatchDefaultTable = strings.Join(btable, ", ")
	for _, r := range p.Batched {
		for _, c := range r.Classes {
			data.BatchClasses = append(data.BatchClasses, p.classLine(c))
			data.BatchClassRows = append(data.BatchClassRows, fmt.Sprintf("{%d, %d, %d, %d, %d, %d, %s, %s}", c.Shape.Op.Index(), c.Shape.M, c.Shape.N,
				c.Shape.K, c.Shape.Batch, c.Variant, cDouble(c.MedianMS), cDouble(c.CublasMS)))
		}
	}
	data.BatchClassCount = len(data.BatchClassRows)
	if data.BatchClassCount == 0 {
		data.BatchClassRows = []string{"{-1, 0, 0, 0, 0, -1, 0.0, 0.0}"}
	}
	for _, c := range p.Classes {
		data.Classes = append(data.Classes, p.classLine(c))
		data.ClassRows = append(data.ClassRows, fmt.Sprintf("{%d, %d, %d, %d, %d, %s, %s}", c.Shape.Op.Index(), c.Shape.M, c.Shape.N, c.Shape.K, c.Variant, cDouble(c.MedianMS), cDouble(c.CublasMS)))
	}
	for _, e := range p.Epilogues {
		data.Epilogues = append(data.Epilogues, cuhEpi{Value: epiIndex(e.Epilogue), Name: e.Epilogue.String(),
			Upper: strings.ToUpper(e.Epilogue.String()), Kernel: e.Kernel, Variant: p.Variants[e.Kernel].V.Name,
			Ratio: fmt.Sprintf("%.3f", e.Ratio), Shapes: len(e.Shapes)})
	}
	srcs := make([]string, len(p.Variants))
	for i, c := range p.Variants {
		srcs[i] = stripHeader(c.src.cu)
		if strings.Contains(srcs[i], "DO NOT EDIT") {
			return nil, fmt.Errorf("source of %s: a generated-code line after the header", c.V.Name)
		}
	}
	srcs, undefs, pools, err := statePools(p, p.Name, srcs)
	if err != nil {
		return nil, fmt.Errorf("render %s.cuh: %w", p.Name, err)
	}
	data.Pools = pools
	data.PrecisionDoc = append(data.PrecisionDoc, docLines(stateDoc(p, poolBytes(pools)))...)
	for i, c := range p.Variants {
		v := c.V
		k := cuhKernel{
			Name: v.Name, Family: safeText(v.Family), Params: safeText(v.ParamString()), Hash: safeText(v.SourceHash), Source: srcs[i],
			PTXHash: safeText(v.PTXHash), PTXLit: cStringLines(c.src.code()), Image: c.src.imageNote(p.SASS),
			Undefs: undefs[i], State: boolInt(len(undefs[i]) > 0),
			Op: v.Op.Index(), Batched: boolInt(v.Batched), OpName: v.Op.String(), BX: v.Block.X, BY: v.Block.Y, TR: v.Tile.Rows, TC: v.Tile.Cols, GZ: atLeast1(v.GridZ), Dyn: v.DynamicShared,
			MM: atLeast1(v.Requires.MMultiple), NM: atLeast1(v.Requires.NMultiple), KM: atLeast1(v.Requires.KMultiple),
			LDM: atLeast1(v.Requires.LDMultiple), WaveSlots: p.WaveSlots(i),
			Twin: fmt.Sprintf("{0, %d, %d, %d}", c.Twins[1].Index, c.Twins[2].Index, c.Twins[3].Index),
		}
		if r := v.Split; r != nil {
			k.SplitMax, k.KStep, k.MinK, k.BlocksPerSM, k.Balance, k.WorkspaceFloats = r.Max, r.KStep, r.MinK, r.BlocksPerSM, boolInt(r.Balance), r.WorkspaceFloats
			k.StreamK = boolInt(r.StreamK)
		}
		data.Kernels = append(data.Kernels, k)
	}
	var b strings.Builder
	if err := cuhTmpl.Execute(&b, data); err != nil {
		return nil, fmt.Errorf("render %s.cuh: %w", p.Name, err)
	}
	return []byte(b.String()), nil
}

// cuhSplitRule renders the .cuh's split rule, {name}_split_slices, and its stream-K grid,
// {name}_streamk_blocks, alone (the text the header holds).
func cuhSplitRule(name string) (string, error) {
	var b strings.Builder
	if err := cuhTmpl.ExecuteTemplate(&b, "slices", name); err != nil {
		return "", fmt.Errorf("render the split rule: %w", err)
	}
	b.WriteString("\n\n")
	if err := cuhTmpl.ExecuteTemplate(&b, "streamk", name); err != nil {
		return "", fmt.Errorf("render the stream-K grid: %w", err)
	}
	return b.String(), nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
