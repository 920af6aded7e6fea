package ooc

import (
	"errors"
	"math"
	"strings"
	"testing"

	"tilegen/internal/variant"
	"tilegen/internal/verify"
)

func TestPlanFitsAndCovers(t *testing.T) {
	for _, tc := range []struct {
		name    string
		m, n, k int
		o       Options
		blocks  int // expected number of C blocks (0: do not check)
		slices  int
	}{
		{"fits whole", 1000, 1000, 1000, Options{Budget: 1 << 30, Align: Align{64, 64, 16}}, 1, 1},
		{"8192 cube in 256MiB", 8192, 8192, 8192, Options{Budget: 256 << 20, Align: Align{64, 64, 1}}, 0, 0},
		{"90000 cube in 78GB", 90000, 90000, 90000, Options{Budget: 78e9, Align: Align{64, 64, 1}}, 4, 0},
		{"odd edges", 1001, 777, 3001, Options{Budget: 4 << 20, Align: Align{32, 16, 4}}, 0, 0},
		{"thin K preferred away", 4096, 4096, 65536, Options{Budget: 512 << 20, Align: Align{128, 128, 8}}, 0, 0},
		{"tiny budget uses thin slices", 512, 512, 4096, Options{Budget: 64 << 10, Align: Align{16, 16, 1}}, 0, 0},
	} {
		p, err := NewPlan(tc.m, tc.n, tc.k, tc.o)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		t.Logf("%s: %s", tc.name, p)
		if p.DeviceBytes > tc.o.Budget {
			t.Errorf("%s: uses %d bytes of a %d budget", tc.name, p.DeviceBytes, tc.o.Budget)
		}
		a := tc.o.Align
		if p.BM%a.Rows != 0 || p.BN%a.Cols != 0 || p.BK%a.K != 0 {
			t.Errorf("%s: blocks %dx%dx%d not aligned to %+v", tc.name, p.BM, p.BN, p.BK, a)
		}
		for _, e := range []int64{int64(p.BM) * int64(p.BK), int64(p.BK) * int64(p.BN), int64(p.BM) * int64(p.BN)} {
			if e > math.MaxInt32 {
				t.Errorf("%s: a buffer of %d elements overflows 32-bit indexing", tc.name, e)
			}
		}
		if tc.blocks > 0 && p.Blocks() != tc.blocks {
			t.Errorf("%s: %d blocks, want %d", tc.name, p.Blocks(), tc.blocks)
		}
		if tc.slices > 0 && p.SlicesK != tc.slices {
			t.Errorf("%s: %d slices, want %d", tc.name, p.SlicesK, tc.slices)
		}
		// Blocks tile C exactly once and slices cover K exactly once.
		covered := map[[2]int]int{}
		var cells int64
		for b := range p.Blocks() {
			i0, r, j0, c := p.Block(b)
			if r < 1 || c < 1 || i0+r > tc.m || j0+c > tc.n {
				t.Fatalf("%s: block %d = rows %d+%d cols %d+%d out of range", tc.name, b, i0, r, j0, c)
			}
			covered[[2]int{i0, j0}]++
			cells += int64(r) * int64(c)
		}
		if cells != int64(tc.m)*int64(tc.n) || len(covered) != p.Blocks() {
			t.Errorf("%s: blocks cover %d cells (%d distinct), want %d", tc.name, cells, len(covered), tc.m*tc.n)
		}
		depth := 0
		for s := range p.SlicesK {
			k0, d := p.Slice(s)
			if k0 != depth || d < 1 {
				t.Fatalf("%s: slice %d = %d+%d after %d", tc.name, s, k0, d, depth)
			}
			depth += d
		}
		if depth != tc.k {
			t.Errorf("%s: slices cover K=%d, want %d", tc.name, depth, tc.k)
		}
		wantH2D := 4 * (int64(tc.m)*int64(tc.k)*int64(p.BlocksN) + int64(tc.k)*int64(tc.n)*int64(p.BlocksM))
		if p.H2DBytes != wantH2D || p.D2HBytes != 4*int64(tc.m)*int64(tc.n) {
			t.Errorf("%s: traffic %d/%d", tc.name, p.H2DBytes, p.D2HBytes)
		}
	}
}

