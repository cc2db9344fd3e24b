// Package simulate implements `kubectl dynamo simulate`: real or synthetic
// traffic replayed through the router model over a deployment's topology,
// once per what-if variant, compared side by side.
package simulate

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ai-dynamo/kubectl-dynamo/internal/cmdutil"
	"github.com/ai-dynamo/kubectl-dynamo/internal/completion"
	"github.com/ai-dynamo/kubectl-dynamo/internal/iostreams"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/analysis"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/build"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/explain"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/fileio"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/simulate"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/simulate/dynosim"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/simulate/plot"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/simulate/trace"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/frontend"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/termsafe"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/tokenizer"
)

// Options are the inputs of the simulate command.
type Options struct {
	IO     *iostreams.IOStreams
	Now    func() time.Time
	Getenv func(string) string

	Name     string
	FromFile string
	Output   cmdutil.OutputFlags
	Sources  cmdutil.SourceFlags

	TraceFile      string
	TraceFormat    string
	TraceBlockSize int
	Synthetic      string
	Tokenizer      string
	Speedup        float64
	Rate           float64
	Duration       time.Duration
	MaxRequests    int
	Seed           uint64
	Variants       []string
	EngineProfile  string
	KvCapacity     uint64
	Cold           bool
	AssumeIdle     bool
	BlockSize      int
	RouterMode     string
	DynamoVersion  string
	FailOn         string
	SLO            string
	Seeds          int
	Recommend      bool
	RecommendRuns  int
	RecommendTime  time.Duration
	Plot           string
	ExportDynoSim  string
	Hardware       string
	Progress       string
	KVTimeout      time.Duration

	cmd       *cobra.Command
	namespace string
	scope     cmdutil.Scope
	inventory cmdutil.Inventory
	live      *source.CollectOptions
	load      func(ctx context.Context) (*raw.Bundle, error)
	variants  []simulate.Variant
	engine    simulate.Engine
	failOn    failPolicy
	slos      []simulate.SLO
	base      explain.Options
	// trace is the --trace input, opened once; plot and export the output
	// files, checked before the run.
	trace        *fileio.Input
	plot, export *fileio.Output
	// variantExports are the --export-dynosim files of the variants.
	variantExports []*fileio.Output
}

// maxTraceFileBytes bounds a --trace file, which is streamed (its size does
// not reach memory); a trace from standard input or process substitution is
// held in memory and bounded by cmdutil.MaxInputFileBytes.
const maxTraceFileBytes = 1 << 40

