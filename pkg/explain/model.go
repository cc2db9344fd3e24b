package explain

import (
	"time"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// APIVersion and Kind identify a RouteExplanation document (-o json|yaml).
const (
	APIVersion = "kubectl-dynamo.io/v1alpha1"
	Kind       = "RouteExplanation"
)

// Explanation is the dry run of one request through Dynamo's router: the
// request as the router hashes it, every prefill and decode candidate with its
// cost terms, the picks (or tie sets), the KV-transfer constraint derived from
// the prefill pick, and the verdict. It is plain data: the CLI printers and the
// dashboard read it, and every number in it comes from pkg/routecore.
type Explanation struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// Context is the kubeconfig context or the capture file.
	Context    string `json:"context,omitempty"`
	Deployment string `json:"deployment"`
	Namespace  string `json:"namespace"`
	// Model is the served model name from the worker cards, when known.
	Model string `json:"model,omitempty"`
	// Dynamo is the Dynamo release the dry run follows and how it was told.
	Dynamo *model.DynamoRelease `json:"dynamo,omitempty"`
	// Mode is how the request is served: disaggregated, aggregated or bypassed
	// (conditional disaggregation ran prefill on the decode worker).
	Mode routecore.DisaggMode `json:"mode"`
	// Summary is one sentence saying what happens to the request.
	Summary string      `json:"summary"`
	Request RequestInfo `json:"request"`
	// Router is the configuration the dry run used.
	Router RouterInfo `json:"router"`
	// Conditional is the conditional-disaggregation decision, when it ran.
	Conditional        *routecore.ConditionalDecision `json:"conditional,omitempty"`
	ConditionalSkipped string                         `json:"conditionalSkipped,omitempty"`
	// Prefill is the remote-prefill selection (absent in aggregated mode).
	Prefill *Stage `json:"prefill,omitempty"`
	// Transfer is the KV-transfer constraint derived from the prefill pick.
	Transfer *Transfer `json:"transfer,omitempty"`
	// Decode is the decode selection (the only stage in aggregated mode).
	Decode  *Stage  `json:"decode,omitempty"`
	Verdict Verdict `json:"verdict"`
	// Alternatives are the outcomes of every prefill pick production could make
	// when the prefill pick is random (a tie at temperature 0, or sampling).
	Alternatives []MatrixRow `json:"alternatives,omitempty"`
	// Matrix is the decode outcome for every eligible prefill candidate
	// (--all-prefill), in canonical order.
	Matrix []MatrixRow `json:"matrix,omitempty"`
	// Excluded are workers that were not candidates at all, and why (pod not
	// ready, nothing published, --exclude-worker, --domain-down).
	Excluded []Excluded `json:"excluded,omitempty"`
	// Sources say where each input came from; Assumptions what the dry run
	// assumed where it could not see; Notes carry the collection's notes.
	Sources     []Source     `json:"sources"`
	Assumptions []string     `json:"assumptions,omitempty"`
	Notes       []model.Note `json:"notes,omitempty"`
}

// RequestInfo is the request as the router sees it.
type RequestInfo struct {
	TokenCount int `json:"tokenCount"`
	BlockSize  int `json:"blockSize"`
	// Tokenizer says where the token ids came from.
	Tokenizer      string `json:"tokenizer"`
	LoraName       string `json:"loraName,omitempty"`
	CacheNamespace string `json:"cacheNamespace,omitempty"`
	Eagle          bool   `json:"eagle,omitempty"`
	// MultimodalObjects counts the request's distinct multimodal objects.
	MultimodalObjects int `json:"multimodalObjects,omitempty"`
	// MmScheme says how the multimodal objects entered the block hashes:
	// "pad-value" (placeholders filled with each object's pad value, Dynamo
	// #10328, 1.3 and later) or "mm-hash" (mm_hashes appended to the block
	// bytes: releases before, and any per-block block_mm_infos input). Empty
	// for a text request.
	MmScheme routecore.MmScheme `json:"mmScheme,omitempty"`
	// RoutingTokenCount is, under the pad-value scheme, the length of the
	// routing tokens the router hashed: TokenCount zero-padded to a whole
	// block. The router takes it as the request's ISL.
	RoutingTokenCount int `json:"routingTokenCount,omitempty"`
	// Constraints are the user's routing constraints (nvext.routing_constraints).
	Constraints routecore.RoutingConstraints `json:"constraints"`
	// Blocks are the full blocks with their hashes (a partial tail is not hashed).
	Blocks []BlockInfo `json:"blocks"`
}

// BlockInfo is one hashed block; hashes are u64 printed as decimal strings.
type BlockInfo struct {
	Index        int    `json:"index"`
	LocalHash    uint64 `json:"localHash,string"`
	SequenceHash uint64 `json:"sequenceHash,string"`
	// MmHashes are the mm_hashes appended to the block's bytes, in order
	// (the mm-hash scheme).
	MmHashes []string `json:"mmHashes,omitempty"`
	// PadValues are the pad values the block's tokens hold in place of
	// placeholder tokens, in order of first position (the pad-value scheme).
	PadValues []PadValue `json:"padValues,omitempty"`
	// ZeroPadded counts the block's trailing zero tokens that pad the routing
	// tokens to a whole block (the pad-value scheme; the block is hashed).
	ZeroPadded int `json:"zeroPadded,omitempty"`
}

