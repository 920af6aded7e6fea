package export

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"tilegen/internal/protocol"
	"tilegen/internal/results"
	"tilegen/internal/variant"
)

// Input is one results directory as read.
type Input struct {
	// Dir is the directory as given.
	Dir string `json:"dir"`
	// ResultsSHA256 is the SHA-256 of its results.jsonl.
	ResultsSHA256 string `json:"results_sha256"`
	// DeviceSHA256 is the SHA-256 of its device.json.
	DeviceSHA256 string `json:"device_sha256"`
	// Records is the number of records in results.jsonl.
	Records int `json:"records"`
}

// resultsSet is every record of the inputs (deduplicated by key) and the devices they ran on.
type resultsSet struct {
	inputs  []Input
	records []results.Record
	info    results.RunInfo
	// contentHash is the SHA-256 over the deduplicated records, each as JSON, sorted by key.
	contentHash string
}

func sha(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// readResults reads results.jsonl and device.json of every directory.
func readResults(dirs []string) (*resultsSet, error) {
	if len(dirs) == 0 {
		return nil, fmt.Errorf("no results directories (--results)")
	}
	rs := &resultsSet{}
	seen := map[string]bool{}
	devSeen := map[string]bool{}
	for _, dir := range dirs {
		path, b, err := results.ReadFile(filepath.Join(dir, "results.jsonl"))
		if err != nil {
			return nil, fmt.Errorf("results: %w", err)
		}
		in := Input{Dir: filepath.ToSlash(filepath.Clean(dir)), ResultsSHA256: sha(b)}
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		line := 0
		for sc.Scan() {
			line++
			if len(bytes.TrimSpace(sc.Bytes())) == 0 {
				continue
			}
			var r results.Record
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				return nil, fmt.Errorf("%s:%d: %w", path, line, err)
			}
			if r.Key == "" || r.Kind == "" || r.Variant == "" {
				return nil, fmt.Errorf("%s:%d: record without key, kind or variant", path, line)
			}
			in.Records++
			if !seen[r.Key] {
				seen[r.Key] = true
				rs.records = append(rs.records, r)
			}
		}
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		dpath := filepath.Join(dir, "device.json")
		db, err := os.ReadFile(dpath)
		if err != nil {
			return nil, fmt.Errorf("results: %w", err)
		}
		in.DeviceSHA256 = sha(db)
		var ri results.RunInfo
		if err := json.Unmarshal(db, &ri); err != nil {
			return nil, fmt.Errorf("%s: %w", dpath, err)
		}
		if rs.info.NVCC == "" {
			rs.info.NVCC, rs.info.Arch = ri.NVCC, ri.Arch
		}
		for _, d := range ri.Devices {
			if !devSeen[d.UUID] {
				devSeen[d.UUID] = true
				rs.info.Devices = append(rs.info.Devices, d)
			}
		}
		rs.inputs = append(rs.inputs, in)
	}
	sort.Slice(rs.info.Devices, func(i, j int) bool { return rs.info.Devices[i].UUID < rs.info.Devices[j].UUID })
	sorted := append([]results.Record(nil), rs.records...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Key < sorted[j].Key })
	h := sha256.New()
	for _, r := range sorted {
		b, err := json.Marshal(r)
		if err != nil {
			return nil, fmt.Errorf("hash records: %w", err)
		}
		h.Write(b)
		h.Write([]byte{'\n'})
	}
	rs.contentHash = hex.EncodeToString(h.Sum(nil))
	results.SortRecords(rs.records)
	return rs, nil
}

// unhashed counts the tune and verify records that measured a kernel (not skipped) and how many of
// them carry no source hash.
func (rs *resultsSet) unhashed() (unhashed, measured int) {
	for _, r := range rs.records {
		if r.Kind == results.KindCublas || r.Status == results.StatusSkipped {
			continue
		}
		measured++
		if r.SourceHash == "" {
			unhashed++
		}
	}
	return unhashed, measured
}

// device returns the device with the given UUID from the inputs' device.json files.
func (rs *resultsSet) device(uuid string) (protocol.Device, bool) {
	for _, d := range rs.info.Devices {
		if d.UUID == uuid {
			return d, true
		}
	}
	return protocol.Device{}, false
}

// source is one variant's generated files, checked against the manifest.
type source struct {
	cu, ptx string
	// image is the kernel's fatbin (SASS for archs, and the PTX) when the export carries SASS.
	image []byte
	archs []string
	// regs are the registers ptxas gave the kernel's cubin for each of archs (0: not read).
	regs []int
}

// readSources reads and checks cuda/<name>.cu and ptx/<name>.ptx of the named variants.
func readSources(dir string, vs []variant.Variant) (map[string]source, error) {
	out := map[string]source{}
	for i := range vs {
		v := &vs[i]
		if !variant.IsIdent(v.Name) {
			return nil, fmt.Errorf("manifest: %q is not a variant name", v.Name)
		}
		cu, err := os.ReadFile(filepath.Join(dir, "cuda", v.Name+".cu"))
		if err != nil {
			return nil, fmt.Errorf("source of %s: %w", v.Name, err)
		}
		if got := sha(cu); got != v.SourceHash {
			return nil, fmt.Errorf("source of %s: SHA-256 %s, the manifest says %s (stale generated directory: run the generator)",
				v.Name, short(got), short(v.SourceHash))
		}
		ptx, err := os.ReadFile(filepath.Join(dir, "ptx", v.Name+".ptx"))
		if err != nil {
			return nil, fmt.Errorf("PTX of %s: %w", v.Name, err)
		}
		if v.PTXHash == "" {
			return nil, fmt.Errorf("PTX of %s: the manifest has no PTX hash (generated with --no-compile?)", v.Name)
		}
		if got := sha(ptx); got != v.PTXHash {
			return nil, fmt.Errorf("PTX of %s: SHA-256 %s, the manifest says %s (stale generated directory: run the generator)",
				v.Name, short(got), short(v.PTXHash))
		}
		out[v.Name] = source{cu: string(cu), ptx: string(ptx)}
	}
	return out, nil
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