// NewCmdSimulate builds the command. runF, when set, replaces the run step (tests).
func NewCmdSimulate(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	o := &Options{IO: f.IOStreams, Now: f.Now, Getenv: os.Getenv, Speedup: 1, TraceBlockSize: trace.DefaultTraceBlockSize,
		TraceFormat: "auto", FailOn: "any", Progress: "auto", KVTimeout: 30 * time.Second}
	cmd := &cobra.Command{
		Use:   "simulate [DGD] (--trace FILE | --synthetic SPEC) [--variant SPEC]... [flags]",
		Short: "Replay traffic through the router model over the deployment's topology and compare what-ifs",
		Long: `Replay a traffic trace through kubectl-dynamo's port of Dynamo's router, over the
deployment's real topology (domains, transfer policy, router mode and configuration,
replicas, current KV contents and loads), in virtual time. Each variant replays the
same traffic with one what-if applied; the deployment as it is always runs first.

Every routing decision is exactly explain-route's for that request and router state:
the simulation drives the same routing core (KV costs, ties, softmax sampling with
--seed, the transfer policy, the overload latch), and keeps the router's own state
the way the router does (its ledger of active requests, KV events as blocks are
stored and evicted). The timings (TTFT, end-to-end latency, loads over time) come
from a small engine model and are estimates: see docs/commands/simulate.md.

Traces: Mooncake JSON lines (timestamp, input_length, output_length, hash_ids), the
mooncake-delta session format, Dynamo's request-trace records with replay hashes,
JSON lines of token ids or texts, or --synthetic.

Variants (--variant, repeatable; comma-separated what-ifs in one variant):
  ` + simulate.VariantKeys + `

Exit codes: 0 ok, 2 the deployment as it is fails more requests than --fail-on
allows, 1 error.`,
		Example: `  # Replay a Mooncake trace on an example deployment: required vs preferred
  kubectl dynamo simulate -f examples/prefill-only-zone-required.yaml \
    --trace conversation_trace.jsonl --variant enforcement=preferred,weight=0.3

  # Synthetic traffic: what if zone us-east-1a goes down, or 2 decode replicas are added in 1c?
  kubectl dynamo simulate llama-70b -n inference \
    --synthetic rate=20,isl=1000-4000,osl=200,prefix-share=0.4,duration=10m \
    --variant down=us-east-1a --variant decode+2@us-east-1c

  # Gate a change in CI: fail when more than 1% of requests would fail
  kubectl dynamo simulate -f capture.yaml --trace trace.jsonl --fail-on 1% -o json > report.json

  # A chart to look at, and the same scenario for DynoSim's engine models
  kubectl dynamo simulate -f capture.yaml --trace trace.jsonl --plot report.svg --export-dynosim dynosim.yaml`,
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
	fl.StringVar(&o.TraceFile, "trace", "", "The traffic: a trace file (JSON lines, optionally gzipped)")
	fl.StringVar(&o.TraceFormat, "trace-format", o.TraceFormat, "Trace format: auto|"+formatNames())
	fl.IntVar(&o.TraceBlockSize, "trace-block-size", o.TraceBlockSize, "Tokens per hash id in a hash-id trace (Mooncake's published traces: 512)")
	fl.StringVar(&o.Synthetic, "synthetic", "", "Synthetic traffic instead of a trace: rate=R,isl=N|LO-HI,osl=N|LO-HI,prefix-share=F,prefixes=N,duration=D|requests=N")
	fl.StringVar(&o.Tokenizer, "tokenizer", "", "Tokenizer for a texts trace: a tokenizer.json path or a Hugging Face model id in the local cache (default: the served model)")
	fl.Float64Var(&o.Speedup, "speedup", o.Speedup, "Divide the trace's inter-arrival times (2 replays twice as fast)")
	fl.Float64Var(&o.Rate, "rate", 0, "Scale the trace to this mean rate in requests/s (instead of --speedup; the trace is read once more to measure its own)")
	fl.DurationVar(&o.Duration, "duration", 0, "Replay only the arrivals within this time of the first (after --speedup or --rate), e.g. 10m")
	fl.IntVar(&o.MaxRequests, "max-requests", 0, "Replay at most this many requests (0: the whole trace)")
	fl.Uint64Var(&o.Seed, "seed", 0, "Seed for the router's random picks (ties, sampling) and synthetic traffic")
	fl.StringArrayVar(&o.Variants, "variant", nil, "A what-if to compare (repeatable): "+simulate.VariantKeys)
	fl.StringVar(&o.EngineProfile, "engine-profile", "", "Engine timings from a profile: Dynamo planner raw data JSON (prefill/decode_raw_data.json or their ConfigMap) or a DynoSim spec with fixed timing")
	fl.Uint64Var(&o.KvCapacity, "kv-capacity-blocks", 0, "Prefix-cache capacity per dp rank in blocks, for workers that publish no total_kv_blocks")
	fl.BoolVar(&o.Cold, "cold", false, "Start with empty KV caches (ignore the capture's or frontend's KV contents)")
	fl.BoolVar(&o.AssumeIdle, "assume-idle", false, "Start with idle workers (ignore the observed loads)")
	fl.IntVar(&o.BlockSize, "block-size", 0, "KV block size, when no worker card publishes kv_cache_block_size")
	fl.StringVar(&o.RouterMode, "router-mode", "", "What-if frontend router mode for every variant: "+modeNames())
	cmdutil.AddDynamoVersionFlag(cmd, fl, &o.DynamoVersion)
	fl.StringVar(&o.FailOn, "fail-on", o.FailOn, "Exit 2 when the deployment as it is fails more than this share of requests (any, none, or a share such as 1%), or is saturated (saturated); comma-separated")
	fl.StringVar(&o.SLO, "slo", "", "Latency objectives whose breaches are counted per variant and domain: ttft=2s,e2e=30s,ttft-p99=4s (a metric with a percentile, or every request without)")
	fl.IntVar(&o.Seeds, "seeds", 1, "Run this many seeds (--seed, --seed+1, …) and report the spread (min/median/max) of every headline figure")
	fl.BoolVar(&o.Recommend, "recommend", false, "Search the smallest change (decode or prefill workers per domain, or preferred enforcement with a weight) that meets --slo with no failed request, and print it as a DGD patch to review")
	fl.IntVar(&o.RecommendRuns, "recommend-max-runs", simulate.DefaultRecommendRuns, "The most candidates --recommend simulates")
	fl.DurationVar(&o.RecommendTime, "recommend-timeout", 10*time.Minute, "The most time --recommend searches for; it reports the best found when it runs out")
	fl.StringVar(&o.Plot, "plot", "", "Also write an SVG chart of the comparison to this file")
	fl.StringVar(&o.ExportDynoSim, "export-dynosim", "", "Also write the deployment and traffic as a DynoSim (aisimulate predict) spec to this file")
	fl.StringVar(&o.Hardware, "hardware", "", "GPU system name for --export-dynosim (e.g. h200_sxm); the cluster does not say")
	fl.StringVar(&o.Progress, "progress", o.Progress, "Progress line on stderr: auto (when stderr is a terminal), always or never")
	fl.DurationVar(&o.KVTimeout, "kv-timeout", o.KVTimeout, "How long to wait for the live KV-cache snapshot (frontend placements stream)")
	o.Sources.AddFlags(cmd)
	cmdutil.AddOutputFlags(cmd, &o.Output)
	cmd.ValidArgsFunction = completion.MaxArgs(1, completion.Deployments(f))
	_ = cmd.RegisterFlagCompletionFunc("trace-format", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		out := []string{"auto"}
		for _, f := range trace.Formats {
			out = append(out, string(f))
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	})
	return cmd
}

func formatNames() string {
	var s []string
	for _, f := range trace.Formats {
		if f != trace.SyntheticFormat {
			s = append(s, string(f))
		}
	}
	return strings.Join(s, "|")
}

func modeNames() string {
	var s []string
	for _, m := range routecore.RouterModes {
		s = append(s, string(m))
	}
	return strings.Join(s, "|")
}

// Complete resolves the data source, the variants and the engine model.
func (o *Options) Complete(f *cmdutil.Factory, cmd *cobra.Command, args []string) error {
	o.cmd = cmd
	// Before anything is read: standard input can be read once.
	if err := cmdutil.OneStdin(cmdutil.NamedInput{Flag: "--from-file", Path: o.FromFile}, cmdutil.NamedInput{Flag: "--trace", Path: o.TraceFile},
		cmdutil.NamedInput{Flag: "--engine-profile", Path: o.EngineProfile}); err != nil {
		return err
	}
	if len(args) == 1 {
		o.Name = args[0]
	}
	o.scope = cmdutil.Scope{Command: "simulate", Source: cmdutil.SourceArgs(cmd), File: o.FromFile, NamespaceGiven: cmd.Flags().Changed("namespace")}
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
		live, err := o.Sources.Live(f, "simulate", o.Name, nil)
		if err != nil {
			return err
		}
		opts := live.Options
		o.namespace, o.live, o.inventory = live.Namespace, &opts, live.Inventory
		o.load = func(ctx context.Context) (*raw.Bundle, error) { return source.Collect(ctx, opts) }
		o.scope.Context = opts.Context
	}
	o.scope.Namespace = o.namespace
	for _, s := range o.Variants {
		v, err := simulate.ParseVariant(s)
		if err != nil {
			return cmdutil.FlagErrorf("%v", err)
		}
		o.variants = append(o.variants, v)
	}
	o.base = explain.Options{AssumeIdle: o.AssumeIdle, Seed: o.Seed, SeedGiven: cmd.Flags().Changed("seed"), BlockSize: o.BlockSize}
	if o.RouterMode != "" {
		m, err := routecore.ParseRouterMode(o.RouterMode)
		if err != nil {
			return cmdutil.FlagErrorf("--router-mode: %v", err)
		}
		o.base.Knobs.RouterMode = &m
	}
	if err := cmdutil.ValidateDynamoVersion(o.DynamoVersion); err != nil {
		return err
	}
	o.base.DynamoVersion = o.DynamoVersion
	o.engine = simulate.DefaultEngine()
	if o.EngineProfile != "" {
		data, err := cmdutil.ReadInputLimit(o.IO.In, o.EngineProfile, "--engine-profile", 64<<20)
		if err != nil {
			return err
		}
		p, err := dynosim.ParseTimingProfile(bytes.NewReader(data), o.EngineProfile)
		if err != nil {
			return cmdutil.FlagErrorf("--engine-profile: %v", err)
		}
		// Say which figures the profile gave, and which stay the built-in
		// approximation.
		builtin := []string{"KV transfer per block"}
		if p.PrefillTokensPerSecondPerGPU > 0 {
			o.engine.PrefillTokensPerSecondPerGPU = p.PrefillTokensPerSecondPerGPU
		} else {
			builtin = append([]string{"prefill tok/s"}, builtin...)
		}
		if p.DecodeStepMs > 0 {
			o.engine.DecodeStepMs, o.engine.DecodeStepMsPerSequence = p.DecodeStepMs, p.DecodeStepMsPerSequence
		} else {
			builtin = append(builtin[:len(builtin)-1:len(builtin)-1], "decode step", builtin[len(builtin)-1])
		}
		o.engine.Source = p.Source + "; built-in defaults for " + strings.Join(builtin, ", ")
		if c := p.CapacityBlocks(max(o.BlockSize, 16)); p.KvCapacityBlocks > 0 || (p.KvCapacityTokens > 0 && c > 0) {
			o.engine.KvCapacityBlocks = c
			o.engine.KvCapacitySource = "--engine-profile " + o.EngineProfile
		}
		if err := o.engine.Validate(); err != nil {
			return cmdutil.FlagErrorf("--engine-profile %s: %v", o.EngineProfile, err)
		}
	}
	if o.KvCapacity > 0 {
		o.engine.KvCapacityBlocks = o.KvCapacity
		o.engine.KvCapacitySource = "--kv-capacity-blocks"
	}
	fp, err := parseFailOn(o.FailOn)
	if err != nil {
		return err
	}
	o.failOn = fp
	if o.SLO != "" {
		slos, err := simulate.ParseSLOs(o.SLO)
		if err != nil {
			return cmdutil.FlagErrorf("%v", err)
		}
		o.slos = slos
	}
	if fp.slo && len(o.slos) == 0 {
		return cmdutil.FlagErrorf("--fail-on slo needs objectives: give --slo, e.g. --slo ttft=2s,e2e=30s")
	}
	return nil
}

