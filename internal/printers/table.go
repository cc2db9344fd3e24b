package printers

import (
	"bytes"
	"io"
	"strings"
	"text/tabwriter"
)

// Column describes one table column. Wide columns appear only with -o wide, as
// kubectl's priority>0 columns do.
type Column struct {
	Header string
	Wide   bool
}

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

// Render writes the table.
func (t *Table) Render(w io.Writer, opts TableOptions) error {
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 6, 4, 3, ' ', 0)
	keep := make([]int, 0, len(t.Columns))
	for i, c := range t.Columns {
		if !c.Wide || opts.Wide {
			keep = append(keep, i)
		}
	}
	writeRow := func(cells []string) error {
		parts := make([]string, len(keep))
		for j, i := range keep {
			cell := ""
			if i < len(cells) {
				cell = sanitizeCell(cells[i])
			}
			parts[j] = cell
		}
		_, err := io.WriteString(tw, strings.Join(parts, "\t")+"\n")
		return err
	}
	if !opts.NoHeaders {
		headers := make([]string, len(t.Columns))
		for i, c := range t.Columns {
			headers[i] = strings.ToUpper(c.Header)
		}
		if err := writeRow(headers); err != nil {
			return err
		}
	}
	for _, r := range t.Rows {
		if err := writeRow(r); err != nil {
			return err
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	out := buf.Bytes()
	if !opts.NoHeaders && opts.HeaderStyle != nil {
		// Style the header line after alignment: escape sequences would
		// otherwise count towards the column widths.
		nl := bytes.IndexByte(out, '\n')
		header := strings.TrimRight(string(out[:nl]), " ")
		out = append([]byte(opts.HeaderStyle(header)), out[nl:]...)
	}
	_, err := w.Write(out)
	return err
}

// sanitizeCell keeps one cell on one line and out of tabwriter's way.
func sanitizeCell(s string) string {
	if s == "" {
		return "<none>"
	}
	return strings.NewReplacer("\t", " ", "\n", " ", "\r", " ").Replace(s)
}
