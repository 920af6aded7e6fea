package variant

import "fmt"

// The grid extents a CUDA launch may have (compute capability 3.0 and later).
const (
	// MaxGridX is the largest grid x extent.
	MaxGridX = 1<<31 - 1
	// MaxGridY is the largest grid y extent.
	MaxGridY = 65535
	// MaxGridZ is the largest grid z extent (and so GridZ·batch) a launch may have.
	MaxGridZ = 65535
)

// CheckGrid says why a launch grid of x×y×z blocks cannot be launched (nil: it can). Sizes are
// checked here, before the driver sees them, so that an oversized problem is a clear error that
// names the extent rather than the driver's bare "invalid value".
func CheckGrid(x, y, z int) error {
	switch {
	case x < 1 || y < 1 || z < 1:
		return fmt.Errorf("grid %dx%dx%d: every extent must be at least 1", x, y, z)
	case x > MaxGridX:
		return fmt.Errorf("grid x=%d exceeds %d", x, MaxGridX)
	case y > MaxGridY:
		return fmt.Errorf("grid y=%d exceeds %d", y, MaxGridY)
	case z > MaxGridZ:
		return fmt.Errorf("grid z=%d exceeds %d", z, MaxGridZ)
	}
	return nil
}

// RowBand is a run of rows [Row0, Row0+Rows) of an M-row problem launched on its own.
type RowBand struct{ Row0, Rows int }

// RowBands splits M rows into bands that each fit the grid's y extent when a block covers
// rowsPerBlock rows along y: one band when M fits, else bands of MaxGridY·rowsPerBlock rows (the
// last one shorter). A kernel with the rows on grid y (the float64 reference) is launched once per
// band with its row pointers moved to the band's first row.
func RowBands(m, rowsPerBlock int) []RowBand {
	if m < 1 || rowsPerBlock < 1 {
		return nil
	}
	step := int64(MaxGridY) * int64(rowsPerBlock)
	var out []RowBand
	for r := int64(0); r < int64(m); r += step {
		out = append(out, RowBand{Row0: int(r), Rows: int(min(step, int64(m)-r))})
	}
	return out
}
