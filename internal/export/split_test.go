package export

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dave/jennifer/jen"

	"tilegen/internal/variant"
)

// splitCase is one input of the split rule: a rule, an output of tiles tiles of tileFloats
// elements, a K and an SM count.
type splitCase struct {
	r                    variant.SplitRule
	tiles, tileFloats, k int
	sms                  int
}

// splitCases are corner values of every input crossed sparsely, then random draws over wide
// ranges: deep K, one tile, a workspace too small for two slices, K shorter than a step, 0 SMs.
func splitCases() []splitCase {
	var cs []splitCase
	rules := []variant.SplitRule{
		{Max: 2, KStep: 1, MinK: 1, BlocksPerSM: 1, WorkspaceFloats: 1 << 22},
		{Max: 512, KStep: 32, MinK: 128, BlocksPerSM: 8, WorkspaceFloats: 1 << 22},
		{Max: 256, KStep: 16, MinK: 32, BlocksPerSM: 4, WorkspaceFloats: 1 << 22},
		{Max: 256, KStep: 64, MinK: 128, BlocksPerSM: 8, WorkspaceFloats: 1 << 22},
		{Max: 65535, KStep: 1, MinK: 1, BlocksPerSM: 4096, WorkspaceFloats: 1 << 28},
		{Max: 7, KStep: 3, MinK: 5, BlocksPerSM: 3, WorkspaceFloats: 1000},
		{Max: 16, KStep: 8, MinK: 100000, BlocksPerSM: 2, WorkspaceFloats: 4096},
	}
	for _, r := range slices.Clone(rules) {
		r.Balance = true
		rules = append(rules, r)
		r.Balance, r.StreamK = false, true
		rules = append(rules, r)
	}
	for _, r := range rules {
		for _, tiles := range []int{1, 2, 3, 16, 132, 1000, 65535 * 4096} {
			for _, tf := range []int{1, 32, 1024, 16384} {
				for _, k := range []int{1, 2, 31, 32, 33, 1000, 4096, 100000, 1<<31 - 1} {
					for _, sms := range []int{0, 1, 132} {
						cs = append(cs, splitCase{r, tiles, tf, k, sms})
					}
				}
			}
		}
	}
	rng := rand.New(rand.NewPCG(17, 2026))
	pick := func(hi int) int { return 1 + int(rng.Int64N(int64(hi))) }
	for range 20000 {
		r := variant.SplitRule{Max: 1 + pick(1024), KStep: pick(128), MinK: pick(1 << 14), BlocksPerSM: pick(32),
			WorkspaceFloats: pick(1 << 24)}
		switch rng.IntN(3) {
		case 1:
			r.Balance = true
		case 2:
			r.StreamK = true
		}
		cs = append(cs, splitCase{r, pick(1 << 12), pick(1 << 14), pick(1 << 21), rng.IntN(200)})
	}
	return cs
}

func (c splitCase) line() string {
	b := 0
	if c.r.Balance {
		b = 1
	}
	sk := 0
	if c.r.StreamK {
		sk = 1
	}
	return fmt.Sprintf("%d %d %d %d %d %d %d %d %d %d %d", c.tiles, c.tileFloats, c.k, c.sms, c.r.Max, c.r.KStep, c.r.MinK,
		c.r.BlocksPerSM, b, c.r.WorkspaceFloats, sk)
}

// want is what the rule gives for the case: Slices, or a stream-K rule's CTAs.
func (c splitCase) want() int {
	if c.r.StreamK {
		return c.r.CTAs(c.tiles, c.tileFloats, c.k, c.sms)
	}
	return c.r.Slices(c.tiles, c.tileFloats, c.k, c.sms)
}

