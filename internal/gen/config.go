package gen

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"tilegen/internal/variant"
)

// Limits on what variants.yaml may ask for. They keep a typo (or a fuzzer) from asking for a
// value that overflows the geometry arithmetic; the number of combinations is capped in Expand.
const (
	maxParamValue    = 1 << 20 // parameter values lie in [0, maxParamValue]
	maxValuesPerList = 256     // values per parameter
	maxExprLen       = 1000    // characters per expression
	maxDim           = 4096    // block dims, tile sizes, grid_z, requires.*
	maxSharedBytes   = 1 << 30 // sanity cap for shared_bytes and dynamic_shared (real limits prune)
	maxGridZ         = 65535   // split.max: the grid's z limit
	// maxWorkspaceFloats caps split.workspace_floats: 256 Mi floats (1 GiB) of module-global memory.
	maxWorkspaceFloats = 1 << 28
)

// Config is a parsed variants.yaml.
type Config struct {
	File     string
	Families []*Family
	// MaxVariants caps the parameter combinations (before pruning) of all families together;
	// 0 means DefaultMaxVariants. gen's --max-variants sets it.
	MaxVariants int
}

// Family is one entry of families: a template and the parameter space it is rendered over.
type Family struct {
	Name        string
	NamePos     *yaml.Node
	Template    string
	TemplatePos *yaml.Node
	Doc         string
	VariantName string // pattern with {PARAM} placeholders; "" means the default scheme
	NamePattern *yaml.Node
	Params      []ParamSpec
	Constraints []Constraint
	Geometry    map[string]*Expr // keys of geometryKeys (grid_z absent when GridZAuto)
	// GridZAuto: geometry says grid_z: auto, and Split holds the rule's expressions (keys of
	// splitKeys): grid z is chosen at launch by variant.SplitRule.
	GridZAuto bool
	Split     map[string]*Expr
	Requires  map[string]*Expr // keys of requiresKeys
	DynamicOK bool
	WarpMul   bool
	Node      *yaml.Node
	// TrafficModel is traffic_model (one of variant.TrafficModels; default compulsory); Seed is seed.
	TrafficModel string
	Seed         bool
	// Ops is ops: the operations the family is generated for, an axis of the matrix outside its
	// parameters (default NN only). When the family declares ops, its expressions may read OPA and
	// OPB (1 when op(A), op(B) is transposed, else 0) and a variant of another op than NN gets the
	// op in lower case as a name suffix (shared_w16_pad0_tn).
	Ops     []variant.Op
	OpsNode *yaml.Node
	// Batched is batched: whether the family is generated as one-product kernels (false), as
	// strided-batched kernels (true, variant.BatchedSignature) or both, another axis outside the
	// parameters (default [false]). When declared, expressions may read BATCHED (0 or 1), and a
	// batched variant's name ends in _sb.
	Batched     []bool
	BatchedNode *yaml.Node
	// Epilogues is epilogues: the fused epilogues the family is generated for (variant.Epilogue:
	// none, bias_row, bias_col, bias_relu_row, ...), a third axis outside the parameters (default
	// [none]). When declared, expressions may read EPI (0 for none, 1 with a bias), and a variant
	// with an epilogue gets its name as a suffix (_bias_relu_row). Not with batched: true.
	Epilogues     []variant.Epilogue
	EpiloguesNode *yaml.Node
	// Precisions is precision: the arithmetic the family is generated for (variant.Precision), a
	// fourth axis outside the parameters (default [fp32]); a variant of another precision than fp32
	// gets it as a name suffix (mma_tf32_128x128x32_w64x64_s3_3xtf32). The template reads it as
	// .V.Precision.
	Precisions    []variant.Precision
	PrecisionNode *yaml.Node
	// PTXTarget is ptx_target: the PTX target the family's kernels need beyond the generator's
	// --arch (one of PTXTargets; "" for none). nvcc compiles them for --arch, the generator raises
	// the PTX's .version and .target (nvcc releases before 12.0 know no sm_90a but pass inline PTX
	// through), and ptxas is not run: the GPU's driver assembles them, and reports their resources.
	PTXTarget string
}

