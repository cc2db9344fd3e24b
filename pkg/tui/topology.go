package tui

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/termsafe"
)

// tileWidth is a topology tile's outer width: wide enough for the longest
// finding id with its severity symbol ("✗ PrefillDomainWithoutDecode").
const tileWidth = 32

// topologyPage shows one tile per value of the transfer domain; enter expands
// the hierarchy (zone › rack › host) under the selected tile.
type topologyPage struct {
	c        *common
	cursor   int
	expanded bool
}

func newTopologyPage(c *common) *topologyPage { return &topologyPage{c: c} }

func (p *topologyPage) capturing() bool { return false }

func (p *topologyPage) hints() []key.Binding {
	k := p.c.keys
	return []key.Binding{k.Left, k.Right, k.Enter}
}

func (p *topologyPage) report() *model.DeploymentReport {
	i := p.c.deployment()
	if i < 0 {
		return nil
	}
	return &p.c.data.Report.Deployments[i]
}

func (p *topologyPage) dataChanged() tea.Cmd {
	if r := p.report(); r == nil || p.cursor >= len(r.Domains) {
		p.cursor = 0
	}
	return nil
}

func (p *topologyPage) update(msg tea.Msg) tea.Cmd {
	km, ok := msg.(tea.KeyMsg)
	r := p.report()
	if !ok || r == nil {
		return nil
	}
	k := p.c.keys
	n := len(r.Domains)
	perRow := max(1, p.c.width/tileWidth)
	switch {
	case key.Matches(km, k.Left):
		p.cursor = max(p.cursor-1, 0)
	case key.Matches(km, k.Right):
		p.cursor = min(p.cursor+1, n-1)
	case key.Matches(km, k.Up):
		if p.cursor-perRow >= 0 {
			p.cursor -= perRow
		}
	case key.Matches(km, k.Down):
		if p.cursor+perRow < n {
			p.cursor += perRow
		}
	case key.Matches(km, k.Enter):
		p.expanded = !p.expanded
	case key.Matches(km, k.Back):
		p.expanded = false
	}
	return nil
}

func (p *topologyPage) view(width, height int) string {
	r := p.report()
	if r == nil {
		return "No DynamoGraphDeployment in scope."
	}
	if len(r.Domains) == 0 {
		return "No prefill or decode workers."
	}
	var maxKV uint64
	for _, d := range r.Domains {
		maxKV = max(maxKV, d.Prefill.KvTokens+d.Decode.KvTokens+d.Aggregated.KvTokens)
	}
	perRow := max(1, width/tileWidth)
	nRows := (len(r.Domains) + perRow - 1) / perRow
	// The KV routing line, when the frontend exports the router's
	// decision-quality series, takes a line above the tiles.
	quality := ""
	if q := r.RoutingQuality; q != nil {
		quality = strings.TrimRight(fit("KV routing: "+safe(q.Line()), width), " ")
	}
	// The tiles get the most detail at which every row fits whole under the
	// heading (and the quality line): a tile is never cut.
	avail := height - 1
	if quality != "" {
		avail--
	}
	detail := tileDetailFor(nRows, avail)
	tiles := make([]string, len(r.Domains))
	for i := range r.Domains {
		tiles[i] = p.tile(r, i, maxKV, detail)
	}
	var rows []string
	for i := 0; i < len(tiles); i += perRow {
		rows = append(rows, lipgloss.JoinHorizontal(lipgloss.Top, tiles[i:min(i+perRow, len(tiles))]...))
	}
	// When even the most compact tiles do not all fit, whole rows scroll so
	// that the cursor's row is visible, and the heading says which are shown.
	visible := max(avail/lipgloss.Height(tiles[0]), 1)
	first := 0
	if p.cursor/perRow >= visible {
		first = p.cursor/perRow - visible + 1
	}
	last := min(first+visible, nRows)
	domain := "domain"
	if r.Policy != nil {
		domain = safe(r.Policy.Domain)
	}
	heading := fmt.Sprintf("%d %s value(s)", len(r.Domains), domain)
	if first > 0 || last < nRows {
		heading += fmt.Sprintf(", rows %d–%d of %d", first+1, last, nRows)
	}
	out := []string{heading + "; ←→↑↓ select, enter expands the hierarchy"}
	if quality != "" {
		out = append(out, quality)
	}
	out = append(out, rows[first:last]...)
	if p.expanded {
		out = append(out, p.treeView(r, width)...)
	}
	return strings.Join(out, "\n")
}

