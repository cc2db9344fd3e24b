package tui

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/termsafe"
)

// Minimum terminal size; below it the dashboard shows only a message.
const (
	MinWidth  = 60
	MinHeight = 16
)

// Options configure the dashboard.
type Options struct {
	// Load reads the data (required); Refresh > 0 re-runs it that often.
	Load    Loader
	Refresh time.Duration
	// Initial, when set, is shown at once instead of waiting for Load.
	Initial *Data
	// Mode names the data source in the header: "capture FILE" or "live".
	Mode  string
	Theme Theme
	// Color enables colour; false gives a monochrome UI that reads by symbols.
	Color bool
	// Out is the terminal the styles are measured against (nil: none).
	Out io.Writer
	// Now returns the current time (freshness); time.Now when nil.
	Now func() time.Time
	// Tokens are the route explorer's initial token ids, as text.
	Tokens string
	// Tokenize turns a prompt into token ids when a tokenizer is configured;
	// nil means only token ids are accepted.
	Tokenize func(prompt string) ([]uint32, error)
	// Context bounds the loads; context.Background when nil.
	Context context.Context
	// Watch, when set, blocks until the live data or the watch state changed
	// (the dashboard command passes an watch.Watcher's Next) and returns the
	// update; ok is false once watching ended. It runs in a tea.Cmd, never in
	// Update. A change reloads with Load; nothing is reloaded while nothing
	// changes.
	Watch func(ctx context.Context) (u WatchUpdate, ok bool)
	// Poll, when set, is what the Refresh schedule runs instead of Load: with a
	// Watch, the sources that cannot be watched (the frontend metrics) over the
	// last watched data.
	Poll Loader
}

// WatchUpdate is what Options.Watch reports.
type WatchUpdate struct {
	// Changed: the watched objects changed; the data is reloaded.
	Changed bool
	// State is the watch state shown in the header ("watching", "re-listing",
	// "degraded"), Detail what it concerns.
	State, Detail string
	// Stale are the watched sources that stopped answering (the discovery etcd
	// unreachable): the header marks their data stale, with since when and
	// why, until they answer again (then the data is reloaded).
	Stale []model.StaleSource
}

// WatchMsg carries a WatchUpdate into Update.
type WatchMsg struct {
	Update WatchUpdate
	// Ended: the watch stopped; the header says so and no more is awaited.
	Ended bool
	// At is when the update arrived (the watch-to-redraw latency starts here).
	At time.Time
}

// Tab is one page of the dashboard.
type Tab int

// The tabs, in order.
const (
	TabTopology Tab = iota
	TabWorkers
	TabFindings
	TabRoute
	numTabs
)

func (t Tab) String() string {
	return [...]string{"Topology", "Workers", "Findings", "Route explorer"}[t]
}

// DataMsg carries the result of a load.
type DataMsg struct {
	Data *Data
	Err  error
	At   time.Time
}

// tickMsg asks for a reload; gen drops ticks of an older schedule.
type tickMsg struct{ gen int }

// highlight is what the selected finding points at.
type highlight struct {
	active bool
	domain string
	pods   map[string]bool
}

// common is the state every page reads.
type common struct {
	width, height int
	st            *Styles
	keys          keyMap
	data          *Data
	dep           int
	hl            highlight
	now           func() time.Time
}

// page is one tab: it owns its state and handles the keys the root does not.
type page interface {
	update(msg tea.Msg) tea.Cmd
	view(width, height int) string
	// dataChanged is called after new data or another deployment.
	dataChanged() tea.Cmd
	// capturing is true while a text input has the focus: global keys then go
	// to the page (ctrl+c still quits).
	capturing() bool
	hints() []key.Binding
}

// Model is the dashboard's root model.
type Model struct {
	c     *common
	opts  Options
	tab   Tab
	pages [numTabs]page
	help  bool
	// helpOffset scrolls the help overlay.
	helpOffset int
	loading    bool
	loadErr    error
	loadAt     time.Time
	gen        int
	quit       bool
	// watch is the last watch state; reloadPending asks for a reload once the
	// one in flight is done (a change arrived while loading).
	watch         WatchUpdate
	watchEnded    bool
	reloadPending bool
	// flash answers a key that had nothing to do (d with one deployment,
	// ctrl+r offline); the footer shows it until the next key.
	flash string
}

