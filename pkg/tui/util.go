package tui

import (
	"math"
	"strconv"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/termsafe"
)

// safe escapes text that comes from the cluster — names, labels, values and
// the messages and explanations that quote them — where it is placed into a
// cell of the frame, before the layout: every unsafe rune is shown as an
// escape (termsafe.Escape), so no cluster byte can form an escape sequence, not
// even one of the dashboard's own SGR sequences, which the frame filter
// (Model.View) keeps; and its width is what it shows, so fit and
// termsafe.Truncate cut it to its cell (an escape sequence measures zero
// cells, and escaped only at the end of the frame a label grew past its tile
// and pushed the tiles beside it off the screen: issue 29, item 9). Every
// string from the data passes here, or through safeText, on its way to a cell.
func safe(s string) string { return termsafe.Escape(s) }

// safeText is safe for free text that is then wrapped (wrap, wrapAtMost):
// newlines (paragraphs) and tabs (breaks between words) stay.
func safeText(s string) string { return termsafe.EscapeText(s) }

// fit truncates s (ANSI-aware) to width cells, with an ellipsis, and pads it.
func fit(s string, width int) string {
	if width <= 0 {
		return ""
	}
	w := lipgloss.Width(s)
	if w > width {
		return ansi.Truncate(s, width, "…")
	}
	return s + strings.Repeat(" ", width-w)
}

// clip cuts every line of s to width cells and keeps at most height lines.
func clip(s string, width, height int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > height {
		lines = lines[:max(height, 0)]
	}
	for i, l := range lines {
		if lipgloss.Width(l) > width {
			lines[i] = ansi.Truncate(l, width, "")
		}
	}
	return strings.Join(lines, "\n")
}

// bar draws a width-cell bar filled to frac (0..1): █ filled, ░ empty.
func (s *Styles) bar(frac float64, width int) string {
	if width <= 0 {
		return ""
	}
	if math.IsNaN(frac) || frac < 0 {
		frac = 0
	}
	frac = min(frac, 1)
	n := int(math.Round(frac * float64(width)))
	return s.BarFull.Render(strings.Repeat("█", n)) + s.BarEmpty.Render(strings.Repeat("░", width-n))
}

// severitySymbol is the symbol of a finding severity: it carries the meaning
// when colour is off.
func severitySymbol(sev model.Severity) string {
	switch sev {
	case model.SeverityError:
		return "✗"
	case model.SeverityWarning:
		return "!"
	}
	return "i"
}

func (s *Styles) severity(sev model.Severity, text string) string {
	switch sev {
	case model.SeverityError:
		return s.Bad.Render(text)
	case model.SeverityWarning:
		return s.Warn.Render(text)
	}
	return s.Info.Render(text)
}

// num prints a float compactly (no trailing zeros).
func num(v float64) string {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// short prints a float with at most 4 significant decimals.
func short(v float64) string {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return "-"
	}
	return strconv.FormatFloat(math.Round(v*1e4)/1e4, 'f', -1, 64)
}

func pct(p float64) string {
	if p <= 0 {
		return "0%"
	}
	if p >= 1 {
		return "100%"
	}
	return strconv.FormatFloat(math.Round(p*1000)/10, 'f', -1, 64) + "%"
}

// count prints n, or "-" when unknown (negative).
func count(n int64) string {
	if n < 0 {
		return "-"
	}
	return strconv.FormatInt(n, 10)
}

// humanTokens prints a token count as 12k, 1.5M.
func humanTokens(n uint64) string {
	switch {
	case n >= 1_000_000:
		return strconv.FormatFloat(math.Round(float64(n)/1e5)/10, 'f', -1, 64) + "M"
	case n >= 1_000:
		return strconv.FormatFloat(math.Round(float64(n)/1e2)/10, 'f', -1, 64) + "k"
	}
	return strconv.FormatUint(n, 10)
}

// wrap breaks text into lines of at most width cells at spaces.
func wrap(text string, width int) []string {
	if width < 10 {
		width = 10
	}
	var lines []string
	for para := range strings.SplitSeq(text, "\n") {
		line := ""
		for _, w := range strings.Fields(para) {
			switch {
			case line == "":
				line = w
			case lipgloss.Width(line)+1+lipgloss.Width(w) <= width:
				line += " " + w
			default:
				lines = append(lines, line)
				line = w
			}
		}
		lines = append(lines, line)
	}
	return lines
}

// wrapItems joins items with sep into lines of at most width cells, breaking
// only between items: the first line starts with first, the others with
// indent. An item wider than a line on its own is cut with an ellipsis.
func wrapItems(first, indent string, items []string, sep string, width int) []string {
	var lines []string
	line, empty := first, true
	for _, it := range items {
		switch {
		case empty:
			line += it
		case lipgloss.Width(line)+lipgloss.Width(sep)+lipgloss.Width(it) <= width:
			line += sep + it
		default:
			lines = append(lines, fit(line, width))
			line = indent + it
		}
		empty = false
	}
	return append(lines, fit(line, width))
}

// orDash returns s, or "-" when empty.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
