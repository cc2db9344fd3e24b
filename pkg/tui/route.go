package tui

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/explain"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// explainMsg is the result of one dry run; seq drops stale results.
type explainMsg struct {
	seq int
	x   *explain.Explanation
	err error
}

// routerModes are the router-mode what-ifs `m` cycles through ("" is the
// frontend's own mode).
var routerModes = []routecore.RouterMode{"", routecore.RouterModeKV, routecore.RouterModeRoundRobin, routecore.RouterModeRandom,
	routecore.RouterModePowerOfTwo, routecore.RouterModeLeastLoaded}

// weights are the preferred-weight what-ifs `w` cycles through (0 is unset):
// within [0, 1], the range Dynamo's validator accepts.
var weights = []float64{0, 0.25, 0.5, 1}

// RoutePage is the route explorer: token ids in, pkg/explain's dry run out,
// with what-ifs that re-run it at once.
type RoutePage struct {
	c       *common
	input   textinput.Model
	editing bool
	// editStart is the input when editing began: Esc restores it.
	editStart string
	tokenize  func(string) ([]uint32, error)

	tokens   []uint32
	tokenSrc string
	inputErr string

	// What-ifs.
	enforcement *explain.Enforcement
	weight      int // index into weights
	temperature *float64
	domainDown  int // index into domainValues()+1; 0 is none
	excluded    []string
	matrix      bool
	// mode indexes routerModes (0: the frontend's own mode).
	mode int

	seq     int
	x       *explain.Explanation
	err     error
	running bool
	cursor  int
}

func newRoutePage(c *common, tokens string, tokenize func(string) ([]uint32, error)) *RoutePage {
	ti := textinput.New()
	ti.Cursor.SetMode(cursor.CursorStatic) // no blink: nothing ticks while idle
	ti.Prompt = "tokens> "
	ti.Placeholder = "type or paste token ids (comma or space separated)"
	ti.CharLimit = 0
	c.st.textInput(&ti)
	ti.SetValue(TokenText(tokens))
	p := &RoutePage{c: c, input: ti, tokenize: tokenize}
	p.parse()
	return p
}

// Explanation returns the last dry run (nil before the first).
func (p *RoutePage) Explanation() *explain.Explanation { return p.x }

// Err returns the last dry run's error.
func (p *RoutePage) Err() error { return p.err }

// Tokens returns the token ids of the request.
func (p *RoutePage) Tokens() []uint32 { return p.tokens }

// Enforcement returns the enforcement what-if ("" keeps the policy's).
func (p *RoutePage) Enforcement() explain.Enforcement {
	if p.enforcement == nil {
		return ""
	}
	return *p.enforcement
}

// PreferredWeight returns the preferred-weight what-if (0 keeps the policy's).
func (p *RoutePage) PreferredWeight() float64 { return weights[p.weight] }

func (p *RoutePage) capturing() bool { return p.editing }

func (p *RoutePage) hints() []key.Binding {
	k := p.c.keys
	if p.editing {
		return []key.Binding{k.Back}
	}
	return []key.Binding{k.Edit, k.Enforcement, k.Weight, k.TempUp, k.DomainDown, k.Exclude, k.RouterMode, k.Matrix}
}

func (p *RoutePage) dataChanged() tea.Cmd {
	if p.domainDown > len(p.domainValues()) {
		p.domainDown = 0
	}
	return p.run()
}

// parse reads the input as token ids, or tokenizes it when a tokenizer is set.
func (p *RoutePage) parse() {
	text := p.input.Value()
	p.inputErr = ""
	toks, err := ParseTokenIDs(text)
	switch {
	case err == nil:
		p.tokens, p.tokenSrc = toks, "token ids typed in the dashboard"
	case p.tokenize != nil:
		toks, terr := p.tokenize(text)
		if terr != nil {
			p.tokens, p.inputErr = nil, "tokenize: "+terr.Error()
			return
		}
		p.tokens, p.tokenSrc = toks, "prompt tokenized with --tokenizer"
	default:
		p.tokens = nil
		p.inputErr = err.Error() + " (a prompt needs a tokenizer: start the dashboard with --tokenizer)"
	}
}

