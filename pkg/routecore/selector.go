package routecore

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
)

// Worker types as Dynamo names them (WORKER_TYPE_PREFILL / WORKER_TYPE_DECODE); any
// other value, including "", is scored as an aggregated worker.
const (
	WorkerTypePrefill    = "prefill"
	WorkerTypeDecode     = "decode"
	WorkerTypeAggregated = "aggregated"
)

// RankLoad is one data-parallel rank's load as the router sees it: its own ledger of
// in-flight work (Dynamo's WorkerLoadProjection) plus the engine-reported KV usage
// that only the overload check reads. A dry run cannot observe the router's ledger
// and must take these numbers from metrics or the user.
type RankLoad struct {
	// ActivePrefillTokens is prompt work routed here and not yet prefilled.
	ActivePrefillTokens uint64 `json:"activePrefillTokens"`
	// ActiveDecodeBlocks is the KV blocks held by in-flight requests.
	ActiveDecodeBlocks uint64 `json:"activeDecodeBlocks"`
	// ActiveRequests is the in-flight request count.
	ActiveRequests uint64 `json:"activeRequests"`
	// KvUsedBlocks is the engine-reported KV usage (overload check only); nil if unknown.
	KvUsedBlocks *uint64 `json:"kvUsedBlocks,omitempty"`
	// DecodeOverloadLatched overrides the decode overload latch. Dynamo latches the
	// decode overload and clears it only once both signals are back under the line,
	// which a snapshot cannot reconstruct; nil derives it from the current values.
	DecodeOverloadLatched *bool `json:"decodeOverloadLatched,omitempty"`
}

// Worker is one routing target with the facts routing reads about it. Loads is keyed
// by dp rank; a rank without an entry has no load projection (Dynamo's has_load is
// false for it) and counts as free for the overload check.
type Worker struct {
	ID WorkerID `json:"id"`
	// Name is an optional human label (pod name) carried into the evidence.
	Name string `json:"name,omitempty"`
	// WorkerType is "prefill", "decode" or "aggregated"; only "decode" changes the
	// formula (the conditional-disaggregation branch).
	WorkerType string        `json:"workerType,omitempty"`
	Runtime    RuntimeConfig `json:"runtime"`
	// Fenced marks a dead or deregistered worker; it is never eligible.
	Fenced bool                `json:"fenced,omitempty"`
	Loads  map[uint32]RankLoad `json:"loads,omitempty"`
	// EffectiveTaints, when set, must be Runtime.EffectiveTaints(): a caller
	// selecting over the same workers many times computes them once (nil:
	// computed on each selection).
	EffectiveTaints []string `json:"-"`
}

// effectiveTaints returns the worker's sorted effective taints.
func (w *Worker) effectiveTaints() []string {
	if w.EffectiveTaints != nil {
		return w.EffectiveTaints
	}
	return w.Runtime.EffectiveTaints()
}

// SharedHitRange is a half-open range [Start, End) of request block positions found
// in the shared (HiCache L3) cache.
type SharedHitRange struct {
	Start uint32 `json:"start"`
	End   uint32 `json:"end"`
}

// OverlapInput is the cache evidence for one request, keyed by candidate, in the
// shape of Dynamo's OverlapSignals plus shared-cache hits. It can be filled from any
// index result. Candidates absent from a map count as 0. Whether a tier map is
// empty matters: when DeviceBlocks, HostBlocks and DiskBlocks are all empty the
// device overlap falls back to EffectiveBlocks (older callers without tier data).
type OverlapInput struct {
	// DeviceBlocks is the radix-tree prefix depth on the device tier.
	DeviceBlocks map[WorkerWithDpRank]uint64 `json:"deviceBlocks,omitempty"`
	// HostBlocks is host-pinned tier blocks beyond the device prefix.
	HostBlocks map[WorkerWithDpRank]uint64 `json:"hostBlocks,omitempty"`
	// DiskBlocks is disk and external tier blocks beyond the device prefix.
	DiskBlocks map[WorkerWithDpRank]uint64 `json:"diskBlocks,omitempty"`
	// EffectiveBlocks is device + host_w·host + disk_w·disk (effective_overlap_blocks).
	EffectiveBlocks map[WorkerWithDpRank]float64 `json:"effectiveBlocks,omitempty"`
	// CachedTokens is round(effective blocks · block size) (effective_cached_tokens).
	CachedTokens map[WorkerWithDpRank]uint64 `json:"cachedTokens,omitempty"`
	// SharedHits are the shared-cache hit ranges; nil means no shared cache.
	SharedHits []SharedHitRange `json:"sharedHits,omitempty"`
	// TreeSizes is blocks held per candidate; only a profile whose ties go to
	// the smallest tree (TieSmallestTreeThenRandom: legacy-v1.1,
	// legacy-tree-size) reads it.
	TreeSizes map[WorkerWithDpRank]uint64 `json:"treeSizes,omitempty"`
}

// AdditionalBlocksRule says how many new KV blocks the request would add on a
// candidate when Request.AdditionalActiveBlocks has no entry for it.
type AdditionalBlocksRule string

const (
	// AdditionalBlocksNone adds nothing (active-block tracking off, or unknown).
	AdditionalBlocksNone AdditionalBlocksRule = ""
	// AdditionalBlocksAllNew adds the request's full-block count floor(ISL/B) on
	// every candidate: with router_assume_kv_reuse=false Dynamo tracks the request
	// under random hashes, so none of its blocks is shared (inferred, §6.2).
	AdditionalBlocksAllNew AdditionalBlocksRule = "all-new"
)

// Request is one routing question: a prompt of ISL tokens and everything that
// restricts or biases where it may go.
type Request struct {
	// ISL is the prompt length in tokens, including a trailing partial block. Must be > 0.
	ISL int `json:"isl"`
	// BlockSize is the KV block size in tokens. Must be > 0.
	BlockSize int          `json:"blockSize"`
	Overlap   OverlapInput `json:"overlap"`
	// AdditionalActiveBlocks is, per candidate, the request blocks not already held
	// by that candidate's active sequences (WorkerLoadProjection.additional_active_blocks).
	AdditionalActiveBlocks map[WorkerWithDpRank]uint64 `json:"additionalActiveBlocks,omitempty"`
	// AdditionalBlocksRule fills candidates missing from AdditionalActiveBlocks.
	AdditionalBlocksRule AdditionalBlocksRule `json:"additionalBlocksRule,omitempty"`
	Constraints          RoutingConstraints   `json:"constraints"`
	// AllowedWorkers restricts routing to these workers; nil allows all.
	AllowedWorkers []WorkerID `json:"allowedWorkers,omitempty"`
	// Pinned forces the worker and rank (direct routing, conditional-disagg bypass).
	Pinned *WorkerWithDpRank `json:"pinned,omitempty"`
	// SessionAffinity is a soft pin (preferred_worker): used if eligible, else ignored.
	SessionAffinity *WorkerWithDpRank    `json:"sessionAffinity,omitempty"`
	Override        RouterConfigOverride `json:"override"`
}

// Rand supplies uniform draws in [0,1). Production code wraps math/rand/v2 (see
// NewRand); tests script the draws (ScriptedRand). routecore never reads a global
// random source.
type Rand interface {
	Float64() float64
}

// SelectionRule names how Decision.Selected was chosen.
type SelectionRule string

const (
	// RuleMinimumCost means t=0 and exactly one candidate has the minimum cost.
	RuleMinimumCost SelectionRule = "minimum-cost"
	// RuleMinimumCostTieRandom means t=0 with several candidates at the minimum; the
	// production router picks among them uniformly at random, so the dry run's pick
	// is one possible outcome (index floor(u·len(TieSet)) in canonical order).
	RuleMinimumCostTieRandom SelectionRule = "minimum-cost-tie-random"
	// RuleMinimumCostTieTreeSize means legacy T=0 tie resolved by smallest tree size.
	RuleMinimumCostTieTreeSize SelectionRule = "minimum-cost-tie-smallest-tree"
	// RuleSoftmaxSample means t>0, sampled from Probability with draw u.
	RuleSoftmaxSample SelectionRule = "softmax-sample"
	// RulePinned means the request pinned the worker; its cost is the raw logit.
	RulePinned SelectionRule = "pinned"
	// RuleSessionAffinity means the request's preferred worker was eligible and used.
	RuleSessionAffinity SelectionRule = "session-affinity"
)

