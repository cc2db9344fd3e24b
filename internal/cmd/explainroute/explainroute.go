// Package explainroute implements `kubectl dynamo explain-route`: a dry run of
// Dynamo's KV router for one request on a real deployment (live or captured),
// explaining the prefill pick, the KV-transfer constraint, the decode pick and
// the verdict.
package explainroute

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ai-dynamo/kubectl-dynamo/internal/cmdutil"
	"github.com/ai-dynamo/kubectl-dynamo/internal/completion"
	"github.com/ai-dynamo/kubectl-dynamo/internal/iostreams"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/analysis"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/behavior"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/build"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/explain"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// Options are the inputs of the explain-route command.
type Options struct {
	IO  *iostreams.IOStreams
	Now func() time.Time
	// Getenv reads the environment (Hugging Face cache); tests replace it.
	Getenv func(string) string
	// HTTPClient reaches --frontend-url and --indexer-url; nil means a default.
	HTTPClient *http.Client

	Name     string
	FromFile string
	Output   cmdutil.OutputFlags
	Sources  cmdutil.SourceFlags
	ExitZero bool

	// RequestID shows the router's logged decisions of that request beside
	// the model's (--request-id), from the Logs files (--logs) or the
	// capture's router log excerpt.
	RequestID string
	Logs      []string

	// The request.
	Prompt             string
	PromptFile         string
	MessagesFile       string
	Tokens             string
	TokenFile          string
	Tokenizer          string
	AddSpecialTokens   bool
	LoraName           string
	CacheNamespace     string
	RoutingConstraints string
	RequestOverride    string
	multimodalFlags

	// KV cache and loads.
	Cold          bool
	IndexerURL    string
	IndexerGroup  string
	AssumeIdle    bool
	Loads         []string
	KVTimeout     time.Duration
	FrontendTokTO time.Duration

	// Router knobs (flag name → value; only changed flags apply).
	knobFloats    map[string]*float64
	knobBools     map[string]*bool
	Enforcement   string
	RouterMode    string
	DynamoVersion string
	BlockSize     int
	Thresholds    thresholdFlags

	// What-ifs.
	ExcludeWorkers []string
	DomainDown     []string
	Prefill        string
	Decode         string
	Seed           uint64
	AllPrefill     bool

	// Resolved by Complete.
	cmd       *cobra.Command
	namespace string
	// scope is what the command line selects; inventory lists the deployments
	// of every namespace when it matches nothing (nil offline: the capture
	// holds them all).
	scope     cmdutil.Scope
	inventory cmdutil.Inventory
	live      *liveSource
	load      func(ctx context.Context) (*raw.Bundle, error)
	// indexAhead is the capture's KV index being built in the background.
	indexAhead *explain.IndexAhead
	input      explain.Options
	request    explain.Request
	// profileWhy says which profile --dynamo-version chose and why ("" when
	// the flag named a profile).
	profileWhy string
}

type thresholdFlags struct {
	decodeBlocks  float64
	prefillTokens uint64
	prefillFrac   float64
}

// knob flags: name, config field description.
var floatKnobs = []struct{ flag, help string }{
	{"overlap-score-credit", "overlap_score_credit: blocks of prefill cost credited per cached block"},
	{"overlap-score-credit-decay", "overlap_score_credit_decay: shrink the credit on busier workers"},
	{"prefill-load-scale", "prefill_load_scale: weight of the prompt-side load"},
	{"decode-active-request-weight", "decode_active_request_weight: cost per in-flight request"},
	{"host-cache-hit-weight", "host_cache_hit_weight: credit for host-pinned tier blocks"},
	{"disk-cache-hit-weight", "disk_cache_hit_weight: credit for disk tier blocks"},
	{"temperature", "router_temperature: 0 picks the minimum cost; above 0 samples a softmax"},
	{"shared-cache-multiplier", "shared_cache_multiplier: credit for shared-cache hits"},
	{"preferred-weight", "kv_transfer_preferred_weight of every prefill worker (with preferred enforcement)"},
}

