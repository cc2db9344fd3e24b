package topology

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/ai-dynamo/kubectl-dynamo/internal/cmdutil"
	"github.com/ai-dynamo/kubectl-dynamo/internal/printers"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/analysis"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
)

// style is the report style shared with preflight.
type style = cmdutil.Style

// printReport writes the human form of a report.
func printReport(w io.Writer, r *model.Report, o *Options, st style) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s   %s %s   %s %s\n",
		st.Bold("Context:"), orDash(r.Context), st.Bold("Namespace:"), namespaceLabel(r.Namespace), st.Bold("Sources:"), sourcesLine(r.Sources, o.Now()))
	if len(r.Deployments) == 0 {
		b.WriteString("\nNo DynamoGraphDeployment found.\n")
	}
	for i := range r.Deployments {
		d := &r.Deployments[i]
		b.WriteString("\n")
		fmt.Fprintf(&b, "%s %s   %s %s   %s %s   %s %s\n", st.Bold("Deployment:"), deploymentName(d),
			st.Bold("Policy:"), policyLine(d.Policy), st.Bold("Router:"), orDash(d.RouterMode), st.Bold("Dynamo:"), d.Dynamo.Short())
		if o.Output.Format == "wide" && d.Dynamo != nil {
			fmt.Fprintf(&b, "%s %s\n", st.Bold("Dynamo release:"), dynamoLong(d.Dynamo))
		}
		if o.Output.Format == "wide" && d.RoutingQuality != nil {
			fmt.Fprintf(&b, "%s %s\n", st.Bold("KV routing:"), d.RoutingQuality.Line())
		}
		b.WriteString("\n")
		if d.NotDeployed {
			b.WriteString(notDeployedText(o))
			continue
		}
		if _, err := io.WriteString(w, b.String()); err != nil {
			return err
		}
		b.Reset()
		if o.Tree && d.Tree != nil {
			writeTree(&b, d.Tree, "", true, true, treeMarks(d, r.Findings))
		} else if err := domainTable(d, r.Findings, o).Render(w, tableOptions(o, st)); err != nil {
			return err
		}
		if o.Output.Format == "wide" && !o.Tree && len(d.Workers) > 0 {
			if _, err := io.WriteString(w, "\n"); err != nil {
				return err
			}
			if err := workerTable(d).Render(w, tableOptions(o, st)); err != nil {
				return err
			}
		}
	}
	if len(r.Findings) > 0 {
		b.WriteString("\n" + st.Bold("Findings:") + "\n")
		for _, f := range r.Findings {
			where := f.Deployment
			if f.Namespace != "" {
				where = f.Namespace + "/" + f.Deployment
			}
			if f.Domain != "" {
				where += " " + f.Domain
			}
			fmt.Fprintf(&b, "%s %s  %s  %s\n", st.Severity(f.Severity, cmdutil.SeveritySymbol(f.Severity)+" "+string(f.Severity)),
				st.Bold(f.ID), where, f.Message)
			if f.Hint != "" {
				fmt.Fprintf(&b, "    fix: %s\n", f.Hint)
			}
			if o.Output.Format == "wide" && len(f.Objects) > 0 {
				fmt.Fprintf(&b, "    objects: %s\n", strings.Join(f.Objects, ", "))
			}
		}
	} else if len(r.Deployments) > 0 {
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
	_, err := io.WriteString(w, b.String())
	return err
}

func tableOptions(o *Options, st style) printers.TableOptions {
	opts := printers.TableOptions{Wide: o.Output.Format == "wide", NoHeaders: o.Output.NoHeaders}
	if st.Color {
		opts.HeaderStyle = printers.Bold
	}
	return opts
}

