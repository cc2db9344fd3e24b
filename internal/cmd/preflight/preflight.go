package preflight

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ai-dynamo/kubectl-dynamo/internal/cmdutil"
	"github.com/ai-dynamo/kubectl-dynamo/internal/iostreams"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/boundedyaml"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/preflight"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/capture"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/kube"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/manifest"
)

// Options are the inputs of the preflight command.
type Options struct {
	IO  *iostreams.IOStreams
	Now func() time.Time

	Filenames []string
	// Recursive is -R: directories are read with their subdirectories.
	Recursive bool
	NodesFrom string
	NoCluster bool
	Output    cmdutil.OutputFlags
	FailOn    string
	ExitZero  bool
	// DynamoVersion is --dynamo-version: the release the manifests are
	// checked for ("" reads it from their images).
	DynamoVersion string

	// namespace is where manifests without one go.
	namespace string
	// cluster reads the cluster (nil: manifests only); context names it.
	cluster func(ctx context.Context, exclude []string) (*preflight.Cluster, error)
	// existing GETs the DGDs the manifests would update (live only).
	existing func(ctx context.Context, refs []raw.DeploymentRef) *raw.ExistingDeployments
	context  string
	in       io.Reader
}

// NewCmdPreflight builds the command. runF, when set, replaces the run step (tests).
func NewCmdPreflight(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	o := &Options{IO: f.IOStreams, Now: f.Now, FailOn: string(model.SeverityError)}
	cmd := &cobra.Command{
		Use:   "preflight -f MANIFEST [MANIFEST...] [--nodes-from CAPTURE | --no-cluster]",
		Short: "Check a DynamoGraphDeployment manifest before applying it: placement per topology domain, prefill without decode",
		Long: `Check DynamoGraphDeployment manifests before they are applied: validate them as the
API server and the Dynamo operator's webhook would (nvidia.com/v1alpha1 and v1beta1,
the kvTransferPolicy fields), then predict from the cluster's nodes where each
component's replicas can land (nodeSelector, node affinity, tolerations against
taints, nvidia.com/gpu requests against what the nodes have free, topologyConstraint
pack domains) and which values of the KV-transfer domain would end up with prefill
but no decode.

Nodes come from the cluster in the kubeconfig (GET and LIST only), from a capture
file (--nodes-from, as written by kubectl dynamo capture), or nowhere (--no-cluster,
or no kubeconfig): then only the manifests are checked.

Each finding says whether it is certain (every placement has it) or possible (the
scheduler may choose a placement that has it). Exit codes: 0 when no finding
reaches --fail-on, 2 when one does, 1 on errors.`,
		Example: `  # Check a manifest against the current cluster
  kubectl dynamo preflight -f dgd.yaml

  # In CI, without a cluster, against the nodes of a capture
  kubectl dynamo preflight -f deploy/ --nodes-from capture.yaml --fail-on warning

  # From stdin (e.g. rendered by helm or kustomize), manifest checks only
  kustomize build overlays/prod | kubectl dynamo preflight -f - --no-cluster`,
		RunE: func(cmd *cobra.Command, args []string) error {
			// Arguments are more manifests, so that `-f a.yaml b.yaml` (as
			// pre-commit passes files) reads both.
			o.Filenames = append(o.Filenames, args...)
			if err := o.Complete(f, cmd); err != nil {
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
	fl.StringSliceVarP(&o.Filenames, "filename", "f", nil, "Manifest file or directory (its .yaml, .yml and .json files) to check; - reads stdin; repeatable")
	fl.BoolVarP(&o.Recursive, "recursive", "R", false, "Read the directories given with -f recursively (their subdirectories' .yaml, .yml and .json files too)")
	fl.StringVar(&o.NodesFrom, "nodes-from", "", "Predict against the nodes (and pods, Grove topology objects) of a capture file instead of the cluster")
	fl.BoolVar(&o.NoCluster, "no-cluster", false, "Check the manifests only: read no cluster, even when a kubeconfig exists")
	fl.StringVar(&o.FailOn, "fail-on", o.FailOn, "Exit 2 when a finding has at least this severity: error|warning|info")
	cmdutil.AddDynamoVersionFlag(cmd, fl, &o.DynamoVersion)
	fl.BoolVar(&o.ExitZero, "exit-zero", false, "Exit 0 even when findings reach --fail-on (report only)")
	cmdutil.AddOutputFlags(cmd, &o.Output, cmdutil.OutputTable, cmdutil.OutputWide, cmdutil.OutputJSON, cmdutil.OutputYAML, outputGitHub, outputSARIF)
	_ = cmd.MarkFlagFilename("filename", "yaml", "yml", "json")
	_ = cmd.MarkFlagFilename("nodes-from", "yaml", "yml", "json")
	_ = cmd.RegisterFlagCompletionFunc("fail-on", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{"error", "warning", "info"}, cobra.ShellCompDirectiveNoFileComp
	})
	return cmd
}

// Complete resolves the namespace and where the nodes come from.
func (o *Options) Complete(f *cmdutil.Factory, cmd *cobra.Command) error {
	o.in = o.IO.In
	o.namespace = "default"
	if ns, _, err := f.ConfigFlags.ToRawKubeConfigLoader().Namespace(); err == nil && ns != "" {
		o.namespace = ns
	}
	// Without a kubeconfig there is no cluster to read; the manifests are still
	// checked (not an error, unlike the commands that need a cluster).
	noKubeconfig := cmdutil.NoKubeconfig(f, "preflight", nil) != nil
	switch {
	case o.NodesFrom != "":
		path := o.NodesFrom
		o.cluster = func(_ context.Context, exclude []string) (*preflight.Cluster, error) {
			return o.readCapture(path, exclude)
		}
	case o.NoCluster:
	case noKubeconfig:
	default:
		cfg, err := f.ConfigFlags.ToRESTConfig()
		if err != nil {
			return cmdutil.WithHint(fmt.Errorf("read the kubeconfig: %w", err), "Try: kubectl dynamo preflight -f MANIFEST --no-cluster, or --nodes-from capture.yaml")
		}
		rawCfg, _ := f.ConfigFlags.ToRawKubeConfigLoader().RawConfig()
		o.context = rawCfg.CurrentContext
		if f.ConfigFlags.Context != nil && *f.ConfigFlags.Context != "" {
			o.context = *f.ConfigFlags.Context
		}
		api, err := kube.NewAPI(cfg)
		if err != nil {
			return err
		}
		detail := o.context
		if detail == "" {
			detail = "(" + cfg.Host + ")"
		}
		o.cluster = func(ctx context.Context, exclude []string) (*preflight.Cluster, error) {
			r, err := kube.ReadCluster(ctx, api, detail, o.Now())
			if err != nil {
				return nil, err
			}
			return preflight.ClusterFrom(r, exclude), nil
		}
		o.existing = func(ctx context.Context, refs []raw.DeploymentRef) *raw.ExistingDeployments {
			return kube.ReadDeployments(ctx, api, refs)
		}
	}
	return nil //nolint:nilerr // no kubeconfig means no cluster to read, not a failure
}

// Validate checks flag combinations.
func (o *Options) Validate() error {
	if err := cmdutil.ValidateDynamoVersion(o.DynamoVersion); err != nil {
		return err
	}
	if err := o.Output.Validate(); err != nil {
		return err
	}
	if len(o.Filenames) == 0 {
		return cmdutil.FlagErrorf("name the manifests to check with -f FILE (a file, a directory, or - for stdin)")
	}
	if !slices.Contains([]string{"error", "warning", "info"}, o.FailOn) {
		return cmdutil.FlagErrorf("--fail-on must be error, warning or info, not %q", o.FailOn)
	}
	if o.NoCluster && o.NodesFrom != "" {
		return cmdutil.FlagErrorf("--no-cluster and --nodes-from cannot be combined: --nodes-from predicts against a capture's nodes, --no-cluster reads none")
	}
	return cmdutil.OneStdin(append([]cmdutil.NamedInput{{Flag: "--nodes-from", Path: o.NodesFrom}}, filenames(o.Filenames)...)...)
}

// Run reads the manifests and the nodes, checks and prints.
func (o *Options) Run(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	manifests, notes, err := o.readManifests()
	if err != nil {
		return err
	}
	opts := preflight.Options{Manifests: manifests, Notes: notes, DynamoVersion: o.DynamoVersion}
	if o.cluster != nil {
		var exclude []string
		for _, m := range manifests {
			exclude = append(exclude, m.Object.GetNamespace()+"/"+m.Object.GetName())
		}
		cl, err := o.cluster(ctx, exclude)
		if err != nil {
			return err
		}
		opts.Cluster = cl
		opts.Sources = []model.SourceStatus{cl.Source}
		if o.existing != nil {
			var refs []raw.DeploymentRef
			for _, m := range manifests {
				refs = append(refs, raw.DeploymentRef{Namespace: m.Object.GetNamespace(), Name: m.Object.GetName(), APIVersion: m.Object.GetAPIVersion()})
			}
			ex := o.existing(ctx, refs)
			for i := range manifests {
				key := manifests[i].Object.GetNamespace() + "/" + manifests[i].Object.GetName()
				if obj := ex.Objects[key]; obj != nil {
					manifests[i].Existing = &unstructured.Unstructured{Object: obj}
				}
				manifests[i].ExistingChecked = ex.Checked[key]
			}
			opts.Manifests = manifests
			opts.Notes = append(opts.Notes, ex.Notes...)
		}
	}
	opts.Context = o.context
	r := preflight.Check(opts)
	switch o.Output.Format {
	case outputGitHub:
		if err := printGitHub(o.IO.Out, r); err != nil {
			return err
		}
		return o.exitFor(r)
	case outputSARIF:
		if err := printSARIF(o.IO.Out, r); err != nil {
			return err
		}
		return o.exitFor(r)
	}
	if ok, err := o.Output.PrintStructured(o.IO.Out, r); ok {
		if err != nil {
			return err
		}
	} else if err := o.print(r); err != nil {
		return err
	}
	return o.exitFor(r)
}

// readCapture reads a capture file's nodes, pods and topology objects.
func (o *Options) readCapture(path string, exclude []string) (*preflight.Cluster, error) {
	b, err := cmdutil.ReadCaptureFileWhole(o.in, path, "--nodes-from")
	if err != nil {
		return nil, err
	}
	return o.captureCluster(b, path, exclude)
}

// captureCluster is the cluster a --nodes-from file describes. A file
// written by kubectl dynamo capture (it records when it was collected) holds
// only the nodes its deployments' pods ran on, so findings that rest on a node
// being absent are possible; any other file (kubectl get nodes -o yaml) is
// taken as the full node list. A file without a Node is an error: every
// component would be predicted unschedulable.
func (o *Options) captureCluster(b *raw.Bundle, path string, exclude []string) (*preflight.Cluster, error) {
	var objs []*unstructured.Unstructured
	nodes := 0
	for _, m := range b.AsRead {
		objs = append(objs, flatten(&unstructured.Unstructured{Object: m})...)
	}
	for _, u := range objs {
		if u.GetKind() == "Node" && u.GetAPIVersion() == "v1" {
			nodes++
		}
	}
	if nodes == 0 {
		return nil, cmdutil.WithHint(fmt.Errorf("--nodes-from %s holds no Node (apiVersion v1, kind Node): there is nothing to place the components on", path),
			"Try: kubectl get nodes -o yaml > nodes.yaml (every node), or kubectl dynamo capture > capture.yaml (the nodes Dynamo pods run on); or check the manifests only with --no-cluster")
	}
	cl := preflight.NewCluster(objs, exclude)
	cl.Source = model.SourceStatus{Kind: model.SourceCapture, Detail: path, At: b.CollectedAt}
	// The context is the cluster's: the one the capture was taken from (its
	// kubectl-dynamo.io/context annotation), not the file's name.
	if b.Context != "" && b.Context != path {
		o.context = b.Context
	}
	if !b.CollectedAt.IsZero() {
		cl.NodesComplete = false
		cl.Notes = append(cl.Notes, model.Note{Severity: model.NoteInfo, Source: model.SourceCapture,
			Message: "a capture holds the nodes its deployments' pods ran on and only those pods: nodes without Dynamo pods and GPUs requested by other workloads are not known, so a finding that rests on a node being absent is possible, not certain"})
	} else {
		cl.Notes = append(cl.Notes, model.Note{Severity: model.NoteInfo, Source: model.SourceCapture,
			Message: fmt.Sprintf("%s is not a kubectl dynamo capture: its %s are taken as all of the cluster's nodes", path, plural(nodes, "Node", "Nodes"))})
	}
	return cl, nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func flatten(u *unstructured.Unstructured) []*unstructured.Unstructured {
	if !u.IsList() {
		return []*unstructured.Unstructured{u}
	}
	var out []*unstructured.Unstructured
	l, err := u.ToList()
	if err != nil {
		return nil
	}
	for i := range l.Items {
		out = append(out, &l.Items[i])
	}
	return out
}

// readManifests reads every -f into DGDs, with the file and line of each.
// Other kinds, empty files, YAML that is no Kubernetes object and capture
// files are skipped with a note; a directory is read for its .yaml, .yml and
// .json files (with -R, its subdirectories' too).
func (o *Options) readManifests() ([]preflight.Manifest, []model.Note, error) {
	files, err := o.manifestFiles()
	if err != nil {
		return nil, nil, err
	}
	named := map[string]bool{}
	for _, f := range o.Filenames {
		named[f] = true
	}
	var out []preflight.Manifest
	var notes []model.Note
	note := func(format string, a ...any) {
		notes = append(notes, model.Note{Severity: model.NoteInfo, Source: "manifest", Message: fmt.Sprintf(format, a...)})
	}
	skipped := map[string]int{}
	for _, f := range files {
		data, err := cmdutil.ReadInputLimit(o.in, f, "-f", capture.MaxBytes)
		if err != nil {
			return nil, nil, err
		}
		if err := boundedyaml.Check(data); err != nil {
			return nil, nil, fmt.Errorf("-f %s: %w", f, err)
		}
		// A capture named with -f is read for the DGDs it holds (checking
		// running deployments again); one met in a directory is not a
		// manifest to apply, and is skipped.
		mf, err := manifest.Parse(data, f, manifest.Options{Index: isDGD, ReadCapture: named[f]})
		if err != nil {
			return nil, nil, cmdutil.WithHint(fmt.Errorf("-f %s: %w", f, err), "fix the file, or leave it out of -f (kubectl apply -f would refuse it too)")
		}
		if mf.Capture {
			switch {
			case named[f]:
				note("%s is a kubectl dynamo capture: the DynamoGraphDeployments it holds are checked as captured", f)
			case o.NodesFrom != "" && sameFile(f, o.NodesFrom):
				note("%s is the --nodes-from capture: not read as manifests", f)
				continue
			default:
				note("%s is a kubectl dynamo capture, not manifests: skipped (give it with --nodes-from to predict against its nodes)", f)
				continue
			}
		}
		for _, d := range mf.Docs {
			switch {
			case d.Skip == manifest.SkipEmpty:
				note("%s is empty: skipped", f)
				continue
			case d.Skip != "":
				note("%s:%d: %s: skipped", f, d.Line, d.Skip)
				continue
			}
			u := &unstructured.Unstructured{Object: d.Object}
			if !isDGD(d.Object) {
				if !strings.HasPrefix(u.GetAPIVersion(), capture.APIVersion) {
					skipped[u.GetKind()]++
				}
				continue
			}
			if u.GetNamespace() == "" {
				u.SetNamespace(o.namespace)
			}
			out = append(out, preflight.Manifest{Object: u, Source: f, Line: d.Line, Fields: d.Fields})
		}
	}
	if len(skipped) > 0 {
		var kinds []string
		for k, n := range skipped {
			kinds = append(kinds, fmt.Sprintf("%d %s", n, k))
		}
		sort.Strings(kinds)
		note("not checked (not a DynamoGraphDeployment): %s", strings.Join(kinds, ", "))
	}
	if len(out) == 0 {
		return nil, nil, cmdutil.WithHint(fmt.Errorf("no DynamoGraphDeployment in %s", strings.Join(o.Filenames, ", ")),
			"preflight checks objects of kind DynamoGraphDeployment (apiVersion nvidia.com/v1beta1 or v1alpha1)")
	}
	return out, notes, nil
}

func isDGD(obj map[string]any) bool {
	kind, _ := obj["kind"].(string)
	apiVersion, _ := obj["apiVersion"].(string)
	return kind == "DynamoGraphDeployment" && strings.HasPrefix(apiVersion, "nvidia.com/")
}

// manifestFiles expands -f: files as given, directories to their .yaml, .yml
// and .json files (recursively with -R), in lexical order.
func (o *Options) manifestFiles() ([]string, error) {
	var files []string
	for _, f := range o.Filenames {
		if f == "-" {
			files = append(files, f)
			continue
		}
		st, err := os.Stat(f)
		if err != nil {
			return nil, cmdutil.WithHint(fmt.Errorf("-f %s: %w", f, err), "Try: kubectl dynamo preflight -f path/to/dgd.yaml")
		}
		if !st.IsDir() {
			files = append(files, f)
			continue
		}
		n := 0
		err = filepath.WalkDir(f, func(path string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if e.IsDir() {
				if path != f && !o.Recursive {
					return filepath.SkipDir
				}
				return nil
			}
			switch strings.ToLower(filepath.Ext(e.Name())) {
			case ".yaml", ".yml", ".json":
				files = append(files, path)
				n++
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("-f %s: %w", f, err)
		}
		if n == 0 {
			hint := "give -R to read its subdirectories too"
			if o.Recursive {
				hint = "name the files or directories that hold the DynamoGraphDeployments"
			}
			return nil, cmdutil.WithHint(fmt.Errorf("-f %s: the directory holds no .yaml, .yml or .json file", f), hint)
		}
	}
	return files, nil
}

// sameFile reports whether two paths name the same file.
func sameFile(a, b string) bool {
	if a == "-" || b == "-" {
		return false
	}
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

func filenames(fs []string) []cmdutil.NamedInput {
	out := make([]cmdutil.NamedInput, len(fs))
	for i, f := range fs {
		out[i] = cmdutil.NamedInput{Flag: "-f", Path: f}
	}
	return out
}

// exitFor returns the findings exit (2) when a finding reaches --fail-on.
func (o *Options) exitFor(r *preflight.Report) error {
	sev := make([]model.Severity, len(r.Findings))
	for i, f := range r.Findings {
		sev[i] = f.Severity
	}
	return cmdutil.FindingsExit(sev, o.FailOn, o.ExitZero, o.Output.IsTable())
}
