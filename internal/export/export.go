package export

import (
	"encoding/json"
	"errors"
	"fmt"
	"go/token"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"tilegen/internal/orchestrator"
	"tilegen/internal/protocol"
	"tilegen/internal/variant"
)

// Options are one export's inputs.
type Options struct {
	// Results are results directories (results.jsonl, device.json).
	Results []string
	// Shapes restricts the classes to these tuned shapes (nil: every tuned shape).
	Shapes []protocol.Shape
	// Generated is the generated directory (manifest.json, cuda/, ptx/).
	Generated string
	// Out is the directory to create: the Go package's directory, also holding <Name>.cuh and <Name>.json.
	Out string
	// Name names the header, its launcher (<Name>_sgemm) and the provenance file; a C identifier.
	Name string
	// GoPackage is the Go package's import path; its last element is the package name.
	GoPackage string
	// Force replaces an existing Out that is empty or a previous export.
	Force bool
	// Log receives the summary (classes, default, exclusions); nil discards it.
	Log io.Writer
}

var cKeywords = map[string]bool{}

func init() {
	for _, k := range strings.Fields(`alignas alignof and asm auto bool break case catch char class const constexpr
		const_cast continue decltype default delete do double dynamic_cast else enum explicit export extern false float
		for friend goto if inline int long mutable namespace new noexcept not nullptr operator or private protected
		public register reinterpret_cast restrict return short signed sizeof static static_assert static_cast struct
		switch template this thread_local throw true try typedef typeid typename union unsigned using virtual void
		volatile wchar_t while`) {
		cKeywords[k] = true
	}
}

// ValidName checks a --name: a C identifier of at most 64 characters that is no C++ keyword and
// does not start with an underscore (reserved names).
func ValidName(name string) error {
	switch {
	case !variant.IsIdent(name) || len(name) > 64:
		return fmt.Errorf("name %q: want a C identifier (letters, digits, underscore; at most 64)", name)
	case strings.HasPrefix(name, "_"):
		return fmt.Errorf("name %q: names starting with an underscore are reserved in C", name)
	case cKeywords[name]:
		return fmt.Errorf("name %q is a C++ keyword", name)
	}
	return nil
}

var pathElem = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.~-]*$`)

// PackageName checks a --go-package import path and returns its package name (the last element,
// which must be a Go identifier, not a keyword, not "main").
func PackageName(path string) (string, error) {
	if path == "" || strings.HasPrefix(path, "/") || strings.HasSuffix(path, "/") || len(path) > 200 {
		return "", fmt.Errorf("go package %q: want an import path like example.com/project/sgemm", path)
	}
	elems := strings.Split(path, "/")
	for _, e := range elems {
		if e == "." || e == ".." || !pathElem.MatchString(e) {
			return "", fmt.Errorf("go package %q: element %q is not allowed in an import path", path, e)
		}
	}
	name := elems[len(elems)-1]
	if !token.IsIdentifier(name) || token.IsKeyword(name) || name == "main" || strings.HasPrefix(name, "_") {
		return "", fmt.Errorf("go package %q: its last element %q must be a Go identifier usable as a package name", path, name)
	}
	return name, nil
}

// Prepare validates the options and decides the export without writing anything.
func Prepare(o Options) (*Plan, map[string][]byte, error) {
	if err := ValidName(o.Name); err != nil {
		return nil, nil, err
	}
	if o.GoPackage == "" {
		o.GoPackage = strings.ToLower(o.Name)
	}
	pkg, err := PackageName(o.GoPackage)
	if err != nil {
		return nil, nil, err
	}
	rs, err := readResults(o.Results)
	if err != nil {
		return nil, nil, err
	}
	cat, err := orchestrator.LoadDir(o.Generated)
	if err != nil {
		return nil, nil, err
	}
	m := variant.Manifest{NVCC: cat.NVCC(), Arch: cat.Arch(), Variants: cat.Variants()}
	b, err := os.ReadFile(filepath.Join(o.Generated, "manifest.json"))
	if err != nil {
		return nil, nil, fmt.Errorf("read catalog: %w", err)
	}
	var head struct {
		Generator string `json:"generator"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return nil, nil, fmt.Errorf("manifest: %w", err)
	}
	m.Generator = head.Generator
	if rs.info.Arch != "" && m.Arch != rs.info.Arch {
		return nil, nil, fmt.Errorf("results were measured with %s PTX, the generated directory has %s", rs.info.Arch, m.Arch)
	}
	p, err := choose(rs, m, o.Shapes)
	if err != nil {
		return nil, nil, err
	}
	p.Name, p.GoPackage, p.PkgName = o.Name, o.GoPackage, pkg
	var chosen []variant.Variant
	for _, c := range p.Variants {
		chosen = append(chosen, c.V)
	}
	srcs, err := readSources(o.Generated, chosen)
	if err != nil {
		return nil, nil, err
	}
	for i := range p.Variants {
		p.Variants[i].src = srcs[p.Variants[i].V.Name]
	}

	files, err := goFiles(p)
	if err != nil {
		return nil, nil, err
	}
	for _, c := range p.Variants {
		files["ptx/"+c.V.Name+".ptx"] = []byte(c.src.ptx)
	}
	if files[o.Name+".cuh"], err = cuhFile(p); err != nil {
		return nil, nil, err
	}
	if files[o.Name+".json"], err = provenanceFile(p, rs.info.NVCC); err != nil {
		return nil, nil, err
	}
	return p, files, nil
}