// TestPlanPrefersDeepSlices: with room for a full-K slice of a smaller block, the planner must not
// pick a 1-deep slice just because it moves fewer bytes.
func TestPlanPrefersDeepSlices(t *testing.T) {
	p, err := NewPlan(8192, 8192, 8192, Options{Budget: 256 << 20, Align: Align{64, 64, 1}})
	if err != nil {
		t.Fatal(err)
	}
	if p.BK < 1024 {
		t.Errorf("slice depth %d below the preferred 1024: %s", p.BK, p)
	}
	// More budget never moves more bytes.
	q, err := NewPlan(8192, 8192, 8192, Options{Budget: 1 << 30, Align: Align{64, 64, 1}})
	if err != nil {
		t.Fatal(err)
	}
	if q.H2DBytes > p.H2DBytes {
		t.Errorf("1 GiB plan moves %d bytes, 256 MiB plan %d", q.H2DBytes, p.H2DBytes)
	}
}

func TestPlanImpossibleBudget(t *testing.T) {
	for _, tc := range []struct {
		budget int64
		align  Align
	}{
		{1024, Align{64, 64, 16}},      // cannot hold one 64×64 C block
		{0, Align{1, 1, 1}},            // nothing
		{3 * 4, Align{1, 1, 1}},        // one C element and one A/B element pair need more
		{64 << 10, Align{128, 128, 8}}, // a 128×128 block alone is 64 KiB
	} {
		_, err := NewPlan(1000, 1000, 1000, Options{Budget: tc.budget, Align: tc.align})
		if err == nil || !errors.Is(err, ErrBudget) || !strings.Contains(err.Error(), "needs") {
			t.Errorf("budget %d align %+v: err %v", tc.budget, tc.align, err)
		}
	}
	if _, err := NewPlan(0, 5, 5, Options{Budget: 1 << 30}); err == nil {
		t.Error("zero M accepted")
	}
}

func TestParseBytes(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
	}{{"256MiB", 256 << 20}, {"2GiB", 2 << 30}, {"2 gib", 2 << 30}, {"8e9", 8e9}, {"80GB", 80e9}, {"1024", 1024}, {"512B", 512}, {"1.5KiB", 1536}} {
		got, err := ParseBytes(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "x", "-5", "0", "5XB", "1e30TiB"} {
		if _, err := ParseBytes(bad); err == nil {
			t.Errorf("ParseBytes(%q) accepted", bad)
		}
	}
}

func TestCheckHost(t *testing.T) {
	if err := CheckHost(97e9, 137e9); err != nil {
		t.Errorf("97 GB in 137 GB: %v", err)
	}
	err := CheckHost(97e9, 64e9)
	if err == nil || !strings.Contains(err.Error(), "host memory too small") {
		t.Errorf("97 GB in 64 GB: %v", err)
	}
	if avail, err := MemAvailable(); err != nil || avail <= 0 {
		t.Errorf("MemAvailable: %d, %v", avail, err)
	}
}

func TestFillDeterministic(t *testing.T) {
	n := 3*fillChunk + 7
	a, b, c := make([]float32, n), make([]float32, n), make([]float32, n)
	Fill(a, 9, StreamA, 1)
	Fill(b, 9, StreamA, 5)
	Fill(c, 9, StreamB, 3)
	same := 0
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("element %d differs between 1 and 5 workers", i)
		}
		if a[i] < -1 || a[i] >= 1 {
			t.Fatalf("element %d = %g outside [-1, 1)", i, a[i])
		}
		if a[i] == c[i] {
			same++
		}
	}
	if same > n/1000 {
		t.Errorf("streams A and B agree on %d of %d elements", same, n)
	}
}

