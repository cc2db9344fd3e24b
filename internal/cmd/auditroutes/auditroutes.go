package auditroutes

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/ai-dynamo/kubectl-dynamo/internal/cmdutil"
	"github.com/ai-dynamo/kubectl-dynamo/internal/completion"
	"github.com/ai-dynamo/kubectl-dynamo/internal/iostreams"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/analysis"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/audit"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/build"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/explain"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/kube"
)

// Options are the inputs of the audit-routes command.
type Options struct {
	IO  *iostreams.IOStreams
	Now func() time.Time

	Name     string
	FromFile string
	// Logs are the --logs files ("-" is standard input).
	Logs    []string
	Output  cmdutil.OutputFlags
	Sources cmdutil.SourceFlags
	// FailOn is --fail-on: exit 2 when a check agrees on fewer decisions
	// than this rate ("" never).
	FailOn string
	// MinProbability flags a pick at temperature > 0 less likely than this.
	MinProbability float64
	// MaxLogBytes bounds what is read of each log stream (after
	// decompression).
	MaxLogBytes int64
	// DynamoVersion is --dynamo-version ("" detects it).
	DynamoVersion string
	// Since, Tail and Container select what is read of each frontend pod's
	// log when no --logs is given (live).
	Since     time.Duration
	Tail      int64
	Container string

	// Resolved by Complete.
	failOn *float64
	// podLogs opens a container's log (kube.RESTAPI.PodLogs live; tests
	// replace it); nil offline.
	podLogs   func(ctx context.Context, namespace, pod string, o kube.LogOptions) (io.ReadCloser, error)
	namespace string
	scope     cmdutil.Scope
	inventory cmdutil.Inventory
	load      func(ctx context.Context) (*raw.Bundle, error)
}

// DefaultMaxLogBytes is the default --max-log-bytes.
const DefaultMaxLogBytes = 256 << 20

// DefaultSince is the default --since: the last hour of each frontend's log.
const DefaultSince = time.Hour