// TokenText flattens a .tokens file (or any token-id text) into one line for
// the input: # comment lines are dropped, line breaks become spaces.
func TokenText(text string) string {
	var parts []string
	for line := range strings.SplitSeq(text, "\n") {
		if l := strings.TrimSpace(line); l != "" && !strings.HasPrefix(l, "#") {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, " ")
}

// ParseTokenIDs reads token ids separated by commas, spaces or newlines, an
// optional JSON array's brackets, and # comment lines (a .tokens file).
func ParseTokenIDs(text string) ([]uint32, error) {
	var out []uint32
	for line := range strings.SplitSeq(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		f := strings.FieldsFunc(line, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '[' || r == ']' || r == '\r' })
		for _, s := range f {
			v, err := strconv.ParseUint(s, 10, 32)
			if err != nil {
				return nil, fmt.Errorf("%q is not a token id", s)
			}
			out = append(out, uint32(v))
		}
	}
	return out, nil
}

// domainValues are the deployment's non-empty transfer-domain values.
func (p *RoutePage) domainValues() []string {
	i := p.c.deployment()
	if i < 0 {
		return nil
	}
	var out []string
	for _, d := range p.c.data.Report.Deployments[i].Domains {
		if d.Value != "" {
			out = append(out, d.Value)
		}
	}
	return out
}

func (p *RoutePage) domainKey() string {
	if i := p.c.deployment(); i >= 0 {
		if pol := p.c.data.Report.Deployments[i].Policy; pol != nil && pol.Domain != "" {
			return pol.Domain
		}
	}
	return ""
}

// options turns the what-ifs into explain options.
func (p *RoutePage) options() explain.Options {
	o := explain.Options{}
	if p.c.data != nil {
		o.DynamoVersion = p.c.data.DynamoVersion
	}
	o.Knobs.Enforcement = p.enforcement
	if w := weights[p.weight]; w > 0 {
		o.Knobs.PreferredWeight = &w
	}
	o.Knobs.Temperature = p.temperature
	o.WhatIf.ExcludeWorkers = slices.Clone(p.excluded)
	if vals := p.domainValues(); p.domainDown > 0 && p.domainDown <= len(vals) && p.domainKey() != "" {
		o.WhatIf.DomainDown = []explain.DomainValue{{Key: p.domainKey(), Value: vals[p.domainDown-1]}}
	}
	o.WhatIf.AllPrefill = p.matrix
	if m := routerModes[p.mode]; m != "" {
		o.Knobs.RouterMode = &m
	}
	return o
}

// run starts a dry run in a command; its result arrives as an explainMsg.
func (p *RoutePage) run() tea.Cmd {
	p.seq++
	seq := p.seq
	i := p.c.deployment()
	if i < 0 || len(p.tokens) == 0 {
		p.x, p.err, p.running = nil, nil, false
		return nil
	}
	d := p.c.data
	dep := &d.Snapshot.Deployments[i]
	in := explain.Input{
		Snapshot: d.Snapshot, Deployment: dep,
		Request: explain.Request{Tokens: slices.Clone(p.tokens), Tokenizer: p.tokenSrc},
		KV:      d.KV[dep.Key()], Options: p.options(),
	}
	p.running = true
	return func() tea.Msg {
		x, err := explain.Explain(in)
		return explainMsg{seq: seq, x: x, err: err}
	}
}

