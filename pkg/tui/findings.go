package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
)

// findingsPage lists the selected deployment's findings; the one under the
// cursor is selected, and highlights (◆) its domain value on the topology tab
// and its pods in the workers table.
type findingsPage struct {
	c      *common
	idx    []int
	cursor int
}

func newFindingsPage(c *common) *findingsPage { return &findingsPage{c: c} }

func (p *findingsPage) capturing() bool { return false }

func (p *findingsPage) hints() []key.Binding {
	k := p.c.keys
	return []key.Binding{k.Up, k.Down, k.ClearHighlight}
}

func (p *findingsPage) dataChanged() tea.Cmd {
	p.idx = deploymentFindings(p.c)
	p.cursor = min(p.cursor, max(len(p.idx)-1, 0))
	if p.c.hl.active {
		p.selectCursor()
	}
	return nil
}

func (p *findingsPage) finding() *model.Finding {
	if p.cursor >= len(p.idx) {
		return nil
	}
	return &p.c.data.Report.Findings[p.idx[p.cursor]]
}

// selectCursor makes the finding under the cursor the highlight.
func (p *findingsPage) selectCursor() {
	f := p.finding()
	if f == nil {
		p.c.hl = highlight{}
		return
	}
	h := highlight{active: true, domain: f.Domain, pods: map[string]bool{}}
	for _, o := range f.Objects {
		if pod, ok := strings.CutPrefix(o, "pod/"); ok {
			h.pods[pod] = true
		}
	}
	if f.Domain != "" {
		// Every worker in the domain value is affected too.
		dep := &p.c.data.Snapshot.Deployments[p.c.deployment()]
		for _, w := range dep.Workers {
			if w.Domain.Effective() == f.Domain {
				h.pods[w.Pod] = true
			}
		}
	}
	p.c.hl = h
}

func (p *findingsPage) update(msg tea.Msg) tea.Cmd {
	km, ok := msg.(tea.KeyMsg)
	if !ok || len(p.idx) == 0 {
		return nil
	}
	k := p.c.keys
	switch {
	case key.Matches(km, k.Up):
		p.cursor = max(p.cursor-1, 0)
		p.selectCursor()
	case key.Matches(km, k.Down):
		p.cursor = min(p.cursor+1, len(p.idx)-1)
		p.selectCursor()
	case key.Matches(km, k.Enter):
		p.selectCursor()
	case key.Matches(km, k.ClearHighlight, k.Back):
		p.c.hl = highlight{}
	}
	return nil
}

func (p *findingsPage) view(width, height int) string {
	st := p.c.st
	if p.c.deployment() < 0 {
		return "No DynamoGraphDeployment in scope."
	}
	if len(p.idx) == 0 {
		return st.Good.Render("✓ No findings.") + " The topology matches the transfer policy."
	}
	var lines []string
	listH := min(len(p.idx), max(height/2-1, 3))
	first := max(0, p.cursor-listH+1)
	for i := first; i < len(p.idx) && i < first+listH; i++ {
		f := &p.c.data.Report.Findings[p.idx[i]]
		mark := "  "
		if i == p.cursor {
			mark = "▶ "
		}
		where := safe(f.Domain)
		line := fmt.Sprintf("%s%s %-7s %s  %s", mark, severitySymbol(f.Severity), f.Severity, f.ID, where)
		line = st.severity(f.Severity, fit(line, width))
		if i == p.cursor {
			line = st.Bold.Render(line)
		}
		lines = append(lines, line)
	}
	f := p.finding()
	lines = append(lines, st.Dim.Render(strings.Repeat("─", width)))
	hl := "enter highlights"
	if p.c.hl.active {
		hl = "◆ marks the affected domain and workers on the other tabs (c clears)"
	}
	lines = append(lines, st.severity(f.Severity, severitySymbol(f.Severity)+" "+string(f.Severity)+" "+f.ID)+"  "+st.Dim.Render(hl))
	for _, l := range wrap(safeText(f.Message), width-2) {
		lines = append(lines, "  "+l)
	}
	if f.Hint != "" {
		first := true
		for _, l := range wrap(safeText(f.Hint), width-7) {
			if first {
				lines = append(lines, "  "+st.Good.Render("fix:")+" "+l)
				first = false
			} else {
				lines = append(lines, "       "+l)
			}
		}
	}
	if len(f.Objects) > 0 {
		for _, l := range wrap("objects: "+safeText(strings.Join(f.Objects, ", ")), width-2) {
			lines = append(lines, "  "+st.Dim.Render(l))
		}
	}
	return strings.Join(lines, "\n")
}
