package export

import (
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"

	"tilegen/internal/dispatch"
)

// The dispatch rule in the artifacts: the bucket function and the three tables of internal/dispatch's
// Rule (aligned, unaligned, general), one row per (M bucket, N bucket), one character per K
// bucket, '0' + the kernel's index (at most maxExported kernels, so the characters run from '0' to
// '[' and need no escaping).

// tableRows renders a table of the rule as rows of characters, with a comment per row naming its M
// and N ranges.
func tableRows(r *dispatch.Rule, table []int) (rows, comments []string) {
	d := r.Dims()
	for i := range d[0] {
		for j := range d[1] {
			var b strings.Builder
			for l := range d[2] {
				b.WriteByte(byte('0' + table[(i*d[1]+j)*d[2]+l]))
			}
			rows = append(rows, b.String())
			comments = append(comments, fmt.Sprintf("M %s, N %s", bucketLabel(r, 0, r.Lo[0]+i), bucketLabel(r, 1, r.Lo[1]+j)))
		}
	}
	return rows, comments
}

// bucketLabel names the integers bucket b of dimension dim holds (the range's ends take everything
// beyond them).
func bucketLabel(r *dispatch.Rule, dim, b int) string {
	lo, hi, ok := dispatch.BucketRange(b, r.Shift)
	switch {
	case b == r.Lo[dim] && b == r.Hi[dim]:
		return "any"
	case !ok:
		return "(none)"
	case b == r.Lo[dim]:
		return fmt.Sprintf("<= %d", hi)
	case b == r.Hi[dim]:
		return fmt.Sprintf(">= %d", lo)
	case lo == hi:
		return fmt.Sprint(lo)
	}
	return fmt.Sprintf("%d-%d", lo, hi)
}

// kColumns says which K range each column of a row is.
func kColumns(r *dispatch.Rule) string {
	var cols []string
	for b := r.Lo[2]; b <= r.Hi[2]; b++ {
		cols = append(cols, bucketLabel(r, 2, b))
	}
	return strings.Join(cols, " | ")
}

// wrap breaks text into lines of at most width bytes at spaces.
func wrap(text string, width int) string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(text) {
		if line != "" && len(line)+1+len(w) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	return strings.Join(append(lines, line), "\n")
}

// ruleDoc describes the dispatch in the package doc and the header; refusal says what a call does
// when nothing can take the problem.
func ruleDoc(p *Plan, refusal string) string {
	fitted := "the tuned shapes"
	if p.Corpus {
		fitted = "a workload corpus"
	}
	per := 1 << p.Rule.Shift
	return fmt.Sprintf("Dispatch: tables pick the variant from M, N and K, each put in a bucket (%d per octave):\n"+
		"integer operations and table reads per call. They were fitted on the timings of %d shapes (%s):\n"+
		"a smoother of measured ratios to cuBLAS over log M, N, K, with wave-quantization and\n"+
		"edge-waste features and regime classes (tilegen's internal/dispatch; parameters in %s.json).\n"+
		"A cell holds three variants: one for problems whose M and N its tile divides, one for the\n"+
		"others, and one without requirements; the first that can take the problem runs (the aligned\n"+
		"one only when its tile divides M and N), else the robust default (%s);\n"+
		"when none can, %s and launches nothing.", per, p.FitShapes, fitted, p.Name, p.Variants[p.Default].V.Name, refusal)
}

