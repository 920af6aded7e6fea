package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"gopkg.in/yaml.v3"

	"tilegen/internal/variant"
)

// Limits on what variants.yaml may ask for. They keep a typo (or a fuzzer) from asking for a
// billion variants or a value that overflows the geometry arithmetic.
const (
	maxParamValue    = 1 << 20 // parameter values lie in [0, maxParamValue]
	maxValuesPerList = 256     // values per parameter
	maxCombinations  = 100000  // cartesian product size per family
	maxExprLen       = 1000    // characters per expression
	maxDim           = 4096    // block dims, tile sizes, grid_z, requires.*
	maxSharedBytes   = 1 << 30 // sanity cap for shared_bytes and dynamic_shared (real limits prune)
)

// Pos is a place in a YAML file; every input error names one.
type Pos struct {
	File      string
	Line, Col int
}

func (p Pos) String() string { return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col) }

// InputError is an error in the generator's input (variants.yaml or a template); main prints it
// as "gen: file:line:col: message".
type InputError struct {
	Pos Pos
	Msg string
}

func (e *InputError) Error() string { return e.Pos.String() + ": " + e.Msg }

func errAt(file string, n *yaml.Node, format string, args ...any) error {
	return &InputError{Pos: Pos{File: file, Line: n.Line, Col: n.Column}, Msg: fmt.Sprintf(format, args...)}
}

// Config is a parsed variants.yaml.
type Config struct {
	File     string
	Families []*Family
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
	Geometry    map[string]*Expr // keys of geometryKeys
	Requires    map[string]*Expr // keys of requiresKeys
	DynamicOK   bool
	WarpMul     bool
	Node        *yaml.Node
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
	Reason string
}

// Expr is an integer or boolean expression over the family's parameters, compiled once.
type Expr struct {
	Src   string
	Const *int // set when the YAML value was a plain integer
	Node  *yaml.Node
	prog  program
}

var (
	topKeys      = []string{"families"}
	familyKeys   = []string{"name", "template", "doc", "variant_name", "params", "constraints", "geometry", "dynamic_shared_ok", "warp_multiple", "requires"}
	geometryKeys = []string{"block_x", "block_y", "tile_rows", "tile_cols", "grid_z", "shared_bytes", "dynamic_shared"}
	requiredGeom = map[string]bool{"block_x": true, "block_y": true, "tile_rows": true, "tile_cols": true}
	requiresKeys = []string{"m_multiple", "n_multiple", "k_multiple", "ld_multiple"}
	constraintK  = []string{"expr", "reason"}
)

// LoadConfig parses variants.yaml content strictly: unknown keys, duplicate keys, wrong value types,
// anchors/aliases and multiple documents are errors naming file:line:col.
func LoadConfig(file string, data []byte) (*Config, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &InputError{Pos: Pos{file, 1, 1}, Msg: "empty file: expected a mapping with key \"families\""}
		}
		return nil, yamlSyntaxError(file, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, errAt(file, &extra, "a second YAML document: variants.yaml holds exactly one")
	} else if !errors.Is(err, io.EOF) {
		return nil, yamlSyntaxError(file, err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, &InputError{Pos: Pos{file, 1, 1}, Msg: "empty file: expected a mapping with key \"families\""}
	}
	if err := rejectAliases(file, &doc); err != nil {
		return nil, err
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return nil, errAt(file, root, "empty document: expected a mapping with key \"families\"")
	}
	fields, err := mapping(file, root, "top level", topKeys)
	if err != nil {
		return nil, err
	}
	famsNode, ok := fields["families"]
	if !ok {
		return nil, errAt(file, root, "missing key \"families\"")
	}
	if famsNode.Kind != yaml.SequenceNode {
		return nil, errAt(file, famsNode, "families: expected a sequence of families, got %s", kindName(famsNode))
	}
	if len(famsNode.Content) == 0 {
		return nil, errAt(file, famsNode, "families: empty list; declare at least one family")
	}
	cfg := &Config{File: file}
	seen := map[string]*yaml.Node{}
	for _, fn := range famsNode.Content {
		f, err := loadFamily(file, fn)
		if err != nil {
			return nil, err
		}
		if prev, dup := seen[f.Name]; dup {
			return nil, errAt(file, f.NamePos, "duplicate family name %q (first declared at %d:%d)", f.Name, prev.Line, prev.Column)
		}
		seen[f.Name] = f.NamePos
		cfg.Families = append(cfg.Families, f)
	}
	return cfg, nil
}

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// yamlSyntaxError turns yaml.v3's "yaml: line N: msg" into file:N:1: msg (the parser reports no column).
func yamlSyntaxError(file string, err error) error {
	msg := strings.SplitN(err.Error(), "\n", 2)[0]
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &InputError{Pos: Pos{file, line, 1}, Msg: "not valid YAML: " + m[2]}
	}
	return &InputError{Pos: Pos{file, 1, 1}, Msg: "not valid YAML: " + strings.TrimPrefix(msg, "yaml: ")}
}

