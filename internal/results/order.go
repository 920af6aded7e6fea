package results

import (
	"sort"

	"tilegen/internal/protocol"
)

// kindOrder puts cuBLAS before the variants of a shape.
var kindOrder = map[string]int{KindCublas: 0, KindTune: 1, KindVerify: 2}

// SortRecords orders records independently of how they were produced: shapes by decreasing work
// (then M, N, K), cuBLAS first, then variants by name, then device and key.
func SortRecords(rs []Record) {
	sort.SliceStable(rs, func(i, j int) bool {
		a, b := rs[i], rs[j]
		if fa, fb := Flops(a.Shape), Flops(b.Shape); fa != fb {
			return fa > fb
		}
		if a.Shape != b.Shape {
			if a.Shape.M != b.Shape.M {
				return a.Shape.M < b.Shape.M
			}
			if a.Shape.N != b.Shape.N {
				return a.Shape.N < b.Shape.N
			}
			return a.Shape.K < b.Shape.K
		}
		if kindOrder[a.Kind] != kindOrder[b.Kind] {
			return kindOrder[a.Kind] < kindOrder[b.Kind]
		}
		if a.Variant != b.Variant {
			return a.Variant < b.Variant
		}
		if da, db := DeviceUUID(a), DeviceUUID(b); da != db {
			return da < db
		}
		return a.Key < b.Key
	})
}

// DeviceUUID is the UUID of the record's device, "" when it has none.
func DeviceUUID(r Record) string {
	if r.Device == nil {
		return ""
	}
	return r.Device.UUID
}

// ShapesOf lists the distinct shapes of records in record order.
func ShapesOf(rs []Record) []protocol.Shape {
	var out []protocol.Shape
	seen := map[protocol.Shape]bool{}
	for _, r := range rs {
		if !seen[r.Shape] {
			seen[r.Shape] = true
			out = append(out, r.Shape)
		}
	}
	return out
}

// CublasFor finds the cuBLAS record to compare r with: same shape, same device if there is one.
func CublasFor(rs []Record, r *Record) *Record {
	var any *Record
	for i := range rs {
		c := &rs[i]
		if c.Kind != KindCublas || c.Shape != r.Shape || c.Status != StatusOK || c.Timing == nil {
			continue
		}
		if DeviceUUID(*c) == DeviceUUID(*r) {
			return c
		}
		if any == nil {
			any = c
		}
	}
	return any
}

// GFLOPS is the rate of a shape computed in ms milliseconds, 0 when ms is not positive.
func GFLOPS(s protocol.Shape, ms float64) float64 {
	if ms <= 0 {
		return 0
	}
	return Flops(s) / (ms * 1e6)
}