// PTXTargets are the values ptx_target may take: the arch-specific target each stands for and the
// PTX ISA version it needs.
var PTXTargets = map[string]string{"sm_90a": "8.0"}

// Names the expressions of a family that declares ops (OPA, OPB; see Family.Ops) or batched
// (BATCHED) may read.
const (
	opAName    = "OPA"
	opBName    = "OPB"
	batchedVar = "BATCHED"
	epiVar     = "EPI"
	// split3Var is 1 for a 3xTF32 variant, else 0, in the expressions of a family that declares
	// precision.
	split3Var = "SPLIT3"
)

// epilogues is the family's epilogue axis ([none] when it declares none).
func (f *Family) epilogues() []variant.Epilogue {
	if len(f.Epilogues) == 0 {
		return []variant.Epilogue{variant.EpiNone}
	}
	return f.Epilogues
}

// batched is the family's batch axis ([false] when it declares none).
func (f *Family) batched() []bool {
	if len(f.Batched) == 0 {
		return []bool{false}
	}
	return f.Batched
}

// precisions is the family's precision axis (fp32 alone when it declares none).
func (f *Family) precisions() []variant.Precision {
	if len(f.Precisions) == 0 {
		return []variant.Precision{variant.PrecisionFP32}
	}
	return f.Precisions
}

// ops is the family's op axis (NN alone when it declares none).
func (f *Family) ops() []variant.Op {
	if len(f.Ops) == 0 {
		return []variant.Op{variant.OpNN}
	}
	return f.Ops
}

// ParamSpec is one parameter with the values it ranges over, in declared order.
type ParamSpec struct {
	Name   string
	Values []int
	Node   *yaml.Node
}

// Constraint prunes the combinations for which Expr is false.
type Constraint struct {
	Expr   *Expr
	Reason string // one line of printable text (printableLine)
}

var (
	topKeys      = []string{"families"}
	familyKeys   = []string{"name", "template", "doc", "variant_name", "traffic_model", "seed", "ops", "batched", "epilogues", "precision", "ptx_target", "params", "constraints", "geometry", "dynamic_shared_ok", "warp_multiple", "requires"}
	geometryKeys = []string{"block_x", "block_y", "tile_rows", "tile_cols", "grid_z", "split", "shared_bytes", "dynamic_shared", "math_threads"}
	// splitKeys are the fields of geometry.split, the launch-time split-K rule of grid_z: auto
	// (variant.SplitRule); all but splitOptional are required. balance is a boolean expression
	// (variant.SplitRule.Balance: slices that fill the SMs, blocks_per_sm the occupancy target);
	// stream_k is one too (variant.SplitRule.StreamK: a persistent stream-K grid of blocks, max
	// the most blocks).
	splitKeys     = []string{"max", "k_step", "min_k", "blocks_per_sm", "workspace_floats", "balance", "stream_k"}
	splitOptional = []string{"balance", "stream_k"}
	requiredGeom  = map[string]bool{"block_x": true, "block_y": true, "tile_rows": true, "tile_cols": true}
	requiresKeys  = []string{"m_multiple", "n_multiple", "k_multiple", "ld_multiple"}
	constraintK   = []string{"expr", "reason"}
)

// LoadConfig parses variants.yaml content strictly: unknown keys, duplicate keys, wrong value types,
// anchors/aliases and multiple documents are errors naming file:line:col. A syntax error stops the
// parse; every other error of the file is reported at once (an ErrorList, sorted by position).
func LoadConfig(file string, data []byte) (*Config, error) {
	doc, extra, err := decodeDocuments(data)
	if err != nil {
		return nil, yamlSyntaxError(file, data, err)
	}
	if doc == nil || doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, &InputError{Pos: Pos{file, 1, 1}, Msg: "empty file: expected a mapping with key \"families\""}
	}
	d := &diags{file: file}
	if extra != nil {
		d.add(extra, "a second YAML document: variants.yaml holds exactly one")
	}
	// Aliases would make every later message ambiguous: stop at them.
	if rejectAliases(d, doc); !d.ok() {
		return nil, d.err()
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		d.add(root, "empty document: expected a mapping with key \"families\"")
		return nil, d.err()
	}
	fields, ok := d.mapping(root, "top level", topKeys)
	if !ok {
		return nil, d.err()
	}
	famsNode, ok := fields["families"]
	switch {
	case !ok:
		d.missing(root, "", "families")
	case famsNode.Kind != yaml.SequenceNode:
		d.add(famsNode, "families: expected a sequence of families, got %s", kindName(famsNode))
	case len(famsNode.Content) == 0:
		d.add(famsNode, "families: empty list; declare at least one family")
	}
	if !d.ok() {
		return nil, d.err()
	}
	cfg := &Config{File: file}
	seen := map[string]*yaml.Node{}
	for _, fn := range famsNode.Content {
		f := d.family(fn)
		if f == nil {
			continue
		}
		if prev, dup := seen[f.Name]; dup {
			d.add(f.NamePos, "duplicate family name %q (first declared at %d:%d)", f.Name, prev.Line, prev.Column)
			continue
		}
		seen[f.Name] = f.NamePos
		cfg.Families = append(cfg.Families, f)
	}
	if !d.ok() {
		return nil, d.err()
	}
	return cfg, nil
}