// ReasonCode classifies why a candidate was not eligible, using the names of
// Dynamo's WorkerEligibilityError variants.
type ReasonCode string

// The reason codes, in the order RoutingEligibility::validate_worker_rank checks them
// (WorkerUnavailable: the worker is unknown, only possible for a pinned candidate).
const (
	ReasonWorkerNotAllowed              ReasonCode = "WorkerNotAllowed"
	ReasonWorkerFenced                  ReasonCode = "WorkerFenced"
	ReasonWorkerUnavailable             ReasonCode = "WorkerUnavailable"
	ReasonDpRankUnavailable             ReasonCode = "DpRankUnavailable"
	ReasonRoutingConstraintsUnsatisfied ReasonCode = "RoutingConstraintsUnsatisfied"
	ReasonWorkerOverloaded              ReasonCode = "WorkerOverloaded"
)

// Ineligibility explains why a candidate was excluded.
type Ineligibility struct {
	Code ReasonCode `json:"code"`
	// Text is Dynamo's own message for the reason (WorkerEligibilityError in
	// lib/kv-router/src/scheduling/filter.rs), word for word.
	Text string `json:"text"`
	// Detail is what the port adds to it (which taints are missing, which
	// thresholds tripped); "" when nothing. Full joins both.
	Detail string `json:"detail,omitempty"`
	// MissingTaints lists required taints the worker lacks (RoutingConstraintsUnsatisfied).
	MissingTaints []string `json:"eligMissingTaints,omitempty"`
	// DpStart and DpEnd give the valid ranks [start, end) (DpRankUnavailable).
	DpStart uint32 `json:"dpStart,omitempty"`
	DpEnd   uint32 `json:"dpEnd,omitempty"`
	// Overload says which thresholds tripped on which ranks (WorkerOverloaded).
	Overload *OverloadReport `json:"overload,omitempty"`
}

// Full is Text followed by Detail in parentheses: the reason as explain-route
// shows it.
func (r Ineligibility) Full() string {
	if r.Detail == "" {
		return r.Text
	}
	return r.Text + " (" + r.Detail + ")"
}

// Threshold names one busy threshold in an OverloadTrip.
type Threshold string

// The busy thresholds, named as in LoadThresholdConfig.
const (
	ThresholdActivePrefillTokens     Threshold = "active_prefill_tokens_threshold"
	ThresholdActivePrefillTokensFrac Threshold = "active_prefill_tokens_threshold_frac"
	ThresholdActiveDecodeBlocks      Threshold = "active_decode_blocks_threshold"
)

// OverloadTrip is one threshold crossed on one rank: Value > Limit.
type OverloadTrip struct {
	Threshold Threshold `json:"threshold"`
	// Signal is the load measure compared: active_prefill_tokens, kv_used_blocks,
	// active_decode_blocks or decode_overload_latch.
	Signal string  `json:"signal"`
	Value  float64 `json:"value"`
	Limit  float64 `json:"limit"`
}

// RankOverload is the overload verdict for one dp rank.
type RankOverload struct {
	DpRank     uint32         `json:"dpRank"`
	Overloaded bool           `json:"overloaded"`
	Trips      []OverloadTrip `json:"trips,omitempty"`
}

// OverloadReport is the overload verdict for a worker: overloaded only when every
// declared rank is (KvWorkerMonitor's WorkerLoadState::is_overloaded).
type OverloadReport struct {
	Overloaded bool           `json:"overloaded"`
	Ranks      []RankOverload `json:"ranks,omitempty"`
}

// CostTerms is every intermediate of the cost formula for one candidate, so a
// decision can be explained term by term (DefaultWorkerScorer::worker_logit).
type CostTerms struct {
	// Formula is "prefill" (the normal formula) or "decode-overlap" (the
	// conditional-disaggregation decode branch).
	Formula string `json:"formula"`
	// HasLoad is whether the candidate has a load projection (a Loads entry).
	HasLoad bool `json:"hasLoad"`
	// HasMultiplier is false when the request has no preferred taints.
	HasMultiplier bool `json:"hasMultiplier"`
	// SharedBeyondBlocks is the shared-cache (HiCache L3) hits beyond the device depth.
	SharedBeyondBlocks  uint32  `json:"sharedBeyondBlocks"`
	ActivePrefillTokens uint64  `json:"activePrefillTokens"`
	EffectiveBlocks     float64 `json:"effectiveOverlapBlocks"`
	// DeviceBlocks is the device overlap credited (tier map or effective fallback).
	DeviceBlocks float64 `json:"deviceOverlapBlocks"`
	HostBlocks   float64 `json:"hostOverlapBlocks"`
	DiskBlocks   float64 `json:"diskOverlapBlocks"`
	CachedTokens uint64  `json:"cachedTokens"`
	// DecayFactor is 1/(1+decay·norm), or 1 when decay is off.
	DecayFactor float64 `json:"decayFactor"`
	// CreditBlocks = credit·decay·device + host_w·host + disk_w·disk + shared_mult·shared.
	CreditBlocks float64 `json:"creditBlocks"`
	// RawPrefillTokens and RawPrefillBlocks are the prompt-side load before credit.
	RawPrefillTokens float64 `json:"rawPrefillTokens"`
	RawPrefillBlocks float64 `json:"rawPrefillBlocks"`
	// AdjustedPrefillBlocks is raw − credit, clamped at 0 under ProfileLatest.
	AdjustedPrefillBlocks float64 `json:"adjustedPrefillBlocks"`
	// PrefillCost is scale · adjusted.
	PrefillCost float64 `json:"prefillCost"`
	// DecodeBlocks is active_decode_blocks + additional_active_blocks.
	DecodeBlocks           float64 `json:"decodeBlocks"`
	AdditionalActiveBlocks uint64  `json:"additionalActiveBlocks"`
	ActiveRequests         uint64  `json:"activeRequests"`
	// RequestCost is decode_active_request_weight · active_requests.
	RequestCost float64 `json:"requestCost"`
	// Logit is the cost before the preferred-taint multiplier.
	Logit float64 `json:"logit"`
	// PreferredMatched lists the request's preferred taints the worker has.
	PreferredMatched []string `json:"preferredMatched,omitempty"`
	// PreferredWeightSum is Σ float64(float32(w)) over PreferredMatched.
	PreferredWeightSum float64 `json:"preferredWeightSum"`
	// Multiplier is exp(−tanh(PreferredWeightSum)), or 1 when HasMultiplier is false.
	Multiplier float64 `json:"multiplier"`
	// Cost is Logit · Multiplier (the raw Logit for pinned and affinity picks).
	Cost float64 `json:"cost"`
}

// CandidateEvidence is one (worker, rank) and what happened to it.
type CandidateEvidence struct {
	Candidate  WorkerWithDpRank `json:"candidate"`
	WorkerName string           `json:"workerName,omitempty"`
	WorkerType string           `json:"workerType,omitempty"`
	// Reason is set when Eligible is false.
	Reason *Ineligibility `json:"reason,omitempty"`
	Terms  CostTerms      `json:"terms"`
	// Probability is the chance of being selected: the softmax probability at T>0,
	// 1/len(TieSet) for tie members at T=0, 1 for a pinned or affinity pick.
	Probability float64 `json:"probability"`
	// The flags share one word (the evidence of 10,000 candidates is written on
	// every selection, so its size is its cost).
	Eligible bool `json:"eligible"`
	// Scored is true when Terms were computed (eligible, or the pinned candidate).
	Scored   bool `json:"scored"`
	InTieSet bool `json:"inTieSet,omitempty"`
}

