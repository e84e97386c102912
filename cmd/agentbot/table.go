package main

import (
	"io"
	"strings"

	"github.com/rivo/uniseg"
)

// writeTable writes rows as columns aligned by their width on a terminal,
// two spaces apart: a wide emoji or CJK character takes two cells, and so
// does an emoji made wide by a variation selector ("✏️"), as text/tabwriter,
// which counts runes, does not know. No line ends in blanks.
func writeTable(w io.Writer, rows [][]string) error {
	var widths []int
	for _, r := range rows {
		for i, cell := range r {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], uniseg.StringWidth(cell))
		}
	}
	var b strings.Builder
	for _, r := range rows {
		var line strings.Builder
		for i, cell := range r {
			line.WriteString(cell)
			if i < len(r)-1 {
				line.WriteString(strings.Repeat(" ", widths[i]-uniseg.StringWidth(cell)+2))
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ")) // an empty last cell
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}
