package preflight

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ai-dynamo/kubectl-dynamo/internal/cmdutil"
	"github.com/ai-dynamo/kubectl-dynamo/internal/printers"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/preflight"
)

// style is the report style shared with topology.
type style = cmdutil.Style

func (o *Options) tableOptions(st style) printers.TableOptions {
	opts := printers.TableOptions{Wide: o.Output.Format == "wide", NoHeaders: o.Output.NoHeaders}
	if st.Color {
		opts.HeaderStyle = printers.Bold
	}
	return opts
}

func (o *Options) print(r *preflight.Report) error {
	st := style{Color: o.IO.ColorEnabled()}
	w := o.IO.Out
	if o.Output.NoHeaders {
		for _, n := range r.Notes {
			if n.Severity == model.NoteWarning {
				fmt.Fprintf(o.IO.ErrOut, "warning: %s: %s\n", n.Source, n.Message)
			}
		}
		t := &printers.Table{}
		several := len(r.Deployments) > 1
		for i := range r.Deployments {
			d := &r.Deployments[i]
			ct := componentTable(d)
			if several {
				t.Columns = append([]printers.Column{{Header: "DEPLOYMENT"}}, ct.Columns...)
				for _, row := range ct.Rows {
					t.AddRow(append([]string{d.Namespace + "/" + d.Name}, row...)...)
				}
			} else {
				t = ct
			}
		}
		if err := t.Render(w, o.tableOptions(st)); err != nil {
			return err
		}
		// The findings stay: a CI log must say which, not only how many.
		var b strings.Builder
		for _, f := range r.Findings {
			b.WriteString(findingLine(st, f) + "\n")
		}
		_, err := io.WriteString(w, b.String())
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s   %s %s\n", st.Bold("Context:"), orDash(r.Context), st.Bold("Nodes:"), nodesLine(r))
	flush := func() error {
		_, err := io.WriteString(w, b.String())
		b.Reset()
		return err
	}
	for i := range r.Deployments {
		d := &r.Deployments[i]
		fmt.Fprintf(&b, "\n%s %s/%s (%s %s)   %s %s   %s %s   %s %s\n\n", st.Bold("Deployment:"), d.Namespace, d.Name, d.APIVersion, d.Source,
			st.Bold("Policy:"), policyLine(d.Policy, d.PolicyInvalid), st.Bold("Router:"), orDash(d.RouterMode), st.Bold("Dynamo:"), d.Dynamo.Short())
		if err := flush(); err != nil {
			return err
		}
		if err := componentTable(d).Render(w, o.tableOptions(st)); err != nil {
			return err
		}
		if d.Policy != nil && len(d.Domains) > 0 {
			b.WriteString("\n")
			if err := flush(); err != nil {
				return err
			}
			if err := domainTable(d, r.Cluster != nil).Render(w, o.tableOptions(st)); err != nil {
				return err
			}
		}
	}
	if len(r.Findings) > 0 {
		b.WriteString("\n" + st.Bold("Findings:") + "\n")
		for _, f := range r.Findings {
			b.WriteString(findingLine(st, f) + "\n")
			if f.Hint != "" {
				fmt.Fprintf(&b, "    fix: %s\n", f.Hint)
			}
			if o.Output.Format == "wide" && len(f.Objects) > 0 {
				fmt.Fprintf(&b, "    objects: %s\n", strings.Join(f.Objects, ", "))
			}
		}
	} else {
		b.WriteString("\nNo findings.\n")
	}
	if len(r.Notes) > 0 {
		b.WriteString("\n" + st.Bold("Notes:") + "\n")
		for _, n := range r.Notes {
			prefix := string(n.Source)
			if n.Deployment != "" {
				prefix += " " + n.Deployment
			}
			fmt.Fprintf(&b, "- %s: %s\n", prefix, n.Message)
		}
	}
	return flush()
}

// findingLine is one finding on one line: severity, id, certainty, the
// deployment (and domain value), file:line, message.
func findingLine(st style, f preflight.Finding) string {
	where := f.Namespace + "/" + f.Deployment
	if f.Domain != "" {
		where += " " + f.Domain
	}
	if loc := location(f); loc != "" {
		where += "  " + loc
	}
	return fmt.Sprintf("%s %s (%s)  %s  %s", st.Severity(f.Severity, cmdutil.SeveritySymbol(f.Severity)+" "+string(f.Severity)),
		st.Bold(f.ID), f.Certainty, where, f.Message)
}

// location is "file:line" ("file" when the line is unknown, "" without a
// file).
func location(f preflight.Finding) string {
	switch {
	case f.File == "":
		return ""
	case f.Line > 0:
		return fmt.Sprintf("%s:%d", f.File, f.Line)
	}
	return f.File
}

func nodesLine(r *preflight.Report) string {
	c := r.Cluster
	if c == nil {
		return "none (manifests checked only)"
	}
	src := c.Source
	if c.Detail != "" {
		src += " " + c.Detail
	}
	return fmt.Sprintf("%s (%d nodes, %d with GPUs; nvidia.com/gpu %d allocatable, %d requested)", src, c.Nodes, c.GPUNodes, c.AllocatableGPUs, c.RequestedGPUs)
}

func componentTable(d *preflight.DeploymentReport) *printers.Table {
	domain := "DOMAIN"
	if d.Policy != nil && d.Policy.Domain != "" {
		domain = strings.ToUpper(d.Policy.Domain)
	}
	t := &printers.Table{Columns: []printers.Column{
		{Header: "COMPONENT"}, {Header: "ROLE"}, {Header: "REPLICAS"}, {Header: "NODES/REPLICA"}, {Header: "GPUS/POD"},
		{Header: "ELIGIBLE NODES"}, {Header: "FITS"}, {Header: "ROLE SIGNAL", Wide: true}, {Header: "CONSTRAINTS", Wide: true},
		{Header: "CAN LAND IN (" + domain + ")", MaxWidth: printers.Unlimited},
	}}
	for _, c := range d.Components {
		el, fits := "-", "-"
		if c.EligibleNodes != nil {
			el = strconv.Itoa(*c.EligibleNodes)
		}
		if c.Fits != nil {
			fits = fmt.Sprintf("%d/%d", *c.Fits, c.Replicas)
		}
		land := "-"
		switch {
		case c.AnyDomain:
			land = "any"
		case len(c.Domains) > 0:
			var vs []string
			for _, v := range c.Domains {
				vs = append(vs, orNone(v))
			}
			land = strings.Join(printers.Cells(vs), " ")
		case c.Role == string(model.RolePrefill) || c.Role == string(model.RoleDecode):
			if d.Policy != nil && c.EligibleNodes != nil {
				land = "nowhere"
			}
		}
		t.AddRow(c.Name, c.Role, strconv.Itoa(int(c.Replicas)), strconv.Itoa(int(c.NodesPerReplica)), strconv.FormatInt(c.GPUsPerPod, 10),
			el, fits, orDash(c.RoleSignal), orDash(strings.Join(c.Constraints, "; ")), land)
	}
	return t
}

func domainTable(d *preflight.DeploymentReport, cluster bool) *printers.Table {
	t := &printers.Table{Columns: []printers.Column{
		{Header: strings.ToUpper(d.Policy.Domain)}, {Header: "NODES"}, {Header: "FREE GPUS"}, {Header: "PREFILL"}, {Header: "DECODE"},
		{Header: "PREFILL COMPONENTS", Wide: true}, {Header: "DECODE COMPONENTS", Wide: true}, {Header: "FLAGS", MaxWidth: printers.Unlimited},
	}}
	for _, v := range d.Domains {
		nodes, free := "-", "-"
		if cluster {
			nodes, free = strconv.Itoa(v.Nodes), strconv.FormatInt(v.FreeGPUs, 10)
		}
		flags := "-"
		if len(v.Flags) > 0 {
			flags = strings.Join(v.Flags, ",")
		}
		t.AddRow(v.Value, nodes, free, v.Prefill, v.Decode, orDash(strings.Join(v.PrefillComponents, ",")), orDash(strings.Join(v.DecodeComponents, ",")), flags)
	}
	return t
}

func policyLine(p *model.PolicySummary, invalid bool) string {
	switch {
	case invalid && p == nil:
		return "invalid (InvalidPolicy; not used)"
	case p == nil:
		return "none (no kvTransferPolicy)"
	}
	s := orDash(p.Domain) + " " + orDash(p.Enforcement)
	if p.PreferredWeight != nil {
		s += " weight " + strconv.FormatFloat(*p.PreferredWeight, 'g', -1, 64)
	}
	switch {
	case p.LabelKey != "":
		s += " (label " + p.LabelKey + ")"
	case p.ClusterTopologyName != "":
		s += " (topology " + p.ClusterTopologyName + ")"
	}
	if invalid {
		s += ", invalid (InvalidPolicy; not used)"
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}