// New builds the dashboard model.
func New(o Options) *Model {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Context == nil {
		o.Context = context.Background()
	}
	c := &common{st: NewStyles(o.Theme, o.Color, o.Out), keys: newKeyMap(), now: o.Now, width: 80, height: 24}
	m := &Model{c: c, opts: o}
	m.pages[TabTopology] = newTopologyPage(c)
	m.pages[TabWorkers] = newWorkersPage(c)
	m.pages[TabFindings] = newFindingsPage(c)
	m.pages[TabRoute] = newRoutePage(c, o.Tokens, o.Tokenize)
	if o.Initial != nil {
		m.setData(o.Initial)
		m.loadAt = o.Now()
		_ = m.dataChanged() // derived page state now; Init returns the commands
	}
	return m
}

// Init implements tea.Model: the first load, or the first explain of the
// initial data and the refresh schedule.
func (m *Model) Init() tea.Cmd {
	if m.c.data == nil {
		m.loading = true
		return tea.Batch(m.load(), m.waitWatch())
	}
	return tea.Batch(m.dataChanged(), m.schedule(), m.waitWatch())
}

// waitWatch waits for the next watch update.
func (m *Model) waitWatch() tea.Cmd {
	watch, ctx, now := m.opts.Watch, m.opts.Context, m.opts.Now
	if watch == nil || m.watchEnded {
		return nil
	}
	return func() tea.Msg {
		u, ok := watch(ctx)
		return WatchMsg{Update: u, Ended: !ok, At: now()}
	}
}

// WatchState returns the last watch update ("" State before the first).
func (m *Model) WatchState() WatchUpdate { return m.watch }

// Tab returns the active tab.
func (m *Model) Tab() Tab { return m.tab }

// Data returns the data shown.
func (m *Model) Data() *Data { return m.c.data }

// Route returns the route explorer's state (tests, embedding).
func (m *Model) Route() *RoutePage { return m.pages[TabRoute].(*RoutePage) }

// Quitting reports whether the model asked to quit.
func (m *Model) Quitting() bool { return m.quit }

func (m *Model) load() tea.Cmd {
	load, ctx, now := m.opts.Load, m.opts.Context, m.opts.Now
	if load == nil {
		return nil
	}
	return func() tea.Msg {
		d, err := load(ctx)
		return DataMsg{Data: d, Err: err, At: now()}
	}
}

// poll is the scheduled refresh: Poll when set, else a full load.
func (m *Model) poll() tea.Cmd {
	if m.opts.Poll == nil {
		return m.load()
	}
	poll, ctx, now := m.opts.Poll, m.opts.Context, m.opts.Now
	return func() tea.Msg {
		d, err := poll(ctx)
		return DataMsg{Data: d, Err: err, At: now()}
	}
}

// reload starts a full load now, or once the one in flight is done.
func (m *Model) reload() tea.Cmd {
	if m.opts.Load == nil {
		return nil
	}
	if m.loading {
		m.reloadPending = true
		return nil
	}
	m.loading = true
	return m.load()
}

func (m *Model) schedule() tea.Cmd {
	if m.reloadPending {
		// A change arrived during the last load: reload at once instead.
		m.reloadPending = false
		m.loading = true
		return m.load()
	}
	if m.opts.Refresh <= 0 || m.opts.Load == nil {
		return nil
	}
	m.gen++
	gen := m.gen
	return tea.Tick(m.opts.Refresh, func(time.Time) tea.Msg { return tickMsg{gen: gen} })
}

func (m *Model) setData(d *Data) {
	m.c.data = d
	if n := len(d.Snapshot.Deployments); m.c.dep >= n {
		m.c.dep = max(n-1, 0)
	}
}

