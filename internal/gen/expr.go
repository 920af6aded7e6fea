package gen

import (
	"fmt"
	"math"
	"strings"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/vm"
	"github.com/expr-lang/expr/vm/runtime"
	"gopkg.in/yaml.v3"
)

type program = *vm.Program

// Expr is an integer or boolean expression over the family's parameters, compiled once.
//
// Expressions are loop-free on purpose: integers, booleans, parameters, arithmetic, comparisons,
// && || !, the ternary ?:, `in [list]`, and min, max, abs. expr-lang's predicates (all, map,
// count, ...), ranges (1..n), let, #, member access, calls and strings are rejected when the
// file is loaded, so one evaluation costs at most a step per character of the expression (no
// operation budget is needed: expr-lang v1.17.8 has only a memory budget, and
// `let x = 1..999999; all(x, {all(x, {# > 0})})` runs for days within it). Integer + - * are
// checked: a result outside the 64-bit range is an error naming the operation, never a wrapped
// value.
type Expr struct {
	Src   string
	Const *int // set when the YAML value was a plain integer
	Node  *yaml.Node
	prog  program
}

// exprBuiltins are the only functions an expression may call.
var exprBuiltins = []string{"min", "max", "abs"}

// exprOperators are the binary operators an expression may use; `..` (ranges), string operators
// (contains, matches, ...), `??` and the pipe are not among them.
var exprOperators = map[string]bool{
	"+": true, "-": true, "*": true, "/": true, "%": true, "**": true, "^": true,
	"==": true, "!=": true, "<": true, ">": true, "<=": true, ">=": true,
	"&&": true, "||": true, "and": true, "or": true, "in": true,
}

// exprOptions keep expressions pure arithmetic over the parameters: every builtin is off (now(),
// date() and friends would make the output depend on the clock) except a few integer helpers.
func exprOptions(env map[string]any, boolean bool) []expr.Option {
	opts := []expr.Option{expr.Env(env), expr.DisableAllBuiltins(), expr.MaxNodes(maxExprLen)}
	for _, b := range exprBuiltins {
		opts = append(opts, expr.EnableBuiltin(b))
	}
	if boolean {
		opts = append(opts, expr.AsBool())
	}
	return opts
}

// checkedOps replace integer + - * through operator overloading. The function names cannot be
// written in an expression (they are not identifiers), so they never clash with a parameter.
var checkedOps = map[string]string{"+": "checked +", "-": "checked -", "*": "checked *"}

// checkedOptions overload + - * with overflow-checked versions: int op int keeps its static type;
// operands of unknown static type (a ternary mixing int and float) are checked at run time, and
// anything that is not two ints goes to expr-lang's own arithmetic.
func checkedOptions() []expr.Option {
	var opts []expr.Option
	for op, name := range checkedOps {
		opts = append(opts,
			expr.Function(name, func(args ...any) (any, error) {
				a, aok := args[0].(int)
				b, bok := args[1].(int)
				if aok && bok {
					return checkedInt(op, a, b)
				}
				switch op {
				case "+":
					return runtime.Add(args[0], args[1]), nil
				case "-":
					return runtime.Subtract(args[0], args[1]), nil
				default:
					return runtime.Multiply(args[0], args[1]), nil
				}
			}, new(func(int, int) int), new(func(any, any) any)),
			expr.Operator(op, name))
	}
	return opts
}

// checkedInt is a op b for op in + - *, or an error when the exact result does not fit an int.
// math.MinInt counts as overflow too, so that unary minus and abs can never wrap either.
func checkedInt(op string, a, b int) (int, error) {
	var c int
	ok := true
	switch op {
	case "+":
		c = a + b
		ok = (b >= 0) == (c >= a)
	case "-":
		c = a - b
		ok = (b >= 0) == (c <= a)
	case "*":
		c = a * b
		ok = a == 0 || (c/a == b && !(a == -1 && b == math.MinInt))
	default:
		return 0, fmt.Errorf("checkedInt: unknown operator %q", op)
	}
	if !ok || c == math.MinInt {
		return 0, fmt.Errorf("integer overflow: %d %s %d does not fit in 64 bits", a, op, b)
	}
	return c, nil
}

