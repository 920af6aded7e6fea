package main

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"tilegen/internal/variant"
)

// Hardware limits the built-in resource checks apply (sm_90).
const (
	maxThreads       = 1024
	staticSharedMax  = 48 * 1024  // static shared memory per block without opt-in
	dynamicSharedMax = 227 * 1024 // shared memory per block with the dynamic-shared opt-in on sm_90
)

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
// requirements for the rest, and checks names are unique across families.
func Expand(cfg *Config) (*Expansion, error) {
	out := &Expansion{}
	owner := map[string]string{}
	for _, f := range cfg.Families {
		kept := 0
		reasons := map[string]int{}
		var err error
		forEachCombo(f.Params, func(vals []int) bool {
			var p *Planned
			var pr *Pruned
			p, pr, err = expandOne(cfg.File, f, vals)
			if err != nil {
				return false
			}
			if pr != nil {
				out.Pruned = append(out.Pruned, *pr)
				reasons[pr.Reason]++
				return true
			}
			pos := Pos{cfg.File, f.NamePos.Line, f.NamePos.Column}
			if prev, dup := owner[p.V.Name]; dup {
				err = &InputError{Pos: pos, Msg: fmt.Sprintf("duplicate variant name %s: family %s (%s) and %s",
					p.V.Name, f.Name, p.V.ParamString(), prev)}
				return false
			}
			owner[p.V.Name] = fmt.Sprintf("family %s (%s) at %s", f.Name, p.V.ParamString(), pos)
			out.Variants = append(out.Variants, *p)
			kept++
			return true
		})
		if err != nil {
			return nil, err
		}
		if kept == 0 {
			keys := make([]string, 0, len(reasons))
			for r := range reasons {
				keys = append(keys, r)
			}
			sort.Strings(keys)
			parts := make([]string, len(keys))
			for i, r := range keys {
				parts[i] = fmt.Sprintf("%d× %s", reasons[r], r)
			}
			return nil, errAt(cfg.File, f.NamePos, "family %s: every combination is pruned: %s", f.Name, strings.Join(parts, "; "))
		}
	}
	sort.Slice(out.Variants, func(i, j int) bool { return out.Variants[i].V.Name < out.Variants[j].V.Name })
	return out, nil
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

func variantName(f *Family, vals []int) string {
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
		return m // unreachable: checkNamePattern rejected unknown placeholders
	})
}

func expandOne(file string, f *Family, vals []int) (*Planned, *Pruned, error) {
	env := make(map[string]any, len(vals))
	pm := make(map[string]int, len(vals))
	params := make([]variant.Param, len(vals))
	for i, p := range f.Params {
		env[p.Name] = vals[i]
		pm[p.Name] = vals[i]
		params[i] = variant.Param{Name: p.Name, Value: vals[i]}
	}
	v := variant.Variant{Name: variantName(f, vals), Family: f.Name, Template: f.Template, Params: params}
	where := func() string { return fmt.Sprintf("family %s, variant %s (%s)", f.Name, v.Name, v.ParamString()) }
	if !variant.IsIdent(v.Name) {
		n := f.NamePattern
		if n == nil {
			n = f.NamePos
		}
		return nil, nil, errAt(file, n, "%s: variant name %q is not an identifier", where(), v.Name)
	}
	prune := func(reason string) (*Planned, *Pruned, error) {
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
	eval := func(m map[string]*Expr, key string, def, lo, hi int) (int, error) {
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
	var err error
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
	}
	for _, x := range geo {
		if *x.dst, err = eval(g, x.key, x.def, x.lo, x.hi); err != nil {
			return nil, nil, err
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
	threads := v.Block.X * v.Block.Y
	switch {
	case threads > maxThreads:
		return prune(fmt.Sprintf("block of %d threads exceeds %d", threads, maxThreads))
	case f.WarpMul && threads%32 != 0:
		return prune(fmt.Sprintf("block of %d threads is not a multiple of 32 (warp_multiple)", threads))
	case !f.DynamicOK && v.DynamicShared > 0:
		return prune(fmt.Sprintf("dynamic_shared %d bytes needs dynamic_shared_ok", v.DynamicShared))
	case !f.DynamicOK && shared > staticSharedMax:
		return prune(fmt.Sprintf("shared_bytes %d exceeds %d (48 KiB) without dynamic_shared_ok", shared, staticSharedMax))
	case f.DynamicOK && shared+v.DynamicShared > dynamicSharedMax:
		return prune(fmt.Sprintf("shared_bytes + dynamic_shared = %d exceeds %d (227 KiB)", shared+v.DynamicShared, dynamicSharedMax))
	}
	return &Planned{V: v, Family: f, P: pm}, nil, nil
}
