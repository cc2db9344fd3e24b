package topology

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ai-dynamo/kubectl-dynamo/internal/cmdutil"
	"github.com/ai-dynamo/kubectl-dynamo/internal/completion"
	"github.com/ai-dynamo/kubectl-dynamo/internal/iostreams"
	"github.com/ai-dynamo/kubectl-dynamo/internal/printers"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/analysis"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/build"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source"
)

// Options are the inputs of the topology command.
type Options struct {
	IO  *iostreams.IOStreams
	Now func() time.Time

	Names         []string
	AllNamespaces bool
	FromFile      string
	Output        cmdutil.OutputFlags
	Tree          bool
	Watch         bool
	WatchInterval time.Duration
	FailOn        string
	ExitZero      bool
	SkewFactor    float64
	Sources       cmdutil.SourceFlags
	// DynamoVersion is --dynamo-version: the Dynamo release every rule that
	// changed upstream follows ("" detects it, pkg/behavior).
	DynamoVersion string

	// load reads a Bundle (from the capture file or the cluster); set by Complete.
	load func(ctx context.Context) (*raw.Bundle, error)
	// namespace is the resolved namespace ("" with -A).
	namespace string
	// scope is what the command line selects; inventory lists the deployments
	// of every namespace when the selection matches nothing (nil: the bundle
	// read holds them all).
	scope     cmdutil.Scope
	inventory cmdutil.Inventory
}

// NewCmdTopology builds the command. runF, when set, replaces the run step (tests).
func NewCmdTopology(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	o := &Options{IO: f.IOStreams, Now: f.Now, FailOn: string(model.SeverityError), SkewFactor: 2, WatchInterval: 5 * time.Second}
	cmd := &cobra.Command{
		Use:   "topology [DGD...] [-n NAMESPACE | -A] [--from-file FILE]",
		Short: "Show prefill/decode capacity per topology domain and flag topology mismatches",
		Long: `Show, for each DynamoGraphDeployment, the prefill and decode capacity in every value of
its KV-transfer domain (zone, rack, NVLink domain, …), and the findings that would make
topology-aware routing fail — above all a domain with ready prefill workers and no
ready decode worker, where every request prefilled there fails under required
enforcement.

Reads the cluster (read-only), the Dynamo discovery etcd when the deployment uses it,
and the frontend's /metrics; or a capture file with --from-file (no cluster needed).

Exit codes: 0 when no finding reaches --fail-on, 2 when one does, 1 on errors.`,
		Example: `  # Every deployment in the current namespace
  kubectl dynamo topology

  # One deployment, as JSON, failing a CI job on warnings too
  kubectl dynamo topology llama-70b -n inference -o json --fail-on warning

  # Offline, from a capture file (kubectl dynamo capture > capture.yaml)
  kubectl dynamo topology --from-file capture.yaml

  # The hierarchy (zone › rack › host)
  kubectl dynamo topology --tree`,
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
	fl.BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "List deployments in all namespaces")
	fl.StringVarP(&o.FromFile, "from-file", "f", "", "Read a capture file (kubectl dynamo capture) instead of the cluster; - for stdin")
	fl.BoolVar(&o.Tree, "tree", false, "Show the topology hierarchy (e.g. zone › rack › host) instead of the domain table")
	fl.BoolVarP(&o.Watch, "watch", "w", false, "Re-read the cluster and reprint whenever the report changes")
	fl.DurationVar(&o.WatchInterval, "watch-interval", o.WatchInterval, "How often --watch re-reads the cluster")
	fl.StringVar(&o.FailOn, "fail-on", o.FailOn, "Exit 2 when a finding has at least this severity: error|warning|info")
	fl.BoolVar(&o.ExitZero, "exit-zero", false, "Exit 0 even when findings reach --fail-on (report only)")
	fl.Float64Var(&o.SkewFactor, "skew-factor", o.SkewFactor, "Flag a domain whose prefill:decode ratio differs from the deployment's by more than this factor")
	cmdutil.AddDynamoVersionFlag(cmd, fl, &o.DynamoVersion)
	o.Sources.AddFlags(cmd)
	cmdutil.AddOutputFlags(cmd, &o.Output)
	_ = cmd.RegisterFlagCompletionFunc("fail-on", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{"error", "warning", "info"}, cobra.ShellCompDirectiveNoFileComp
	})
	return cmd
}