var boolKnobs = []struct{ flag, help string }{
	{"track-active-blocks", "router_track_active_blocks"},
	{"assume-kv-reuse", "router_assume_kv_reuse"},
	{"track-prefill-tokens", "router_track_prefill_tokens"},
	{"conditional-disagg", "conditional_disagg_enabled"},
}

// NewCmdExplainRoute builds the command. runF, when set, replaces the run step (tests).
func NewCmdExplainRoute(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	o := &Options{IO: f.IOStreams, Now: f.Now, Getenv: os.Getenv, AddSpecialTokens: true,
		KVTimeout: 30 * time.Second, FrontendTokTO: 10 * time.Second,
		knobFloats: map[string]*float64{}, knobBools: map[string]*bool{}}
	cmd := &cobra.Command{
		Use:   "explain-route [DGD] (--prompt TEXT | --prompt-file F | --messages F | --tokens IDS | --token-file F) [flags]",
		Short: "Dry-run the KV router's prefill and decode selection for a prompt, and explain it",
		Long: `Dry-run Dynamo's KV router for one request on a deployment: hash the prompt into KV
blocks, match them against the workers' KV-cache contents, cost every prefill
candidate, derive the KV-transfer constraint from the prefill pick (topology-aware
transfer: required or preferred), cost every decode candidate, and say whether the
request is routable — and if not, why and what to change.

Every number comes from kubectl-dynamo's port of the router (pkg/routecore). Inputs
the router holds privately are approximated and listed as assumptions: loads come
from the frontend's /metrics (or --assume-idle, --load), KV-cache contents from the
frontend's placements stream, a standalone indexer (--indexer-url), the capture's
KvEvents, or nothing (--cold).

Tokens come from the frontend's POST /tokenize when the deployment is live (exact,
chat template included for --messages), else from --tokenizer (a tokenizer.json or
a model id in the local Hugging Face cache), else from the model's tokenizer found
in the Hugging Face cache. --tokens and --token-file skip tokenization.

Exit codes: 0 routable, 2 the request fails (or can fail, depending on the router's
random pick), 1 error.`,
		Example: `  # Why does this prompt fail on the live deployment?
  kubectl dynamo explain-route llama-70b -n inference --prompt "Summarise the report"

  # Offline, from a capture, with token ids
  kubectl dynamo explain-route --from-file capture.yaml --tokens 1,2,3,4,5,6,7,8

  # Can any prefill landing make a required-policy request fail?
  kubectl dynamo explain-route --from-file capture.yaml --token-file prompt.txt --all-prefill

  # What if zone us-east-1a goes down and enforcement were preferred?
  kubectl dynamo explain-route llama-70b --prompt-file p.txt --domain-down zone=us-east-1a --enforcement preferred`,
		Args: cobra.MaximumNArgs(1),
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
	fl.StringVarP(&o.FromFile, "from-file", "f", "", "Read a capture file (kubectl dynamo capture) instead of the cluster; - for stdin")
	fl.BoolVar(&o.ExitZero, "exit-zero", false, "Exit 0 even when the request is predicted to fail (report only)")
	fl.StringVar(&o.RequestID, "request-id", "", "Explain a request the router logged: its decisions (from --logs, or a capture's router log excerpt) beside the model's, and why it picked its workers")
	fl.StringArrayVar(&o.Logs, "logs", nil, "With --request-id: the frontend's log (a file, plain or gzip, or - for stdin); repeat for several replicas")

	fl.StringVar(&o.Prompt, "prompt", "", "The prompt text")
	fl.StringVar(&o.PromptFile, "prompt-file", "", "Read the prompt text from a file (- for stdin)")
	fl.StringVar(&o.MessagesFile, "messages", "", "OpenAI chat messages JSON file (an array, or an object with \"messages\"); tokenized by the frontend with its chat template")
	fl.StringVar(&o.Tokens, "tokens", "", "Token ids, comma- or space-separated, or a JSON array")
	fl.StringVar(&o.TokenFile, "token-file", "", "Read token ids from a file (- for stdin)")
	fl.StringVar(&o.Tokenizer, "tokenizer", "", "Tokenize offline with this tokenizer.json (a path, or a Hugging Face model id in the local cache)")
	fl.BoolVar(&o.AddSpecialTokens, "add-special-tokens", o.AddSpecialTokens, cmdutil.AddSpecialTokensHelp)
	fl.StringVar(&o.LoraName, "lora-name", "", "LoRA adapter name (salts the block hashes)")
	fl.StringVar(&o.CacheNamespace, "cache-namespace", "", "Cache namespace / cache salt (salts the block hashes)")
	fl.StringVar(&o.RoutingConstraints, "routing-constraints", "", `nvext.routing_constraints JSON, e.g. '{"required_taints":["gpu=h100"]}' (or @FILE)`)
	fl.StringVar(&o.RequestOverride, "router-config-override", "", `Per-request router_config_override JSON, e.g. '{"router_temperature":0.5}' (or @FILE)`)
	o.addMultimodalFlags(fl)

	fl.BoolVar(&o.Cold, "cold", false, "Assume an empty KV cache (no overlap anywhere)")
	fl.StringVar(&o.IndexerURL, "indexer-url", "", "Ask a standalone Dynamo KV indexer (POST /query) for the overlaps instead of the frontend's placements stream")
	fl.StringVar(&o.IndexerGroup, "indexer-routing-group", "", "routing_group for --indexer-url queries")
	fl.DurationVar(&o.KVTimeout, "kv-timeout", o.KVTimeout, "How long to wait for the KV-cache snapshot (placements stream or indexer)")
	fl.BoolVar(&o.AssumeIdle, "assume-idle", false, "Ignore observed loads: every worker is idle")
	fl.StringArrayVar(&o.Loads, "load", nil, "Set a worker's load: POD=decodeBlocks:N,prefillTokens:M[,activeRequests:K] (repeatable)")

	for _, k := range floatKnobs {
		v := new(float64)
		o.knobFloats[k.flag] = v
		fl.Float64Var(v, k.flag, 0, k.help)
	}
	for _, k := range boolKnobs {
		v := new(bool)
		o.knobBools[k.flag] = v
		fl.BoolVar(v, k.flag, false, k.help)
	}
	fl.StringVar(&o.Enforcement, "enforcement", "", "What-if transfer enforcement for every prefill worker: required|preferred|off")
	fl.StringVar(&o.RouterMode, "router-mode", "", "What-if frontend router mode: round-robin|random|power-of-two|least-loaded|device-aware-weighted|direct|kv")
	cmdutil.AddDynamoVersionFlag(cmd, fl, &o.DynamoVersion)
	fl.IntVar(&o.BlockSize, "block-size", 0, "KV block size, when no worker card publishes kv_cache_block_size")
	fl.Float64Var(&o.Thresholds.decodeBlocks, "active-decode-blocks-threshold", 0, "What-if busy threshold: fraction of KV blocks in use that marks a worker overloaded")
	fl.Uint64Var(&o.Thresholds.prefillTokens, "active-prefill-tokens-threshold", 0, "What-if busy threshold: active prefill tokens that mark a worker overloaded")
	fl.Float64Var(&o.Thresholds.prefillFrac, "active-prefill-tokens-threshold-frac", 0, "What-if busy threshold: fraction of max_num_batched_tokens")

	fl.StringSliceVar(&o.ExcludeWorkers, "exclude-worker", nil, "What-if: remove these worker pods from routing (comma-separated or repeated)")
	fl.StringSliceVar(&o.DomainDown, "domain-down", nil, "What-if: remove every worker in KEY=VALUE, e.g. zone=us-east-1a (comma-separated or repeated)")
	fl.StringVar(&o.Prefill, "prefill", "", "What-if: force the prefill pick (POD or POD:RANK), as a pinned prefill_worker_id")
	fl.StringVar(&o.Decode, "decode", "", "What-if: the decode worker a direct-mode request names (POD)")
	fl.Uint64Var(&o.Seed, "seed", 0, "Seed for the random tie-break and sampling (the router itself picks at random)")
	fl.BoolVar(&o.AllPrefill, "all-prefill", false, "Evaluate the decode outcome for every eligible prefill worker (a matrix)")

	o.Sources.AddFlags(cmd)
	cmdutil.AddOutputFlags(cmd, &o.Output)
	cmd.ValidArgsFunction = completion.MaxArgs(1, completion.Deployments(f))
	_ = cmd.RegisterFlagCompletionFunc("exclude-worker", completion.Pods(f, completion.Arg(0)))
	_ = cmd.RegisterFlagCompletionFunc("prefill", completion.Pods(f, completion.Arg(0), model.RolePrefill))
	_ = cmd.RegisterFlagCompletionFunc("domain-down", completion.DomainValues(f, completion.Arg(0)))
	_ = cmd.RegisterFlagCompletionFunc("decode", completion.Pods(f, completion.Arg(0), model.RoleDecode))
	_ = cmd.RegisterFlagCompletionFunc("router-mode", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		var out []string
		for _, m := range routecore.RouterModes {
			out = append(out, string(m))
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	})
	_ = cmd.RegisterFlagCompletionFunc("enforcement", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{"required", "preferred", "off"}, cobra.ShellCompDirectiveNoFileComp
	})
	return cmd
}