// tileDetail is how much a tile shows. The full tile has seven lines inside
// its border; the compact ones drop the least telling first: P:D (the ready
// counts above it say as much), then the KV and load bars. The title, the
// prefill and decode counts and the worst finding always show.
type tileDetail int

const (
	tileFull    tileDetail = iota // title, prefill, decode, KV, load, P:D, finding
	tileNoPD                      // without P:D
	tileCounts                    // title, prefill, decode, finding
	tileMinimal                   // title, finding
	numTileDetails
)

// height is a tile's height at this detail, border included.
func (d tileDetail) height() int { return [...]int{9, 8, 6, 4}[d] }

// tileDetailFor is the most detail at which rows of tiles fit in height
// lines, or the least when none does (the rows then scroll).
func tileDetailFor(rows, height int) tileDetail {
	for d := tileFull; d < numTileDetails; d++ {
		if rows*d.height() <= height {
			return d
		}
	}
	return tileMinimal
}

// tile renders one domain value.
func (p *topologyPage) tile(r *model.DeploymentReport, i int, maxKV uint64, detail tileDetail) string {
	st := p.c.st
	d := &r.Domains[i]
	inner := tileWidth - 4
	sev := p.worstFlag(r, d)
	name := safe(d.Value)
	if name == "" {
		name = "(no value)"
		if r.Policy == nil {
			name = "(whole deployment)"
		}
	}
	// The marks first (cursor, highlight, severity), never cut; the value
	// after them, cut to the tile in the middle (termsafe.Truncate), keeping
	// its start and its end, where values differ.
	var marks string
	if i == p.cursor {
		marks += "▶ "
	}
	if p.c.hl.active && p.c.hl.domain == d.Value {
		marks += "◆ "
	}
	if sev != "" {
		marks += severitySymbol(sev) + " "
	}
	title := marks + termsafe.Truncate(name, inner-termsafe.Width(marks))
	role := func(label string, rc model.RoleCapacity) string {
		t := fmt.Sprintf("%-7s %d/%d ready %3d GPU", label, rc.Ready, rc.Total, rc.GPUs)
		if rc.Ready < rc.Total {
			return st.Warn.Render(t)
		}
		return t
	}
	kv := d.Prefill.KvTokens + d.Decode.KvTokens + d.Aggregated.KvTokens
	kvLine := "KV   " + st.Dim.Render("unknown")
	if kv > 0 && maxKV > 0 {
		kvLine = "KV   " + st.bar(float64(kv)/float64(maxKV), 10) + " " + humanTokens(kv)
	}
	loadLine := "load " + st.Dim.Render("unknown")
	if d.DecodeLoadPercent != nil {
		loadLine = "load " + st.bar(*d.DecodeLoadPercent/100, 10) + " " + strconv.FormatFloat(*d.DecodeLoadPercent, 'f', 1, 64) + "%"
	}
	pd := "P:D  -"
	if d.PrefillToDecode != nil {
		pd = "P:D  " + strconv.FormatFloat(*d.PrefillToDecode, 'f', 2, 64)
	}
	first := role("prefill", d.Prefill)
	if d.Aggregated.Total > 0 && d.Prefill.Total == 0 {
		// Aggregated workers serve prefill and decode in one process.
		first = role("aggr.", d.Aggregated)
	}
	lines := []string{st.Bold.Render(fit(title, inner))}
	if detail <= tileCounts {
		lines = append(lines, first, role("decode", d.Decode))
	}
	if detail <= tileNoPD {
		lines = append(lines, kvLine, loadLine)
	}
	if detail == tileFull {
		lines = append(lines, pd)
	}
	flag := "✓ no finding"
	if len(d.Flags) > 0 {
		// The worst finding's id in full (never cut), then how many more.
		flag = severitySymbol(sev) + " " + p.worstID(r, d)
		if more := fmt.Sprintf(" +%d more", len(d.Flags)-1); len(d.Flags) > 1 && lipgloss.Width(flag+more) <= inner {
			flag += more
		}
		flag = st.severity(sev, fit(flag, inner))
	} else {
		flag = st.Good.Render(flag)
	}
	lines = append(lines, flag)
	for j, l := range lines {
		lines[j] = fit(l, inner)
	}
	style := st.Tile
	switch {
	case i == p.cursor:
		style = st.TileSelected
	case sev == model.SeverityError:
		style = st.TileBad
	case sev == model.SeverityWarning:
		style = st.TileWarn
	}
	if i == p.cursor && sev != "" && st.Color {
		style = style.BorderForeground(st.Bad.GetForeground())
	}
	return style.Render(strings.Join(lines, "\n"))
}

