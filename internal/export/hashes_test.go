package export

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tilegen/internal/results"
)

// editManifest rewrites the generated directory's manifest.json through f (generic JSON).
func editManifest(t *testing.T, gen string, f func(variants []any)) {
	t.Helper()
	path := filepath.Join(gen, "manifest.json")
	var m map[string]any
	if err := json.Unmarshal(mustRead(t, path), &m); err != nil {
		t.Fatal(err)
	}
	f(m["variants"].([]any))
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// regenerate edits a variant's generated source and records the new source hash in the manifest,
// as the generator does after a template change that leaves the PTX as it was.
// regenerate edits a variant's generated source after tuning, and its PTX hash too when ptx is set.
func regenerate(t *testing.T, gen, name string, ptx bool) {
	t.Helper()
	cu := filepath.Join(gen, "cuda", name+".cu")
	b := append(mustRead(t, cu), []byte("// a template edit after tuning\n")...)
	if err := os.WriteFile(cu, b, 0o644); err != nil {
		t.Fatal(err)
	}
	editManifest(t, gen, func(vs []any) {
		for _, v := range vs {
			if m := v.(map[string]any); m["name"] == name {
				m["source_hash"] = sha(b)
				if ptx {
					m["ptx_hash"] = strings.Repeat("f", 64)
				}
			}
		}
	})
}

func excludedFor(p *Plan, name string) string {
	for _, e := range p.Excluded {
		if e.Variant == name {
			return e.Reason
		}
	}
	return ""
}

// TestRecordHashes: records carry the source and PTX hashes of what was measured; a variant
// regenerated since (source or PTX) is refused with the variant and what to rerun, and records
// without hashes are refused unless AllowUnhashed.
func TestRecordHashes(t *testing.T) {
	t.Run("hashed records export", func(t *testing.T) {
		tune, verify, gen := copyFixture(t)
		p, files, err := Prepare(Options{Results: []string{tune, verify}, Generated: gen, Name: "tg"})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Excluded) != 0 || p.Unhashed != 0 {
			t.Errorf("excluded %+v, unhashed %d", p.Excluded, p.Unhashed)
		}
		var pv Provenance
		if err := json.Unmarshal(files["tg.json"], &pv); err != nil {
			t.Fatal(err)
		}
		if pv.UnhashedRecords != 0 || pv.AllowUnhashed {
			t.Errorf("provenance: unhashed %d allow %v", pv.UnhashedRecords, pv.AllowUnhashed)
		}
	})
	t.Run("source edited, PTX identical", func(t *testing.T) {
		tune, verify, gen := copyFixture(t)
		regenerate(t, gen, "micro1d_t32_r4", false)
		p, _, err := Prepare(Options{Results: []string{tune, verify}, Generated: gen, Name: "tg"})
		if err != nil {
			t.Fatal(err)
		}
		if why := excludedFor(p, "micro1d_t32_r4"); why != "" {
			t.Errorf("a variant whose PTX is the measured one was excluded: %s", why)
		}
	})
	t.Run("source regenerated after tuning", func(t *testing.T) {
		tune, verify, gen := copyFixture(t)
		regenerate(t, gen, "micro1d_t32_r4", true)
		var log bytes.Buffer
		out := filepath.Join(t.TempDir(), "x")
		if err := Run(Options{Results: []string{tune, verify}, Generated: gen, Out: out, Name: "tg", Log: &log}); err != nil {
			t.Fatal(err)
		}
		p, _, err := Prepare(Options{Results: []string{tune, verify}, Generated: gen, Name: "tg"})
		if err != nil {
			t.Fatal(err)
		}
		why := excludedFor(p, "micro1d_t32_r4")
		for _, want := range []string{"regenerated since", "runner tune --variants micro1d_t32_r4", "runner verify --variants micro1d_t32_r4"} {
			if !strings.Contains(why, want) {
				t.Errorf("reason %q lacks %q", why, want)
			}
		}
		for _, c := range p.Variants {
			if c.V.Name == "micro1d_t32_r4" {
				t.Error("a variant regenerated after tuning was exported")
			}
		}
		if !strings.Contains(log.String(), "excluded micro1d_t32_r4 (fastest at 127x4097x513, 224x256x192)") {
			t.Errorf("the summary does not name the stale winner:\n%s", log.String())
		}
	})
	t.Run("PTX differs", func(t *testing.T) {
		tune, verify, gen := copyFixture(t)
		editRecords(t, filepath.Join(tune, "results.jsonl"), func(r *results.Record) bool {
			if r.Variant == "micro1d_t32_r8" {
				r.PTXHash = strings.Repeat("0", 64)
			}
			return true
		})
		p, _, err := Prepare(Options{Results: []string{tune, verify}, Generated: gen, Name: "tg"})
		if err != nil {
			t.Fatal(err)
		}
		if why := excludedFor(p, "micro1d_t32_r8"); !strings.Contains(why, "PTX 000000000000") || !strings.Contains(why, "rerun") {
			t.Errorf("micro1d_t32_r8: reason %q", why)
		}
	})
	t.Run("no hashes at all", func(t *testing.T) {
		o := fixtureOptions(filepath.Join(t.TempDir(), "x"))
		o.AllowUnhashed = false
		err := Run(o)
		if err == nil || !strings.Contains(err.Error(), "--allow-unhashed") || !strings.Contains(err.Error(), "rerun runner tune") {
			t.Errorf("err = %v", err)
		}
		if _, serr := os.Stat(o.Out); serr == nil {
			t.Error("a refused export wrote --out")
		}
	})
	t.Run("no hashes, allowed", func(t *testing.T) {
		var log bytes.Buffer
		o := fixtureOptions(filepath.Join(t.TempDir(), "x"))
		o.Log = &log
		if err := Run(o); err != nil {
			t.Fatal(err)
		}
		var pv Provenance
		if err := json.Unmarshal(mustRead(t, filepath.Join(o.Out, "tg.json")), &pv); err != nil {
			t.Fatal(err)
		}
		if pv.UnhashedRecords == 0 || !pv.AllowUnhashed {
			t.Errorf("provenance: unhashed %d allow %v", pv.UnhashedRecords, pv.AllowUnhashed)
		}
		if !strings.Contains(log.String(), "carry no source/PTX hash (--allow-unhashed)") {
			t.Errorf("no warning in the summary:\n%s", log.String())
		}
	})
	t.Run("one variant without hashes", func(t *testing.T) {
		tune, verify, gen := copyFixture(t)
		editRecords(t, filepath.Join(verify, "results.jsonl"), func(r *results.Record) bool {
			if r.Variant == "micro1d_t64_r8" {
				r.SourceHash, r.PTXHash = "", ""
			}
			return true
		})
		o := Options{Results: []string{tune, verify}, Generated: gen, Name: "tg"}
		p, _, err := Prepare(o)
		if err != nil {
			t.Fatal(err)
		}
		if why := excludedFor(p, "micro1d_t64_r8"); !strings.Contains(why, "carries no source/PTX hash") ||
			!strings.Contains(why, "--allow-unhashed") {
			t.Errorf("micro1d_t64_r8: reason %q", why)
		}
		o.AllowUnhashed = true
		if p, _, err = Prepare(o); err != nil {
			t.Fatal(err)
		}
		if why := excludedFor(p, "micro1d_t64_r8"); why != "" {
			t.Errorf("with AllowUnhashed micro1d_t64_r8 is still excluded: %s", why)
		}
	})
}
