package dashboard

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/spf13/cobra"

	"github.com/ai-dynamo/kubectl-dynamo/internal/cmdutil"
	"github.com/ai-dynamo/kubectl-dynamo/internal/completion"
	"github.com/ai-dynamo/kubectl-dynamo/internal/iostreams"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/frontend"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/kube"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/watch"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/tokenizer"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/tui"
)

// Options are the inputs of the dashboard command.
type Options struct {
	IO  *iostreams.IOStreams
	Now func() time.Time
	// Getenv reads the environment (Hugging Face cache); tests replace it.
	Getenv func(string) string

	Name       string
	FromFile   string
	Refresh    time.Duration
	Theme      string
	Tokens     string
	TokenFile  string
	Tokenizer  string
	SkewFactor float64
	// DynamoVersion is --dynamo-version ("" reads each deployment's release).
	DynamoVersion string
	Sources       cmdutil.SourceFlags

	// Resolved by Complete.
	namespace string
	bundle    func(ctx context.Context) (*raw.Bundle, error)
	// scope is what the command line selects; inventory lists the
	// deployments of other namespaces when it matches nothing (live).
	scope     cmdutil.Scope
	inventory cmdutil.Inventory
	// live is the live collection (nil with --from-file): watched, and
	// re-collected on a change; base is the last collection without the
	// frontend, which Poll re-reads every --refresh.
	live   *source.CollectOptions
	baseMu sync.Mutex
	base   *raw.Bundle
	// kv holds the KV contents read with the last collection.
	kv        []raw.KvEvents
	theme     tui.Theme
	tokenize  func(string) ([]uint32, error)
	tokenText string
}

// NewCmdDashboard builds the command. runF, when set, replaces the run step (tests).
func NewCmdDashboard(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	o := &Options{IO: f.IOStreams, Now: f.Now, Getenv: os.Getenv, Refresh: 5 * time.Second, Theme: string(tui.ThemeDark), SkewFactor: 2}
	cmd := &cobra.Command{
		Use:   "dashboard [DGD] [-n NAMESPACE] [--from-file FILE] [--refresh 5s] [--theme dark|light]",
		Short: "Interactive dashboard: capacity per domain, workers, findings and a route explorer with what-ifs",
		Long: `An interactive terminal dashboard over the same model as topology and explain-route:

  Topology        one tile per value of the transfer domain: prefill and decode
                  ready/total replicas, GPUs, KV capacity and decode load; tiles with
                  a finding are marked by symbol and colour; enter expands the
                  hierarchy (zone › rack › host)
  Workers         every worker pod, sortable by any column (s, S) and filterable (/)
  Findings        severity, details and fix; the selected one marks (◆) its domain
                  and workers on the other tabs
  Route explorer  type or paste token ids and see the router's prefill and decode
                  picks, costs, probabilities, the transfer constraint and the
                  verdict; toggle what-ifs (enforcement, preferred weight,
                  temperature, a domain down, an excluded worker) and the
                  --all-prefill matrix

Press ? for every key. Live, the Kubernetes objects are watched and the
deployment is re-read within a second of a change; the frontend's metrics are
re-read every --refresh. With
--from-file it runs fully offline on a capture (its KvEvents feed the route
explorer). The dashboard needs a terminal: for a plain, scriptable view use
kubectl dynamo topology --watch.`,
		Example: `  # The current namespace's deployment, live
  kubectl dynamo dashboard

  # Offline, on an example capture, with the example prompt's token ids
  kubectl dynamo dashboard --from-file examples/prefill-only-zone-required.yaml --token-file examples/prompts/support-chat.tokens

  # One deployment, refreshed every 2 seconds, light theme
  kubectl dynamo dashboard llama-70b -n inference --refresh 2s --theme light`,
		Args:              cobra.MaximumNArgs(1),
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
	fl.StringVarP(&o.FromFile, "from-file", "f", "", "Read a capture file (kubectl dynamo capture) instead of the cluster: fully offline")
	fl.DurationVar(&o.Refresh, "refresh", o.Refresh, "How often the frontend's metrics are re-read (the Kubernetes objects are watched; ignored with --from-file)")
	fl.StringVar(&o.Theme, "theme", o.Theme, "Colour theme: dark|light (--color never or NO_COLOR gives monochrome)")
	fl.StringVar(&o.Tokens, "tokens", "", "The route explorer's initial request: token ids, comma- or space-separated")
	fl.StringVar(&o.TokenFile, "token-file", "", "Read the route explorer's initial token ids from a file")
	fl.StringVar(&o.Tokenizer, "tokenizer", "", "Tokenize prompts typed in the route explorer with this tokenizer.json (a path, or a Hugging Face model id in the local cache)")
	fl.Float64Var(&o.SkewFactor, "skew-factor", o.SkewFactor, "Flag a domain whose prefill:decode ratio differs from the deployment's by more than this factor")
	cmdutil.AddDynamoVersionFlag(cmd, fl, &o.DynamoVersion)
	o.Sources.AddFlags(cmd)
	_ = cmd.RegisterFlagCompletionFunc("theme", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{"dark", "light"}, cobra.ShellCompDirectiveNoFileComp
	})
	return cmd
}

