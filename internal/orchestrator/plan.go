package orchestrator

import (
	"fmt"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"

	"tilegen/internal/protocol"
	"tilegen/internal/search"
	"tilegen/internal/variant"
)

// DefaultShapes are the square anchors and the seeds' odd and skinny shapes.
const DefaultShapes = "4096x4096x4096,2048x2048x2048,1024x1024x1024,1041x1247x139,535x792x414," +
	"224x256x192,1000x1000x1000,4096x4096x32,127x4097x513"

// Filter selects variants by name globs, family names and parameter values (empty: all).
type Filter struct {
	Globs    []string
	Families []string
	// Params keeps variants whose parameter of each named key has one of the listed values
	// (--param KEY=V1,V2; see ParseParams). A variant without the parameter is left out.
	Params map[string][]int
	// Ops keeps variants of these ops (--ops); empty: every op.
	Ops []variant.Op
	// Precisions keeps variants of these precisions (--precision); empty: FP32 only, so a
	// tensor-core kernel (3xtf32, tf32) runs only when the user allows its precision.
	Precisions []variant.Precision
}

// precisions is the filter's precisions: FP32 alone unless --precision named others.
func (f Filter) precisions() []variant.Precision {
	if len(f.Precisions) == 0 {
		return []variant.Precision{variant.PrecisionFP32}
	}
	return f.Precisions
}

// ParseParams parses --param arguments: each KEY=V or KEY=V1,V2,...; repeating a key adds values.
func ParseParams(args []string) (map[string][]int, error) {
	if len(args) == 0 {
		return nil, nil
	}
	out := map[string][]int{}
	for _, a := range args {
		key, vals, ok := strings.Cut(a, "=")
		key = strings.TrimSpace(key)
		if !ok || key == "" || strings.TrimSpace(vals) == "" {
			return nil, fmt.Errorf("--param %q: want KEY=VALUE or KEY=V1,V2", a)
		}
		for _, f := range strings.Split(vals, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				return nil, fmt.Errorf("--param %q: %q is not an integer", a, strings.TrimSpace(f))
			}
			out[key] = append(out[key], n)
		}
	}
	return out, nil
}

// Select returns the variants the filter admits, sorted by name.
func (f Filter) Select(all []variant.Variant) ([]variant.Variant, error) {
	for _, g := range f.Globs {
		if _, err := path.Match(g, ""); err != nil {
			return nil, fmt.Errorf("--variants %q: %w", g, err)
		}
	}
	if err := f.checkParams(all); err != nil {
		return nil, err
	}
	var out []variant.Variant
	for _, v := range all {
		if len(f.Globs) > 0 && !anyMatch(f.Globs, v.Name) {
			continue
		}
		if len(f.Families) > 0 && !contains(f.Families, v.Family) {
			continue
		}
		if !f.paramsMatch(&v) {
			continue
		}
		if len(f.Ops) > 0 && !slices.Contains(f.Ops, v.Op) {
			continue
		}
		if !slices.Contains(f.precisions(), v.Precision) {
			continue
		}
		out = append(out, v)
	}
	variant.SortByName(out)
	if len(out) == 0 {
		if len(f.Precisions) != len(variant.Precisions) {
			g := f
			g.Precisions = variant.Precisions
			if more, err := g.Select(all); err == nil {
				return nil, fmt.Errorf("no variant matches %s (of %d); %d do under another precision (%s is %s): allow it with --precision",
					f, len(all), len(more), more[0].Name, more[0].Precision)
			}
		}
		return nil, fmt.Errorf("no variant matches %s (of %d)", f, len(all))
	}
	return out, nil
}