func profileNames() string {
	var s []string
	for _, p := range routecore.Profiles() {
		s = append(s, string(p))
	}
	return strings.Join(s, ", ")
}

// Complete resolves the namespace, the data source and the request.
func (o *Options) Complete(f *cmdutil.Factory, cmd *cobra.Command, args []string) error {
	o.cmd = cmd
	if len(args) == 1 {
		o.Name = args[0]
	}
	o.scope = cmdutil.Scope{Command: "explain-route", Source: cmdutil.SourceArgs(cmd), File: o.FromFile,
		NamespaceGiven: cmd.Flags().Changed("namespace")}
	if o.Name != "" {
		o.scope.Names = []string{o.Name}
	}
	if o.FromFile != "" {
		ns, load, err := o.Sources.FromFile(f, cmd, o.IO.In, o.FromFile)
		if err != nil {
			return err
		}
		o.namespace, o.load = ns, load
	} else {
		live, err := o.Sources.Live(f, "explain-route", o.Name, o.HTTPClient)
		if err != nil {
			return err
		}
		o.namespace, o.inventory = live.Namespace, live.Inventory
		o.live = newLiveSource(live.Options)
		o.load = o.live.collect
		o.scope.Context = live.Options.Context
	}
	o.scope.Namespace = o.namespace
	return o.completeInputs(cmd)
}

