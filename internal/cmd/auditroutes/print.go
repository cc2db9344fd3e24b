package auditroutes

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ai-dynamo/kubectl-dynamo/internal/cmdutil"
	"github.com/ai-dynamo/kubectl-dynamo/internal/printers"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/audit"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
)

func (o *Options) print(r *audit.Report) error {
	if ok, err := o.Output.PrintStructured(o.IO.Out, r); ok {
		return err
	}
	st := cmdutil.Style{Color: o.IO.ColorEnabled()}
	wide := o.Output.Format == cmdutil.OutputWide
	opts := printers.TableOptions{Wide: wide, NoHeaders: o.Output.NoHeaders}
	if st.Color {
		opts.HeaderStyle = printers.Bold
	}
	if o.Output.NoHeaders {
		// The notes go to stderr: the rows stay parseable and a partial
		// audit is not silent.
		for _, n := range r.Notes {
			fmt.Fprintf(o.IO.ErrOut, "warning: %s\n", n)
		}
		return checkTable(r, st).Render(o.IO.Out, opts)
	}
	return printReport(o.IO.Out, r, wide, st, opts)
}

// printReport writes the human report.
func printReport(w io.Writer, r *audit.Report, wide bool, st cmdutil.Style, opts printers.TableOptions) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s   %s %s   %s %s   %s %s\n", st.Bold("Context:"), dash(r.Context), st.Bold("Deployment:"), dash(r.Deployment),
		st.Bold("Router:"), dash(r.RouterMode), st.Bold("Dynamo:"), dash(r.Release))
	fmt.Fprintf(&b, "%s %s\n", st.Bold("Logs:"), logsLine(r.Logs))
	b.WriteString("\n")
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	b.Reset()
	if err := checkTable(r, st).Render(w, opts); err != nil {
		return err
	}
	fmt.Fprintf(&b, "\n%s %s\n", st.Bold("Agreement:"), agreementLine(r))
	if wide && len(r.Decisions) > 0 {
		b.WriteString("\n")
		if _, err := io.WriteString(w, b.String()); err != nil {
			return err
		}
		b.Reset()
		if err := decisionTable(r).Render(w, opts); err != nil {
			return err
		}
		if r.DecisionsOmitted > 0 {
			fmt.Fprintf(&b, "(%d more decisions; -o json lists the first %d)\n", r.DecisionsOmitted, len(r.Decisions))
		}
	}
	if len(r.Disagreements) > 0 {
		b.WriteString("\n" + st.Bold("Disagreements:") + "\n")
		for _, d := range r.Disagreements {
			writeDisagreement(&b, d, wide, st)
		}
		if r.DisagreementsOmitted > 0 {
			fmt.Fprintf(&b, "(%d more disagreements not listed)\n", r.DisagreementsOmitted)
		}
	} else if covered(r) > 0 {
		b.WriteString("\nNo disagreements: every decision the checks covered agrees with the model.\n")
	}
	if nc := notCovered(r); len(nc) > 0 {
		b.WriteString("\n" + st.Bold("Not covered:") + "\n")
		for _, line := range nc {
			b.WriteString("- " + line + "\n")
		}
	}
	if len(r.Notes) > 0 {
		b.WriteString("\n" + st.Bold("Notes:") + "\n")
		for _, n := range r.Notes {
			b.WriteString("- " + n + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// logsLine says what was read: the streams, their lines and the decisions.
func logsLine(l audit.Logs) string {
	names := make([]string, 0, len(l.Streams))
	lines, records := 0, 0
	for _, s := range l.Streams {
		n := s.Name
		if s.Gzip {
			n += " (gzip)"
		}
		names = append(names, n)
		lines += s.Lines
		for _, c := range s.Records {
			records += c
		}
	}
	s := fmt.Sprintf("%s   %d lines, %d router lines, %d decisions", strings.Join(names, ", "), lines, records, l.Join.Decisions)
	if l.First != "" {
		s += fmt.Sprintf(", %s .. %s", l.First, l.Last)
	}
	return s
}

// checkTable is one row per check over every hop ("all"), then per hop.
func checkTable(r *audit.Report, st cmdutil.Style) *printers.Table {
	t := &printers.Table{Columns: []printers.Column{{Header: "Hop"}, {Header: "Check"}, {Header: "Covered"}, {Header: "Agreed"},
		{Header: "Rate"}, {Header: "Not covered"}, {Header: "Why not covered", Wide: true}}}
	row := func(hop string, c audit.CheckResult) {
		why := ""
		if len(c.Reasons) > 0 {
			why = c.Reasons[0].Reason
			if len(c.Reasons) > 1 {
				why += fmt.Sprintf(" (+%d more reasons)", len(c.Reasons)-1)
			}
		}
		t.AddRow(hop, string(c.Check), strconv.Itoa(c.Covered), strconv.Itoa(c.Agreed), rateCell(c.Rate, st), strconv.Itoa(c.NotCovered), why)
	}
	for _, c := range r.Checks {
		row("all", c)
	}
	for _, h := range r.Hops {
		for _, c := range h.Checks {
			row(h.Hop, c)
		}
	}
	return t
}

// rateCell colours a rate: green when every covered decision agreed, red
// otherwise.
func rateCell(rate *float64, st cmdutil.Style) string {
	s := audit.FormatRate(rate)
	if !st.Color || rate == nil {
		return s
	}
	if *rate == 1 {
		return printers.Color("32", s)
	}
	return printers.Color("31", s)
}

func covered(r *audit.Report) int {
	n := 0
	for _, c := range r.Checks {
		n += c.Covered
	}
	return n
}

func agreementLine(r *audit.Report) string {
	n, a := 0, 0
	for _, c := range r.Checks {
		n += c.Covered
		a += c.Agreed
	}
	if n == 0 {
		return "- (no check covered any decision)"
	}
	return fmt.Sprintf("%s (%d of %d check runs agreed)", audit.FormatRate(r.Agreement), a, n)
}

// notCovered says, per check, why decisions were not covered.
func notCovered(r *audit.Report) []string {
	var out []string
	for _, c := range r.Checks {
		for _, reason := range c.Reasons {
			out = append(out, fmt.Sprintf("%s: %d decision(s): %s", c.Check, reason.Decisions, reason.Reason))
		}
	}
	return out
}

func writeDisagreement(b *strings.Builder, d audit.Disagreement, wide bool, st cmdutil.Style) {
	where := d.Hop
	if d.RequestID != "" {
		where += "  request " + d.RequestID
	}
	worker := d.Worker
	if d.Worker != d.WorkerID.String() {
		worker += fmt.Sprintf(" (%s/%d)", d.WorkerID, d.DpRank)
	} else {
		worker += fmt.Sprintf("/%d", d.DpRank)
	}
	fmt.Fprintf(b, "%s %s  %s  worker %s: %s logged %s, expected %s\n", st.Severity(model.SeverityError, "✗"), st.Bold(string(d.Check)),
		strings.TrimSpace(where), worker, d.Field, d.Logged, d.Expected)
	fmt.Fprintf(b, "    cause (%s): %s\n", d.CauseKind, d.Cause)
	if len(d.Findings) > 0 {
		fmt.Fprintf(b, "    findings: %s (kubectl dynamo topology)\n", strings.Join(d.Findings, ", "))
	}
	if wide || len(d.Lines) <= 3 {
		fmt.Fprintf(b, "    lines: %s\n", positions(d.Lines))
	} else {
		fmt.Fprintf(b, "    lines: %s, … (%d lines; -o wide lists them)\n", positions(d.Lines[:3]), len(d.Lines))
	}
}

func positions(ps []audit.Position) string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.String()
	}
	return strings.Join(out, ", ")
}

// decisionTable is one row per decision (-o wide).
func decisionTable(r *audit.Report) *printers.Table {
	t := &printers.Table{Columns: []printers.Column{{Header: "Decision"}, {Header: "Request"}, {Header: "Hop"}, {Header: "Selected"},
		{Header: "Logit"}, {Header: "Scored"}, {Header: "Ties"}}}
	for _, c := range audit.Checks {
		t.Columns = append(t.Columns, printers.Column{Header: string(c)})
	}
	t.Columns = append(t.Columns, printers.Column{Header: "Lines"})
	for _, d := range r.Decisions {
		ties := "-"
		if d.Ties > 0 {
			ties = strconv.Itoa(d.Ties)
		}
		sel := d.Selected
		if sel != "" {
			sel += "/" + strconv.FormatUint(uint64(d.DpRank), 10)
		}
		cells := []string{strconv.Itoa(d.Seq), d.RequestID, d.Hop, sel, d.Logit, strconv.Itoa(d.Candidates), ties}
		for _, c := range audit.Checks {
			cells = append(cells, map[string]string{audit.OutcomeAgree: "ok", audit.OutcomeDisagree: "DIFFERS", audit.OutcomeNotCovered: "-"}[d.Checks[c]])
		}
		cells = append(cells, lineRange(d.Lines))
		t.AddRow(cells...)
	}
	return t
}

// lineRange shows a decision's lines as source:first-last.
func lineRange(ps []audit.Position) string {
	if len(ps) == 0 {
		return ""
	}
	first, last := ps[0], ps[len(ps)-1]
	if first.Source != last.Source {
		return positions([]audit.Position{first, last})
	}
	if first.Line == last.Line {
		return first.String()
	}
	return fmt.Sprintf("%s-%d", first.String(), last.Line)
}