// Complete resolves the namespace, the data source, the theme and the
// initial request.
func (o *Options) Complete(f *cmdutil.Factory, cmd *cobra.Command, args []string) error {
	if len(args) == 1 {
		o.Name = args[0]
	}
	theme, ok := tui.ParseTheme(o.Theme)
	if !ok {
		return cmdutil.FlagErrorf("--theme must be dark or light, not %q", o.Theme)
	}
	o.theme = theme
	o.scope = cmdutil.Scope{Command: "dashboard", Source: cmdutil.SourceArgs(cmd), File: o.FromFile,
		NamespaceGiven: cmd.Flags().Changed("namespace")}
	if o.Name != "" {
		o.scope.Names = []string{o.Name}
	}
	if o.FromFile != "" {
		ns, load, err := o.Sources.FromFile(f, cmd, o.IO.In, o.FromFile)
		if err != nil {
			return err
		}
		o.namespace, o.bundle = ns, load
		o.scope.Namespace = ns
	} else {
		ns, err := cmdutil.LiveNamespace(f, "dashboard")
		if err != nil {
			return err
		}
		o.namespace = ns
		var names []string
		if o.Name != "" {
			names = []string{o.Name}
		}
		opts, err := o.Sources.CollectOptions(f, ns, false, names)
		if err != nil {
			return err
		}
		// One client for the collections, the watch and the metric polls.
		api, err := kube.NewAPI(opts.RESTConfig)
		if err != nil {
			return err
		}
		opts.Kube = api
		o.live = &opts
		o.bundle = o.collect
		o.scope.Namespace, o.scope.Context = ns, opts.Context
		timeout := opts.RESTConfig.Timeout
		if timeout <= 0 {
			timeout = 10 * time.Second
		}
		o.inventory = cmdutil.LiveInventory(opts.RESTConfig, timeout)
	}
	switch {
	case o.Tokens != "" && o.TokenFile != "":
		return cmdutil.FlagErrorf("--tokens and --token-file cannot be combined: give the token ids one way")
	case o.TokenFile != "":
		data, err := cmdutil.ReadInputLimit(o.IO.In, o.TokenFile, "--token-file", 64<<20)
		if err != nil {
			return err
		}
		o.tokenText = string(data)
	default:
		o.tokenText = o.Tokens
	}
	if o.tokenText != "" {
		if _, err := tui.ParseTokenIDs(o.tokenText); err != nil {
			return cmdutil.FlagErrorf("--tokens/--token-file: %v", err)
		}
	}
	if o.Tokenizer != "" {
		src, err := tokenizer.Resolve(o.Tokenizer, o.Getenv)
		if err != nil {
			return cmdutil.WithHint(fmt.Errorf("--tokenizer: %w", err), "Pass --tokenizer PATH/tokenizer.json, or type token ids in the route explorer")
		}
		tok, err := tokenizer.Load(src.Path)
		if err != nil {
			return fmt.Errorf("load tokenizer %s: %w", src.Path, err)
		}
		o.tokenize = func(s string) ([]uint32, error) { return tok.Encode(s, true) }
	}
	return nil
}

// Validate checks flag combinations and that stdout is a terminal.
func (o *Options) Validate() error {
	if o.FromFile == "-" {
		return cmdutil.FlagErrorf("--from-file - cannot be used: the dashboard reads its keys from stdin; save the capture to a file")
	}
	if o.FromFile == "" && o.Refresh < time.Second {
		return cmdutil.FlagErrorf("--refresh must be at least 1s, got %s", o.Refresh)
	}
	if err := cmdutil.ValidateDynamoVersion(o.DynamoVersion); err != nil {
		return err
	}
	if o.SkewFactor < 1 {
		return cmdutil.FlagErrorf("--skew-factor must be at least 1 (a ratio factor), got %g", o.SkewFactor)
	}
	if err := o.Sources.Validate(); err != nil {
		return err
	}
	if !o.IO.IsStdoutTTY() {
		hint := "For a non-interactive view that reprints on change, use: kubectl dynamo topology --watch (or explain-route for one request)"
		if o.FromFile != "" {
			hint = "For the same data without a terminal, use: " + cmdutil.CommandLine("topology", []string{"--from-file", o.FromFile}) +
				" (or explain-route for one request)"
		}
		return cmdutil.WithHint(errors.New("the dashboard needs a terminal, and stdout is not one"), hint)
	}
	return nil
}