// PadValue is one multimodal object's token in a pad-value block: the pad
// value (1,000,000 + the low 30 bits of the mm_hash) and the object's mm_hash.
type PadValue struct {
	PadValue uint32 `json:"padValue"`
	MmHash   string `json:"mmHash"`
}

// RouterInfo is the router configuration the dry run used.
type RouterInfo struct {
	// Mode is the frontend's router mode (--router-mode / DYN_ROUTER_MODE,
	// default round-robin), resolved exactly as topology resolves it, after the
	// --router-mode what-if. Only kv runs the KV cost model.
	Mode routecore.RouterMode `json:"mode"`
	// ModeSource says where Mode came from (frontend args, env, default, …).
	ModeSource string `json:"modeSource"`
	// Profile is the Dynamo compatibility profile (--dynamo-version).
	Profile routecore.Profile `json:"profile"`
	// Config is the frontend (decode) router config; PrefillConfig the prefill
	// router's (a prefill worker set's router_config, or the frontend config
	// with active-block tracking off).
	Config        routecore.KvRouterConfig `json:"config"`
	PrefillConfig routecore.KvRouterConfig `json:"prefillConfig"`
	// ConfigSource says where Config came from and which flags changed it.
	ConfigSource string `json:"configSource,omitempty"`
	// Hops is the effective configuration of each hop (prefill, decode): whose
	// it is, its mode, indexer and selection policy, and where every
	// non-default value came from.
	Hops       []HopConfig              `json:"hops,omitempty"`
	Thresholds routecore.BusyThresholds `json:"thresholds"`
	// Policy is the DGD's kvTransferPolicy, after --enforcement.
	Policy *model.TransferPolicy `json:"policy,omitempty"`
	// Overrides lists the flags that changed the configuration.
	Overrides []string `json:"overrides,omitempty"`
	// Seed is the seed of the draws (ties and sampling); SeedGiven says whether
	// it was given (--seed) or chosen for this run.
	Seed      uint64 `json:"seed,string"`
	SeedGiven bool   `json:"seedGiven"`
}

// Stage is one router leg: every candidate and what was picked.
type Stage struct {
	// Candidates lists every (worker, dp rank) in canonical order.
	Candidates []Candidate `json:"candidates"`
	// Selected lists the picked worker, or every tie-set member when production
	// would break a tie at random; Pick is the one this run used.
	Selected []string `json:"selected"`
	Pick     string   `json:"pick,omitempty"`
	// Rule is how the pick was made (minimum-cost, softmax-sample, pinned, …).
	Rule routecore.SelectionRule `json:"rule,omitempty"`
	// RandomTie is true when several candidates share the minimum cost:
	// production picks one uniformly at random.
	RandomTie   bool    `json:"randomTie,omitempty"`
	Temperature float64 `json:"temperature"`
	MinCost     float64 `json:"minCost"`
	// Constraints are the routing constraints this leg ran with.
	Constraints routecore.RoutingConstraints `json:"constraints"`
	// ModeExplanation says how a non-KV router mode picks (empty in kv mode).
	ModeExplanation string `json:"modeExplanation,omitempty"`
	// Sita is the SITA size band this leg was confined to (sita_enabled).
	Sita *routecore.SitaBand `json:"sita,omitempty"`
	// Error and ErrorKind are set when the leg failed.
	ErrorKind string `json:"errorKind,omitempty"`
	Error     string `json:"error,omitempty"`
}

// Candidate is one (worker, dp rank) of a stage.
type Candidate struct {
	// Worker is the pod name; InstanceID the published instance (u64).
	Worker     string             `json:"worker"`
	InstanceID routecore.WorkerID `json:"instanceId,string"`
	DpRank     uint32             `json:"dpRank"`
	// Domain is the worker's value of the transfer domain as the router sees it.
	Domain string `json:"domain,omitempty"`
	Node   string `json:"node,omitempty"`
	// OverlapBlocks is the device-tier prefix the worker holds; CachedTokens the
	// effective cached tokens with lower tiers.
	OverlapBlocks float64 `json:"overlapBlocks"`
	CachedTokens  uint64  `json:"cachedTokens"`
	// PrefillBlocks is the prompt-side load after credit; DecodeBlocks the
	// decode-side blocks; Credit the overlap credit in blocks.
	PrefillBlocks float64 `json:"prefillBlocks"`
	DecodeBlocks  float64 `json:"decodeBlocks"`
	Credit        float64 `json:"credit"`
	Cost          float64 `json:"cost"`
	Probability   float64 `json:"probability"`
	// InFlight is the requests in flight a non-KV picker read (power-of-two,
	// least-loaded, device-aware-weighted).
	InFlight uint64 `json:"inFlight,omitempty"`
	Eligible bool   `json:"eligible"`
	// Reason says why an ineligible candidate was excluded.
	Reason     string               `json:"reason,omitempty"`
	ReasonCode routecore.ReasonCode `json:"reasonCode,omitempty"`
	Scored     bool                 `json:"scored"`
	InTieSet   bool                 `json:"inTieSet,omitempty"`
	Selected   bool                 `json:"selected,omitempty"`
	// Terms are every intermediate of the cost formula.
	Terms routecore.CostTerms `json:"terms"`
}