// rejectAliases refuses anchors and aliases: they would let one node appear at several places
// (so errors could not name a single place) and are a classic YAML expansion bomb.
func rejectAliases(d *diags, n *yaml.Node) {
	if n.Kind == yaml.AliasNode {
		d.add(n, "YAML aliases are not supported in variants.yaml")
		return
	}
	if n.Anchor != "" {
		d.add(n, "YAML anchors are not supported in variants.yaml")
	}
	for _, c := range n.Content {
		rejectAliases(d, c)
	}
}

// mapping checks that n is a mapping and returns key -> value node for its keys drawn from
// allowed; unknown (with the nearest allowed key as a hint), duplicate and non-string keys are
// recorded. ok is false only when n is not a mapping at all.
func (d *diags) mapping(n *yaml.Node, what string, allowed []string) (map[string]*yaml.Node, bool) {
	if n.Kind != yaml.MappingNode {
		return nil, d.add(n, "%s: expected a mapping, got %s", what, kindName(n))
	}
	out := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch _, dup := out[k.Value]; {
		case k.Kind != yaml.ScalarNode || k.Tag != "!!str":
			d.add(k, "%s: keys must be strings, got %s", what, kindName(k))
		case !contains(allowed, k.Value):
			hint := didYouMean(k.Value, allowed)
			if hint == "" {
				hint = " (allowed: " + strings.Join(allowed, ", ") + ")"
			} else {
				if d.suggested == nil {
					d.suggested = map[suggestion]bool{}
				}
				d.suggested[suggestion{n, suggest(k.Value, allowed)}] = true
			}
			d.add(k, "%s: unknown key %q%s", what, k.Value, hint)
		case dup:
			d.add(k, "%s: duplicate key %q", what, k.Value)
		default:
			out[k.Value] = v
		}
	}
	return out, true
}

// missing records that mapping n lacks key, unless an unknown key of n was already reported with
// key as its likely spelling (one mistake, one message).
func (d *diags) missing(n *yaml.Node, what, key string) {
	if d.suggested[suggestion{n, key}] {
		return
	}
	if what != "" {
		what += ": "
	}
	d.add(n, "%smissing key %q", what, key)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (d *diags) stringValue(n *yaml.Node, what string) (string, bool) {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
		return "", d.add(n, "%s: expected a string, got %s", what, kindName(n))
	}
	return n.Value, true
}

// textValue is a string that may be copied into generated text and --explain lines.
func (d *diags) textValue(n *yaml.Node, what string) (string, bool) {
	s, ok := d.stringValue(n, what)
	if !ok {
		return "", false
	}
	if why := printableLine(s); why != "" {
		return "", d.add(n, "%s: %s", what, why)
	}
	return s, true
}

func (d *diags) boolValue(n *yaml.Node, what string) (bool, bool) {
	var b bool
	if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" || n.Decode(&b) != nil {
		return false, d.add(n, "%s: expected true or false, got %s", what, kindName(n))
	}
	return b, true
}

