package gen

// Tests of the generator's input model (issue 14): where errors point, that every error of a file
// is reported, that expressions are bounded in time and never wrap, the cap on variants, reserved
// names, and text from the YAML that could forge lines of generated output.

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"tilegen/internal/variant"
)

// baseYAML is testdata/good.yaml: one family, six combinations, two pruned.
const baseYAML = `families:
  - name: tiny
    template: tiny.cu.tmpl
    doc: "test family"
    variant_name: "tiny_{W}_u{U}"
    params:
      W: [8, 16, 64]
      U: [1, 4]
    constraints:
      - expr: "W * W <= 1024"
        reason: "block of W*W threads exceeds 1024"
    geometry:
      block_x: W
      block_y: W
      tile_rows: W
      tile_cols: W
      shared_bytes: 0
    requires:
      k_multiple: U
`

// edit returns src with the one occurrence of old replaced by new.
func edit(t *testing.T, src, old, new string) string {
	t.Helper()
	if n := strings.Count(src, old); n != 1 {
		t.Fatalf("%q occurs %d times in the YAML, want once", old, n)
	}
	return strings.Replace(src, old, new, 1)
}

// loadAndExpand runs what gen does with a file before rendering.
func loadAndExpand(src string, maxVariants int) (*Expansion, error) {
	cfg, err := LoadConfig("f.yaml", []byte(src))
	if err != nil {
		return nil, err
	}
	cfg.MaxVariants = maxVariants
	return Expand(cfg)
}

// within fails the test when fn does not return in d (an expression that runs unbounded).
func within(t *testing.T, d time.Duration, fn func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		t.Fatalf("still running after %s", d)
		return nil
	}
}

// TestSyntaxErrorPosition: yaml.v3 names the line where the enclosing construct starts (0-based
// for parser errors, none on line 1); the error must point at the problem itself.
func TestSyntaxErrorPosition(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"a: b: c", "f.yaml:1:5: not valid YAML: mapping values are not allowed in this context"},
		{"families:\n  - name: a\n    template: b: c\n", "f.yaml:3:16: not valid YAML: mapping values are not allowed in this context"},
		{"families:\n  - name: a\n    doc: @x\n", "f.yaml:3:10: not valid YAML: found character that cannot start any token"},
		{"families:\n  - name: a\n    doc: \"abc\n", "f.yaml:3:10: not valid YAML: found unexpected end of stream"},
		{"families:\n  - name: a\n\tdoc: x\n", "f.yaml:3:1: not valid YAML: found a tab character that violates indentation"},
		{"families:\n  - name: a\n    template: b\n   doc: x\n", "f.yaml:4:4: not valid YAML: did not find expected '-' indicator"},
		{"families: [\n  - name: tiny\n    template: {\n", "f.yaml:2:3: not valid YAML: did not find expected node content"},
		{"families:\n  - name: a\n    params: {W: [1, 2]]\n", "f.yaml:3:23: not valid YAML: did not find expected ',' or '}'"},
		{"a: 1\nb:\n  c: 1\n  - d\n", "f.yaml:4:3: not valid YAML: did not find expected key"},
		{"a: 1\n---\nb: [\n", "f.yaml:3:4: not valid YAML: did not find expected node content"},
		{"a: \"\\q\"\n", "f.yaml:1:6: not valid YAML: found unknown escape character"},
	} {
		_, err := LoadConfig("f.yaml", []byte(c.src))
		if err == nil || err.Error() != c.want {
			t.Errorf("%q:\n got: %v\nwant: %s", c.src, err, c.want)
		}
	}
}

