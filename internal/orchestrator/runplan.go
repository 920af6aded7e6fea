package orchestrator

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"tilegen/internal/protocol"
	"tilegen/internal/results"
	"tilegen/internal/resultsdir"
	"tilegen/internal/search"
	"tilegen/internal/variant"
)

// RunPlan is run.json in a results directory: the plan a tune or verify run was part of, which
// part it ran, and the settings it measured under. runner merge combines only the shards of one
// plan, and a single run's run.json is what a complete merge of its shards writes.
type RunPlan struct {
	// Command is tune or verify.
	Command string `json:"command"`
	// Shard is the part of the plan the directory holds, "i/n" ("0/1": all of it).
	Shard string `json:"shard"`
	// Plan is the SHA-256 of what decides the whole plan (every shard's items): the command, the
	// selected variants with their source and PTX hashes, the shapes and the strategy.
	Plan string `json:"plan"`
	// Variants, Shapes (none: each variant's edge suite), Strategy, Budget and Seed describe the
	// plan for people.
	Variants int      `json:"variants"`
	Shapes   []string `json:"shapes,omitempty"`
	// Sources names, per shape ("MxNxK"), where it comes from: the comments of the --shapes-file
	// lines that list it. Not part of the plan's hash.
	Sources  map[string]string `json:"sources,omitempty"`
	Strategy string            `json:"strategy"`
	// Budget is the measurements per shape of the random and model strategies: a count, or
	// BudgetFraction of each shape's candidates.
	Budget         int     `json:"budget,omitempty"`
	BudgetFraction float64 `json:"budget_fraction,omitempty"`
	Seed           uint64  `json:"seed"`
	// Settings are what every measurement of the plan was taken under.
	Settings RunSettings `json:"settings"`
	// Missing lists the shards a partial merge (--allow-partial) did not have.
	Missing []string `json:"missing,omitempty"`
}

// RunSettings are a plan's measurement settings.
type RunSettings struct {
	Arch string `json:"arch"`
	NVCC string `json:"nvcc"`
	// Verify's seed is 0: each request's seed derives from the plan's seed.
	Verify            protocol.VerifySettings  `json:"verify"`
	Timing            *protocol.TimingSettings `json:"timing,omitempty"`
	SharedInputsAbove float64                  `json:"shared_inputs_above"`
	// SharedInputsElements is omitted when 0, so plans made before it keep their hashes.
	SharedInputsElements float64 `json:"shared_inputs_elements,omitempty"`
}

// runPlanFile is the name of RunPlan's file in a results directory.
const runPlanFile = "run.json"

// planOf describes the plan of a tune or verify run over the selected variants vs.
func planOf(cfg *Config, command string, vs []variant.Variant) RunPlan {
	st := cfg.Strategy
	if st.Name == "" {
		st.Name = search.Exhaustive
	}
	b := st.budget()
	p := RunPlan{Command: command, Shard: shardString(cfg.Shard), Variants: len(vs),
		Strategy: st.Name, Budget: b.Count, BudgetFraction: b.Fraction, Seed: st.Seed}
	for _, sh := range cfg.Shapes {
		p.Shapes = append(p.Shapes, results.ShapeString(sh))
		if src := cfg.Sources[sh]; src != "" {
			if p.Sources == nil {
				p.Sources = map[string]string{}
			}
			p.Sources[results.ShapeString(sh)] = src
		}
	}
	vset := cfg.Verify
	vset.Seed = 0
	p.Settings = RunSettings{Arch: cfg.Catalog.Arch(), NVCC: cfg.Catalog.NVCC(), Verify: vset,
		SharedInputsAbove: cfg.SharedInputsAbove, SharedInputsElements: cfg.SharedInputsElements}
	if command == results.KindTune {
		t := cfg.Timing
		p.Settings.Timing = &t
	}
	h := sha256.New()
	budget := strconv.Itoa(b.Count)
	if b.Fraction > 0 {
		budget = b.String()
	}
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%d\x00%s\n", command, st.Name, budget, st.Seed, strings.Join(p.Shapes, ","))
	for i := range vs {
		fmt.Fprintf(h, "%s\x00%s\x00%s\n", vs[i].Name, vs[i].SourceHash, vs[i].PTXHash)
	}
	p.Plan = hex.EncodeToString(h.Sum(nil))
	return p
}

