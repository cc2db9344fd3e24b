package explainroute

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ai-dynamo/kubectl-dynamo/internal/printers"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/analysis"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/explain"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// style decorates text when colour is on; symbols carry the meaning without it.
type style struct{ color bool }

func (s style) bold(t string) string {
	if !s.color {
		return t
	}
	return printers.Bold(t)
}

func (s style) paint(code, t string) string {
	if !s.color {
		return t
	}
	return printers.Color(code, t)
}

func (s style) good(t string) string { return s.paint("32", t) }
func (s style) bad(t string) string  { return s.paint("31", t) }
func (s style) warn(t string) string { return s.paint("33", t) }
func (s style) dim(t string) string  { return s.paint("2", t) }

// shownBlocks is how many block hashes the table lists (-o wide lists all).
const shownBlocks = 3

// printExplanation writes the human form.
func printExplanation(w io.Writer, x *explain.Explanation, now time.Time, wide, noHeaders bool, st style) error {
	var b strings.Builder
	domain := "DOMAIN"
	if x.Router.Policy != nil && x.Router.Policy.Domain != "" {
		domain = strings.ToUpper(x.Router.Policy.Domain)
	}
	kv := func(k, v string) { fmt.Fprintf(&b, "%s %s\n", st.bold(fmt.Sprintf("%-12s", k+":")), v) }

	kv("Deployment", fmt.Sprintf("%s/%s   %s %s   %s %s   %s %s", x.Namespace, x.Deployment, st.bold("Context:"), orDash(x.Context), st.bold("Model:"), orDash(x.Model), st.bold("Dynamo:"), x.Dynamo.Short()))
	kv("Router mode", x.RouterModeLine())
	r := x.Request
	tail := r.TokenCount - len(r.Blocks)*r.BlockSize
	req := fmt.Sprintf("%d tokens → %d full block(s) of %d", r.TokenCount, len(r.Blocks), r.BlockSize)
	switch {
	case r.RoutingTokenCount > r.TokenCount:
		req += fmt.Sprintf(" (routing tokens zero-padded to %d, the ISL routed with)", r.RoutingTokenCount)
	case tail > 0 && !r.Eagle:
		req += fmt.Sprintf(" (+%d tokens in a partial block, not hashed)", tail)
	}
	if r.LoraName != "" {
		req += "   LoRA " + r.LoraName
	}
	if r.CacheNamespace != "" {
		req += "   cache namespace " + r.CacheNamespace
	}
	if mm := r.MultimodalSummary(); mm != "" {
		req += "   " + mm
	}
	kv("Request", req)
	kv("Tokens", r.Tokenizer)
	if len(r.Blocks) > 0 {
		n := len(r.Blocks)
		if !wide {
			n = min(n, shownBlocks)
		}
		for i, bl := range r.Blocks[:n] {
			label := ""
			if i == 0 {
				label = "Blocks"
			}
			line := fmt.Sprintf("#%-3d local %-20d  sequence %d", bl.Index, bl.LocalHash, bl.SequenceHash)
			if len(bl.MmHashes) > 0 {
				line += "   mm " + strings.Join(bl.MmHashes, " ")
			}
			for _, p := range bl.PadValues {
				line += fmt.Sprintf("   pad %d (mm %s)", p.PadValue, p.MmHash)
			}
			if bl.ZeroPadded > 0 {
				line += fmt.Sprintf("   +%d zero pad", bl.ZeroPadded)
			}
			if i == n-1 && n < len(r.Blocks) {
				line += fmt.Sprintf("   … %d more (-o wide or -o json lists all)", len(r.Blocks)-n)
			}
			if label == "" {
				fmt.Fprintf(&b, "%-12s %s\n", "", line)
			} else {
				kv(label, line)
			}
		}
	}
	if !r.Constraints.IsEmpty() {
		kv("Constraints", constraintsLine(r.Constraints.RequiredTaints, r.Constraints.PreferredTaints))
	}
	kv("Router", routerLine(x))
	switch {
	case x.Verdict.Routable:
		kv("Mode", string(x.Mode)+" — "+x.Summary)
	case x.Mode == "":
		kv("Mode", "- — "+x.Summary) // refused before either hop
	default:
		kv("Mode", string(x.Mode))
	}
	if x.Conditional != nil {
		kv("Conditional", x.Conditional.Explanation)
	} else if x.ConditionalSkipped != "" {
		kv("Conditional", "not evaluated: "+x.ConditionalSkipped)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	b.Reset()

	opts := printers.TableOptions{Wide: wide, NoHeaders: noHeaders}
	if x.Prefill != nil {
		fmt.Fprintf(w, "\n%s %s\n", st.bold("Prefill:"), stageLine(x.Prefill, x.Router.Seed, x.Router.SeedGiven)+sitaLine(x.Prefill))
		if err := candidateTable(x.Prefill, domain, st).Render(w, opts); err != nil {
			return err
		}
	}
	if x.Transfer != nil {
		t := x.Transfer
		line := t.Explanation
		if t.Failed {
			line = st.bad("✗ ") + line
		}
		fmt.Fprintf(w, "\n%s %s\n", st.bold("Transfer:"), line)
	}
	if x.Decode != nil {
		head := stageLine(x.Decode, x.Router.Seed, x.Router.SeedGiven) + sitaLine(x.Decode)
		if c := x.Decode.Constraints; !c.IsEmpty() {
			head += "; constraints: " + constraintsLine(c.RequiredTaints, c.PreferredTaints)
		}
		fmt.Fprintf(w, "\n%s %s\n", st.bold("Decode:"), head)
		if err := candidateTable(x.Decode, domain, st).Render(w, opts); err != nil {
			return err
		}
	}

	v := x.Verdict
	b.WriteString("\n")
	// The headline is the risk of the decision, the same for every seed; the
	// pick this run drew is a detail under it.
	switch v.Outcome {
	case explain.OutcomeFails:
		fmt.Fprintf(&b, "%s %s\n", st.bold("Verdict:"), st.bad(x.Headline()))
		fmt.Fprintf(&b, "  %s %s\n", st.bold("Router:"), v.Message)
	case explain.OutcomeCanFail:
		fmt.Fprintf(&b, "%s %s\n", st.bold("Verdict:"), st.warn(x.Headline()))
		if line := drawLine(x, st); line != "" {
			fmt.Fprintf(&b, "  %s   %s\n", st.bold("Draw:"), line)
		}
	default:
		fmt.Fprintf(&b, "%s %s\n", st.bold("Verdict:"), st.good(x.Headline()))
	}
	if v.Cause != "" {
		fmt.Fprintf(&b, "  %s  %s\n", st.bold("Cause:"), v.Cause)
	}
	if v.Fix != "" {
		fmt.Fprintf(&b, "  %s    %s\n", st.bold("Fix:"), v.Fix)
	}
	if len(v.MayDiffer) > 0 {
		fmt.Fprintf(&b, "  %s the router may decide otherwise:\n", st.warn("May differ:"))
		for _, d := range v.MayDiffer {
			fmt.Fprintf(&b, "    - %s\n", d.Detail)
		}
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	b.Reset()

	rows, title := x.Matrix, "Every prefill landing (--all-prefill):"
	if rows == nil {
		rows, title = x.Alternatives, "Possible prefill picks (the router draws one at random):"
	}
	if len(rows) > 0 {
		fmt.Fprintf(w, "\n%s\n", st.bold(title))
		if err := matrixTable(rows, domain, st, opts.Wide).Render(w, opts); err != nil {
			return err
		}
	}

	if len(x.Excluded) > 0 {
		b.WriteString("\n" + st.bold("Not candidates:") + "\n")
		for _, e := range x.Excluded {
			fmt.Fprintf(&b, "  %s %s (%s): %s\n", st.dim("-"), e.Worker, e.Role, e.Reason)
		}
	}
	b.WriteString("\n" + st.bold("Sources:") + "\n")
	for _, s := range x.Sources {
		at := ""
		if stamp := analysis.Stamp(s.At, now); stamp != "" {
			at = " (" + stamp + ")"
		}
		fmt.Fprintf(&b, "  %-14s %s%s\n", s.What, s.Detail, at)
	}
	for _, h := range x.Router.Hops {
		fmt.Fprintf(&b, "  %-14s %s\n", h.Hop+" hop", hopLine(h, wide))
	}
	if len(x.Router.Overrides) > 0 {
		fmt.Fprintf(&b, "  %-14s %s\n", "what-if", strings.Join(x.Router.Overrides, ", "))
	}
	if len(x.Assumptions) > 0 {
		b.WriteString(st.bold("Assumptions:") + "\n")
		for _, a := range x.Assumptions {
			fmt.Fprintf(&b, "  - %s\n", a)
		}
	}
	if len(x.Notes) > 0 {
		b.WriteString(st.bold("Notes:") + "\n")
		for _, n := range x.Notes {
			sym := "i"
			if n.Severity == model.NoteWarning {
				sym = st.warn("!")
			}
			fmt.Fprintf(&b, "  %s %s\n", sym, n.Message)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// hopLine is one hop's effective configuration: whose it is, its mode,
// indexer and selection policy, and (with -o wide) every non-default value
// with its source.
func hopLine(h explain.HopConfig, wide bool) string {
	line := fmt.Sprintf("%s; mode %s; indexer %s; selection %s", h.Source, h.Mode, h.Indexer, h.Selection)
	if h.SelectionSource != "" {
		line += " (" + h.SelectionSource + ")"
	}
	if len(h.Values) == 0 {
		return line
	}
	if !wide {
		return line + fmt.Sprintf("; %d non-default value(s) (-o wide lists them)", len(h.Values))
	}
	vals := make([]string, len(h.Values))
	for i, v := range h.Values {
		vals[i] = fmt.Sprintf("%s=%s (%s)", v.Name, v.Value, v.Source)
	}
	return line + "; " + strings.Join(vals, ", ")
}

// sitaLine says which SITA band a leg was confined to.
func sitaLine(s *explain.Stage) string {
	b := s.Sita
	if b == nil {
		return ""
	}
	if !b.Applied {
		return "; SITA not applied: " + b.Why
	}
	name := func(id routecore.WorkerID) string {
		for _, c := range s.Candidates {
			if c.InstanceID == id {
				return c.Worker
			}
		}
		return id.String()
	}
	return fmt.Sprintf("; SITA band %d of %d (size %d tokens): %d worker(s), %s..%s", b.Band, b.BandCount, b.Size, len(b.Workers), name(b.First), name(b.Last))
}

// drawLine is the pick this run drew and its outcome, when the router's pick
// is random.
func drawLine(x *explain.Explanation, st style) string {
	if len(x.Alternatives) == 0 || x.Prefill == nil {
		return ""
	}
	how := "seed " + strconv.FormatUint(x.Router.Seed, 10)
	if !x.Router.SeedGiven {
		how += "; --seed N draws another"
	}
	v := x.Verdict
	out := st.good("✓ routes")
	if !v.Routable {
		out = st.bad(fmt.Sprintf("✗ fails at the %s stage (%s)", v.Stage, orDash(v.Error)))
	}
	return fmt.Sprintf("this run drew prefill %s (%s): %s", x.Prefill.Pick, how, out)
}

func routerLine(x *explain.Explanation) string {
	c := x.Router.Config
	parts := []string{"profile " + string(x.Router.Profile)}
	if x.Router.Mode.IsKV() || x.Router.Mode == "" {
		parts = append(parts,
			"credit "+num(c.OverlapScoreCredit),
			"prefill scale "+num(c.PrefillLoadScale),
			"temperature "+num(c.RouterTemperature))
	}
	if p := x.Router.Policy; p != nil {
		pol := fmt.Sprintf("policy %s %s", p.Domain, p.Enforcement)
		if p.PreferredWeight != nil {
			pol += " (weight " + num(*p.PreferredWeight) + ")"
		}
		parts = append(parts, pol)
	} else {
		parts = append(parts, "no transfer policy")
	}
	if x.Router.Thresholds.IsConfigured() {
		parts = append(parts, "busy thresholds set")
	}
	if c.ConditionalDisaggEnabled {
		parts = append(parts, "conditional disaggregation on")
	}
	return strings.Join(parts, " · ")
}

func stageLine(s *explain.Stage, seed uint64, seedGiven bool) string {
	if s.ErrorKind != "" {
		if s.ModeExplanation != "" {
			return fmt.Sprintf("%s: %s (%s)", s.Rule, s.Error, s.ErrorKind)
		}
		return "no candidate can take the request (" + s.ErrorKind + ")"
	}
	if s.ModeExplanation != "" {
		if len(s.Selected) > 1 {
			how := "seed " + strconv.FormatUint(seed, 10)
			if !seedGiven {
				how += "; --seed N draws another"
			}
			return fmt.Sprintf("%s — P column = each worker's chance (this run: %s, %s)", s.ModeExplanation, s.Pick, how)
		}
		return fmt.Sprintf("%s (%s): %s", s.Pick, s.Rule, s.ModeExplanation)
	}
	switch {
	case s.RandomTie:
		how := "seed " + strconv.FormatUint(seed, 10)
		if !seedGiven {
			how += "; --seed N draws another"
		}
		return fmt.Sprintf("%d-way tie at cost %s: the router picks one uniformly at random (this run: %s, %s)", len(s.Selected), num(s.MinCost), s.Pick, how)
	case s.Temperature > 0:
		return fmt.Sprintf("sampled at temperature %s: %s (seed %d; P column = each worker's chance)", num(s.Temperature), s.Pick, seed)
	}
	return fmt.Sprintf("%s (%s)", s.Pick, s.Rule)
}

// candidateTable lists the candidates, eligible ones by cost first.
func candidateTable(s *explain.Stage, domain string, st style) *printers.Table {
	t := &printers.Table{Columns: []printers.Column{
		{Header: "WORKER"}, {Header: "INSTANCE", Wide: true}, {Header: "RANK", Wide: true}, {Header: domain}, {Header: "NODE", Wide: true},
		{Header: "OVERLAP"}, {Header: "CACHED", Wide: true}, {Header: "PREFILL"}, {Header: "DECODE"}, {Header: "CREDIT", Wide: true},
		{Header: "COST"}, {Header: "P"}, {Header: "STATUS"},
	}}
	cands := slices.Clone(s.Candidates)
	slices.SortStableFunc(cands, func(a, b explain.Candidate) int {
		if a.Scored != b.Scored {
			if a.Scored {
				return -1
			}
			return 1
		}
		if a.Scored && a.Cost != b.Cost {
			return cmp.Compare(a.Cost, b.Cost)
		}
		return cmp.Or(cmp.Compare(a.Worker, b.Worker), cmp.Compare(a.DpRank, b.DpRank))
	})
	for _, c := range cands {
		cost, pre, dec, credit, p := "-", "-", "-", "-", "-"
		if c.Scored {
			cost, pre, dec, credit = num(c.Cost), num(c.PrefillBlocks), num(c.DecodeBlocks), num(c.Credit)
			p = pct(c.Probability)
		} else if s.ModeExplanation != "" && c.Eligible {
			p = pct(c.Probability)
		}
		status := st.good("✓ eligible")
		switch {
		case !c.Eligible:
			status = st.bad("✗ " + c.ShortReason())
		case c.Selected && c.InTieSet && len(s.Selected) > 1:
			status = st.good("✓ picked (tie)")
		case c.Selected:
			status = st.good("✓ picked")
		case s.ModeExplanation != "" && c.Reason != "":
			status = st.dim("✓ " + c.Reason)
		case c.InTieSet:
			status = st.good("✓ tie")
		}
		t.AddRow(orDash(c.Worker), strconv.FormatUint(uint64(c.InstanceID), 10), strconv.FormatUint(uint64(c.DpRank), 10),
			orDash(c.Domain), orDash(c.Node), num(c.OverlapBlocks), strconv.FormatUint(c.CachedTokens, 10), pre, dec, credit, cost, p, status)
	}
	return t
}

func matrixTable(rows []explain.MatrixRow, domain string, st style, wide bool) *printers.Table {
	t := &printers.Table{Columns: []printers.Column{
		{Header: "PREFILL"}, {Header: domain}, {Header: "P"}, {Header: "OUTCOME"}, {Header: "DECODE"}, {Header: "CONSTRAINT", Wide: true},
	}}
	// A decode tie lists every worker of the prefill's domain (thousands on a
	// large deployment): cut to what the cell shows (printers.JoinCut).
	decodeLimit := t.CellLimit(4, wide)
	for _, r := range rows {
		outcome := st.good("✓ routable")
		if !r.Routable {
			kind, _, _ := strings.Cut(r.Error, ":")
			outcome = st.bad("✗ " + kind)
		}
		t.AddRow(r.Prefill, orDash(r.Domain), pct(r.Probability), outcome, orDash(printers.JoinCut(r.DecodeSelected, ", ", decodeLimit)), orDash(strings.Join(r.RequiredTaints, ", ")))
	}
	return t
}

func constraintsLine(required []string, preferred map[string]float64) string {
	var parts []string
	for _, r := range required {
		parts = append(parts, "required "+r)
	}
	keys := make([]string, 0, len(preferred))
	for k := range preferred {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("preferred %s (weight %s)", k, num(preferred[k])))
	}
	return strings.Join(parts, ", ")
}

// num prints a float compactly: integers without decimals, others with up to 4
// significant decimals.
func num(v float64) string {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	s := strconv.FormatFloat(v, 'f', 4, 64)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

func pct(p float64) string {
	switch {
	case p == 0:
		return "0%"
	case p == 1:
		return "100%"
	case p < 0.001:
		return "<0.1%"
	}
	return strconv.FormatFloat(100*p, 'f', 1, 64) + "%"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
