package export

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// The split-K, many-slice and stream-K templates keep their partial sums and tile counters in module
// globals, one array of each per kernel (templates/*.cu.tmpl):
//
//	__device__ float4 tg_ska_ws_NAME[tg_ska_NAME::WS_FLOATS / 4];
//	__device__ unsigned tg_ska_cnt_NAME[tg_ska_NAME::WS_TILES * tg_ska_NAME::CPT + 1];
//
// Compiled into one translation unit, as the header is, every such kernel would hold its own 1-26 MB
// on each device from the moment the program loads its module (an export of the workload corpus held
// 865 MB). The header gives them one pool per element type instead: each declaration becomes a macro
// naming the pool and a static_assert that the pool holds the kernel's extent. Sharing is safe
// because every kernel resets each counter it used before it finishes (the last block of a tile sets
// it back to 0), so consecutive launches in one stream see zeroed counters whatever kernel ran before;
// launches on different streams are ordered by the header's launcher (see stateDoc).

// stateDeclRE matches a kernel's state declaration in its CUDA source: element type, name, extent.
var stateDeclRE = regexp.MustCompile(`(?m)^__device__ (float4|unsigned) (tg_\w+)\[([^\]\n]+)\];$`)

// ptxStateRE matches the same array in the kernel's PTX: name and size in bytes.
var ptxStateRE = regexp.MustCompile(`(?m)^\s*(?:\.visible\s+)?\.global\s+\.align\s+\d+\s+\.b8\s+(tg_\w+)\[(\d+)\];`)

// poolElemBytes is the size of each element type the templates keep state in.
var poolElemBytes = map[string]int64{"float4": 16, "unsigned": 4}

// cuhPool is one pool of the header: `__device__ Type Name[Elems];`.
type cuhPool struct {
	Type, Name string
	Elems      int64
}

// statePools rewrites the state declarations of each stateful kernel's source (srcs, by the plan's
// variant order) onto the header's pools, named name_state_TYPE, sized as the largest extent of any
// kernel (from its PTX). It returns the rewritten sources, each kernel's state names (to #undef after
// its source) and the pools, ordered by type. A kernel whose PTX keeps state under a name its source
// does not declare in the templates' form is an error: its state would escape the pool and the
// launcher's ordering.
func statePools(p *Plan, name string, srcs []string) (out []string, undefs [][]string, pools []cuhPool, err error) {
	out, undefs = make([]string, len(srcs)), make([][]string, len(srcs))
	size := map[string]int64{}
	type decl struct {
		typ, sym, extent string
		elems            int64
	}
	decls := make([][]decl, len(srcs))
	for i := range p.Variants {
		c := &p.Variants[i]
		bytes := map[string]int64{}
		for _, m := range ptxStateRE.FindAllStringSubmatch(c.src.ptx, -1) {
			n, perr := strconv.ParseInt(m[2], 10, 64)
			if perr != nil {
				return nil, nil, nil, fmt.Errorf("%s: PTX global %s: %v", c.V.Name, m[1], perr)
			}
			bytes[m[1]] = n
		}
		if len(bytes) == 0 && c.hasState() {
			return nil, nil, nil, fmt.Errorf("%s: its PTX keeps state in a global the export does not recognize", c.V.Name)
		}
		found := map[string]bool{}
		for _, m := range stateDeclRE.FindAllStringSubmatch(srcs[i], -1) {
			n, ok := bytes[m[2]]
			if !ok {
				return nil, nil, nil, fmt.Errorf("%s: state %s is declared in its source but not in its PTX", c.V.Name, m[2])
			}
			eb := poolElemBytes[m[1]]
			if n%eb != 0 {
				return nil, nil, nil, fmt.Errorf("%s: state %s: %d bytes are not a whole number of %s", c.V.Name, m[2], n, m[1])
			}
			found[m[2]] = true
			decls[i] = append(decls[i], decl{m[1], m[2], strings.TrimSpace(m[3]), n / eb})
			size[m[1]] = max(size[m[1]], n/eb)
		}
		for sym := range bytes {
			if !found[sym] {
				return nil, nil, nil, fmt.Errorf("%s: its PTX keeps state in %s, which its source does not declare as `__device__ float4|unsigned %s[...];`",
					c.V.Name, sym, sym)
			}
		}
	}
	poolName := func(typ string) string { return name + "_state_" + typ }
	for i, src := range srcs {
		if len(decls[i]) == 0 {
			out[i] = src
			continue
		}
		j := 0
		out[i] = stateDeclRE.ReplaceAllStringFunc(src, func(string) string {
			d := decls[i][j]
			j++
			undefs[i] = append(undefs[i], d.sym)
			return fmt.Sprintf("// %s: the header's %s pool (one per device, shared by the kernels that keep state).\n"+
				"static_assert((long long)(%s) <= %dLL, \"%s: larger than the header's state pool\");\n#define %s %s",
				d.sym, d.typ, d.extent, size[d.typ], d.sym, d.sym, poolName(d.typ))
		})
	}
	var types []string
	for t := range size {
		types = append(types, t)
	}
	sort.Strings(types)
	for _, t := range types {
		pools = append(pools, cuhPool{Type: t, Name: poolName(t), Elems: size[t]})
	}
	return out, undefs, pools, nil
}

// poolBytes is the pools' total size in bytes.
func poolBytes(pools []cuhPool) int64 {
	var n int64
	for _, q := range pools {
		n += q.Elems * poolElemBytes[q.Type]
	}
	return n
}