// Decision is the full, explainable outcome of one selection.
type Decision struct {
	Profile ProfileBehavior `json:"profile"`
	Weights ResolvedWeights `json:"weights"`
	// RequestBlocks is ceil(ISL/B).
	RequestBlocks uint64 `json:"requestBlocks"`
	// MinActivePrefillTokens is the decay floor over eligible candidates; it is only
	// computed when prefill tracking is on and decay > 0 (MinActivePrefillComputed).
	MinActivePrefillTokens   uint64 `json:"minActivePrefillTokens"`
	MinActivePrefillComputed bool   `json:"minActivePrefillComputed"`
	// Candidates lists every (worker, rank) in canonical order, eligible or not.
	Candidates []CandidateEvidence `json:"candidates"`
	// MinCost is the smallest cost among scored candidates.
	MinCost float64 `json:"minCost"`
	// TieSet is every scored candidate at MinCost, in canonical order (T=0 only).
	TieSet      []WorkerWithDpRank `json:"tieSet,omitempty"`
	Temperature float64            `json:"temperature"`
	// Draw is the uniform draw used, when DrawUsed.
	Draw     float64          `json:"draw"`
	DrawUsed bool             `json:"drawUsed"`
	Selected WorkerWithDpRank `json:"selected"`
	// SelectedCost is the selected candidate's cost (Dynamo logs it as "logit").
	SelectedCost  float64       `json:"selectedCost"`
	SelectionRule SelectionRule `json:"selectionRule,omitempty"`
	// ErrorKind is the Dynamo error name when selection failed, e.g. "NoEndpoints".
	ErrorKind string `json:"selErrorKind,omitempty"`
}

// Sentinel errors, matching Dynamo's KvSchedulerError variants.
var (
	// ErrNoEndpoints: no candidate is eligible, even ignoring overload.
	ErrNoEndpoints = errors.New("no endpoints available to route work")
	// ErrAllEligibleWorkersOverloaded: some worker would be eligible but for overload.
	ErrAllEligibleWorkersOverloaded = errors.New("all eligible workers are overloaded")
	// ErrPinnedWorkerOverloaded: the pinned worker is overloaded; it is not rerouted.
	ErrPinnedWorkerOverloaded = errors.New("pinned worker is overloaded")
	// ErrPinnedWorkerNotAllowed: the pinned worker is outside the allow-list.
	ErrPinnedWorkerNotAllowed = errors.New("pinned worker is not in allowed worker set")
	// ErrInvalidRequest: the inputs cannot be routed (bad ISL, NaN, duplicate ids, …).
	ErrInvalidRequest = errors.New("invalid routing request")
)

// PinnedWorkerError carries the worker id of a pinned-worker failure. errors.Is
// matches its Kind (ErrPinnedWorkerOverloaded or ErrPinnedWorkerNotAllowed).
type PinnedWorkerError struct {
	Kind     error
	WorkerID WorkerID
}

// Error renders the message Dynamo uses, e.g. "pinned worker 0 is overloaded".
func (e *PinnedWorkerError) Error() string {
	if errors.Is(e.Kind, ErrPinnedWorkerNotAllowed) {
		return fmt.Sprintf("pinned worker %s is not in allowed worker set", e.WorkerID)
	}
	return fmt.Sprintf("pinned worker %s is overloaded", e.WorkerID)
}

// Is reports whether target is the error's Kind.
func (e *PinnedWorkerError) Is(target error) bool { return target == e.Kind }

// Unwrap returns the Kind sentinel.
func (e *PinnedWorkerError) Unwrap() error { return e.Kind }

// Select scores every candidate and picks one the way Dynamo's default worker
// selector does (select_worker_with_policy → pick_default_worker in
// scheduling/selector/{mod,default}.rs). It pulls at most one draw from r, and only
// when the outcome is random (a T=0 tie or T>0). The Decision is filled as far as
// possible even when an error is returned, so failures can be explained too.
func Select(cfg KvRouterConfig, th BusyThresholds, workers []Worker, req Request, r Rand) (Decision, error) {
	return (&Selector{}).Select(cfg, th, workers, req, r)
}

// Selector runs selections exactly like Select and SelectWithDraw but keeps its
// working memory from one call to the next, for callers that select many times
// in a row (what-if loops, the all-prefill matrix, a live dashboard): with 10,000
// candidates the per-candidate evidence alone is several megabytes, and
// allocating it afresh each time doubles the cost of a selection.
//
// The Decision a Selector returns shares its Candidates array with the Selector:
// it stays valid until the next call on the same Selector; copy it to keep it
// longer. A Selector is not safe for concurrent use (a large selection runs on
// several goroutines of its own, but returns only when they have finished). The
// zero value is ready.
type Selector struct {
	// Go, when set, lets a large selection (from 4,096 workers or candidates)
	// split its per-candidate work across up to GOMAXPROCS goroutines, which
	// routecore starts only through Go (typically func(f func()) { go f() }).
	// The decision is bit-for-bit the same with or without it.
	Go func(f func())

	cands []CandidateEvidence
	costs []float64
	vis   []selVisit
}

// Select is Select with reused memory (see Selector).
func (sel *Selector) Select(cfg KvRouterConfig, th BusyThresholds, workers []Worker, req Request, r Rand) (Decision, error) {
	s, err := newSelState(sel, cfg, th, workers, &req)
	if err != nil {
		return s.decision, err
	}
	if err := s.score(); err != nil {
		return s.decision, err
	}
	if !s.needsDraw() {
		return s.pick(0)
	}
	if r == nil {
		return s.decision, fmt.Errorf("%w: the outcome is random (tie or temperature > 0) but no Rand was supplied", ErrInvalidRequest)
	}
	return s.pick(r.Float64())
}

// SelectWithDraw is the pure form of Select: the uniform draw u in [0,1) is given
// and always recorded (it is ignored when the outcome is not random).
func SelectWithDraw(cfg KvRouterConfig, th BusyThresholds, workers []Worker, req Request, u float64) (Decision, error) {
	return (&Selector{}).SelectWithDraw(cfg, th, workers, req, u)
}

// SelectWithDraw is SelectWithDraw with reused memory (see Selector).
func (sel *Selector) SelectWithDraw(cfg KvRouterConfig, th BusyThresholds, workers []Worker, req Request, u float64) (Decision, error) {
	s, err := newSelState(sel, cfg, th, workers, &req)
	if err != nil {
		return s.decision, err
	}
	if err := s.score(); err != nil {
		return s.decision, err
	}
	return s.pick(u)
}

// selErrorKind names a selection error the way Dynamo's KvSchedulerError does.
func selErrorKind(err error) string {
	switch {
	case errors.Is(err, ErrPinnedWorkerOverloaded):
		return "PinnedWorkerOverloaded"
	case errors.Is(err, ErrPinnedWorkerNotAllowed):
		return "PinnedWorkerNotAllowed"
	case errors.Is(err, ErrAllEligibleWorkersOverloaded):
		return "AllEligibleWorkersOverloaded"
	case errors.Is(err, ErrNoEndpoints):
		return "NoEndpoints"
	case errors.Is(err, ErrInvalidConfig), errors.Is(err, ErrInvalidOverride):
		return "InvalidConfig"
	}
	return "InvalidRequest"
}

// MaxCandidates bounds the (worker, rank) pairs one selection will enumerate, so a
// corrupt data_parallel_size cannot exhaust memory.
const MaxCandidates = 1 << 20