// completeInputs turns the request, knob and what-if flags into explain inputs.
func (o *Options) completeInputs(cmd *cobra.Command) error {
	// Before any of them is read (an @- flag is read here).
	if err := o.stdinOnce(); err != nil {
		return err
	}
	in := explain.Options{AssumeIdle: o.AssumeIdle, Seed: o.Seed, SeedGiven: cmd.Flags().Changed("seed"), BlockSize: o.BlockSize, DynamoVersion: o.DynamoVersion}
	k := &in.Knobs
	floatDst := map[string]**float64{
		"overlap-score-credit": &k.OverlapScoreCredit, "overlap-score-credit-decay": &k.OverlapScoreCreditDecay,
		"prefill-load-scale": &k.PrefillLoadScale, "decode-active-request-weight": &k.DecodeActiveRequestWeight,
		"host-cache-hit-weight": &k.HostCacheHitWeight, "disk-cache-hit-weight": &k.DiskCacheHitWeight,
		"temperature": &k.Temperature, "shared-cache-multiplier": &k.SharedCacheMultiplier, "preferred-weight": &k.PreferredWeight,
	}
	for name, v := range o.knobFloats {
		if cmd.Flags().Changed(name) {
			*floatDst[name] = v
		}
	}
	boolDst := map[string]**bool{
		"track-active-blocks": &k.TrackActiveBlocks, "assume-kv-reuse": &k.AssumeKvReuse,
		"track-prefill-tokens": &k.TrackPrefillTokens, "conditional-disagg": &k.ConditionalDisagg,
	}
	for name, v := range o.knobBools {
		if cmd.Flags().Changed(name) {
			*boolDst[name] = v
		}
	}
	if o.Enforcement != "" {
		e, err := explain.ParseEnforcement(o.Enforcement)
		if err != nil {
			return cmdutil.FlagErrorf("--enforcement: %v", err)
		}
		k.Enforcement = &e
	}
	if o.RouterMode != "" {
		m, err := routecore.ParseRouterMode(o.RouterMode)
		if err != nil {
			return cmdutil.FlagErrorf("--router-mode: %v", err)
		}
		k.RouterMode = &m
	}
	if err := cmdutil.ValidateDynamoVersion(o.DynamoVersion); err != nil {
		return err
	}
	if o.DynamoVersion != "" {
		rel, _ := behavior.ParseRelease(o.DynamoVersion)
		p := rel.Profile()
		k.Profile = &p
		o.profileWhy = profileWhy(o.DynamoVersion, p)
	}
	if fl := cmd.Flags(); fl.Changed("active-decode-blocks-threshold") || fl.Changed("active-prefill-tokens-threshold") || fl.Changed("active-prefill-tokens-threshold-frac") {
		th := routecore.BusyThresholds{}
		if fl.Changed("active-decode-blocks-threshold") {
			th.ActiveDecodeBlocksThreshold = &o.Thresholds.decodeBlocks
		}
		if fl.Changed("active-prefill-tokens-threshold") {
			th.ActivePrefillTokensThreshold = &o.Thresholds.prefillTokens
		}
		if fl.Changed("active-prefill-tokens-threshold-frac") {
			th.ActivePrefillTokensThresholdFrac = &o.Thresholds.prefillFrac
		}
		k.Thresholds = &th
	}
	for _, s := range o.Loads {
		lo, err := explain.ParseLoadOverride(s)
		if err != nil {
			return cmdutil.FlagErrorf("--load: %v", err)
		}
		in.Loads = append(in.Loads, lo)
	}
	in.WhatIf = explain.WhatIf{ExcludeWorkers: o.ExcludeWorkers, Prefill: o.Prefill, Decode: o.Decode, AllPrefill: o.AllPrefill}
	for _, s := range o.DomainDown {
		dv, err := explain.ParseDomainValue(s)
		if err != nil {
			return cmdutil.FlagErrorf("--domain-down: %v", err)
		}
		in.WhatIf.DomainDown = append(in.WhatIf.DomainDown, dv)
	}
	o.input = in

	r := explain.Request{LoraName: o.LoraName, CacheNamespace: o.CacheNamespace}
	if o.RoutingConstraints != "" {
		data, err := o.jsonArg("--routing-constraints", o.RoutingConstraints)
		if err != nil {
			return err
		}
		c, err := routecore.ParseRoutingConstraints(data)
		if err != nil {
			return cmdutil.FlagErrorf("--routing-constraints: %v", err)
		}
		r.Constraints = c
	}
	if o.RequestOverride != "" {
		data, err := o.jsonArg("--router-config-override", o.RequestOverride)
		if err != nil {
			return err
		}
		ov, err := decodeOverride(data)
		if err != nil {
			return cmdutil.FlagErrorf("--router-config-override: %v", err)
		}
		r.Override = ov
	}
	if err := o.completeMultimodal(&r); err != nil {
		return err
	}
	o.request = r
	return nil
}