// Transfer is the KV-transfer constraint derived from the prefill pick.
type Transfer struct {
	// PrefillWorker is the pod the derivation was made for.
	PrefillWorker   string                          `json:"prefillWorker"`
	Domain          string                          `json:"domain,omitempty"`
	Value           string                          `json:"value,omitempty"`
	Enforcement     routecore.KvTransferEnforcement `json:"enforcement,omitempty"`
	Weight          *float64                        `json:"weight,omitempty"`
	RequiredTaints  []string                        `json:"requiredTaints,omitempty"`
	PreferredTaints map[string]float64              `json:"preferredTaints,omitempty"`
	Rule            routecore.TransferRule          `json:"rule"`
	Explanation     string                          `json:"explanation"`
	Failed          bool                            `json:"failed,omitempty"`
	// Ignored is true when the router mode's decode pick does not read the
	// derived constraints (every mode but kv).
	Ignored bool `json:"ignored,omitempty"`
}

// Verdict is whether the request is routable and, if not, why and what to do.
type Verdict struct {
	// Outcome is the risk of the routing decision, independent of the router's
	// random draw: routable (every possible pick routes), can-fail (some
	// possible picks fail: FailureProbability between 0 and 1, or FailingPrefill
	// names other landings), fails (every possible pick fails). The fields below
	// describe the pick this run drew (--seed).
	Outcome Outcome `json:"outcome"`
	// Routable is whether the pick this run drew routes.
	Routable bool `json:"routable"`
	// Stage is where it fails (prefill, kv-transfer, decode).
	Stage string `json:"stage,omitempty"`
	// Error is the router's error kind (NoEndpoints, AllEligibleWorkersOverloaded,
	// RoutingConstraintsUnsatisfied, …).
	Error string `json:"error,omitempty"`
	// Message is the router's error text, or a one-line success summary.
	Message string `json:"message"`
	// Cause and Fix explain a failure in deployment terms.
	Cause string `json:"cause,omitempty"`
	Fix   string `json:"fix,omitempty"`
	// DependsOnDraw is true when other equally possible prefill picks give a
	// different outcome (see Explanation.Alternatives).
	DependsOnDraw bool `json:"dependsOnDraw,omitempty"`
	// FailureProbability is the chance production fails this request: the
	// summed probability of the failing prefill picks when the pick is random,
	// else 0 or 1.
	FailureProbability float64 `json:"failureProbability"`
	// FailingPrefill lists the prefill workers whose pick would make the request
	// fail (from Alternatives or the matrix).
	FailingPrefill []string `json:"failingPrefill,omitempty"`
	// ConstraintIgnoredProbability is, in a non-KV router mode, the chance that
	// the decode pick lands on a worker the transfer constraint derived from the
	// prefill pick would have excluded (required) or not preferred (preferred):
	// the non-KV pickers do not read routing constraints.
	ConstraintIgnoredProbability float64 `json:"constraintIgnoredProbability,omitempty"`
	// MayDiffer lists the ways the real router's decision may differ from
	// this one, and why: configured features whose state is not published
	// (custom selection policies, approximate-mode predictions, other frontend
	// replicas' loads, session affinity, a conditional-prefill sidecar, a
	// worker set's own router mode).
	MayDiffer []Divergence `json:"mayDiffer,omitempty"`
}

// Outcome is the risk of a routing decision over every pick the router may
// draw (Verdict.Outcome).
type Outcome string

// Outcomes.
const (
	OutcomeRoutable Outcome = "routable"
	OutcomeCanFail  Outcome = "can-fail"
	OutcomeFails    Outcome = "fails"
)

// MatrixRow is the outcome if remote prefill lands on one prefill candidate.
type MatrixRow struct {
	Prefill     string             `json:"prefill"`
	InstanceID  routecore.WorkerID `json:"instanceId,string"`
	DpRank      uint32             `json:"dpRank"`
	Domain      string             `json:"domain,omitempty"`
	Probability float64            `json:"probability"`
	Routable    bool               `json:"routable"`
	// Error is the failure kind and message when not routable.
	Error string `json:"error,omitempty"`
	// RequiredTaints are the decode constraints derived from this landing.
	RequiredTaints []string `json:"requiredTaints,omitempty"`
	// DecodeSelected are the decode picks (the tie set at temperature 0).
	DecodeSelected []string `json:"decodeSelected,omitempty"`
}

// Excluded is a worker that was not a routing candidate.
type Excluded struct {
	Worker string     `json:"worker"`
	Role   model.Role `json:"role"`
	Reason string     `json:"reason"`
}

// Source says where one input of the dry run came from.
type Source struct {
	// What is the input: workers, tokens, kv-cache, loads, router-config.
	What   string    `json:"what"`
	Detail string    `json:"detail"`
	At     time.Time `json:"at,omitzero"`
}
