package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/inspect"
)

// header renders the lines above the tabs: context, namespace, deployment,
// policy, and the data sources with their freshness and a loud DEGRADED marker.
func (m *Model) header() string {
	c, st := m.c, m.c.st
	if c.data == nil {
		return st.Title.Render("kubectl dynamo dashboard")
	}
	s := c.data.Snapshot
	ns := s.Namespace
	if ns == "" {
		ns = "(all)"
	}
	line1 := st.Title.Render("kubectl dynamo dashboard") + "  Context: " + orDash(s.Context) + "  Namespace: " + ns
	line2 := "Deployment: (none found)"
	if i := c.deployment(); i >= 0 {
		d := &s.Deployments[i]
		line2 = "Deployment: " + st.Bold.Render(d.Key())
		if n := len(s.Deployments); n > 1 {
			line2 += fmt.Sprintf(" (%d/%d, d: next)", i+1, n)
		}
		line2 += "  Policy: " + policyText(c.data.Report.Deployments[i].Policy)
		if mode := c.data.Report.Deployments[i].RouterMode; mode != "" {
			line2 += "  Router: " + mode
		}
	}
	lines := []string{fit(line1, c.width), fit(line2, c.width), fit(m.sourcesLine(), c.width)}
	if d := m.degraded(); d != "" {
		lines = append(lines, fit(st.Degraded.Render("!! DEGRADED: "+d), c.width))
	}
	return strings.Join(lines, "\n")
}

func policyText(p *inspect.PolicySummary) string {
	if p == nil {
		return "none (no kvTransferPolicy)"
	}
	t := p.Domain + " " + p.Enforcement
	if p.PreferredWeight != nil {
		t += " (weight " + num(*p.PreferredWeight) + ")"
	}
	return t
}

func (m *Model) sourcesLine() string {
	c, st := m.c, m.c.st
	now := c.now()
	var parts []string
	for _, src := range c.data.Snapshot.Sources {
		p := string(src.Kind)
		if !src.At.IsZero() {
			p += " " + src.At.UTC().Format(time.TimeOnly) + " (" + age(now.Sub(src.At)) + ")"
		}
		if src.Degraded {
			p = st.Bad.Render("✗ " + p)
		} else {
			p = st.Good.Render("✓") + " " + p
		}
		parts = append(parts, p)
	}
	line := "Sources: " + strings.Join(parts, "  ")
	switch {
	case m.loadErr != nil:
		line += "  " + st.Bad.Render("✗ refresh failed: "+m.loadErr.Error())
	case m.loading:
		line += "  " + st.Dim.Render("refreshing…")
	case m.opts.Refresh > 0 && m.opts.Watch != nil && m.opts.Poll != nil:
		line += "  " + st.Dim.Render("metrics every "+m.opts.Refresh.String())
	case m.opts.Refresh > 0:
		line += "  " + st.Dim.Render("every "+m.opts.Refresh.String())
	}
	if m.opts.Watch != nil {
		line += "  " + m.watchText()
	}
	return line
}

// watchText is the watch state: "⟳ watching", "⟳ re-listing (pods)", "✗ watch
// degraded (events forbidden)", "✗ watch stopped".
func (m *Model) watchText() string {
	st, w := m.c.st, m.watch
	switch w.State {
	case "":
		return st.Dim.Render("⟳ watch starting")
	case "watching":
		return st.Good.Render("⟳") + " watching"
	case "re-listing":
		t := "⟳ re-listing"
		if w.Detail != "" {
			t += " (" + w.Detail + ")"
		}
		return st.Dim.Render(t)
	}
	t := "✗ watch " + w.State
	if w.Detail != "" {
		t += " (" + w.Detail + ")"
	}
	return st.Bad.Render(t)
}

// degraded summarises the degraded sources, "" when none is.
func (m *Model) degraded() string {
	var parts []string
	for _, src := range m.c.data.Snapshot.Sources {
		if src.Degraded {
			p := string(src.Kind)
			if src.Message != "" {
				p += " (" + src.Message + ")"
			}
			parts = append(parts, p)
		}
	}
	if m.watch.State == "degraded" {
		parts = append(parts, "watch ("+m.watch.Detail+"; those changes show only on a refresh, r)")
	}
	return strings.Join(parts, "; ")
}

// age prints a duration as 4s, 3m, 2h, 5d ago-style (without "ago").
func age(d time.Duration) string {
	switch {
	case d < 0:
		return "now"
	case d < time.Minute:
		return fmt.Sprintf("%ds ago", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	}
	return fmt.Sprintf("%dd ago", int(d.Hours()/24))
}