// jsonArg reads a JSON flag value, or the file named by @FILE.
func (o *Options) jsonArg(flag, v string) ([]byte, error) {
	if name, ok := strings.CutPrefix(v, "@"); ok {
		return cmdutil.ReadInputLimit(o.IO.In, name, flag, 16<<20)
	}
	return []byte(v), nil
}

// Validate checks flag combinations.
func (o *Options) Validate() error {
	if err := o.Output.Validate(); err != nil {
		return err
	}
	var given []string
	for _, f := range []struct {
		name string
		set  bool
	}{{"--prompt", o.cmd.Flags().Changed("prompt")}, {"--prompt-file", o.PromptFile != ""}, {"--messages", o.MessagesFile != ""},
		{"--tokens", o.cmd.Flags().Changed("tokens")}, {"--token-file", o.TokenFile != ""}} {
		if f.set {
			given = append(given, f.name)
		}
	}
	if o.RequestID != "" {
		switch {
		case len(given) > 0:
			return cmdutil.FlagErrorf("--request-id explains a request the router logged, whose length and block hashes come from the logs: drop %s", strings.Join(given, " and "))
		case len(o.Logs) == 0 && o.FromFile == "":
			return cmdutil.FlagErrorf("--request-id needs the router's logs: give --logs FILE (what kubectl logs prints of the frontend), or --from-file with a capture taken with capture --logs")
		}
		return o.Sources.Validate()
	}
	if len(o.Logs) > 0 {
		return cmdutil.FlagErrorf("--logs goes with --request-id: name the logged request to explain (kubectl dynamo audit-routes lists the decisions)")
	}
	switch {
	case len(given) == 0:
		return cmdutil.FlagErrorf("give the request: --prompt TEXT, --prompt-file FILE, --messages FILE, --tokens IDS or --token-file FILE, or --request-id ID with --logs FILE for a logged one")
	case len(given) > 1:
		return cmdutil.FlagErrorf("%s cannot be combined: give the request one way", strings.Join(given, " and "))
	}
	if o.Tokenizer != "" && (given[0] == "--tokens" || given[0] == "--token-file") {
		return cmdutil.FlagErrorf("--tokenizer tokenizes a prompt; %s already gives token ids", given[0])
	}
	if o.MessagesFile != "" && o.Tokenizer != "" {
		return cmdutil.FlagErrorf("--messages needs the frontend's chat template (POST /tokenize); --tokenizer cannot apply it. Render the prompt and use --prompt, or drop --tokenizer")
	}
	if o.MessagesFile != "" && o.FromFile != "" {
		return cmdutil.FlagErrorf("--messages needs the live frontend's chat template (POST /tokenize), which a capture file does not have: use --prompt with the rendered prompt, or --tokens")
	}
	if o.Cold && o.IndexerURL != "" {
		return cmdutil.FlagErrorf("--cold and --indexer-url cannot be used together")
	}
	if o.IndexerURL != "" && o.FromFile != "" {
		return cmdutil.FlagErrorf("--indexer-url reads a live indexer; with --from-file the capture's KvEvents are used (or --cold)")
	}
	if o.KVTimeout <= 0 {
		return cmdutil.FlagErrorf("--kv-timeout must be positive")
	}
	if o.BlockSize < 0 {
		return cmdutil.FlagErrorf("--block-size must be positive, got %d", o.BlockSize)
	}
	if o.Prefill != "" && o.AllPrefill {
		return cmdutil.FlagErrorf("--prefill pins one prefill worker; --all-prefill evaluates them all: use one")
	}
	return o.Sources.Validate()
}