// intValue decodes a YAML integer scalar in [0, maxParamValue]; strings, floats and anything else
// are errors.
func (d *diags) intValue(n *yaml.Node, what string) (int, bool) {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
		return 0, d.add(n, "%s: expected an integer, got %s", what, kindName(n))
	}
	var v int64
	if err := n.Decode(&v); err != nil {
		return 0, d.add(n, "%s: integer out of range: %s", what, n.Value)
	}
	if v < 0 || v > maxParamValue {
		return 0, d.add(n, "%s: %d outside [0, %d]", what, v, maxParamValue)
	}
	return int(v), true
}

// family checks one entry of families, recording every error; it returns nil when there was one.
func (d *diags) family(n *yaml.Node) *Family {
	before := len(d.list)
	label := "family"
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k, v := n.Content[i], n.Content[i+1]; k.Value == "name" && v.Kind == yaml.ScalarNode && variant.IsIdent(v.Value) {
				label = "family " + v.Value
			}
		}
	}
	fields, ok := d.mapping(n, label, familyKeys)
	if !ok {
		return nil
	}
	f := &Family{Node: n, Geometry: map[string]*Expr{}, Requires: map[string]*Expr{}}
	what := func(key string) string { return label + ": " + key }
	if nameNode, ok := fields["name"]; !ok {
		d.missing(n, "family", "name")
	} else if f.Name, ok = d.stringValue(nameNode, "family name"); ok {
		if !variant.IsIdent(f.Name) {
			d.add(nameNode, "family name %q is not an identifier ([A-Za-z_][A-Za-z0-9_]*)", f.Name)
		}
		f.NamePos = nameNode
	}
	if tn, ok := fields["template"]; !ok {
		d.missing(n, label, "template")
	} else if f.Template, ok = d.stringValue(tn, what("template")); ok {
		if !plainTemplateName(f.Template) {
			d.add(tn, "%s: %q must be a plain file name ending in .cu.tmpl (no directories, no ..)", what("template"), f.Template)
		}
		f.TemplatePos = tn
	}
	if dn, ok := fields["doc"]; ok {
		f.Doc, _ = d.textValue(dn, what("doc"))
	}
	f.TrafficModel = variant.TrafficCompulsory
	if tn, ok := fields["traffic_model"]; ok {
		if m, ok := d.stringValue(tn, what("traffic_model")); ok {
			if contains(variant.TrafficModels, m) {
				f.TrafficModel = m
			} else {
				hint := didYouMean(m, variant.TrafficModels)
				if hint == "" {
					hint = " (allowed: " + strings.Join(variant.TrafficModels, ", ") + ")"
				}
				d.add(tn, "%s: unknown traffic model %q%s", what("traffic_model"), m, hint)
			}
		}
	}
	if sn, ok := fields["seed"]; ok {
		f.Seed, _ = d.boolValue(sn, what("seed"))
	}
	if on, ok := fields["ops"]; ok {
		d.opsList(f, on, what("ops"))
	}
	if bn, ok := fields["batched"]; ok {
		d.batchedList(f, bn, what("batched"))
	}
	if en, ok := fields["epilogues"]; ok {
		d.epiloguesList(f, en, what("epilogues"))
		if slices.Contains(f.Batched, true) && slices.ContainsFunc(f.Epilogues, variant.Epilogue.HasBias) {
			d.add(en, "%s: epilogues with a bias and batched: true in one family are not supported (strided-batched kernels take no bias)", what("epilogues"))
		}
	}
	if pn, ok := fields["precision"]; ok {
		d.precisionList(f, pn, what("precision"))
	}
	if tn, ok := fields["ptx_target"]; ok {
		if t, ok := d.stringValue(tn, what("ptx_target")); ok {
			if _, known := PTXTargets[t]; known {
				f.PTXTarget = t
			} else {
				d.add(tn, "%s: unknown PTX target %q (allowed: sm_90a)", what("ptx_target"), t)
			}
		}
	}
	if vn, ok := fields["variant_name"]; ok {
		f.VariantName, _ = d.stringValue(vn, what("variant_name"))
		f.NamePattern = vn
	}
	if bn, ok := fields["dynamic_shared_ok"]; ok {
		f.DynamicOK, _ = d.boolValue(bn, what("dynamic_shared_ok"))
	}
	if bn, ok := fields["warp_multiple"]; ok {
		f.WarpMul, _ = d.boolValue(bn, what("warp_multiple"))
	}

	// Expressions are checked against the parameters: without a valid parameter list they would
	// only repeat its errors as unknown names.
	var env map[string]any
	if pn, ok := fields["params"]; !ok {
		d.missing(n, label, "params")
	} else if d.params(f, label, pn) {
		env = f.env()
		if f.VariantName != "" {
			d.namePattern(f, label)
		}
	}
	if cn, ok := fields["constraints"]; ok {
		d.constraints(f, cn, env, label)
	}
	if gn, ok := fields["geometry"]; !ok {
		d.missing(n, label, "geometry")
	} else if gf, ok := d.mapping(gn, what("geometry"), geometryKeys); ok {
		for _, key := range geometryKeys {
			vn, ok := gf[key]
			switch {
			case !ok:
				if requiredGeom[key] {
					d.missing(gn, what("geometry"), key)
				}
			case key == "grid_z" && vn.Kind == yaml.ScalarNode && vn.Tag == "!!str" && vn.Value == "auto":
				f.GridZAuto = true
			case key == "split":
				d.split(f, vn, env, what("geometry.split"))
			default:
				f.Geometry[key] = d.expr(vn, env, what("geometry."+key), false)
			}
		}
		if sn, ok := gf["split"]; ok && !f.GridZAuto {
			d.add(sn, "%s: split is the rule of grid_z: auto; set grid_z: auto or remove split", what("geometry"))
		} else if f.GridZAuto && !ok {
			d.missing(gn, what("geometry")+" (grid_z: auto)", "split")
		}
	}
	if rn, ok := fields["requires"]; ok {
		if rf, ok := d.mapping(rn, what("requires"), requiresKeys); ok {
			for _, key := range requiresKeys {
				if vn, ok := rf[key]; ok {
					f.Requires[key] = d.expr(vn, env, what("requires."+key), false)
				}
			}
		}
	}
	if len(d.list) > before {
		return nil
	}
	return f
}

