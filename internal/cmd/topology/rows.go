package topology

import (
	"io"
	"strings"

	"github.com/ai-dynamo/kubectl-dynamo/internal/printers"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
)

// printRows is --no-headers, as kubectl means it: the data rows only, with no
// Context:, Deployment:, Findings: or Notes: lines, so that `| awk '{print $1}'`
// reads the first column of every row. The rows of every deployment form one
// table; with more than one deployment a first column names it
// (NAMESPACE/NAME). With --tree, the tree lines only. Findings still decide
// the exit code, and each domain's are in its FLAGS column.
func printRows(w io.Writer, r *model.Report, o *Options, st style) error {
	if o.Tree {
		var b strings.Builder
		for i := range r.Deployments {
			if d := &r.Deployments[i]; d.Tree != nil {
				writeTree(&b, d.Tree, "", true, true, treeMarks(d, r.Findings))
			}
		}
		_, err := io.WriteString(w, b.String())
		return err
	}
	many := len(r.Deployments) > 1
	all := &printers.Table{}
	for i := range r.Deployments {
		d := &r.Deployments[i]
		t := domainTable(d, r.Findings, o)
		if i == 0 {
			all.Columns = t.Columns
			if many {
				all.Columns = append([]printers.Column{{Header: "Deployment"}}, t.Columns...)
			}
		}
		for _, row := range t.Rows {
			if many {
				row = append([]string{d.Namespace + "/" + d.Name}, row...)
			}
			all.AddRow(row...)
		}
	}
	return all.Render(w, tableOptions(o, st))
}