// NewCmdAuditRoutes builds the command. runF, when set, replaces the run step (tests).
func NewCmdAuditRoutes(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	o := &Options{IO: f.IOStreams, Now: f.Now, MinProbability: audit.DefaultMinProbability, MaxLogBytes: DefaultMaxLogBytes,
		Since: DefaultSince, Tail: -1}
	cmd := &cobra.Command{
		Use:   "audit-routes [DGD] [--logs FILE] [--from-file CAPTURE] [flags]",
		Short: "Check the KV router's real decisions, from its logs, against the plugin's model",
		Long: `Read the KV router's decisions from the frontend's logs and check each one against
kubectl-dynamo's port of the router (pkg/routecore) on the deployment's model: the
proof, on your cluster, release, configuration and traffic, that the numbers the
other commands show are the router's.

The router logs, per decision, a "Selected worker" line (INFO, on by default) and,
with DEBUG, one "Formula for worker_id=…" line per candidate, the request's block
hashes ([ROUTING_INPUT]) and the pick's overlap ([ROUTING] Best). The lines are
joined by request id and hop (prefill, decode) and five checks run on each
decision, each counting how many decisions it covered:

  arithmetic  the logged terms give the logged logit, in the router's order
  choice      at temperature 0 the pick is a minimum (ties within rounding);
              above 0 its softmax probability is not below --min-probability
  transfer    the preferred multiplier and the required domain match the
              transfer policy and the prefill and decode workers' domains
  state       the KV index gives the logged cached blocks for the logged hashes
  candidates  the router scored exactly the workers the model holds eligible

For the full audit the frontend must log DEBUG for the selector and the KV
router: DYN_LOG=` + audit.DebugLogFilter + `.
A decision whose DEBUG lines are missing is still counted, and the checks that
need them say so.

Live, the model and the logs come from the cluster: the log of every frontend
replica of the deployment is read through the API server (GET pods/log, read-only;
--since, --tail, --max-log-bytes), and a replica whose log cannot be read is a
note. --logs reads files instead: what kubectl logs prints (plain text, with or
without colour, or DYN_LOGGING_JSONL), gzip-compressed or not; repeat it for
several replicas. With --from-file CAPTURE the model comes from the capture, and
the logs from --logs or from the capture's router log excerpt (capture --logs).

Exit codes: 0 the audit ran, 2 a check agrees on fewer decisions than --fail-on
(or, with --fail-on, no decision was audited), 1 error.`,
		Example: `  # Audit the last hour of every frontend replica's decisions, live
  kubectl dynamo audit-routes -n serving qwen3-32b

  # Audit a frontend's logs against a capture taken at the same time
  kubectl logs -n serving deploy/qwen3-32b-frontend --since 1h > router.log
  kubectl dynamo audit-routes --from-file capture.yaml --logs router.log

  # Several replicas, compressed, failing a pipeline below 99% agreement
  kubectl dynamo audit-routes --from-file capture.yaml --logs fe-0.log.gz --logs fe-1.log.gz --fail-on 99%

  # From standard input, as JSON
  kubectl logs -n serving qwen3-32b-frontend-0 | kubectl dynamo audit-routes --from-file capture.yaml --logs - -o json`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: completion.MaxArgs(1, completion.Deployments(f)),
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
	fl.StringVarP(&o.FromFile, "from-file", "f", "", "Read the deployment's model from a capture file (kubectl dynamo capture) instead of the cluster; - for stdin")
	fl.StringArrayVar(&o.Logs, "logs", nil, "The frontend's log: a file (plain or gzip), or - for standard input; repeat for several replicas (default: every frontend pod's log, live, or the capture's excerpt)")
	fl.DurationVar(&o.Since, "since", o.Since, "Live: read the frontend pods' log lines of this last period (0: the whole log)")
	fl.Int64Var(&o.Tail, "tail", o.Tail, "Live: read at most the last this many lines of each frontend pod's log (-1: no limit)")
	fl.StringVar(&o.Container, "container", "", "Live: the frontend pods' container to read (default: the main container)")
	fl.StringVar(&o.FailOn, "fail-on", "", "Exit 2 when a check agrees on fewer decisions than this rate (a fraction such as 0.99, or 99%)")
	fl.Float64Var(&o.MinProbability, "min-probability", o.MinProbability, "At temperature > 0, flag a pick whose softmax probability is below this")
	fl.Int64Var(&o.MaxLogBytes, "max-log-bytes", o.MaxLogBytes, "Read at most this many bytes of each log (after decompression); later lines are not audited")
	cmdutil.AddDynamoVersionFlag(cmd, fl, &o.DynamoVersion)
	o.Sources.AddFlags(cmd)
	cmdutil.AddOutputFlags(cmd, &o.Output)
	return cmd
}

// Complete resolves the deployment's source and the logs.
func (o *Options) Complete(f *cmdutil.Factory, cmd *cobra.Command, args []string) error {
	if len(args) == 1 {
		o.Name = args[0]
	}
	o.scope = cmdutil.Scope{Command: "audit-routes", Source: cmdutil.SourceArgs(cmd), File: o.FromFile,
		NamespaceGiven: cmd.Flags().Changed("namespace")}
	if o.Name != "" {
		o.scope.Names = []string{o.Name}
	}
	if o.FailOn != "" {
		r, err := audit.ParseRate(o.FailOn)
		if err != nil {
			return cmdutil.FlagErrorf("--fail-on: %v", err)
		}
		o.failOn = &r
	}
	if err := cmdutil.OneStdin(append([]cmdutil.NamedInput{{Flag: "--from-file", Path: o.FromFile}}, logInputs(o.Logs)...)...); err != nil {
		return err
	}
	if o.FromFile != "" {
		ns, load, err := o.Sources.FromFile(f, cmd, o.IO.In, o.FromFile)
		if err != nil {
			return err
		}
		o.namespace, o.load, o.scope.Namespace = ns, load, ns
		return nil
	}
	live, err := o.Sources.Live(f, "audit-routes", o.Name, nil)
	if err != nil {
		return err
	}
	opts := live.Options
	// The frontends' KV placements give the live KV index of the state check.
	opts.KVPlacements = true
	o.namespace, o.inventory = live.Namespace, live.Inventory
	o.load = func(ctx context.Context) (*raw.Bundle, error) { return source.Collect(ctx, opts) }
	o.scope.Namespace, o.scope.Context = live.Namespace, opts.Context
	if pl, ok := opts.Kube.(interface {
		PodLogs(ctx context.Context, namespace, pod string, o kube.LogOptions) (io.ReadCloser, error)
	}); ok {
		o.podLogs = pl.PodLogs
	}
	return nil
}

func logInputs(logs []string) []cmdutil.NamedInput {
	out := make([]cmdutil.NamedInput, len(logs))
	for i, l := range logs {
		out[i] = cmdutil.NamedInput{Flag: "--logs", Path: l}
	}
	return out
}

// Validate checks flag combinations.
func (o *Options) Validate() error {
	if err := o.Output.Validate(); err != nil {
		return err
	}
	if o.FromFile != "" || len(o.Logs) > 0 {
		for _, f := range []struct {
			name string
			set  bool
		}{{"--since", o.Since != DefaultSince}, {"--tail", o.Tail != -1}, {"--container", o.Container != ""}} {
			if f.set {
				return cmdutil.FlagErrorf("%s selects what is read of the frontend pods' logs live; with --logs or --from-file the logs are files: trim them before (kubectl logs --since/--tail)", f.name)
			}
		}
	}
	if o.Since < 0 {
		return cmdutil.FlagErrorf("--since must not be negative, got %s", o.Since)
	}
	if o.Tail < -1 {
		return cmdutil.FlagErrorf("--tail must be -1 (every line) or a line count, got %d", o.Tail)
	}
	for _, l := range o.Logs {
		if l == "" {
			return cmdutil.FlagErrorf("--logs needs a file name, or - for standard input")
		}
	}
	if !(o.MinProbability > 0 && o.MinProbability < 1) {
		return cmdutil.FlagErrorf("--min-probability must be between 0 and 1, got %g", o.MinProbability)
	}
	if o.MaxLogBytes < 1<<10 {
		return cmdutil.FlagErrorf("--max-log-bytes must be at least 1024, got %d", o.MaxLogBytes)
	}
	if err := cmdutil.ValidateDynamoVersion(o.DynamoVersion); err != nil {
		return err
	}
	return o.Sources.Validate()
}

// Run reads the model and the logs, audits and prints.
func (o *Options) Run(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	defer cmdutil.TuneGCForOneShot(cmdutil.GCReport)()
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
		var ie *explain.InputError
		if errors.As(err, &ie) && ie.Hint != "" {
			return cmdutil.WithHint(err, ie.Hint)
		}
		return err
	}
	m.Findings = deploymentFindings(analysis.Analyze(snap, analysis.AnalyzeOptions{DynamoVersion: o.DynamoVersion}), dep)
	var indexNotes []string
	if sets := explain.BundleEventSets(b, dep); len(sets) > 0 {
		m.Index, indexNotes = explain.IndexEvents(sets, m.BlockSize)
		names := make([]string, len(sets))
		for i, s := range sets {
			names[i] = s.Name
		}
		m.IndexDetail = "KvEvents " + strings.Join(names, ", ")
	}
	in := audit.Input{Model: m}
	var logNotes []string
	for _, path := range o.Logs {
		recs, st, err := cmdutil.ReadRouterLogs(o.IO.In, path, o.MaxLogBytes)
		if err != nil {
			return err
		}
		in.Records = append(in.Records, recs...)
		in.Streams = append(in.Streams, st)
	}
	switch {
	case len(o.Logs) > 0:
	case o.FromFile != "":
		if in.Records, in.Streams, err = cmdutil.CaptureRouterLogs(b, dep, o.FromFile); err != nil {
			return err
		}
	default:
		in.Records, in.Streams, logNotes = o.readPodLogs(ctx, dep)
	}
	rep := audit.Audit(in, audit.Options{MinProbability: o.MinProbability})
	rep.Notes = append(append(logNotes, rep.Notes...), indexNotes...)
	if err := o.print(rep); err != nil {
		return err
	}
	return o.exitFor(rep)
}

