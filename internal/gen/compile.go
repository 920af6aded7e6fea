package gen

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"tilegen/internal/variant"
)

// Toolchain is the nvcc (and the ptxas beside it) the generator compiles with.
type Toolchain struct {
	NVCC    string
	PTXAS   string
	CCBin   string // host compiler passed as -ccbin; "" lets nvcc choose
	Version string // "release 11.8, V11.8.89"
	Arch    string
}

// errNoNVCC is reported (as one line) when no nvcc can be found.
var errNoNVCC = errors.New("nvcc not found (tried --nvcc, $NVCC, PATH, /usr/local/cuda/bin/nvcc): " +
	"install the CUDA toolkit with scripts/install-cuda.sh, or pass --no-compile to write sources only")

// FindToolchain resolves nvcc (flag, $NVCC, PATH, /usr/local/cuda/bin/nvcc), ptxas beside it, the host
// compiler (flag, $NVCC_CCBIN, g++-11 on PATH: nvcc 11.8 rejects newer g++) and nvcc's version.
func FindToolchain(ctx context.Context, nvccFlag, ccbinFlag, arch string) (*Toolchain, error) {
	tc := &Toolchain{Arch: arch}
	var err error
	if tc.NVCC, err = findNVCC(nvccFlag); err != nil {
		return nil, err
	}
	tc.PTXAS = filepath.Join(filepath.Dir(tc.NVCC), "ptxas")
	if _, err := exec.LookPath(tc.PTXAS); err != nil {
		if tc.PTXAS, err = exec.LookPath("ptxas"); err != nil {
			return nil, fmt.Errorf("ptxas not found beside %s nor on PATH", tc.NVCC)
		}
	}
	switch {
	case ccbinFlag != "":
		tc.CCBin = ccbinFlag
	case os.Getenv("NVCC_CCBIN") != "":
		tc.CCBin = os.Getenv("NVCC_CCBIN")
	default:
		if p, err := exec.LookPath("g++-11"); err == nil {
			tc.CCBin = p
		}
	}
	if tc.Version, err = nvccVersion(ctx, tc.NVCC); err != nil {
		return nil, err
	}
	return tc, nil
}

// findNVCC resolves nvcc: the flag, else $NVCC, else PATH, else /usr/local/cuda/bin/nvcc.
func findNVCC(nvccFlag string) (string, error) {
	switch {
	case nvccFlag != "":
		p, err := exec.LookPath(nvccFlag)
		if err != nil {
			return "", fmt.Errorf("--nvcc %s: %w", nvccFlag, err)
		}
		return p, nil
	case os.Getenv("NVCC") != "":
		p, err := exec.LookPath(os.Getenv("NVCC"))
		if err != nil {
			return "", fmt.Errorf("$NVCC=%s: %w", os.Getenv("NVCC"), err)
		}
		return p, nil
	}
	for _, p := range []string{"nvcc", "/usr/local/cuda/bin/nvcc"} {
		if p, err := exec.LookPath(p); err == nil {
			return p, nil
		}
	}
	return "", errNoNVCC
}

// nvccVersion runs nvcc --version and returns its release line ("release 11.8, V11.8.89").
func nvccVersion(ctx context.Context, nvcc string) (string, error) {
	out, err := toolCommand(ctx, "", nvcc, "--version").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s --version: %v: %s", nvcc, err, strings.TrimSpace(string(out)))
	}
	v := variant.ParseCUDARelease(string(out))
	if v == "" {
		return "", fmt.Errorf("%s --version: no \"release\" line in %q", nvcc, strings.TrimSpace(string(out)))
	}
	return v, nil
}

// Compiled is the PTX of one source and what ptxas reported for it.
type Compiled struct {
	PTX       []byte
	Resources variant.Resources
	Reused    bool
}

