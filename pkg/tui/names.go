package tui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// nameFitter shows names (pods, workers) in a column of a given width so that
// they stay distinguishable, as k9s keeps NAME readable: when the longest does
// not fit, the start every name shares (up to a separator: qwen3-32b-0-) is
// dropped, marked with "…", keeping as much of the end as fits (the part that
// tells names apart, and some context before it); a name whose own part does
// not fit is cut in the middle, keeping its start and its unique end.
type nameFitter struct {
	width  int
	prefix string
}

func newNameFitter(names []string, width int) nameFitter {
	f := nameFitter{width: width}
	longest := 0
	for _, n := range names {
		longest = max(longest, ansi.StringWidth(n))
	}
	if longest <= width || len(names) < 2 {
		return f
	}
	p := names[0]
	for _, n := range names[1:] {
		for !strings.HasPrefix(n, p) {
			p = p[:len(p)-1]
		}
	}
	// Cut back to the last separator, so that a name never starts mid-word.
	if i := strings.LastIndexAny(p, "-._/"); i >= 3 {
		f.prefix = p[:i+1]
	}
	return f
}

// fit returns name shortened to the column's width.
func (f nameFitter) fit(name string) string {
	w := ansi.StringWidth(name)
	if w <= f.width {
		return name
	}
	if f.prefix != "" && strings.HasPrefix(name, f.prefix) && f.width > 2 {
		rest := name[len(f.prefix):]
		if ansi.StringWidth(rest)+1 <= f.width {
			return "…" + ansi.TruncateLeft(name, w-(f.width-1), "")
		}
		return "…" + middleCut(rest, f.width-1)
	}
	return middleCut(name, f.width)
}

// middleCut cuts s to width cells with an ellipsis in the middle.
func middleCut(s string, width int) string {
	w := ansi.StringWidth(s)
	if w <= width {
		return s
	}
	if width <= 1 {
		return ansi.Truncate("…", width, "")
	}
	tail := (width - 1) / 2
	head := width - 1 - tail
	return ansi.Truncate(s, head, "") + "…" + ansi.TruncateLeft(s, w-tail, "")
}
