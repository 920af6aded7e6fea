// Package variant is tilegen's variant model: what one generated kernel is, how it is launched and
// which shapes it accepts. It is defined once here and shared by the generator (which fills it from
// variants.yaml and ptxas), the generated registry (which embeds it), the runner (which launches and
// ranks by it) and the export (which dispatches by it). Nothing downstream re-derives geometry or
// requirements from names or strings.
package variant

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Signature is the C parameter list every generated kernel has, BLAS-style and row-major:
// C = alpha·op(A)·op(B) + beta·C on an M×N result with leading dimensions lda, ldb, ldc (in
// elements; see Op for what they bound under each op, which a kernel is compiled for).
// beta == 0 means C is not read (it may hold NaN).
const Signature = "int M, int N, int K, float alpha, const float* __restrict__ A, int lda, " +
	"const float* __restrict__ B, int ldb, float beta, float* __restrict__ C, int ldc"

// BatchedSignature is the parameter list of a strided-batched kernel (Variant.Batched): Signature
// plus the element strides between consecutive matrices of A, B and C, as in
// cublasSgemmStridedBatched. The batch is the grid's z extent over GridZ; a stride of 0 makes every
// product use the same matrix (a shared operand).
const BatchedSignature = Signature + ", long long strideA, long long strideB, long long strideC"

// SignatureOf is the parameter list of v's kernel.
func SignatureOf(v *Variant) string {
	if v.Batched {
		return BatchedSignature
	}
	if v.Epilogue.HasBias() {
		return EpilogueSignature
	}
	return Signature
}

// Traffic models a family may declare in variants.yaml (traffic_model); internal/analysis says
// what each one counts.
const (
	TrafficNaive      = "naive"      // every output reads a row of A and a column of B
	TrafficCoalesced  = "coalesced"  // A staged once per block column, B read per output
	TrafficTiled      = "tiled"      // both operands staged once per block tile
	TrafficCompulsory = "compulsory" // each input once (cuBLAS; the default)
)

// TrafficModels lists the traffic models, in the order variants.yaml's documentation gives them.
var TrafficModels = []string{TrafficNaive, TrafficCoalesced, TrafficTiled, TrafficCompulsory}

// FamilyModels maps each family of vs to its traffic model.
func FamilyModels(vs []Variant) map[string]string {
	out := map[string]string{}
	for i := range vs {
		out[vs[i].Family] = vs[i].TrafficModel
	}
	return out
}

// SeedFamilies is the set of vs's seed families.
func SeedFamilies(vs []Variant) map[string]bool {
	out := map[string]bool{}
	for i := range vs {
		if vs[i].Seed {
			out[vs[i].Family] = true
		}
	}
	return out
}

// Param is one template parameter of a variant with its chosen value.
type Param struct {
	// Name is the parameter's name as written in variants.yaml; a C and Go identifier.
	Name string `json:"name"`
	// Value is the parameter's integer value for this variant.
	Value int `json:"value"`
}

// Dim2 is a pair of launch extents.
type Dim2 struct {
	// X is the fastest-varying extent (threadIdx.x / blockIdx.x).
	X int `json:"x"`
	// Y is the slower extent (threadIdx.y / blockIdx.y).
	Y int `json:"y"`
}

// Tile is the part of C that one thread block computes.
type Tile struct {
	// Rows of C per block (along M); the grid's y extent is ceil(M/Rows).
	Rows int `json:"rows"`
	// Cols of C per block (along N); the grid's x extent is ceil(N/Cols).
	Cols int `json:"cols"`
}

// Requirements say which problem shapes a variant accepts. A multiple of 1 means "any".
type Requirements struct {
	// MMultiple: M must be a multiple of this.
	MMultiple int `json:"m_multiple"`
	// NMultiple: N must be a multiple of this.
	NMultiple int `json:"n_multiple"`
	// KMultiple: K must be a multiple of this.
	KMultiple int `json:"k_multiple"`
	// LDMultiple: lda, ldb and ldc must be multiples of this and A, B, C aligned to
	// 4·LDMultiple bytes (vector loads without a runtime fallback).
	LDMultiple int `json:"ld_multiple"`
}

// Resources are what ptxas reported for the variant's PTX at the manifest's arch.
type Resources struct {
	// Registers per thread.
	Registers int `json:"registers"`
	// SharedStatic is static shared memory per block in bytes.
	SharedStatic int `json:"shared_static"`
	// SpillStores is bytes of register spill stores.
	SpillStores int `json:"spill_stores"`
	// SpillLoads is bytes of register spill loads.
	SpillLoads int `json:"spill_loads"`
	// StackFrame is bytes of per-thread stack frame (local memory).
	StackFrame int `json:"stack_frame"`
}