// exprShape records what an expression uses that is not allowed (see Expr).
type exprShape struct {
	env      map[string]any
	params   []string
	problems []exprProblem
}

type exprProblem struct {
	loc file.Location
	msg string
}

func (s *exprShape) Visit(node *ast.Node) {
	bad := func(what string) {
		s.problems = append(s.problems, exprProblem{(*node).Location(),
			what + " is not allowed in an expression (only numbers, parameters, arithmetic, comparisons, && || !, ?:, in [list], min, max, abs)"})
	}
	switch n := (*node).(type) {
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.ArrayNode, *ast.ConditionalNode:
	case *ast.IdentifierNode:
		if _, ok := s.env[n.Value]; !ok {
			s.problems = append(s.problems, exprProblem{n.Location(),
				fmt.Sprintf("unknown name %s%s", n.Value, didYouMean(n.Value, s.params))})
		}
	case *ast.UnaryNode:
		if n.Operator != "-" && n.Operator != "+" && n.Operator != "!" && n.Operator != "not" {
			bad("the operator " + n.Operator)
		}
	case *ast.BinaryNode:
		if n.Operator == ".." {
			bad("a range (..)")
		} else if !exprOperators[n.Operator] {
			bad("the operator " + n.Operator)
		}
	case *ast.BuiltinNode:
		if !contains(exprBuiltins, n.Name) {
			bad(n.Name + "()")
		}
	case *ast.CallNode:
		bad("a function call")
	case *ast.PredicateNode, *ast.PointerNode:
		bad("a predicate")
	case *ast.VariableDeclaratorNode:
		bad("let")
	case *ast.SequenceNode:
		bad("a sequence (;)")
	case *ast.MemberNode, *ast.ChainNode, *ast.SliceNode:
		bad("member access")
	case *ast.StringNode, *ast.BytesNode:
		bad("a string")
	default:
		bad(fmt.Sprintf("%T", n))
	}
}

// first is the leftmost problem; at one place the outermost node (visited last) wins.
func (s *exprShape) first() *exprProblem {
	var best *exprProblem
	for i := range s.problems {
		p := &s.problems[i]
		if best == nil || p.loc.From <= best.loc.From {
			best = p
		}
	}
	return best
}

