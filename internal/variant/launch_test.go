package variant

import (
	"strings"
	"testing"
)

func TestCheckGrid(t *testing.T) {
	for _, c := range []struct {
		x, y, z int
		want    string
	}{
		{1, 1, 1, ""},
		{MaxGridX, MaxGridY, MaxGridZ, ""},
		{0, 1, 1, "at least 1"},
		{MaxGridX + 1, 1, 1, "grid x=2147483648 exceeds"},
		// The float64 reference over VGG-16 conv1 at batch 32 (M = 1605632, 16-row blocks).
		{4, 1605632 / 16, 1, "grid y=100352 exceeds 65535"},
		{1, 1, 65536, "grid z=65536 exceeds 65535"},
	} {
		err := CheckGrid(c.x, c.y, c.z)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("CheckGrid(%d, %d, %d) = %v, want %q", c.x, c.y, c.z, err, c.want)
		}
	}
}

func TestRowBands(t *testing.T) {
	for _, c := range []struct{ m, per int }{{1, 16}, {16, 16}, {65535 * 16, 16}, {65535*16 + 1, 16}, {1605632, 16}, {1 << 30, 16}, {100, 1}, {200000, 1}} {
		bands := RowBands(c.m, c.per)
		next := 0
		for _, b := range bands {
			if b.Row0 != next || b.Rows < 1 {
				t.Fatalf("RowBands(%d, %d): band %+v after row %d", c.m, c.per, b, next)
			}
			if y := CeilDiv(b.Rows, c.per); CheckGrid(1, y, 1) != nil {
				t.Errorf("RowBands(%d, %d): band %+v needs grid y %d", c.m, c.per, b, y)
			}
			next += b.Rows
		}
		if next != c.m {
			t.Errorf("RowBands(%d, %d) covers %d rows", c.m, c.per, next)
		}
		if want := CeilDiv(c.m, 65535*c.per); len(bands) != want {
			t.Errorf("RowBands(%d, %d): %d bands, want %d", c.m, c.per, len(bands), want)
		}
	}
	if RowBands(0, 16) != nil {
		t.Error("RowBands(0, 16) is not empty")
	}
}
