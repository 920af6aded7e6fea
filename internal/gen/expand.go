package gen

import (
	"fmt"
	"io/fs"
	"math"
	"math/big"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"tilegen/internal/variant"
	"tilegen/templates"
)

// Hardware limits the built-in resource checks apply (sm_90).
const (
	maxThreads       = 1024
	staticSharedMax  = 48 * 1024  // static shared memory per block without opt-in
	dynamicSharedMax = 227 * 1024 // shared memory per block with the dynamic-shared opt-in on sm_90
)

// DefaultMaxVariants caps the parameter combinations (before pruning) all families of a file may
// expand to together; --max-variants raises it. The count is taken before anything is expanded,
// so a typo that asks for 10^20 combinations is an error at once rather than a hang.
const DefaultMaxVariants = 200000

// Planned is one kept variant with the family it came from and its parameter values by name.
type Planned struct {
	V      variant.Variant
	Family *Family
	P      map[string]int
}

// Pruned is a combination dropped by a constraint or a resource check, with the reason.
type Pruned struct {
	Name   string
	Family string
	Params string
	Reason string
}

// Expansion is the result of expanding every family.
type Expansion struct {
	Variants []Planned // sorted by name
	Pruned   []Pruned  // in family order, then combination order
}

// Expand builds the cartesian product of each family's parameters in declared order, drops the
// combinations a constraint or a resource check rejects (keeping the reason), evaluates geometry and
// requirements for the rest, and checks names are unique across families and not reserved. It
// reports the errors of every family at once (the first error of each family stops that family).
func Expand(cfg *Config) (*Expansion, error) {
	d := &diags{file: cfg.File}
	if !checkCombinations(d, cfg) {
		return nil, d.err()
	}
	out := &Expansion{}
	owner := map[string]string{}
	for _, f := range cfg.Families {
		kept, failed := 0, false
		reasons := map[string]int{}
		for _, ax := range f.axes() {
			if failed {
				break
			}
			forEachCombo(f.Params, func(vals []int) bool {
				p, pr, err := expandOne(cfg.File, f, ax, vals)
				if err != nil {
					d.list = append(d.list, err)
					failed = true
					return false
				}
				if pr != nil {
					out.Pruned = append(out.Pruned, *pr)
					reasons[pr.Reason]++
					return true
				}
				pos := Pos{cfg.File, f.NamePos.Line, f.NamePos.Column}
				if prev, dup := owner[p.V.Name]; dup {
					d.add(f.NamePos, "duplicate variant name %s: family %s (%s) and %s", p.V.Name, f.Name, p.V.ParamString(), prev)
					failed = true
					return false
				}
				owner[p.V.Name] = fmt.Sprintf("family %s (%s) at %s", f.Name, p.V.ParamString(), pos)
				out.Variants = append(out.Variants, *p)
				kept++
				return true
			})
		}
		if kept == 0 && !failed {
			keys := make([]string, 0, len(reasons))
			for r := range reasons {
				keys = append(keys, r)
			}
			sort.Strings(keys)
			parts := make([]string, len(keys))
			for i, r := range keys {
				parts[i] = fmt.Sprintf("%d× %s", reasons[r], r)
			}
			d.add(f.NamePos, "family %s: every combination is pruned: %s", f.Name, strings.Join(parts, "; "))
		}
	}
	if !d.ok() {
		return nil, d.err()
	}
	sort.Slice(out.Variants, func(i, j int) bool { return out.Variants[i].V.Name < out.Variants[j].V.Name })
	return out, nil
}

