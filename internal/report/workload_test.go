package report

import (
	"strings"
	"testing"

	"tilegen/internal/dispatch"
)

// TestWorkloadMarkdownEscapes: a corpus source is text from an input file; it must stay inside its
// table cell and start no markup.
func TestWorkloadMarkdownEscapes(t *testing.T) {
	s := &dispatch.Summary{GPU: "GPU <b>x</b>", Folds: 5, FoldRule: dispatch.FoldRule, Shapes: []dispatch.ShapeResult{{
		Shape: "1x2x3", Source: "a | b <script>x</script> [link](http://x) `code` *em* _u_", Regime: "gemv-m", Variant: "v1", VariantCV: "v2",
		Ratio: 1, RatioCV: 0.5, UntimedCV: true, BestRatio: 1.5,
	}}}
	md := WorkloadMarkdown(s, "")
	for _, bad := range []string{"<script>", "<b>", "[link]", "`code`", "*em*", "_u_", "a | b"} {
		if strings.Contains(md, bad) {
			t.Errorf("markdown carries %q unescaped:\n%s", bad, md)
		}
	}
	var row string
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, "| 1x2x3 |") {
			row = l
		}
	}
	// 9 columns: 10 unescaped pipes.
	if n := strings.Count(row, "|") - strings.Count(row, `\|`); n != 10 {
		t.Errorf("the shape's row has %d cell separators, want 10: %s", n, row)
	}
	if !strings.Contains(row, "v2 (untimed)") {
		t.Errorf("an untimed held-out pick is not marked: %s", row)
	}
}