// Run reads the deployment, builds the request, runs the dry run and prints it.
func (o *Options) Run(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	defer cmdutil.TuneGCForOneShot(cmdutil.GCReport)()
	if o.RequestID != "" {
		return o.runTrace(ctx)
	}
	b, err := o.load(ctx)
	if err != nil {
		return err
	}
	if o.live == nil && !o.Cold {
		// A capture's KV events are indexed while the snapshot is built.
		o.indexAhead = explain.StartIndexAhead(b)
		defer o.indexAhead.Wait()
	}
	snap, err := build.Build(b)
	if err != nil {
		return err
	}
	dep, err := o.pickDeployment(ctx, snap)
	if err != nil {
		return err
	}
	if err := o.checkDomainKeys(dep); err != nil {
		return err
	}
	req, notes, err := o.resolveRequest(ctx, b, dep)
	if err != nil {
		return err
	}
	kv, kvNotes, err := o.resolveKV(ctx, b, dep, req)
	if err != nil {
		return err
	}
	// Old data is said first: it qualifies everything below it.
	snap.Notes = append(analysis.FreshnessNotes(snap, o.Now()), snap.Notes...)
	x, err := explain.Explain(explain.Input{Snapshot: snap, Deployment: dep, Request: req, KV: kv, Options: o.input})
	if err != nil {
		return explainErr(err)
	}
	if o.profileWhy != "" {
		x.Assumptions = append(x.Assumptions, o.profileWhy)
	}
	for _, n := range append(notes, kvNotes...) {
		x.Notes = append(x.Notes, model.Note{Severity: model.NoteWarning, Source: model.SourceFrontend, Deployment: dep.Key(), Message: n})
	}
	if err := o.print(x); err != nil {
		return err
	}
	return o.exitFor(x)
}

