package auditroutes

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ai-dynamo/kubectl-dynamo/internal/cmdutil"
	"github.com/ai-dynamo/kubectl-dynamo/internal/iostreams"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/audit"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/kube"
)

// TestLivePodLogs: without --logs, every frontend replica's log is read
// through the pods/log subresource with the --since, --tail and byte bounds;
// a replica whose log is refused (403) or gone is a note, and the others are
// audited.
func TestLivePodLogs(t *testing.T) {
	const capture = "../../../examples/prefill-only-zone-required.yaml"
	const frontend = "qwen3-32b-0-frontend-7c9f5"
	logs := map[string]string{}
	for pod, file := range map[string]string{frontend: ".color.log", frontend + "-b": ".jsonl"} {
		data, err := os.ReadFile("../../../examples/router-logs/prefill-only-zone-required" + file)
		if err != nil {
			t.Fatal(err)
		}
		logs[pod] = string(data)
	}
	load := func(context.Context) (*raw.Bundle, error) {
		b, err := cmdutil.ReadCaptureFile(nil, capture, "--from-file")
		if err != nil {
			return nil, err
		}
		// Three more replicas of the frontend: one logging in JSON, one whose
		// log is refused, one gone.
		for _, p := range b.Objects.Pods {
			if p.Name == frontend {
				for _, suffix := range []string{"-b", "-denied", "-gone"} {
					c := *p // the name is all that differs
					c.Name = frontend + suffix
					b.Objects.Pods = append(b.Objects.Pods, &c)
				}
				break
			}
		}
		return b, nil
	}
	var calls []string
	podLogs := func(_ context.Context, ns, pod string, o kube.LogOptions) (io.ReadCloser, error) {
		calls = append(calls, ns+"/"+pod+"/"+o.Container)
		if o.SinceSeconds != 1800 || o.TailLines != 5000 || o.LimitBytes != DefaultMaxLogBytes {
			t.Errorf("%s: options %+v", pod, o)
		}
		switch {
		case strings.HasSuffix(pod, "-denied"):
			return nil, apierrors.NewForbidden(schema.GroupResource{Resource: "pods/log"}, pod, errors.New(`User "inspector" cannot get resource "pods/log"`))
		case strings.HasSuffix(pod, "-gone"):
			return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, pod)
		}
		return io.NopCloser(strings.NewReader(logs[pod])), nil
	}
	streams, _, out, errOut := iostreams.Test()
	o := &Options{IO: streams, Now: func() time.Time { return time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC) },
		MinProbability: audit.DefaultMinProbability, MaxLogBytes: DefaultMaxLogBytes, Since: 30 * time.Minute, Tail: 5000,
		load: load, podLogs: podLogs, scope: cmdutil.Scope{Command: "audit-routes"}}
	o.Output.Format = cmdutil.OutputJSON
	if err := o.Run(context.Background()); err != nil {
		t.Fatalf("Run: %v (%s)", err, errOut)
	}
	var rep audit.Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if len(calls) != 4 || calls[0] != "serving/"+frontend+"/main" {
		t.Errorf("pods/log reads: %q", calls)
	}
	if len(rep.Logs.Streams) != 2 || rep.Logs.Streams[0].Name != "pod/"+frontend+"/main" || rep.Logs.Join.Decisions != 16 {
		t.Errorf("streams %+v, %d decisions", rep.Logs.Streams, rep.Logs.Join.Decisions)
	}
	if c := rep.Check(audit.CheckChoice); c.Covered != 16 || c.Agreed != 16 {
		t.Errorf("choice %+v", c)
	}
	notes := strings.Join(rep.Notes, "\n")
	for _, want := range []string{"pod/" + frontend + "-denied/main: reading its log was denied (RBAC: needs get on pods/log", "pod/" + frontend + "-gone/main: the pod or its container is gone"} {
		if !strings.Contains(notes, want) {
			t.Errorf("no note %q in:\n%s", want, notes)
		}
	}
}