// domainTable is one row per value of the transfer domain.
func domainTable(d *model.DeploymentReport, findings []model.Finding, o *Options) *printers.Table {
	domainHeader := "Domain"
	if d.Policy != nil && d.Policy.Domain != "" {
		domainHeader = d.Policy.Domain
	}
	// Aggregated workers (prefill and decode in one process) get their own
	// column in the default table when the deployment has any.
	aggregated := false
	for _, dom := range d.Domains {
		aggregated = aggregated || dom.Aggregated.Total > 0
	}
	t := &printers.Table{Columns: []printers.Column{
		{Header: domainHeader}, {Header: "Prefill"}, {Header: "Decode"}, {Header: "Prefill GPUs"}, {Header: "Decode GPUs"},
		{Header: "P:D"}, {Header: "Decode Load"}, {Header: "Flags", MaxWidth: printers.Unlimited},
		{Header: "Prefill KV Tokens", Wide: true}, {Header: "Decode KV Tokens", Wide: true}, {Header: "Aggregated", Wide: !aggregated},
		{Header: "Prefill Workers", Wide: true, MaxWidth: printers.Unlimited}, {Header: "Decode Workers", Wide: true, MaxWidth: printers.Unlimited},
	}}
	for _, dom := range d.Domains {
		value := dom.Value
		if value == "" {
			value = "(no value)"
			if d.Policy == nil {
				value = "(all)"
			} else if allPending(dom) {
				value = "(not scheduled)" // no node yet, so no value: not a label problem
			}
		}
		t.AddRow(value,
			fmt.Sprintf("%d/%d", dom.Prefill.Ready, dom.Prefill.Total),
			fmt.Sprintf("%d/%d", dom.Decode.Ready, dom.Decode.Total),
			strconv.FormatInt(dom.Prefill.GPUs, 10), strconv.FormatInt(dom.Decode.GPUs, 10),
			ratio(dom.PrefillToDecode), percent(dom.DecodeLoadPercent), orDash(flags(dom, findings, d)),
			tokens(dom.Prefill.KvTokens), tokens(dom.Decode.KvTokens),
			fmt.Sprintf("%d/%d", dom.Aggregated.Ready, dom.Aggregated.Total),
			strings.Join(printers.Cells(dom.Prefill.Workers), ","), strings.Join(printers.Cells(dom.Decode.Workers), ","))
	}
	return t
}

// deploymentName is namespace/name, or the name alone when the DGD has no
// namespace (a manifest that does not set one).
func deploymentName(d *model.DeploymentReport) string {
	if d.Namespace == "" {
		return d.Name
	}
	return d.Namespace + "/" + d.Name
}

// notDeployedText replaces the domain table of a DGD that has no pods and no
// status: a manifest, not a deployment.
func notDeployedText(o *Options) string {
	manifest := "MANIFEST"
	if o.FromFile != "" && o.FromFile != "-" {
		manifest = o.FromFile
	}
	return "Nothing is deployed: this DynamoGraphDeployment has no pods and no status (a manifest that has not been applied,\n" +
		"or a capture without its pods), so there is no capacity to show.\n" +
		"To check a manifest before it is applied: kubectl dynamo preflight -f " + manifest + "\n"
}

// allPending reports whether every replica counted in a domain row has a pod
// the scheduler has not placed (the row of replicas without a node).
func allPending(dom model.DomainReport) bool {
	n, p := 0, 0
	for _, c := range []model.RoleCapacity{dom.Prefill, dom.Decode, dom.Aggregated} {
		n, p = n+c.Total, p+c.Pending
	}
	return n > 0 && p == n
}

// workerTable is one row per worker replica (wide output): its role and the
// signal that decided it, its pods (leader first), GPUs and domain value.
func workerTable(d *model.DeploymentReport) *printers.Table {
	domainHeader := "Domain"
	if d.Policy != nil && d.Policy.Domain != "" {
		domainHeader = d.Policy.Domain
	}
	t := &printers.Table{Columns: []printers.Column{
		{Header: "Worker"}, {Header: "Component"}, {Header: "Role"}, {Header: "Role Signal", MaxWidth: printers.Unlimited},
		{Header: "Ready"}, {Header: "GPUs"}, {Header: domainHeader}, {Header: "Pods", MaxWidth: printers.Unlimited},
	}}
	for _, wr := range d.Workers {
		ready := "no"
		switch {
		case wr.Ready:
			ready = "yes"
		case wr.Pending != nil:
			ready = "pending"
		case wr.Unregistered:
			ready = "unregistered"
		}
		value := wr.Value
		if value == "" {
			value = "-"
			if d.Policy != nil {
				value = "(no value)"
				if wr.Pending != nil {
					value = "(not scheduled)"
				}
			}
		}
		t.AddRow(wr.Leader, orDash(wr.Component), string(wr.Role), orDash(wr.RoleSignal), ready,
			strconv.FormatInt(wr.GPUs, 10), value, strconv.Itoa(len(wr.Pods)))
	}
	return t
}