// selState is the working state of one Select call.
//
// Select is built to handle tens of thousands of candidates per call: the
// per-request constants are resolved once, each worker is visited once for
// eligibility (its reason, taints and preferred-taint multiplier are computed per
// worker, not per rank), each candidate's load projection is looked up once, and
// sparse overlap maps are read by merging their sorted keys with the canonical
// candidate order instead of hashing every candidate. The only allocations that
// grow with the candidate count besides the evidence itself are a compact cost
// table and the visited candidates' load projections. A Selector's reused
// evidence is never cleared in a pass of its own: every field is written by the
// pass that fills its neighbours. From selParallelMin candidates on, every phase
// runs in parts on up to GOMAXPROCS goroutines (see selector_parallel.go).
type selState struct {
	sel      *Selector // memory reused across calls
	req      *Request
	b        ProfileBehavior
	w        ResolvedWeights
	workers  []Worker // the caller's slice, never modified
	order    []int32  // indices into workers, sorted by worker id; nil if already sorted
	decision Decision
	// pinnedIdx and affinityIdx are candidate indices, or -1.
	pinnedIdx, affinityIdx int
	// costs holds the scored candidates' costs (then their probabilities at T>0);
	// costs[j] belongs to candidate vis[j].idx, and every visited candidate is
	// scored unless scoring fails.
	costs []float64
	// minCost and minCount summarise the scored costs (MinimumCostTies semantics);
	// ties is the T=0 tie set once computed.
	minCost  float64
	minCount int
	ties     []int32
	tiesDone bool
	// floor is the decay floor over the visited candidates; anyOverloaded records
	// whether some candidate was rejected for overload.
	floor         uint64
	anyOverloaded bool
	// vis is the candidates scoring visits, in canonical order, with their load
	// projections (looked up once, during enumeration).
	vis []selVisit
	// parts splits the workers and their candidates for enumeration (one part
	// unless the selection is large); dirty means the candidates' memory is
	// reused from an earlier call, so every field must be written, zeros too.
	parts []selPart
	dirty bool
	// lo and hi are the smallest and largest scored cost (the softmax bounds).
	lo, hi float64
	// overlaps reads the overlap maps. A large selection prepares it in
	// validate (overlapsReady), sorting maps on goroutines that sorting waits
	// for; else score prepares it.
	overlaps      selOverlaps
	overlapsReady bool
	sorting       sync.WaitGroup
	// total is the number of candidates. With lookAhead, validate allocates
	// the evidence on a goroutine (allocating) while enumerate first looks up
	// the load projections of all candidates.
	total      int
	lookAhead  bool
	allocating sync.WaitGroup
}

// selVisit is one candidate scoring visits: its index and load projection.
type selVisit struct {
	idx     int32
	hasLoad bool
	ap      uint64 // active prefill tokens
	ad      uint64 // active decode blocks
	ar      uint64 // active requests
}

// worker returns the index in s.workers of the k-th worker in id order.
func (s *selState) worker(k int) int {
	if s.order == nil {
		return k
	}
	return int(s.order[k])
}

func (s *selState) fail(err error) error {
	s.decision.ErrorKind = selErrorKind(err)
	return err
}

func selInvalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidRequest, fmt.Sprintf(format, args...))
}

// newSelState validates the inputs, enumerates every candidate in canonical order
// and applies eligibility and the pinned-worker checks.
func newSelState(sel *Selector, cfg KvRouterConfig, th BusyThresholds, workers []Worker, req *Request) (*selState, error) {
	s := &selState{sel: sel, req: req, pinnedIdx: -1, affinityIdx: -1}
	if err := s.validate(cfg, th, workers); err != nil {
		err = s.fail(err)
		return s, err
	}
	s.enumerate(th)
	if err := s.applyPinned(); err != nil {
		s.sorting.Wait() // leave nothing running
		err = s.fail(err)
		return s, err
	}
	return s, nil
}

func (s *selState) validate(cfg KvRouterConfig, th BusyThresholds, workers []Worker) error {
	b, err := cfg.Profile.Behavior()
	if err != nil {
		return err
	}
	s.b = b
	s.decision.Profile = b
	if err := cfg.Validate(); err != nil {
		return err
	}
	if err := th.Validate(); err != nil {
		return err
	}
	req := s.req
	if err := req.Override.Validate(cfg.Profile); err != nil {
		return err
	}
	s.w = req.Override.Resolve(cfg)
	s.decision.Weights = s.w
	s.decision.Temperature = s.w.Temperature
	if req.ISL <= 0 {
		return selInvalidf("isl must be > 0 tokens, got %d (Dynamo asserts a non-empty prompt)", req.ISL)
	}
	if req.BlockSize <= 0 {
		return selInvalidf("block size must be > 0 tokens, got %d", req.BlockSize)
	}
	s.decision.RequestBlocks = RequestBlocks(uint64(req.ISL), uint64(req.BlockSize))
	if len(req.Constraints.PreferredTaints) > 0 {
		for _, name := range req.Constraints.SortedPreferred() {
			if v := req.Constraints.PreferredTaints[name]; math.IsNaN(v) || math.IsInf(v, 0) {
				return selInvalidf("preferred taint %q has weight %v; weights must be finite", name, v)
			}
		}
	}
	// The first invalid effective overlap in canonical order is reported; sorting
	// is only needed when there is one.
	for _, v := range req.Overlap.EffectiveBlocks {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			for _, k := range selSortedKeys(req.Overlap.EffectiveBlocks) {
				if v := req.Overlap.EffectiveBlocks[k]; math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
					return selInvalidf("effective overlap blocks for %s is %v; it must be finite and >= 0", k, v)
				}
			}
		}
	}
	s.workers = workers
	// The workers are checked in parts, first assuming they are already in id
	// order (the common case); if some part finds they are not, they are sorted
	// and checked again.
	parts := s.splitWorkers(s.nparts(len(workers)))
	if !s.checkWorkers(parts) {
		// s.order stays nil when the workers are already in id order.
		s.order = make([]int32, len(workers))
		for i := range s.order {
			s.order[i] = int32(i)
		}
		slices.SortFunc(s.order, func(a, b int32) int {
			switch ia, ib := workers[a].ID, workers[b].ID; {
			case ia < ib:
				return -1
			case ia > ib:
				return 1
			}
			return 0
		})
		s.checkWorkers(parts)
	}
	// Merged in id order, the parts fail exactly where one loop over all
	// workers would: at the first error, unless the running count passed
	// MaxCandidates before it.
	total := 0
	for i := range parts {
		p := &parts[i]
		p.n0 = total
		total += p.n
		if total > MaxCandidates {
			return selInvalidf("more than %d (worker, dp rank) candidates; check data_parallel_size", MaxCandidates)
		}
		if p.err != nil {
			return p.err
		}
		p.n1 = total
	}
	s.parts = parts
	if s.nparts(total) > 1 {
		// A large selection sorts the overlap maps that scoring reads by merge
		// in the background, while the evidence is allocated and the candidates
		// are enumerated, for as many visits as there may be.
		visits := total
		if s.req.Pinned != nil {
			visits = 1
		}
		for _, sort := range s.overlaps.prepare(s.req, visits) {
			selSpawn(s.spawner(), &s.sorting, sort)
		}
		s.overlapsReady = true
	}
	s.total = total
	switch {
	case s.sel.cands != nil && cap(s.sel.cands) >= total:
		// Reused memory: enumerate and score write every field.
		s.decision.Candidates = s.sel.cands[:total]
		s.dirty = true
	case s.nparts(total) > 1 && s.req.Pinned == nil:
		// A large selection allocates (and so zeroes) the evidence on a goroutine
		// of its own while enumerate looks up the candidates' loads.
		selSpawn(s.spawner(), &s.allocating, func() {
			s.decision.Candidates = make([]CandidateEvidence, total)
			s.sel.cands = s.decision.Candidates
		})
		s.lookAhead = true
	default:
		s.decision.Candidates = make([]CandidateEvidence, total)
		s.sel.cands = s.decision.Candidates
	}
	return nil
}

// splitWorkers splits the workers into parts of equal worker counts.
func (s *selState) splitWorkers(parts int) []selPart {
	ps := make([]selPart, parts)
	for i := range ps {
		ps[i].k0, ps[i].k1 = selSplit(len(s.workers), parts, i), selSplit(len(s.workers), parts, i+1)
	}
	return ps
}

// checkWorkers checks every part's workers (see checkWorkerRange) and reports
// whether they were in id order; when s.order is set they always are.
func (s *selState) checkWorkers(parts []selPart) (sorted bool) {
	s.run(len(parts), func(i int) { s.checkWorkerRange(&parts[i]) })
	for i := range parts {
		if parts[i].unsorted {
			return false
		}
	}
	return true
}