// TestAllErrorsReported: one run names every error of the file, in file order, one per line; a
// misspelled required key is one error ("did you mean"), not two (and "missing key").
func TestAllErrorsReported(t *testing.T) {
	src := `families:
  - name: one
    tmplate: one.cu.tmpl
    doc: 7
    params:
      W: [8, "x"]
    geometry: {block_x: W, block_y: W, tile_rows: W, tile_cols: W}
  - name: two
    template: two.cu.tmpl
    params: {W: [1], V: [2]}
    constraints:
      - expr: "WW > 0"
    geometry: {block_x: 1, block_y: 1, tile_rows: 1, tile_cols: V, grid_zz: 2}
  - name: three
    template: three.cu.tmpl
    paramz: {W: [1]}
    geometry: {block_x: 1, block_y: 1, tile_rows: 1, tile_cols: 1}
    warp_multiple: 1
`
	_, err := LoadConfig("f.yaml", []byte(src))
	want := []string{
		`f.yaml:3:5: family one: unknown key "tmplate"; did you mean "template"?`,
		`f.yaml:4:10: family one: doc: expected a string, got int 7`,
		`f.yaml:6:14: family one: parameter W: expected an integer, got string "x"`,
		`f.yaml:12:15: family two: constraint: "WW > 0": unknown name WW; did you mean "W"? (1:1)`,
		`f.yaml:13:68: family two: geometry: unknown key "grid_zz"; did you mean "grid_z"?`,
		`f.yaml:16:5: family three: unknown key "paramz"; did you mean "params"?`,
		`f.yaml:18:20: family three: warp_multiple: expected true or false, got int 1`,
	}
	if err == nil {
		t.Fatal("want errors")
	}
	if got := strings.Split(err.Error(), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", err, strings.Join(want, "\n"))
	}
	var ie *InputError
	if !errors.As(err, &ie) || ie.Pos != (Pos{"f.yaml", 3, 5}) {
		t.Errorf("errors.As(*InputError) = %v, want the first error", ie)
	}
}

// TestExpandErrorsReported: expansion reports one error per failing family, for every family.
func TestExpandErrorsReported(t *testing.T) {
	second := strings.Replace(strings.TrimPrefix(baseYAML, "families:\n"), "name: tiny", "name: tiny2", 1)
	second = strings.Replace(second, `"tiny_{W}_u{U}"`, `"tiny2_{W}_u{U}"`, 1)
	second = strings.Replace(second, "tile_cols: W", `tile_cols: "W * 1000"`, 1)
	src := edit(t, baseYAML, `"tiny_{W}_u{U}"`, `"peak"`) + second
	_, err := loadAndExpand(src, 0)
	want := "f.yaml:5:19: family tiny, variant peak (W=8 U=1): the name peak is reserved for the support kernel peak (templates/support/peak.cu.tmpl); rename the variant\n" +
		`f.yaml:34:18: family tiny2, variant tiny2_8_u1 (W=8 U=1): tile_cols = 8000 (W * 1000) is outside [1, 4096]`
	if err == nil || err.Error() != want {
		t.Errorf("got:\n%v\nwant:\n%s", err, want)
	}
}

