package export

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"tilegen/internal/protocol"
	"tilegen/internal/variant"
)

func TestParseSASSArchs(t *testing.T) {
	got, err := ParseSASSArchs("sm_90, sm_80,sm_90,sm_90a,auto")
	if err != nil || !slices.Equal(got, []string{"sm_90", "sm_80", "sm_90a", "auto"}) {
		t.Errorf("ParseSASSArchs: %v, %v", got, err)
	}
	for _, bad := range []string{"", "sm_9", "compute_90", "sm_90b", "sm_90,", "sm_90\x00", "sm_1000"} {
		if _, err := ParseSASSArchs(bad); err == nil {
			t.Errorf("ParseSASSArchs(%q): no error", bad)
		} else if strings.ContainsAny(err.Error(), "\n") {
			t.Errorf("ParseSASSArchs(%q): %q spans lines", bad, err)
		}
	}
}

// TestSASSArchsFor: a PTX is built for the listed architectures at or above its target, and an
// arch-specific PTX (sm_90a) for its own architecture only.
func TestSASSArchsFor(t *testing.T) {
	s := &SASS{Archs: []string{"sm_80", "sm_90"}}
	for target, want := range map[string][]string{
		"sm_80": {"sm_80", "sm_90"}, "sm_86": {"sm_90"}, "sm_90": {"sm_90"}, "sm_90a": {"sm_90a"}, "sm_100": nil, "sm_100a": nil, "bogus": nil,
	} {
		if got := s.archsFor(target); !slices.Equal(got, want) {
			t.Errorf("archsFor(%s) = %v, want %v", target, got, want)
		}
	}
	// A ptxas that knows no sm_90a (nvcc 11.8's): such a kernel gets no SASS.
	s.Known = ptxasArchs(`--gpu-name <gpu name>   (-arch)
        Allowed values for this option:  'compute_80','compute_90','lto_90','sm_80',
        'sm_86','sm_90'.
        Default value:  'sm_52'.
--help`)
	if !s.Known["sm_90"] || s.Known["sm_90a"] || s.Known["compute_90"] || len(s.Known) != 3 {
		t.Errorf("ptxasArchs: %v", s.Known)
	}
	if got := s.archsFor("sm_90a"); got != nil {
		t.Errorf("archsFor(sm_90a) with a ptxas without it = %v", got)
	}
	if got := s.archsFor("sm_80"); !slices.Equal(got, []string{"sm_80", "sm_90"}) {
		t.Errorf("archsFor(sm_80) = %v", got)
	}
	if ptxasArchs("no such section") != nil {
		t.Error("ptxasArchs of a help without --gpu-name")
	}
}

func TestFatbinSize(t *testing.T) {
	b := make([]byte, 16+40)
	binary.LittleEndian.PutUint32(b, fatbinMagic)
	binary.LittleEndian.PutUint16(b[4:], 1)
	binary.LittleEndian.PutUint16(b[6:], 16)
	binary.LittleEndian.PutUint64(b[8:], 40)
	if n, ok := fatbinSize(b); !ok || n != 56 {
		t.Errorf("fatbinSize = %d, %v; want 56", n, ok)
	}
	if _, ok := fatbinSize(b[:40]); ok {
		t.Error("a truncated fatbin has a size")
	}
	if _, ok := fatbinSize([]byte(".version 8.0\n.target sm_90\n")); ok {
		t.Error("PTX has a fatbin size")
	}
}

// sassTools is the toolkit's ptxas and fatbinary for archs, or the test is skipped.
func sassTools(t *testing.T, archs ...string) *SASS {
	t.Helper()
	s, err := FindSASS(context.Background(), archs)
	if err != nil {
		t.Skip(err)
	}
	return s
}

// exportRegtileSASS is exportRegtile with each kernel's sm_90 SASS (the host's ptxas).
func exportRegtileSASS(t *testing.T) (string, *Plan) {
	t.Helper()
	o := regtileOptions(filepath.Join(t.TempDir(), "tgsgemm"))
	o.SASS = sassTools(t, "sm_90")
	return runPlan(t, o)
}

