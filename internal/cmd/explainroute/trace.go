package explainroute

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ai-dynamo/kubectl-dynamo/internal/cmdutil"
	"github.com/ai-dynamo/kubectl-dynamo/internal/printers"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/analysis"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/audit"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/build"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/explain"
)

// maxLogBytes bounds what --request-id reads of each --logs stream.
const maxLogBytes = 256 << 20

// logsStdin is "-" when one of the --logs reads standard input.
func logsStdin(logs []string) string {
	for _, l := range logs {
		if l == "-" {
			return "-"
		}
	}
	return ""
}

// runTrace explains a logged request: its decisions beside the model's
// (pkg/audit.TraceRequest).
func (o *Options) runTrace(ctx context.Context) error {
	if o.live != nil {
		// The frontends' KV placements give the model's index.
		o.live.opts.KVPlacements = true
	}
	b, err := o.load(ctx)
	if err != nil {
		return err
	}
	snap, err := build.Build(b)
	if err != nil {
		return err
	}
	dep, err := o.pickDeployment(ctx, snap)
	if err != nil {
		return err
	}
	m, err := audit.NewModel(snap, dep, o.DynamoVersion)
	if err != nil {
		return explainErr(err)
	}
	for _, f := range analysis.Analyze(snap, analysis.AnalyzeOptions{DynamoVersion: o.DynamoVersion}).Findings {
		if f.Namespace == dep.Namespace && f.Deployment == dep.Name {
			m.Findings = append(m.Findings, f)
		}
	}
	if sets := explain.BundleEventSets(b, dep); len(sets) > 0 {
		m.Index, _ = explain.IndexEvents(sets, m.BlockSize)
	}
	in := audit.Input{Model: m}
	var sources []string
	for _, path := range o.Logs {
		recs, st, err := cmdutil.ReadRouterLogs(o.IO.In, path, maxLogBytes)
		if err != nil {
			return err
		}
		in.Records, in.Streams = append(in.Records, recs...), append(in.Streams, st)
		sources = append(sources, path)
	}
	if len(o.Logs) == 0 {
		if in.Records, in.Streams, err = cmdutil.CaptureRouterLogs(b, dep, o.FromFile); err != nil {
			return err
		}
		for _, s := range in.Streams {
			sources = append(sources, s.Name)
		}
	}
	tr, err := audit.TraceRequest(in, o.RequestID, audit.Options{})
	if errors.Is(err, audit.ErrRequestNotLogged) {
		ids := audit.RequestIDs(in.Records)
		hint := "The logs hold no request decision at all: check they are the frontend's, with the selector's INFO lines"
		if len(ids) > 0 {
			shown := ids[:min(len(ids), 5)]
			hint = fmt.Sprintf("Try one of the %d logged requests, e.g. %s (kubectl dynamo audit-routes -o wide lists them)", len(ids), strings.Join(shown, ", "))
		}
		return cmdutil.WithHint(cmdutil.FlagErrorf("--request-id %s: %v in %s", o.RequestID, err, strings.Join(sources, ", ")), hint)
	}
	if err != nil {
		return err
	}
	if ok, err := o.Output.PrintStructured(o.IO.Out, tr); ok {
		return err
	}
	return printTrace(o.IO.Out, tr, sources, o.Output.Format == cmdutil.OutputWide, o.Output.NoHeaders, cmdutil.Style{Color: o.IO.ColorEnabled()})
}