func (p *RoutePage) update(msg tea.Msg) tea.Cmd {
	if em, ok := msg.(explainMsg); ok {
		if em.seq == p.seq {
			p.x, p.err, p.running = em.x, em.err, false
			p.cursor = min(p.cursor, max(len(p.rows())-1, 0))
		}
		return nil
	}
	km, ok := msg.(tea.KeyMsg)
	if p.editing {
		if ok && (km.Type == tea.KeyEsc || km.Type == tea.KeyEnter) {
			p.editing = false
			p.input.Blur()
			if km.Type == tea.KeyEsc && p.input.Value() != p.editStart {
				// Esc cancels the edit: the request is what it was before.
				p.input.SetValue(p.editStart)
				p.parse()
				return p.run()
			}
			return nil
		}
		before := p.input.Value()
		var cmd tea.Cmd
		p.input, cmd = p.input.Update(msg)
		if p.input.Value() != before {
			p.parse()
			return tea.Batch(cmd, p.run())
		}
		return cmd
	}
	if !ok {
		return nil
	}
	k := p.c.keys
	switch {
	case key.Matches(km, k.Edit):
		p.editing = true
		p.editStart = p.input.Value()
		return p.input.Focus()
	case key.Matches(km, k.Enforcement):
		p.enforcement = nextEnforcement(p.enforcement)
	case key.Matches(km, k.Weight):
		p.weight = (p.weight + 1) % len(weights)
	case key.Matches(km, k.TempUp):
		t := p.baseTemperature() + 0.25
		p.temperature = &t
	case key.Matches(km, k.TempDown):
		t := max(p.baseTemperature()-0.25, 0)
		p.temperature = &t
	case key.Matches(km, k.DomainDown):
		p.domainDown = (p.domainDown + 1) % (len(p.domainValues()) + 1)
	case key.Matches(km, k.Exclude):
		rows := p.rows()
		if p.cursor >= len(rows) {
			return nil
		}
		w := rows[p.cursor]
		if j := slices.Index(p.excluded, w); j >= 0 {
			p.excluded = slices.Delete(p.excluded, j, j+1)
		} else {
			p.excluded = append(p.excluded, w)
		}
	case key.Matches(km, k.ClearWhatIf):
		p.enforcement, p.weight, p.temperature, p.domainDown, p.excluded, p.matrix, p.mode = nil, 0, nil, 0, nil, false, 0
	case key.Matches(km, k.RouterMode):
		p.mode = (p.mode + 1) % len(routerModes)
	case key.Matches(km, k.Matrix):
		p.matrix = !p.matrix
	case key.Matches(km, k.Up):
		p.cursor = max(p.cursor-1, 0)
		return nil
	case key.Matches(km, k.Down):
		p.cursor = min(p.cursor+1, max(len(p.rows())-1, 0))
		return nil
	default:
		return nil
	}
	return p.run()
}

// baseTemperature is the temperature in force: the what-if's, else the
// deployment's.
func (p *RoutePage) baseTemperature() float64 {
	if p.temperature != nil {
		return *p.temperature
	}
	if p.x != nil {
		return p.x.Router.Config.RouterTemperature
	}
	return 0
}

func nextEnforcement(e *explain.Enforcement) *explain.Enforcement {
	next := func(v explain.Enforcement) *explain.Enforcement { return &v }
	switch {
	case e == nil:
		return next(explain.EnforcementPreferred)
	case *e == explain.EnforcementPreferred:
		return next(explain.EnforcementOff)
	case *e == explain.EnforcementOff:
		return next(explain.EnforcementRequired)
	}
	return nil
}

