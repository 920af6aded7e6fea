package export

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/dave/jennifer/jen"

	"tilegen/internal/dispatch"
)

// The dispatch rule in the artifacts: the bucket function and the three tables of internal/dispatch's
// Rule (aligned, unaligned, general), one row per (M bucket, N bucket), one character per K
// bucket. A rule numbers the kernels its tables hold among themselves (ruleKernels: ascending by
// their index among the export's variants): a cell holds '0' + that local number, and the rule's
// kernel list maps it to the variant. So an export may hold any number of variants while each
// rule's tables choose among at most maxRuleKernels, and the characters run from '0' to at most
// '~'. In the header every '?' is written "\?" (cString): "??<", "??>" and "??=" are trigraphs
// that a C++ compiler in an ISO mode before C++17 (g++ -std=c++14) would turn into '{', '}' and
// '#', changing the table; and the backslash ('0' + 44) is written "\\".

// maxRuleKernels bounds the kernels one rule's tables hold: a cell is one printable character,
// '0' + the kernel's number in the rule, '0' to '~' (each rule chooses from at most
// dispatch.MaxCandidates and its default).
const maxRuleKernels = '~' - '0' + 1

// cString is a table row as the text of a C/C++ string literal: '?' escaped, so that no two
// characters of a row form a trigraph, and '\\' escaped (the other characters of a row, '0' to
// '~', need no escaping).
func cString(row string) string { return cEscaper.Replace(row) }