// rejectAliases refuses anchors and aliases: they would let one node appear at several places
// (so errors could not name a single place) and are a classic YAML expansion bomb.
func rejectAliases(file string, n *yaml.Node) error {
	if n.Kind == yaml.AliasNode {
		return errAt(file, n, "YAML aliases are not supported in variants.yaml")
	}
	if n.Anchor != "" {
		return errAt(file, n, "YAML anchors are not supported in variants.yaml")
	}
	for _, c := range n.Content {
		if err := rejectAliases(file, c); err != nil {
			return err
		}
	}
	return nil
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a sequence"
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!str":
			return fmt.Sprintf("string %q", n.Value)
		case "!!null":
			return "null"
		default:
			return fmt.Sprintf("%s %s", strings.TrimPrefix(n.Tag, "!!"), n.Value)
		}
	}
	return "an unsupported node"
}

// mapping checks that n is a mapping with unique keys drawn from allowed and returns key -> value node.
func mapping(file string, n *yaml.Node, what string, allowed []string) (map[string]*yaml.Node, error) {
	if n.Kind != yaml.MappingNode {
		return nil, errAt(file, n, "%s: expected a mapping, got %s", what, kindName(n))
	}
	out := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.Tag != "!!str" {
			return nil, errAt(file, k, "%s: keys must be strings, got %s", what, kindName(k))
		}
		if !contains(allowed, k.Value) {
			return nil, errAt(file, k, "%s: unknown key %q (allowed: %s)", what, k.Value, strings.Join(allowed, ", "))
		}
		if _, dup := out[k.Value]; dup {
			return nil, errAt(file, k, "%s: duplicate key %q", what, k.Value)
		}
		out[k.Value] = v
	}
	return out, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func stringValue(file string, n *yaml.Node, what string) (string, error) {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
		return "", errAt(file, n, "%s: expected a string, got %s", what, kindName(n))
	}
	return n.Value, nil
}

func boolValue(file string, n *yaml.Node, what string) (bool, error) {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
		return false, errAt(file, n, "%s: expected true or false, got %s", what, kindName(n))
	}
	var b bool
	if err := n.Decode(&b); err != nil {
		return false, errAt(file, n, "%s: %v", what, err)
	}
	return b, nil
}

// intValue decodes a YAML integer scalar; strings, floats and anything else are errors.
func intValue(file string, n *yaml.Node, what string) (int, error) {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
		return 0, errAt(file, n, "%s: expected an integer, got %s", what, kindName(n))
	}
	var v int64
	if err := n.Decode(&v); err != nil {
		return 0, errAt(file, n, "%s: integer out of range: %s", what, n.Value)
	}
	if v < 0 || v > maxParamValue {
		return 0, errAt(file, n, "%s: %d outside [0, %d]", what, v, maxParamValue)
	}
	return int(v), nil
}