// TestDidYouMean: suggestions only for likely typos.
func TestDidYouMean(t *testing.T) {
	keys := []string{"name", "template", "params", "geometry"}
	for _, c := range []struct{ in, want string }{
		{"paramz", "params"}, {"Params", "params"}, {"tmplate", "template"}, {"geomtery", "geometry"},
		{"nmae", "name"}, {"tempalte", "template"}, {"x", ""}, {"zzzzzz", ""}, {"colour", ""},
	} {
		if got := suggest(c.in, keys); got != c.want {
			t.Errorf("suggest(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := suggest("X", []string{"W"}); got != "" {
		t.Errorf("a one-letter name is no typo of another: got %q", got)
	}
	_, err := loadAndExpand(edit(t, baseYAML, `"tiny_{W}_u{U}"`, `"tiny_{W}_u{UU}"`), 0)
	if err == nil || !strings.Contains(err.Error(), `{UU} is not a parameter of the family; did you mean "U"?`) {
		t.Errorf("placeholder typo: %v", err)
	}
	_, err = loadAndExpand(edit(t, baseYAML, "families:", "familes:"), 0)
	if err == nil || err.Error() != `f.yaml:1:1: top level: unknown key "familes"; did you mean "families"?` {
		t.Errorf("top-level typo: %v", err)
	}
}

// TestExprBounded: an expression cannot run unbounded (expr-lang v1.17.8 has a memory budget
// only; nested loops over a stored range stay within it). Loops, ranges and variables are
// rejected when the file is loaded, at the expression's place.
func TestExprBounded(t *testing.T) {
	for _, c := range []struct{ key, expr string }{
		{"constraint", "len(map(1..100000000, #)) > 0"},
		{"constraint", "all(1..1000000, {all(1..1000000, # > 0)})"},
		{"constraint", "let x = 1..999000; all(x, {all(x, {# > 0})})"},
		{"constraint", "count(1..999000, {W > #}) > 0"},
		{"constraint", "W in 1..100000000"},
		{"constraint", "[W, W][0] > 0"},
		{"constraint", "'a' + 'b' == 'ab'"},
		{"geometry", "reduce(1..1000000, #acc + #, 0)"},
		{"geometry", "sum(1..999999)"},
		{"geometry", "now().Unix()"},
	} {
		src := baseYAML
		line := "10:15"
		if c.key == "constraint" {
			src = edit(t, src, `"W * W <= 1024"`, strconv.Quote(c.expr))
		} else {
			src = edit(t, src, "shared_bytes: 0", "shared_bytes: "+strconv.Quote(c.expr))
			line = "17:21"
		}
		start := time.Now()
		err := within(t, 20*time.Second, func() error { _, err := loadAndExpand(src, 0); return err })
		if err == nil || !strings.HasPrefix(err.Error(), "f.yaml:"+line+": ") || !strings.Contains(err.Error(), "not allowed") {
			t.Errorf("%s %q: got %v, want an error at %s that says what is not allowed", c.key, c.expr, err, line)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%q took %s to reject", c.expr, d)
		}
	}
}

// TestExprAllowed: what expressions may still do, with expr-lang's own semantics.
func TestExprAllowed(t *testing.T) {
	for _, c := range []struct {
		expr string
		want int
	}{
		{"W in [8, 16] ? 1 : 2", 1}, {"max(W, 4) * 2 - min(W, 3)", 13}, {"W / 4 * 2", 4}, {"W ** 2", 64},
		{"-W + abs(-W) + W % 3", 2}, {"(W > 4 ? W : 0.5) * 3", 24}, {"(W > 4 ? W : 0.5) + 1", 9},
		{"W /* a comment */ + 1", 9}, {"W > 4 && !(W == 7) ? 1 : 0", 1},
	} {
		cfg, err := LoadConfig("f.yaml", []byte(edit(t, baseYAML, "shared_bytes: 0", "shared_bytes: "+strconv.Quote(c.expr))))
		if err != nil {
			t.Errorf("%q: %v", c.expr, err)
			continue
		}
		got, err := cfg.Families[0].Geometry["shared_bytes"].Int(map[string]any{"W": 8, "U": 1})
		if err != nil || got != c.want {
			t.Errorf("%q = %d, %v; want %d", c.expr, got, err, c.want)
		}
	}
	// Every expression of the shipped matrix stays valid.
	data, err := os.ReadFile("../../variants.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadConfig("variants.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	if exp, err := Expand(cfg); err != nil || len(exp.Variants) == 0 {
		t.Fatalf("variants.yaml: %v", err)
	}
}

// TestExprOverflow: 64-bit integer arithmetic in expressions must not wrap (expr-lang's does).
func TestExprOverflow(t *testing.T) {
	for _, c := range []struct{ at, value, want string }{
		{"shared_bytes: 0", `shared_bytes: "H * H * H * H"`, "integer overflow: 1152921504606846976 * 1048576 does not fit in 64 bits (1:11)"},
		{"shared_bytes: 0", `shared_bytes: "H * H * H * H * H * H * H * H - H"`, "integer overflow: 1152921504606846976 * 1048576"},
		{`"W * W <= 1024"`, `"H * 4611686018427387904 * 4 > 0"`, "integer overflow: 1048576 * 4611686018427387904"},
		{`"W * W <= 1024"`, `"4611686018427387904 * 4 > H"`, "integer overflow: 4611686018427387904 * 4"},
		{`"W * W <= 1024"`, `"H + 9223372036854775807 > 0"`, "integer overflow: 1048576 + 9223372036854775807"},
		{`"W * W <= 1024"`, `"0 - 9223372036854775807 - H < 0"`, "integer overflow: -9223372036854775807 - 1048576"},
		{`"W * W <= 1024"`, `"(H > 0 ? H : 0.5) * 4611686018427387904 > 0"`, "integer overflow: 1048576 * 4611686018427387904"},
		{"shared_bytes: 0", `shared_bytes: "H ** 4"`, `"H ** 4" = 1.2089258196146292e+24 does not fit in 32 bits`},
		{"shared_bytes: 0", `shared_bytes: "H * H * 4096"`, `shared_bytes: "H * H * 4096" = 4503599627370496 does not fit in 32 bits`},
	} {
		src := edit(t, baseYAML, "U: [1, 4]", "U: [1, 4]\n      H: [1048576]")
		src = edit(t, src, c.at, c.value)
		_, err := loadAndExpand(src, 0)
		if err == nil || !strings.Contains(err.Error(), c.want) || !regexp.MustCompile(`^f\.yaml:(11:15|18:21): `).MatchString(err.Error()) {
			t.Errorf("%s: got %v, want %q at the expression", c.value, err, c.want)
		}
	}
	// Parameters stay small enough that a product of a few of them fits.
	_, err := loadAndExpand(edit(t, baseYAML, "W: [8, 16, 64]", "W: [4611686018427387904]"), 0)
	if err == nil || !strings.Contains(err.Error(), "f.yaml:7:11: family tiny: parameter W: 4611686018427387904 outside [0, 1048576]") {
		t.Errorf("parameter 2^62: %v", err)
	}
}

func TestCheckedArithmetic(t *testing.T) {
	for _, c := range []struct {
		op   string
		a, b int
		ok   bool
	}{
		{"+", math.MaxInt - 1, 1, true}, {"+", math.MaxInt, 1, false}, {"+", -math.MaxInt, -1, false},
		{"-", -math.MaxInt, 0, true}, {"-", -math.MaxInt, 1, false}, {"-", 0, math.MaxInt, true},
		{"*", 1 << 31, 1 << 31, true}, {"*", 1 << 32, 1 << 31, false}, {"*", -1, math.MaxInt, true},
		{"*", 3, math.MaxInt / 2, false}, {"*", 0, math.MaxInt, true},
	} {
		if _, err := checkedInt(c.op, c.a, c.b); (err == nil) != c.ok {
			t.Errorf("%d %s %d: err %v, want ok=%v", c.a, c.op, c.b, err, c.ok)
		}
	}
	if _, ok := checkedProduct(math.MaxInt64/2+1, 2); ok {
		t.Error("checkedProduct wrapped")
	}
	if _, ok := checkedSum(math.MaxInt64, 1); ok {
		t.Error("checkedSum wrapped")
	}
	if n, ok := checkedProduct(4096, 4096); !ok || n != 1<<24 {
		t.Errorf("checkedProduct(4096, 4096) = %d, %v", n, ok)
	}
}

// TestMaxVariants: the cartesian product is counted (exactly, without overflow) before it is
// built; over the cap is an error naming the family and the count; --max-variants raises it.
func TestMaxVariants(t *testing.T) {
	list := func(n int) string {
		v := make([]string, n)
		for i := range v {
			v[i] = strconv.Itoa(i + 1)
		}
		return "[" + strings.Join(v, ", ") + "]"
	}
	// One family far over the cap: 40 parameters of 256 values, 2^320 combinations.
	var params strings.Builder
	for i := range 40 {
		fmt.Fprintf(&params, "      P%d: %s\n", i, list(256))
	}
	huge := edit(t, baseYAML, "      W: [8, 16, 64]\n      U: [1, 4]\n", "      W: [8]\n      U: [1]\n"+params.String())
	err := within(t, 20*time.Second, func() error { _, err := loadAndExpand(huge, 0); return err })
	want := "f.yaml:2:11: family tiny: its parameters expand to " + new(big.Int).Lsh(big.NewInt(1), 320).String() + " combinations (W 1 × U 1 × P0 256 × "
	if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), "more than the limit of 200000; split the family or raise --max-variants") {
		t.Errorf("got %v\nwant %s...", err, want)
	}

	// Two families that fit alone but not together under a cap of 100000 (250 × 250 = 62500 each).
	two := edit(t, baseYAML, "W: [8, 16, 64]", "W: "+list(250))
	two = edit(t, two, "U: [1, 4]", "U: "+list(250))
	second := strings.Replace(strings.TrimPrefix(two, "families:\n"), "name: tiny", "name: tiny2", 1)
	second = strings.Replace(second, `"tiny_{W}_u{U}"`, `"tiny2_{W}_u{U}"`, 1)
	err = within(t, 20*time.Second, func() error { _, err := loadAndExpand(two+second, 100000); return err })
	if err == nil || err.Error() != "f.yaml:20:11: family tiny2: the families up to and including this one expand to 125000 combinations before pruning, more than the limit of 100000; raise --max-variants" {
		t.Errorf("two families: got %v", err)
	}

	// The cap is a setting: 6 combinations pass a cap of 6, not one of 5.
	if _, err := loadAndExpand(baseYAML, 6); err != nil {
		t.Errorf("cap 6: %v", err)
	}
	if _, err := loadAndExpand(baseYAML, 5); err == nil || !strings.Contains(err.Error(), "expand to 6 combinations (W 3 × U 2) before pruning, more than the limit of 5") {
		t.Errorf("cap 5: %v", err)
	}

	// And a flag.
	cfgFile := filepath.Join(t.TempDir(), "v.yaml")
	if err := os.WriteFile(cfgFile, []byte(baseYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	gen := func(args ...string) error {
		return Run(append([]string{"--config", cfgFile, "--templates", "testdata/templates", "--explain"}, args...), &bytes.Buffer{}, &bytes.Buffer{})
	}
	if err := gen("--max-variants", "6"); err != nil {
		t.Errorf("--max-variants 6: %v", err)
	}
	if err := gen("--max-variants", "5"); err == nil || !strings.Contains(err.Error(), "more than the limit of 5") {
		t.Errorf("--max-variants 5: %v", err)
	}
	if err := gen("--max-variants", "0"); exitCode(err) != 2 {
		t.Errorf("--max-variants 0: %v (exit %d), want a usage error", err, exitCode(err))
	}
}

// TestGridZAuto: grid_z: auto takes its rule from geometry.split (expressions over the parameters,
// every key required, each in range) into variant.SplitRule, with GridZ its max; split without
// grid_z: auto, or grid_z: auto without split, is an error.
func TestGridZAuto(t *testing.T) {
	auto := edit(t, baseYAML, "      shared_bytes: 0\n", `      grid_z: auto
      split: {max: "W * 4", k_step: W, min_k: "2 * W", blocks_per_sm: 4, workspace_floats: 1048576}
      shared_bytes: 0
`)
	exp, err := loadAndExpand(auto, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range exp.Variants {
		v := p.V
		w := p.P["W"]
		want := variant.SplitRule{Max: 4 * w, KStep: w, MinK: 2 * w, BlocksPerSM: 4, WorkspaceFloats: 1 << 20}
		if v.Split == nil || *v.Split != want || v.GridZ != 4*w {
			t.Errorf("%s: split %+v grid_z %d, want %+v and %d", v.Name, v.Split, v.GridZ, want, 4*w)
		}
	}
	for _, c := range []struct{ src, want string }{
		{edit(t, auto, "      grid_z: auto\n", ""), `f.yaml:17:14: family tiny: geometry: split is the rule of grid_z: auto; set grid_z: auto or remove split`},
		{edit(t, auto, `      split: {max: "W * 4", k_step: W, min_k: "2 * W", blocks_per_sm: 4, workspace_floats: 1048576}`+"\n", ""),
			`f.yaml:13:7: family tiny: geometry (grid_z: auto): missing key "split"`},
		{edit(t, auto, `blocks_per_sm: 4, `, ""), `f.yaml:18:14: family tiny: geometry.split: missing key "blocks_per_sm"`},
		{edit(t, auto, `k_step: W`, `k_stp: W`), `f.yaml:18:29: family tiny: geometry.split: unknown key "k_stp"; did you mean "k_step"?`},
	} {
		if _, err := LoadConfig("f.yaml", []byte(c.src)); err == nil || err.Error() != c.want {
			t.Errorf("got %v\nwant %s", err, c.want)
		}
	}
	// balance, optional, is a boolean expression: the balancing rule where it holds.
	bal, err := loadAndExpand(edit(t, auto, `workspace_floats: 1048576}`, `workspace_floats: 1048576, balance: "W > 8"}`), 0)
	if err != nil {
		t.Fatal(err)
	}
	nb := 0
	for _, p := range bal.Variants {
		if p.V.Split.Balance != (p.P["W"] > 8) {
			t.Errorf("%s: balance %v with W = %d", p.V.Name, p.V.Split.Balance, p.P["W"])
		}
		if p.V.Split.Balance {
			nb++
		}
	}
	if nb == 0 || nb == len(bal.Variants) {
		t.Errorf("balance \"W > 8\" holds for %d of %d variants; want some, not all", nb, len(bal.Variants))
	}
	if _, err := LoadConfig("f.yaml", []byte(edit(t, auto, `workspace_floats: 1048576}`, `workspace_floats: 1048576, balance: "W + 1"}`))); err == nil {
		t.Error("a numeric balance expression accepted")
	}
	// stream_k, optional, is a boolean expression too: a stream-K grid (GridZ 1, Grid's x is the
	// rule's CTAs); it excludes balance.
	sk, err := loadAndExpand(edit(t, auto, `workspace_floats: 1048576}`, `workspace_floats: 1048576, stream_k: "W > 0"}`), 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range sk.Variants {
		v := p.V
		if !v.Split.StreamK || v.GridZ != 1 {
			t.Errorf("%s: stream_k %v grid_z %d, want true and 1", v.Name, v.Split.StreamK, v.GridZ)
		}
		if x, y, z := v.Grid(1000, 1000, 1000, 132); x != v.Split.CTAs(variant.CeilDiv(1000, v.Tile.Cols)*variant.CeilDiv(1000, v.Tile.Rows), v.Tile.Rows*v.Tile.Cols, 1000, 132) || y != 1 || z != 1 {
			t.Errorf("%s: stream-K grid %dx%dx%d", v.Name, x, y, z)
		}
	}
	if _, err := loadAndExpand(edit(t, auto, `workspace_floats: 1048576}`, `workspace_floats: 1048576, balance: "W > 0", stream_k: "W > 0"}`), 0); err == nil ||
		!strings.Contains(err.Error(), "stream_k and balance exclude each other") {
		t.Errorf("stream_k with balance: %v", err)
	}
	if _, err := LoadConfig("f.yaml", []byte(edit(t, auto, `workspace_floats: 1048576}`, `workspace_floats: 1048576, stream_k: "W * 2"}`))); err == nil {
		t.Error("a numeric stream_k expression accepted")
	}
	// Values out of range are expansion errors naming the expression.
	if _, err := loadAndExpand(edit(t, auto, `max: "W * 4"`, `max: "W - 8"`), 0); err == nil ||
		!strings.Contains(err.Error(), "max = 0 (W - 8) is outside [2, 65535]") {
		t.Errorf("max 0: %v", err)
	}
}

// TestMathThreads: geometry math_threads is the variant's MathThreads (its prior counts those
// threads' outputs), absent means every thread, and more than the block is an error at its value.
func TestMathThreads(t *testing.T) {
	src := edit(t, baseYAML, "      block_y: W\n", "      block_y: W\n      math_threads: \"W * W / 2\"\n")
	x, err := loadAndExpand(src, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, pv := range x.Variants {
		v := &pv.V
		if v.MathThreads != v.Threads()/2 || v.ComputeThreads() != v.Threads()/2 {
			t.Errorf("%s: math_threads %d, compute threads %d, want %d", v.Name, v.MathThreads, v.ComputeThreads(), v.Threads()/2)
		}
	}
	x, err = loadAndExpand(baseYAML, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, pv := range x.Variants {
		v := &pv.V
		if v.MathThreads != 0 || v.ComputeThreads() != v.Threads() {
			t.Errorf("%s: no math_threads: got %d, compute threads %d", v.Name, v.MathThreads, v.ComputeThreads())
		}
	}
	src = edit(t, baseYAML, "      block_y: W\n", "      block_y: W\n      math_threads: \"W * W + 1\"\n")
	_, err = loadAndExpand(src, 0)
	want := "f.yaml:15:21: family tiny, variant tiny_8_u1 (W=8 U=1): math_threads = 65 (W * W + 1) exceeds the block's 64 threads"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("got:\n%v\nwant a first line:\n%s", err, want)
	}
}
