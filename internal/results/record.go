package results

import (
	"fmt"
	"strconv"
	"strings"

	"tilegen/internal/protocol"
	"tilegen/internal/variant"
)

// Kinds of records.
const (
	KindCublas = "cublas" // cuBLAS timed on a shape
	KindTune   = "tune"   // a variant verified and timed on a shape
	KindVerify = "verify" // a variant verified (no timing) on a shape
)

// Statuses of records.
const (
	StatusOK      = "ok"
	StatusFailed  = "failed"
	StatusSkipped = "skipped"
)

// CublasName is the variant column's value for cuBLAS rows.
const CublasName = "cublas"

// Record is one result: a line of the cache and of results.jsonl. It holds no timestamps so that a
// merge of shards is byte-identical to a single run.
type Record struct {
	// Key is the content hash of everything that determines the result (the engine's keyOf).
	Key     string `json:"key"`
	Kind    string `json:"kind"`
	Variant string `json:"variant"`
	Family  string `json:"family,omitempty"`
	Params  string `json:"params,omitempty"`
	// SourceHash and PTXHash identify the code that was measured (the manifest's SHA-256 of the
	// generated .cu and of its PTX), so that export can refuse a variant regenerated since. Empty
	// for cuBLAS rows.
	SourceHash string         `json:"source_hash,omitempty"`
	PTXHash    string         `json:"ptx_hash,omitempty"`
	Shape      protocol.Shape `json:"shape"`
	Status     string         `json:"status"`
	// Reason says why a record failed or was skipped, in one line.
	Reason string `json:"reason,omitempty"`
	// Seed is the verification seed.
	Seed uint64 `json:"seed,omitempty"`
	// SettingsHash identifies the arch and the verification and timing settings the record was
	// measured under (the engine's settingsHash), so that a cache hit can be checked against the
	// request.
	SettingsHash string `json:"settings_hash,omitempty"`
	// Device identifies the GPU that produced the record.
	Device *DeviceRef `json:"device,omitempty"`
	// Tile is the variant's C tile per block (the geometry the analysis columns model traffic by).
	Tile *variant.Tile `json:"tile,omitempty"`
	// Resources and DynamicShared come from the manifest (ptxas).
	Resources     variant.Resources       `json:"resources"`
	DynamicShared int                     `json:"dynamic_shared,omitempty"`
	Attributes    *protocol.Attributes    `json:"attributes,omitempty"`
	Verify        []protocol.VerifyResult `json:"verify,omitempty"`
	Timing        *protocol.TimingResult  `json:"timing,omitempty"`
	// Phases is where the worker spent the measurement's time (load/JIT, verification, timing).
	Phases *protocol.Phases `json:"phases,omitempty"`
	Note   string           `json:"note,omitempty"`
	// Baselines are a cuBLAS row's extra baselines on the same shape (cublasLt's fused epilogue on
	// a shape with an epilogue, whose Timing is cuBLAS followed by the separate epilogue pass).
	Baselines []protocol.BaselineResult `json:"baselines,omitempty"`
}

// DeviceRef is the part of a device that identifies it in results.
type DeviceRef struct {
	Name   string `json:"name"`
	UUID   string `json:"uuid"`
	Driver int    `json:"driver"`
}

// RefOf is the DeviceRef of a device.
func RefOf(d protocol.Device) *DeviceRef {
	return &DeviceRef{Name: d.Name, UUID: d.UUID, Driver: d.DriverVersion}
}

// RunInfo is device.json: the devices and tool versions behind a result set.
type RunInfo struct {
	GOOS    string            `json:"goos"`
	GOARCH  string            `json:"goarch"`
	NVCC    string            `json:"nvcc"`
	Arch    string            `json:"arch"`
	Devices []protocol.Device `json:"devices"`
}

// Flops is 2·M·N·K, times the batch of a batched shape.
func Flops(s protocol.Shape) float64 {
	return 2 * float64(s.M) * float64(s.N) * float64(s.K) * float64(s.Products())
}

// MaxBatch bounds a shape's batch (the grid's z extent).
const MaxBatch = 65535

// ShapeString renders MxNxK for one NN product, MxNxK:OP (4096x4096x4096:TN) for the other ops, a
// :bBATCH suffix for a strided batch (512x512x64:TN:b64, 128x128x128:b64), a :EPILOGUE suffix for a
// fused epilogue (4096x4096x1024:bias_relu_col) and a :3xtf32 or :tf32 suffix for a precision other
// than FP32, so the strings of one FP32 NN product without an epilogue (and what derives from them:
// verification seeds, bench names) are those of before ops, batches, epilogues and precisions
// existed.
func ShapeString(s protocol.Shape) string {
	out := DimsString(s)
	if s.Op != variant.OpNN {
		out += ":" + s.Op.String()
	}
	if s.Batch > 0 {
		out += fmt.Sprintf(":b%d", s.Batch)
	}
	if s.Epilogue != variant.EpiNone {
		out += ":" + string(s.Epilogue)
	}
	if s.Precision != variant.PrecisionFP32 {
		out += ":" + s.Precision.Label()
	}
	return out
}

// DimsString renders MxNxK without the op.
func DimsString(s protocol.Shape) string { return fmt.Sprintf("%dx%dx%d", s.M, s.N, s.K) }

// shapeSyntax is the shape grammar error messages name.
const shapeSyntax = "MxNxK[:OP][:bBATCH][:EPILOGUE][:3xtf32|:tf32]"