// goRule emits the rule into the Go package: the tables, bucket and rule.
func goRule(f *jen.File, p *Plan) {
	r := p.Rule
	d := r.Dims()
	rows, comments := tableRows(r, r.Table)
	unaligned, _ := tableRows(r, r.Unaligned)
	general, _ := tableRows(r, r.General)
	f.Comment(lineComment(fmt.Sprintf("The dispatch rule: M, N and K go into buckets (bucket), clamped to [ruleLo, ruleHi] per\n"+
		"dimension; ruleAligned[bm*%d+bn][bk] - '0' is the cell's kernel for problems whose M and N its tile\n"+
		"divides, ruleUnaligned the same place's kernel for the others, ruleGeneral its kernel without\n"+
		"requirements.\n%s", d[1], wrap("Columns (K): "+kColumns(r)+".", 96))))
	f.Const().Id("ruleShift").Op("=").Lit(r.Shift)
	f.Line()
	f.Var().Id("ruleLo").Op("=").Index(jen.Lit(3)).Int().Values(jen.Lit(r.Lo[0]), jen.Lit(r.Lo[1]), jen.Lit(r.Lo[2]))
	f.Var().Id("ruleHi").Op("=").Index(jen.Lit(3)).Int().Values(jen.Lit(r.Hi[0]), jen.Lit(r.Hi[1]), jen.Lit(r.Hi[2]))
	f.Line()
	table := func(name string, rows []string) {
		var items []jen.Code
		for i, row := range rows {
			items = append(items, jen.Lit(row).Op(",").Comment(comments[i]))
		}
		f.Var().Id(name).Op("=").Index(jen.Lit(len(rows))).String().Custom(jen.Options{Open: "{", Close: "}", Multi: true}, items...)
		f.Line()
	}
	table("ruleAligned", rows)
	table("ruleUnaligned", unaligned)
	table("ruleGeneral", general)
	f.Comment(lineComment("bucket is the bucket of x >= 1 (2^ruleShift per octave: floor(log2 x) and the ruleShift bits after\n" +
		"x's leading one), clamped to [lo, hi], less lo."))
	f.Func().Id("bucket").Params(jen.List(jen.Id("x"), jen.Id("lo"), jen.Id("hi")).Int()).Int().Block(
		jen.Id("e").Op(":=").Qual("math/bits", "Len64").Call(jen.Uint64().Call(jen.Id("x"))).Op("-").Lit(1),
		jen.Id("f").Op(":=").Id("x").Op("<<").Id("ruleShift").Op(">>").Id("e"),
		jen.If(jen.Id("e").Op(">=").Id("ruleShift")).Block(jen.Id("f").Op("=").Id("x").Op(">>").Parens(jen.Id("e").Op("-").Id("ruleShift"))),
		jen.Id("b").Op(":=").Id("e").Op("<<").Id("ruleShift").Op("|").Id("f").Op("&").Parens(jen.Lit(1).Op("<<").Id("ruleShift").Op("-").Lit(1)),
		jen.If(jen.Id("b").Op("<").Id("lo")).Block(jen.Id("b").Op("=").Id("lo")),
		jen.If(jen.Id("b").Op(">").Id("hi")).Block(jen.Id("b").Op("=").Id("hi")),
		jen.Return(jen.Id("b").Op("-").Id("lo")),
	)
	f.Line()
	f.Comment("rule returns the three kernels of M×N×K's cell (M, N, K >= 1).")
	cell := func(table string) jen.Code {
		return jen.Int().Call(jen.Id(table).Index(jen.Id("r")).Index(jen.Id("c")).Op("-").LitRune('0'))
	}
	f.Func().Id("rule").Params(jen.List(jen.Id("m"), jen.Id("n"), jen.Id("k")).Int()).Params(jen.List(jen.Id("aligned"), jen.Id("unaligned"), jen.Id("general")).Int()).Block(
		jen.Id("r").Op(":=").Id("bucket").Call(jen.Id("m"), jen.Id("ruleLo").Index(jen.Lit(0)), jen.Id("ruleHi").Index(jen.Lit(0))).Op("*").Lit(d[1]).Op("+").
			Id("bucket").Call(jen.Id("n"), jen.Id("ruleLo").Index(jen.Lit(1)), jen.Id("ruleHi").Index(jen.Lit(1))),
		jen.Id("c").Op(":=").Id("bucket").Call(jen.Id("k"), jen.Id("ruleLo").Index(jen.Lit(2)), jen.Id("ruleHi").Index(jen.Lit(2))),
		jen.Return(cell("ruleAligned"), cell("ruleUnaligned"), cell("ruleGeneral")),
	)
}

// cuhRule is the rule's part of the header template's data.
type cuhRule struct {
	Shift, Rows, Cols int
	Lo, Hi            [3]int
	NN                int
	KColumns          []string
	Tables            []cuhTable
}

type cuhTable struct {
	Name string
	Rows []cuhRow
}

type cuhRow struct{ Row, Comment string }

func cuhRuleData(p *Plan) cuhRule {
	r := p.Rule
	d := r.Dims()
	c := cuhRule{Shift: r.Shift, Cols: d[2], Lo: r.Lo, Hi: r.Hi, NN: d[1],
		KColumns: strings.Split(wrap("Columns (K): "+kColumns(r)+".", 96), "\n")}
	for _, t := range []struct {
		name  string
		table []int
	}{{"aligned", r.Table}, {"unaligned", r.Unaligned}, {"general", r.General}} {
		rows, comments := tableRows(r, t.table)
		ct := cuhTable{Name: t.name}
		for i := range rows {
			ct.Rows = append(ct.Rows, cuhRow{rows[i], comments[i]})
		}
		c.Rows = len(rows)
		c.Tables = append(c.Tables, ct)
	}
	return c
}