// Variant is one point of a family's parameter space, ready to launch.
type Variant struct {
	// Name is the kernel's extern "C" name, a unique C and Go identifier.
	Name string `json:"name"`
	// Family names the kernel family (and so the technique) the variant belongs to.
	Family string `json:"family"`
	// Template is the family's template file name under templates/.
	Template string `json:"template"`
	// TrafficModel is the family's global-memory traffic model (variants.yaml traffic_model, one of
	// TrafficModels), which internal/analysis computes; "" means compulsory.
	TrafficModel string `json:"traffic_model"`
	// Seed marks a family taken from the founding documents (variants.yaml seed: true): the bench
	// summary reports the best of them next to the overall winner.
	Seed bool `json:"seed"`
	// Op is the operation the kernel is compiled for (variants.yaml ops; OpNN, "", by default): it
	// takes problems of that op only.
	Op Op `json:"op,omitempty"`
	// Batched marks a strided-batched kernel (variants.yaml batched): it has BatchedSignature and
	// takes batched problems only; an unbatched kernel takes one product.
	Batched bool `json:"batched,omitempty"`
	// Epilogue is the fused epilogue the kernel is compiled for (variants.yaml epilogues; EpiNone,
	// "", by default): a kernel with one has EpilogueSignature and takes problems of that epilogue
	// only.
	Epilogue Epilogue `json:"epilogue,omitempty"`
	// Precision is the arithmetic the kernel computes in (variants.yaml precision; PrecisionFP32,
	// "", by default): it takes problems of that precision only.
	Precision Precision `json:"precision,omitempty"`
	// Target is the PTX target the kernel needs in place of the manifest's arch (variants.yaml
	// ptx_target): "sm_90a" for Hopper's arch-specific instructions (wgmma), which run on compute
	// capability 9.0 only; "" for none.
	Target string `json:"target,omitempty"`
	// Params are the parameter values, in the order the family declares them.
	Params []Param `json:"params"`
	// Block is the thread block shape (blockDim.x, blockDim.y); blockDim.z is 1.
	Block Dim2 `json:"block"`
	// Tile is the C tile one block computes.
	Tile Tile `json:"tile"`
	// GridZ is the grid's z extent (split-K slices); 1 for most families. With a Split rule it is
	// the rule's Max, the most slices a launch may get; the launch's z comes from Grid.
	GridZ int `json:"grid_z"`
	// Split is the launch-time split-K rule of a variant whose variants.yaml geometry says
	// grid_z: auto; nil when grid z is the fixed GridZ.
	Split *SplitRule `json:"split,omitempty"`
	// DynamicShared is the dynamic shared memory per block in bytes passed at launch (0: none).
	DynamicShared int `json:"dynamic_shared"`
	// MathThreads is how many of a block's threads compute (variants.yaml geometry math_threads):
	// a warp-specialized kernel's producer threads only copy. 0: all of them.
	MathThreads int `json:"math_threads,omitempty"`
	// Requires are the shapes the variant accepts.
	Requires Requirements `json:"requires"`
	// Resources are ptxas's report (zero with --no-compile).
	Resources Resources `json:"resources"`
	// SourceHash is the SHA-256 of the generated .cu source, hex.
	SourceHash string `json:"source_hash"`
	// PTXHash is the SHA-256 of the PTX, hex (empty with --no-compile).
	PTXHash string `json:"ptx_hash,omitempty"`
}

// Manifest is generated/manifest.json.
type Manifest struct {
	// Generator is tilegen's generator version.
	Generator string `json:"generator"`
	// NVCC is nvcc's version line ("release 11.8, V11.8.89"), empty with --no-compile.
	NVCC string `json:"nvcc"`
	// Arch is the PTX target (sm_90).
	Arch string `json:"arch"`
	// Variants sorted by name.
	Variants []Variant `json:"variants"`
}

// Threads is the number of threads per block.
func (v *Variant) Threads() int { return v.Block.X * v.Block.Y }

// ComputeThreads is the number of a block's threads that do the arithmetic: MathThreads where the
// family names them (warp-specialized kernels), else every thread.
func (v *Variant) ComputeThreads() int {
	if v.MathThreads > 0 {
		return min(v.MathThreads, v.Threads())
	}
	return v.Threads()
}