// failPolicy is --fail-on: what about the deployment as it is makes the
// exit code 2.
type failPolicy struct {
	// share is the failed share above which the exit is 2 (0: any failed
	// request); <0: failed requests alone do not.
	share float64
	// saturated: a stage at or above the saturation threshold; slo: an
	// objective of --slo missed.
	saturated, slo bool
}

// failOnHelp is what --fail-on accepts, for messages.
const failOnHelp = "any (one failed request), none, a share with its percent sign such as 1%, saturated (a stage at or above 85% of its capacity), slo (an objective of --slo missed), or several of them comma-separated (any,slo)"

// parseFailOn reads --fail-on: a comma-separated list of conditions.
func parseFailOn(s string) (failPolicy, error) {
	fp := failPolicy{share: -1}
	bad := func(format string, a ...any) (failPolicy, error) {
		return failPolicy{}, cmdutil.FlagErrorf("--fail-on %q: %s; use %s", s, fmt.Sprintf(format, a...), failOnHelp)
	}
	parts := strings.Split(s, ",")
	for _, part := range parts {
		p := strings.ToLower(strings.TrimSpace(part))
		switch p {
		case "any", "":
			if p == "" && len(parts) > 1 {
				return bad("an empty condition")
			}
			fp.share = 0
			continue
		case "none", "never":
			if len(parts) > 1 {
				return bad("none cannot be combined with another condition")
			}
			return failPolicy{share: -1}, nil
		case "saturated", "saturation":
			fp.saturated = true
			continue
		case "slo", "slos":
			fp.slo = true
			continue
		}
		v, isShare := strings.CutSuffix(p, "%")
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		switch {
		case err != nil:
			return bad("%q is not a condition", strings.TrimSpace(part))
		case !isShare:
			return bad("%s is a number without its unit: write a share of failed requests as %s%%", v, v)
		case math.IsNaN(f) || f < 0 || f > 100:
			return bad("%s%% is not a share between 0%% and 100%%", v)
		}
		fp.share = f / 100
	}
	return fp, nil
}