// worstID is the id of the most severe finding flagging d (the first flag
// when none is more severe).
func (p *topologyPage) worstID(r *model.DeploymentReport, d *model.DomainReport) string {
	best, rank := "", -1
	for _, id := range d.Flags {
		for _, f := range p.c.data.Report.Findings {
			if f.ID == id && f.Namespace == r.Namespace && f.Deployment == r.Name && f.Domain == d.Value && f.Severity.Rank() > rank {
				best, rank = id, f.Severity.Rank()
			}
		}
	}
	if best == "" && len(d.Flags) > 0 {
		best = d.Flags[0]
	}
	return best
}

// worstFlag is the highest severity of the findings flagging d ("" when none).
func (p *topologyPage) worstFlag(r *model.DeploymentReport, d *model.DomainReport) model.Severity {
	var worst model.Severity
	for _, f := range p.c.data.Report.Findings {
		if f.Namespace != r.Namespace || f.Deployment != r.Name || f.Domain != d.Value {
			continue
		}
		for _, id := range d.Flags {
			if f.ID == id && f.Severity.Rank() > worst.Rank() {
				worst = f.Severity
			}
		}
	}
	if worst == "" && len(d.Flags) > 0 {
		worst = model.SeverityWarning
	}
	return worst
}

// treeView lists the hierarchy under the selected domain value (the whole
// tree when the value is not a level of it).
func (p *topologyPage) treeView(r *model.DeploymentReport, width int) []string {
	st := p.c.st
	if r.Tree == nil {
		return []string{"", st.Dim.Render("No topology hierarchy: no topology object and no well-known node labels.")}
	}
	d := r.Domains[p.cursor]
	node := r.Tree
	if r.Policy != nil {
		if n := findTreeNode(r.Tree, r.Policy.Domain, d.Value); n != nil {
			node = n
		}
	}
	out := []string{"", st.Bold.Render("Hierarchy") + st.Dim.Render("  (enter or esc collapses)")}
	var walk func(n *model.TreeNode, prefix, branch string)
	walk = func(n *model.TreeNode, prefix, branch string) {
		label := "(deployment)"
		if n.Domain != "" {
			label = safe(n.Domain) + " " + safe(n.Value)
		}
		line := fmt.Sprintf("%s%s%s   prefill %d/%d (%d GPU)   decode %d/%d (%d GPU)", prefix, branch, label,
			n.Prefill.Ready, n.Prefill.Total, n.Prefill.GPUs, n.Decode.Ready, n.Decode.Total, n.Decode.GPUs)
		out = append(out, fit(line, width))
		childPrefix := prefix
		switch branch {
		case "├─ ":
			childPrefix += "│  "
		case "└─ ":
			childPrefix += "   "
		}
		for i, ch := range n.Children {
			b := "├─ "
			if i == len(n.Children)-1 {
				b = "└─ "
			}
			walk(ch, childPrefix, b)
		}
	}
	walk(node, "", "")
	return out
}

func findTreeNode(n *model.TreeNode, domain, value string) *model.TreeNode {
	if n.Domain == domain && n.Value == value {
		return n
	}
	for _, ch := range n.Children {
		if f := findTreeNode(ch, domain, value); f != nil {
			return f
		}
	}
	return nil
}