// String renders the filter as the flags that make it.
func (f Filter) String() string {
	var parts []string
	if len(f.Globs) > 0 {
		parts = append(parts, "--variants "+strings.Join(f.Globs, ","))
	}
	if len(f.Families) > 0 {
		parts = append(parts, "--family "+strings.Join(f.Families, ","))
	}
	keys := make([]string, 0, len(f.Params))
	for k := range f.Params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		vals := make([]string, len(f.Params[k]))
		for i, v := range f.Params[k] {
			vals[i] = strconv.Itoa(v)
		}
		parts = append(parts, "--param "+k+"="+strings.Join(vals, ","))
	}
	if len(f.Ops) > 0 {
		ops := make([]string, len(f.Ops))
		for i, op := range f.Ops {
			ops[i] = op.String()
		}
		parts = append(parts, "--ops "+strings.Join(ops, ","))
	}
	if len(f.Precisions) > 0 && !slices.Equal(f.Precisions, []variant.Precision{variant.PrecisionFP32}) {
		ps := make([]string, len(f.Precisions))
		for i, p := range f.Precisions {
			ps[i] = p.Label()
		}
		parts = append(parts, "--precision "+strings.Join(ps, ","))
	}
	if len(parts) == 0 {
		return "the catalog"
	}
	return strings.Join(parts, " ")
}

// checkParams refuses a --param key that no variant of the catalog has (a misspelling would
// otherwise select nothing), naming the parameters there are.
func (f Filter) checkParams(all []variant.Variant) error {
	known := map[string]bool{}
	for _, v := range all {
		for _, p := range v.Params {
			known[p.Name] = true
		}
	}
	for k := range f.Params {
		if !known[k] {
			names := make([]string, 0, len(known))
			for n := range known {
				names = append(names, n)
			}
			sort.Strings(names)
			return fmt.Errorf("--param %s: no variant has the parameter %s (parameters: %s)", k, k, strings.Join(names, ", "))
		}
	}
	return nil
}