// Complete resolves the namespace and the data source.
func (o *Options) Complete(f *cmdutil.Factory, cmd *cobra.Command, args []string) error {
	o.Names = args
	o.scope = cmdutil.Scope{Command: "topology", Source: cmdutil.SourceArgs(cmd), File: o.FromFile, Names: o.Names,
		NamespaceGiven: cmd.Flags().Changed("namespace"), AllNamespaces: true}
	if o.FromFile != "" {
		ns, load, err := o.Sources.FromFile(f, cmd, o.IO.In, o.FromFile)
		if err != nil {
			return err
		}
		o.namespace, o.load = ns, load
		o.scope.Namespace = ns
		return nil
	}
	if !o.AllNamespaces {
		ns, err := cmdutil.LiveNamespace(f, "topology")
		if err != nil {
			return err
		}
		o.namespace = ns
	}
	opts, err := o.Sources.CollectOptions(f, o.namespace, o.AllNamespaces, o.Names)
	if err != nil {
		return err
	}
	o.load = func(ctx context.Context) (*raw.Bundle, error) { return source.Collect(ctx, opts) }
	o.scope.Namespace, o.scope.Context = o.namespace, opts.Context
	if !o.AllNamespaces {
		o.inventory = cmdutil.LiveInventory(opts.RESTConfig, inventoryTimeout(opts.RESTConfig.Timeout))
	}
	return nil
}

// inventoryTimeout bounds the LIST that names the deployments of other
// namespaces: --request-timeout when set, else 10 s.
func inventoryTimeout(requestTimeout time.Duration) time.Duration {
	if requestTimeout > 0 {
		return requestTimeout
	}
	return 10 * time.Second
}

// Validate checks flag combinations.
func (o *Options) Validate() error {
	if err := o.Output.Validate(); err != nil {
		return err
	}
	if !slices.Contains([]string{"error", "warning", "info"}, o.FailOn) {
		return cmdutil.FlagErrorf("--fail-on must be error, warning or info, not %q", o.FailOn)
	}
	if o.SkewFactor < 1 {
		return cmdutil.FlagErrorf("--skew-factor must be at least 1 (a ratio factor), got %g", o.SkewFactor)
	}
	if o.Watch && o.FromFile != "" {
		return cmdutil.FlagErrorf("--watch re-reads a live cluster; it cannot be used with --from-file")
	}
	if o.Watch && o.WatchInterval < time.Second {
		return cmdutil.FlagErrorf("--watch-interval must be at least 1s, got %s", o.WatchInterval)
	}
	if o.AllNamespaces && len(o.Names) > 0 {
		return cmdutil.FlagErrorf("deployment names cannot be combined with --all-namespaces: name the namespace with -n")
	}
	if err := cmdutil.ValidateDynamoVersion(o.DynamoVersion); err != nil {
		return err
	}
	return o.Sources.Validate()
}

