package tui

import (
	"io"
	"reflect"

	"github.com/charmbracelet/bubbles/textinput"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/termsafe"
)

// Theme selects the palette.
type Theme string

// Themes.
const (
	ThemeDark  Theme = "dark"
	ThemeLight Theme = "light"
)

// ParseTheme accepts dark or light ("" is dark).
func ParseTheme(s string) (Theme, bool) {
	switch Theme(s) {
	case ThemeDark, "":
		return ThemeDark, true
	case ThemeLight:
		return ThemeLight, true
	}
	return "", false
}

// Styles are the lipgloss styles every view uses. With colour off they carry no
// colour and no attributes at all, so the views must (and do) say everything
// with text and symbols too: ✗ ! i for findings, ▶ for the cursor, ◆ for what
// a finding highlights.
type Styles struct {
	Color bool
	r     *lipgloss.Renderer

	Title, Dim, Bold          lipgloss.Style
	Good, Bad, Warn, Info     lipgloss.Style
	Degraded                  lipgloss.Style
	TabActive, TabInactive    lipgloss.Style
	Selected, Highlight       lipgloss.Style
	Tile, TileBad, TileWarn   lipgloss.Style
	TileSelected, HelpBox     lipgloss.Style
	BarFull, BarEmpty, Header lipgloss.Style
	// Cursor is the text inputs' cursor (reverse video).
	Cursor lipgloss.Style

	// sgr is every SGR sequence these styles produce: the only escape
	// sequences a frame may contain (see Model.View).
	sgr termsafe.SGRSet
}

// NewStyles builds the styles for a theme. With color false every style is
// plain. out is the terminal the renderer measures (io.Discard in tests).
func NewStyles(theme Theme, color bool, out io.Writer) *Styles {
	if out == nil {
		out = io.Discard
	}
	r := lipgloss.NewRenderer(out)
	if color {
		if r.ColorProfile() == termenv.Ascii {
			r.SetColorProfile(termenv.ANSI256)
		}
	} else {
		r.SetColorProfile(termenv.Ascii)
	}
	s := &Styles{Color: color, r: r}
	p := palette(theme)
	n := r.NewStyle
	s.Title = n().Bold(true).Foreground(p.accent)
	s.Dim = n().Foreground(p.dim)
	s.Bold = n().Bold(true)
	s.Good = n().Foreground(p.good)
	s.Bad = n().Foreground(p.bad).Bold(true)
	s.Warn = n().Foreground(p.warn)
	s.Info = n().Foreground(p.info)
	s.Degraded = n().Bold(true).Foreground(p.onBad).Background(p.bad)
	s.TabActive = n().Bold(true).Foreground(p.onAccent).Background(p.accent)
	s.TabInactive = n().Foreground(p.dim)
	s.Selected = n().Bold(true).Foreground(p.accent)
	s.Highlight = n().Bold(true).Foreground(p.warn)
	border := lipgloss.RoundedBorder()
	s.Tile = n().Border(border).BorderForeground(p.dim).Padding(0, 1)
	s.TileBad = s.Tile.BorderForeground(p.bad)
	s.TileWarn = s.Tile.BorderForeground(p.warn)
	s.TileSelected = n().Border(lipgloss.DoubleBorder()).BorderForeground(p.accent).Padding(0, 1)
	s.HelpBox = n().Border(border).BorderForeground(p.accent).Padding(0, 2)
	s.BarFull = n().Foreground(p.good)
	s.BarEmpty = n().Foreground(p.dim)
	s.Header = n().Bold(true)
	s.Cursor = n().Reverse(true)
	s.sgr = collectSGR(s)
	return s
}

// textInput gives a text input these styles: the placeholder dim, the cursor
// in reverse video, the rest plain. bubbles' own defaults are built on the
// process's default renderer, which on a terminal has colour whatever --color
// says: their sequences (the placeholder's colour 240, the cursor's reverse)
// are none of these styles', so the frame filter showed them as text, and let
// their resets through raw with colour off (issue 28).
func (s *Styles) textInput(ti *textinput.Model) {
	plain := s.r.NewStyle()
	ti.PromptStyle, ti.TextStyle = plain, plain
	ti.PlaceholderStyle, ti.CompletionStyle = s.Dim, s.Dim
	ti.Cursor.Style, ti.Cursor.TextStyle = s.Cursor, plain
}

// collectSGR renders every style once, on one line and on two, and keeps the
// escape sequences it produced.
func collectSGR(s *Styles) termsafe.SGRSet {
	var samples []string
	v := reflect.ValueOf(s).Elem()
	for i := range v.NumField() {
		if !v.Type().Field(i).IsExported() {
			continue
		}
		if st, ok := v.Field(i).Interface().(lipgloss.Style); ok {
			samples = append(samples, st.Render("x"), st.Render("x\ny"))
		}
	}
	return termsafe.CollectSGR(samples...)
}

type colors struct {
	accent, onAccent, dim, good, bad, onBad, warn, info lipgloss.Color
}

func palette(t Theme) colors {
	if t == ThemeLight {
		return colors{accent: "25", onAccent: "231", dim: "244", good: "28", bad: "160", onBad: "231", warn: "130", info: "31"}
	}
	return colors{accent: "75", onAccent: "16", dim: "245", good: "78", bad: "203", onBad: "16", warn: "221", info: "117"}
}