// checkCombinations counts each family's combinations exactly (math/big: 40 parameters of 256
// values are 2^320) before anything is materialized, and records an error for every family over
// the cap and, when each fits but all together do not, at the family where the total passes it.
func checkCombinations(d *diags, cfg *Config) bool {
	limit := cfg.MaxVariants
	if limit <= 0 {
		limit = DefaultMaxVariants
	}
	capN := big.NewInt(int64(limit))
	total := new(big.Int)
	ok := true
	for _, f := range cfg.Families {
		n := big.NewInt(int64(len(f.axes())))
		var factors []string
		if len(f.Ops) > 0 {
			factors = append(factors, fmt.Sprintf("ops %d", len(f.Ops)))
		}
		if len(f.Batched) > 0 {
			factors = append(factors, fmt.Sprintf("batched %d", len(f.Batched)))
		}
		if len(f.Epilogues) > 0 {
			factors = append(factors, fmt.Sprintf("epilogues %d", len(f.Epilogues)))
		}
		if len(f.Precisions) > 0 {
			factors = append(factors, fmt.Sprintf("precision %d", len(f.Precisions)))
		}
		for _, p := range f.Params {
			n.Mul(n, big.NewInt(int64(len(p.Values))))
			factors = append(factors, fmt.Sprintf("%s %d", p.Name, len(p.Values)))
		}
		if n.Cmp(capN) > 0 {
			ok = d.add(f.NamePos, "family %s: its parameters expand to %s combinations (%s) before pruning, more than the limit of %d; split the family or raise --max-variants",
				f.Name, n, strings.Join(factors, " × "), limit)
			continue
		}
		if total.Add(total, n); ok && total.Cmp(capN) > 0 {
			ok = d.add(f.NamePos, "family %s: the families up to and including this one expand to %s combinations before pruning, more than the limit of %d; raise --max-variants",
				f.Name, total, limit)
		}
	}
	return ok
}

// forEachCombo calls fn for every combination, the last parameter varying fastest, until fn returns false.
func forEachCombo(params []ParamSpec, fn func([]int) bool) {
	idx := make([]int, len(params))
	vals := make([]int, len(params))
	for {
		for i, p := range params {
			vals[i] = p.Values[idx[i]]
		}
		if !fn(vals) {
			return
		}
		i := len(params) - 1
		for ; i >= 0; i-- {
			idx[i]++
			if idx[i] < len(params[i].Values) {
				break
			}
			idx[i] = 0
		}
		if i < 0 {
			return
		}
	}
}

// axis is one point of a family's axes outside its parameters: the op and whether it is batched.
type axis struct {
	op        variant.Op
	batched   bool
	epi       variant.Epilogue
	precision variant.Precision
}

// axes lists the family's ops × batched × epilogues × precisions, ops outermost.
func (f *Family) axes() []axis {
	var out []axis
	for _, op := range f.ops() {
		for _, b := range f.batched() {
			for _, e := range f.epilogues() {
				for _, p := range f.precisions() {
					out = append(out, axis{op, b, e, p})
				}
			}
		}
	}
	return out
}

// variantName is the family's name pattern (or default scheme) for vals, with the op in lower case as
// a suffix for any op but NN, and _sb for a strided-batched kernel.
func variantName(f *Family, ax axis, vals []int) string {
	name := baseName(f, vals)
	if ax.op != variant.OpNN {
		name += "_" + strings.ToLower(ax.op.String())
	}
	if ax.batched {
		name += "_sb"
	}
	if ax.epi != variant.EpiNone {
		name += "_" + string(ax.epi)
	}
	if ax.precision != variant.PrecisionFP32 {
		name += "_" + ax.precision.Label()
	}
	return name
}

