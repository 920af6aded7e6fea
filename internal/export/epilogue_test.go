package export

import (
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"tilegen/internal/results"
	"tilegen/internal/variant"
)

// epiRun is the committed H100 run of the fused epilogues (results/epilogue-h100/README.md).
const epiRun = "../../results/epilogue-h100/run3/bench/nvidia-h100-80gb-hbm3"

// epilogueFixture is copyFixture plus the regtile_epi variants (manifest entries, sources and PTX as
// the repository's generator wrote them) and the measured epilogue records of the H100 run, with the
// records of the epilogues in drop left out.
func epilogueFixture(t *testing.T, drop ...variant.Epilogue) (dirs []string, gen string) {
	t.Helper()
	tune, verify, gen := copyFixture(t)
	if n := len(addRepoVariants(t, gen, func(v variant.Variant) bool { return v.Family == "regtile_epi" })); n != 24 {
		t.Fatalf("%d regtile_epi variants in the repository's manifest, want 24", n)
	}
	root := t.TempDir()
	for _, d := range []string{"tune", "verify"} {
		out := filepath.Join(root, d)
		if err := os.CopyFS(out, os.DirFS(filepath.Join(epiRun, d))); err != nil {
			t.Fatal(err)
		}
		editRecords(t, filepath.Join(out, "results.jsonl"), func(r *results.Record) bool {
			for _, e := range drop {
				if r.Shape.Epilogue == e {
					return false
				}
			}
			return true
		})
		dirs = append(dirs, out)
	}
	return append([]string{tune, verify}, dirs...), gen
}

// TestExportEpilogue: with the H100 run's epilogue records, the export holds one variant per
// epilogue (the best verified one), the .cuh and the Go package get the epilogue entry, the plain
// dispatch is unchanged by them, and an epilogue the export holds no kernel for is an error.
func TestExportEpilogue(t *testing.T) {
	dirs, gen := epilogueFixture(t, variant.EpiBiasGeluRow)
	p, files, err := Prepare(Options{Results: dirs, Generated: gen, Name: "tg"})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Epilogues) != 5 {
		t.Fatalf("epilogue entries %+v, want 5 (bias_gelu_row's records dropped)", p.Epilogues)
	}
	for _, e := range p.Epilogues {
		v := p.Variants[e.Kernel].V
		// A ratio pairs a variant with cuBLAS on the same device (the run used two H100s): one or
		// both of the two shapes.
		if v.Epilogue != e.Epilogue || v.Family != "regtile_epi" || len(e.Shapes) < 1 || len(e.Shapes) > 2 || e.Ratio < 0.9 {
			t.Errorf("%s: %s (epilogue %s) ratio %.3f over %v", e.Epilogue, v.Name, v.Epilogue, e.Ratio, e.Shapes)
		}
		// The H100 run's fastest at both shapes is a 128x256 tile.
		if !strings.HasPrefix(v.Name, "regtile_128x256x16_") {
			t.Errorf("%s: %s", e.Epilogue, v.Name)
		}
		if i, err := p.ChooseEpilogue(e.Epilogue, 97, 89, 83, 83, 89, 89); err != nil || i != e.Kernel {
			t.Errorf("%s: ChooseEpilogue %d %v", e.Epilogue, i, err)
		}
	}
	for _, r := range p.Rules {
		for _, c := range r.Candidates {
			if strings.Contains(c, "_bias") {
				t.Errorf("the %s rule chooses among an epilogue kernel: %s", r.Op, c)
			}
		}
	}
	if _, err := p.ChooseEpilogue(variant.EpiBiasGeluRow, 64, 64, 64, 64, 64, 64); err == nil || !strings.Contains(err.Error(), "holds no kernel") {
		t.Errorf("missing epilogue: %v", err)
	}
	if _, err := p.ChooseEpilogue(variant.EpiNone, 64, 64, 64, 64, 64, 64); err == nil {
		t.Error("ChooseEpilogue took none")
	}
	cuh := string(files["tg.cuh"])
	for _, want := range []string{"inline cudaError_t tg_sgemm_epilogue(int epilogue,", "case tg_EPI_BIAS_RELU_COL: return",
		"void* args[] = {&M, &N, &K, &alpha, (void*)&A, &lda, (void*)&B, &ldb, &beta, (void*)&C, &ldc, (void*)&bias};"} {
		if !strings.Contains(cuh, want) {
			t.Errorf("tg.cuh lacks %q", want)
		}
	}
	if strings.Contains(cuh, "case tg_EPI_BIAS_GELU_ROW") {
		t.Error("tg.cuh has a kernel for the dropped epilogue")
	}
	for _, name := range []string{"sgemm.go", "driver.go", "driver_unsupported.go", "dispatch.go"} {
		if _, err := parser.ParseFile(token.NewFileSet(), name, files[name], 0); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if s := string(files["sgemm.go"]); !strings.Contains(s, "func (ks *Kernels) SgemmEpilogue(epi Epilogue,") || !strings.Contains(s, "EpiBiasGeluCol Epilogue = 6") {
		t.Errorf("sgemm.go lacks the epilogue entry")
	}
	if !strings.Contains(string(files["driver.go"]), "func launchBias(") || !strings.Contains(string(files["driver_unsupported.go"]), "func launchBias(") {
		t.Error("driver files lack launchBias")
	}
	// The package compiles (cgo and not) and vets.
	if goTool, err := exec.LookPath("go"); err == nil {
		dir := t.TempDir()
		for name, b := range files {
			if !strings.HasSuffix(name, ".go") && !strings.HasPrefix(name, "ptx/") {
				continue
			}
			if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module tg\n\ngo 1.22\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, cgo := range []string{"1", "0"} {
			cmd := exec.Command(goTool, "vet", ".")
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "CGO_ENABLED="+cgo, "GOFLAGS=-mod=mod", "GOWORK=off")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("go vet (CGO_ENABLED=%s): %v\n%s", cgo, err, out)
			}
		}
	}
	// Without epilogue records the export holds no epilogue kernel, but keeps the entry (so that a
	// program written against one export builds against another), refusing every epilogue.
	base, bfiles, err := Prepare(Options{Results: dirs[:2], Generated: gen, Name: "tg"})
	if err != nil {
		t.Fatal(err)
	}
	cuh, sgemm := string(bfiles["tg.cuh"]), string(bfiles["sgemm.go"])
	if len(base.Epilogues) != 0 || strings.Contains(cuh, "#define tg_HAS_EPILOGUES") ||
		!strings.Contains(sgemm, "epilogueKernels = [7]int{-1, -1, -1, -1, -1, -1, -1}") {
		t.Error("an export without epilogue records holds an epilogue kernel")
	}
	if !strings.Contains(cuh, "inline cudaError_t tg_sgemm_epilogue(") || !strings.Contains(sgemm, "func (ks *Kernels) SgemmEpilogue(") ||
		!strings.Contains(string(bfiles["driver.go"]), "func launchBias(") || !strings.Contains(string(bfiles["driver_unsupported.go"]), "func launchBias(") {
		t.Error("an export without epilogue records lacks the epilogue entry")
	}
	if !regexp.MustCompile(`(?s)inline int tg_epilogue_kernel\(int epilogue\)\s*\{\s*switch \(epilogue\) \{\s*default: return -1;`).MatchString(cuh) {
		t.Error("the header of an export without epilogue records maps some epilogue to a kernel")
	}
}
