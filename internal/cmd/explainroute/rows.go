package explainroute

import (
	"io"

	"github.com/ai-dynamo/kubectl-dynamo/internal/printers"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/explain"
)

// printRows is --no-headers, as kubectl means it: the data rows only — every
// prefill candidate, then every decode candidate, each row led by its STAGE
// (prefill or decode) — without the Deployment:, Request:, Verdict: or
// Sources: lines, so that `| awk '{print $2}'` reads the workers. The verdict
// is in the exit code (0 routable, 2 can fail or fails).
func printRows(w io.Writer, x *explain.Explanation, wide bool, st style) error {
	domain := "DOMAIN"
	if x.Router.Policy != nil && x.Router.Policy.Domain != "" {
		domain = x.Router.Policy.Domain
	}
	all := &printers.Table{}
	for _, s := range []struct {
		name  string
		stage *explain.Stage
	}{{"prefill", x.Prefill}, {"decode", x.Decode}} {
		if s.stage == nil {
			continue
		}
		t := candidateTable(s.stage, domain, st)
		all.Columns = append([]printers.Column{{Header: "STAGE"}}, t.Columns...)
		for _, row := range t.Rows {
			all.AddRow(append([]string{s.name}, row...)...)
		}
	}
	return all.Render(w, printers.TableOptions{Wide: wide, NoHeaders: true})
}