// printTrace writes a logged request's decisions beside the model's.
func printTrace(w io.Writer, t *audit.Trace, sources []string, wide, noHeaders bool, st cmdutil.Style) error {
	opts := printers.TableOptions{Wide: wide, NoHeaders: noHeaders}
	if st.Color {
		opts.HeaderStyle = printers.Bold
	}
	var b strings.Builder
	if !noHeaders {
		fmt.Fprintf(&b, "%s %s   %s %s   %s %s\n%s %s\n", st.Bold("Context:"), dashIf(t.Context), st.Bold("Deployment:"), dashIf(t.Deployment),
			st.Bold("Request:"), t.RequestID, st.Bold("Logs:"), strings.Join(sources, ", "))
	}
	for _, h := range t.Hops {
		if !noHeaders {
			fmt.Fprintf(&b, "\n%s  logged: %s   model: %s   temperature %s", st.Bold(titleHop(h.Hop)), pickText(&h.Logged), modelText(h), strconv.FormatFloat(h.Temperature, 'f', -1, 64))
			if h.ISL > 0 {
				fmt.Fprintf(&b, "   request: %d tokens, %d blocks", h.ISL, h.Blocks)
			}
			b.WriteString("\n")
		}
		if _, err := io.WriteString(w, b.String()); err != nil {
			return err
		}
		b.Reset()
		if err := loggedCandidateTable(h).Render(w, opts); err != nil {
			return err
		}
		if noHeaders {
			continue
		}
		fmt.Fprintf(&b, "Why: %s\n", h.Why)
		fmt.Fprintf(&b, "Checks: %s\n", checksLine(h))
		if wide {
			fmt.Fprintf(&b, "Lines: %s\n", positions(h.Lines))
		}
	}
	if len(t.Disagreements) > 0 && !noHeaders {
		b.WriteString("\n" + st.Bold("Disagreements:") + "\n")
		for _, d := range t.Disagreements {
			fmt.Fprintf(&b, "✗ %s  %s  worker %s: %s logged %s, expected %s\n    cause (%s): %s\n", d.Check, d.Hop, d.Worker, d.Field, d.Logged, d.Expected, d.CauseKind, d.Cause)
		}
	}
	if len(t.Notes) > 0 && !noHeaders {
		b.WriteString("\n" + st.Bold("Notes:") + "\n")
		for _, n := range t.Notes {
			b.WriteString("- " + n + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func dashIf(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func titleHop(h string) string {
	if h == "" {
		return "Hop"
	}
	return strings.ToUpper(h[:1]) + h[1:]
}

func pickText(p *audit.Pick) string {
	if p == nil || p.Worker == "" {
		return "-"
	}
	if p.Cost == "" {
		return p.Worker
	}
	return p.Worker + " (cost " + p.Cost + ")"
}

func modelText(h audit.HopTrace) string {
	switch {
	case h.ModelError != "" && h.Model == nil:
		return "- (" + h.ModelError + ")"
	case len(h.ModelTies) > 1:
		names := make([]string, len(h.ModelTies))
		for i, p := range h.ModelTies {
			names[i] = p.Worker
		}
		return fmt.Sprintf("a tie at cost %s among %s (the router picks one at random)", h.ModelTies[0].Cost, strings.Join(names, ", "))
	}
	return pickText(h.Model)
}

// loggedCandidateTable is one row per candidate: the logged terms, then the model's.
func loggedCandidateTable(h audit.HopTrace) *printers.Table {
	t := &printers.Table{Columns: []printers.Column{{Header: "Worker"}, {Header: "Cached"}, {Header: "Raw", Wide: true}, {Header: "Credit", Wide: true},
		{Header: "Prefill"}, {Header: "Decode"}, {Header: "Requests", Wide: true}, {Header: "Logit"}, {Header: "Model cached"}, {Header: "Model cost"}, {Header: "Pick"}}}
	for _, c := range h.Candidates {
		row := []string{c.Worker, "-", "-", "-", "-", "-", "-", "-", "-", "-", ""}
		if f := c.Logged; f != nil {
			row[1], row[7] = f.EffectiveBlocks.Text, f.Logit.Text
			switch f.Shape {
			case audit.ShapePrefill:
				row[2], row[3], row[4], row[5], row[6] = f.Raw.Text, f.Credit.Text, f.Adjusted.Text, f.Decode.Text, f.RequestCost.Text
			case audit.ShapeDecodeOverlap:
				row[3], row[5], row[6] = f.Credit.Text, f.Decode.Text, f.RequestCost.Text
			case audit.ShapeWeighted:
				row[4], row[5] = f.PrefillBlocks.Text, f.Decode.Text
			}
		}
		if c.ModelCached != nil {
			row[8] = strconv.FormatFloat(*c.ModelCached, 'f', 2, 64)
		}
		row[9] = audit.FormatCost(c.ModelCost)
		if c.ModelCost == nil && c.ModelReason != "" {
			row[9] = c.ModelReason
		}
		var picks []string
		if c.Picked {
			picks = append(picks, "router")
		}
		switch {
		case c.ModelPicked && len(h.ModelTies) > 1:
			picks = append(picks, "model (tie)")
		case c.ModelPicked:
			picks = append(picks, "model")
		}
		row[10] = "-"
		if len(picks) > 0 {
			row[10] = strings.Join(picks, ", ")
		}
		t.AddRow(row...)
	}
	return t
}

func checksLine(h audit.HopTrace) string {
	var parts []string
	for _, c := range audit.Checks {
		out := h.Checks[c]
		switch out {
		case audit.OutcomeAgree:
			out = "ok"
		case audit.OutcomeDisagree:
			out = "DIFFERS"
		default:
			out = "not covered"
			if why := h.NotCovered[c]; why != "" {
				out += " (" + why + ")"
			}
		}
		parts = append(parts, string(c)+" "+out)
	}
	return strings.Join(parts, ", ")
}

func positions(ps []audit.Position) string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.String()
	}
	return strings.Join(out, ", ")
}
