package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/analysis"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/termsafe"
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
	line1 := st.Title.Render("kubectl dynamo dashboard") + "  Context: " + orDash(safe(s.Context)) + "  Namespace: " + safe(ns)
	line2 := "Deployment: (none found)"
	if i := c.deployment(); i >= 0 {
		d := &s.Deployments[i]
		line2 = "Deployment: " + st.Bold.Render(safe(d.Key()))
		if n := len(s.Deployments); n > 1 {
			line2 += fmt.Sprintf(" (%d/%d, d: next)", i+1, n)
		}
		line2 += "  Policy: " + policyText(c.data.Report.Deployments[i].Policy)
		if mode := c.data.Report.Deployments[i].RouterMode; mode != "" {
			line2 += "  Router: " + safe(mode)
		}
		// The release the deployment is read at: in full where it fits, the
		// bare version on this line or the first where it does not.
		dyn := c.data.Report.Deployments[i].Dynamo
		switch full, bare := "  Dynamo: "+dyn.Short(), "  Dynamo: "+dyn.Bare(); {
		case termsafe.Width(line2+full) <= c.width:
			line2 += full
		case termsafe.Width(line2+bare) <= c.width:
			line2 += bare
		case termsafe.Width(line1+bare) <= c.width:
			line1 += bare
		}
	}
	lines := []string{fit(line1, c.width), fit(line2, c.width), fit(m.sourcesLine(), c.width)}
	// Old data (a capture older than a day, sources read minutes apart): the
	// same warnings as topology and explain-route, under the sources.
	for _, n := range analysis.FreshnessNotes(s, c.now()) {
		lines = append(lines, st.Warn.Render(fit("! "+safe(n.Message), c.width)))
	}
	if d := m.degraded(); d != "" {
		// Wrapped (at most 3 lines): the reason and the next step must show.
		dl := wrap("!! DEGRADED: "+safeText(d), c.width)
		if len(dl) > 3 {
			dl = append(dl[:2], strings.Join(dl[2:], " "))
		}
		for _, l := range dl {
			lines = append(lines, fit(st.Degraded.Render(l), c.width))
		}
	}
	return strings.Join(lines, "\n")
}

func policyText(p *model.PolicySummary) string {
	if p == nil {
		return "none (no kvTransferPolicy)"
	}
	t := safe(p.Domain) + " " + safe(p.Enforcement)
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
		p := safe(string(src.Kind))
		if !src.At.IsZero() {
			p += " (" + analysis.Stamp(src.At, now) + ")"
		}
		switch {
		case m.stale(src.Kind) != nil:
			p = st.Bad.Render("✗ " + p + " STALE")
		case src.Degraded:
			p = st.Bad.Render("✗ " + p)
		default:
			p = st.Good.Render("✓") + " " + p
		}
		parts = append(parts, p)
	}
	line := "Sources: " + strings.Join(parts, "  ")
	switch {
	case m.loadErr != nil:
		line += "  " + st.Bad.Render("✗ refresh failed: "+safe(m.loadErr.Error()))
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
			t += " (" + safe(w.Detail) + ")"
		}
		return st.Dim.Render(t)
	}
	t := "✗ watch " + safe(w.State)
	if w.Detail != "" {
		t += " (" + safe(w.Detail) + ")"
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
	for _, s := range m.watch.Stale {
		p := s.Name + " unreachable since " + s.Since.UTC().Format(time.TimeOnly)
		if s.Reason != "" {
			p += " (" + s.Reason + ")"
		}
		p += ": the " + staleWhat(s.Kind) + " shown"
		if at := m.sourceAt(s.Kind); !at.IsZero() {
			p += " was read at " + at.UTC().Format(time.TimeOnly) + " and"
		}
		p += " may be stale; it is re-read when " + string(s.Kind) + " answers again"
		parts = append(parts, p)
	}
	if d := m.watchDetailNotStale(); m.watch.State == "degraded" && d != "" {
		parts = append(parts, "watch ("+d+"; those changes show only on a refresh, r)")
	}
	return strings.Join(parts, "; ")
}

// stale returns the stale watched source of that kind, nil when it answers.
func (m *Model) stale(kind model.SourceKind) *model.StaleSource {
	for i := range m.watch.Stale {
		if m.watch.Stale[i].Kind == kind {
			return &m.watch.Stale[i]
		}
	}
	return nil
}

// sourceAt is when the data shown was read from a source (zero if unknown).
func (m *Model) sourceAt(kind model.SourceKind) time.Time {
	for _, src := range m.c.data.Snapshot.Sources {
		if src.Kind == kind {
			return src.At
		}
	}
	return time.Time{}
}

// watchDetailNotStale is the watch detail without the stale sources (shown on
// their own).
func (m *Model) watchDetailNotStale() string {
	var keep []string
	for _, part := range strings.Split(m.watch.Detail, ", ") {
		stale := false
		for _, s := range m.watch.Stale {
			stale = stale || part == s.Name+" unreachable"
		}
		if part != "" && !stale {
			keep = append(keep, part)
		}
	}
	return strings.Join(keep, ", ")
}

// staleWhat names what a stale source provides.
func staleWhat(kind model.SourceKind) string {
	if kind == model.SourceEtcd {
		return "discovery data (etcd)"
	}
	return string(kind) + " data"
}