func (f Filter) paramsMatch(v *variant.Variant) bool {
	for k, want := range f.Params {
		found := false
		for _, p := range v.Params {
			if p.Name == k && slices.Contains(want, p.Value) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func anyMatch(globs []string, name string) bool {
	for _, g := range globs {
		if ok, _ := path.Match(g, name); ok {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Shard is the i-th of n deterministic parts of a plan (0 <= I < N).
type Shard struct{ I, N int }

// ParseShard parses "i/n".
func ParseShard(s string) (Shard, error) {
	if s == "" {
		return Shard{0, 1}, nil
	}
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return Shard{}, fmt.Errorf("--shard %q: want i/n with 0 <= i < n", s)
	}
	return Shard{i, n}, nil
}

// Strategy chooses which variants of a shape are measured (internal/search).
type Strategy struct {
	// Name is exhaustive, random or model.
	Name string
	// Budget bounds the measurements per shape of the random and model strategies (the model's
	// default: DefaultModelBudget).
	Budget search.Budget
	// Seed drives the random strategy and the verification seeds.
	Seed uint64
}

// DefaultModelBudget is the model strategy's budget when none is given: a fifth of each shape's
// candidates (the target: within 1 % of the exhaustive winner at that cost).
var DefaultModelBudget = search.Budget{Fraction: 0.2}

// budget is the strategy's effective budget (zero: every candidate).
func (st Strategy) budget() search.Budget {
	switch st.Name {
	case search.Random:
		return st.Budget
	case search.Model:
		if st.Budget.IsZero() {
			return DefaultModelBudget
		}
		return st.Budget
	}
	return search.Budget{}
}

// item is one (variant, shape) of a plan; Skip is set when the variant does not accept the shape.
type item struct {
	V     *variant.Variant
	Shape protocol.Shape
	Skip  string
}

// buildPlan lists (variant, shape) items in shape order then name order, applies the strategy per
// shape, then keeps the shard's part: item i belongs to shard i mod n.
func buildPlan(vs []variant.Variant, shapes []protocol.Shape, st Strategy, sh Shard) ([]item, error) {
	if st.Name == search.Model && sh.N > 1 {
		return nil, fmt.Errorf("--strategy model cannot be sharded: the search learns across the run's shapes")
	}
	var all []item
	for _, s := range shapes {
		var fit []item
		var skip []item
		for i := range vs {
			v := &vs[i]
			if v.Op != s.Op || v.Batched != (s.Batch > 0) || v.Epilogue != s.Epilogue || v.Precision != s.Precision {
				continue // a variant of another op, batching, epilogue or precision is no candidate (and no skipped record)
			}
			if err := supportsShape(v, s); err != nil {
				skip = append(skip, item{V: v, Shape: s, Skip: err.Error()})
				continue
			}
			fit = append(fit, item{V: v, Shape: s})
		}
		switch st.Name {
		case "", search.Exhaustive, search.Model:
			// The model strategy chooses among every fitting variant as it measures (tuneModel).
		case search.Random:
			if st.Budget.IsZero() {
				return nil, fmt.Errorf("--strategy random needs --budget")
			}
			picks := search.RandomPicks(st.Seed, s, len(fit), st.Budget.For(len(fit)))
			picked := make([]item, len(picks))
			for j, p := range picks {
				picked[j] = fit[p]
			}
			fit = picked
		default:
			return nil, fmt.Errorf("--strategy %q: want %s", st.Name, strings.Join(search.Methods, ", "))
		}
		merged := append(fit, skip...)
		sort.SliceStable(merged, func(a, b int) bool { return merged[a].V.Name < merged[b].V.Name })
		all = append(all, merged...)
	}
	if sh.N <= 1 {
		return all, nil
	}
	var out []item
	for i, it := range all {
		if i%sh.N == sh.I {
			out = append(out, it)
		}
	}
	return out, nil
}

// supportsShape is Variant.SupportsDense plus the grid's z limit for the shape's batch.
func supportsShape(v *variant.Variant, s protocol.Shape) error {
	if err := v.SupportsDense(s.M, s.N, s.K); err != nil {
		return err
	}
	if s.Batch == 0 {
		return nil
	}
	// A batched kernel has a fixed grid z per product (no launch-time split rule), so the SM count
	// does not matter here.
	if _, _, z := v.GridBatch(s.M, s.N, s.K, DefaultSMs, s.Batch); z > variant.MaxGridZ {
		return fmt.Errorf("grid z %d for a batch of %d exceeds %d", z, s.Batch, variant.MaxGridZ)
	}
	return nil
}

// EdgeBatch is the batch of the edge shapes of a strided-batched variant: enough products that a
// wrong stride, or a write into the gaps between them, shows.
const EdgeBatch = 3

// EdgeShapes are the shapes `runner verify` checks a variant on, under the variant's op and
// epilogue (and, for a strided-batched variant, as batches of EdgeBatch): degenerate, prime and odd shapes, and every
// dimension one more and one less than the variant's tile (K: around 64 and 128, since the K tile
// is a template detail).
func EdgeShapes(v *variant.Variant) []protocol.Shape {
	out := edgeDims(v)
	for i := range out {
		out[i].Op = v.Op
		out[i].Epilogue = v.Epilogue
		out[i].Precision = v.Precision
		if v.Batched {
			out[i].Batch = EdgeBatch
		}
	}
	return out
}

func edgeDims(v *variant.Variant) []protocol.Shape {
	shapes := []protocol.Shape{
		{M: 1, N: 1, K: 1}, {M: 1, N: 256, K: 256}, {M: 256, N: 1, K: 256}, {M: 256, N: 256, K: 1},
		{M: 97, N: 89, K: 83}, {M: 127, N: 129, K: 131}, {M: 4099, N: 17, K: 513}, {M: 1, N: 4097, K: 3},
	}
	ks := []int{63, 65, 127, 129}
	for i, m := range []int{v.Tile.Rows - 1, v.Tile.Rows + 1} {
		for j, n := range []int{v.Tile.Cols - 1, v.Tile.Cols + 1} {
			for _, k := range ks[2*((i+j)%2) : 2*((i+j)%2)+2] {
				if m >= 1 && n >= 1 {
					shapes = append(shapes, protocol.Shape{M: m, N: n, K: k})
				}
			}
		}
	}
	seen := map[protocol.Shape]bool{}
	var out []protocol.Shape
	for _, s := range shapes {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