// Validate checks flag combinations.
func (o *Options) Validate() error {
	if err := o.Output.Validate(); err != nil {
		return err
	}
	switch {
	case o.TraceFile == "" && o.Synthetic == "":
		return cmdutil.FlagErrorf("give the traffic: --trace FILE (Mooncake JSON lines, …) or --synthetic rate=R,isl=N,osl=N,duration=D")
	case o.TraceFile != "" && o.Synthetic != "":
		return cmdutil.FlagErrorf("--trace and --synthetic cannot be combined: give the traffic one way")
	}
	if o.TraceFormat != "auto" {
		if _, err := trace.ParseFormat(o.TraceFormat); err != nil {
			return cmdutil.FlagErrorf("--trace-format: %v", err)
		}
	}
	if err := simulate.ValidateSpeedup(o.Speedup); err != nil {
		return cmdutil.FlagErrorf("%v", err)
	}
	if o.cmd != nil && o.cmd.Flags().Changed("rate") {
		if o.cmd.Flags().Changed("speedup") {
			return cmdutil.FlagErrorf("--rate and --speedup cannot be combined: --rate sets the speedup that gives the trace that rate")
		}
		if !(o.Rate >= simulate.MinRate && o.Rate <= simulate.MaxRate) {
			return cmdutil.FlagErrorf("--rate must be a number of requests per second from 1e-6 to 1e6, got %v", o.Rate)
		}
	}
	if o.Duration < 0 {
		return cmdutil.FlagErrorf("--duration must not be negative, got %s", o.Duration)
	}
	if err := simulate.ValidateDuration(float64(o.Duration) / float64(time.Millisecond)); err != nil {
		return cmdutil.FlagErrorf("%v", err)
	}
	if o.MaxRequests < 0 {
		return cmdutil.FlagErrorf("--max-requests must not be negative")
	}
	if o.TraceBlockSize <= 0 {
		return cmdutil.FlagErrorf("--trace-block-size must be positive, got %d", o.TraceBlockSize)
	}
	if o.BlockSize < 0 {
		return cmdutil.FlagErrorf("--block-size must be positive, got %d", o.BlockSize)
	}
	if o.RecommendRuns < 1 || o.RecommendRuns > 10000 {
		return cmdutil.FlagErrorf("--recommend-max-runs must be from 1 to 10000, got %d", o.RecommendRuns)
	}
	if o.RecommendTime <= 0 {
		return cmdutil.FlagErrorf("--recommend-timeout must be positive, got %s", o.RecommendTime)
	}
	if o.Seeds < 1 || o.Seeds > simulate.MaxSeeds {
		return cmdutil.FlagErrorf("--seeds must be from 1 to %d, got %d", simulate.MaxSeeds, o.Seeds)
	}
	switch o.Progress {
	case "auto", "always", "never":
	default:
		return cmdutil.FlagErrorf("--progress %q: use auto, always or never", o.Progress)
	}
	if err := o.engine.Validate(); err != nil {
		return cmdutil.FlagErrorf("%v", err)
	}
	return o.Sources.Validate()
}