func sha(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// CompileAll compiles every source that reuse cannot serve, jobs at a time, in private folders
// under dir, and returns the results by Source.key. Errors are collected and reported together,
// sorted by name. Once ctx is cancelled no compile starts and running ones are killed.
func CompileAll(ctx context.Context, tc *Toolchain, srcs []Source, reuse func(Source) (*Compiled, bool), dir string, jobs int) (map[string]*Compiled, error) {
	if jobs < 1 {
		jobs = 1
	}
	var (
		mu   sync.Mutex
		res  = map[string]*Compiled{}
		errs []error
		wg   sync.WaitGroup
		sem  = make(chan struct{}, jobs)
	)
	for _, s := range srcs {
		if c, ok := reuse(s); ok {
			res[s.key()] = c
			continue
		}
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func(s Source) {
			defer wg.Done()
			defer func() { <-sem }()
			c, err := tc.compile(ctx, dir, s)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			res[s.key()] = c
		}(s)
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(errs) > 0 {
		sort.Slice(errs, func(i, j int) bool { return errs[i].Error() < errs[j].Error() })
		return nil, errors.Join(errs...)
	}
	return res, nil
}

// CompileError is an nvcc or ptxas failure; its message shows the compiler output and the generated
// source lines around each reported line.
type CompileError struct {
	What string // "variant X (family F)" or "support kernel X"
	Msg  string
}

func (e *CompileError) Error() string { return e.What + ": " + e.Msg }

func (s Source) what() string {
	if s.Support {
		return "support kernel " + s.Name
	}
	return fmt.Sprintf("variant %s (family %s, template %s)", s.Name, s.Planned.Family.Name, s.Planned.V.Template)
}

func (tc *Toolchain) compile(ctx context.Context, dir string, s Source) (*Compiled, error) {
	// Relative names inside a private directory: nvcc's messages and the PTX carry no absolute path.
	sub, err := os.MkdirTemp(dir, s.Name+"-")
	if err != nil {
		return nil, err
	}
	cu, ptx := s.Name+".cu", s.Name+".ptx"
	if err := os.WriteFile(filepath.Join(sub, cu), s.Code, 0o644); err != nil {
		return nil, err
	}
	target := ""
	if !s.Support {
		target = s.Planned.V.Target
	}
	args := []string{"-ptx", "-arch=" + tc.Arch}
	if target != "" {
		// The templates' arch-specific code is compiled where nvcc targets it itself
		// (__CUDA_ARCH_FEAT_SM90_ALL) or where the generator raises the target afterwards.
		args = append(args, "-DTILEGEN_PTX_TARGET_"+strings.ToUpper(target))
	}
	if tc.CCBin != "" {
		args = append(args, "-ccbin", tc.CCBin)
	}
	args = append(args, "-o", ptx, cu)
	out, err := toolCommand(ctx, sub, tc.NVCC, args...).CombinedOutput()
	if err != nil {
		return nil, &CompileError{What: s.what(), Msg: "nvcc failed (" + err.Error() + "):\n" +
			strings.TrimRight(string(out), "\n") + sourceContext(string(out), cu, s.Code)}
	}
	code, err := os.ReadFile(filepath.Join(sub, ptx))
	if err != nil {
		return nil, fmt.Errorf("%s: reading nvcc output: %w", s.what(), err)
	}
	c := &Compiled{PTX: code}
	if !s.Support {
		if !bytes.Contains(code, []byte(".entry "+s.Name+"(")) {
			return nil, &CompileError{What: s.what(), Msg: "the PTX has no kernel named " + s.Name +
				`: the template must declare extern "C" __global__ void {{.V.Name}}(...)`}
		}
	}
	if target != "" {
		// ptxas here may not know the target: the driver assembles the kernel on the GPU, and the
		// worker reads its resources there.
		c.PTX, err = retargetPTX(code, tc.Arch, target)
		if err != nil {
			return nil, &CompileError{What: s.what(), Msg: err.Error()}
		}
		return c, nil
	}
	out, err = toolCommand(ctx, sub, tc.PTXAS, "-arch="+tc.Arch, "-v", ptx, "-o", os.DevNull).CombinedOutput()
	if err != nil {
		return nil, &CompileError{What: s.what(), Msg: "ptxas failed (" + err.Error() + "):\n" + strings.TrimRight(string(out), "\n")}
	}
	if !s.Support {
		r, err := variant.ParsePTXAS(string(out), s.Name)
		if err != nil {
			return nil, &CompileError{What: s.what(), Msg: err.Error()}
		}
		c.Resources = r
	}
	return c, nil
}

// retargetPTX raises PTX that nvcc wrote for arch to target (PTXTargets): the .target directive
// names target and .version is at least the ISA version target needs. Anything else is unchanged.
func retargetPTX(ptx []byte, arch, target string) ([]byte, error) {
	need, ok := PTXTargets[target]
	if !ok {
		return nil, fmt.Errorf("unknown PTX target %q", target)
	}
	if strings.TrimSuffix(target, "a") != arch {
		return nil, fmt.Errorf("ptx_target %s needs --arch %s, the generator compiles for %s", target, strings.TrimSuffix(target, "a"), arch)
	}
	lines := strings.Split(string(ptx), "\n")
	sawVersion, sawTarget := false, false
	for i, l := range lines {
		f := strings.Fields(l)
		switch {
		case len(f) == 2 && f[0] == ".version" && !sawVersion:
			sawVersion = true
			if versionLess(f[1], need) {
				lines[i] = ".version " + need
			}
		case len(f) == 2 && f[0] == ".target" && !sawTarget:
			sawTarget = true
			if f[1] != arch {
				return nil, fmt.Errorf("the PTX targets %s, not %s", f[1], arch)
			}
			lines[i] = ".target " + target
		}
	}
	if !sawVersion || !sawTarget {
		return nil, fmt.Errorf("the PTX has no .version or .target directive")
	}
	return []byte(strings.Join(lines, "\n")), nil
}

// versionLess compares PTX ISA versions "major.minor".
func versionLess(a, b string) bool {
	am, an, _ := strings.Cut(a, ".")
	bm, bn, _ := strings.Cut(b, ".")
	x, _ := strconv.Atoi(am)
	y, _ := strconv.Atoi(bm)
	if x != y {
		return x < y
	}
	u, _ := strconv.Atoi(an)
	v, _ := strconv.Atoi(bn)
	return u < v
}

// nvcc reports front-end errors as "file.cu(LINE): error: ..." and host preprocessor errors as
// "file.cu:LINE:COL: error: ...".
var (
	nvccLineRE = regexp.MustCompile(`(?m)^(\S+?)\((\d+)\): (?:error|warning|catastrophic error)`)
	gccLineRE  = regexp.MustCompile(`(?m)^(\S+?):(\d+):(?:\d+:)? (?:fatal )?error`)
)

// sourceContext returns the generated source lines around each line the compiler output names in
// file, so a template bug can be read without opening the (never written) generated file.
func sourceContext(out, file string, code []byte) string {
	lines := strings.Split(string(code), "\n")
	seen := map[int]bool{}
	var nums []int
	for _, re := range []*regexp.Regexp{nvccLineRE, gccLineRE} {
		for _, m := range re.FindAllStringSubmatch(out, -1) {
			if filepath.Base(m[1]) != file {
				continue
			}
			n, err := strconv.Atoi(m[2])
			if err != nil || n < 1 || n > len(lines) || seen[n] {
				continue
			}
			seen[n] = true
			nums = append(nums, n)
		}
	}
	sort.Ints(nums)
	var b strings.Builder
	for _, n := range nums {
		fmt.Fprintf(&b, "\n%s:%d:\n", file, n)
		for i := max(1, n-2); i <= min(len(lines), n+2); i++ {
			mark := "  "
			if i == n {
				mark = "> "
			}
			fmt.Fprintf(&b, "%s%5d | %s\n", mark, i, lines[i-1])
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

var archRE = regexp.MustCompile(`^sm_[0-9]{2,3}a?$`)
