package printers

import (
	"bytes"
	"io"
	"strings"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/termsafe"
)

// Column describes one table column. Wide columns appear only with -o wide, as
// kubectl's priority>0 columns do.
type Column struct {
	Header string
	Wide   bool
	// MaxWidth overrides the cut (MaxCellWidth, MaxLastCellWidth) in terminal
	// cells; Unlimited keeps the cells whole, for lists whose items the printer
	// cut itself (Cell) and for the plugin's own text.
	MaxWidth int
}

// Unlimited is the Column.MaxWidth of a column that is never cut.
const Unlimited = -1

// Table is a kubectl-look-alike table: upper-case headers, columns separated by at
// least three spaces, wide-only columns hidden unless requested.
type Table struct {
	Columns []Column
	Rows    [][]string
}

// TableOptions control rendering.
type TableOptions struct {
	Wide      bool
	NoHeaders bool
	// HeaderStyle, when set, decorates the header row (e.g. bold on a colour terminal).
	// It must not change the visible width of the text.
	HeaderStyle func(string) string
}

// AddRow appends a row; it must have one cell per column.
func (t *Table) AddRow(cells ...string) { t.Rows = append(t.Rows, cells) }

// MaxCellWidth is the widest a table cell prints, in terminal cells: longer
// values (which come from cluster data) are cut in the middle with an ellipsis.
// The last column, where tables put sentences (reasons, fixes), may be
// MaxLastCellWidth wide. -o json and -o yaml carry every value in full.
const (
	MaxCellWidth     = 80
	MaxLastCellWidth = 240
)

// Layout of the columns, as kubectl's tabwriter settings: a column is its
// widest cell plus cellPadding, and at least minCellWidth.
const (
	minCellWidth = 6
	cellPadding  = 3
)

// Render writes the table. Every cell is escaped (termsafe.Escape), kept on one
// line and cut to MaxCellWidth; columns are aligned on display width, so colour
// markers and wide runes do not shift them.
func (t *Table) Render(w io.Writer, opts TableOptions) error {
	keep := make([]int, 0, len(t.Columns))
	for i, c := range t.Columns {
		if !c.Wide || opts.Wide {
			keep = append(keep, i)
		}
	}
	if len(keep) == 0 {
		return nil
	}
	var rows [][]string
	if !opts.NoHeaders {
		headers := make([]string, len(keep))
		for j, i := range keep {
			headers[j] = strings.ToUpper(t.Columns[i].Header)
		}
		rows = append(rows, headers)
	}
	for _, r := range t.Rows {
		cells := make([]string, len(keep))
		for j, i := range keep {
			cell := ""
			if i < len(r) {
				cell = r[i]
			}
			limit := MaxCellWidth
			if j == len(keep)-1 {
				limit = MaxLastCellWidth
			}
			if m := t.Columns[i].MaxWidth; m != 0 {
				limit = m
			}
			cells[j] = sanitizeCell(cell, limit)
		}
		rows = append(rows, cells)
	}
	widths := make([]int, len(keep))
	cellW := make([][]int, len(rows))
	for r, cells := range rows {
		cellW[r] = make([]int, len(cells))
		for j, c := range cells {
			cw := termsafe.Width(c)
			cellW[r][j] = cw
			widths[j] = max(widths[j], cw)
		}
	}
	var buf bytes.Buffer
	for r, cells := range rows {
		var line strings.Builder
		for j, c := range cells {
			line.WriteString(c)
			if j < len(cells)-1 {
				line.WriteString(strings.Repeat(" ", max(widths[j]+cellPadding, minCellWidth)-cellW[r][j]))
			}
		}
		text := line.String()
		if r == 0 && !opts.NoHeaders && opts.HeaderStyle != nil {
			text = opts.HeaderStyle(strings.TrimRight(text, " "))
		}
		buf.WriteString(text)
		buf.WriteByte('\n')
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// CellLimit is the width Render cuts column col's cells to: the column's
// MaxWidth, else MaxLastCellWidth for the last column shown, else
// MaxCellWidth.
func (t *Table) CellLimit(col int, wide bool) int {
	if m := t.Columns[col].MaxWidth; m != 0 {
		return m
	}
	last := -1
	for i, c := range t.Columns {
		if !c.Wide || wide {
			last = i
		}
	}
	if col == last {
		return MaxLastCellWidth
	}
	return MaxCellWidth
}

// JoinCut is strings.Join(items, sep) as Render prints it in a column cut at
// limit (CellLimit), built without joining what the cut drops when every item
// and sep are printable ASCII: a cell listing thousands of pod names costs its
// width, not its length. Render prints JoinCut's result exactly as it prints
// the whole join.
func JoinCut(items []string, sep string, limit int) string {
	if limit < 2 || !termsafe.PlainASCII(sep) {
		return strings.Join(items, sep)
	}
	n := 0
	for i, it := range items {
		if !termsafe.PlainASCII(it) {
			return strings.Join(items, sep)
		}
		if i > 0 {
			n += len(sep)
		}
		n += len(it)
	}
	if n <= limit {
		return strings.Join(items, sep)
	}
	tail := (limit - 1) / 3
	head := limit - 1 - tail
	var b strings.Builder
	b.Grow(limit + 2)
	for i := 0; b.Len() < head; i++ {
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(items[i])
	}
	out := b.String()[:head] + "…"
	// The last tail bytes of the join, from the end.
	var end []string
	size := 0
	for i := len(items) - 1; size < tail; i-- {
		end = append(end, items[i])
		size += len(items[i])
		if i > 0 {
			end = append(end, sep)
			size += len(sep)
		}
	}
	var e strings.Builder
	for i := len(end) - 1; i >= 0; i-- {
		e.WriteString(end[i])
	}
	es := e.String()
	return out + es[len(es)-tail:]
}

// sanitizeCell keeps one cell on one line, safe for a terminal, and at most
// MaxCellWidth wide. Colour markers a printer put around a value survive; the
// value inside must be escaped by whoever decorated it (Cell does both).
func sanitizeCell(s string, limit int) string {
	if s == "" {
		return "<none>"
	}
	if termsafe.Strip(s) != s {
		// Decorated by the printer: keep its colour, escape the rest (Cell has
		// cut the value to width before it was decorated).
		return termsafe.EscapeMarked(oneLine.Replace(s))
	}
	s = termsafe.Escape(oneLine.Replace(s))
	if limit == Unlimited {
		return s
	}
	return termsafe.Truncate(s, limit)
}

// Cells is Cell applied to every item of a list, for a column of lists whose
// MaxWidth is Unlimited.
func Cells(items []string) []string {
	out := make([]string, len(items))
	for i, s := range items {
		out[i] = Cell(s)
	}
	return out
}

// oneLine turns line breaks and tabs into spaces: a cell stays on its row.
var oneLine = strings.NewReplacer("\t", " ", "\n", " ", "\r", " ")

// Cell prepares a value for decoration: escaped and cut like any cell, so that a
// printer can colour it (Bold, Color) and still get a safe table.
func Cell(s string) string {
	if s == "" {
		return "<none>"
	}
	return termsafe.Truncate(termsafe.Escape(oneLine.Replace(s)), MaxCellWidth)
}
