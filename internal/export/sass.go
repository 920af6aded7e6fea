package export

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"tilegen/internal/protocol"
	"tilegen/internal/variant"
)

// SASS asks an export to carry each kernel's machine code beside its PTX: per kernel a fatbin
// (CUDA's container, compressed) holding the cubin ptxas builds for each of Archs the PTX can target
// and the PTX itself, which the header (cudaLibraryLoadData) and the Go package (cuModuleLoadData)
// load in place of the bare PTX. The driver then runs the cubin on a GPU of its architecture with no
// compile at the first launch (on an H100, 64 kernels: 21.8 s with the driver's cache empty, 16 ms
// with the cubins) and compiles the PTX on any other. The cubin is ptxas's code, not the driver's:
// only a ptxas of the GPU host's CUDA (the driver's own compiler) is known to give the code the tuner
// timed (CUDA 13's ran every class as the driver's compile did; 11.8's ran the 128x256 regtile
// kernels 5 % slower), so export on the GPU host, with its toolkit.
type SASS struct {
	// Archs are the GPU architectures to build for ("sm_90"); a kernel whose PTX targets a later
	// one, or an arch-specific one (sm_90a) that is not among them, keeps its PTX alone. With Auto,
	// the export adds the architecture of the GPU its records were timed on.
	Archs []string
	Auto  bool
	// PTXAS and Fatbinary are the tools' paths; Version is ptxas's version line.
	PTXAS, Fatbinary, Version string
	// Known are the architectures this ptxas builds (from its --help; nil: not known, any).
	Known map[string]bool
}

// sassArch is "sm_NN" or "sm_NNa".
var sassArch = regexp.MustCompile(`^sm_([1-9][0-9]{1,2})(a?)$`)

