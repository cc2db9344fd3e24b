package cmdutil

import (
	"fmt"
	"io"
	"strings"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/audit"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/fileio"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
)

// ReadRouterLogs reads one --logs input (audit-routes, explain-route
// --request-id) through the one input opener: a regular file is streamed
// (never held whole) and may be larger than maxBytes, which then truncates
// it; standard input is read once and may not. The router's lines are parsed
// by pkg/audit, bounded by maxBytes after decompression.
func ReadRouterLogs(stdin io.Reader, path string, maxBytes int64) ([]audit.Record, audit.StreamStats, error) {
	in, err := fileio.OpenLimits(stdin, path, "--logs", 1<<40, maxBytes)
	if err != nil {
		return nil, audit.StreamStats{}, WithHint(err, "Give --logs a regular file or -, or raise --max-log-bytes")
	}
	defer in.Close()
	recs, st, err := audit.ReadLogs(in.NewReader(), path, audit.Limits{MaxBytes: maxBytes})
	if err != nil {
		return nil, st, WithHint(fmt.Errorf("--logs: %w", err), "Give the log as kubectl logs prints it, plain or gzip-compressed whole")
	}
	return recs, st, nil
}

// CaptureRouterLogs reads the router log excerpts a capture carries for dep
// (capture --logs), one stream per frontend pod; an error says what to give
// instead when it carries none.
func CaptureRouterLogs(b *raw.Bundle, dep *model.Deployment, file string) ([]audit.Record, []audit.StreamStats, error) {
	var (
		recs  []audit.Record
		stats []audit.StreamStats
	)
	for _, l := range b.RouterLogs {
		if l.Namespace != dep.Namespace || l.Deployment != dep.Name {
			continue
		}
		r, st, err := audit.ReadLogs(strings.NewReader(strings.Join(l.Lines, "\n")), "capture:"+l.Source, audit.Limits{})
		if err != nil {
			return nil, nil, err
		}
		recs = append(recs, r...)
		stats = append(stats, st)
	}
	if len(stats) == 0 {
		return nil, nil, WithHint(FlagErrorf("%s holds no router log excerpt for %s: give the router's logs with --logs FILE", file, dep.Key()),
			"Try: kubectl logs -n "+dep.Namespace+" -l nvidia.com/dynamo-component-type=frontend --prefix > router.log, then add --logs router.log; or capture with kubectl dynamo capture --logs")
	}
	return recs, stats, nil
}