func baseName(f *Family, vals []int) string {
	if f.VariantName == "" {
		var b strings.Builder
		b.WriteString(f.Name)
		for i, p := range f.Params {
			b.WriteString("_" + strings.ToLower(p.Name) + strconv.Itoa(vals[i]))
		}
		return b.String()
	}
	return placeholderRE.ReplaceAllStringFunc(f.VariantName, func(m string) string {
		name := m[1 : len(m)-1]
		for i, p := range f.Params {
			if p.Name == name {
				return strconv.Itoa(vals[i])
			}
		}
		return m // unreachable: namePattern rejected unknown placeholders
	})
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// reservedPrefix starts the entry symbols of support kernels; no variant may take such a name.
const reservedPrefix = "tilegen_"

// supportEntryRE finds the entry points a support template defines.
var supportEntryRE = regexp.MustCompile(`__global__\s+void\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?([A-Za-z_]\w*)\s*\(`)

// reservedNames maps every name a variant may not take to what owns it: the support kernels'
// module names (the runner loads "reference" and "peak" by name) and their entry symbols, read
// from the embedded templates/support/*.cu.tmpl.
var reservedNames = sync.OnceValue(func() map[string]string {
	out := map[string]string{}
	files, _ := fs.Glob(templates.FS, "support/*.cu.tmpl")
	for _, file := range files {
		name := strings.TrimSuffix(path.Base(file), ".cu.tmpl")
		out[name] = fmt.Sprintf("the support kernel %s (templates/%s)", name, file)
		src, _ := fs.ReadFile(templates.FS, file)
		for _, m := range supportEntryRE.FindAllStringSubmatch(string(src), -1) {
			if m[1] != name {
				out[m[1]] = fmt.Sprintf("an entry point of the support kernel %s (templates/%s)", name, file)
			}
		}
	}
	return out
})

// reservedBy says who owns name, or "" when a variant may take it.
func reservedBy(name string) string {
	if owner, ok := reservedNames()[name]; ok {
		return owner
	}
	if strings.HasPrefix(name, reservedPrefix) {
		return "support kernels (names starting with " + reservedPrefix + ")"
	}
	return ""
}

// checkedProduct is a·b, or false when it does not fit in an int64.
func checkedProduct(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	c := a * b
	return c, c/b == a && !(a == -1 && b == math.MinInt64) && !(b == -1 && a == math.MinInt64)
}

// checkedSum is a+b, or false when it does not fit in an int64.
func checkedSum(a, b int64) (int64, bool) {
	c := a + b
	return c, (b >= 0) == (c >= a)
}

func expandOne(file string, f *Family, ax axis, vals []int) (*Planned, *Pruned, *InputError) {
	op := ax.op
	env := make(map[string]any, len(vals)+2)
	pm := make(map[string]int, len(vals))
	params := make([]variant.Param, len(vals))
	for i, p := range f.Params {
		env[p.Name] = vals[i]
		pm[p.Name] = vals[i]
		params[i] = variant.Param{Name: p.Name, Value: vals[i]}
	}
	if f.OpsNode != nil {
		env[opAName], env[opBName] = b2i(op.TransA()), b2i(op.TransB())
	}
	if f.BatchedNode != nil {
		env[batchedVar] = b2i(ax.batched)
	}
	if f.EpiloguesNode != nil {
		env[epiVar] = b2i(ax.epi.HasBias())
	}
	if f.PrecisionNode != nil {
		env[split3Var] = b2i(ax.precision.Split3())
	}
	v := variant.Variant{Name: variantName(f, ax, vals), Family: f.Name, Template: f.Template,
		TrafficModel: f.TrafficModel, Seed: f.Seed, Op: op, Batched: ax.batched, Epilogue: ax.epi,
		Precision: ax.precision, Target: f.PTXTarget, Params: params}
	where := func() string { return fmt.Sprintf("family %s, variant %s (%s)", f.Name, v.Name, v.ParamString()) }
	nameNode := f.NamePattern
	if nameNode == nil {
		nameNode = f.NamePos
	}
	if !variant.IsIdent(v.Name) {
		return nil, nil, errAt(file, nameNode, "%s: variant name %q is not an identifier", where(), v.Name)
	}
	if owner := reservedBy(v.Name); owner != "" {
		return nil, nil, errAt(file, nameNode, "%s: the name %s is reserved for %s; rename the variant", where(), v.Name, owner)
	}
	prune := func(reason string) (*Planned, *Pruned, *InputError) {
		return nil, &Pruned{Name: v.Name, Family: f.Name, Params: v.ParamString(), Reason: reason}, nil
	}
	for _, c := range f.Constraints {
		ok, err := c.Expr.Bool(env)
		if err != nil {
			return nil, nil, errAt(file, c.Expr.Node, "%s: constraint %v", where(), err)
		}
		if !ok {
			return prune(c.Reason)
		}
	}
	eval := func(m map[string]*Expr, key string, def, lo, hi int) (int, *InputError) {
		e, ok := m[key]
		if !ok {
			return def, nil
		}
		x, err := e.Int(env)
		if err != nil {
			return 0, errAt(file, e.Node, "%s: %s: %v", where(), key, err)
		}
		if x < lo || x > hi {
			return 0, errAt(file, e.Node, "%s: %s = %d (%s) is outside [%d, %d]", where(), key, x, e.Src, lo, hi)
		}
		return x, nil
	}
	var err *InputError
	g := f.Geometry
	geo := []struct {
		key    string
		dst    *int
		def    int
		lo, hi int
	}{
		{"block_x", &v.Block.X, 0, 1, maxDim},
		{"block_y", &v.Block.Y, 0, 1, maxDim},
		{"tile_rows", &v.Tile.Rows, 0, 1, maxDim},
		{"tile_cols", &v.Tile.Cols, 0, 1, maxDim},
		{"grid_z", &v.GridZ, 1, 1, maxDim},
		{"dynamic_shared", &v.DynamicShared, 0, 0, maxSharedBytes},
		{"math_threads", &v.MathThreads, 0, 0, maxDim},
	}
	for _, x := range geo {
		if *x.dst, err = eval(g, x.key, x.def, x.lo, x.hi); err != nil {
			return nil, nil, err
		}
	}
	if f.GridZAuto {
		r := &variant.SplitRule{}
		for _, x := range []struct {
			key    string
			dst    *int
			lo, hi int
		}{
			{"max", &r.Max, 2, maxGridZ},
			{"k_step", &r.KStep, 1, maxDim},
			{"min_k", &r.MinK, 1, maxParamValue},
			{"blocks_per_sm", &r.BlocksPerSM, 1, maxDim},
			{"workspace_floats", &r.WorkspaceFloats, 1, maxWorkspaceFloats},
		} {
			if *x.dst, err = eval(f.Split, x.key, 0, x.lo, x.hi); err != nil {
				return nil, nil, err
			}
		}
		if e, ok := f.Split["balance"]; ok {
			b, berr := e.Bool(env)
			if berr != nil {
				return nil, nil, errAt(file, e.Node, "%s: balance: %v", where(), berr)
			}
			r.Balance = b
		}
		if e, ok := f.Split["stream_k"]; ok {
			b, berr := e.Bool(env)
			if berr != nil {
				return nil, nil, errAt(file, e.Node, "%s: stream_k: %v", where(), berr)
			}
			r.StreamK = b
		}
		v.Split, v.GridZ = r, r.Max
		if r.StreamK {
			if r.Balance {
				return nil, nil, errAt(file, f.Split["stream_k"].Node, "%s: stream_k and balance exclude each other (a stream-K grid is blocks, not slices)", where())
			}
			v.GridZ = 1 // the grid is Split.CTAs blocks along x
		}
	}
	shared, err := eval(g, "shared_bytes", 0, 0, maxSharedBytes)
	if err != nil {
		return nil, nil, err
	}
	req := []struct {
		key string
		dst *int
	}{
		{"m_multiple", &v.Requires.MMultiple}, {"n_multiple", &v.Requires.NMultiple},
		{"k_multiple", &v.Requires.KMultiple}, {"ld_multiple", &v.Requires.LDMultiple},
	}
	for _, x := range req {
		if *x.dst, err = eval(f.Requires, x.key, 1, 1, maxDim); err != nil {
			return nil, nil, err
		}
	}

	// Built-in resource checks: prune rather than fail, like a constraint the hardware imposes.
	// The bounds above keep these in range, but they are checked anyway: an int is 32 bits on
	// some platforms, and a future bound must not turn into a silently wrapped sum.
	threads, ok1 := checkedProduct(int64(v.Block.X), int64(v.Block.Y))
	totalShared, ok2 := checkedSum(int64(shared), int64(v.DynamicShared))
	if !ok1 || !ok2 {
		return nil, nil, errAt(file, f.NamePos, "%s: block_x·block_y = %d·%d or shared_bytes + dynamic_shared = %d + %d overflows",
			where(), v.Block.X, v.Block.Y, shared, v.DynamicShared)
	}
	if e, ok := g["math_threads"]; ok && int64(v.MathThreads) > threads {
		return nil, nil, errAt(file, e.Node, "%s: math_threads = %d (%s) exceeds the block's %d threads", where(), v.MathThreads, e.Src, threads)
	}
	switch {
	case threads > maxThreads:
		return prune(fmt.Sprintf("block of %d threads exceeds %d", threads, maxThreads))
	case f.WarpMul && threads%32 != 0:
		return prune(fmt.Sprintf("block of %d threads is not a multiple of 32 (warp_multiple)", threads))
	case !f.DynamicOK && v.DynamicShared > 0:
		return prune(fmt.Sprintf("dynamic_shared %d bytes needs dynamic_shared_ok", v.DynamicShared))
	case !f.DynamicOK && shared > staticSharedMax:
		return prune(fmt.Sprintf("shared_bytes %d exceeds %d (48 KiB) without dynamic_shared_ok", shared, staticSharedMax))
	case f.DynamicOK && totalShared > dynamicSharedMax:
		return prune(fmt.Sprintf("shared_bytes + dynamic_shared = %d exceeds %d (227 KiB)", totalShared, dynamicSharedMax))
	}
	return &Planned{V: v, Family: f, P: pm}, nil, nil
}