// split loads geometry.split, the expressions of the launch-time split-K rule.
func (d *diags) split(f *Family, n *yaml.Node, env map[string]any, what string) {
	sf, ok := d.mapping(n, what, splitKeys)
	if !ok {
		return
	}
	f.Split = map[string]*Expr{}
	for _, key := range splitKeys {
		if vn, ok := sf[key]; ok {
			f.Split[key] = d.expr(vn, env, what+"."+key, key == "balance" || key == "stream_k")
		} else if !contains(splitOptional, key) {
			d.missing(n, what, key)
		}
	}
}

func (d *diags) constraints(f *Family, cn *yaml.Node, env map[string]any, label string) {
	if cn.Kind != yaml.SequenceNode {
		d.add(cn, "%s: constraints: expected a sequence, got %s", label, kindName(cn))
		return
	}
	what := label + ": constraint"
	for _, c := range cn.Content {
		cf, ok := d.mapping(c, what, constraintK)
		if !ok {
			continue
		}
		en, ok := cf["expr"]
		if !ok {
			d.missing(c, what, "expr")
		}
		var reason string
		if rn, ok := cf["reason"]; ok {
			reason, _ = d.textValue(rn, what+" reason")
		}
		if en == nil {
			continue
		}
		if e := d.expr(en, env, what, true); e != nil {
			if reason == "" {
				// The expression is the reason; its line breaks are only layout.
				reason = strings.Join(strings.Fields(e.Src), " ")
				if why := printableLine(reason); why != "" {
					d.add(en, "%s: without a reason, the expression is the reason, and it %s; add a reason", what, why)
					continue
				}
			}
			f.Constraints = append(f.Constraints, Constraint{Expr: e, Reason: reason})
		}
	}
}

// expr compiles an expression node when env (the parameters) is known, recording any error.
func (d *diags) expr(n *yaml.Node, env map[string]any, what string, boolean bool) *Expr {
	if env == nil {
		return nil
	}
	e, err := compileExpr(d.file, n, env, what, boolean)
	if err != nil {
		d.list = append(d.list, err)
		return nil
	}
	return e
}

