package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/lipgloss"
)

// helpLines are the help overlay's lines, laid out in as many columns as the
// width allows.
func (m *Model) helpLines(width int) []string {
	st := m.c.st
	var blocks [][]string
	colW := 0
	for _, g := range m.c.keys.groups() {
		block := []string{st.Bold.Render(g.Title)}
		for _, b := range g.Keys {
			l := fmt.Sprintf("%-10s %s", b.Help().Key, b.Help().Desc)
			colW = max(colW, lipgloss.Width(l))
			block = append(block, l)
		}
		blocks = append(blocks, append(block, ""))
	}
	colW += 3
	ncols := max(1, min(len(blocks), (width-6)/colW))
	total := 0
	for _, b := range blocks {
		total += len(b)
	}
	budget := (total + ncols - 1) / ncols
	var cols [][]string
	var cur []string
	for _, b := range blocks {
		if len(cur) > 0 && len(cur)+len(b) > budget && len(cols) < ncols-1 {
			cols = append(cols, cur)
			cur = nil
		}
		cur = append(cur, b...)
	}
	cols = append(cols, cur)
	var out []string
	for i := 0; ; i++ {
		var line strings.Builder
		more := false
		for _, c := range cols {
			if i < len(c) {
				more = true
				line.WriteString(fit(c[i], colW))
			} else {
				line.WriteString(strings.Repeat(" ", colW))
			}
		}
		if !more {
			break
		}
		out = append(out, strings.TrimRight(line.String(), " "))
	}
	return out
}

// helpView is the `?` overlay: every key, by section; ↑↓ scroll it when it
// does not fit.
func (m *Model) helpView(width, height int) string {
	st := m.c.st
	lines := m.helpLines(width)
	avail := max(height-4, 1)
	m.helpOffset = max(min(m.helpOffset, len(lines)-avail), 0)
	more := ""
	if len(lines) > avail {
		more = fmt.Sprintf("  ↑↓ scroll (%d–%d of %d)", m.helpOffset+1, min(m.helpOffset+avail, len(lines)), len(lines))
		lines = lines[m.helpOffset:min(m.helpOffset+avail, len(lines))]
	}
	title := st.Title.Render("Keys") + st.Dim.Render("  ? or esc closes"+more)
	box := st.HelpBox.Render(title + "\n" + strings.Join(lines, "\n"))
	return lipgloss.Place(width, height, lipgloss.Center, lipgloss.Top, box)
}