// runRule feeds the cases, one per line, to the program bin (or the command) and returns its
// answers, one per case.
func runRule(t *testing.T, input string, cmd *exec.Cmd, n int) []int {
	t.Helper()
	cmd.Stdin = strings.NewReader(input)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", cmd.Path, err, stderr.String())
	}
	f := strings.Fields(string(b))
	if len(f) != n {
		t.Fatalf("%s: %d answers for %d cases", cmd.Path, len(f), n)
	}
	out := make([]int, n)
	for i, s := range f {
		if out[i], err = strconv.Atoi(s); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestSplitRuleAgrees checks the split rule's three copies against each other on tens of thousands of
// inputs: variant.SplitRule.Slices (what the worker launches and the planner assumes), the .cuh's
// <name>_split_slices (the text the header holds, compiled with the host C++ compiler) and the Go
// package's splitSlices (the function the export writes, built and run with go); for stream-K rules
// variant.SplitRule.CTAs, <name>_streamk_blocks and streamKBlocks the same way.
func TestSplitRuleAgrees(t *testing.T) {
	cases := splitCases()
	var input strings.Builder
	want := make([]int, len(cases))
	for i, c := range cases {
		input.WriteString(c.line() + "\n")
		r := c.r
		want[i] = c.want()
		if z := want[i]; z < 1 || z > max(r.Max, 1) {
			t.Fatalf("%s: %d slices", c.line(), z)
		}
	}
	dir := t.TempDir()
	check := func(what string, got []int) {
		t.Helper()
		bad := 0
		for i := range cases {
			if got[i] != want[i] {
				if bad++; bad <= 5 {
					t.Errorf("%s: %s gives %d slices, variant.SplitRule.Slices %d", what, cases[i].line(), got[i], want[i])
				}
			}
		}
		if bad > 0 {
			t.Errorf("%s: %d of %d cases differ", what, bad, len(cases))
		}
	}

	t.Run("cuh", func(t *testing.T) {
		cxx := needTool(t, "g++")
		rule, err := cuhSplitRule("tg")
		if err != nil {
			t.Fatal(err)
		}
		src := "#include <stdio.h>\n\n" + rule + "\n\nint main()\n{\n    long long v[11];\n" +
			"    while (scanf(\"%lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld\", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9], &v[10]) == 11)\n" +
			"        printf(\"%lld\\n\", v[10] ? tg_streamk_blocks(v[0], v[1], v[2], v[3], v[4], v[5], v[7], v[9])\n" +
			"                             : (long long)tg_split_slices(v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9]));\n    return 0;\n}\n"
		if err := os.WriteFile(filepath.Join(dir, "rule.cpp"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		bin := filepath.Join(dir, "rule-cpp")
		if b, err := exec.Command(cxx, "-O2", "-Wall", "-Werror", "-o", bin, filepath.Join(dir, "rule.cpp")).CombinedOutput(); err != nil {
			t.Fatalf("g++: %v\n%s", err, b)
		}
		check(".cuh tg_split_slices", runRule(t, input.String(), exec.Command(bin), len(cases)))
	})

	t.Run("go", func(t *testing.T) {
		goBin := needTool(t, "go")
		f := jen.NewFile("main")
		goSplitRule(f)
		goStreamK(f)
		f.Func().Id("main").Params().Block(
			jen.Id("in").Op(":=").Qual("bufio", "NewScanner").Call(jen.Qual("os", "Stdin")),
			jen.For(jen.Id("in").Dot("Scan").Call()).Block(
				jen.Var().Id("v").Index(jen.Lit(11)).Int(),
				jen.For(jen.List(jen.Id("i"), jen.Id("s")).Op(":=").Range().Qual("strings", "Fields").Call(jen.Id("in").Dot("Text").Call())).Block(
					jen.List(jen.Id("v").Index(jen.Id("i")), jen.Id("_")).Op("=").Qual("strconv", "Atoi").Call(jen.Id("s")),
				),
				jen.If(jen.Id("v").Index(jen.Lit(10)).Op("!=").Lit(0)).Block(
					jen.Qual("fmt", "Println").Call(jen.Id("streamKBlocks").Call(jen.Id("v").Index(jen.Lit(0)), jen.Id("v").Index(jen.Lit(1)),
						jen.Id("v").Index(jen.Lit(2)), jen.Id("v").Index(jen.Lit(3)), jen.Id("v").Index(jen.Lit(4)), jen.Id("v").Index(jen.Lit(5)),
						jen.Id("v").Index(jen.Lit(7)), jen.Id("v").Index(jen.Lit(9)))),
					jen.Continue(),
				),
				jen.Qual("fmt", "Println").Call(jen.Id("splitSlices").Call(jen.Id("v").Index(jen.Lit(0)), jen.Id("v").Index(jen.Lit(1)),
					jen.Id("v").Index(jen.Lit(2)), jen.Id("v").Index(jen.Lit(3)), jen.Id("v").Index(jen.Lit(4)), jen.Id("v").Index(jen.Lit(5)),
					jen.Id("v").Index(jen.Lit(6)), jen.Id("v").Index(jen.Lit(7)), jen.Id("v").Index(jen.Lit(8)), jen.Id("v").Index(jen.Lit(9)))),
			),
		)
		mod := filepath.Join(dir, "gomod")
		if err := os.MkdirAll(mod, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := f.Save(filepath.Join(mod, "main.go")); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module rule\n\ngo 1.26\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		bin := filepath.Join(dir, "rule-go")
		build := exec.Command(goBin, "build", "-o", bin, ".")
		build.Dir = mod
		build.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
		if b, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, b)
		}
		check("Go splitSlices", runRule(t, input.String(), exec.Command(bin), len(cases)))
	})
}

// TestSplitRuleProperties: the rule's promises, on the same inputs: between 1 and Max slices, none
// empty (with per = ⌈steps/z⌉, the last slice starts before K), never more partial tiles than the
// workspace holds, no slice (but the last) shorter than MinK unless a single step already is, and
// one slice when only one fits; at most the blocks the rule aims for (four times that under Balance).
func TestSplitRuleProperties(t *testing.T) {
	for _, c := range splitCases() {
		r := c.r
		if r.StreamK {
			g := r.CTAs(c.tiles, c.tileFloats, c.k, c.sms)
			steps := variant.CeilDiv(c.k, r.KStep)
			switch {
			case g < 1 || g > max(r.Max, 1):
				t.Errorf("%s: %d stream-K blocks outside [1, %d]", c.line(), g, r.Max)
			case g > 1 && int64(g) > int64(c.tiles)*int64(steps):
				t.Errorf("%s: %d stream-K blocks for %d K steps in all", c.line(), g, int64(c.tiles)*int64(steps))
			case g > 1 && 2*int64(g)*int64(c.tileFloats) > int64(r.WorkspaceFloats):
				t.Errorf("%s: %d stream-K blocks overflow the workspace", c.line(), g)
			case g > max(c.sms, 1)*r.BlocksPerSM:
				t.Errorf("%s: %d stream-K blocks exceed the blocks the rule aims for", c.line(), g)
			}
			continue
		}
		z := r.Slices(c.tiles, c.tileFloats, c.k, c.sms)
		if z == 1 {
			continue
		}
		steps := variant.CeilDiv(c.k, r.KStep)
		per := variant.CeilDiv(steps, z)
		switch {
		case z < 2 || z > r.Max:
			t.Errorf("%s: %d slices outside [2, %d]", c.line(), z, r.Max)
		case (z-1)*per >= steps || variant.CeilDiv(steps, per) != z:
			t.Errorf("%s: %d slices of %d steps leave one empty", c.line(), z, per)
		case c.tiles*z*c.tileFloats > r.WorkspaceFloats:
			t.Errorf("%s: %d slices overflow the workspace", c.line(), z)
		case c.k/z < r.MinK:
			t.Errorf("%s: %d slices of K=%d are shorter than min_k %d", c.line(), z, c.k, r.MinK)
		case !r.Balance && z > max(c.sms, 1)*r.BlocksPerSM/c.tiles+1:
			t.Errorf("%s: %d slices exceed the blocks the rule aims for", c.line(), z)
		case r.Balance && z > 4*max(c.sms, 1)*r.BlocksPerSM/c.tiles+1:
			t.Errorf("%s: %d slices exceed four times the blocks the balancing rule aims for", c.line(), z)
		}
	}
}