// Run reads the deployment, replays the traffic and prints the comparison.
func (o *Options) Run(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	// Not the one-shot collector settings (cmdutil.TuneGCForOneShot): a
	// replay streams, and most of what it allocates — each request's tokens,
	// hashes and KV events — is garbage at once. Under GOGC 400 the heap grew
	// to five times what was live: 1.2 GB of RSS for 250 MB live on an
	// overloaded aggregated deployment (docs/performance.md).
	// The files first: an output that cannot be written, or that is one of
	// the inputs, fails before the cluster is read and the traffic replayed.
	if err := o.openFiles(); err != nil {
		return err
	}
	defer o.closeFiles()
	b, err := o.load(ctx)
	if err != nil {
		return err
	}
	snap, err := build.Build(b)
	if err != nil {
		return err
	}
	if err := o.scope.Select(ctx, snap, o.inventory); err != nil {
		return err
	}
	if len(snap.Deployments) != 1 {
		names := make([]string, 0, len(snap.Deployments))
		for i := range snap.Deployments {
			names = append(names, snap.Deployments[i].Key())
		}
		first := snap.Deployments[0]
		return cmdutil.FlagErrorf("%s hold %s; name one, e.g. %s", "the sources", cmdutil.ListDeployments(names),
			cmdutil.CommandLine("simulate", o.scope.Source, "-n", first.Namespace, first.Name))
	}
	dep := &snap.Deployments[0]
	if analysis.NotDeployed(dep) {
		// A manifest: no pod, no status, so no worker to route to.
		manifest := "MANIFEST"
		if o.FromFile != "" && o.FromFile != "-" {
			manifest = o.FromFile
		}
		name := dep.Name
		if dep.Namespace != "" {
			name = dep.Key()
		}
		return cmdutil.WithHint(fmt.Errorf("DynamoGraphDeployment %s has no pods and no status: it is a manifest that has not been applied (or a capture without its pods), so there is no worker to replay traffic through", name),
			"To check a manifest before it is applied: kubectl dynamo preflight -f "+manifest+"; simulate it once it runs, or from a capture of it (kubectl dynamo capture)")
	}
	snap.Notes = append(analysis.FreshnessNotes(snap, o.Now()), snap.Notes...)
	kv, kvNotes := o.kvSets(ctx, b, dep)

	open, info, err := o.opener(dep)
	if err != nil {
		return err
	}
	progress := o.progress()
	so := simulate.Options{
		Snapshot: snap, Deployment: dep, Base: o.base, KV: kv, Variants: o.variants, Engine: o.engine,
		Open: open, Trace: info, Speedup: o.Speedup, Rate: o.Rate, DurationMs: float64(o.Duration) / float64(time.Millisecond),
		MaxRequests: o.MaxRequests, Progress: progress, ProgressEvery: 256, SLOs: o.slos,
	}
	r, err := o.runSeeds(ctx, so)
	if progress != nil {
		progress(simulate.Progress{Done: true, VariantIndex: -1})
	}
	if err != nil {
		return simErr(err)
	}
	r.Assumptions = append(r.Assumptions, kvNotes...)
	if o.Recommend {
		if err := o.recommend(ctx, so, r, b, dep); err != nil {
			return simErr(err)
		}
	}
	if o.KvCapacity > 0 && !slices.ContainsFunc(r.KvCapacity, func(c simulate.PoolCapacity) bool { return c.Source == "--kv-capacity-blocks" }) {
		r.Assumptions = append(r.Assumptions, fmt.Sprintf("--kv-capacity-blocks %d changes nothing: every worker's card publishes its total_kv_blocks, which the simulation uses", o.KvCapacity))
	}
	notes := snapNotes(snap, dep)
	if o.export != nil {
		if err := o.exportDynoSim(dep, r); err != nil {
			return err
		}
	}
	if o.plot != nil {
		if err := o.plot.Write(func(w io.Writer) error { return plot.SVG(w, r) }); err != nil {
			return err
		}
	}
	if err := o.print(r, notes); err != nil {
		return err
	}
	return o.exit(r)
}

// recommend searches the smallest change that meets the goal, under the
// traffic as the report replayed it, and writes it as a DGD patch.
func (o *Options) recommend(ctx context.Context, so simulate.Options, r *simulate.Report, b *raw.Bundle, dep *model.Deployment) error {
	ctx, cancel := context.WithTimeout(ctx, o.RecommendTime)
	defer cancel()
	so.Speedup, so.Rate = r.Trace.Speedup, 0
	so.Base.Seed = r.Seed
	var progress func(simulate.RecommendProgress)
	if p := o.progressAs("recommend run"); p != nil {
		progress = func(rp simulate.RecommendProgress) {
			pp := rp.Progress
			pp.Variant = rp.Candidate
			pp.VariantIndex, pp.Variants = rp.Run-1, rp.MaxRuns
			p(pp)
		}
		defer p(simulate.Progress{Done: true, VariantIndex: -1})
	}
	rec, err := simulate.Recommend(ctx, so, simulate.RecommendOptions{MaxRuns: o.RecommendRuns}, progress)
	if err != nil {
		return err
	}
	if rec.Recommended != nil {
		patch, notes, err := dgdPatch(b, dep, rec.Recommended)
		if err != nil {
			return err
		}
		rec.Patch = patch
		r.Assumptions = append(r.Assumptions, notes...)
	}
	r.Recommendation = rec
	return nil
}

// runSeeds runs the simulation once, or under --seeds consecutive seeds
// (synthetic traffic drawn again under each) and merges their spread.
func (o *Options) runSeeds(ctx context.Context, so simulate.Options) (*simulate.Report, error) {
	if o.Seeds <= 1 {
		return simulate.Run(ctx, so)
	}
	runs := make([]*simulate.Report, 0, o.Seeds)
	progress := so.Progress
	for i := range o.Seeds {
		seed := o.Seed + uint64(i)
		s := so
		s.Base.Seed, s.Base.SeedGiven = seed, true
		if o.Synthetic != "" {
			s.Open = func() (trace.Reader, error) { return trace.Synthetic(o.Synthetic, seed) }
		}
		if progress != nil {
			s.Progress = func(p simulate.Progress) {
				p.Variant = fmt.Sprintf("%s (seed %d, %d of %d)", p.Variant, seed, i+1, o.Seeds)
				progress(p)
			}
		}
		r, err := simulate.Run(ctx, s)
		if err != nil {
			return nil, err
		}
		runs = append(runs, r)
	}
	return simulate.MergeSeeds(runs)
}