func (m *Model) dataChanged() tea.Cmd {
	var cmds []tea.Cmd
	for _, p := range m.pages {
		cmds = append(cmds, p.dataChanged())
	}
	return tea.Batch(cmds...)
}

// Update implements tea.Model.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.c.width, m.c.height = msg.Width, msg.Height
		return m, nil
	case DataMsg:
		m.loading = false
		if msg.Err != nil {
			m.loadErr = msg.Err
			cmd := m.schedule()
			return m, cmd
		}
		m.loadErr = nil
		m.loadAt = msg.At
		m.setData(msg.Data)
		cmd := tea.Batch(m.dataChanged(), m.schedule())
		return m, cmd
	case tickMsg:
		if msg.gen != m.gen || m.loading {
			return m, nil // stale, or a load is in flight (it reschedules)
		}
		m.loading = true
		cmd := m.poll()
		return m, cmd
	case WatchMsg:
		if msg.Ended {
			m.watchEnded = true
			m.watch = WatchUpdate{State: "stopped"}
			return m, nil
		}
		m.watch = WatchUpdate{State: msg.Update.State, Detail: msg.Update.Detail, Stale: msg.Update.Stale}
		var cmd tea.Cmd
		if msg.Update.Changed {
			cmd = m.reload()
		}
		return m, tea.Batch(cmd, m.waitWatch())
	case tea.KeyMsg:
		m.flash = ""
		cmd := m.key(msg)
		return m, cmd
	}
	// Everything else (explain results, input blinks) goes to the pages.
	var cmds []tea.Cmd
	for _, p := range m.pages {
		cmds = append(cmds, p.update(msg))
	}
	return m, tea.Batch(cmds...)
}

func (m *Model) key(msg tea.KeyMsg) tea.Cmd {
	k := m.c.keys
	if msg.String() == "ctrl+c" {
		m.quit = true
		return tea.Quit
	}
	if m.help {
		switch {
		case key.Matches(msg, k.Help, k.Back, k.Quit):
			m.help = false
		case key.Matches(msg, k.Up):
			m.helpOffset = max(m.helpOffset-1, 0)
		case key.Matches(msg, k.Down):
			m.helpOffset++
		}
		return nil
	}
	p := m.pages[m.tab]
	if p.capturing() {
		return p.update(msg)
	}
	switch {
	case key.Matches(msg, k.Quit):
		m.quit = true
		return tea.Quit
	case key.Matches(msg, k.Help):
		m.help, m.helpOffset = true, 0
	case key.Matches(msg, k.NextTab):
		m.tab = (m.tab + 1) % numTabs
	case key.Matches(msg, k.PrevTab):
		m.tab = (m.tab + numTabs - 1) % numTabs
	case key.Matches(msg, k.Tab1, k.Tab2, k.Tab3, k.Tab4):
		m.tab = Tab(msg.String()[0] - '1')
	case key.Matches(msg, k.Deployment):
		if m.c.data != nil && len(m.c.data.Snapshot.Deployments) > 1 {
			m.c.dep = (m.c.dep + 1) % len(m.c.data.Snapshot.Deployments)
			m.c.hl = highlight{}
			return m.dataChanged()
		}
		if m.c.data != nil && len(m.c.data.Snapshot.Deployments) == 1 {
			m.flash = "d: only one deployment is shown (" + safe(m.c.data.Snapshot.Deployments[0].Key()) + "); d cycles when there are several"
		}
	case key.Matches(msg, k.Refresh):
		if m.opts.Load == nil {
			m.flash = "ctrl+r: nothing to reload — the data is a capture file (" + safe(m.opts.Mode) + "), read once"
			return nil
		}
		m.flash = "reloading…"
		return m.reload()
	default:
		return p.update(msg)
	}
	return nil
}

