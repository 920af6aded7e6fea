package export

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"tilegen/internal/results"
)

// hostile is text from an input file that tries to break out of a comment or a line: a newline and
// a carriage return, a preprocessor line, "*/", quotes and backslashes, and a trailing backslash
// (which would splice the next line into a C++ line comment).
const hostile = "evil\r\n#error injected */ \"quoted\" back\\slash /* \\"

// editJSON rewrites a JSON file through f (generic JSON).
func editJSON(t *testing.T, path string, f func(map[string]any)) {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(mustRead(t, path), &m); err != nil {
		t.Fatal(err)
	}
	f(m)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestHostileText puts hostile text into every input field that reaches the export: the device
// name, the failure reasons of records and checks, a variant name in the results, a family and a
// parameter name, and the manifest's nvcc, arch and generator. The Go package must still vet and
// build, the header compile, the provenance parse back to the same values, and nowhere in the
// export or the printed summary may the text appear unescaped.
func TestHostileText(t *testing.T) {
	tune, verify, gen := copyFixture(t)
	const fam, param = "micro1d_t32_r4", "micro1d_t64_r8" // variants whose family / parameter name turn hostile
	for _, d := range []string{tune, verify} {
		editJSON(t, filepath.Join(d, "device.json"), func(m map[string]any) { m["arch"] = hostile })
		editRecords(t, filepath.Join(d, "results.jsonl"), func(r *results.Record) bool {
			if r.Device != nil {
				r.Device.Name = hostile
			}
			switch r.Variant {
			case fam:
				r.Family = hostile
			case param:
				r.Params = strings.Replace(r.Params, "T=", hostile+"=", 1)
			}
			if r.Variant == "micro1d_t64_r16" && r.Kind == results.KindVerify && r.Shape.M == 97 {
				r.Status, r.Reason = results.StatusFailed, hostile
				r.Verify[0].Pass, r.Verify[0].Reason = false, hostile
			}
			return true
		})
	}
	// A variant the catalog does not know, fastest at 224x256x192.
	var forged []byte
	editRecords(t, filepath.Join(tune, "results.jsonl"), func(r *results.Record) bool {
		if r.Variant == fam && r.Shape.M == 224 && r.Kind == results.KindTune {
			f := *r
			f.Key, f.Variant = "forged", hostile
			timing := *r.Timing
			timing.MedianMS /= 2
			f.Timing = &timing
			forged, _ = json.Marshal(f)
		}
		return true
	})
	results := filepath.Join(tune, "results.jsonl")
	if err := os.WriteFile(results, append(append(mustRead(t, results), forged...), '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	editManifest(t, gen, func(vs []any) {
		for _, v := range vs {
			m := v.(map[string]any)
			switch m["name"] {
			case fam:
				m["family"] = hostile
			case param:
				for _, p := range m["params"].([]any) {
					if p := p.(map[string]any); p["name"] == "T" {
						p["name"] = hostile
					}
				}
			}
		}
	})
	editJSON(t, filepath.Join(gen, "manifest.json"), func(m map[string]any) {
		m["nvcc"], m["arch"], m["generator"] = hostile, hostile, hostile
	})

	var log bytes.Buffer
	out := filepath.Join(t.TempDir(), "tgsgemm")
	o := Options{Results: []string{tune, verify}, Generated: gen, Out: out, Name: "tg", GoPackage: "example.com/consumer/tgsgemm", Log: &log}
	if err := Run(o); err != nil {
		t.Fatal(err)
	}
	p, _, err := Prepare(o)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range p.Variants {
		names = append(names, c.V.Name)
	}
	if got := strings.Join(names, " "); !strings.Contains(got, fam) || !strings.Contains(got, param) {
		t.Fatalf("exported %s: the test needs %s and %s in the export", got, fam, param)
	}

	// Nowhere raw: not in any file, not in the summary.
	files := tree(t, out)
	files["summary"] = log.String()
	for name, text := range files {
		for _, raw := range []string{hostile, "\n#error", "\r"} {
			if strings.Contains(text, raw) {
				t.Errorf("%s holds %q unescaped", name, raw)
			}
		}
	}
	for _, want := range []string{"excluded " + safeText(hostile) + " (fastest at 224x256x192): not in the generated catalog",
		"excluded micro1d_t64_r16", safeText(hostile)} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, log.String())
		}
	}
	for i, line := range strings.Split(strings.TrimSuffix(log.String(), "\n"), "\n") {
		if i > 0 && !strings.HasPrefix(line, "  ") {
			t.Errorf("summary line %d %q is not one of the summary's (a forged line)", i+1, line)
		}
	}

	// The provenance holds the values themselves.
	var pv Provenance
	if err := json.Unmarshal([]byte(files["tg.json"]), &pv); err != nil {
		t.Fatal(err)
	}
	if pv.GPU != hostile || pv.NVCC != hostile || pv.Arch != hostile || pv.Generator != hostile {
		t.Errorf("provenance gpu %q nvcc %q arch %q generator %q: want the input text", pv.GPU, pv.NVCC, pv.Arch, pv.Generator)
	}
	for _, v := range pv.Variants {
		if v.Name == fam && v.Family != hostile {
			t.Errorf("provenance family %q", v.Family)
		}
	}

	// The Go package builds; the header compiles.
	buildInModule(t, out)
	nvcc := needTool(t, "nvcc")
	dir := t.TempDir()
	src := filepath.Join(dir, "use.cu")
	if err := os.WriteFile(src, []byte("#include \"tg.cuh\"\nint main() { return tg_variant(64, 64, 64, 64, 64, 64, 0, 0, 0) == NULL; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-arch=sm_90", "-Xcompiler", "-Wall,-Werror", "-I", out, "-c", "-o", filepath.Join(dir, "use.o"), src}
	if _, err := exec.LookPath("g++-11"); err == nil {
		args = append(args, "-ccbin", "g++-11")
	}
	if b, err := exec.Command(nvcc, args...).CombinedOutput(); err != nil {
		t.Errorf("nvcc: %v\n%s", err, b)
	}
}

// TestHostileVariantName: a variant name is an identifier in generated code, so a catalog whose
// winner's name is not one is refused (never escaped).
func TestHostileVariantName(t *testing.T) {
	tune, verify, gen := copyFixture(t)
	const old = "micro1d_t32_r4"
	bad := "micro1d_t32_r4\n#error injected"
	for _, d := range []string{tune, verify} {
		editRecords(t, filepath.Join(d, "results.jsonl"), func(r *results.Record) bool {
			if r.Variant == old {
				r.Variant = bad
			}
			return true
		})
	}
	editManifest(t, gen, func(vs []any) {
		for _, v := range vs {
			if m := v.(map[string]any); m["name"] == old {
				m["name"] = bad
			}
		}
	})
	err := Run(Options{Results: []string{tune, verify}, Generated: gen, Out: filepath.Join(t.TempDir(), "x"), Name: "tg"})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%q", bad)) {
		t.Errorf("err = %v, want a refusal naming %q", err, bad)
	}
}