// Run reads, analyses and prints; with --watch it repeats until interrupted.
func (o *Options) Run(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if !o.Watch {
		defer cmdutil.TuneGCForOneShot(cmdutil.GCReport)()
		report, err := o.report(ctx)
		if err != nil {
			return err
		}
		if err := o.print(report); err != nil {
			return err
		}
		return o.exitFor(report)
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	var last []byte
	ticker := time.NewTicker(o.WatchInterval)
	defer ticker.Stop()
	for {
		report, err := o.report(ctx)
		switch {
		case err != nil && ctx.Err() != nil:
			return nil
		case err != nil:
			fmt.Fprintf(o.IO.ErrOut, "%s  error: %v (retrying in %s)\n", o.Now().UTC().Format(time.TimeOnly), err, o.WatchInterval)
		default:
			key, _ := printers.CanonicalJSON(reportWithoutTimes(report))
			if !bytes.Equal(key, last) {
				last = key
				if o.Output.IsTable() {
					fmt.Fprintf(o.IO.Out, "--- %s\n", o.Now().UTC().Format(time.RFC3339))
				}
				if err := o.print(report); err != nil {
					return err
				}
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
}

func (o *Options) report(ctx context.Context) (*model.Report, error) {
	b, err := o.load(ctx)
	if err != nil {
		return nil, err
	}
	snap, err := build.Build(b)
	if err != nil {
		return nil, err
	}
	if o.FromFile == "" && len(snap.Deployments) == 0 {
		if err := nothingReadable(snap, o.scope.Source); err != nil {
			return nil, err
		}
	}
	if err := o.scope.Select(ctx, snap, o.inventory); err != nil {
		return nil, err
	}
	if o.FromFile == "" {
		if err := workersUnreadable(b, snap); err != nil {
			return nil, err
		}
	}
	// Old data is said first: it qualifies everything below it.
	snap.Notes = append(analysis.FreshnessNotes(snap, o.Now()), snap.Notes...)
	return analysis.Analyze(snap, analysis.AnalyzeOptions{SkewFactor: o.SkewFactor, DynamoVersion: o.DynamoVersion}), nil
}

func (o *Options) print(r *model.Report) error {
	if ok, err := o.Output.PrintStructured(o.IO.Out, r); ok {
		return err
	}
	st := style{Color: o.IO.ColorEnabled()}
	if o.Output.NoHeaders {
		// The notes, which a report prints under Notes:, go to stderr: the
		// rows stay parseable and a degraded read is not silent.
		for _, n := range r.Notes {
			if n.Severity == model.NoteWarning {
				fmt.Fprintf(o.IO.ErrOut, "warning: %s: %s\n", n.Source, n.Message)
			}
		}
		return printRows(o.IO.Out, r, o, st)
	}
	return printReport(o.IO.Out, r, o, st)
}

// exitFor returns the findings exit (2) when a finding reaches --fail-on.
func (o *Options) exitFor(r *model.Report) error {
	sev := make([]model.Severity, len(r.Findings))
	for i, f := range r.Findings {
		sev[i] = f.Severity
	}
	return cmdutil.FindingsExit(sev, o.FailOn, o.ExitZero, o.Output.IsTable())
}

// reportWithoutTimes drops the read times so --watch reprints only on real change.
func reportWithoutTimes(r *model.Report) *model.Report {
	c := *r
	c.Sources = make([]model.SourceStatus, len(r.Sources))
	for i, s := range r.Sources {
		s.At = time.Time{}
		c.Sources[i] = s
	}
	return &c
}

// workersUnreadable fails a live run whose deployments were read but whose
// pods were not (the Kubernetes source degraded and no Pod came back): an empty
// domain table must not pass a CI gate as "no findings".
func workersUnreadable(b *raw.Bundle, s *model.Snapshot) error {
	if len(s.Deployments) == 0 {
		return nil
	}
	degraded := false
	for _, src := range s.Sources {
		degraded = degraded || (src.Kind == model.SourceKubernetes && src.Degraded)
	}
	if !degraded {
		return nil
	}
	if len(b.Objects.Pods) > 0 {
		return nil
	}
	var msgs []string
	for _, n := range s.Notes {
		if n.Severity == model.NoteWarning && n.Source == model.SourceKubernetes {
			msgs = append(msgs, n.Message)
		}
	}
	err := fmt.Errorf("the deployments were read but none of their worker pods could be: %s", strings.Join(msgs, "; "))
	if kubeUnreachable(s) != nil {
		return cmdutil.WithHint(err, unreachableHint)
	}
	return cmdutil.WithHint(err, "Retry, check --request-timeout and the API server's health, and kubectl auth can-i list pods; see docs/rbac.md")
}

// unreachableHint is the next step when the API server stopped answering
// (the permissions are not in question then).
const unreachableHint = "Retry once the API server answers; each attempt waits at most --request-timeout"

// kubeUnreachable returns the Kubernetes source when some of its reads failed
// because the API server could not be reached.
func kubeUnreachable(s *model.Snapshot) *model.SourceStatus {
	for i := range s.Sources {
		if src := &s.Sources[i]; src.Kind == model.SourceKubernetes && src.Unreachable != "" {
			return src
		}
	}
	return nil
}

// nothingReadable turns "no deployment found" into an error when a source was
// degraded: a user who may read nothing must not get a clean, empty report (and
// exit 0 in CI).
func nothingReadable(s *model.Snapshot, source []string) error {
	degraded := false
	for _, src := range s.Sources {
		degraded = degraded || src.Degraded
	}
	if !degraded {
		return nil
	}
	if src := kubeUnreachable(s); src != nil {
		// One outage, said once: the server, the cause, and what failed.
		return cmdutil.WithHint(fmt.Errorf("no DynamoGraphDeployment could be read: %s; failed reads: %s; check the cluster is reachable with this kubeconfig and that its current context is the intended cluster (kubectl cluster-info)",
			src.Unreachable, strings.ReplaceAll(src.Message, "; ", ", ")), unreachableHint)
	}
	var msgs []string
	for _, n := range s.Notes {
		if n.Severity == model.NoteWarning {
			msgs = append(msgs, n.Message)
		}
	}
	detail := strings.Join(msgs, "; ")
	if detail == "" {
		detail = "a data source was degraded"
	}
	return cmdutil.WithHint(fmt.Errorf("no DynamoGraphDeployment could be read: %s", detail),
		"Try: "+strings.Join(append([]string{"kubectl auth can-i list dynamographdeployments.nvidia.com"}, source...), " ")+", and see docs/rbac.md for the read-only role")
}
