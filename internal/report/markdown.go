package report

import (
	"strings"
)

// Table renders a Markdown table; the first column is left-aligned, the others right-aligned.
func Table(header []string, rows [][]string) string {
	var b strings.Builder
	b.WriteString("| " + strings.Join(header, " | ") + " |\n|")
	for i := range header {
		if i == 0 {
			b.WriteString(" :--- |")
		} else {
			b.WriteString(" ---: |")
		}
	}
	b.WriteString("\n")
	for _, r := range rows {
		cells := make([]string, len(header))
		copy(cells, r)
		for i, c := range cells {
			cells[i] = strings.ReplaceAll(c, "|", "\\|")
		}
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	return b.String()
}

// Image is a Markdown image link to a chart file beside the report.
func Image(alt, file string) string { return "![" + alt + "](" + file + ")\n" }