func explainErr(err error) error {
	var ie *explain.InputError
	if ok := asInputErr(err, &ie); ok && ie.Hint != "" {
		return cmdutil.WithHint(err, ie.Hint)
	}
	return err
}

// pickDeployment selects the deployment: the named one, or the only one. A
// namespace or name that matches nothing is an error listing what exists
// (cmdutil.Scope.Select, the rule every data command follows).
func (o *Options) pickDeployment(ctx context.Context, s *model.Snapshot) (*model.Deployment, error) {
	if err := o.scope.Select(ctx, s, o.inventory); err != nil {
		var he *cmdutil.HintError
		if suffix := noteSuffix(s); suffix != "" && errors.As(err, &he) {
			// The notes say why a live read may have missed it (a 403, …).
			return nil, cmdutil.WithHint(fmt.Errorf("%w%s", he.Err, suffix), he.Hint)
		}
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
		cmdutil.CommandLine("explain-route", o.scope.Source, "-n", first.Namespace, first.Name))
}

func noteSuffix(s *model.Snapshot) string {
	var msgs []string
	for _, n := range s.Notes {
		if n.Severity == model.NoteWarning {
			msgs = append(msgs, n.Message)
		}
	}
	if len(msgs) == 0 {
		return ""
	}
	return " (" + strings.Join(msgs, "; ") + ")"
}

func (o *Options) print(x *explain.Explanation) error {
	if ok, err := o.Output.PrintStructured(o.IO.Out, x); ok {
		return err
	}
	wide, st := o.Output.Format == cmdutil.OutputWide, style{color: o.IO.ColorEnabled()}
	if o.Output.NoHeaders {
		// The notes, which the report prints under Notes:, go to stderr: the
		// rows stay parseable and old or degraded data is not silent.
		for _, n := range x.Notes {
			if n.Severity == model.NoteWarning {
				fmt.Fprintf(o.IO.ErrOut, "warning: %s: %s\n", n.Source, n.Message)
			}
		}
		return printRows(o.IO.Out, x, wide, st)
	}
	return printExplanation(o.IO.Out, x, o.Now(), wide, false, st)
}

// checkDomainKeys refuses a --domain-down KEY that nothing of dep carries
// (not its transfer domain, no published topology domain, no node or pod
// label), suggesting the domain it most resembles: zon=… is zone=….
func (o *Options) checkDomainKeys(dep *model.Deployment) error {
	if len(o.DomainDown) == 0 {
		return nil
	}
	domains, keys := []string{}, map[string]bool{}
	addDomain := func(d string) {
		if d != "" && !keys[d] {
			keys[d] = true
			domains = append(domains, d)
		}
	}
	if dep.Policy != nil {
		addDomain(dep.Policy.Domain)
	}
	for i := range dep.Workers {
		w := &dep.Workers[i]
		for _, in := range w.Instances {
			for d := range in.Runtime.TopologyDomains {
				addDomain(d)
			}
		}
	}
	slices.Sort(domains[min(1, len(domains)):]) // the policy's domain first, then by name
	for i := range dep.Workers {
		for k := range dep.Workers[i].NodeLabels {
			keys[k] = true
		}
		for k := range dep.Workers[i].PodLabels {
			keys[k] = true
		}
	}
	for _, s := range o.DomainDown {
		dv, err := explain.ParseDomainValue(s)
		if err != nil || keys[dv.Key] {
			continue
		}
		msg := fmt.Sprintf("--domain-down %s: %s has no topology domain %q", s, dep.Key(), dv.Key)
		if m := cmdutil.Suggest(dv.Key, domains); m != "" {
			msg += fmt.Sprintf("; did you mean %s=%s?", m, dv.Value)
		}
		if len(domains) > 0 {
			msg += " (its domains: " + strings.Join(domains, ", ") + "; a node or pod label key also works)"
		}
		return cmdutil.WithHint(cmdutil.FlagErrorf("%s", msg), "Try: "+cmdutil.CommandLine("topology", o.scope.Source, "-n", dep.Namespace, dep.Name, "--tree")+" to list the domains and their values")
	}
	return nil
}