// plainTemplateName accepts "name.cu.tmpl" only: no separators, no "..", no hidden files, so a
// template path from YAML can never leave the templates directory.
func plainTemplateName(s string) bool {
	return s != "" && !strings.ContainsAny(s, "/\\\x00") && path.Base(s) == s && !strings.HasPrefix(s, ".") &&
		strings.HasSuffix(s, ".cu.tmpl") && variant.IsIdent(strings.TrimSuffix(s, ".cu.tmpl"))
}

// params loads the family's parameters; false when any of them is wrong.
func (d *diags) params(f *Family, label string, pn *yaml.Node) bool {
	if pn.Kind != yaml.MappingNode {
		return d.add(pn, "%s: params: expected a mapping of NAME: [values], got %s", label, kindName(pn))
	}
	if len(pn.Content) == 0 {
		return d.add(pn, "%s: params: declare at least one parameter", label)
	}
	before := len(d.list)
	seen := map[string]bool{}
	for i := 0; i+1 < len(pn.Content); i += 2 {
		k, v := pn.Content[i], pn.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.Tag != "!!str" || !variant.IsIdent(k.Value) {
			d.add(k, "%s: parameter name %s is not an identifier", label, kindName(k))
			continue
		}
		if seen[k.Value] {
			d.add(k, "%s: duplicate parameter %q", label, k.Value)
			continue
		}
		seen[k.Value] = true
		if f.OpsNode != nil && (k.Value == opAName || k.Value == opBName) {
			d.add(k, "%s: parameter %s: the name is the op axis's (the family declares ops); rename the parameter", label, k.Value)
			continue
		}
		if f.EpiloguesNode != nil && k.Value == epiVar {
			d.add(k, "%s: parameter %s: the name is the epilogue axis's (the family declares epilogues); rename the parameter", label, k.Value)
			continue
		}
		if f.BatchedNode != nil && k.Value == batchedVar {
			d.add(k, "%s: parameter %s: the name is the batch axis's (the family declares batched); rename the parameter", label, k.Value)
			continue
		}
		if f.PrecisionNode != nil && k.Value == split3Var {
			d.add(k, "%s: parameter %s: the name is the precision axis's (the family declares precision); rename the parameter", label, k.Value)
			continue
		}
		what := fmt.Sprintf("%s: parameter %s", label, k.Value)
		if v.Kind != yaml.SequenceNode {
			d.add(v, "%s: expected a list of integers, got %s", what, kindName(v))
			continue
		}
		if len(v.Content) == 0 || len(v.Content) > maxValuesPerList {
			d.add(v, "%s: expected 1 to %d values, got %d", what, maxValuesPerList, len(v.Content))
			continue
		}
		ps := ParamSpec{Name: k.Value, Node: k}
		dup := map[int]bool{}
		for _, e := range v.Content {
			x, ok := d.intValue(e, what)
			if !ok {
				continue
			}
			if dup[x] {
				d.add(e, "%s: duplicate value %d", what, x)
				continue
			}
			dup[x] = true
			ps.Values = append(ps.Values, x)
		}
		f.Params = append(f.Params, ps)
	}
	return len(d.list) == before
}

var placeholderRE = regexp.MustCompile(`\{([^{}]*)\}`)

// namePattern validates variant_name once: every {X} names a parameter and the literal text
// is identifier characters, so every expansion is an identifier.
func (d *diags) namePattern(f *Family, label string) {
	for _, m := range placeholderRE.FindAllStringSubmatch(f.VariantName, -1) {
		if _, ok := f.param(m[1]); !ok {
			d.add(f.NamePattern, "%s: variant_name: {%s} is not a parameter of the family%s", label, m[1], didYouMean(m[1], f.paramNames()))
		}
	}
	lit := placeholderRE.ReplaceAllString(f.VariantName, "")
	for _, r := range lit {
		if !(r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			d.add(f.NamePattern, "%s: variant_name %q: only letters, digits, _ and {PARAM} placeholders are allowed", label, f.VariantName)
			return
		}
	}
}

func (f *Family) param(name string) (ParamSpec, bool) {
	for _, p := range f.Params {
		if p.Name == name {
			return p, true
		}
	}
	return ParamSpec{}, false
}

func (f *Family) paramNames() []string {
	names := make([]string, len(f.Params))
	for i, p := range f.Params {
		names[i] = p.Name
	}
	return names
}