func simErr(err error) error {
	var ie *explain.InputError
	if errors.As(err, &ie) && ie.Hint != "" {
		return cmdutil.WithHint(err, ie.Hint)
	}
	var le *trace.LineError
	if errors.As(err, &le) {
		return cmdutil.WithHint(fmt.Errorf("the trace: %w", err), "Check --trace-format and --trace-block-size against the file (docs/commands/simulate.md lists the formats)")
	}
	if errors.Is(err, simulate.ErrNoTrace) {
		return cmdutil.WithHint(err, "Give a trace with at least one request, or --synthetic")
	}
	return err
}

func snapNotes(s *model.Snapshot, dep *model.Deployment) []model.Note {
	var out []model.Note
	for _, n := range s.Notes {
		if n.Deployment == "" || n.Deployment == dep.Key() {
			out = append(out, n)
		}
	}
	return out
}

// kvSets are the KV contents the simulation starts from: the capture's
// events, or the live frontend's placements stream; cold on --cold or when
// neither is available (with a note).
func (o *Options) kvSets(ctx context.Context, b *raw.Bundle, dep *model.Deployment) ([]explain.EventSet, []string) {
	if o.Cold {
		return nil, []string{"KV caches start empty (--cold)"}
	}
	if o.live == nil {
		sets := explain.BundleEventSets(b, dep)
		if len(sets) == 0 {
			return nil, []string{"KV caches start empty: the capture holds no KvEvents for " + dep.Key()}
		}
		return sets, nil
	}
	if o.Sources.NoFrontend {
		return nil, []string{"KV caches start empty: --no-frontend"}
	}
	fo := frontend.Options{API: o.live.Kube, HTTPClient: o.live.HTTPClient, Timeout: o.KVTimeout, Now: o.live.Now, PlacementTimeout: o.KVTimeout}
	var target *frontend.Target
	if o.live.FrontendURL != "" {
		target = &frontend.Target{Namespace: dep.Namespace, Deployment: dep.Name, URL: o.live.FrontendURL}
	} else {
		targets, _ := frontend.Targets(b.Objects)
		for i := range targets {
			if targets[i].Namespace == dep.Namespace && targets[i].Deployment == dep.Name {
				target = &targets[i]
				break
			}
		}
	}
	if target == nil {
		return nil, []string{"KV caches start empty: no frontend Service found for " + dep.Key() + " (pass --frontend-url)"}
	}
	ps, err := fo.ReadPlacements(ctx, *target)
	if err != nil {
		return nil, []string{"KV caches start empty: " + err.Error()}
	}
	return explain.PlacementEventSets(ps, dep), nil
}

// opener returns how to open the traffic once per variant, and its description.
func (o *Options) opener(dep *model.Deployment) (func() (trace.Reader, error), simulate.TraceInfo, error) {
	if o.Synthetic != "" {
		if _, err := trace.Synthetic(o.Synthetic, o.Seed); err != nil {
			return nil, simulate.TraceInfo{}, cmdutil.FlagErrorf("--synthetic: %v", err)
		}
		return func() (trace.Reader, error) { return trace.Synthetic(o.Synthetic, o.Seed) },
			simulate.TraceInfo{Source: o.Synthetic, Format: string(trace.SyntheticFormat)}, nil
	}
	// The trace was opened once (openFiles): a file is read from its one
	// descriptor by the sniff and by every variant, standard input and
	// process substitution from the copy read then.
	in := o.trace
	var format trace.Format
	if o.TraceFormat == "auto" {
		peek, _ := bufio.NewReaderSize(in.NewReader(), 64<<10).Peek(64 << 10)
		f, err := trace.Detect(peek)
		if err != nil {
			return nil, simulate.TraceInfo{}, cmdutil.WithHint(fmt.Errorf("--trace %s: %w", o.TraceFile, err), "Name the format with --trace-format "+formatNames())
		}
		format = f
	} else {
		f, _ := trace.ParseFormat(o.TraceFormat)
		format = f
	}
	topts := trace.Options{TraceBlockSize: o.TraceBlockSize}
	if format == trace.Texts {
		tok, err := o.tokenizer(dep)
		if err != nil {
			return nil, simulate.TraceInfo{}, err
		}
		topts.Tokenize = func(s string) ([]uint32, error) { return tok.Encode(s, true) }
	}
	info := simulate.TraceInfo{Source: o.TraceFile, Format: string(format)}
	if format == trace.Mooncake || format == trace.MooncakeDelta || format == trace.DynamoRequestTrace {
		info.TraceBlockSize = o.TraceBlockSize
	}
	return func() (trace.Reader, error) { return trace.Open(in.NewReader(), format, topts) }, info, nil
}

