// Package capture implements `kubectl dynamo capture`: a redacted, offline copy of
// a live Dynamo deployment (Kubernetes objects, discovery etcd keys, frontend
// metrics) that every read command accepts with --from-file.
package capture

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/ai-dynamo/kubectl-dynamo/internal/cmdutil"
	"github.com/ai-dynamo/kubectl-dynamo/internal/completion"
	"github.com/ai-dynamo/kubectl-dynamo/internal/iostreams"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/audit"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/build"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/capture"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/kube"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/redact"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/termsafe"
)

// Options are the inputs of the capture command.
type Options struct {
	IO *iostreams.IOStreams

	Names         []string
	AllNamespaces bool
	// KVCache also records the frontends' KV placements (--kv-cache).
	KVCache bool
	// Logs also records a redacted excerpt of each frontend pod's router
	// lines (--logs), read since LogsSince, at most LogsLines lines a pod.
	Logs      bool
	LogsSince time.Duration
	LogsLines int
	Sources   cmdutil.SourceFlags
	Output    cmdutil.OutputFlags

	// Getenv reads KDYN_ETCD_USERNAME / KDYN_ETCD_PASSWORD; tests replace it.
	Getenv func(string) string
	// Now returns the current time (the capture's timestamp).
	Now func() time.Time

	// Resolved by Complete.
	namespace  string
	collect    source.CollectOptions
	restConfig *rest.Config
	// podLogs opens a container's log (kube.RESTAPI.PodLogs; tests replace it).
	podLogs func(ctx context.Context, namespace, pod string, o kube.LogOptions) (io.ReadCloser, error)
}

// MaxLogExcerptBytes bounds what capture --logs reads of each frontend pod's
// log.
const MaxLogExcerptBytes = 64 << 20

// NewCmdCapture builds the command. runF, when set, replaces the run step (tests).
func NewCmdCapture(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	o := &Options{IO: f.IOStreams, Getenv: os.Getenv, Now: f.Now, LogsSince: time.Hour, LogsLines: 5000}
	cmd := &cobra.Command{
		Use:   "capture [DGD...] [-n NAMESPACE | -A] [--etcd-endpoints URL...] [--frontend-url URL] [-o yaml|json]",
		Short: "Write a redacted capture file of live Dynamo deployments for offline analysis",
		Long: `Read Dynamo deployments from the cluster — read-only — and write them to stdout as a
capture file: a Kubernetes List of the DynamoGraphDeployments, their pods, the nodes
they run on, DynamoWorkerMetadata, EndpointSlices, Services, warning Events and the
Grove topology, plus the Dynamo discovery etcd keys and each frontend's /metrics and
/busy_threshold answers (docs/capture-format.md).

Every read command accepts the file with --from-file, so a capture can be analysed
offline or attached to a bug report.

The capture is redacted: Secrets are never read, managedFields and the
last-applied-configuration annotation are dropped, and the values of secret-looking
environment variables (HF_TOKEN, *_PASSWORD, *_API_KEY, …), of env vars backed by a
Secret, of secret-looking flags (--token=…, --api-key …), Authorization headers,
bearer and Hugging Face tokens, JWTs and passwords in URLs become REDACTED; so do
the etcd password and the kubeconfig's token wherever they would appear. Review the
file before sharing it all the same.

With --logs the capture also carries an excerpt of each frontend pod's log (GET
pods/log): the KV router's decision lines only, each re-written with just the fields
audit-routes reads, the request ids replaced by pseudonyms; audit-routes --from-file
audits them.

Anything that could not be read (a missing CRD, a 403, an unreachable etcd or
frontend) is recorded in the file and printed to stderr as a note.`,
		Example: `  # Everything in the current namespace
  kubectl dynamo capture > capture.yaml

  # One deployment, with its etcd discovery data after a port-forward
  kubectl port-forward -n dynamo svc/etcd 2379 &
  kubectl dynamo capture llama-70b -n inference --etcd-endpoints http://localhost:2379 > capture.yaml

  # Then, offline
  kubectl dynamo topology --from-file capture.yaml`,
		ValidArgsFunction: completion.Deployments(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Complete(f, cmd, args); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return o.Run(cmd.Context())
		},
	}
	fl := cmd.Flags()
	fl.BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "Capture deployments in all namespaces")
	fl.BoolVar(&o.KVCache, "kv-cache", false, "Also record each frontend's KV-cache contents (GET /v1/kv-cache/placements/stream, read until the snapshot ends), so explain-route --from-file sees real overlaps")
	fl.BoolVar(&o.Logs, "logs", false, "Also record a redacted excerpt of each frontend pod's log (GET pods/log): the KV router's decision lines only, re-written with the fields audit-routes reads and request ids replaced by pseudonyms")
	fl.DurationVar(&o.LogsSince, "logs-since", o.LogsSince, "With --logs: the last period of each frontend pod's log read (0: all of it)")
	fl.IntVar(&o.LogsLines, "logs-lines", o.LogsLines, "With --logs: keep at most the last this many router lines of each frontend pod")
	o.Sources.AddFlags(cmd)
	o.Output.Format = cmdutil.OutputYAML
	o.Output.NoTemplates = true // a capture is a Kubernetes List to save, not a report to query
	cmdutil.AddOutputFlags(cmd, &o.Output, cmdutil.OutputYAML, cmdutil.OutputJSON)
	return cmd
}