// checkWorkerRange checks the part's workers in id order for duplicates and dp
// ranges that overflow, counting their candidates until the first error or until
// the count passes MaxCandidates. Without s.order it also checks that the workers
// are in id order (p.unsorted), which makes every other result meaningless.
func (s *selState) checkWorkerRange(p *selPart) {
	workers := s.workers
	checkOrder := s.order == nil
	p.n, p.err, p.unsorted = 0, nil, false
	done := false // an error was found or the count passed MaxCandidates
	for k := p.k0; k < p.k1; k++ {
		w := &workers[s.worker(k)]
		if k > 0 {
			prev := workers[s.worker(k-1)].ID
			if prev > w.ID {
				p.unsorted = true
				return
			}
			if !done && prev == w.ID {
				p.err, done = selInvalidf("worker %s is listed twice", w.ID), true
			}
		}
		if done {
			if !checkOrder {
				return
			}
			continue
		}
		start, end, ok := eligDpRange(w.Runtime)
		if !ok {
			p.err, done = selInvalidf("worker %s: data_parallel_start_rank %d + data_parallel_size %d overflows a u32 rank",
				w.ID, w.Runtime.DataParallelStartRank, w.Runtime.DataParallelSize), true
			continue
		}
		p.n += int(end - start)
		done = p.n > MaxCandidates
	}
}

func selSortedKeys[V any](m map[WorkerWithDpRank]V) []WorkerWithDpRank {
	keys := make([]WorkerWithDpRank, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, WorkerWithDpRank.Compare)
	return keys
}

// selPreferred is the request's preferred taints, sorted by name, with the weights
// already rounded through float32 (PreferredTaintMultiplier's arithmetic).
type selPreferred struct {
	names   []string
	weights []float64
}

func newSelPreferred(c RoutingConstraints) selPreferred {
	p := selPreferred{names: c.SortedPreferred()}
	p.weights = make([]float64, len(p.names))
	for i, n := range p.names {
		p.weights[i] = float64(float32(c.PreferredTaints[n]))
	}
	return p
}

// multiplier is PreferredTaintMultiplier for a worker with the given sorted taints,
// without the matched list: it returns how many names matched.
func (p *selPreferred) multiplier(workerTaints []string) (mult, sum float64, nMatched int) {
	for i, name := range p.names {
		if _, found := slices.BinarySearch(workerTaints, name); found {
			nMatched++
			sum += p.weights[i]
		}
	}
	return libmExp(-libmTanh(sum)), sum, nMatched
}

// matched fills dst with the matched names, in sorted order.
func (p *selPreferred) matched(workerTaints, dst []string) {
	k := 0
	for _, name := range p.names {
		if _, found := slices.BinarySearch(workerTaints, name); found {
			dst[k] = name
			k++
		}
	}
}

// selEnum is the per-request part of enumeration, shared read-only by its parts.
type selEnum struct {
	th            BusyThresholds
	allowed       []WorkerID // sorted; nil when there is no allow-list
	required      []string   // sorted, without duplicates
	needTaints    bool
	checkOverload bool
	hasPin        bool
	pinned        WorkerWithDpRank
	hasPref       bool
	pref          selPreferred
	needFloor     bool
}

// enumerate lists every (worker, rank) in canonical order with its eligibility. For
// every candidate that scoring visits it also records the load projection (s.vis),
// the preferred-taint multiplier (in the candidate's terms) and the decay floor.
// Large selections enumerate in parts (see selPart), merged in canonical order.
func (s *selState) enumerate(th BusyThresholds) {
	req := s.req
	e := selEnum{th: th}
	if req.AllowedWorkers != nil {
		e.allowed = slices.Clone(req.AllowedWorkers)
		slices.Sort(e.allowed)
	}
	if len(req.Constraints.RequiredTaints) > 0 {
		e.required = slices.Clone(req.Constraints.RequiredTaints)
		slices.Sort(e.required)
		e.required = slices.Compact(e.required)
	}
	e.needTaints = len(e.required) > 0 || len(req.Constraints.PreferredTaints) > 0
	e.checkOverload = th.IsConfigured()
	e.hasPin = req.Pinned != nil
	if e.hasPin {
		e.pinned = *req.Pinned
	}
	e.hasPref = len(req.Constraints.PreferredTaints) > 0 && !e.hasPin
	if e.hasPref {
		e.pref = newSelPreferred(req.Constraints)
	}
	e.needFloor = s.w.TrackPrefillTokens && s.w.OverlapScoreCreditDecay > 0

	parts := s.parts
	if want := s.nparts(s.total); want > len(parts) {
		parts = s.splitCandidates(want)
	}
	// Every part appends its visited candidates to its own region of one buffer;
	// the regions are then moved together (usually they already are).
	nvis := 0
	for i := range parts {
		p := &parts[i]
		p.visOff = nvis
		if e.hasPin {
			nvis++
		} else {
			nvis += p.n1 - p.n0
		}
	}
	buf := s.sel.vis
	if cap(buf) < nvis {
		buf = make([]selVisit, nvis)
	}
	buf = buf[:nvis]
	region := func(i int) []selVisit {
		end := nvis
		if i+1 < len(parts) {
			end = parts[i+1].visOff
		}
		return buf[parts[i].visOff:end]
	}
	if s.lookAhead {
		s.run(len(parts), func(i int) { s.lookupRange(&parts[i], region(i)) })
		s.allocating.Wait()
	}
	s.run(len(parts), func(i int) {
		p := &parts[i]
		p.vis = region(i)[:0]
		s.enumerateRange(&e, p)
	})
	vis := buf[:0]
	floor, floorSeen := uint64(0), false
	for i := range parts {
		p := &parts[i]
		if p.visOff == len(vis) {
			vis = vis[:len(vis)+len(p.vis)]
		} else {
			vis = append(vis, p.vis...) // moves the part's region down
		}
		if p.floorSeen && (!floorSeen || p.floor < floor) {
			floor, floorSeen = p.floor, true
		}
		s.anyOverloaded = s.anyOverloaded || p.anyOverloaded
	}
	s.floor, s.vis = floor, vis
	s.sel.vis = vis
}

// splitCandidates splits the workers into parts of about equal candidate counts.
func (s *selState) splitCandidates(parts int) []selPart {
	ps := make([]selPart, parts)
	total := s.total
	k, n := 0, 0
	for i := range ps {
		p := &ps[i]
		p.k0, p.n0 = k, n
		target := selSplit(total, parts, i+1)
		for k < len(s.workers) && n < target {
			start, end, _ := eligDpRange(s.workers[s.worker(k)].Runtime)
			n += int(end - start)
			k++
		}
		p.k1, p.n1 = k, n
	}
	return ps
}

// lookupRange looks up the load projection of every candidate of the part, in
// canonical order, into vis (which has room for them all).
func (s *selState) lookupRange(p *selPart, vis []selVisit) {
	j := 0
	for k := p.k0; k < p.k1; k++ {
		w := &s.workers[s.worker(k)]
		start, end, _ := eligDpRange(w.Runtime)
		for rank := start; rank < end; rank++ {
			load, ok := w.Loads[uint32(rank)]
			vis[j] = selVisit{idx: int32(p.n0 + j), hasLoad: ok,
				ap: load.ActivePrefillTokens, ad: load.ActiveDecodeBlocks, ar: load.ActiveRequests}
			j++
		}
	}
}