// collect reads the live deployment: Kubernetes and etcd (kept as the base the
// metric polls reuse), then the frontend.
func (o *Options) collect(ctx context.Context) (*raw.Bundle, error) {
	opts := *o.live
	opts.NoFrontend = true
	b, err := source.Collect(ctx, opts)
	if err != nil {
		return nil, err
	}
	full := o.withFrontend(ctx, b, true)
	o.baseMu.Lock()
	o.base = b
	o.kv = full.KvEvents
	o.baseMu.Unlock()
	return full, nil
}

// withFrontend returns a copy of base with the frontend read again (base
// unchanged when the frontend is off).
//
// With placements the KV placements stream is read too (on every collection,
// which the watches trigger); metric polls reuse the last KV contents.
func (o *Options) withFrontend(ctx context.Context, base *raw.Bundle, placements bool) *raw.Bundle {
	if o.live.NoFrontend {
		return base
	}
	b := *base
	b.Sources = slices.Clone(base.Sources)
	b.Notes = slices.Clone(base.Notes)
	b.Metrics, b.BusyThresholds = nil, nil
	if !placements {
		o.baseMu.Lock()
		b.KvEvents = o.kv
		o.baseMu.Unlock()
	}
	fs := &source.FrontendSource{URL: o.live.FrontendURL, Placements: placements, Options: frontend.Options{
		API: o.live.Kube, HTTPClient: o.live.HTTPClient, Timeout: o.live.FrontendTimeout, Now: o.live.Now}}
	_ = fs.Collect(ctx, &b)
	return &b
}

// poll re-reads only the frontend's metrics over the last collection (the
// rest is watched).
func (o *Options) poll(ctx context.Context) (*tui.Data, error) {
	o.baseMu.Lock()
	base := o.base
	o.baseMu.Unlock()
	if base == nil {
		return o.load(ctx)
	}
	return o.data(o.withFrontend(ctx, base, false))
}

// load reads the bundle and turns it into the dashboard's data.
func (o *Options) load(ctx context.Context) (*tui.Data, error) {
	b, err := o.bundle(ctx)
	if err != nil {
		return nil, err
	}
	return o.data(b)
}

// data turns a bundle into the dashboard's data.
func (o *Options) data(b *raw.Bundle) (*tui.Data, error) {
	sel := func(s *model.Snapshot) error { return o.scope.Select(context.Background(), s, o.inventory) }
	return tui.NewData(b, tui.DataOptions{Namespace: o.namespace, Name: o.Name, SkewFactor: o.SkewFactor, Select: sel, DynamoVersion: o.DynamoVersion})
}

// TUIOptions reads the data once and returns the dashboard's options: the
// first load happens here, so that a deployment that cannot be read fails
// like any other command, before the screen is taken. Live, the Kubernetes
// objects are watched until ctx ends (the watch starts before the first load,
// so nothing in between is missed): a change re-collects, and --refresh only
// re-reads the frontend's metrics. A client that cannot watch at all, or a
// watch degraded from the start, falls back to re-collecting every --refresh.
func (o *Options) TUIOptions(ctx context.Context) (tui.Options, error) {
	var watchNext func(context.Context) (tui.WatchUpdate, bool)
	var poll tui.Loader
	if o.live != nil {
		if w, err := watch.Start(ctx, *o.live, watch.Options{}); err == nil {
			watchNext = func(ctx context.Context) (tui.WatchUpdate, bool) {
				n, ok := w.Next(ctx)
				return tui.WatchUpdate{Changed: n.Changed, State: string(n.Status.State), Detail: n.Status.Detail, Stale: n.Status.Stale}, ok
			}
			if w.Status().State != watch.Degraded {
				poll = o.poll
			}
		}
	}
	d, err := o.load(ctx)
	if err != nil {
		return tui.Options{}, err
	}
	mode := "live"
	refresh := o.Refresh
	load := o.load
	if o.FromFile != "" {
		mode, refresh, load = "capture "+o.FromFile, 0, nil
	}
	if watchNext != nil && poll != nil && o.live.NoFrontend {
		refresh = 0 // everything is watched: nothing to poll
	}
	return tui.Options{
		Initial: d, Load: load, Refresh: refresh, Mode: mode,
		Theme: o.theme, Color: o.IO.ColorEnabled(), Out: o.IO.TerminalOut(), Now: o.Now,
		Tokens: o.tokenText, Tokenize: o.tokenize, Context: ctx,
		Watch: watchNext, Poll: poll,
	}, nil
}

// Run reads the deployment and runs the dashboard until the user quits.
func (o *Options) Run(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	to, err := o.TUIOptions(ctx)
	if err != nil {
		return err
	}
	p := tea.NewProgram(tui.New(to), tea.WithAltScreen(), tea.WithInput(o.IO.In), tea.WithOutput(o.IO.TerminalOut()), tea.WithContext(ctx))
	if _, err := p.Run(); err != nil && !errors.Is(err, tea.ErrProgramKilled) {
		return fmt.Errorf("dashboard: %w", err)
	}
	return nil
}
