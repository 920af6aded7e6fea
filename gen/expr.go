package main

import (
	"fmt"
	"math"
	"strings"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/vm"
	"gopkg.in/yaml.v3"
)

type program = *vm.Program

// exprOptions keep expressions pure arithmetic over the parameters: every builtin is off (now(),
// date() and friends would make the output depend on the clock) except a few integer helpers.
func exprOptions(env map[string]any, boolean bool) []expr.Option {
	opts := []expr.Option{expr.Env(env), expr.DisableAllBuiltins(),
		expr.EnableBuiltin("min"), expr.EnableBuiltin("max"), expr.EnableBuiltin("abs")}
	if boolean {
		opts = append(opts, expr.AsBool())
	}
	return opts
}

// compileExpr compiles a YAML scalar into an Expr. A plain YAML integer is a constant; a string is
// an expr-lang expression compiled against env, so an unknown name is an error at the node.
func compileExpr(file string, n *yaml.Node, env map[string]any, what string, boolean bool) (*Expr, error) {
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
	prog, err := compileSafe(e.Src, exprOptions(env, boolean))
	if err != nil {
		return nil, errAt(file, n, "%s: %q: %s", what, e.Src, firstLine(err.Error()))
	}
	if !boolean {
		switch prog.Node().Type().Kind().String() {
		case "int", "int64", "float64", "interface":
		default:
			return nil, errAt(file, n, "%s: %q has type %s, want an integer", what, e.Src, prog.Node().Type())
		}
	}
	e.prog = prog
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
// (expr-lang's "/" always divides in floating point).
func (e *Expr) Int(env map[string]any) (int, error) {
	v, err := e.run(env)
	if err != nil {
		return 0, fmt.Errorf("%q: %s", e.Src, firstLine(err.Error()))
	}
	switch x := v.(type) {
	case int:
		if x < math.MinInt32 || x > math.MaxInt32 {
			return 0, fmt.Errorf("%q = %d is out of range", e.Src, x)
		}
		return x, nil
	case int64:
		if x < math.MinInt32 || x > math.MaxInt32 {
			return 0, fmt.Errorf("%q = %d is out of range", e.Src, x)
		}
		return int(x), nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) || x != math.Trunc(x) {
			return 0, fmt.Errorf("%q = %v is not an integer", e.Src, x)
		}
		if x < math.MinInt32 || x > math.MaxInt32 {
			return 0, fmt.Errorf("%q = %v is out of range", e.Src, x)
		}
		return int(x), nil
	default:
		return 0, fmt.Errorf("%q evaluates to %v (%T), want an integer", e.Src, v, v)
	}
}
