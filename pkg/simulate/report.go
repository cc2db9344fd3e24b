package simulate

import (
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// APIVersion and Kind identify a SimulationReport document (-o json|yaml).
// The kind is versioned with the rest of kubectl-dynamo's documents: a field
// is only ever added, never renamed, within one apiVersion.
const (
	APIVersion = "kubectl-dynamo.io/v1alpha1"
	Kind       = "SimulationReport"
)

// Report is the result of one simulation: the same traffic replayed through
// the router model once per variant (the deployment as it is first). It is
// plain data: the table printer, the terminal chart, the SVG plot and -o
// json|yaml all read it.
type Report struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// Context is the kubeconfig context or the capture file.
	Context    string `json:"context,omitempty"`
	Deployment string `json:"deployment"`
	Namespace  string `json:"namespace"`
	Model      string `json:"model,omitempty"`
	// Dynamo is the Dynamo release the simulation follows (the deployment's,
	// or --dynamo-version) and how it was told.
	Dynamo *model.DynamoRelease `json:"dynamo,omitempty"`
	// DomainKey is the transfer domain the per-domain figures are grouped by
	// (the DGD's kvTransferPolicy domain, e.g. zone); "" when the deployment
	// has no topology-aware transfer (one group "-" then).
	DomainKey string `json:"domainKey,omitempty"`
	// Trace describes the traffic replayed.
	Trace TraceInfo `json:"trace"`
	// Engine is the engine model the timings come from (an approximation).
	Engine EngineInfo `json:"engine"`
	// KvCapacity is the prefix-cache capacity the deployment's workers run
	// with (as deployed), per role, capacity and source: a worker's card's
	// total_kv_blocks when it publishes one, else Engine.KvCapacityBlocks.
	KvCapacity []PoolCapacity `json:"kvCapacity,omitempty"`
	// Seed seeds every draw (ties, softmax sampling, synthetic traffic).
	Seed uint64 `json:"seed,string"`
	// Seeds, above 1, is how many runs under consecutive seeds (Seed to
	// Seed + Seeds − 1) VariantResult.Spread summarises; the figures are the
	// first run's.
	Seeds int `json:"seeds,omitempty"`
	// SaturationThreshold is the utilisation from which a stage counts as
	// saturated (VariantResult.Saturation).
	SaturationThreshold float64 `json:"saturationThreshold"`
	// SLOs are the latency objectives (--slo) whose breaches the variants
	// and their domains count.
	SLOs []SLO `json:"slos,omitempty"`
	// Variants are the scenarios, the deployment as it is first.
	Variants []VariantResult `json:"variants"`
	// Recommendation is the --recommend search's outcome.
	Recommendation *Recommendation `json:"recommendation,omitempty"`
	// Assumptions say what the model assumed where it could not see.
	Assumptions []string `json:"assumptions,omitempty"`
}

// TraceInfo describes the replayed traffic.
type TraceInfo struct {
	// Source is the file or the synthetic spec; Format the trace format
	// (mooncake, mooncake-delta, dynamo-request-trace, tokens, texts, synthetic).
	Source string `json:"source"`
	Format string `json:"format"`
	// Requests is how many requests were read and replayed.
	Requests int `json:"requests"`
	// TraceBlockSize is the tokens per hash id of a hash-id trace (0 otherwise);
	// RouterBlockSize the KV block size the router hashes with.
	TraceBlockSize  int `json:"traceBlockSize,omitempty"`
	RouterBlockSize int `json:"routerBlockSize"`
	// Speedup divides the trace's inter-arrival times; TargetRate is the
	// --rate it was derived from (0: given as is).
	Speedup    float64 `json:"speedup"`
	TargetRate float64 `json:"targetRate,omitempty"`
	// DurationLimitMs is --duration: the traffic ends at the last arrival
	// within it (0: the whole trace).
	DurationLimitMs float64 `json:"durationLimitMs,omitempty"`
	// DurationMs is the virtual time from the first arrival to the last
	// completion of the deployment-as-is variant (the drain's end).
	DurationMs float64 `json:"durationMs"`
	// SpanMs is the virtual time from the first arrival to the last (the
	// trace's own span divided by Speedup); RequestRate the requests per
	// second over it, and PromptTokensPerSecond and OutputTokensPerSecond the
	// tokens (0 when every request arrives at once).
	SpanMs                float64 `json:"spanMs"`
	RequestRate           float64 `json:"requestRate"`
	PromptTokensPerSecond float64 `json:"promptTokensPerSecond"`
	OutputTokensPerSecond float64 `json:"outputTokensPerSecond"`
	// InputTokens and OutputTokens are totals over the trace.
	InputTokens  uint64 `json:"inputTokens"`
	OutputTokens uint64 `json:"outputTokens"`
	// Warnings say what in the trace may not replay as it meant (hash ids
	// covering less of a prompt than its input_length at the trace block
	// size).
	Warnings []string `json:"warnings,omitempty"`
}

