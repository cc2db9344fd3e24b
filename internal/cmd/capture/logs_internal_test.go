package capture

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ai-dynamo/kubectl-dynamo/internal/cmdutil"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/kube"
)

// TestRouterLogsExcerpt: capture --logs keeps, per frontend pod, the last
// --logs-lines router lines of its log, re-written (no other text, request
// ids pseudonymous); a refused log is a note.
func TestRouterLogsExcerpt(t *testing.T) {
	logText, err := os.ReadFile("../../../examples/router-logs/prefill-only-zone-required.color.log")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		denied bool
	}{{"read", false}, {"refused", true}} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := cmdutil.ReadCaptureFile(nil, "../../../examples/prefill-only-zone-required.yaml", "--from-file")
			if err != nil {
				t.Fatal(err)
			}
			var got kube.LogOptions
			o := &Options{LogsSince: 30 * time.Minute, LogsLines: 5, Now: func() time.Time { return time.Date(2026, 11, 20, 12, 10, 0, 0, time.UTC) },
				podLogs: func(_ context.Context, ns, pod string, lo kube.LogOptions) (io.ReadCloser, error) {
					got = lo
					if tc.denied {
						return nil, apierrors.NewForbidden(schema.GroupResource{Resource: "pods/log"}, pod, errors.New("no"))
					}
					return io.NopCloser(strings.NewReader("2026-11-20T12:04:00Z  INFO other: request served uri=/v1/chat\n" + string(logText))), nil
				}}
			if err := o.routerLogs(context.Background(), b); err != nil {
				t.Fatal(err)
			}
			if got.Container != "main" || got.SinceSeconds != 1800 || got.LimitBytes != MaxLogExcerptBytes {
				t.Errorf("pods/log options %+v", got)
			}
			if tc.denied {
				if len(b.RouterLogs) != 0 || !strings.Contains(b.Notes[len(b.Notes)-1].Message, "RBAC: needs get on pods/log") {
					t.Fatalf("router logs %+v, notes %+v", b.RouterLogs, b.Notes)
				}
				return
			}
			if len(b.RouterLogs) != 1 {
				t.Fatalf("%d excerpts", len(b.RouterLogs))
			}
			l := b.RouterLogs[0]
			text := strings.Join(l.Lines, "\n")
			if len(l.Lines) != 5 || l.Dropped != 53 || l.Source != "pod/qwen3-32b-0-frontend-7c9f5/main" || l.Deployment != "qwen3-32b" {
				t.Errorf("excerpt %+v", l)
			}
			if strings.Contains(text, "\x1b") || strings.Contains(text, "9d2617fd") || strings.Contains(text, "request served") || !strings.Contains(text, `request_id="req-000001"`) {
				t.Errorf("the excerpt is not redacted:\n%s", text)
			}
		})
	}
}