func loadFamily(file string, n *yaml.Node) (*Family, error) {
	label := "family"
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k, v := n.Content[i], n.Content[i+1]; k.Value == "name" && v.Kind == yaml.ScalarNode && variant.IsIdent(v.Value) {
				label = "family " + v.Value
			}
		}
	}
	fields, err := mapping(file, n, label, familyKeys)
	if err != nil {
		return nil, err
	}
	f := &Family{Node: n, Geometry: map[string]*Expr{}, Requires: map[string]*Expr{}}
	nameNode, ok := fields["name"]
	if !ok {
		return nil, errAt(file, n, "family: missing key \"name\"")
	}
	if f.Name, err = stringValue(file, nameNode, "family name"); err != nil {
		return nil, err
	}
	if !variant.IsIdent(f.Name) {
		return nil, errAt(file, nameNode, "family name %q is not an identifier ([A-Za-z_][A-Za-z0-9_]*)", f.Name)
	}
	f.NamePos = nameNode
	what := func(key string) string { return fmt.Sprintf("family %s: %s", f.Name, key) }

	tn, ok := fields["template"]
	if !ok {
		return nil, errAt(file, n, "%s: missing key \"template\"", "family "+f.Name)
	}
	if f.Template, err = stringValue(file, tn, what("template")); err != nil {
		return nil, err
	}
	if !plainTemplateName(f.Template) {
		return nil, errAt(file, tn, "%s: %q must be a plain file name ending in .cu.tmpl (no directories, no ..)", what("template"), f.Template)
	}
	f.TemplatePos = tn

	if dn, ok := fields["doc"]; ok {
		if f.Doc, err = stringValue(file, dn, what("doc")); err != nil {
			return nil, err
		}
		for _, r := range f.Doc {
			if !unicode.IsPrint(r) {
				return nil, errAt(file, dn, "%s: must be one line of printable text", what("doc"))
			}
		}
	}
	if vn, ok := fields["variant_name"]; ok {
		if f.VariantName, err = stringValue(file, vn, what("variant_name")); err != nil {
			return nil, err
		}
		f.NamePattern = vn
	}
	for _, key := range []string{"dynamic_shared_ok", "warp_multiple"} {
		if bn, ok := fields[key]; ok {
			b, err := boolValue(file, bn, what(key))
			if err != nil {
				return nil, err
			}
			if key == "dynamic_shared_ok" {
				f.DynamicOK = b
			} else {
				f.WarpMul = b
			}
		}
	}

	pn, ok := fields["params"]
	if !ok {
		return nil, errAt(file, n, "family %s: missing key \"params\"", f.Name)
	}
	if err := f.loadParams(file, pn); err != nil {
		return nil, err
	}
	if f.VariantName != "" {
		if err := checkNamePattern(file, f); err != nil {
			return nil, err
		}
	}
	env := f.env()

	if cn, ok := fields["constraints"]; ok {
		if cn.Kind != yaml.SequenceNode {
			return nil, errAt(file, cn, "%s: expected a sequence, got %s", what("constraints"), kindName(cn))
		}
		for _, c := range cn.Content {
			cf, err := mapping(file, c, what("constraint"), constraintK)
			if err != nil {
				return nil, err
			}
			en, ok := cf["expr"]
			if !ok {
				return nil, errAt(file, c, "%s: missing key \"expr\"", what("constraint"))
			}
			e, err := compileExpr(file, en, env, what("constraint"), true)
			if err != nil {
				return nil, err
			}
			reason := e.Src
			if rn, ok := cf["reason"]; ok {
				if reason, err = stringValue(file, rn, what("constraint reason")); err != nil {
					return nil, err
				}
			}
			f.Constraints = append(f.Constraints, Constraint{Expr: e, Reason: reason})
		}
	}

	gn, ok := fields["geometry"]
	if !ok {
		return nil, errAt(file, n, "family %s: missing key \"geometry\"", f.Name)
	}
	gf, err := mapping(file, gn, what("geometry"), geometryKeys)
	if err != nil {
		return nil, err
	}
	for _, key := range geometryKeys {
		vn, ok := gf[key]
		if !ok {
			if requiredGeom[key] {
				return nil, errAt(file, gn, "%s: missing key %q", what("geometry"), key)
			}
			continue
		}
		if f.Geometry[key], err = compileExpr(file, vn, env, what("geometry."+key), false); err != nil {
			return nil, err
		}
	}
	if rn, ok := fields["requires"]; ok {
		rf, err := mapping(file, rn, what("requires"), requiresKeys)
		if err != nil {
			return nil, err
		}
		for _, key := range requiresKeys {
			if vn, ok := rf[key]; ok {
				if f.Requires[key], err = compileExpr(file, vn, env, what("requires."+key), false); err != nil {
					return nil, err
				}
			}
		}
	}
	return f, nil
}

