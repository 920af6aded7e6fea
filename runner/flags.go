package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// newFlags makes a command's flag set. --help prints the command's summary and flags to stdout;
// parse errors are returned (and reported by exitStatus), never printed here.
func newFlags(name, args string, stdout io.Writer) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		fmt.Fprintf(stdout, "usage: runner %s %s\n\n", name, args)
		if c := lookupCommand(name); c != nil {
			fmt.Fprintf(stdout, "%s\n\n", c.summary)
		}
		fmt.Fprint(stdout, fs.FlagUsages())
	}
	fs.SortFlags = false
	return fs
}

// boundKey is the flag annotation holding a numeric flag's lower bound (see atLeast).
const boundKey = "tilegen/bound"

// atLeast declares the values numeric flags accept: rule is ">=0", ">=1" or ">0" (durations and
// factors). parse refuses a value outside it, and refuses to parse at all when a numeric flag of
// the set declares no rule, so that a new flag cannot forget its range.
func atLeast(fs *pflag.FlagSet, rule string, names ...string) {
	for _, n := range names {
		if err := fs.SetAnnotation(n, boundKey, []string{rule}); err != nil {
			panic(err) // a misspelled flag name is a programming error
		}
	}
}

// numeric reports whether a flag holds a number or a duration.
func numeric(f *pflag.Flag) bool {
	switch f.Value.Type() {
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64",
		"float32", "float64", "duration":
		return true
	}
	return false
}

// parse parses flags and checks the numeric ones against their declared bounds. It returns false
// with a nil error after --help (the help is printed). Every error is a usage error of the command.
func parse(fs *pflag.FlagSet, args []string) (bool, error) {
	var missing []string
	fs.VisitAll(func(f *pflag.Flag) {
		if numeric(f) && len(f.Annotations[boundKey]) == 0 {
			missing = append(missing, "--"+f.Name)
		}
	})
	if len(missing) > 0 {
		return false, fmt.Errorf("internal error: runner %s: numeric flag %s declares no bound", fs.Name(), strings.Join(missing, ", "))
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return false, nil
		}
		return false, usageErr(fs.Name(), "%v", err)
	}
	var bad error
	fs.Visit(func(f *pflag.Flag) {
		if bad == nil {
			bad = checkBound(f)
		}
	})
	if bad != nil {
		return false, usageErr(fs.Name(), "%v", bad)
	}
	return true, nil
}

// checkBound checks a set numeric flag against its rule.
func checkBound(f *pflag.Flag) error {
	rules := f.Annotations[boundKey]
	if len(rules) == 0 {
		return nil
	}
	rule := rules[0]
	s := f.Value.String()
	var v float64
	kind := "a number"
	switch f.Value.Type() {
	case "duration":
		d, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("--%s %s: %w", f.Name, s, err)
		}
		v, kind = float64(d), "a duration"
	case "float32", "float64":
		var err error
		if v, err = strconv.ParseFloat(s, 64); err != nil {
			return fmt.Errorf("--%s %s: %w", f.Name, s, err)
		}
	default:
		var err error
		if v, err = strconv.ParseFloat(s, 64); err != nil {
			return fmt.Errorf("--%s %s: %w", f.Name, s, err)
		}
		kind = "an integer"
	}
	var ok bool
	switch rule {
	case ">0":
		ok = v > 0
	case ">=0":
		ok = v >= 0
	case ">=1":
		ok = v >= 1
	default:
		return fmt.Errorf("internal error: --%s: unknown bound %q", f.Name, rule)
	}
	if !ok {
		return fmt.Errorf("--%s %s: want %s %s %s", f.Name, s, kind, strings.TrimRight(rule, "01"), rule[len(rule)-1:])
	}
	return nil
}