// profileWhy is the assumption a --dynamo-version VERSION makes: the profile
// it selects and the rule (behavior.Release.Profile: releases before 1.2
// route with the pre-clamp selector, 1.2 with the latest one but multimodal
// mm_hashes appended to the block bytes, 1.3 and later with the latest one,
// which a release newer than this build is assumed to keep). "" when v
// names a profile.
func profileWhy(v string, p routecore.Profile) string {
	if _, err := routecore.ParseProfile(v); err == nil {
		return ""
	}
	why := "Dynamo 1.3 and later route with the latest selector and hash multimodal placeholders as pad values (#10328), and a release newer than this build knows is assumed to keep it"
	switch p {
	case routecore.ProfileLatest:
	case routecore.ProfileLegacyV1_2:
		why = "Dynamo 1.2 routes with the latest selector but hashes a multimodal block with its mm_hashes appended (before #10328)"
	default:
		why = "releases before Dynamo 1.2 route with the pre-clamp selector (a negative adjusted prefill cost is kept, overlap_score_credit at most 1)"
	}
	return fmt.Sprintf("--dynamo-version %s selects profile %s: %s (or name a profile: %s)", v, p, why, profileNames())
}

// stdinOnce refuses two flags that both read standard input: the first
// would read all of it and leave nothing for the second.
func (o *Options) stdinOnce() error {
	var readers []string
	for _, f := range []struct{ flag, value, stdin string }{
		{"--from-file", o.FromFile, "-"}, {"--prompt-file", o.PromptFile, "-"}, {"--messages", o.MessagesFile, "-"},
		{"--token-file", o.TokenFile, "-"}, {"--routing-constraints", o.RoutingConstraints, "@-"},
		{"--router-config-override", o.RequestOverride, "@-"}, {"--logs", logsStdin(o.Logs), "-"},
	} {
		if f.value == f.stdin {
			readers = append(readers, f.flag+" "+f.stdin)
		}
	}
	switch {
	case len(readers) == 2:
		return cmdutil.FlagErrorf("%s both read standard input, which can be read only once: give one of them as a file (e.g. --token-file prompt.tokens)",
			strings.Join(readers, " and "))
	case len(readers) > 2:
		return cmdutil.FlagErrorf("%s all read standard input, which can be read only once: give all but one of them as files",
			strings.Join(readers, ", "))
	}
	return nil
}

// exitFor returns exit 2 when the request fails or can fail.
func (o *Options) exitFor(x *explain.Explanation) error {
	if o.ExitZero || x.Verdict.Outcome == explain.OutcomeRoutable {
		return nil
	}
	msg := ""
	if o.Output.IsTable() {
		msg = "the request is predicted to fail (exit code 2; --exit-zero reports without failing)"
		if x.Verdict.Outcome == explain.OutcomeCanFail {
			msg = "the request can fail depending on the prefill pick (exit code 2; --exit-zero reports without failing)"
		}
	}
	return &cmdutil.ResultError{Code: cmdutil.ExitFindings, Message: msg}
}

// decodeOverride decodes a per-request router_config_override.
func decodeOverride(data []byte) (routecore.RouterConfigOverride, error) {
	var ov routecore.RouterConfigOverride
	dec := jsonDecoder(data)
	if err := dec.Decode(&ov); err != nil {
		return ov, err
	}
	return ov, nil
}