// ParseSASSArchs reads a comma-separated list of GPU architectures ("sm_90,sm_80"), each once;
// "auto" stands for the timing GPU's (FindSASS, Prepare).
func ParseSASSArchs(s string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, a := range strings.Split(s, ",") {
		a = strings.TrimSpace(a)
		if a != "auto" && !sassArch.MatchString(a) {
			return nil, fmt.Errorf("%s: want auto, sm_NN or sm_NNa (for example sm_90)", safeText(a))
		}
		if !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	return out, nil
}

// FindSASS resolves ptxas and fatbinary for archs (ParseSASSArchs): beside $NVCC's nvcc, else on
// PATH, else in /usr/local/cuda/bin, and reads ptxas's version.
func FindSASS(ctx context.Context, archs []string) (*SASS, error) {
	if len(archs) == 0 {
		return nil, fmt.Errorf("--sass: no architecture")
	}
	var dirs []string
	if nv := os.Getenv("NVCC"); nv != "" {
		if p, err := exec.LookPath(nv); err == nil {
			dirs = append(dirs, filepath.Dir(p))
		}
	}
	if p, err := exec.LookPath("ptxas"); err == nil {
		dirs = append(dirs, filepath.Dir(p))
	}
	dirs = append(dirs, "/usr/local/cuda/bin")
	s := &SASS{}
	for _, a := range archs {
		if a == "auto" {
			s.Auto = true
		} else {
			s.Archs = append(s.Archs, a)
		}
	}
	for _, d := range dirs {
		p, f := filepath.Join(d, "ptxas"), filepath.Join(d, "fatbinary")
		if isExec(p) && isExec(f) {
			s.PTXAS, s.Fatbinary = p, f
			break
		}
	}
	if s.PTXAS == "" {
		return nil, fmt.Errorf("--sass: no ptxas with a fatbinary beside it ($NVCC's directory, PATH, /usr/local/cuda/bin): install the CUDA toolkit")
	}
	out, err := tool(ctx, "", s.PTXAS, "--version")
	if err != nil {
		return nil, err
	}
	if s.Version = variant.ParseCUDARelease(string(out)); s.Version == "" {
		return nil, fmt.Errorf("%s --version: no release in %q", s.PTXAS, strings.TrimSpace(string(out)))
	}
	if help, err := tool(ctx, "", s.PTXAS, "--help"); err == nil {
		s.Known = ptxasArchs(string(help))
	}
	for _, a := range s.Archs {
		if s.Known != nil && !s.Known[a] {
			return nil, fmt.Errorf("--sass %s: ptxas %s cannot build it", a, safeText(s.Version))
		}
	}
	return s, nil
}

// ptxasArchs are the sm_ values ptxas --help allows for --gpu-name (nil when it lists none).
func ptxasArchs(help string) map[string]bool {
	i := strings.Index(help, "--gpu-name")
	if i < 0 {
		return nil
	}
	sec := help[i:]
	if j := strings.Index(sec, "Default value"); j >= 0 {
		sec = sec[:j]
	}
	var known map[string]bool
	for _, m := range regexp.MustCompile(`'(sm_[0-9]+a?)'`).FindAllStringSubmatch(sec, -1) {
		if known == nil {
			known = map[string]bool{}
		}
		known[m[1]] = true
	}
	return known
}

func isExec(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// tool runs a toolkit program with a time limit and returns its output, or an error with its text.
func tool(ctx context.Context, dir, prog string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("%s %s: %v: %s", filepath.Base(prog), strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return out, nil
}

// ptxTarget is the architecture a PTX text targets (its .target directive's first word).
var ptxTarget = regexp.MustCompile(`(?m)^\s*\.target\s+(sm_[0-9]+a?)\b`)

// archsFor are those of s.Archs that a PTX for target can be compiled to: the same or a later
// architecture, and for an arch-specific target (sm_90a) that one only; none that this ptxas
// cannot build (nvcc 11.8's knows no sm_90a: such a kernel keeps its PTX alone).
func (s *SASS) archsFor(target string) []string {
	t := sassArch.FindStringSubmatch(target)
	if t == nil {
		return nil
	}
	tn, _ := strconv.Atoi(t[1])
	var out []string
	for _, a := range s.Archs {
		m := sassArch.FindStringSubmatch(a)
		n, _ := strconv.Atoi(m[1])
		b := ""
		switch {
		case t[2] == "a" && n == tn:
			b = "sm_" + t[1] + "a"
		case t[2] == "" && n >= tn:
			b = a
		}
		if b != "" && (s.Known == nil || s.Known[b]) {
			out = append(out, b)
		}
	}
	return out
}

// image is name's fatbin: a cubin per arch of s the PTX can target, then the PTX; archs are those
// built (none: the PTX alone is returned, nil image).
func (s *SASS) image(ctx context.Context, dir, name, ptx string) (img []byte, archs []string, regs []int, err error) {
	m := ptxTarget.FindStringSubmatch(ptx)
	if m == nil {
		return nil, nil, nil, fmt.Errorf("%s: no .target in its PTX", name)
	}
	archs = s.archsFor(m[1])
	if len(archs) == 0 {
		return nil, nil, nil, nil
	}
	src := filepath.Join(dir, name+".ptx")
	if err := os.WriteFile(src, []byte(ptx), 0o644); err != nil {
		return nil, nil, nil, err
	}
	fb := filepath.Join(dir, name+".fatbin")
	args := []string{"--create=" + fb, "-64", "--compress-all"}
	for _, a := range archs {
		cub := filepath.Join(dir, name+"."+a+".cubin")
		out, err := tool(ctx, dir, s.PTXAS, "-arch="+a, "-O3", "-v", "-o", cub, src)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("%s: %w", name, err)
		}
		res, err := variant.ParsePTXAS(string(out), name)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("%s: %w", name, err)
		}
		regs = append(regs, res.Registers)
		args = append(args, "--image3=kind=elf,sm="+strings.TrimPrefix(a, "sm_")+",file="+cub)
	}
	args = append(args, "--image3=kind=ptx,sm="+strings.TrimPrefix(m[1], "sm_")+",file="+src)
	if _, err := tool(ctx, dir, s.Fatbinary, args...); err != nil {
		return nil, nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	if img, err = os.ReadFile(fb); err != nil {
		return nil, nil, nil, err
	}
	if n, ok := fatbinSize(img); !ok || n != len(img) {
		return nil, nil, nil, fmt.Errorf("%s: fatbinary wrote %d bytes that are not one fatbin", name, len(img))
	}
	return img, archs, regs, nil
}

// fatbinMagic opens a fatbin: magic, version, header size, then the size of what follows the header.
const fatbinMagic = 0xBA55ED50

// fatbinSize is the length a fatbin's header gives it (header and contents).
func fatbinSize(b []byte) (int, bool) {
	if len(b) < 16 || binary.LittleEndian.Uint32(b) != fatbinMagic {
		return 0, false
	}
	n := uint64(binary.LittleEndian.Uint16(b[6:])) + binary.LittleEndian.Uint64(b[8:])
	if n > uint64(len(b)) {
		return 0, false
	}
	return int(n), true
}

// buildImages gives every planned variant its fatbin (in parallel, in a scratch directory): those
// for which no arch applies keep their PTX alone.
func (s *SASS) buildImages(p *Plan) error {
	dir, err := os.MkdirTemp("", "tilegen-sass-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	errs := make([]error, len(p.Variants))
	slots := make(chan struct{}, runtime.GOMAXPROCS(0)) // ptxas runs at most this many at once
	var wg sync.WaitGroup
	for i := range p.Variants {
		c := &p.Variants[i]
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			c.src.image, c.src.archs, c.src.regs, errs[i] = s.image(ctx, dir, c.V.Name, c.src.ptx)
			<-slots
			wg.Done()
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return fmt.Errorf("--sass: %w", err)
		}
	}
	return nil
}

// code is what a kernel's module is loaded from: its fatbin when the export carries SASS for it,
// else its PTX.
func (s source) code() string {
	if s.image != nil {
		return string(s.image)
	}
	return s.ptx
}

// imageNote says in the header what a kernel's literal holds.
func (s source) imageNote(sass *SASS) string {
	if s.image == nil {
		return "its PTX"
	}
	return fmt.Sprintf("a fatbin: %s SASS (ptxas %s) and the PTX", strings.Join(s.archs, ", "), safeText(sass.Version))
}

// resolve is s for an export timed on the devices devs of GPU gpu: with Auto, that GPU's
// architecture added (from its compute capability: "9.0" is sm_90).
func (s *SASS) resolve(gpu string, devs []protocol.Device) (*SASS, error) {
	if !s.Auto {
		return s, nil
	}
	a := timingArch(gpu, devs)
	if a == "" {
		return nil, fmt.Errorf("--sass auto: the records give no usable compute capability for %s; name the architecture (for example --sass sm_90)", safeText(gpu))
	}
	if s.Known != nil && !s.Known[a] {
		return nil, fmt.Errorf("--sass auto: ptxas %s cannot build %s", safeText(s.Version), a)
	}
	r := *s
	r.Auto, r.Archs = false, append([]string(nil), s.Archs...)
	if !slices.Contains(r.Archs, a) {
		r.Archs = append(r.Archs, a)
	}
	return &r, nil
}

// staleWarning says, when s's ptxas is of an older CUDA than the driver of the devices the export's
// kernels were timed on, that its SASS may be slower than what was timed; else "".
func (s *SASS) staleWarning(gpu string, devs []protocol.Device) string {
	m := regexp.MustCompile(`release (\d+)\.(\d+)`).FindStringSubmatch(s.Version)
	if m == nil {
		return ""
	}
	maj, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	for _, d := range devs {
		if d.Name == gpu && d.DriverVersion > 0 && maj*1000+minor*10 < d.DriverVersion {
			return fmt.Sprintf("warning: --sass: ptxas %s is older than the driver the kernels were timed with (CUDA %d.%d): its SASS "+
				"may run slower than what was timed (nvcc 11.8's ran the 128x256 regtile kernels 5 %% slower than CUDA 13's driver "+
				"on an H100); export with the GPU host's toolkit", safeText(s.Version), d.DriverVersion/1000, d.DriverVersion%1000/10)
		}
	}
	return ""
}

// fidelity compares, for the kernels with SASS for arch (the GPU the export's kernels were timed
// on), the cubin's registers with the driver's compile of the same PTX at tuning (tuned: registers
// by variant, from the records): the same count is a sign of the same code (CUDA 13's ptxas matched
// the driver there), another count says the cubin is other code than was timed. It returns the
// count of kernels compared and the lines for the ones that differ.
func fidelity(p *Plan, arch string, tuned map[string]int) (compared int, differ []string) {
	for _, c := range p.Variants {
		i := slices.Index(c.src.archs, arch)
		t := tuned[c.V.Name]
		if i < 0 || t == 0 || c.src.regs[i] == 0 {
			continue
		}
		compared++
		if c.src.regs[i] != t {
			differ = append(differ, fmt.Sprintf("%s: %d registers in the cubin, %d in the driver's compile at tuning", c.V.Name, c.src.regs[i], t))
		}
	}
	return compared, differ
}

// timingArch is the architecture of the GPU the export's kernels were timed on ("" when the records
// do not say).
func timingArch(gpu string, devs []protocol.Device) string {
	for _, d := range devs {
		if d.Name == gpu && d.ComputeCapability != "" {
			if a := "sm_" + strings.Replace(d.ComputeCapability, ".", "", 1); sassArch.MatchString(a) {
				return a
			}
		}
	}
	return ""
}