// readPodLogs reads the log of every frontend pod of dep through the API
// server (GET pods/log), each bounded by --since, --tail and --max-log-bytes.
// A pod whose log cannot be read is a note, not an error: the audit runs on
// the others.
func (o *Options) readPodLogs(ctx context.Context, dep *model.Deployment) ([]audit.Record, []audit.StreamStats, []string) {
	var (
		recs  []audit.Record
		stats []audit.StreamStats
		notes []string
	)
	if o.podLogs == nil {
		return nil, nil, []string{"pod logs cannot be read with this client: give the frontend's logs with --logs FILE"}
	}
	if len(dep.Frontends) == 0 {
		return nil, nil, []string{fmt.Sprintf("%s has no frontend pod: there is no router log to read (give one with --logs FILE)", dep.Key())}
	}
	for _, fe := range dep.Frontends {
		container := fe.Container
		if o.Container != "" {
			container = o.Container
		}
		name := "pod/" + fe.Pod
		if container != "" {
			name += "/" + container
		}
		rc, err := o.podLogs(ctx, dep.Namespace, fe.Pod, kube.LogOptions{Container: container, SinceSeconds: int64(o.Since / time.Second),
			TailLines: o.Tail, LimitBytes: o.MaxLogBytes})
		if err != nil {
			notes = append(notes, podLogNote(name, err))
			continue
		}
		r, st, err := audit.ReadLogs(rc, name, audit.Limits{MaxBytes: o.MaxLogBytes})
		_ = rc.Close()
		if err != nil {
			notes = append(notes, fmt.Sprintf("%s: the log could not be read to its end (%v): the decisions read before are audited", name, err))
		}
		recs = append(recs, r...)
		stats = append(stats, st)
	}
	return recs, stats, notes
}