// EngineInfo is the engine model and where each parameter came from.
type EngineInfo struct {
	// PrefillTokensPerSecond is one GPU's prefill throughput; a worker's is
	// this times its GPUs.
	PrefillTokensPerSecondPerGPU float64 `json:"prefillTokensPerSecondPerGPU"`
	// DecodeStepMs is the time of one decode step (one output token for every
	// active sequence) at batch 1; DecodeStepMsPerSequence adds per active
	// sequence: step = DecodeStepMs + DecodeStepMsPerSequence × active.
	DecodeStepMs            float64 `json:"decodeStepMs"`
	DecodeStepMsPerSequence float64 `json:"decodeStepMsPerSequence"`
	// KvTransferMsPerBlock is the KV transfer time per block (same domain /
	// across domains).
	KvTransferMsPerBlock            float64 `json:"kvTransferMsPerBlock"`
	KvTransferMsPerBlockCrossDomain float64 `json:"kvTransferMsPerBlockCrossDomain"`
	// KvCapacityBlocks is the default KV capacity of a worker (per dp rank)
	// when its runtime config publishes none; KvCapacitySource says where
	// that default came from. Report.KvCapacity is what the workers use.
	KvCapacityBlocks uint64 `json:"kvCapacityBlocks"`
	// Source says where the parameters came from (defaults, a profile file).
	Source           string `json:"source"`
	KvCapacitySource string `json:"kvCapacitySource,omitempty"`
}

// PoolCapacity is the KV capacity of the workers of one role that share a
// capacity and its source.
type PoolCapacity struct {
	// Role is prefill, decode or aggregated.
	Role string `json:"role"`
	// BlocksPerRank is each dp rank's prefix-cache capacity in blocks.
	BlocksPerRank uint64 `json:"blocksPerRank"`
	// Workers and Ranks count the workers and dp ranks with it.
	Workers int `json:"workers"`
	Ranks   int `json:"ranks"`
	// Source is where it came from: KvSourceCards, or the engine model's
	// KvCapacitySource.
	Source string `json:"source"`
	// Modelled is false for decode workers whose caches nothing reads
	// (VariantResult.DecodeCachesModelled): their capacity changes no figure.
	Modelled bool `json:"modelled"`
}