// flags lists the findings about a domain value, each with its severity symbol.
func flags(dom model.DomainReport, findings []model.Finding, d *model.DeploymentReport) string {
	parts := make([]string, 0, len(dom.Flags))
	for _, id := range dom.Flags {
		sev := model.SeverityInfo
		for _, f := range findings {
			if f.ID == id && f.Deployment == d.Name && f.Namespace == d.Namespace && f.Domain == dom.Value {
				sev = f.Severity
				break
			}
		}
		parts = append(parts, cmdutil.SeveritySymbol(sev)+" "+id)
	}
	return strings.Join(parts, ", ")
}

// treeMarks returns, for a tree node at the policy's domain level, the findings
// flagged on its value ("✗ PrefillDomainWithoutDecode"), as the table's FLAGS
// column shows them: --tree marks the failing domain too.
func treeMarks(d *model.DeploymentReport, findings []model.Finding) func(*model.TreeNode) string {
	marks := map[string]string{}
	if d.Policy != nil {
		for _, dom := range d.Domains {
			if f := flags(dom, findings, d); f != "" {
				marks[dom.Value] = f
			}
		}
	}
	return func(n *model.TreeNode) string {
		if d.Policy == nil || n.Domain != d.Policy.Domain {
			return ""
		}
		return marks[n.Value]
	}
}

func writeTree(b *strings.Builder, n *model.TreeNode, indent string, last, root bool, mark func(*model.TreeNode) string) {
	label := "(deployment)"
	if !root {
		label = n.Domain + " " + n.Value
		if n.Value == "" {
			label = n.Domain + " <none>"
		}
	}
	branch := ""
	childIndent := indent
	if !root {
		branch = "├─ "
		childIndent = indent + "│  "
		if last {
			branch = "└─ "
			childIndent = indent + "   "
		}
	}
	flagged := ""
	if mark != nil && !root {
		if m := mark(n); m != "" {
			flagged = "   " + m
		}
	}
	fmt.Fprintf(b, "%s%s%s   prefill %d/%d (%d GPUs)   decode %d/%d (%d GPUs)%s\n", indent, branch, label,
		n.Prefill.Ready, n.Prefill.Total, n.Prefill.GPUs, n.Decode.Ready, n.Decode.Total, n.Decode.GPUs, flagged)
	for i, c := range n.Children {
		writeTree(b, c, childIndent, i == len(n.Children)-1, false, mark)
	}
}

func policyLine(p *model.PolicySummary) string {
	if p == nil {
		return "none (no kvTransferPolicy)"
	}
	s := p.Domain + " " + p.Enforcement
	if p.PreferredWeight != nil {
		s += " weight " + strconv.FormatFloat(*p.PreferredWeight, 'g', -1, 64)
	}
	switch {
	case p.LabelKey != "":
		s += " (label " + p.LabelKey + ")"
	case p.ClusterTopologyName != "":
		s += " (topology " + p.ClusterTopologyName + ")"
	}
	return s
}

// sourcesLine names each source with when it was read and how long ago:
// "capture (2026-11-20 12:03, 47h ago)", "frontend (…, DEGRADED)".
func sourcesLine(src []model.SourceStatus, now time.Time) string {
	if len(src) == 0 {
		return "-"
	}
	parts := make([]string, 0, len(src))
	for _, s := range src {
		var detail []string
		if stamp := analysis.Stamp(s.At, now); stamp != "" {
			detail = append(detail, stamp)
		}
		if s.Degraded {
			detail = append(detail, "DEGRADED")
		}
		p := string(s.Kind)
		if len(detail) > 0 {
			p += " (" + strings.Join(detail, ", ") + ")"
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, ", ")
}

func namespaceLabel(ns string) string {
	if ns == "" {
		return "(all)"
	}
	return ns
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func ratio(r *float64) string {
	if r == nil {
		return "-"
	}
	return strconv.FormatFloat(*r, 'f', 2, 64)
}

func percent(p *float64) string {
	if p == nil {
		return "-"
	}
	return strconv.FormatFloat(*p, 'f', 0, 64) + "%"
}

func tokens(n uint64) string {
	if n == 0 {
		return "-"
	}
	return strconv.FormatUint(n, 10)
}

// dynamoLong is the release with where it was read (and the operator's).
func dynamoLong(d *model.DynamoRelease) string {
	s := d.Source
	if d.Known && !d.Override {
		s = d.Version + ", " + s
	}
	if d.Operator != "" {
		s += "; operator " + d.Operator
	}
	return s
}