func shardString(sh Shard) string {
	if sh.N < 1 {
		sh = Shard{0, 1}
	}
	return fmt.Sprintf("%d/%d", sh.I, sh.N)
}

// describe renders the plan in one line, for merge's messages.
func (p RunPlan) describe() string {
	shapes := "edge suites"
	if len(p.Shapes) > 0 {
		shapes = strings.Join(p.Shapes, ",")
	}
	s := fmt.Sprintf("%s of %d variants on %s, %s, seed %d", p.Command, p.Variants, shapes, p.Strategy, p.Seed)
	if p.Budget > 0 {
		s += fmt.Sprintf(", budget %d", p.Budget)
	}
	if p.BudgetFraction > 0 {
		s += ", budget " + search.Budget{Fraction: p.BudgetFraction}.String()
	}
	return s + ", plan " + p.Plan[:min(12, len(p.Plan))]
}

func writeRunPlan(dir string, p RunPlan) error {
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", runPlanFile, err)
	}
	return resultsdir.WriteAtomic(outPath(dir, runPlanFile), append(b, '\n'))
}

// ReadRunPlan reads dir/run.json.
func ReadRunPlan(dir string) (RunPlan, error) {
	path := filepath.Join(dir, runPlanFile)
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return RunPlan{}, fmt.Errorf("%s: no %s: not the results of a tune or verify run (or written before runs "+
			"recorded their plan: run it again)", dir, runPlanFile)
	}
	if err != nil {
		return RunPlan{}, err
	}
	var p RunPlan
	if err := json.Unmarshal(b, &p); err != nil {
		return RunPlan{}, fmt.Errorf("%s: %w", path, err)
	}
	if p.Plan == "" || (p.Command != results.KindTune && p.Command != results.KindVerify) {
		return RunPlan{}, fmt.Errorf("%s: not a run plan (no plan hash, or command %q is neither tune nor verify)", path, p.Command)
	}
	return p, nil
}

// diffJSON lists the leaves in which a and b's JSON differ: "timing.reps 20 vs 30".
func diffJSON(a, b any) []string {
	fa, fb := flatJSON(a), flatJSON(b)
	keys := map[string]bool{}
	for k := range fa {
		keys[k] = true
	}
	for k := range fb {
		keys[k] = true
	}
	var out []string
	for k := range keys {
		if fa[k] != fb[k] {
			out = append(out, fmt.Sprintf("%s %s vs %s", k, orNone(fa[k]), orNone(fb[k])))
		}
	}
	sort.Strings(out)
	return out
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func flatJSON(v any) map[string]string {
	out := map[string]string{}
	b, err := json.Marshal(v)
	if err != nil {
		return out
	}
	var x any
	if json.Unmarshal(b, &x) != nil {
		return out
	}
	var walk func(prefix string, x any)
	walk = func(prefix string, x any) {
		if m, ok := x.(map[string]any); ok {
			for k, v := range m {
				if prefix != "" {
					k = prefix + "." + k
				}
				walk(k, v)
			}
			return
		}
		j, _ := json.Marshal(x)
		out[prefix] = string(j)
	}
	walk("", x)
	return out
}

// deviceModels names the kinds of GPU a run used (model, compute capability, driver, cuBLAS), sorted:
// shards of one plan may run on different GPUs of one kind, not on different kinds.
func deviceModels(info results.RunInfo) string {
	seen := map[string]bool{}
	var out []string
	for _, d := range info.Devices {
		s := fmt.Sprintf("%s (cc %s, driver %d, cuBLAS %d)", d.Name, d.ComputeCapability, d.DriverVersion, d.CublasVersion)
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	sort.Strings(out)
	if len(out) == 0 {
		return "no device"
	}
	return strings.Join(out, ", ")
}