// VariantResult is one scenario's outcome.
type VariantResult struct {
	// Name is how the variant is shown ("as deployed", or its spec).
	Name string `json:"name"`
	// Changes lists what the variant changed, one what-if per entry; Notes
	// what of it changed nothing, and the domain values its added workers
	// make new.
	Changes []string `json:"changes,omitempty"`
	Notes   []string `json:"notes,omitempty"`
	// RouterMode is the frontend router mode the variant ran.
	RouterMode routecore.RouterMode `json:"routerMode"`
	// Enforcement is the transfer enforcement in effect ("required",
	// "preferred", "none").
	Enforcement string `json:"enforcement,omitempty"`

	// Requests = Routed + Failed.
	Requests int `json:"requests"`
	Routed   int `json:"routed"`
	Failed   int `json:"failed"`
	// NoDomainFailed counts the failed requests that have no domain: they
	// failed before any worker was picked (the frontend refused them, the
	// prefill hop found no worker, the prompt was empty). The others count in
	// their prefill landing's DomainResult.Failed.
	NoDomainFailed int `json:"noDomainFailed"`
	// Failures counts failed requests by error kind (NoEndpoints,
	// AllWorkersBusy, KvTransferFailed, …) and stage.
	Failures []FailureCount `json:"failures,omitempty"`
	// WastedPrefills counts failed requests whose prefill ran before the
	// decode hop failed (Dynamo prefills first, then routes decode).
	WastedPrefills int `json:"wastedPrefills"`
	// Disaggregated, Aggregated and Bypassed count routed requests by how
	// they were served.
	Disaggregated int `json:"disaggregated"`
	Aggregated    int `json:"aggregated"`
	Bypassed      int `json:"bypassed"`
	// SameDomainTransfers and CrossDomainTransfers count KV transfers from the
	// prefill worker to the decode worker by whether both share the transfer
	// domain value; UnknownDomainTransfers where either has none.
	SameDomainTransfers    int `json:"sameDomainTransfers"`
	CrossDomainTransfers   int `json:"crossDomainTransfers"`
	UnknownDomainTransfers int `json:"unknownDomainTransfers"`
	// PromptBlocks is the full blocks of every routed prompt; CachedBlocks the
	// blocks the picked (prefill, or aggregated) worker already held;
	// HitRate = CachedBlocks / PromptBlocks.
	PromptBlocks uint64  `json:"promptBlocks"`
	CachedBlocks uint64  `json:"cachedBlocks"`
	HitRate      float64 `json:"hitRate"`
	// EvictedBlocks is blocks evicted by the engine model's LRU.
	EvictedBlocks uint64 `json:"evictedBlocks"`
	// DecodeCachesModelled is false when no decision or prefill reads a
	// decode worker's cache (disaggregation without conditional
	// disaggregation): the transferred blocks are then not stored, and decode
	// workers' cache figures are not computed.
	DecodeCachesModelled bool `json:"decodeCachesModelled"`
	// Saturation is each stage's load against its capacity, for the pool and
	// per domain (empty when every request arrived at once);
	// QueueDominated says that one of them is saturated, so that latencies
	// are mostly waiting and the KV hit rate is depressed by it (a turn
	// arrives before its previous prefill ran); SlowDown is the factor by
	// which the traffic must be slowed for every stage to fall to the
	// threshold (1 when none is above it).
	Saturation     []Saturation `json:"saturation,omitempty"`
	QueueDominated bool         `json:"queueDominated"`
	SlowDown       float64      `json:"slowDown"`
	// SLOs are the objectives' outcomes (Report.SLOs order); SLOsMet says
	// every one is met.
	SLOs    []SLOResult `json:"slos,omitempty"`
	SLOsMet bool        `json:"slosMet"`
	// Spread is the headline figures' spread over the seeds of a multi-seed
	// run (Report.Seeds).
	Spread *VariantSpread `json:"spread,omitempty"`
	// TTFTMs and E2EMs are model estimates (see Engine), over routed requests.
	TTFTMs Percentiles `json:"ttftMs"`
	E2EMs  Percentiles `json:"e2eMs"`
	// Domains are the per-domain figures, in domain-value order.
	Domains []DomainResult `json:"domains"`
	// Workers are the per-worker figures, in pod order.
	Workers []WorkerResult `json:"workers"`
	// Series is the time series (fixed buckets of virtual time).
	Series Series `json:"series"`
}

// FailureCount is how many requests failed with one error at one stage.
type FailureCount struct {
	Stage string `json:"stage"`
	Kind  string `json:"kind"`
	Count int    `json:"count"`
	// Example is the first such error's message.
	Example string `json:"example,omitempty"`
}