// podLogNote says why a pod's log was not read and what to do.
func podLogNote(name string, err error) string {
	switch {
	case apierrors.IsForbidden(err):
		return fmt.Sprintf("%s: reading its log was denied (RBAC: needs get on pods/log, docs/rbac.md): its decisions are not audited; grant it, or give the frontend's logs with --logs FILE", name)
	case apierrors.IsNotFound(err):
		return fmt.Sprintf("%s: the pod or its container is gone (%v): its decisions are not audited", name, err)
	}
	return fmt.Sprintf("%s: its log could not be read (%v): its decisions are not audited; give the frontend's logs with --logs FILE", name, err)
}

// deploymentFindings are the report's findings about dep.
func deploymentFindings(r *model.Report, dep *model.Deployment) []model.Finding {
	var out []model.Finding
	for _, f := range r.Findings {
		if f.Namespace == dep.Namespace && f.Deployment == dep.Name {
			out = append(out, f)
		}
	}
	return out
}

// pickDeployment selects the deployment: the named one, or the only one.
func (o *Options) pickDeployment(ctx context.Context, s *model.Snapshot) (*model.Deployment, error) {
	if err := o.scope.Select(ctx, s, o.inventory); err != nil {
		return nil, err
	}
	if len(s.Deployments) == 1 {
		return &s.Deployments[0], nil
	}
	where := "the cluster"
	switch {
	case o.FromFile != "" && o.namespace != "":
		where = "the capture file (namespace " + o.namespace + ")"
	case o.FromFile != "":
		where = "the capture file"
	case o.namespace != "":
		where = "namespace " + o.namespace
	}
	names := make([]string, 0, len(s.Deployments))
	for i := range s.Deployments {
		names = append(names, s.Deployments[i].Key())
	}
	first := s.Deployments[0]
	return nil, cmdutil.FlagErrorf("%s holds %s; name one, e.g. %s", where, cmdutil.ListDeployments(names),
		cmdutil.CommandLine("audit-routes", o.scope.Source, "-n", first.Namespace, first.Name, "--logs", "FILE"))
}

// exitFor returns exit 2 when a check agrees below --fail-on, or when
// --fail-on is given and nothing was audited (a gate must not pass on
// empty logs).
func (o *Options) exitFor(r *audit.Report) error {
	if o.failOn == nil {
		return nil
	}
	msg := ""
	covered := 0
	for _, c := range r.Checks {
		covered += c.Covered
	}
	below := r.Below(*o.failOn)
	switch {
	case covered == 0:
		msg = "--fail-on: no check covered any decision (the logs hold no decision lines the checks can read): nothing passed the gate (exit code 2)"
	case len(below) > 0:
		var parts []string
		for _, c := range below {
			parts = append(parts, fmt.Sprintf("%s %s", c.Check, audit.FormatRate(c.Rate)))
		}
		msg = fmt.Sprintf("agreement below --fail-on %s: %s (exit code 2)", audit.FormatRate(o.failOn), strings.Join(parts, ", "))
	default:
		return nil
	}
	if !o.Output.IsTable() {
		msg = ""
	}
	return &cmdutil.ResultError{Code: cmdutil.ExitFindings, Message: msg}
}