// plainTemplateName accepts "name.cu.tmpl" only: no separators, no "..", no hidden files, so a
// template path from YAML can never leave the templates directory.
func plainTemplateName(s string) bool {
	return s != "" && !strings.ContainsAny(s, "/\\\x00") && path.Base(s) == s && !strings.HasPrefix(s, ".") &&
		strings.HasSuffix(s, ".cu.tmpl") && variant.IsIdent(strings.TrimSuffix(s, ".cu.tmpl"))
}

func (f *Family) loadParams(file string, pn *yaml.Node) error {
	if pn.Kind != yaml.MappingNode {
		return errAt(file, pn, "family %s: params: expected a mapping of NAME: [values], got %s", f.Name, kindName(pn))
	}
	if len(pn.Content) == 0 {
		return errAt(file, pn, "family %s: params: declare at least one parameter", f.Name)
	}
	seen := map[string]bool{}
	combos := 1
	for i := 0; i+1 < len(pn.Content); i += 2 {
		k, v := pn.Content[i], pn.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.Tag != "!!str" || !variant.IsIdent(k.Value) {
			return errAt(file, k, "family %s: parameter name %s is not an identifier", f.Name, kindName(k))
		}
		if seen[k.Value] {
			return errAt(file, k, "family %s: duplicate parameter %q", f.Name, k.Value)
		}
		seen[k.Value] = true
		what := fmt.Sprintf("family %s: parameter %s", f.Name, k.Value)
		if v.Kind != yaml.SequenceNode {
			return errAt(file, v, "%s: expected a list of integers, got %s", what, kindName(v))
		}
		if len(v.Content) == 0 || len(v.Content) > maxValuesPerList {
			return errAt(file, v, "%s: expected 1 to %d values, got %d", what, maxValuesPerList, len(v.Content))
		}
		ps := ParamSpec{Name: k.Value, Node: k}
		dup := map[int]bool{}
		for _, e := range v.Content {
			x, err := intValue(file, e, what)
			if err != nil {
				return err
			}
			if dup[x] {
				return errAt(file, e, "%s: duplicate value %d", what, x)
			}
			dup[x] = true
			ps.Values = append(ps.Values, x)
		}
		combos *= len(ps.Values)
		if combos > maxCombinations {
			return errAt(file, v, "family %s: more than %d parameter combinations", f.Name, maxCombinations)
		}
		f.Params = append(f.Params, ps)
	}
	return nil
}

var placeholderRE = regexp.MustCompile(`\{([^{}]*)\}`)

// checkNamePattern validates variant_name once: every {X} names a parameter and the literal text
// is identifier characters, so every expansion is an identifier.
func checkNamePattern(file string, f *Family) error {
	for _, m := range placeholderRE.FindAllStringSubmatch(f.VariantName, -1) {
		if _, ok := f.param(m[1]); !ok {
			return errAt(file, f.NamePattern, "family %s: variant_name: {%s} is not a parameter of the family", f.Name, m[1])
		}
	}
	lit := placeholderRE.ReplaceAllString(f.VariantName, "")
	for _, r := range lit {
		if !(r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return errAt(file, f.NamePattern, "family %s: variant_name %q: only letters, digits, _ and {PARAM} placeholders are allowed", f.Name, f.VariantName)
		}
	}
	return nil
}

func (f *Family) param(name string) (ParamSpec, bool) {
	for _, p := range f.Params {
		if p.Name == name {
			return p, true
		}
	}
	return ParamSpec{}, false
}

// env is the expression environment: every parameter is an int.
func (f *Family) env() map[string]any {
	env := map[string]any{}
	for _, p := range f.Params {
		env[p.Name] = 0
	}
	return env
}