// Percentiles summarise a distribution.
type Percentiles struct {
	Count int     `json:"count"`
	Mean  float64 `json:"mean"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P99   float64 `json:"p99"`
	Max   float64 `json:"max"`
}

// LoadStats summarise a load over virtual time: the time-weighted mean, the
// 95th percentile of the sampled values and the peak.
type LoadStats struct {
	Mean float64 `json:"mean"`
	P95  float64 `json:"p95"`
	Peak float64 `json:"peak"`
}

// DomainResult is one transfer-domain value's figures ("-" for workers
// without one).
type DomainResult struct {
	Value          string `json:"value"`
	PrefillWorkers int    `json:"prefillWorkers"`
	DecodeWorkers  int    `json:"decodeWorkers"`
	// PrefillPicks counts requests whose prefill landed here (including those
	// whose decode hop then failed: the prefill ran); DecodePicks routed
	// requests whose decode landed here (an aggregated request counts in
	// both). Failed counts failed requests whose prefill pick landed here (a
	// request failing at the prefill hop has no landing and counts only in the
	// variant's total).
	PrefillPicks int `json:"prefillPicks"`
	DecodePicks  int `json:"decodePicks"`
	Failed       int `json:"failed"`
	// Requests counts the requests that landed here: served by a worker of
	// the domain (the prefill worker, or the one that served it whole), or
	// failed after a prefill pick here. TTFTMs is their first-token times
	// (an estimate), SLOs the objectives over them.
	Requests int         `json:"requests"`
	TTFTMs   Percentiles `json:"ttftMs"`
	SLOs     []SLOResult `json:"slos,omitempty"`
	// PrefillLoad is the in-flight prefills (queued or running) summed over
	// the domain's workers — its prefill workers, and decode or aggregated
	// workers that prefill requests served on one worker (aggregated, or
	// bypassed by conditional disaggregation); DecodeLoad the active decode
	// sequences over its workers.
	PrefillLoad LoadStats `json:"prefillLoad"`
	DecodeLoad  LoadStats `json:"decodeLoad"`
}

// WorkerResult is one worker's figures.
type WorkerResult struct {
	Worker string `json:"worker"`
	Role   string `json:"role"`
	Domain string `json:"domain,omitempty"`
	// Synthetic marks a worker a variant added (decode+N@domain).
	Synthetic bool `json:"synthetic,omitempty"`
	Picks     int  `json:"picks"`
	// Load is in-flight requests (prefill: queued or prefilling; decode:
	// decoding).
	Load LoadStats `json:"load"`
	// CachedBlocksPeak is the most blocks the worker's cache held (0 for a
	// decode worker when VariantResult.DecodeCachesModelled is false).
	CachedBlocksPeak uint64 `json:"cachedBlocksPeak"`
	EvictedBlocks    uint64 `json:"evictedBlocks"`
}

// Series is the time series of a variant: per bucket of virtual time and
// per domain value (in Report.Variants[i].Domains order), what was routed,
// what failed and the mean load.
type Series struct {
	BucketMs float64       `json:"bucketMs"`
	Buckets  []SeriesPoint `json:"buckets"`
}

// SeriesPoint is one bucket.
type SeriesPoint struct {
	StartMs float64 `json:"startMs"`
	// Domains is parallel to VariantResult.Domains.
	Domains []DomainPoint `json:"domains"`
	// NoDomainFailed is the bucket's failed requests that have no domain
	// (VariantResult.NoDomainFailed).
	NoDomainFailed int `json:"noDomainFailed,omitempty"`
}

// DomainPoint is one domain in one bucket: requests whose prefill landed in
// the domain in the bucket, failures, and the time-weighted mean load
// (in-flight prefill requests, active decode sequences).
type DomainPoint struct {
	// Domain is the domain value (DomainResult.Value).
	Domain      string  `json:"domain"`
	Routed      int     `json:"routed"`
	Failed      int     `json:"failed"`
	PrefillLoad float64 `json:"prefillLoad"`
	DecodeLoad  float64 `json:"decodeLoad"`
}