// TestCheckSample checks a correct product passes (sampled and full) and that one wrong element
// in a sampled row/column, or a NaN, fails.
func TestCheckSample(t *testing.T) {
	m, n, k := 70, 90, 1100
	r := verify.Rand(3)
	a := verify.Matrix(r, m, k, k+1, 0)
	b := verify.Matrix(r, k, n, n, 0)
	c := make([]float32, m*(n+2))
	for _, e := range []string{EngineBlocked, EngineGonum} {
		g, err := Engine(e)
		if err != nil {
			t.Fatal(err)
		}
		g(m, n, k, a, k+1, b, n, c, n+2, 2)
		scale := verify.Scale(2, k)
		all := CheckSample(m, n, k, a, k+1, b, n, c, n+2, SampleIndices(r, m, m), SampleIndices(r, n, n), scale)
		if !all.Pass() || !all.Full || all.Elements != int64(m*n) {
			t.Fatalf("%s full: %+v %s", e, all, all.Reason())
		}
		rows, cols := SampleIndices(r, m, 8), SampleIndices(r, n, 8)
		if rows[0] != 0 || rows[len(rows)-1] != m-1 || len(cols) != 8 {
			t.Fatalf("sample indices %v %v", rows, cols)
		}
		if s := CheckSample(m, n, k, a, k+1, b, n, c, n+2, rows, cols, scale); !s.Pass() || s.Full || s.Elements != 64 {
			t.Fatalf("%s sample: %+v", e, s)
		}
		c[rows[3]*(n+2)+cols[5]] += 1 // far beyond the ~0.04 tolerance of a 1100-term sum
		if s := CheckSample(m, n, k, a, k+1, b, n, c, n+2, rows, cols, scale); s.Pass() || s.FirstBadRow != rows[3] || s.FirstBadCol != cols[5] {
			t.Errorf("%s: wrong element passed: %+v", e, s)
		}
		c[rows[3]*(n+2)+cols[5]] = float32(math.NaN())
		if s := CheckSample(m, n, k, a, k+1, b, n, c, n+2, rows, cols, scale); s.Pass() || s.Reason() == "" {
			t.Errorf("%s: NaN passed: %+v", e, s)
		}
	}
	if _, err := Engine("mkl"); err == nil {
		t.Error("unknown engine accepted")
	}
}

func TestDiff(t *testing.T) {
	x := []float32{1, 2, 3, 9, 4, 5, 6, 9}
	y := []float32{1, 2, 3, 4, 5.5, 6}
	d := Diff(2, 3, x, 4, y, 3)
	if d.Elements != 6 || d.Identical != 5 || d.MaxAbs != 0.5 {
		t.Errorf("%+v", d)
	}
}

func TestCheckFull(t *testing.T) {
	m, n, k := 33, 47, 300
	r := verify.Rand(5)
	a := verify.Matrix(r, m, k, k, 0)
	b := verify.Matrix(r, k, n, n, 0)
	c := make([]float32, m*n)
	g, _ := Engine(EngineBlocked)
	g(m, n, k, a, k, b, n, c, n, 0)
	chk, err := CheckFull(m, n, k, a, k, b, n, c, n, verify.Scale(2, k))
	if err != nil || !chk.Pass() || chk.Elements != int64(m*n) {
		t.Fatalf("%+v %v", chk, err)
	}
	c[m*n-1] = -c[m*n-1] + 1
	if chk, _ := CheckFull(m, n, k, a, k, b, n, c, n, verify.Scale(2, k)); chk.Pass() || chk.FirstBadRow != m-1 || chk.FirstBadCol != n-1 {
		t.Errorf("wrong last element passed: %+v", chk)
	}
}

func TestAlignOf(t *testing.T) {
	v := variant.Variant{Tile: variant.Tile{Rows: 64, Cols: 96}, Requires: variant.Requirements{MMultiple: 1, NMultiple: 64, KMultiple: 8, LDMultiple: 4}}
	if a := AlignOf(&v); a != (Align{Rows: 64, Cols: 192, K: 8}) {
		t.Errorf("%+v", a)
	}
}