// Param returns the value of the named parameter and whether it exists.
func (v *Variant) Param(name string) (int, bool) {
	for _, p := range v.Params {
		if p.Name == name {
			return p.Value, true
		}
	}
	return 0, false
}

// Grid returns the grid extents (x over N, y over M, z) of an M×N×K launch on a GPU with sms
// multiprocessors: z is the fixed GridZ, or what the Split rule picks for the shape and SM count. A
// stream-K rule (Split.StreamK) launches Split.CTAs blocks along x instead (y = z = 1).
func (v *Variant) Grid(m, n, k, sms int) (x, y, z int) {
	x, y = CeilDiv(n, v.Tile.Cols), CeilDiv(m, v.Tile.Rows)
	if v.Split != nil && v.Split.StreamK {
		return v.Split.CTAs(x*y, v.Tile.Rows*v.Tile.Cols, k, sms), 1, 1
	}
	if v.Split != nil {
		return x, y, v.Split.Slices(x*y, v.Tile.Rows*v.Tile.Cols, k, sms)
	}
	return x, y, max(v.GridZ, 1)
}

// GridBatch is Grid for batch products of a batched kernel: z is Grid's z times the batch (batch < 1
// counts as 1).
func (v *Variant) GridBatch(m, n, k, sms, batch int) (x, y, z int) {
	x, y, z = v.Grid(m, n, k, sms)
	return x, y, z * max(batch, 1)
}

// Supports reports whether the variant accepts an M×N×K problem of its op with the given leading
// dimensions (bounded as Op says for the variant's op); when it does not, the error says why.
func (v *Variant) Supports(m, n, k, lda, ldb, ldc int) error {
	if m < 1 || n < 1 || k < 1 {
		return fmt.Errorf("shape %dx%dx%d: every dimension must be at least 1", m, n, k)
	}
	if wa, wb, wc := v.Op.DenseLD(m, n, k); lda < wa || ldb < wb || ldc < wc {
		return fmt.Errorf("leading dimensions lda=%d ldb=%d ldc=%d too small for %s %dx%dx%d (at least %d, %d, %d)",
			lda, ldb, ldc, v.Op, m, n, k, wa, wb, wc)
	}
	r := v.Requires
	for _, c := range []struct {
		what     string
		val, mul int
	}{{"M", m, r.MMultiple}, {"N", n, r.NMultiple}, {"K", k, r.KMultiple},
		{"lda", lda, r.LDMultiple}, {"ldb", ldb, r.LDMultiple}, {"ldc", ldc, r.LDMultiple}} {
		if c.mul > 1 && c.val%c.mul != 0 {
			return fmt.Errorf("%s=%d is not a multiple of %d", c.what, c.val, c.mul)
		}
	}
	gx, gy, gz := v.Grid(m, n, k, 1)
	if gy > MaxGridY || gz > MaxGridZ {
		return fmt.Errorf("grid y=%d z=%d exceeds 65535", gy, gz)
	}
	if gx > MaxGridX {
		return fmt.Errorf("grid x=%d exceeds %d", gx, MaxGridX)
	}
	return nil
}

// SupportsDense is Supports with the smallest leading dimensions of the variant's op.
func (v *Variant) SupportsDense(m, n, k int) error {
	lda, ldb, ldc := v.Op.DenseLD(m, n, k)
	return v.Supports(m, n, k, lda, ldb, ldc)
}

// Arbitrary reports whether the variant claims to handle any M, N, K and leading dimension.
func (r Requirements) Arbitrary() bool {
	return r.MMultiple <= 1 && r.NMultiple <= 1 && r.KMultiple <= 1 && r.LDMultiple <= 1
}

// ParamString renders the parameters as "A=1 B=2" in declaration order.
func (v *Variant) ParamString() string {
	parts := make([]string, len(v.Params))
	for i, p := range v.Params {
		parts[i] = fmt.Sprintf("%s=%d", p.Name, p.Value)
	}
	return strings.Join(parts, " ")
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// IsIdent reports whether s is a valid C and Go identifier (ASCII letters, digits, underscore).
func IsIdent(s string) bool { return identRE.MatchString(s) && len(s) <= 200 }

// SortByName sorts variants by name, the order of every generated output.
func SortByName(vs []Variant) {
	sort.Slice(vs, func(i, j int) bool { return vs[i].Name < vs[j].Name })
}

// CeilDiv is ⌈a/b⌉ for a ≥ 0, or 0 when b ≤ 0 (an unknown tile); the one ceiling division of the
// module.
func CeilDiv(a, b int) int {
	if b <= 0 {
		return 0
	}
	return (a + b - 1) / b
}