// enumerateRange enumerates the part's workers (see enumerate), appending to p.vis.
// With s.lookAhead, p.vis has the load projections of all the part's candidates
// (lookupRange) beyond its length, and the visited ones are moved down.
func (s *selState) enumerateRange(e *selEnum, p *selPart) {
	cands := s.decision.Candidates
	// Reused memory (dirty) is not cleared in a pass of its own: every field is
	// written here or by score, each in the pass that writes its neighbours.
	dirty, lookAhead := s.dirty, s.lookAhead
	allowed := e.allowed
	ai := 0 // merge cursor into allowed: the first entry >= the current worker id
	if allowed != nil && p.k0 < p.k1 {
		ai, _ = slices.BinarySearch(allowed, s.workers[s.worker(p.k0)].ID)
	}
	required, th, pinned, hasPin := e.required, e.th, e.pinned, e.hasPin
	pref, hasPref, needFloor := &e.pref, e.hasPref, e.needFloor
	vis := p.vis
	floor, floorSeen := uint64(0), false
	n := p.n0
	for k := p.k0; k < p.k1; k++ {
		w := &s.workers[s.worker(k)]
		start, end, _ := eligDpRange(w.Runtime)
		ranks := int(end - start)
		evs := cands[n : n+ranks : n+ranks]
		first := n
		n += ranks
		// Eligibility is decided per worker in validate_worker_rank's order; every
		// enumerated rank is within the worker's range.
		if allowed != nil {
			for ai < len(allowed) && allowed[ai] < w.ID {
				ai++
			}
		}
		var reason *Ineligibility
		var taints []string
		switch {
		case allowed != nil && (ai >= len(allowed) || allowed[ai] != w.ID): //nolint:gocritic // nil means no allow-list; an empty one allows nobody
			reason = eligNotAllowed(w.ID)
		case w.Fenced:
			reason = eligFenced(w.ID)
		default:
			if e.needTaints && (len(w.Runtime.Taints) > 0 || len(w.Runtime.TopologyDomains) > 0) {
				taints = w.effectiveTaints()
			}
			if len(required) > 0 {
				if missing := eligMissingTaints(taints, required); len(missing) > 0 {
					reason = eligUnsatisfied(w.ID, missing)
				}
			}
			if reason == nil && e.checkOverload && eligWorkerOverloaded(th, w) {
				rep := WorkerOverload(th, *w)
				reason = eligOverloaded(w.ID, &rep)
				p.anyOverloaded = true
			}
		}
		if reason != nil {
			for r := range evs {
				ev := &evs[r]
				if dirty {
					*ev = CandidateEvidence{}
				}
				ev.Candidate = WorkerWithDpRank{WorkerID: w.ID, DpRank: uint32(start) + uint32(r)}
				if w.Name != "" {
					ev.WorkerName = w.Name
				}
				if w.WorkerType != "" {
					ev.WorkerType = w.WorkerType
				}
				if r > 0 {
					reason = eligCloneReason(reason)
				}
				ev.Reason = reason
			}
			continue
		}
		var mult, sum float64
		var nMatched int
		var matched []string
		if hasPref {
			mult, sum, nMatched = pref.multiplier(taints)
			if nMatched > 0 {
				matched = make([]string, nMatched*ranks)
			}
		}
		for r := range evs {
			ev := &evs[r]
			c := WorkerWithDpRank{WorkerID: w.ID, DpRank: uint32(start) + uint32(r)}
			ev.Candidate = c
			if dirty {
				ev.WorkerName, ev.WorkerType, ev.Reason = w.Name, w.WorkerType, nil
				ev.Scored, ev.InTieSet, ev.Probability = false, false, 0
			} else {
				if w.Name != "" {
					ev.WorkerName = w.Name
				}
				if w.WorkerType != "" {
					ev.WorkerType = w.WorkerType
				}
			}
			ev.Eligible = true
			if hasPin && c != pinned {
				if dirty {
					ev.Terms = CostTerms{}
				}
				continue
			}
			var v selVisit
			if lookAhead {
				v = vis[:first+r-p.n0+1][first+r-p.n0]
			} else {
				load, hasLoad := w.Loads[c.DpRank]
				v = selVisit{idx: int32(first + r), hasLoad: hasLoad,
					ap: load.ActivePrefillTokens, ad: load.ActiveDecodeBlocks, ar: load.ActiveRequests}
			}
			vis = append(vis, v)
			if needFloor && (!floorSeen || v.ap < floor) {
				floor, floorSeen = v.ap, true
			}
			// The multiplier fields; score writes every other term.
			t := &ev.Terms
			if hasPref {
				t.HasMultiplier, t.Multiplier, t.PreferredWeightSum = true, mult, sum
				if nMatched > 0 {
					m := matched[r*nMatched : (r+1)*nMatched : (r+1)*nMatched]
					pref.matched(taints, m)
					t.PreferredMatched = m
				} else if dirty {
					t.PreferredMatched = nil
				}
			} else if dirty {
				t.HasMultiplier, t.PreferredWeightSum, t.PreferredMatched = false, 0, nil
			}
		}
	}
	p.vis, p.floor, p.floorSeen = vis, floor, floorSeen
}

// candidateIndex finds a candidate by binary search over the canonical order.
func (s *selState) candidateIndex(c WorkerWithDpRank) int {
	i, found := slices.BinarySearchFunc(s.decision.Candidates, c, func(e CandidateEvidence, t WorkerWithDpRank) int {
		return e.Candidate.Compare(t)
	})
	if !found {
		return -1
	}
	return i
}

// applyPinned mirrors the start of select_worker_with_policy: a pinned worker outside
// the allow-list is PinnedWorkerNotAllowed; an overloaded one PinnedWorkerOverloaded
// (never rerouted); any other failure (fenced, unknown, rank out of range, taints)
// is NoEndpoints. It also resolves the session-affinity candidate.
func (s *selState) applyPinned() error {
	req := s.req
	if p := req.Pinned; p != nil {
		if req.AllowedWorkers != nil && !slices.Contains(req.AllowedWorkers, p.WorkerID) {
			return &PinnedWorkerError{Kind: ErrPinnedWorkerNotAllowed, WorkerID: p.WorkerID}
		}
		idx := s.candidateIndex(*p)
		if idx < 0 {
			return fmt.Errorf("%w: pinned worker %s is unavailable or has no dp rank %d", ErrNoEndpoints, p.WorkerID, p.DpRank)
		}
		if r := s.decision.Candidates[idx].Reason; r != nil {
			if r.Code == ReasonWorkerOverloaded {
				return &PinnedWorkerError{Kind: ErrPinnedWorkerOverloaded, WorkerID: p.WorkerID}
			}
			return fmt.Errorf("%w: pinned worker %s: %s", ErrNoEndpoints, p.WorkerID, r.Full())
		}
		s.pinnedIdx = idx
		return nil
	}
	if a := req.SessionAffinity; a != nil {
		if idx := s.candidateIndex(*a); idx >= 0 && s.decision.Candidates[idx].Eligible {
			s.affinityIdx = idx
		}
	}
	return nil
}

// selOverlap reads one overlap map in canonical candidate order. A sparse map is
// read by walking its sorted entries alongside the candidates (one sort of the
// map's keys instead of a hash lookup per candidate); a dense one by lookup.
// Candidates must be asked for in increasing canonical order.
type selOverlap[V uint64 | float64] struct {
	m      map[WorkerWithDpRank]V // nil when empty
	merge  bool
	keys   []WorkerWithDpRank
	vals   []V
	cursor int
}

// selOverlapMergeMin is the fewest visited candidates for which a sparse overlap map
// is sorted and merged (a variable so tests can exercise both paths on small inputs).
var selOverlapMergeMin = 64

// selOverlapMerge reports whether a map with n entries is read by merging when
// scoring visits that many candidates. Sorting n keys costs about n·log2(n) cheap
// comparisons against one hash lookup per visited candidate: merge when the map
// has at most half as many entries as there are candidates to visit.
func selOverlapMerge(n, visits int) bool {
	return visits >= selOverlapMergeMin && n <= visits/2
}

func newSelOverlap[V uint64 | float64](m map[WorkerWithDpRank]V, visits int) selOverlap[V] {
	if len(m) == 0 {
		return selOverlap[V]{}
	}
	o := selOverlap[V]{m: m}
	if selOverlapMerge(len(m), visits) {
		o.merge = true
		o.keys, o.vals = selSortedEntries(m)
	}
	return o
}

// get returns the value for c; ok is false when the map has no entry for it.
func (o *selOverlap[V]) get(c WorkerWithDpRank) (v V, ok bool) {
	if o.m != nil {
		v, ok = o.getSlow(c)
	}
	return v, ok
}

func (o *selOverlap[V]) getSlow(c WorkerWithDpRank) (v V, ok bool) {
	if !o.merge {
		v, ok = o.m[c]
		return v, ok
	}
	k := o.cursor
	for k < len(o.keys) && o.keys[k].Less(c) {
		k++
	}
	o.cursor = k
	if k < len(o.keys) && o.keys[k] == c {
		o.cursor++
		return o.vals[k], true
	}
	return 0, false
}

// selEntry is one overlap-map entry.
type selEntry[V uint64 | float64] struct {
	k WorkerWithDpRank
	v V
}

// selSortedEntries returns m's keys in canonical order and their values.
func selSortedEntries[V uint64 | float64](m map[WorkerWithDpRank]V) ([]WorkerWithDpRank, []V) {
	es := make([]selEntry[V], 0, len(m))
	for k, v := range m {
		es = append(es, selEntry[V]{k, v})
	}
	es = selRadixSort(es)
	keys := make([]WorkerWithDpRank, len(es))
	vals := make([]V, len(es))
	for i := range es {
		keys[i], vals[i] = es[i].k, es[i].v
	}
	return keys, vals
}