// rows are the workers the cursor moves over: the candidates of each stage
// (or the matrix's prefill workers), then the excluded workers.
func (p *RoutePage) rows() []string {
	var out []string
	add := func(w string) {
		if !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	if x := p.x; x != nil {
		if p.matrix {
			for _, r := range x.Matrix {
				add(r.Prefill)
			}
		} else {
			for _, s := range []*explain.Stage{x.Prefill, x.Decode} {
				if s != nil {
					for _, c := range s.Candidates {
						add(c.Worker)
					}
				}
			}
		}
	}
	for _, w := range p.excluded {
		add(w)
	}
	return out
}

// whatIfLines are the what-ifs, each with its key and its state (◆ when it
// departs from the deployment), every key always listed — e w +/- z m x a r —
// and wrapped between what-ifs to the width, so a narrow terminal shows them
// all on more lines instead of cutting the last ones off (issue 28).
func (p *RoutePage) whatIfLines(width int) []string {
	enf := "policy"
	if i := p.c.deployment(); i >= 0 {
		if pol := p.c.data.Report.Deployments[i].Policy; pol != nil {
			enf = "policy (" + safe(pol.Enforcement) + ")"
		} else {
			enf = "policy (none)"
		}
	}
	if p.enforcement != nil {
		enf = "◆ " + string(*p.enforcement)
	}
	parts := []string{"e enforcement " + enf}
	if w := weights[p.weight]; w > 0 {
		parts = append(parts, "w weight ◆ "+num(w))
	} else {
		parts = append(parts, "w weight policy")
	}
	if p.temperature != nil {
		parts = append(parts, "+/- temperature ◆ "+num(*p.temperature))
	} else {
		parts = append(parts, "+/- temperature "+num(p.baseTemperature()))
	}
	if vals := p.domainValues(); p.domainDown > 0 && p.domainDown <= len(vals) {
		parts = append(parts, "z down ◆ "+safe(p.domainKey())+"="+safe(vals[p.domainDown-1]))
	} else {
		parts = append(parts, "z down none")
	}
	if m := routerModes[p.mode]; m != "" {
		parts = append(parts, "m mode ◆ "+string(m))
	} else {
		parts = append(parts, "m mode frontend's")
	}
	if len(p.excluded) > 0 {
		parts = append(parts, fmt.Sprintf("x excluded ◆ %d", len(p.excluded)))
	} else {
		parts = append(parts, "x exclude ▶")
	}
	if p.matrix {
		parts = append(parts, "a matrix ◆ on")
	} else {
		parts = append(parts, "a matrix off")
	}
	parts = append(parts, "r reset all")
	return wrapItems("What-ifs: ", "  ", parts, " · ", width)
}

func (p *RoutePage) view(width, height int) string {
	st := p.c.st
	i := p.c.deployment()
	if i < 0 {
		return "No DynamoGraphDeployment in scope."
	}
	p.input.Width = max(width-len(p.input.Prompt)-2, 10)
	top := []string{p.input.View()}
	info := fmt.Sprintf("%d token(s)", len(p.tokens))
	if p.x != nil {
		info += fmt.Sprintf(", %d full block(s) of %d", len(p.x.Request.Blocks), p.x.Request.BlockSize)
	}
	kv := p.c.data.KV[p.c.data.Snapshot.Deployments[i].Key()]
	info += " · KV: " + safe(kv.Detail)
	if !p.editing {
		info = "i edits · " + info
	}
	top = append(top, st.Dim.Render(fit(info, width)))
	top = append(top, p.whatIfLines(width)...)
	if p.x != nil {
		mode := "Router mode: " + safe(p.x.RouterModeLine())
		if p.x.Router.Mode != "" && !p.x.Router.Mode.IsKV() {
			top = append(top, st.Warn.Render(fit(mode, width)))
		} else {
			top = append(top, st.Dim.Render(fit(mode, width)))
		}
	}
	switch {
	case p.inputErr != "":
		top = append(top, st.Bad.Render(fit("✗ "+safe(p.inputErr), width)))
		return strings.Join(top, "\n")
	case len(p.tokens) == 0:
		top = append(top, "", "Type or paste the request's token ids (press i), e.g. the contents of a .tokens file.")
		return strings.Join(top, "\n")
	case p.err != nil:
		msg := safeText(p.err.Error())
		var ie *explain.InputError
		if errors.As(p.err, &ie) && ie.Hint != "" {
			msg += " — " + safeText(ie.Hint)
		}
		top = append(top, st.Bad.Render("✗ ")+strings.Join(wrap(msg, width-2), "\n  "))
		return strings.Join(top, "\n")
	case p.x == nil:
		top = append(top, "running the dry run…")
		return strings.Join(top, "\n")
	}
	top = append(top, p.verdictLines(width)...)
	body, cursorLine := p.bodyLines(width)
	avail := max(height-len(top), 1)
	first := 0
	if cursorLine >= avail {
		first = cursorLine - avail + 1
	}
	body = body[min(first, len(body)):]
	return strings.Join(append(top, body...), "\n")
}

func (p *RoutePage) verdictLines(width int) []string {
	st := p.c.st
	v := p.x.Verdict
	var lines []string
	// The headline is the risk of the decision, the same for every seed (as
	// explain-route prints it); this draw is a detail under it.
	head := "Verdict: " + safe(p.x.Headline())
	switch v.Outcome {
	case explain.OutcomeFails:
		lines = append(lines, st.Bad.Render(fit(head, width)))
	case explain.OutcomeCanFail:
		lines = append(lines, st.Warn.Render(fit(head, width)))
		if draw, ok := p.x.Draw(); draw != "" {
			style := st.Good
			if !ok {
				style = st.Bad
			}
			lines = append(lines, "  "+style.Render(fit("Draw: "+safe(draw), max(width-2, 0))))
		}
	default:
		lines = append(lines, st.Good.Render(head)+"  "+st.Dim.Render(fit(safe(p.x.Summary), max(width-lipgloss.Width(head)-2, 0))))
	}
	if v.ConstraintIgnoredProbability > 0 {
		lines = append(lines, "  "+st.Warn.Render(fit("! decode lands outside the prefill worker's domain in "+explain.PercentWhole(v.ConstraintIgnoredProbability)+" of picks (the router mode ignores the constraint)", max(width-2, 0))))
	}
	if v.Cause != "" {
		for _, l := range wrapAtMost("Cause: "+safeText(v.Cause), width-2, 2) {
			lines = append(lines, "  "+l)
		}
	}
	if v.Fix != "" {
		for _, l := range wrapAtMost("Fix: "+safeText(v.Fix), width-2, 2) {
			lines = append(lines, "  "+st.Good.Render(l))
		}
	}
	// What the dry run cannot model, as explain-route's "May differ:" says it:
	// one line per feature (the JSON and explain-route carry the detail).
	if len(v.MayDiffer) > 0 {
		lines = append(lines, "  "+st.Warn.Render(fit("May differ: the router may decide otherwise —", max(width-2, 0))))
		for _, d := range v.MayDiffer {
			lines = append(lines, wrapAtMost("    - "+safeText(d.Detail), width, 1)...)
		}
	}
	return lines
}

// wrapAtMost wraps s to width and keeps at most n lines; when it cuts, the
// last line kept ends in an ellipsis, so a sentence never stops unmarked.
func wrapAtMost(s string, width, n int) []string {
	lines := wrap(s, width)
	if len(lines) <= n {
		return lines
	}
	lines = lines[:n]
	last := strings.TrimRight(lines[n-1], " ")
	if lipgloss.Width(last)+1 > width {
		last = ansi.Truncate(last, max(width-1, 0), "")
	}
	lines[n-1] = last + "…"
	return lines
}

// bodyLines renders the stages (or the matrix) and the excluded workers, and
// says on which line the cursor is.
func (p *RoutePage) bodyLines(width int) ([]string, int) {
	st := p.c.st
	x := p.x
	rows := p.rows()
	cur := ""
	if p.cursor < len(rows) {
		cur = rows[p.cursor]
	}
	var lines []string
	cursorLine := 0
	mark := func(worker string) string {
		if worker == cur {
			cursorLine = len(lines)
			return "▶ "
		}
		return "  "
	}
	nameW := max(min(width-60, 40), 16)
	domain := "DOMAIN"
	if d := p.domainKey(); d != "" {
		domain = safe(strings.ToUpper(d))
	}
	if p.matrix {
		lines = append(lines, "", st.Bold.Render("All prefill landings (--all-prefill)"))
		lines = append(lines, st.Header.Render(fit(fmt.Sprintf("  %s %-12s %7s  %-22s %s", fit("PREFILL", nameW), domain, "P", "OUTCOME", "DECODE"), width)))
		prefills := make([]string, len(x.Matrix))
		for i, r := range x.Matrix {
			prefills[i] = safe(r.Prefill)
		}
		names := newNameFitter(prefills, nameW)
		for _, r := range x.Matrix {
			out := "✓ routable"
			if !r.Routable {
				out = "✗ " + safe(r.Error)
			}
			m := mark(r.Prefill)
			line := fmt.Sprintf("%s%s %-12s %7s  %-22s %s", m, fit(names.fit(safe(r.Prefill)), nameW), fit(safe(orDash(r.Domain)), 12), pct(r.Probability), fit(out, 22), safe(orDash(strings.Join(r.DecodeSelected, ", "))))
			line = fit(line, width)
			if !r.Routable {
				line = st.Bad.Render(line)
			}
			lines = append(lines, line)
		}
		if len(x.Matrix) == 0 {
			lines = append(lines, "  no eligible prefill candidate")
		}
	} else {
		stage := func(name string, s *explain.Stage) {
			if s == nil {
				return
			}
			head := name + ": "
			switch {
			case s.Error != "" || s.Pick == "":
				kind := s.ErrorKind
				if kind == "" {
					kind = p.x.Verdict.Error
				}
				head += st.Bad.Render("✗ no candidate can take the request (" + safe(orDash(kind)) + ")")
			case s.Pick != "":
				head += safe(s.Pick) + " (" + safe(string(s.Rule)) + ")"
				if s.RandomTie {
					head += " — random tie among " + safe(strings.Join(s.Selected, ", "))
				}
			}
			lines = append(lines, "", fit(st.Bold.Render(head), width))
			if s.ModeExplanation != "" {
				lines = append(lines, wrapAtMost(safeText(s.ModeExplanation), width, 2)...)
			}
			lines = append(lines, st.Header.Render(fit(fmt.Sprintf("  %s %-12s %8s %10s %7s  %s", fit("WORKER", nameW), domain, "OVERLAP", "COST", "P", "STATUS"), width)))
			workers := make([]string, len(s.Candidates))
			for i, c := range s.Candidates {
				workers[i] = safe(c.Worker)
				if c.DpRank > 0 {
					workers[i] += ":" + strconv.Itoa(int(c.DpRank))
				}
			}
			names := newNameFitter(workers, nameW)
			for i, c := range s.Candidates {
				m := mark(c.Worker)
				costText, prob := "-", "-"
				switch {
				case c.Scored:
					costText, prob = short(c.Cost), pct(c.Probability)
				case s.ModeExplanation != "" && c.Eligible:
					prob = pct(c.Probability) // a non-KV mode: no cost, a pick probability
				}
				status := "✓ eligible"
				switch {
				case c.Selected:
					status = "✓ picked"
				case c.InTieSet:
					status = "≈ tie"
				case !c.Eligible:
					status = "✗ " + safe(c.ShortReason())
				}
				line := fit(fmt.Sprintf("%s%s %-12s %8s %10s %7s  %s", m, fit(names.fit(workers[i]), nameW), fit(safe(orDash(c.Domain)), 12), short(c.OverlapBlocks), costText, prob, status), width)
				switch {
				case c.Selected:
					line = st.Good.Render(line)
				case !c.Eligible:
					line = st.Dim.Render(line)
				}
				lines = append(lines, line)
			}
		}
		stage("Prefill", x.Prefill)
		if t := x.Transfer; t != nil {
			sym := "→"
			if t.Failed {
				sym = "✗"
			}
			if t.Ignored {
				sym = "! not enforced by the router mode:"
			}
			lines = append(lines, "")
			for j, l := range wrap("Transfer: "+sym+" "+safeText(t.Explanation), width) {
				if j == 0 && t.Failed {
					l = st.Bad.Render(l)
				}
				lines = append(lines, l)
			}
		}
		stage("Decode", x.Decode)
	}
	if len(x.Excluded) > 0 {
		lines = append(lines, "", st.Bold.Render("Not candidates"))
		for _, e := range x.Excluded {
			m := "  "
			if slices.Contains(p.excluded, e.Worker) {
				m = mark(e.Worker)
			}
			lines = append(lines, fit(fmt.Sprintf("%s%s (%s): %s", m, safe(e.Worker), safe(string(e.Role)), safe(e.Reason)), width))
		}
	}
	return lines, cursorLine
}