// View implements tea.Model. Text from the cluster may hold escape sequences,
// controls, bidi or invisible characters: the pages escape it where they place
// it into a cell (safe, safeText), before the layout, so that it measures what
// it shows and cannot carry an escape sequence — not even one of the styles'
// own SGR sequences, which the filter below keeps and cannot tell from the same
// bytes in data. The finished frame is then filtered once more, the second
// line: only the styles' own SGR sequences may reach the terminal
// (termsafe.View); where escaping lengthened a line, it is cut to the width
// again.
func (m *Model) View() string {
	frame := m.view()
	safe, changed := termsafe.View(frame, m.c.st.sgr)
	if !changed {
		return safe
	}
	lines := strings.Split(safe, "\n")
	for i, l := range lines {
		if lipgloss.Width(l) > m.c.width {
			lines[i] = ansi.Truncate(l, max(m.c.width, 1), "…")
		}
	}
	return strings.Join(lines, "\n")
}

func (m *Model) view() string {
	c := m.c
	if m.quit {
		return ""
	}
	if c.width < MinWidth || c.height < MinHeight {
		msg := fmt.Sprintf("Terminal too small: %d×%d.\nThe dashboard needs at least %d×%d.\nEnlarge the window, or press q to quit.",
			c.width, c.height, MinWidth, MinHeight)
		return clip(lipgloss.Place(c.width, c.height, lipgloss.Center, lipgloss.Center, msg), c.width, c.height)
	}
	if c.data == nil {
		text := "Loading…"
		if m.loadErr != nil {
			text = "✗ could not load the deployment: " + safeText(m.loadErr.Error())
		}
		return clip(m.header()+"\n\n"+strings.Join(wrap(text, c.width), "\n"), c.width, c.height)
	}
	head := m.header()
	tabs := m.tabBar()
	footer := m.footer()
	bodyH := c.height - lipgloss.Height(head) - 1 - lipgloss.Height(footer)
	var body string
	if m.help {
		body = m.helpView(c.width, bodyH)
	} else {
		body = m.pages[m.tab].view(c.width, bodyH)
	}
	body = clip(body, c.width, bodyH)
	if pad := bodyH - lipgloss.Height(body); pad > 0 {
		body += strings.Repeat("\n", pad)
	}
	return clip(strings.Join([]string{head, tabs, body, footer}, "\n"), c.width, c.height)
}

func (m *Model) tabBar() string {
	st := m.c.st
	var parts []string
	for t := range numTabs {
		label := fmt.Sprintf("%d %s", t+1, t)
		if t == TabFindings && m.c.data != nil {
			if n := len(m.findings()); n > 0 {
				label += fmt.Sprintf(" (%d)", n)
			}
		}
		if t == m.tab {
			parts = append(parts, st.TabActive.Render("["+label+"]"))
		} else {
			parts = append(parts, st.TabInactive.Render(" "+label+" "))
		}
	}
	return fit(strings.Join(parts, " "), m.c.width)
}

func (m *Model) footer() string {
	st, k := m.c.st, m.c.keys
	if m.flash != "" {
		return st.Warn.Render(fit(m.flash, m.c.width))
	}
	bs := append([]key.Binding{k.NextTab, k.Help, k.Quit}, m.pages[m.tab].hints()...)
	var parts []string
	for _, b := range bs {
		parts = append(parts, b.Help().Key+" "+b.Help().Desc)
	}
	return st.Dim.Render(fit(strings.Join(parts, " · "), m.c.width))
}

// findings returns the report's findings about the selected deployment.
func (m *Model) findings() []int { return deploymentFindings(m.c) }

// deployment returns the selected deployment's index, or -1.
func (c *common) deployment() int {
	if c.data == nil || len(c.data.Snapshot.Deployments) == 0 {
		return -1
	}
	return c.dep
}

// deploymentFindings returns the indexes into Report.Findings of the selected
// deployment's findings.
func deploymentFindings(c *common) []int {
	i := c.deployment()
	if i < 0 {
		return nil
	}
	d := &c.data.Snapshot.Deployments[i]
	var out []int
	for j, f := range c.data.Report.Findings {
		if f.Namespace == d.Namespace && f.Deployment == d.Name {
			out = append(out, j)
		}
	}
	return out
}