// Complete resolves the namespace, the cluster configuration and the sources.
func (o *Options) Complete(f *cmdutil.Factory, cmd *cobra.Command, args []string) error {
	o.Names = args
	if o.Now == nil {
		o.Now = time.Now
	}
	if !o.AllNamespaces {
		ns, err := cmdutil.LiveNamespace(f, "capture")
		if err != nil {
			return err
		}
		o.namespace = ns
	}
	o.Sources.Getenv = o.Getenv
	collect, err := o.Sources.CollectOptions(f, o.namespace, o.AllNamespaces, o.Names)
	if err != nil {
		return err
	}
	collect.KVPlacements = o.KVCache
	collect.KeepObjects = true // the capture writes every object whole, as read
	o.collect = collect
	o.restConfig = collect.RESTConfig
	if o.Logs && o.restConfig != nil {
		api, err := kube.NewAPI(o.restConfig)
		if err != nil {
			return err
		}
		o.podLogs = api.PodLogs
	}
	return nil
}

// Validate checks flag combinations.
func (o *Options) Validate() error {
	if err := o.Output.Validate(); err != nil {
		return err
	}
	if o.AllNamespaces && len(o.Names) > 0 {
		return cmdutil.FlagErrorf("deployment names cannot be combined with --all-namespaces: name the namespace with -n")
	}
	if o.KVCache && o.Sources.NoFrontend {
		return cmdutil.FlagErrorf("--kv-cache reads the frontend's placements stream; it cannot be used with --no-frontend")
	}
	if o.LogsLines < 1 {
		return cmdutil.FlagErrorf("--logs-lines must be at least 1, got %d", o.LogsLines)
	}
	if o.LogsSince < 0 {
		return cmdutil.FlagErrorf("--logs-since must not be negative, got %s", o.LogsSince)
	}
	return o.Sources.Validate()
}

// Run collects, redacts and writes the capture to stdout; notes go to stderr.
func (o *Options) Run(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	b, err := source.Collect(ctx, o.collect)
	if err != nil {
		return err
	}
	if o.Logs {
		if err := o.routerLogs(ctx, b); err != nil {
			return err
		}
	}
	red := redact.Redact(b, redact.Options{Secrets: o.secrets()})
	var buf bytes.Buffer
	if err := capture.Write(&buf, red); err != nil {
		return err
	}
	out := buf.Bytes()
	if o.Output.Format == cmdutil.OutputJSON {
		j, err := yaml.YAMLToJSON(out)
		if err != nil {
			return fmt.Errorf("convert the capture to JSON: %w", err)
		}
		var ind bytes.Buffer
		if err := json.Indent(&ind, j, "", "  "); err != nil {
			return fmt.Errorf("convert the capture to JSON: %w", err)
		}
		ind.WriteByte('\n')
		out = termsafe.JSON(ind.Bytes())
	}
	if _, err := o.IO.Out.Write(out); err != nil {
		return fmt.Errorf("write the capture: %w", err)
	}
	o.summary(red)
	return nil
}