// openFiles opens the trace once and checks the output files, before the run:
// an output may be neither an input nor the other output, nor anything but a
// regular file or a new path in an existing directory.
func (o *Options) openFiles() error {
	if o.TraceFile != "" {
		in, err := fileio.OpenLimits(o.IO.In, o.TraceFile, "--trace", maxTraceFileBytes, cmdutil.MaxInputFileBytes)
		if err != nil {
			return cmdutil.WithHint(err, "Give the path of a trace file (JSON lines, optionally gzipped), - for standard input, or <(…)")
		}
		o.trace = in
	}
	inputs := []fileio.Named{{What: "--from-file", Path: o.FromFile}, {What: "--trace", Path: o.TraceFile}, {What: "--engine-profile", Path: o.EngineProfile}, {What: "--tokenizer", Path: o.Tokenizer}}
	if o.Plot != "" {
		out, err := fileio.NewOutput(o.Plot, "--plot", append(inputs, fileio.Named{What: "--export-dynosim", Path: o.ExportDynoSim})...)
		if err != nil {
			return err
		}
		o.plot = out
	}
	if o.ExportDynoSim != "" {
		others := append(slices.Clone(inputs), fileio.Named{What: "--plot", Path: o.Plot})
		out, err := fileio.NewOutput(o.ExportDynoSim, "--export-dynosim", others...)
		if err != nil {
			return err
		}
		o.export = out
		for i := range o.variants {
			// Each variant's spec beside it: checked as the file itself is.
			p := variantPath(o.ExportDynoSim, i+1)
			out, err := fileio.NewOutput(p, fmt.Sprintf("--export-dynosim (variant %d: %s)", i+1, p), append(others, fileio.Named{What: "--export-dynosim", Path: o.ExportDynoSim})...)
			if err != nil {
				return err
			}
			o.variantExports = append(o.variantExports, out)
		}
	}
	return nil
}

func (o *Options) closeFiles() {
	if o.trace != nil {
		_ = o.trace.Close()
	}
}

func (o *Options) tokenizer(dep *model.Deployment) (*tokenizer.Tokenizer, error) {
	ref, resolve := o.Tokenizer, tokenizer.Resolve
	if ref == "" {
		for _, w := range dep.Workers {
			for _, in := range w.Instances {
				if in.Model != "" {
					ref = in.Model
				}
			}
		}
		if ref == "" {
			return nil, cmdutil.FlagErrorf("a texts trace needs a tokenizer: no worker card names the model; pass --tokenizer tokenizer.json")
		}
		// A model name from a worker card is cluster data: a cache id, never a path.
		resolve = tokenizer.ResolveModelID
	}
	src, err := resolve(ref, o.Getenv)
	if err != nil {
		return nil, cmdutil.WithHint(fmt.Errorf("tokenize the trace with %s: %w", ref, err), "Pass --tokenizer PATH/tokenizer.json, or give a tokens trace")
	}
	return tokenizer.Load(src.Path)
}

// exportDynoSim writes the deployment as it is, and each variant to a file
// of its own (variantPath), as DynoSim specs: the traffic as replayed
// (--synthetic as DynoSim's synthetic source, a trace file with its speedup,
// --duration as the run's end), and in each file's header what DynoSim
// cannot carry.
func (o *Options) exportDynoSim(dep *model.Deployment, r *simulate.Report) error {
	write := func(out *fileio.Output, d *model.Deployment, variant string, knobs explain.Knobs, extra []string) error {
		sc, notes := dynosim.ScenarioFromDeployment(d)
		sc.Notes = append(slices.Clone(notes), extra...)
		sc.Variant = variant
		sc.Hardware = o.Hardware
		sc.Seed = o.Seed
		applyKnobs(&sc, o.base.Knobs)
		applyKnobs(&sc, knobs)
		ts := dynosim.TraceSettings{Format: r.Trace.Format, TraceBlockSize: r.Trace.TraceBlockSize, Speedup: r.Trace.Speedup, Requests: o.MaxRequests,
			MaxVirtualSeconds: r.Trace.DurationLimitMs / 1000}
		switch {
		case o.Synthetic != "":
			if spec, err := trace.ParseSynthetic(o.Synthetic); err == nil {
				ts.Synthetic = &dynosim.SyntheticTraffic{Rate: spec.Rate, ISLMin: spec.ISL.Min, ISLMax: spec.ISL.Max, OSLMin: spec.OSL.Min, OSLMax: spec.OSL.Max,
					PrefixShare: spec.PrefixShare, Prefixes: spec.Prefixes, Requests: spec.Requests, DurationSeconds: spec.Duration.Seconds()}
			}
		case o.TraceFile != "" && o.TraceFile != "-":
			ts.Path = o.TraceFile
		default:
			sc.Notes = append(sc.Notes, "traffic: the trace came from standard input, which the spec cannot name: set traffic.source.paths")
		}
		sc.Trace = ts
		if err := out.Write(func(w io.Writer) error { return dynosim.Export(w, sc) }); err != nil {
			return cmdutil.WithHint(err, "docs/commands/simulate.md says what DynoSim can and cannot run")
		}
		return nil
	}
	if err := write(o.export, dep, "", explain.Knobs{}, nil); err != nil {
		return err
	}
	for i, v := range o.variants {
		d, knobs, notes, err := v.Deployment(dep)
		if err != nil {
			return err
		}
		if err := write(o.variantExports[i], d, v.Spec, knobs, notes); err != nil {
			return fmt.Errorf("--variant %q: %w", v.Spec, err)
		}
	}
	return nil
}