// selRadixSort sorts entries by key in canonical order (worker id, then dp rank)
// with a stable least-significant-digit radix sort over the key's 12 bytes,
// skipping every byte position on which all keys agree. Keys are unique (they come
// from a map), so the order is fully determined. It returns the sorted slice,
// which is es or a buffer of the same length.
func selRadixSort[V uint64 | float64](es []selEntry[V]) []selEntry[V] {
	if len(es) < 2 {
		return es
	}
	// Bits that differ between some keys; byte positions without any are skipped.
	orID, andID := uint64(0), ^uint64(0)
	orRank, andRank := uint32(0), ^uint32(0)
	for i := range es {
		orID |= uint64(es[i].k.WorkerID)
		andID &= uint64(es[i].k.WorkerID)
		orRank |= es[i].k.DpRank
		andRank &= es[i].k.DpRank
	}
	// The key as 96 bits: bytes 0-3 are the rank's, 4-11 the worker id's.
	diff := [2]uint64{uint64(orRank ^ andRank), orID ^ andID}
	var buf []selEntry[V]
	var count [256]int
	for pos := range 12 {
		word, shift := 0, uint(8*pos)
		if pos >= 4 {
			word, shift = 1, uint(8*(pos-4))
		}
		if (diff[word]>>shift)&0xff == 0 {
			continue
		}
		if buf == nil {
			buf = make([]selEntry[V], len(es))
		}
		count = [256]int{}
		if word == 0 {
			for i := range es {
				count[uint8(es[i].k.DpRank>>shift)]++
			}
		} else {
			for i := range es {
				count[uint8(uint64(es[i].k.WorkerID)>>shift)]++
			}
		}
		sum := 0
		for b, c := range count {
			count[b] = sum
			sum += c
		}
		if word == 0 {
			for i := range es {
				b := uint8(es[i].k.DpRank >> shift)
				buf[count[b]] = es[i]
				count[b]++
			}
		} else {
			for i := range es {
				b := uint8(uint64(es[i].k.WorkerID) >> shift)
				buf[count[b]] = es[i]
				count[b]++
			}
		}
		es, buf = buf, es
	}
	return es
}

// selScorer is the per-request part of scoring. Each part of a large selection
// scores with its own copy, whose overlap-map cursors it positions first.
type selScorer struct {
	k         selCostConsts
	hasTier   bool
	hasShared bool
	merged    []SharedHitRange
	allNew    uint64
	selOverlaps
}

// selOverlaps reads the request's overlap maps.
type selOverlaps struct {
	addBlocks    selOverlap[uint64]
	effBlocks    selOverlap[float64]
	devBlocks    selOverlap[uint64]
	hostBlocks   selOverlap[uint64]
	diskBlocks   selOverlap[uint64]
	cachedTokens selOverlap[uint64]
}

// prepare sets up the readers for scoring that visits about visits candidates.
// The maps read by lookup are ready on return; each map read by merge is sorted
// by one of the returned tasks, which may run concurrently with each other and
// with enumeration (the readers only decide how a value is found, never which).
func (o *selOverlaps) prepare(req *Request, visits int) (tasks []func()) {
	ov := &req.Overlap
	add := func(m map[WorkerWithDpRank]uint64, r *selOverlap[uint64]) {
		if len(m) > 0 && selOverlapMerge(len(m), visits) {
			tasks = append(tasks, func() { *r = newSelOverlap(m, visits) })
		} else {
			*r = newSelOverlap(m, visits)
		}
	}
	add(req.AdditionalActiveBlocks, &o.addBlocks)
	if m := ov.EffectiveBlocks; len(m) > 0 && selOverlapMerge(len(m), visits) {
		tasks = append(tasks, func() { o.effBlocks = newSelOverlap(m, visits) })
	} else {
		o.effBlocks = newSelOverlap(m, visits)
	}
	add(ov.DeviceBlocks, &o.devBlocks)
	add(ov.HostBlocks, &o.hostBlocks)
	add(ov.DiskBlocks, &o.diskBlocks)
	add(ov.CachedTokens, &o.cachedTokens)
	return tasks
}

// score computes the cost terms of every visited candidate: the pinned one when a
// worker is pinned (for_each_eligible_worker_rank), else every eligible one.
// Large selections score in parts (see selScorePart), merged in canonical order.
func (s *selState) score() error {
	d := &s.decision
	if s.w.TrackPrefillTokens && s.w.OverlapScoreCreditDecay > 0 {
		d.MinActivePrefillComputed = true
		d.MinActivePrefillTokens = s.floor
	}
	req := s.req
	ov := &req.Overlap
	sc := selScorer{hasTier: len(ov.DeviceBlocks) > 0 || len(ov.HostBlocks) > 0 || len(ov.DiskBlocks) > 0}
	sc.hasShared = ov.SharedHits != nil
	if sc.hasShared {
		sc.merged = costMergeHitRanges(ov.SharedHits)
	}
	visits := len(s.vis)
	if s.overlapsReady {
		s.sorting.Wait() // prepared by validate
	} else {
		for _, sort := range s.overlaps.prepare(req, visits) {
			sort()
		}
	}
	sc.selOverlaps = s.overlaps
	if req.AdditionalBlocksRule == AdditionalBlocksAllNew {
		sc.allNew = uint64(req.ISL) / uint64(req.BlockSize)
	}
	sc.k = selCostConsts{
		b:             &s.b,
		w:             &s.w,
		isl:           uint64(req.ISL),
		blockSize:     uint64(req.BlockSize),
		requestBlocks: d.RequestBlocks,
		floor:         d.MinActivePrefillTokens,
	}
	sc.k.init()

	if cap(s.sel.costs) >= visits {
		s.costs = s.sel.costs[:visits]
	} else {
		s.costs = make([]float64, visits)
		s.sel.costs = s.costs
	}
	parts := make([]selScorePart, s.nparts(visits))
	for i := range parts {
		parts[i].j0, parts[i].j1 = selSplit(visits, len(parts), i), selSplit(visits, len(parts), i+1)
	}
	s.run(len(parts), func(i int) {
		psc := sc // the part's own cursors
		s.scoreRange(&psc, &parts[i])
	})
	// Merge in canonical order: the first failure wins; the running minimum keeps
	// its first value among equal ones (+0 and −0) and counts the rest as ties.
	s.minCost, s.minCount = math.Inf(1), 0
	s.lo, s.hi = math.Inf(1), math.Inf(-1)
	for i := range parts {
		p := &parts[i]
		if p.failAt >= 0 {
			j := p.failAt
			// Candidates after this one are never scored: clear what enumerate
			// recorded for them (the preferred-taint multiplier) and what later
			// parts computed.
			for _, v := range s.vis[j+1:] {
				ev := &d.Candidates[v.idx]
				ev.Terms, ev.Scored = CostTerms{}, false
			}
			s.costs = s.costs[:j]
			c := d.Candidates[s.vis[j].idx].Candidate
			return s.fail(selInvalidf("cost for candidate %s is %v; the inputs overflow float64", c, p.failCost))
		}
		if p.j0 == p.j1 {
			continue
		}
		if p.minCost < s.minCost {
			s.minCost, s.minCount = p.minCost, p.minCount
		} else if p.minCost == s.minCost {
			s.minCount += p.minCount
		}
		s.lo, s.hi = min(s.lo, p.lo), max(s.hi, p.hi)
	}
	if len(s.costs) == 0 {
		return s.fail(s.noCandidateError())
	}
	return nil
}

// seek positions the merge cursor at the first key not below c.
func (o *selOverlap[V]) seek(c WorkerWithDpRank) {
	if o.merge {
		o.cursor, _ = slices.BinarySearchFunc(o.keys, c, WorkerWithDpRank.Compare)
	}
}