// routerLogs adds to b a redacted excerpt of every captured deployment's
// frontend pods' logs (audit.Excerpt: the router's decision lines only, with
// the fields audit-routes reads and pseudonymous request ids). A pod whose
// log cannot be read is a note.
func (o *Options) routerLogs(ctx context.Context, b *raw.Bundle) error {
	if o.podLogs == nil {
		b.Notes = append(b.Notes, model.Note{Severity: model.NoteWarning, Source: model.SourceKubernetes,
			Message: "--logs: pod logs cannot be read with this client; the capture carries no router log excerpt"})
		return nil
	}
	snap, err := build.Build(b)
	if err != nil {
		return err
	}
	var ids audit.Pseudonyms
	for i := range snap.Deployments {
		dep := &snap.Deployments[i]
		for _, fe := range dep.Frontends {
			name := "pod/" + fe.Pod + "/" + fe.Container
			rc, err := o.podLogs(ctx, dep.Namespace, fe.Pod, kube.LogOptions{Container: fe.Container,
				SinceSeconds: int64(o.LogsSince / time.Second), TailLines: -1, LimitBytes: MaxLogExcerptBytes})
			if err != nil {
				why := err.Error()
				if apierrors.IsForbidden(err) {
					why = "RBAC: needs get on pods/log (docs/rbac.md)"
				}
				b.Notes = append(b.Notes, model.Note{Severity: model.NoteWarning, Source: model.SourceKubernetes, Deployment: dep.Key(),
					Message: fmt.Sprintf("--logs: cannot read the log of %s (%s): the capture carries no router lines of it", name, why)})
				continue
			}
			recs, _, err := audit.ReadLogs(rc, name, audit.Limits{MaxBytes: MaxLogExcerptBytes})
			_ = rc.Close()
			if err != nil {
				b.Notes = append(b.Notes, model.Note{Severity: model.NoteWarning, Source: model.SourceKubernetes, Deployment: dep.Key(),
					Message: fmt.Sprintf("--logs: the log of %s could not be read to its end (%v): the excerpt holds what was read", name, err)})
			}
			lines, dropped, err := audit.Excerpt(recs, o.LogsLines, &ids)
			if err != nil {
				return err
			}
			b.RouterLogs = append(b.RouterLogs, raw.RouterLogs{Namespace: dep.Namespace, Deployment: dep.Name, Source: name,
				At: o.Now().UTC(), Lines: lines, Dropped: dropped})
		}
	}
	return nil
}

// secrets are literal values that must never reach the capture.
func (o *Options) secrets() []string {
	s := []string{o.collect.Etcd.Password}
	if c := o.restConfig; c != nil {
		s = append(s, c.BearerToken, c.Password)
	}
	return s
}

// summary prints what was captured, and every note, to stderr.
func (o *Options) summary(b *raw.Bundle) {
	scope := "namespace " + b.Namespace
	if o.AllNamespaces {
		scope = "all namespaces"
	}
	deployments := 0
	for _, m := range b.AsRead {
		if k, _ := m["kind"].(string); k == "DynamoGraphDeployment" {
			deployments++
		}
	}
	logs := ""
	if o.Logs {
		n := 0
		for _, l := range b.RouterLogs {
			n += len(l.Lines)
		}
		logs = fmt.Sprintf(", %d router log lines from %d frontend pod(s)", n, len(b.RouterLogs))
	}
	fmt.Fprintf(o.IO.ErrOut, "captured %d objects (%d deployment(s)) from %s, %d etcd keys, %d frontend scrapes%s\n",
		len(b.AsRead), deployments, scope, len(b.Etcd), len(b.Metrics), logs)
	for _, n := range b.Notes {
		fmt.Fprintf(o.IO.ErrOut, "note (%s): %s\n", n.Source, n.Message)
	}
}