// TestSASSExport: with SASS, every kernel of the export gets a fatbin (the cubin ptxas built and its
// PTX), written beside the PTX into the Go package, which embeds and loads it, hashed in the
// provenance, and built the same way every time; the header's literal is that fatbin
// (TestHeaderLaunches loads it byte for byte through its shim).
func TestSASSExport(t *testing.T) {
	out, p := exportRegtileSASS(t)
	var pv Provenance
	b, err := os.ReadFile(filepath.Join(out, "tg.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &pv); err != nil {
		t.Fatal(err)
	}
	if pv.SASSPTXAS == "" {
		t.Error("provenance: no sass_ptxas")
	}
	for i, c := range p.Variants {
		img, err := os.ReadFile(filepath.Join(out, "ptx", c.V.Name+".fatbin"))
		if err != nil {
			t.Fatal(err)
		}
		if n, ok := fatbinSize(img); !ok || n != len(img) {
			t.Errorf("%s: not one fatbin", c.V.Name)
		}
		if !bytes.Equal(img, c.src.image) || !slices.Equal(c.src.archs, []string{"sm_90"}) {
			t.Errorf("%s: fatbin file differs from the plan's, or archs %v", c.V.Name, c.src.archs)
		}
		if ptx, err := os.ReadFile(filepath.Join(out, "ptx", c.V.Name+".ptx")); err != nil || string(ptx) != c.src.ptx {
			t.Errorf("%s: the PTX file is not the kernel's PTX (%v)", c.V.Name, err)
		}
		if d := pv.Variants[i]; d.Name != c.V.Name || d.FatbinSHA256 != sha(img) || !slices.Equal(d.SASSArchs, []string{"sm_90"}) ||
			len(d.SASSRegisters) != 1 || d.SASSRegisters[0] < 8 || d.SASSRegisters[0] > 255 {
			t.Errorf("provenance of %s: fatbin %s archs %v registers %v", d.Name, d.FatbinSHA256, d.SASSArchs, d.SASSRegisters)
		}
	}
	_, q := exportRegtileSASS(t)
	for i := range p.Variants {
		if !bytes.Equal(p.Variants[i].src.image, q.Variants[i].src.image) {
			t.Errorf("%s: a second export built another fatbin", p.Variants[i].V.Name)
		}
	}
	src, err := os.ReadFile(filepath.Join(out, "sgemm.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), "//go:embed ptx/*\n") || !strings.Contains(string(src), `".fatbin"`) {
		t.Error("sgemm.go neither embeds nor loads the fatbins")
	}
	buildInModule(t, out)
	// Exported again over it without SASS (--force), no fatbin is left behind.
	o := regtileOptions(out)
	o.Force = true
	if err := Run(o); err != nil {
		t.Fatal(err)
	}
	if left, _ := filepath.Glob(filepath.Join(out, "ptx", "*.fatbin")); len(left) != 0 {
		t.Errorf("a re-export without SASS left %d fatbins", len(left))
	}
}

// TestSASSAuto: auto adds the architecture of the GPU the records were timed on, from its compute
// capability, and is an error when the records do not give it; a ptxas older than that GPU's driver
// is warned about.
func TestSASSAuto(t *testing.T) {
	devs := []protocol.Device{{Name: "other", ComputeCapability: "8.0"}, {Name: "NVIDIA H100", ComputeCapability: "9.0", DriverVersion: 13000}}
	s := &SASS{Archs: []string{"sm_80"}, Auto: true, Version: "release 11.8, V11.8.89"}
	r, err := s.resolve("NVIDIA H100", devs)
	if err != nil || r.Auto || !slices.Equal(r.Archs, []string{"sm_80", "sm_90"}) || !slices.Equal(s.Archs, []string{"sm_80"}) {
		t.Errorf("resolve: %+v, %v (s now %+v)", r, err, s)
	}
	if _, err := s.resolve("NVIDIA A100", devs); err == nil || !strings.Contains(err.Error(), "--sass sm_90") {
		t.Errorf("resolve without a compute capability: %v", err)
	}
	if _, err := s.resolve("x", []protocol.Device{{Name: "x", ComputeCapability: "9.0; rm"}}); err == nil {
		t.Error("resolve took a hostile compute capability")
	}
	if w := s.staleWarning("NVIDIA H100", devs); !strings.Contains(w, "older than the driver") || !strings.Contains(w, "CUDA 13.0") {
		t.Errorf("staleWarning: %q", w)
	}
	s.Version = "release 13.0, V13.0.88"
	if w := s.staleWarning("NVIDIA H100", devs); w != "" {
		t.Errorf("staleWarning for the driver's own release: %q", w)
	}
}

// TestFidelity compares the cubins' registers with the driver's at tuning for the timing GPU's
// architecture only, and lists the kernels that differ.
func TestFidelity(t *testing.T) {
	p := &Plan{Variants: []Chosen{
		{V: variant.Variant{Name: "same"}, src: source{archs: []string{"sm_80", "sm_90"}, regs: []int{90, 100}}},
		{V: variant.Variant{Name: "other"}, src: source{archs: []string{"sm_90"}, regs: []int{120}}},
		{V: variant.Variant{Name: "untimed"}, src: source{archs: []string{"sm_90"}, regs: []int{64}}},
		{V: variant.Variant{Name: "ptxonly"}},
	}}
	tuned := map[string]int{"same": 100, "other": 128, "ptxonly": 32}
	n, differ := fidelity(p, "sm_90", tuned)
	if n != 2 || len(differ) != 1 || !strings.HasPrefix(differ[0], "other: 120 registers in the cubin, 128") {
		t.Errorf("fidelity = %d, %q", n, differ)
	}
	if n, _ := fidelity(p, "sm_80", tuned); n != 1 {
		t.Errorf("fidelity on sm_80 compared %d", n)
	}
	if a := timingArch("g", []protocol.Device{{Name: "h", ComputeCapability: "8.0"}, {Name: "g", ComputeCapability: "9.0"}}); a != "sm_90" {
		t.Errorf("timingArch = %q", a)
	}
}
