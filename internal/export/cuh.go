package export

import (
	_ "embed"
	"fmt"
	"strconv"
	"strings"
	"text/template"

	"tilegen/internal/variant"
)

//go:embed cuh.tmpl
var cuhText string

var cuhTmpl = template.Must(template.New("cuh").Parse(cuhText))

type cuhKernel struct {
	Name, Family, Params, Hash, Source, OpName string
	Op, BX, BY, TR, TC, GZ, Dyn                int
	MM, NM, KM, LDM                            int
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
	data := struct {
		Header, Name, Guard, GPU, NVCC, Arch, Generator, Content string
		// Ops lists the ops with kernels; Defaults names each one's robust default; DefaultTable is
		// the C initializer of the per-op default table.
		Ops, Defaults, DefaultTable string
		DynDefault                  int
		Classes, ClassRows          []string
		Kernels                     []cuhKernel
		// BigDyn: some kernel needs more than DynDefault bytes of dynamic shared memory.
		BigDyn bool
	}{
		Header: header, Name: p.Name, Guard: strings.ToUpper(p.Name) + "_CUH", GPU: safeText(p.GPU),
		Ops: p.opsList(), NVCC: safeText(p.Manifest.NVCC), Arch: safeText(p.Manifest.Arch),
		Generator: safeText(p.Manifest.Generator), Content: p.Content, DynDefault: dynSharedDefault, BigDyn: p.needsDynShared(),
	}
	var defs, table []string
	for i, op := range variant.Ops {
		table = append(table, strconv.Itoa(p.Defaults[i]))
		if d := p.Defaults[i]; d >= 0 {
			defs = append(defs, op.String()+" "+p.Variants[d].V.Name)
		}
	}
	data.Defaults, data.DefaultTable = strings.Join(defs, ", "), strings.Join(table, ", ")
	for _, c := range p.Classes {
		data.Classes = append(data.Classes, p.classLine(c))
		data.ClassRows = append(data.ClassRows, fmt.Sprintf("{%d, %d, %d, %d, %d, %s, %s}", c.Shape.Op.Index(), c.Shape.M, c.Shape.N, c.Shape.K, c.Variant, cDouble(c.MedianMS), cDouble(c.CublasMS)))
	}
	for _, c := range p.Variants {
		v := c.V
		src := stripHeader(c.src.cu)
		if strings.Contains(src, "DO NOT EDIT") {
			return nil, fmt.Errorf("source of %s: a generated-code line after the header", v.Name)
		}
		data.Kernels = append(data.Kernels, cuhKernel{
			Name: v.Name, Family: safeText(v.Family), Params: safeText(v.ParamString()), Hash: safeText(v.SourceHash), Source: src,
			Op: v.Op.Index(), OpName: v.Op.String(), BX: v.Block.X, BY: v.Block.Y, TR: v.Tile.Rows, TC: v.Tile.Cols, GZ: atLeast1(v.GridZ), Dyn: v.DynamicShared,
			MM: atLeast1(v.Requires.MMultiple), NM: atLeast1(v.Requires.NMultiple), KM: atLeast1(v.Requires.KMultiple),
			LDM: atLeast1(v.Requires.LDMultiple),
		})
	}
	var b strings.Builder
	if err := cuhTmpl.Execute(&b, data); err != nil {
		return nil, fmt.Errorf("render %s.cuh: %w", p.Name, err)
	}
	return []byte(b.String()), nil
}