// applyKnobs lays router what-ifs over a scenario's router mode and
// configuration.
func applyKnobs(sc *dynosim.Scenario, k explain.Knobs) {
	if k.RouterMode != nil {
		sc.RouterMode = string(*k.RouterMode)
	}
	set := func(dst *float64, src *float64) {
		if src != nil {
			*dst = *src
		}
	}
	cfg := &sc.RouterConfig
	set(&cfg.OverlapScoreCredit, k.OverlapScoreCredit)
	set(&cfg.OverlapScoreCreditDecay, k.OverlapScoreCreditDecay)
	set(&cfg.PrefillLoadScale, k.PrefillLoadScale)
	set(&cfg.DecodeActiveRequestWeight, k.DecodeActiveRequestWeight)
	set(&cfg.RouterTemperature, k.Temperature)
}

// variantPath is where --export-dynosim writes variant i's spec (1-based):
// dynosim.yaml → dynosim.variant-1.yaml.
func variantPath(path string, i int) string {
	ext := filepath.Ext(path)
	return fmt.Sprintf("%s.variant-%d%s", strings.TrimSuffix(path, ext), i, ext)
}

// progress returns the progress reporter: a line on stderr redrawn in place
// (auto: only when stderr is a terminal), at most ten times a second, with
// the variant's requests done out of its total and the replay's speed.
func (o *Options) progress() func(simulate.Progress) { return o.progressAs("variant") }

// progressAs is progress with the runs called what (variant, recommend run).
func (o *Options) progressAs(what string) func(simulate.Progress) {
	switch {
	case o.Progress == "never", o.Progress == "auto" && !o.IO.IsStderrTTY():
		return nil
	}
	// The line is redrawn with a carriage return and erase-line, which the
	// output boundary (ErrOut) would print escaped: write to the stream under
	// it, with the variant's name escaped.
	w := o.IO.ErrOut
	if sw, ok := w.(*termsafe.Writer); ok {
		w = sw.Underlying()
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	shown := false
	variant := ""
	var start, last time.Time
	return func(p simulate.Progress) {
		if p.VariantIndex < 0 {
			if shown {
				fmt.Fprint(w, "\r\033[K")
			}
			return
		}
		t := now()
		if key := fmt.Sprintf("%d %s", p.VariantIndex, p.Variant); key != variant {
			variant, start = key, t
		} else if !p.Done && t.Sub(last) < 100*time.Millisecond {
			return
		}
		last, shown = t, true
		done := count(p.Requests)
		if p.Total > 0 {
			done = fmt.Sprintf("%s/%s requests (%s)", done, count(p.Total), pct(float64(p.Requests)/float64(p.Total)))
		} else {
			done += " requests"
		}
		if sec := t.Sub(start).Seconds(); sec > 0 {
			done += fmt.Sprintf(", %s/s", count(int(float64(p.Requests)/sec)))
		}
		of := "/"
		if what != "variant" {
			of = " of at most " // a search stops when it has its answer
		}
		fmt.Fprintf(w, "\r\033[Ksimulate: %s %d%s%d %s: %s, %s of traffic", what, p.VariantIndex+1, of, p.Variants, termsafe.Escape(p.Variant), done, fmtDur(p.VirtualMs))
	}
}

// exit is 2 when the deployment as it is meets a --fail-on condition: more
// failed requests than the share allows, or a saturated stage.
func (o *Options) exit(r *simulate.Report) error {
	if len(r.Variants) == 0 {
		return nil
	}
	v := r.Variants[0]
	var why []string
	if fp := o.failOn; fp.share >= 0 && v.Failed > 0 && (fp.share == 0 || float64(v.Failed)/float64(max(v.Requests, 1)) > fp.share) {
		why = append(why, fmt.Sprintf("fails %s of %s requests (%s)", count(v.Failed), count(v.Requests), pct(float64(v.Failed)/float64(v.Requests))))
	}
	if o.failOn.slo && !v.SLOsMet {
		var missed []string
		for _, s := range v.SLOs {
			if !s.Met {
				missed = append(missed, fmt.Sprintf("%s: %s breaches, %s allowed", s.SLO, count(s.Breaches), count(s.Allowed)))
			}
		}
		why = append(why, "misses "+strings.Join(missed, "; "))
	}
	if o.failOn.saturated && v.QueueDominated {
		why = append(why, fmt.Sprintf("saturates (a stage at or above %s of its capacity; to be stable, slow the traffic ×%.2f or add capacity)", pctAny(r.SaturationThreshold), v.SlowDown))
	}
	if len(why) == 0 {
		return nil
	}
	msg := fmt.Sprintf("the deployment as it is %s: --fail-on %s, exit code 2", strings.Join(why, " and "), o.FailOn)
	if len(why) == 1 && strings.HasSuffix(why[0], ")") && strings.HasPrefix(why[0], "fails ") {
		// One reason, failed requests: the share and the flag in one parenthesis.
		msg = fmt.Sprintf("the deployment as it is %s; --fail-on %s, exit code 2)", strings.TrimSuffix(why[0], ")"), o.FailOn)
	}
	if !o.Output.IsTable() {
		msg = ""
	}
	return &cmdutil.ResultError{Code: cmdutil.ExitFindings, Message: msg}
}
