package tui

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
)

// workerColumn is one column of the workers table.
type workerColumn struct {
	title string
	width int
	right bool
	cell  func(r *workerRow) string
	less  func(a, b *workerRow) int
}

var workerColumns = []workerColumn{
	{"POD", 0, false, func(r *workerRow) string { return safe(r.Pod) }, func(a, b *workerRow) int { return cmp.Compare(a.Pod, b.Pod) }},
	{"ROLE", 8, false, func(r *workerRow) string { return safe(r.Role) }, func(a, b *workerRow) int { return cmp.Compare(a.Role, b.Role) }},
	{"DOMAIN", 12, false, func(r *workerRow) string { return safe(orDash(r.Domain)) }, func(a, b *workerRow) int { return cmp.Compare(a.Domain, b.Domain) }},
	{"NODE", 14, false, func(r *workerRow) string { return safe(orDash(r.Node)) }, func(a, b *workerRow) int { return cmp.Compare(a.Node, b.Node) }},
	{"READY", 5, false, func(r *workerRow) string {
		switch {
		case r.Unregistered:
			return "unreg" // ready, but the router does not know it
		case r.Ready:
			return "✓"
		}
		return "✗"
	}, func(a, b *workerRow) int {
		return cmp.Compare(boolInt(a.Ready && !a.Unregistered), boolInt(b.Ready && !b.Unregistered))
	}},
	{"DP", 3, true, func(r *workerRow) string { return fmt.Sprint(r.DpRanks) }, func(a, b *workerRow) int { return cmp.Compare(a.DpRanks, b.DpRanks) }},
	{"KV BLK", 7, true, func(r *workerRow) string { return count(r.KVBlocks) }, func(a, b *workerRow) int { return cmp.Compare(a.KVBlocks, b.KVBlocks) }},
	{"ACT DEC", 7, true, func(r *workerRow) string { return count(r.ActiveDecode) }, func(a, b *workerRow) int { return cmp.Compare(a.ActiveDecode, b.ActiveDecode) }},
	{"PF TOK", 7, true, func(r *workerRow) string { return count(r.PrefillTokens) }, func(a, b *workerRow) int { return cmp.Compare(a.PrefillTokens, b.PrefillTokens) }},
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// workersPage is the sortable, filterable table of worker pods.
type workersPage struct {
	c       *common
	all     []workerRow
	rows    []workerRow // filtered and sorted
	cursor  int
	offset  int
	sortCol int
	desc    bool
	filter  textinput.Model
	editing bool
}

func newWorkersPage(c *common) *workersPage {
	ti := textinput.New()
	ti.Cursor.SetMode(cursor.CursorStatic) // no blink: nothing ticks while idle
	ti.Prompt = "/"
	ti.Placeholder = "text, role:prefill, domain:us-east-1a, node:…"
	ti.CharLimit = 200
	c.st.textInput(&ti)
	return &workersPage{c: c, filter: ti}
}

func (p *workersPage) capturing() bool { return p.editing }

func (p *workersPage) hints() []key.Binding {
	k := p.c.keys
	return []key.Binding{k.Filter, k.Sort, k.SortReverse}
}

func (p *workersPage) dataChanged() tea.Cmd {
	p.all = nil
	if i := p.c.deployment(); i >= 0 {
		var rep *model.DeploymentReport
		if i < len(p.c.data.Report.Deployments) {
			rep = &p.c.data.Report.Deployments[i]
		}
		p.all = workerRows(&p.c.data.Snapshot.Deployments[i], rep)
	}
	p.apply()
	return nil
}

// apply filters and sorts the rows, keeping the cursor in range.
func (p *workersPage) apply() {
	terms := strings.Fields(strings.ToLower(p.filter.Value()))
	p.rows = p.rows[:0]
	for _, r := range p.all {
		if matchWorker(&r, terms) {
			p.rows = append(p.rows, r)
		}
	}
	col := workerColumns[p.sortCol]
	slices.SortStableFunc(p.rows, func(a, b workerRow) int {
		c := col.less(&a, &b)
		if p.desc {
			c = -c
		}
		return cmp.Or(c, cmp.Compare(a.Pod, b.Pod))
	})
	p.cursor = min(p.cursor, max(len(p.rows)-1, 0))
}

// matchWorker: every term must match; role:, domain: and node: match that
// field exactly (role) or as a substring, other terms any field.
func matchWorker(r *workerRow, terms []string) bool {
	for _, t := range terms {
		k, v, ok := strings.Cut(t, ":")
		switch {
		case ok && k == "role":
			if r.Role != v {
				return false
			}
		case ok && k == "domain":
			if !strings.Contains(strings.ToLower(r.Domain), v) {
				return false
			}
		case ok && k == "node":
			if !strings.Contains(strings.ToLower(r.Node), v) {
				return false
			}
		default:
			hay := strings.ToLower(r.Pod + " " + r.Role + " " + r.Domain + " " + r.Node)
			if !strings.Contains(hay, t) {
				return false
			}
		}
	}
	return true
}

func (p *workersPage) update(msg tea.Msg) tea.Cmd {
	k := p.c.keys
	km, ok := msg.(tea.KeyMsg)
	if p.editing {
		if ok {
			switch km.Type {
			case tea.KeyEnter:
				p.editing = false
				p.filter.Blur()
				return nil
			case tea.KeyEsc:
				p.editing = false
				p.filter.Blur()
				p.filter.SetValue("")
				p.apply()
				return nil
			}
		}
		var cmd tea.Cmd
		p.filter, cmd = p.filter.Update(msg)
		p.apply()
		return cmd
	}
	if !ok {
		return nil
	}
	switch {
	case key.Matches(km, k.Filter):
		p.editing = true
		return p.filter.Focus()
	case key.Matches(km, k.Back):
		p.filter.SetValue("")
		p.apply()
	case key.Matches(km, k.Sort):
		p.sortCol = (p.sortCol + 1) % len(workerColumns)
		p.apply()
	case key.Matches(km, k.SortReverse):
		p.desc = !p.desc
		p.apply()
	case key.Matches(km, k.Up):
		p.cursor = max(p.cursor-1, 0)
	case key.Matches(km, k.Down):
		p.cursor = min(p.cursor+1, max(len(p.rows)-1, 0))
	}
	return nil
}

func (p *workersPage) view(width, height int) string {
	st := p.c.st
	if p.c.deployment() < 0 {
		return "No DynamoGraphDeployment in scope."
	}
	cols := slices.Clone(workerColumns)
	if width < 100 {
		cols = slices.DeleteFunc(cols, func(c workerColumn) bool { return c.title == "NODE" && workerColumns[p.sortCol].title != "NODE" })
	}
	// Text columns are as wide as their content (within bounds), so that a
	// long POD does not take the room NODE needs; POD gets the rest, up to its
	// longest name.
	pods := make([]string, len(p.all))
	for i := range p.all {
		pods[i] = safe(p.all[i].Pod)
	}
	for i := range cols {
		switch cols[i].title {
		case "DOMAIN":
			cols[i].width = contentWidth(p.all, cols[i], 6, 24)
		case "NODE":
			cols[i].width = contentWidth(p.all, cols[i], 4, 32)
		}
	}
	fixed := 2
	for _, c := range cols[1:] {
		fixed += c.width + 1
	}
	longest := 3
	for _, n := range pods {
		longest = max(longest, lipgloss.Width(n))
	}
	cols[0].width = max(min(width-fixed-1, longest), 12)
	names := newNameFitter(pods, cols[0].width)
	podCell := cols[0].cell
	cols[0].cell = func(r *workerRow) string { return names.fit(podCell(r)) }
	arrow := "▲"
	if p.desc {
		arrow = "▼"
	}
	status := fmt.Sprintf("%d of %d worker(s)  sort: %s %s", len(p.rows), len(p.all), workerColumns[p.sortCol].title, arrow)
	filterLine := st.Dim.Render("/ filters")
	if p.editing || p.filter.Value() != "" {
		filterLine = p.filter.View()
	}
	lines := []string{fit(status+"   "+filterLine, width)}
	var head strings.Builder
	head.WriteString("  ")
	for _, c := range cols {
		t := c.title
		if c.title == workerColumns[p.sortCol].title {
			t += arrow
		}
		head.WriteString(cell(t, c.width, c.right) + " ")
	}
	lines = append(lines, st.Header.Render(fit(head.String(), width)))
	visible := max(height-len(lines), 1)
	if p.cursor < p.offset {
		p.offset = p.cursor
	}
	if p.cursor >= p.offset+visible {
		p.offset = p.cursor - visible + 1
	}
	p.offset = min(p.offset, max(len(p.rows)-visible, 0))
	for i := p.offset; i < len(p.rows) && i < p.offset+visible; i++ {
		r := &p.rows[i]
		var b strings.Builder
		switch {
		case i == p.cursor:
			b.WriteString("▶ ")
		case p.c.hl.active && p.c.hl.pods[r.Pod]:
			b.WriteString("◆ ")
		default:
			b.WriteString("  ")
		}
		for _, c := range cols {
			b.WriteString(cell(c.cell(r), c.width, c.right) + " ")
		}
		line := fit(b.String(), width)
		switch {
		case i == p.cursor:
			line = st.Selected.Render(line)
		case p.c.hl.active && p.c.hl.pods[r.Pod]:
			line = st.Highlight.Render(line)
		case !r.Ready:
			line = st.Warn.Render(line)
		}
		lines = append(lines, line)
	}
	if len(p.rows) == 0 {
		lines = append(lines, st.Dim.Render("  no worker matches the filter (esc clears it)"))
	}
	return strings.Join(lines, "\n")
}

// contentWidth is the width of a column's widest cell (plus two spaces of
// air) or title, within [lo, hi].
func contentWidth(rows []workerRow, c workerColumn, lo, hi int) int {
	w := max(lipgloss.Width(c.title)+1, lo)
	for i := range rows {
		w = max(w, lipgloss.Width(c.cell(&rows[i]))+2)
	}
	return min(w, hi)
}

// cell fits s to width, right-aligned when right.
func cell(s string, width int, right bool) string {
	if right {
		if w := len([]rune(s)); w < width {
			return strings.Repeat(" ", width-w) + s
		}
	}
	return fit(s, width)
}
