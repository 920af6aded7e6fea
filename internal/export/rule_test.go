package export

import (
	"slices"
	"testing"

	"tilegen/internal/dispatch"
)

// TestRuleKernelsNumberLocally: a rule's tables number its kernels among themselves, so an export's
// variant indices may run past what one character encodes; the rows and the kernel list give back
// every cell's variant.
func TestRuleKernelsNumberLocally(t *testing.T) {
	r := &dispatch.Rule{Shift: 0, Lo: [3]int{0, 0, 0}, Hi: [3]int{1, 0, 1}, Default: 7}
	r.Table = []int{300, 120, 7, 300}
	r.Unaligned = []int{120, 120, 85, 7}
	r.General = []int{85, 7, 7, 300}
	ks := ruleKernels(r)
	if !slices.Equal(ks, []int{7, 85, 120, 300}) {
		t.Fatalf("ruleKernels %v, want [7 85 120 300]", ks)
	}
	for _, table := range [][]int{r.Table, r.Unaligned, r.General} {
		rows, _ := tableRows(r, table, ks)
		var got []int
		for _, row := range rows {
			for _, ch := range []byte(row) {
				if ch < '0' || ch > '~' {
					t.Fatalf("row %q: character %q outside '0'..'~'", row, ch)
				}
				got = append(got, ks[ch-'0'])
			}
		}
		if !slices.Equal(got, table) {
			t.Errorf("rows of %v read back as %v", table, got)
		}
	}
}