// Run exports: Prepare, then write the files into o.Out (replacing it only with o.Force).
func Run(o Options) error {
	out := filepath.Clean(o.Out)
	if o.Out == "" || out == "." || out == "/" || out == ".." || strings.HasSuffix(out, string(filepath.Separator)+"..") {
		return fmt.Errorf("--out %q: want a new directory", o.Out)
	}
	if err := checkOut(out, o.Force); err != nil {
		return err
	}
	p, files, err := Prepare(o)
	if err != nil {
		return err
	}
	if err := writeDir(out, files, o.Force); err != nil {
		return err
	}
	if o.Log != nil {
		summary(o.Log, p, out)
	}
	return nil
}

// checkOut refuses an existing directory without force, and with force anything but an empty
// directory or a previous export.
func checkOut(out string, force bool) error {
	fi, err := os.Lstat(out)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("--out %s exists and is not a directory", out)
	}
	if !force {
		return fmt.Errorf("--out %s exists (use --force to replace a previous export)", out)
	}
	ents, err := os.ReadDir(out)
	if err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	if len(ents) == 0 {
		return nil
	}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".json") || e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(out, e.Name()))
		if err != nil {
			continue
		}
		var head struct {
			Exporter string `json:"exporter"`
		}
		if json.Unmarshal(b, &head) == nil && head.Exporter == Exporter {
			return nil
		}
	}
	return fmt.Errorf("--out %s is not empty and holds no previous export: not replacing it even with --force", out)
}

// writeDir writes the files into a fresh sibling directory and renames it into place, so that a
// failed export leaves out as it was.
func writeDir(out string, files map[string][]byte, force bool) error {
	parent := filepath.Dir(out)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(out)+".new-")
	if err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	defer os.RemoveAll(tmp)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		path := filepath.Join(tmp, filepath.FromSlash(n))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return fmt.Errorf("write export: %w", err)
		}
		if err := os.WriteFile(path, files[n], 0o644); err != nil {
			return fmt.Errorf("write export: %w", err)
		}
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return fmt.Errorf("write export: %w", err)
	}
	if _, err := os.Lstat(out); err == nil {
		if !force {
			return fmt.Errorf("--out %s appeared during the export", out)
		}
		old := tmp + ".old"
		if err := os.Rename(out, old); err != nil {
			return fmt.Errorf("replace %s: %w", out, err)
		}
		defer os.RemoveAll(old)
	}
	if err := os.Rename(tmp, out); err != nil {
		return fmt.Errorf("write export: %w", err)
	}
	return nil
}

func summary(w io.Writer, p *Plan, out string) {
	fmt.Fprintf(w, "exported %d variant(s) for %d shape class(es) on %s into %s (package %s, %s.cuh, %s.json)\n",
		len(p.Variants), len(p.Classes), p.GPU, out, p.GoPackage, p.Name, p.Name)
	for _, c := range p.Classes {
		fmt.Fprintf(w, "  %-16s %-24s %9.4f ms  %.2fx cuBLAS\n", orchestrator.ShapeString(c.Shape),
			p.Variants[c.Variant].V.Name, c.MedianMS, c.MedianMS/c.CublasMS)
	}
	d := p.Variants[p.Default]
	fmt.Fprintf(w, "  robust default: %s (worst case %.2fx cuBLAS, edge suite %d/%d passed)\n", d.V.Name, d.WorstRatio,
		d.Edge.Passed, d.Edge.Shapes)
	n := 0
	for _, e := range p.Excluded {
		if len(e.WouldHaveWon) > 0 {
			var ss []string
			for _, s := range e.WouldHaveWon {
				ss = append(ss, orchestrator.ShapeString(s))
			}
			fmt.Fprintf(w, "  excluded %s (fastest at %s): %s\n", e.Variant, strings.Join(ss, ", "), e.Reason)
		} else {
			n++
		}
	}
	if n > 0 {
		fmt.Fprintf(w, "  %d other variant(s) excluded (reasons in %s.json)\n", n, p.Name)
	}
}