// ParseShape parses MxNxK with an optional :OP (NN, NT, TN or TT; NN when absent), an optional
// :bBATCH (a strided batch of BATCH ≥ 1 products; absent: one product, unbatched), an optional
// :EPILOGUE (variant.ParseEpilogue: none, bias_row, bias_relu_col, ...; absent: none) and an
// optional :3xtf32 or :tf32 (the precision; absent: FP32), in that order.
func ParseShape(s string) (protocol.Shape, error) {
	fields := strings.Split(strings.TrimSpace(s), ":")
	dims, rest := fields[0], fields[1:]
	var op variant.Op
	batch := 0
	epi := variant.EpiNone
	var prec variant.Precision
	isEpi := func(x string) bool {
		x = strings.ToLower(x)
		return strings.HasPrefix(x, "bias") || x == "none"
	}
	isBatch := func(x string) bool { return strings.HasPrefix(x, "b") && !isEpi(x) }
	if len(rest) > 0 && !isBatch(rest[0]) && !isEpi(rest[0]) && !isPrecision(rest[0]) {
		var err error
		if op, err = variant.ParseOp(rest[0]); err != nil {
			return protocol.Shape{}, fmt.Errorf("shape %q: %w", s, err)
		}
		rest = rest[1:]
	}
	if len(rest) > 0 && isBatch(rest[0]) {
		n, err := strconv.Atoi(strings.TrimPrefix(rest[0], "b"))
		if err != nil || n < 1 || n > MaxBatch {
			return protocol.Shape{}, fmt.Errorf("shape %q: batch %q: want b1 to b%d", s, rest[0], MaxBatch)
		}
		batch = n
		rest = rest[1:]
	}
	if len(rest) > 0 && !isPrecision(rest[0]) {
		var err error
		if epi, err = variant.ParseEpilogue(rest[0]); err != nil {
			return protocol.Shape{}, fmt.Errorf("shape %q: %w", s, err)
		}
		rest = rest[1:]
	}
	if len(rest) > 0 {
		p, err := variant.ParsePrecision(rest[0])
		if err != nil || p == variant.PrecisionFP32 {
			return protocol.Shape{}, fmt.Errorf("shape %q: want %s", s, shapeSyntax)
		}
		prec = p
		rest = rest[1:]
	}
	if len(rest) > 0 {
		return protocol.Shape{}, fmt.Errorf("shape %q: want %s", s, shapeSyntax)
	}
	if batch > 0 && epi != variant.EpiNone {
		return protocol.Shape{}, fmt.Errorf("shape %q: a strided batch with an epilogue is not supported", s)
	}
	if prec != variant.PrecisionFP32 && epi != variant.EpiNone {
		return protocol.Shape{}, fmt.Errorf("shape %q: the tensor-core precisions take no epilogue", s)
	}
	parts := strings.Split(dims, "x")
	if len(parts) != 3 {
		return protocol.Shape{}, fmt.Errorf("shape %q: want %s", s, shapeSyntax)
	}
	var d [3]int
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v < 1 {
			return protocol.Shape{}, fmt.Errorf("shape %q: %q is not a positive integer", s, p)
		}
		d[i] = v
	}
	return protocol.Shape{M: d[0], N: d[1], K: d[2], Op: op, Batch: batch, Epilogue: epi, Precision: prec}, nil
}

// isPrecision reports whether a shape suffix names a precision other than FP32.
func isPrecision(s string) bool {
	p, err := variant.ParsePrecision(s)
	return err == nil && p != variant.PrecisionFP32
}

// WithPrecisions returns every shape under every precision of precs, shape-major, duplicates
// dropped (the shapes' own precisions are replaced). The tensor-core kernels compute one NN
// product without an epilogue: other shapes keep FP32 only. Without precs the shapes are returned
// as they are.
func WithPrecisions(shapes []protocol.Shape, precs []variant.Precision) []protocol.Shape {
	if len(precs) == 0 {
		return shapes
	}
	var out []protocol.Shape
	seen := map[protocol.Shape]bool{}
	for _, s := range shapes {
		plain := s.Op == variant.OpNN && s.Batch == 0 && s.Epilogue == variant.EpiNone
		for _, p := range precs {
			if p != variant.PrecisionFP32 && !plain {
				continue
			}
			s.Precision = p
			if !seen[s] {
				seen[s] = true
				out = append(out, s)
			}
		}
	}
	return out
}

// WithOps returns every shape under every op of ops, shape-major, duplicates dropped (the ops of
// the shapes themselves are replaced). Without ops the shapes are returned as they are.
func WithOps(shapes []protocol.Shape, ops []variant.Op) []protocol.Shape {
	if len(ops) == 0 {
		return shapes
	}
	var out []protocol.Shape
	seen := map[protocol.Shape]bool{}
	for _, s := range shapes {
		for _, op := range ops {
			s.Op = op
			if !seen[s] {
				seen[s] = true
				out = append(out, s)
			}
		}
	}
	return out
}

// ParseShapes parses a comma-separated list of shapes, dropping duplicates.
func ParseShapes(s string) ([]protocol.Shape, error) {
	var out []protocol.Shape
	seen := map[protocol.Shape]bool{}
	for _, f := range strings.Split(s, ",") {
		if strings.TrimSpace(f) == "" {
			continue
		}
		sh, err := ParseShape(f)
		if err != nil {
			return nil, err
		}
		if !seen[sh] {
			seen[sh] = true
			out = append(out, sh)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no shapes in %q", s)
	}
	return out, nil
}