var cEscaper = strings.NewReplacer(`\`, `\\`, "?", `\?`)

// ruleKernels lists the variants (indices into the export's) that r's tables hold, ascending: a
// cell's character is '0' + the position of its kernel in this list.
func ruleKernels(r *dispatch.Rule) []int {
	seen := map[int]bool{}
	var out []int
	for _, t := range [][]int{r.Table, r.Unaligned, r.General} {
		for _, j := range t {
			if !seen[j] {
				seen[j] = true
				out = append(out, j)
			}
		}
	}
	sort.Ints(out)
	return out
}

// tableRows renders a table of the rule as rows of characters ('0' + the cell's kernel's position
// in kernels, ruleKernels), with a comment per row naming its M and N ranges.
func tableRows(r *dispatch.Rule, table, kernels []int) (rows, comments []string) {
	local := make(map[int]int, len(kernels))
	for i, j := range kernels {
		local[j] = i
	}
	d := r.Dims()
	for i := range d[0] {
		for j := range d[1] {
			var b strings.Builder
			for l := range d[2] {
				b.WriteByte(byte('0' + local[table[(i*d[1]+j)*d[2]+l]]))
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

// borrowedText says what an op's rule borrowed from the NN corpus, "" when nothing.
func borrowedText(b Borrowed) string {
	if b.Shapes == 0 {
		return ""
	}
	cost := "their times as measured: no shape timed a variant and its twin both"
	if b.Pairs > 0 {
		cost = fmt.Sprintf("their times ×%.3f, the op's cost measured on %d pairs", b.Cost, b.Pairs)
	}
	return fmt.Sprintf(" and, in the regime classes where it had fewer than %d (%s), %d NN shapes on which %d of its variants' NN twins were timed (%s)",
		borrowBelow, strings.Join(b.Regimes, ", "), b.Shapes, b.Twins, cost)
}

// ruleDoc describes the dispatch in the package doc and the header; refusal says what a call does
// when nothing can take the problem.
func ruleDoc(p *Plan, refusal string) string {
	fitted := "the tuned shapes"
	if p.Corpus {
		fitted = "a workload corpus"
	}
	var per, defaults []string
	for _, r := range p.Rules {
		per = append(per, fmt.Sprintf("%s %d buckets per octave, fitted on %d shapes%s", r.Op, 1<<r.Rule.Shift, r.FitShapes, borrowedText(r.Borrowed)))
		defaults = append(defaults, fmt.Sprintf("%s %s", r.Op, p.Variants[r.Default].V.Name))
	}
	guard := ""
	for _, r := range p.Rules {
		if g := r.Rule.Guard; g != nil {
			guard += "\n" + wrap(fmt.Sprintf("%s's wave guard, %s (a stream-K kernel: its blocks share the work over one wave), "+
				"runs instead of the launched variant where that has a fixed grid or a launch-time split (its slices for %d SMs), "+
				"M·N·K ≥ %d, the guard has at least %d output tiles covering at most 1/%d of M×N beyond it, the problem is not one "+
				"of the %d shapes on which the variant was measured faster, and the variant's waves would run at most %d/%d full.",
				r.Op, p.Variants[g.Kernel].V.Name, g.SMs, g.MinWork, g.MinTiles, g.EdgeDen, len(g.Keep), g.WavesDen, g.WavesNum), 100)
		}
		if g := r.Rule.Bulk; g != nil {
			guard += "\n" + wrap(fmt.Sprintf("%s's bulk guard, %s (a %d×%d tile), runs instead, before the wave guard, where K ≥ %d, "+
				"its blocks fill at least %d waves of %d and the area its waves cover beyond M×N is at most %d/%d of M×N.",
				r.Op, p.Variants[g.Kernel].V.Name, g.TileRows, g.TileCols, g.MinK, g.MinWaves, g.Slots, g.FullNum-g.FullDen, g.FullDen), 100)
		}
	}
	var twins []string
	for _, c := range p.Variants {
		for cls := 1; cls < 4; cls++ {
			if tw := c.Twins[cls]; tw.Index > 0 {
				twins = append(twins, fmt.Sprintf("%s → %s where %s (%.2fx on %d shapes)", c.V.Name, p.Variants[tw.Index].V.Name,
					misClassConds[cls], tw.Gain, tw.Shapes))
			}
		}
	}
	if len(twins) > 0 {
		guard += "\n" + wrap("On a problem whose A or B rows are not 16-byte aligned (lda or ldb not a multiple of 4), a variant "+
			"with a misaligned twin for that case (the same kernel loading such rows coalesced) launches the twin, which the "+
			"results measured faster on such problems: "+strings.Join(twins, "; ")+".", 100)
	}
	return fmt.Sprintf("Dispatch: each op has its own rule (%s), whose tables pick the variant from M, N and K, each put\n"+
		"in a bucket: integer operations and table reads per call. They were fitted on the timings of %s of\n"+
		"the op: a smoother of measured ratios to cuBLAS over log M, N, K, with wave-quantization and\n"+
		"edge-waste features and regime classes (tilegen's internal/dispatch; parameters in %s.json).\n"+
		"A cell holds three variants: one for problems whose M and N its tile divides, one for the\n"+
		"others, and one without requirements; the first that can take the problem runs (the aligned\n"+
		"one only when its tile divides M and N), else the op's robust default (%s);\n"+
		"when none can, or the export has no kernel for the op, %s and launches nothing.%s",
		strings.Join(per, "; "), fitted, p.Name, strings.Join(defaults, ", "), refusal, guard)
}

// goRule emits the rules into the Go package: one opRule per op, bucket and pick.
func goRule(f *jen.File, p *Plan) {
	f.Comment(lineComment("opRule is one op's dispatch rule: M, N and K go into buckets (bucket; 2^shift per octave),\n" +
		"clamped to [lo, hi] per dimension; kernels[aligned[bm*nn+bn][bk] - '0'] is the cell's kernel for\n" +
		"problems whose M and N its tile divides, the same place of unaligned its kernel for the others\n" +
		"and of general its kernel without requirements (r.kernels: the rule's kernels, as indices into\n" +
		"the package's kernels)."))
	f.Type().Id("opRule").Struct(
		jen.Id("shift").Int(),
		jen.List(jen.Id("lo"), jen.Id("hi")).Index(jen.Lit(3)).Int(),
		jen.Id("nn").Int(),
		jen.List(jen.Id("aligned"), jen.Id("unaligned"), jen.Id("general")).Index().String(),
		jen.Id("kernels").Index().Int(),
		jen.Comment("The wave guard (guarded): its kernel (-1: none), the smallest M·N·K it acts on, the wave"),
		jen.Comment("quantization guardNum/guardDen from which it acts and the fewest output tiles of its own."),
		jen.Id("guard").Int(),
		jen.Id("guardWork").Int64(),
		jen.List(jen.Id("guardNum"), jen.Id("guardDen"), jen.Id("guardTiles")).Int64(),
		jen.Comment("The guard's tiles cover at most M·N/guardEdge beyond M×N; a launch-time split kernel's slices"),
		jen.Comment("are computed for guardSMs SMs; keep lists the shapes it leaves alone (M, N, K; sorted);"),
		jen.Comment("guardCover > 0: it also acts where the kernel's tiles cover guardCover × M·N."),
		jen.List(jen.Id("guardEdge"), jen.Id("guardSMs"), jen.Id("guardCover")).Int64(),
		jen.Id("keep").Index().Index(jen.Lit(3)).Int(),
		jen.Comment("The bulk guard (guarded): its kernel (-1: none), the fewest waves of its blocks and the"),
		jen.Comment("shallowest K it acts on, the area beyond M·N its waves may cover, (bulkNum-bulkDen)/bulkDen"),
		jen.Comment("of M·N, and its blocks per wave."),
		jen.Id("bulk").Int(),
		jen.List(jen.Id("bulkWaves"), jen.Id("bulkK"), jen.Id("bulkNum"), jen.Id("bulkDen"), jen.Id("bulkSlots")).Int64(),
	)
	f.Line()
	f.Comment("rules holds each op's rule, indexed by Op (nil: the export has no kernel for the op).")
	f.Var().Id("rules").Op("=").Index(jen.Lit(4)).Op("*").Id("opRule").Custom(jen.Options{Open: "{", Close: "}", Separator: ",", Multi: true},
		func() []jen.Code {
			var items []jen.Code
			for _, or := range p.Rules {
				r := or.Rule
				d := r.Dims()
				ks := ruleKernels(r)
				rows, comments := tableRows(r, r.Table, ks)
				unaligned, _ := tableRows(r, r.Unaligned, ks)
				general, _ := tableRows(r, r.General, ks)
				var kernelList []jen.Code
				for _, j := range ks {
					kernelList = append(kernelList, jen.Lit(j))
				}
				table := func(rows []string) jen.Code {
					var cells []jen.Code
					for i, row := range rows {
						cells = append(cells, jen.Lit(row).Op(",").Comment(comments[i]))
					}
					return jen.Index().String().Custom(jen.Options{Open: "{", Close: "}", Multi: true}, cells...)
				}
				fields := jen.Dict{
					jen.Id("shift"):   jen.Lit(r.Shift),
					jen.Id("lo"):      jen.Index(jen.Lit(3)).Int().Values(jen.Lit(r.Lo[0]), jen.Lit(r.Lo[1]), jen.Lit(r.Lo[2])),
					jen.Id("hi"):      jen.Index(jen.Lit(3)).Int().Values(jen.Lit(r.Hi[0]), jen.Lit(r.Hi[1]), jen.Lit(r.Hi[2])),
					jen.Id("nn"):      jen.Lit(d[1]),
					jen.Id("aligned"): table(rows), jen.Id("unaligned"): table(unaligned), jen.Id("general"): table(general),
					jen.Id("kernels"): jen.Index().Int().Values(kernelList...),
				}
				// The guard's thresholds only where the rule has one (jen.Dict keys are distinct statements:
				// each field is set once).
				if g := r.Guard; g != nil {
					fields[jen.Id("guard")], fields[jen.Id("guardWork")] = jen.Lit(g.Kernel), jen.Lit(int(g.MinWork))
					fields[jen.Id("guardNum")], fields[jen.Id("guardDen")], fields[jen.Id("guardTiles")] = jen.Lit(g.WavesNum), jen.Lit(g.WavesDen), jen.Lit(g.MinTiles)
					fields[jen.Id("guardEdge")], fields[jen.Id("guardSMs")] = jen.Lit(g.EdgeDen), jen.Lit(g.SMs)
					if g.Cover > 0 {
						fields[jen.Id("guardCover")] = jen.Lit(g.Cover)
					}
					if len(g.Keep) > 0 {
						var shapes []jen.Code
						for _, x := range g.Keep {
							shapes = append(shapes, jen.Values(jen.Lit(x[0]), jen.Lit(x[1]), jen.Lit(x[2])))
						}
						fields[jen.Id("keep")] = jen.Index().Index(jen.Lit(3)).Int().Custom(jen.Options{Open: "{", Close: "}", Separator: ",", Multi: true}, shapes...)
					}
				} else {
					fields[jen.Id("guard")] = jen.Lit(-1)
				}
				if g := r.Bulk; g != nil {
					fields[jen.Id("bulk")], fields[jen.Id("bulkWaves")], fields[jen.Id("bulkK")] = jen.Lit(g.Kernel), jen.Lit(g.MinWaves), jen.Lit(g.MinK)
					fields[jen.Id("bulkNum")], fields[jen.Id("bulkDen")], fields[jen.Id("bulkSlots")] = jen.Lit(g.FullNum), jen.Lit(g.FullDen), jen.Lit(g.Slots)
				} else {
					fields[jen.Id("bulk")] = jen.Lit(-1)
				}
				items = append(items, jen.Comment(lineComment(wrap(or.Op.String()+": Columns (K): "+kColumns(r)+".", 96))),
					jen.Id(goOp(or.Op)).Op(":").Values(fields))
			}
			return items
		}()...)
	f.Line()
	f.Comment(lineComment("bucket is the bucket of x >= 1 (2^shift per octave: floor(log2 x) and the shift bits after x's\n" +
		"leading one), clamped to [lo, hi], less lo."))
	f.Func().Id("bucket").Params(jen.List(jen.Id("x"), jen.Id("shift"), jen.Id("lo"), jen.Id("hi")).Int()).Int().Block(
		jen.Id("e").Op(":=").Qual("math/bits", "Len64").Call(jen.Uint64().Call(jen.Id("x"))).Op("-").Lit(1),
		jen.Id("f").Op(":=").Id("x").Op("<<").Id("shift").Op(">>").Id("e"),
		jen.If(jen.Id("e").Op(">=").Id("shift")).Block(jen.Id("f").Op("=").Id("x").Op(">>").Parens(jen.Id("e").Op("-").Id("shift"))),
		jen.Id("b").Op(":=").Id("e").Op("<<").Id("shift").Op("|").Id("f").Op("&").Parens(jen.Lit(1).Op("<<").Id("shift").Op("-").Lit(1)),
		jen.If(jen.Id("b").Op("<").Id("lo")).Block(jen.Id("b").Op("=").Id("lo")),
		jen.If(jen.Id("b").Op(">").Id("hi")).Block(jen.Id("b").Op("=").Id("hi")),
		jen.Return(jen.Id("b").Op("-").Id("lo")),
	)
	f.Line()
	f.Comment("pick returns the three kernels of M×N×K's cell (M, N, K >= 1).")
	cell := func(table string) jen.Code {
		return jen.Id("r").Dot("kernels").Index(jen.Id("r").Dot(table).Index(jen.Id("row")).Index(jen.Id("c")).Op("-").LitRune('0'))
	}
	b := func(x string, dim int) jen.Code {
		return jen.Id("bucket").Call(jen.Id(x), jen.Id("r").Dot("shift"), jen.Id("r").Dot("lo").Index(jen.Lit(dim)), jen.Id("r").Dot("hi").Index(jen.Lit(dim)))
	}
	f.Func().Params(jen.Id("r").Op("*").Id("opRule")).Id("pick").Params(jen.List(jen.Id("m"), jen.Id("n"), jen.Id("k")).Int()).Params(jen.List(jen.Id("aligned"), jen.Id("unaligned"), jen.Id("general")).Int()).Block(
		jen.Id("row").Op(":=").Add(b("m", 0)).Op("*").Id("r").Dot("nn").Op("+").Add(b("n", 1)),
		jen.Id("c").Op(":=").Add(b("k", 2)),
		jen.Return(cell("aligned"), cell("unaligned"), cell("general")),
	)
	f.Line()
	f.Comment(lineComment("guarded is the kernel launched when the cell launches kernel i (which takes the problem): the\n" +
		"bulk guard's kernel, a big fixed tile, when K is at least bulkK, its blocks fill at least\n" +
		"bulkWaves waves of bulkSlots, the area its waves cover beyond M·N is at most\n" +
		"(bulkNum-bulkDen)/bulkDen of M·N and it takes the problem; else the wave guard, a stream-K\n" +
		"kernel whose blocks share the work over one wave, when i may be replaced (waveSlots > 0: a\n" +
		"fixed grid, or a launch-time split whose slices it computes for guardSMs SMs), M·N·K is at\n" +
		"least guardWork, the guard has at least guardTiles output tiles covering at most M·N/guardEdge\n" +
		"beyond M×N and splits some tile's K, M×N×K is not kept, and i's tiles cover at least guardCover\n" +
		"× M·N (guardCover > 0: a 128-row tile on 64 rows) or its blocks would fill its waves to at most\n" +
		"guardDen/guardNum on average (a large problem whose last wave would be mostly empty), and the\n" +
		"guard takes the problem; else i."))
	id := jen.Id
	i64 := func(x string) *jen.Statement { return jen.Int64().Call(jen.Id(x)) }
	f.Func().Params(id("r").Op("*").Id("opRule")).Id("guarded").Params(jen.List(id("i"), id("m"), id("n"), id("k"), id("lda"), id("ldb"), id("ldc")).Int(), id("ptrs").Uintptr()).Int().Block(
		jen.If(id("r").Dot("bulk").Op(">=").Lit(0).Op("&&").Id("i").Op("!=").Id("r").Dot("bulk").Op("&&").Add(i64("k")).Op(">=").Id("r").Dot("bulkK")).Block(
			id("kb").Op(":=").Op("&").Id("kernels").Index(id("r").Dot("bulk")),
			id("blocks").Op(":=").Int64().Call(jen.Parens(id("m").Op("+").Id("kb").Dot("tileRows").Op("-").Lit(1)).Op("/").Id("kb").Dot("tileRows")).Op("*").
				Int64().Call(jen.Parens(id("n").Op("+").Id("kb").Dot("tileCols").Op("-").Lit(1)).Op("/").Id("kb").Dot("tileCols")),
			id("s").Op(":=").Id("r").Dot("bulkSlots"),
			jen.Comment("No overflow for M and N up to 2^31."),
			id("area").Op(":=").Add(i64("m")).Op("*").Add(i64("n")),
			id("waste").Op(":=").Parens(id("blocks").Op("+").Id("s").Op("-").Lit(1)).Op("/").Id("s").Op("*").Id("s").Op("*").Int64().Call(id("kb").Dot("tileRows")).Op("*").Int64().Call(id("kb").Dot("tileCols")).Op("-").Id("area"),
			jen.If(id("blocks").Op(">=").Id("r").Dot("bulkWaves").Op("*").Id("s").Op("&&").Id("waste").Op("*").Id("r").Dot("bulkDen").Op("<=").Id("area").Op("*").Parens(id("r").Dot("bulkNum").Op("-").Id("r").Dot("bulkDen")).Op("&&").
				Id("reject").Call(id("kb"), id("m"), id("n"), id("k"), id("lda"), id("ldb"), id("ldc"), id("ptrs")).Op("==").Lit(0)).Block(jen.Return(id("r").Dot("bulk"))),
		),
		id("kn").Op(":=").Op("&").Id("kernels").Index(id("i")),
		jen.Comment("M·N ≥ ceil(guardWork / K): M·N·K may not fit in 64 bits."),
		jen.If(id("r").Dot("guard").Op("<").Lit(0).Op("||").Id("i").Op("==").Id("r").Dot("guard").Op("||").Id("kn").Dot("waveSlots").Op("==").Lit(0).Op("||").
			Add(i64("m")).Op("*").Add(i64("n")).Op("<").Parens(id("r").Dot("guardWork").Op("+").Add(i64("k")).Op("-").Lit(1)).Op("/").Add(i64("k"))).Block(jen.Return(id("i"))),
		id("kg").Op(":=").Op("&").Id("kernels").Index(id("r").Dot("guard")),
		id("gt").Op(":=").Int64().Call(jen.Parens(id("m").Op("+").Id("kg").Dot("tileRows").Op("-").Lit(1)).Op("/").Id("kg").Dot("tileRows")).Op("*").
			Int64().Call(jen.Parens(id("n").Op("+").Id("kg").Dot("tileCols").Op("-").Lit(1)).Op("/").Id("kg").Dot("tileCols")),
		jen.Comment("The guard's tiles beyond M·N: below 2^42 for M and N up to 2^31."),
		jen.If(id("gt").Op("<").Id("r").Dot("guardTiles").Op("||").
			Parens(id("gt").Op("*").Add(i64("kg.tileRows")).Op("*").Add(i64("kg.tileCols")).Op("-").Add(i64("m")).Op("*").Add(i64("n"))).Op("*").Id("r").Dot("guardEdge").Op(">").Add(i64("m")).Op("*").Add(i64("n")).Op("||").
			Id("r").Dot("kept").Call(id("m"), id("n"), id("k"))).Block(jen.Return(id("i"))),
		jen.Comment("A stream-K guard must split some tile's K: else it runs the waves of a fixed grid."),
		jen.If(id("kg").Dot("streamK")).Block(
			id("g").Op(":=").Int64().Call(id("streamKBlocks").Call(jen.Int().Call(id("gt")), id("kg").Dot("tileRows").Op("*").Id("kg").Dot("tileCols"), id("k"),
				jen.Int().Call(id("r").Dot("guardSMs")), id("kg").Dot("splitMax"), id("kg").Dot("kStep"), id("kg").Dot("blocksPerSM"), id("kg").Dot("workspaceFloats"))),
			jen.If(id("gt").Op(">=").Id("g").Op("&&").Parens(id("gt").Op("%").Id("g").Op("==").Lit(0).Op("||").Lit(2).Op("*").Parens(id("gt").Op("%").Id("g")).Op(">").Id("g"))).Block(jen.Return(id("i"))),
		),
		jen.Comment("i's tiles over M·N: below 2^63 for M and N up to 2^31, divided before comparing."),
		jen.If(id("r").Dot("guardCover").Op(">").Lit(0).Op("&&").
			Int64().Call(jen.Parens(id("m").Op("+").Id("kn").Dot("tileRows").Op("-").Lit(1)).Op("/").Id("kn").Dot("tileRows").Op("*").Id("kn").Dot("tileRows")).Op("*").
			Int64().Call(jen.Parens(id("n").Op("+").Id("kn").Dot("tileCols").Op("-").Lit(1)).Op("/").Id("kn").Dot("tileCols").Op("*").Id("kn").Dot("tileCols")).Op("/").Id("r").Dot("guardCover").
			Op(">=").Add(i64("m")).Op("*").Add(i64("n"))).Block(
			jen.If(id("reject").Call(jen.Op("&").Id("kernels").Index(id("r").Dot("guard")), id("m"), id("n"), id("k"), id("lda"), id("ldb"), id("ldc"), id("ptrs")).Op("!=").Lit(0)).Block(jen.Return(id("i"))),
			jen.Return(id("r").Dot("guard")),
		),
		id("tiles").Op(":=").Int64().Call(jen.Parens(id("m").Op("+").Id("kn").Dot("tileRows").Op("-").Lit(1)).Op("/").Id("kn").Dot("tileRows")).Op("*").
			Int64().Call(jen.Parens(id("n").Op("+").Id("kn").Dot("tileCols").Op("-").Lit(1)).Op("/").Id("kn").Dot("tileCols")),
		id("z").Op(":=").Int64().Call(id("kn").Dot("gridZ")),
		jen.If(id("kn").Dot("splitMax").Op(">").Lit(0)).Block(
			id("z").Op("=").Int64().Call(id("splitSlices").Call(jen.Int().Call(id("tiles")), id("kn").Dot("tileRows").Op("*").Id("kn").Dot("tileCols"), id("k"),
				jen.Int().Call(id("r").Dot("guardSMs")), id("kn").Dot("splitMax"), id("kn").Dot("kStep"), id("kn").Dot("minK"), id("kn").Dot("blocksPerSM"),
				id("kn").Dot("balance"), id("kn").Dot("workspaceFloats"))),
		),
		id("blocks").Op(":=").Id("tiles").Op("*").Id("z"),
		id("s").Op(":=").Int64().Call(id("kn").Dot("waveSlots")),
		jen.If(jen.Parens(id("blocks").Op("+").Id("s").Op("-").Lit(1)).Op("/").Id("s").Op("*").Id("s").Op("*").Id("r").Dot("guardDen").Op("<").Id("blocks").Op("*").Id("r").Dot("guardNum").Op("||").
			Id("reject").Call(jen.Op("&").Id("kernels").Index(id("r").Dot("guard")), id("m"), id("n"), id("k"), id("lda"), id("ldb"), id("ldc"), id("ptrs")).Op("!=").Lit(0)).Block(jen.Return(id("i"))),
		jen.Return(id("r").Dot("guard")),
	)
}

// goKept adds opRule.kept, the binary search of the wave guard's kept shapes.
func goKept(f *jen.File) {
	id := jen.Id
	f.Comment("kept says whether M×N×K is one of the wave guard's kept shapes.")
	f.Func().Params(id("r").Op("*").Id("opRule")).Id("kept").Params(jen.List(id("m"), id("n"), id("k")).Int()).Bool().Block(
		jen.List(jen.Id("_"), id("found")).Op(":=").Qual("slices", "BinarySearchFunc").Call(id("r").Dot("keep"), jen.Index(jen.Lit(3)).Int().Values(id("m"), id("n"), id("k")),
			jen.Func().Params(jen.List(id("x"), id("y")).Index(jen.Lit(3)).Int()).Int().Block(
				jen.Return(jen.Qual("slices", "Compare").Call(id("x").Index(jen.Empty().Op(":")), id("y").Index(jen.Empty().Op(":")))),
			)),
		jen.Return(id("found")),
	)
}

// cuhRule is one op's rule in the header template's data.
type cuhRule struct {
	Op                int // variant.Op.Index
	OpName            string
	Shift, Rows, Cols int
	Lo, Hi            [3]int
	NN                int
	KColumns          []string
	Tables            []cuhTable
	// Kernels maps a cell's character, less '0', to the variant's index (ruleKernels).
	Kernels string
}

type cuhTable struct {
	Name string
	Rows []cuhRow
}

type cuhRow struct{ Row, Comment string }

func cuhRuleData(or *OpRule) cuhRule {
	r := or.Rule
	d := r.Dims()
	c := cuhRule{Op: or.Op.Index(), OpName: or.Op.String(), Shift: r.Shift, Cols: d[2], Lo: r.Lo, Hi: r.Hi, NN: d[1],
		KColumns: strings.Split(wrap("Columns (K): "+kColumns(r)+".", 96), "\n")}
	ks := ruleKernels(r)
	var list []string
	for _, j := range ks {
		list = append(list, fmt.Sprint(j))
	}
	c.Kernels = strings.Join(list, ", ")
	for _, t := range []struct {
		name  string
		table []int
	}{{"aligned", r.Table}, {"unaligned", r.Unaligned}, {"general", r.General}} {
		rows, comments := tableRows(r, t.table, ks)
		ct := cuhTable{Name: t.name}
		for i := range rows {
			ct.Rows = append(ct.Rows, cuhRow{cString(rows[i]), comments[i]})
		}
		c.Rows = len(rows)
		c.Tables = append(c.Tables, ct)
	}
	return c
}

// stateRE finds a module global of tilegen's in a kernel's PTX: the split-K and stream-K
// workspaces and tile counters are named tg_* (templates/*.cu.tmpl), read-only tables of the CUDA
// headers are not.
var stateRE = regexp.MustCompile(`(?m)^\s*(?:\.visible\s+)?\.global\s[^;]*\btg_\w+\[`)

// hasState says whether the exported kernel keeps state in module globals between its blocks
// (a split-K or stream-K workspace and tile counters).
func (c *Chosen) hasState() bool { return stateRE.MatchString(c.src.ptx) }

// stateDoc is the package doc's and the header's paragraph on the kernels that keep partial sums and
// tile counters between their blocks. pool is the header's pool size in bytes (statePools, for its
// build from source); 0 for the Go package, whose kernels each keep their own in their module, as the
// header's PTX build does. Empty when no kernel keeps state.
func stateDoc(p *Plan, pool int64) string {
	var names []string
	for i := range p.Variants {
		if p.Variants[i].hasState() {
			names = append(names, p.Variants[i].V.Name)
		}
	}
	if len(names) == 0 {
		return ""
	}
	eg := strings.Join(names[:min(2, len(names))], ", ")
	where := "in global variables of their module, one set per kernel and context (1-26 MB each; Load leaves " +
		"these modules to each kernel's first launch)"
	if pool > 0 {
		where = fmt.Sprintf("in global variables of their module, one set per kernel and device, made at the kernel's "+
			"first launch (1-26 MB each), when the header launches the exported PTX; built from source, in one "+
			"pool per device that they share (%.1f MiB of device memory)", float64(pool)/(1<<20))
	}
	return wrap(fmt.Sprintf("Concurrency: %d of the %d kernels (split-K and stream-K, such as %s) keep partial sums "+
		"and tile counters %s. Each launch of one of them waits for the previous such launch on the device "+
		"(an event recorded after every such launch; no wait when both are on the same stream), so calls "+
		"on different streams or from different host threads never overlap on that state and are safe. "+
		"Not ordered: launches into a stream that is being captured into a CUDA graph; such a graph must "+
		"not run while another call of these kernels runs.",
		len(names), len(p.Variants), eg, where), 96) + "\n\n"
}