// scoreRange scores the visited candidates [p.j0, p.j1) in order, stopping at the
// first whose cost is not finite (p.failAt).
func (s *selState) scoreRange(sc *selScorer, p *selScorePart) {
	p.minCost, p.minCount, p.failAt = math.Inf(1), 0, -1
	p.lo, p.hi = math.Inf(1), math.Inf(-1)
	if p.j0 == p.j1 {
		return
	}
	d := &s.decision
	vis, costs := s.vis[p.j0:p.j1], s.costs[p.j0:p.j1]
	if p.j0 > 0 {
		c := d.Candidates[vis[0].idx].Candidate
		sc.addBlocks.seek(c)
		sc.effBlocks.seek(c)
		sc.devBlocks.seek(c)
		sc.hostBlocks.seek(c)
		sc.diskBlocks.seek(c)
		sc.cachedTokens.seek(c)
	}
	k := &sc.k
	hasTier, hasShared, merged, allNew := sc.hasTier, sc.hasShared, sc.merged, sc.allNew

	// The decay factors go first, in a loop of their own: their chained divisions
	// then overlap across candidates. costs holds them until each is replaced by
	// its candidate's cost.
	for j := range vis {
		costs[j] = k.decayFactor(vis[j].ap)
	}
	minCost, minCount := math.Inf(1), 0
	lo, hi := math.Inf(1), math.Inf(-1)
	bounds := s.w.Temperature != 0 // the softmax needs them
	for j := range vis {
		v := &vis[j]
		i := int(v.idx)
		ev := &d.Candidates[i]
		c := ev.Candidate
		t := &ev.Terms
		t.HasLoad = v.hasLoad
		t.ActivePrefillTokens = v.ap
		t.ActiveRequests = v.ar
		if add, ok := sc.addBlocks.get(c); ok {
			t.AdditionalActiveBlocks = add
		} else {
			t.AdditionalActiveBlocks = allNew
		}
		t.EffectiveBlocks, _ = sc.effBlocks.get(c)
		if dev, ok := sc.devBlocks.get(c); ok {
			t.DeviceBlocks = float64(dev)
		} else if !hasTier {
			t.DeviceBlocks = t.EffectiveBlocks
		} else {
			t.DeviceBlocks = 0
		}
		host, _ := sc.hostBlocks.get(c)
		t.HostBlocks = float64(host)
		disk, _ := sc.diskBlocks.get(c)
		t.DiskBlocks = float64(disk)
		t.CachedTokens, _ = sc.cachedTokens.get(c)
		if hasShared {
			t.SharedBeyondBlocks = costHitsBeyondMerged(merged, costDeviceDepth(t.DeviceBlocks))
		} else {
			t.SharedBeyondBlocks = 0
		}
		k.terms(ev.WorkerType, v.ad, costs[j], t)
		if t.HasMultiplier {
			t.Cost = t.Logit * t.Multiplier
		}
		cost := t.Cost
		if math.IsNaN(cost) || math.IsInf(cost, 0) {
			p.failAt, p.failCost = p.j0+j, cost
			return
		}
		ev.Scored = true
		costs[j] = cost
		// MinimumCostTies' minimum and tie count, on the fly.
		if cost < minCost {
			minCost, minCount = cost, 1
		} else if cost == minCost {
			minCount++
		}
		if bounds {
			lo, hi = min(lo, cost), max(hi, cost) // the builtins order −0 below +0, whatever the order of the costs
		}
	}
	p.minCost, p.minCount, p.lo, p.hi = minCost, minCount, lo, hi
}

// noCandidateError distinguishes "only overload blocks routing" from "nothing fits"
// (has_eligible_worker_ignoring_overload).
func (s *selState) noCandidateError() error {
	if s.anyOverloaded {
		return ErrAllEligibleWorkersOverloaded
	}
	return ErrNoEndpoints
}

// needsDraw reports whether the pick is random: a T=0 tie or T>0 with more than
// one candidate.
func (s *selState) needsDraw() bool {
	if s.pinnedIdx >= 0 || s.affinityIdx >= 0 {
		return false
	}
	if s.w.Temperature != 0 {
		return len(s.costs) > 1
	}
	return len(s.tieSet()) > 1
}

// tieSet returns the candidate indices at the minimum cost, narrowed by tree size
// under TieSmallestTreeThenRandom, and records MinCost.
func (s *selState) tieSet() []int32 {
	s.decision.MinCost = s.minCost
	if s.tiesDone {
		return s.ties
	}
	s.tiesDone = true
	out := make([]int32, 0, s.minCount)
	for k, c := range s.costs {
		if c == s.minCost {
			out = append(out, s.vis[k].idx)
			if len(out) == s.minCount { // the rest cost more
				break
			}
		}
	}
	if s.b.TieBreak == TieSmallestTreeThenRandom && len(out) > 1 {
		d := &s.decision
		best := uint64(math.MaxUint64)
		for _, i := range out {
			best = min(best, s.req.Overlap.TreeSizes[d.Candidates[i].Candidate])
		}
		narrowed := out[:0]
		for _, i := range out {
			if s.req.Overlap.TreeSizes[d.Candidates[i].Candidate] == best {
				narrowed = append(narrowed, i)
			}
		}
		out = narrowed
	}
	s.ties = out
	return out
}

// pick applies the selection rule with draw u.
func (s *selState) pick(u float64) (Decision, error) {
	d := &s.decision
	if err := sampleCheckDraw(u); err != nil {
		return *d, s.fail(err)
	}
	d.Draw = u
	set := func(i int, rule SelectionRule, cost float64) (Decision, error) {
		d.Selected = d.Candidates[i].Candidate
		d.SelectionRule = rule
		d.SelectedCost = cost
		return *d, nil
	}
	if s.pinnedIdx >= 0 {
		ev := &d.Candidates[s.pinnedIdx]
		d.MinCost = ev.Terms.Cost
		ev.Probability = 1
		return set(s.pinnedIdx, RulePinned, ev.Terms.Logit)
	}
	if s.affinityIdx >= 0 {
		s.tieSet() // fills MinCost for the evidence
		ev := &d.Candidates[s.affinityIdx]
		ev.Probability = 1
		return set(s.affinityIdx, RuleSessionAffinity, ev.Terms.Logit)
	}
	if s.w.Temperature == 0 {
		ties := s.tieSet()
		d.TieSet = make([]WorkerWithDpRank, len(ties))
		for k, i := range ties {
			d.TieSet[k] = d.Candidates[i].Candidate
			d.Candidates[i].InTieSet = true
			d.Candidates[i].Probability = 1 / float64(len(ties))
		}
		if len(ties) == 1 {
			rule := RuleMinimumCost
			i := int(ties[0])
			if s.b.TieBreak == TieSmallestTreeThenRandom && d.MinCost == d.Candidates[i].Terms.Cost && s.minCount > 1 {
				rule = RuleMinimumCostTieTreeSize
			}
			return set(i, rule, d.Candidates[i].Terms.Cost)
		}
		d.DrawUsed = true
		rule := RuleMinimumCostTieRandom
		i := int(ties[TieIndex(len(ties), u)])
		return set(i, rule, d.Candidates[i].Terms.Cost)
	}
	d.MinCost = s.minCost
	if err := sampleCheckTemperature(s.w.Temperature); err != nil {
		return *d, s.fail(err)
	}
	p := s.costs // the costs are finite (checked in score); reuse them in place
	// The softmax of softmaxInto, with lo and hi from score: the weights and
	// their normalisation in parts, the sum in order.
	parts := s.nparts(len(p))
	s.run(parts, func(i int) {
		j0, j1 := selSplit(len(p), parts, i), selSplit(len(p), parts, i+1)
		softmaxWeights(p[j0:j1], p[j0:j1], s.lo, s.hi, len(p), s.w.Temperature)
	})
	sum := 0.0
	for _, v := range p {
		sum += v
	}
	s.run(parts, func(i int) {
		j0, j1 := selSplit(len(p), parts, i), selSplit(len(p), parts, i+1)
		for k := j0; k < j1; k++ {
			p[k] /= sum
			d.Candidates[s.vis[k].idx].Probability = p[k]
		}
	})
	d.DrawUsed = len(p) > 1
	i := int(s.vis[SampleIndex(p, u)].idx)
	return set(i, RuleSoftmaxSample, d.Candidates[i].Terms.Cost)
}