// env is the expression environment: every parameter is an int, and so are OPA and OPB when the
// family declares ops.
func (f *Family) env() map[string]any {
	env := map[string]any{}
	for _, p := range f.Params {
		env[p.Name] = 0
	}
	if f.OpsNode != nil {
		env[opAName], env[opBName] = 0, 0
	}
	if f.BatchedNode != nil {
		env[batchedVar] = 0
	}
	if f.EpiloguesNode != nil {
		env[epiVar] = 0
	}
	if f.PrecisionNode != nil {
		env[split3Var] = 0
	}
	return env
}

// epiloguesList loads epilogues: a non-empty list of distinct epilogue names.
func (d *diags) epiloguesList(f *Family, n *yaml.Node, what string) {
	f.EpiloguesNode = n
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		d.add(n, "%s: expected a list of none, bias_row, bias_col, bias_relu_row, bias_relu_col, bias_gelu_row, bias_gelu_col, got %s", what, kindName(n))
		return
	}
	seen := map[variant.Epilogue]bool{}
	for _, e := range n.Content {
		s, ok := d.stringValue(e, what)
		if !ok {
			continue
		}
		ep, err := variant.ParseEpilogue(s)
		switch {
		case err != nil || s != ep.String():
			d.add(e, "%s: %q is not an epilogue (none, bias_row, bias_col, bias_relu_row, bias_relu_col, bias_gelu_row or bias_gelu_col, lower case)", what, s)
		case seen[ep]:
			d.add(e, "%s: duplicate epilogue %s", what, s)
		default:
			seen[ep] = true
			f.Epilogues = append(f.Epilogues, ep)
		}
	}
}

// batchedList loads batched: a non-empty list of distinct booleans.
func (d *diags) batchedList(f *Family, n *yaml.Node, what string) {
	f.BatchedNode = n
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 || len(n.Content) > 2 {
		d.add(n, "%s: expected [false], [true] or [false, true], got %s", what, kindName(n))
		return
	}
	seen := map[bool]bool{}
	for _, e := range n.Content {
		b, ok := d.boolValue(e, what)
		if !ok {
			continue
		}
		if seen[b] {
			d.add(e, "%s: duplicate value %v", what, b)
			continue
		}
		seen[b] = true
		f.Batched = append(f.Batched, b)
	}
}

// precisionList loads precision: one of fp32, 3xtf32, tf32, or a non-empty list of distinct ones.
func (d *diags) precisionList(f *Family, n *yaml.Node, what string) {
	f.PrecisionNode = n
	items := n.Content
	switch {
	case n.Kind == yaml.ScalarNode:
		items = []*yaml.Node{n}
	case n.Kind != yaml.SequenceNode || len(n.Content) == 0:
		d.add(n, "%s: expected fp32, 3xtf32, tf32 or a list of them, got %s", what, kindName(n))
		return
	}
	seen := map[variant.Precision]bool{}
	for _, e := range items {
		s, ok := d.stringValue(e, what)
		if !ok {
			continue
		}
		p, err := variant.ParsePrecision(s)
		switch {
		case err != nil || s != p.Label():
			d.add(e, "%s: %q is not a precision (fp32, 3xtf32 or tf32, lower case)", what, s)
		case seen[p]:
			d.add(e, "%s: duplicate precision %s", what, s)
		default:
			seen[p] = true
			f.Precisions = append(f.Precisions, p)
		}
	}
}

// opsList loads ops: a non-empty list of distinct NN, NT, TN, TT.
func (d *diags) opsList(f *Family, n *yaml.Node, what string) {
	f.OpsNode = n
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		d.add(n, "%s: expected a list of NN, NT, TN, TT, got %s", what, kindName(n))
		return
	}
	seen := map[variant.Op]bool{}
	for _, e := range n.Content {
		s, ok := d.stringValue(e, what)
		if !ok {
			continue
		}
		op, err := variant.ParseOp(s)
		switch {
		case err != nil || s != op.String():
			d.add(e, "%s: %q is not an op (NN, NT, TN or TT, upper case)", what, s)
		case seen[op]:
			d.add(e, "%s: duplicate op %s", what, s)
		default:
			seen[op] = true
			f.Ops = append(f.Ops, op)
		}
	}
}
