package orchestrator

import (
	"fmt"
	"strings"

	"tilegen/internal/variant"
)

// claims renders requirements: "any shape" or "M%64 N%64 K%8 ld%4".
func claims(r variant.Requirements) string {
	if r.Arbitrary() {
		return "any shape"
	}
	var parts []string
	for _, c := range []struct {
		n string
		v int
	}{{"M", r.MMultiple}, {"N", r.NMultiple}, {"K", r.KMultiple}, {"ld", r.LDMultiple}} {
		if c.v > 1 {
			parts = append(parts, fmt.Sprintf("%s%%%d", c.n, c.v))
		}
	}
	return strings.Join(parts, " ")
}