// exprPos turns a rune offset in src into the 1-based line:column expr-lang's own messages use.
func exprPos(src string, from int) (line, col int) {
	line, col = 1, 1
	i := 0
	for _, r := range src {
		if i == from {
			break
		}
		i++
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col
}

// compileExpr compiles a YAML scalar into an Expr. A plain YAML integer is a constant; a string is
// an expr-lang expression compiled against env, so an unknown name is an error at the node.
func compileExpr(file string, n *yaml.Node, env map[string]any, what string, boolean bool) (*Expr, *InputError) {
	if n.Kind != yaml.ScalarNode {
		return nil, errAt(file, n, "%s: expected an expression, got %s", what, kindName(n))
	}
	e := &Expr{Src: n.Value, Node: n}
	switch n.Tag {
	case "!!int":
		if boolean {
			return nil, errAt(file, n, "%s: expected a boolean expression, got integer %s", what, n.Value)
		}
		var v int64
		if err := n.Decode(&v); err != nil || v < math.MinInt32 || v > math.MaxInt32 {
			return nil, errAt(file, n, "%s: integer %s out of range", what, n.Value)
		}
		c := int(v)
		e.Const = &c
		return e, nil
	case "!!str":
	default:
		want := "an integer expression"
		if boolean {
			want = "a boolean expression"
		}
		return nil, errAt(file, n, "%s: expected %s (an integer or a quoted expression), got %s", what, want, kindName(n))
	}
	if strings.TrimSpace(e.Src) == "" {
		return nil, errAt(file, n, "%s: empty expression", what)
	}
	if len(e.Src) > maxExprLen {
		return nil, errAt(file, n, "%s: expression longer than %d characters", what, maxExprLen)
	}
	names := make([]string, 0, len(env))
	for k := range env {
		names = append(names, k)
	}
	shape := &exprShape{env: env, params: names}
	// The first compile checks shape and static types; the second, with + - * overloaded,
	// is the one that runs (overloads with `any` operands would hide type errors).
	typed, err := compileSafe(e.Src, append(exprOptions(env, boolean), expr.Patch(shape)))
	if p := shape.first(); p != nil {
		line, col := exprPos(e.Src, p.loc.From)
		return nil, errAt(file, n, "%s: %q: %s (%d:%d)", what, e.Src, p.msg, line, col)
	}
	if err != nil {
		return nil, errAt(file, n, "%s: %q: %s", what, e.Src, firstLine(err.Error()))
	}
	if !boolean {
		switch typed.Node().Type().Kind().String() {
		case "int", "int64", "float64", "interface":
		default:
			return nil, errAt(file, n, "%s: %q has type %s, want an integer", what, e.Src, typed.Node().Type())
		}
	}
	if e.prog, err = compileSafe(e.Src, append(exprOptions(env, boolean), checkedOptions()...)); err != nil {
		return nil, errAt(file, n, "%s: %q: %s", what, e.Src, firstLine(err.Error()))
	}
	return e, nil
}

// compileSafe turns a panic inside the expression compiler into an error: input must never crash
// the generator.
func compileSafe(src string, opts []expr.Option) (p *vm.Program, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("cannot compile: %v", r)
		}
	}()
	return expr.Compile(src, opts...)
}

func firstLine(s string) string { return strings.SplitN(s, "\n", 2)[0] }

// run evaluates the expression for one parameter combination.
func (e *Expr) run(env map[string]any) (out any, err error) {
	if e.Const != nil {
		return *e.Const, nil
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	return expr.Run(e.prog, env)
}

// Bool evaluates a constraint.
func (e *Expr) Bool(env map[string]any) (bool, error) {
	v, err := e.run(env)
	if err != nil {
		return false, fmt.Errorf("%q: %s", e.Src, firstLine(err.Error()))
	}
	b, ok := v.(bool)
	if !ok {
		return false, fmt.Errorf("%q evaluates to %v (%T), want a boolean", e.Src, v, v)
	}
	return b, nil
}

// Int evaluates an integer expression; a float result is accepted only when it is integral
// (expr-lang's "/" always divides in floating point). Results must fit in 32 bits.
func (e *Expr) Int(env map[string]any) (int, error) {
	v, err := e.run(env)
	if err != nil {
		return 0, fmt.Errorf("%q: %s", e.Src, firstLine(err.Error()))
	}
	var f float64
	switch x := v.(type) {
	case int:
		if x < math.MinInt32 || x > math.MaxInt32 {
			return 0, fmt.Errorf("%q = %d does not fit in 32 bits", e.Src, x)
		}
		return x, nil
	case int64:
		if x < math.MinInt32 || x > math.MaxInt32 {
			return 0, fmt.Errorf("%q = %d does not fit in 32 bits", e.Src, x)
		}
		return int(x), nil
	case float64:
		f = x
	default:
		return 0, fmt.Errorf("%q evaluates to %v (%T), want an integer", e.Src, v, v)
	}
	if math.IsNaN(f) || math.IsInf(f, 0) || f != math.Trunc(f) {
		return 0, fmt.Errorf("%q = %v is not an integer", e.Src, f)
	}
	if f < math.MinInt32 || f > math.MaxInt32 {
		return 0, fmt.Errorf("%q = %v does not fit in 32 bits", e.Src, f)
	}
	return int(f), nil
}
