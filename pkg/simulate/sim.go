package simulate

import (
	"cmp"
	"container/heap"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/explain"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/simulate/trace"
)

// Options are one simulation's inputs.
type Options struct {
	Snapshot   *model.Snapshot
	Deployment *model.Deployment
	// Base are explain-route's options every variant starts from (seed, block
	// size, assume-idle, knob flags).
	Base explain.Options
	// KV are the workers' KV-cache contents at the start (a capture's or the
	// frontend's events); nil starts cold.
	KV []explain.EventSet
	// Variants are the what-ifs; the deployment as it is always runs first.
	Variants []Variant
	Engine   Engine
	// Open opens the trace; it is called once per variant (the trace is
	// streamed, never held in memory).
	Open  func() (trace.Reader, error)
	Trace TraceInfo
	// Speedup divides inter-arrival times (2 replays twice as fast); 0 means 1.
	Speedup float64
	// Rate, when set, replaces Speedup: the arrivals are scaled so that the
	// trace's mean rate (its requests over the span of their arrivals, up to
	// MaxRequests) becomes Rate requests per second. It reads the trace once
	// more, before the variants.
	Rate float64
	// DurationMs, when set, ends the traffic at the last arrival within
	// DurationMs of the first (virtual ms, after the scaling).
	DurationMs float64
	// MaxRequests stops reading the trace after this many requests (0: all).
	MaxRequests int
	// SaturationThreshold is the utilisation from which a stage counts as
	// saturated (Saturation); 0 means DefaultSaturationThreshold.
	SaturationThreshold float64
	// SLOs are the latency objectives whose breaches are counted, per
	// variant and per domain.
	SLOs []SLO
	// Progress, when set, is called every ProgressEvery requests and at the
	// end of each variant.
	Progress      func(Progress)
	ProgressEvery int
	// OnDecision, when set, sees every routing decision (tests).
	OnDecision func(variant, request int, d explain.CoreDecision)

	// bounded, set by Recommend, ends a candidate's run once more than
	// stopAbove of its requests have failed (errWorse).
	bounded   bool
	stopAbove int
}

// Progress is a progress report.
type Progress struct {
	Variant      string
	VariantIndex int
	Variants     int
	Requests     int
	// Total is the requests the variant will replay, when known (after the
	// first variant, or from the trace's pre-read); 0 otherwise.
	Total     int
	VirtualMs float64
	Done      bool
}

// testHookEnd, set by tests, sees each variant's state when its run ends.
var testHookEnd func(*state)

// ErrNoTrace is returned when the trace holds no request.
var ErrNoTrace = errors.New("the trace holds no request")

// MaxVirtualMs bounds a replay's virtual time (about 3.2 years): arrivals and
// engine times stay far inside float64's exact range, and an input that would
// run past it (a tiny --speedup, a profile of absurd figures) is an error
// naming what to change, not a replay that never ends.
const MaxVirtualMs = 1e11

// The --speedup range: below MinSpeedup a one-hour trace alone runs past
// MaxVirtualMs.
const (
	MinSpeedup = 1e-6
	MaxSpeedup = 1e9
)

// ValidateSpeedup checks a --speedup value.
func ValidateSpeedup(x float64) error {
	if math.IsNaN(x) || x < MinSpeedup || x > MaxSpeedup {
		return fmt.Errorf("--speedup must be a positive number from %s to %s, got %v", shortG(MinSpeedup), shortG(MaxSpeedup), x)
	}
	return nil
}

// shortG formats a bound as people write it: 1e-6, 1e9, 1000.
func shortG(v float64) string {
	return strings.NewReplacer("e+0", "e", "e-0", "e-", "e+", "e").Replace(strconv.FormatFloat(v, 'g', -1, 64))
}

// ErrInternal marks an internal error of the simulation (a bug): the event
// loop stopped advancing, or a panic was recovered.
var ErrInternal = errors.New("internal error in the simulation")

// Run replays the trace through the router model once per variant. It never
// panics: an internal failure comes back as an error wrapping ErrInternal.
func Run(ctx context.Context, o Options) (rep *Report, err error) {
	defer func() {
		if p := recover(); p != nil {
			rep, err = nil, fmt.Errorf("%w: %v; this is a bug in kubectl-dynamo: please report it with the command line", ErrInternal, p)
		}
	}()
	if o.Deployment == nil {
		return nil, errors.New("simulate: no deployment")
	}
	if err := o.Engine.Validate(); err != nil {
		return nil, err
	}
	if o.Speedup == 0 {
		o.Speedup = 1
	}
	if o.SaturationThreshold == 0 {
		o.SaturationThreshold = DefaultSaturationThreshold
	}
	if !(o.SaturationThreshold > 0 && o.SaturationThreshold <= 1) {
		return nil, fmt.Errorf("simulate: saturation threshold %v is not a share in (0, 1]", o.SaturationThreshold)
	}
	if err := ValidateDuration(o.DurationMs); err != nil {
		return nil, err
	}
	var total int
	if o.Rate != 0 || o.Progress != nil {
		// The trace's own rate (--rate) and its length (the first variant's
		// progress): one read before the variants.
		st, err := scanTrace(ctx, o)
		if err != nil {
			return nil, err
		}
		if o.DurationMs == 0 {
			total = st.requests
		}
		if o.Rate != 0 {
			sp, err := speedupForRate(o.Rate, st)
			if err != nil {
				return nil, err
			}
			o.Speedup = sp
		}
	}
	if err := ValidateSpeedup(o.Speedup); err != nil {
		return nil, err
	}
	dep := o.Deployment
	r := &Report{
		APIVersion: APIVersion, Kind: Kind,
		Deployment: dep.Name, Namespace: dep.Namespace,
		Engine: o.Engine.Info(), Seed: o.Base.Seed, Trace: o.Trace,
		SaturationThreshold: o.SaturationThreshold, SLOs: o.SLOs,
	}
	if o.Snapshot != nil {
		r.Context = o.Snapshot.Context
	}
	if dep.Policy != nil {
		r.DomainKey = dep.Policy.Domain
	}
	r.Trace.Speedup = o.Speedup
	r.Trace.TargetRate, r.Trace.DurationLimitMs = o.Rate, o.DurationMs
	variants := append([]Variant{{Spec: "as deployed"}}, o.Variants...)
	// Every variant's plan first: a what-if that cannot apply, or that
	// changes nothing, is an error before anything is replayed.
	deps := make([]*model.Deployment, len(variants))
	plans := make([]*explain.Plan, len(variants))
	notes := make([][]string, len(variants))
	for i, v := range variants {
		d, plan, err := v.plan(o)
		if err != nil {
			return nil, variantErr(i, v, err)
		}
		deps[i], plans[i] = d, plan
		if i > 0 {
			if notes[i], err = v.check(dep, plans[0], plan); err != nil {
				return nil, err
			}
		}
	}
	for i, v := range variants {
		vr, st, err := runVariant(ctx, o, i, len(variants), v, deps[i], plans[i], total)
		if err != nil {
			return nil, variantErr(i, v, err)
		}
		plans[i], deps[i] = nil, nil // each plan runs once (the run changes its loads)
		vr.Notes = notes[i]
		total = st.requests
		if i == 0 {
			r.Model = st.plan.Model()
			r.Dynamo = st.plan.Dynamo()
			r.Trace.Requests = st.requests
			r.Trace.RouterBlockSize = st.plan.BlockSize()
			r.Trace.DurationMs = st.end
			r.Trace.InputTokens, r.Trace.OutputTokens = st.inTokens, st.outTokens
			r.Trace.SpanMs = st.lastArrival
			r.Trace.Warnings = st.traceWarnings
			if sec := st.lastArrival / 1000; sec > 0 {
				r.Trace.RequestRate = float64(st.requests) / sec
				r.Trace.PromptTokensPerSecond = float64(st.inTokens) / sec
				r.Trace.OutputTokensPerSecond = float64(st.outTokens) / sec
			}
			r.KvCapacity = st.capacity
			for i := range r.KvCapacity {
				c := &r.KvCapacity[i]
				c.Modelled = c.Role != string(model.RoleDecode) || vr.DecodeCachesModelled
			}
			r.Assumptions = append(r.Assumptions, st.assumptions...)
		}
		r.Variants = append(r.Variants, vr)
	}
	return r, nil
}

// variantErr says which variant an error belongs to, in the variant's own
// words: explain's what-if flags (--domain-down, --exclude-worker) are the
// variant keys down= and exclude= here. An explain.InputError keeps its hint.
func variantErr(i int, v Variant, err error) error {
	if i == 0 || strings.Contains(err.Error(), "--variant") {
		return err
	}
	var ie *explain.InputError
	if errors.As(err, &ie) {
		msg := strings.NewReplacer("--domain-down ", "down=", "--exclude-worker ", "exclude=").Replace(ie.Msg)
		return &explain.InputError{Msg: fmt.Sprintf("--variant %q: %s", v.Spec, msg), Hint: ie.Hint}
	}
	return fmt.Errorf("--variant %q: %w", v.Spec, err)
}

// unit is one (worker, dp rank): a prefill server (FIFO, one prompt at a
// time), a decode server (processor sharing) and a prefix cache.
type unit struct {
	key    routecore.WorkerWithDpRank
	worker int // index into state.workers
	gpus   float64
	cache  *lru

	queue      []*req
	prefilling *req
	inPrefill  int // queued + prefilling

	decG    float64 // tokens generated per active sequence since the start
	decLast float64
	decHeap decodeHeap
	decVer  uint64

	inDecode int

	// prefills and decodes say which stages the unit serves (Saturation);
	// prefillTokens and decodeTokens are the work it did: prompt tokens
	// prefilled (not held by its cache) and output tokens decoded.
	prefills, decodes           bool
	prefillTokens, decodeTokens float64
}

type workerStat struct {
	pod       string
	role      model.Role
	domain    int
	synthetic bool
	picks     int
	units     []*unit
	evicted   uint64
	level     level
}

type req struct {
	id       uint64
	idx      int
	arrival  float64
	isl, osl int
	seq      []routecore.SequenceHash
	local    []routecore.LocalBlockHash
	pre, dec *unit
	hit      int // blocks the serving worker's cache held
	dom      int // the serving worker's domain (SLO breaches, TTFT per domain)
	crossDom bool
	wasted   bool // the decode hop failed after the prefill ran
	firstTok float64
}

type decEntry struct {
	target float64
	r      *req
}

type decodeHeap []decEntry

func (h decodeHeap) Len() int { return len(h) }
func (h decodeHeap) Less(i, j int) bool {
	return h[i].target < h[j].target || (h[i].target == h[j].target && h[i].r.id < h[j].r.id)
}
func (h decodeHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *decodeHeap) Push(x any)   { *h = append(*h, x.(decEntry)) }
func (h *decodeHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

type evKind uint8

const (
	evPrefillDone evKind = iota
	evDecodeStart
	evDecodeDone
)

type event struct {
	t    float64
	seq  uint64
	kind evKind
	u    *unit
	r    *req
	ver  uint64
}

type eventHeap []event

func (h eventHeap) Len() int { return len(h) }
func (h eventHeap) Less(i, j int) bool {
	return h[i].t < h[j].t || (h[i].t == h[j].t && h[i].seq < h[j].seq)
}
func (h eventHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *eventHeap) Push(x any)   { *h = append(*h, x.(event)) }
func (h *eventHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// state is one variant's simulation.
type state struct {
	o       Options
	plan    *explain.Plan
	eng     Engine
	bs      int
	eagle   bool
	ledger  *routecore.ActiveLedger
	index   *routecore.Index
	useIdx  bool
	approx  bool
	weights routecore.TierWeights
	rng     routecore.Rand
	rrPre   routecore.RoundRobinCounter
	rrDec   routecore.RoundRobinCounter

	units                                      map[routecore.WorkerWithDpRank]*unit
	workers                                    []*workerStat
	pools                                      [2][]routecore.Worker // prefill, decode
	base                                       map[routecore.WorkerWithDpRank]routecore.RankLoad
	dirty                                      map[routecore.WorkerWithDpRank]bool
	wpos                                       map[routecore.WorkerID][2]int // pool, index
	trackDecodeBlocks, reuseDecode, aggTracked bool
	// decodeCacheRead: a decode worker's cache is read by a routing decision
	// or a prefill only with conditional disaggregation (the peek credits
	// overlap, a bypassed request prefills on the decode worker); otherwise the
	// transferred blocks are not stored (nor published), which changes no
	// decision and no figure but the decode workers' cache peaks.
	decodeCacheRead bool

	domains           []string
	domainIdx         map[string]int
	dPrefill, dDecode []int
	dLevels           [][2]level
	ser               *series

	ev    eventHeap
	evSeq uint64
	now   float64
	// still counts the events processed since virtual time last advanced
	// (the progress guard); err is the first engine time out of range.
	still  uint64
	err    error
	nextID uint64
	events uint64 // KV event ids

	vr                  VariantResult
	fail                map[[2]string]*FailureCount
	ttft, e2e           hist
	requests            int
	inTokens, outTokens uint64
	end                 float64
	assumptions         []string
	evicted             []routecore.SequenceHash
	// lastArrival is the latest arrival so far (virtual ms; the first is 0).
	lastArrival float64
	capacity    []PoolCapacity
	// refusedPrefillTokens is the prompt tokens of the requests the prefill
	// hop refused (Saturation).
	refusedPrefillTokens float64
	traceWarnings        []string
	// stopAbove, when not negative, ends the run once more requests than it
	// have failed (errWorse): a search candidate that cannot win.
	stopAbove int
	// breaches counts each SLO's breaches; domBreaches per domain, domReqs
	// the requests landing in each domain (served there, or failed after a
	// prefill pick there), domTTFT their first-token times.
	breaches    []int
	domBreaches [][]int
	domReqs     []int
	domTTFT     []hist
}

// plan applies the variant to the deployment and plans its routing.
func (v Variant) plan(o Options) (*model.Deployment, *explain.Plan, error) {
	dep, eo, err := v.apply(o.Deployment, o.Base)
	if err != nil {
		return nil, nil, err
	}
	plan, err := explain.NewPlan(explain.Input{Snapshot: o.Snapshot, Deployment: dep, Options: eo})
	if err != nil {
		return nil, nil, err
	}
	return dep, plan, nil
}

func runVariant(ctx context.Context, o Options, vi, nv int, v Variant, dep *model.Deployment, plan *explain.Plan, total int) (VariantResult, *state, error) {
	s := newState(o, plan, dep, v)
	var err error
	tr, err := o.Open()
	if err != nil {
		return VariantResult{}, nil, err
	}
	var origin float64
	first := true
	every := cmp.Or(o.ProgressEvery, 10000)
	for o.MaxRequests <= 0 || s.requests < o.MaxRequests {
		tq, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return VariantResult{}, nil, err
		}
		at := float64(tq.Arrival) / float64(time.Millisecond)
		if first {
			origin, first = at, false
		}
		at = (at - origin) / o.Speedup
		if at < s.now {
			at = s.now // arrivals out of order are taken when they are read
		}
		if o.DurationMs > 0 && at > o.DurationMs {
			break
		}
		if !(at <= MaxVirtualMs) {
			return VariantResult{}, nil, fmt.Errorf("trace request %d arrives %s after the first at --speedup %g, past the simulator's horizon of %s of virtual time: raise --speedup, or replay less of the trace (--max-requests)",
				s.requests+1, fmtVirtual(at), o.Speedup, fmtVirtual(MaxVirtualMs))
		}
		if err := s.advance(at); err != nil {
			return VariantResult{}, nil, err
		}
		s.lastArrival = at
		if err := s.arrive(tq, at, vi); err != nil {
			return VariantResult{}, nil, err
		}
		if s.requests%every == 0 {
			if err := ctx.Err(); err != nil {
				return VariantResult{}, nil, err
			}
			if o.Progress != nil {
				o.Progress(Progress{Variant: v.name(), VariantIndex: vi, Variants: nv, Requests: s.requests, Total: total, VirtualMs: s.now})
			}
		}
	}
	if s.requests == 0 {
		return VariantResult{}, nil, ErrNoTrace
	}
	if w, ok := tr.(trace.Warner); ok {
		s.traceWarnings = w.Warnings()
	}
	if err := s.advance(math.Inf(1)); err != nil {
		return VariantResult{}, nil, err
	}
	if testHookEnd != nil {
		testHookEnd(s)
	}
	if o.Progress != nil {
		o.Progress(Progress{Variant: v.name(), VariantIndex: vi, Variants: nv, Requests: s.requests, Total: total, VirtualMs: s.now, Done: true})
	}
	vr := s.result()
	return vr, s, nil
}

func (v Variant) name() string {
	if v.Spec == "" {
		return "as deployed"
	}
	return v.Spec
}

func newState(o Options, plan *explain.Plan, dep *model.Deployment, v Variant) *state {
	s := &state{
		o: o, plan: plan, eng: o.Engine, bs: plan.BlockSize(), eagle: plan.Eagle(),
		rng:   explain.SeedRand(o.Base.Seed),
		units: map[routecore.WorkerWithDpRank]*unit{}, base: map[routecore.WorkerWithDpRank]routecore.RankLoad{},
		dirty: map[routecore.WorkerWithDpRank]bool{}, wpos: map[routecore.WorkerID][2]int{},
		domainIdx: map[string]int{}, fail: map[[2]string]*FailureCount{},
	}
	s.vr = VariantResult{Name: v.name(), Changes: v.Changes}
	s.stopAbove = -1
	if o.bounded {
		s.stopAbove = o.stopAbove
	}
	ri := plan.Router()
	s.vr.RouterMode = ri.Mode
	if ri.Policy != nil {
		s.vr.Enforcement = string(ri.Policy.Enforcement)
	} else {
		s.vr.Enforcement = "none"
	}
	s.ledger = routecore.NewActiveLedger(routecore.ActiveLedgerOptions{BlockSize: s.bs})
	cfg := plan.ScoringConfig()
	s.useIdx = plan.KV() && cfg.OverlapScoreCredit != 0
	s.approx = s.useIdx && !cfg.UseKvEvents
	s.weights = plan.TierWeights()
	s.trackDecodeBlocks = ri.Config.RouterTrackActiveBlocks
	s.reuseDecode = ri.Config.RouterAssumeKvReuse
	prefillPool, _ := plan.Pools()
	s.aggTracked = len(prefillPool) == 0 && s.trackDecodeBlocks && s.reuseDecode
	s.decodeCacheRead = ri.Config.ConditionalDisaggEnabled
	s.index = routecore.NewIndex()

	prefill, decode := plan.Pools()
	s.pools = [2][]routecore.Worker{prefill, decode}
	pods := map[string]int{}
	for p, pool := range s.pools {
		for i := range pool {
			w := &pool[i]
			s.wpos[w.ID] = [2]int{p, i}
			m, _ := plan.Member(w.ID)
			wi, ok := pods[m.Pod.Pod]
			if !ok {
				dom := s.domain(m.Pod.Domain.Effective())
				wi = len(s.workers)
				pods[m.Pod.Pod] = wi
				s.workers = append(s.workers, &workerStat{pod: m.Pod.Pod, role: m.Role, domain: dom, synthetic: m.Inst.Source != "" && len(m.Inst.Source) > 9 && m.Inst.Source[:9] == "simulate:"})
				if p == 0 {
					s.dPrefill[dom]++
				} else {
					s.dDecode[dom]++
				}
			}
			start, end := w.Runtime.DpRange()
			capacity, source := o.Engine.KvCapacityBlocks, o.Engine.KvCapacitySource
			if w.Runtime.TotalKvBlocks != nil && *w.Runtime.TotalKvBlocks > 0 {
				capacity, source = *w.Runtime.TotalKvBlocks, KvSourceCards
			}
			s.addCapacity(string(m.Role), capacity, cmp.Or(source, KvSourceDefault), int(end-start))
			gpus := float64(max(m.Pod.GPUs, 1)) / float64(max(end-start, 1))
			for r := start; r < end; r++ {
				k := routecore.WorkerWithDpRank{WorkerID: w.ID, DpRank: r}
				u := &unit{key: k, worker: wi, gpus: max(gpus, 1), cache: newLRU(capacity),
					prefills: p == 0 || len(prefill) == 0 || ri.Config.ConditionalDisaggEnabled, decodes: p == 1}
				s.units[k] = u
				s.workers[wi].units = append(s.workers[wi].units, u)
				s.base[k] = w.Loads[r]
			}
		}
	}
	busy := 0
	for _, l := range s.base {
		if l != (routecore.RankLoad{}) {
			busy++
		}
	}
	if busy > 0 {
		s.assumptions = append(s.assumptions, fmt.Sprintf("the loads observed at the start (%d worker rank(s) with load) stay as constant background load throughout, as traffic the trace does not contain; --assume-idle starts every worker idle", busy))
	}
	s.dLevels = make([][2]level, len(s.domains))
	s.breaches = make([]int, len(o.SLOs))
	s.domBreaches = make([][]int, len(s.domains))
	for d := range s.domBreaches {
		s.domBreaches[d] = make([]int, len(o.SLOs))
	}
	s.domReqs = make([]int, len(s.domains))
	s.domTTFT = make([]hist, len(s.domains))
	s.ser = newSeries(len(s.domains), 1000)
	if len(o.KV) > 0 && s.useIdx {
		s.seedCache(o.KV)
	}
	if s.approx {
		s.assumptions = append(s.assumptions, "the router runs in approximate mode (use_kv_events=false): its index is fed from its own routing decisions, not from KV events; router_ttl_secs expiry is not modelled, evictions follow the engine model")
	}
	return s
}

// addCapacity counts a worker of role with ranks dp ranks of capacity
// blocks each, from source, in the report's per-pool capacities.
func (s *state) addCapacity(role string, blocks uint64, source string, ranks int) {
	for i := range s.capacity {
		if c := &s.capacity[i]; c.Role == role && c.BlocksPerRank == blocks && c.Source == source {
			c.Workers++
			c.Ranks += ranks
			return
		}
	}
	s.capacity = append(s.capacity, PoolCapacity{Role: role, BlocksPerRank: blocks, Workers: 1, Ranks: ranks, Source: source})
}

func (s *state) domain(v string) int {
	if v == "" {
		v = "-"
	}
	if i, ok := s.domainIdx[v]; ok {
		return i
	}
	s.domainIdx[v] = len(s.domains)
	s.domains = append(s.domains, v)
	s.dPrefill = append(s.dPrefill, 0)
	s.dDecode = append(s.dDecode, 0)
	return len(s.domains) - 1
}

// seedCache applies the starting KV contents to the index and to the engine
// caches of the workers they name.
func (s *state) seedCache(sets []explain.EventSet) {
	bad := 0
	for _, set := range sets {
		if set.BlockSize > 0 && set.BlockSize != s.bs {
			continue
		}
		for _, ev := range set.Events {
			if err := s.index.ApplyEvent(ev); err != nil {
				bad++
				continue
			}
			st := ev.Event.Data.Stored
			if st == nil || ev.StorageTier != routecore.TierDevice {
				continue
			}
			u := s.units[routecore.WorkerWithDpRank{WorkerID: ev.WorkerID, DpRank: ev.Event.DpRank}]
			if u == nil {
				continue
			}
			seq := make([]routecore.SequenceHash, len(st.Blocks))
			for i, b := range st.Blocks {
				seq[i] = b.BlockHash
			}
			_, s.evicted = u.cache.store(seq, s.evicted[:0])
			s.emitRemoved(u, s.evicted)
		}
	}
	if bad > 0 {
		s.assumptions = append(s.assumptions, fmt.Sprintf("%d starting KV event(s) were rejected by the index and skipped", bad))
	}
}

func (s *state) push(e event) {
	if !(e.t <= MaxVirtualMs) { // +Inf and NaN too
		if s.err == nil {
			s.err = fmt.Errorf("the engine model's timings take a request past the simulator's horizon of %s of virtual time (an event at %s): check --engine-profile's figures and the trace's lengths", fmtVirtual(MaxVirtualMs), fmtVirtual(e.t))
		}
		return
	}
	s.evSeq++
	e.seq = s.evSeq
	heap.Push(&s.ev, e)
}

// stallLimit is how many events may be processed without virtual time
// advancing before the loop is declared stuck: each request puts a handful
// of events at one instant at most (prefill done, decode start, decode
// done, the stale events their reschedules leave), so a legitimate burst
// stays far below it.
func (s *state) stallLimit() uint64 { return 1024 + 16*uint64(s.requests) }

// advance processes every event up to time t. It fails when an engine time
// left the horizon, and when the loop stops advancing: more than stallLimit
// events at one instant mean an event keeps rescheduling itself at the time
// it runs, which would never end.
func (s *state) advance(t float64) error {
	for len(s.ev) > 0 && s.ev[0].t <= t {
		if s.err != nil {
			return s.err
		}
		e := heap.Pop(&s.ev).(event)
		if e.t > s.now {
			s.still = 0
		} else if s.still++; s.still > s.stallLimit() {
			return fmt.Errorf("%w: virtual time stopped advancing at %s (%d events without time passing); this is a bug in kubectl-dynamo's engine model: please report it with the command line", ErrInternal, fmtVirtual(s.now), s.still)
		}
		s.now = max(s.now, e.t)
		switch e.kind {
		case evPrefillDone:
			s.prefillDone(e.u, e.r)
		case evDecodeStart:
			s.decodeStart(e.u, e.r)
		case evDecodeDone:
			if e.ver == e.u.decVer {
				s.decodeDone(e.u)
			}
		}
	}
	if s.err != nil {
		return s.err
	}
	if !math.IsInf(t, 1) {
		s.now = max(s.now, t)
	}
	return nil
}

// fmtVirtual formats virtual milliseconds for messages.
func fmtVirtual(ms float64) string {
	if math.IsNaN(ms) || math.IsInf(ms, 0) || ms > 1e15 {
		return fmt.Sprintf("%g ms", ms)
	}
	d := time.Duration(ms * float64(time.Millisecond)).Round(time.Second)
	if days := d / (24 * time.Hour); days > 0 {
		return fmt.Sprintf("%dd%s", days, (d % (24 * time.Hour)).String())
	}
	return d.String()
}

// refreshLoads writes the ledger's view of every changed worker into the
// plan's pools (observed loads at the start stay as a baseline).
func (s *state) refreshLoads() {
	for k := range s.dirty {
		pos, ok := s.wpos[k.WorkerID]
		if !ok {
			continue
		}
		w := &s.pools[pos[0]][pos[1]]
		b, l := s.base[k], s.ledger.Load(k)
		b.ActivePrefillTokens += l.ActivePrefillTokens
		b.ActiveDecodeBlocks += l.ActiveDecodeBlocks
		b.ActiveRequests += l.ActiveRequests
		w.Loads[k.DpRank] = b
	}
	clear(s.dirty)
}

func (s *state) arrive(tq trace.Request, at float64, vi int) error {
	s.requests++
	s.inTokens += uint64(len(tq.Tokens))
	s.outTokens += uint64(max(tq.OutputTokens, 0))
	s.nextID++
	r := &req{id: s.nextID, idx: s.requests - 1, arrival: at, isl: len(tq.Tokens), osl: max(tq.OutputTokens, 1)}
	if r.isl == 0 {
		s.failed(r, "request", "EmptyPrompt", "the trace request has no tokens", -1)
		return nil
	}
	n := routecore.BlockCount(len(tq.Tokens), s.bs, s.eagle)
	var err error
	r.seq, r.local, err = routecore.BlockHashes(tq.Tokens, s.bs, routecore.HashOptions{Eagle: s.eagle},
		make([]routecore.SequenceHash, 0, n), make([]routecore.LocalBlockHash, 0, n))
	if err != nil {
		return fmt.Errorf("trace request %d: %w", r.idx+1, err)
	}
	rq := routecore.Request{ISL: r.isl, BlockSize: s.bs}
	var matches routecore.TieredMatches
	if s.useIdx {
		matches = s.index.FindTieredMatches(r.local)
		rq.Overlap = routecore.ToOverlapInput(matches, s.weights, uint32(s.bs), nil)
		rq.Overlap.TreeSizes = explain.TreeSizesForTies(s.plan.ScoringConfig(), s.index, matches)
	}
	if s.aggTracked {
		// The aggregated router books the request's blocks with KV reuse
		// assumed: the ledger says which are already held by in-flight
		// requests on each worker, and the rest are new (explain-route's rule
		// with the ledger it cannot see). Elsewhere the routing core applies
		// the hop's own rule (the decode override counts every block as new;
		// the prefill hop books none).
		rq.AdditionalActiveBlocks = map[routecore.WorkerWithDpRank]uint64{}
		s.ledger.AdditionalBlocks(r.seq, rq.AdditionalActiveBlocks)
		rq.AdditionalBlocksRule = routecore.AdditionalBlocksAllNew
	}
	s.refreshLoads()
	d, err := s.plan.Decide(rq, s.rng, explain.DecideOptions{PrefillCounter: &s.rrPre, DecodeCounter: &s.rrDec, SkipAlternatives: true})
	if err != nil {
		return fmt.Errorf("trace request %d: %w", r.idx+1, err)
	}
	if s.o.OnDecision != nil {
		s.o.OnDecision(vi, r.idx, d)
	}
	pre, dec, mode, fstage, fkind, ferr := outcome(d)
	preDom := -1
	if pre != nil {
		if u := s.unitOf(*pre); u != nil {
			preDom = s.workers[u.worker].domain
		}
	}
	if fkind != "" {
		s.failed(r, fstage, fkind, s.plan.Names(ferr), preDom)
		if fstage == routecore.StageDecode && pre != nil && s.unitOf(*pre) != nil {
			// Dynamo's PrefillRouter runs the remote prefill before the decode hop
			// routes: the prefill work is done (and cached) even though the
			// request then fails.
			r.pre = s.unitOf(*pre)
			r.wasted = true
			s.vr.WastedPrefills++
			s.dPicks(preDom, true)
			s.workers[r.pre.worker].picks++
			if err := s.ledger.Add(routecore.ActiveRequest{ID: r.id * 2, Worker: r.pre.key, ISL: r.isl, OverlapBlocks: s.overlapOn(matches, r.pre.key)}); err != nil {
				return err
			}
			s.dirty[r.pre.key] = true
			s.enqueuePrefill(r.pre, r)
		}
		return nil
	}
	r.dec = s.unitOf(*dec)
	if r.dec == nil {
		return fmt.Errorf("trace request %d: the router picked %v, which the simulation does not know", r.idx+1, *dec)
	}
	serve := r.dec
	if pre != nil {
		r.pre = s.unitOf(*pre)
		if r.pre == nil {
			return fmt.Errorf("trace request %d: the router picked %v, which the simulation does not know", r.idx+1, *pre)
		}
		serve = r.pre
	}
	switch mode {
	case routecore.DisaggModeAggregated:
		s.vr.Aggregated++
	case routecore.DisaggModeBypassed:
		s.vr.Bypassed++
	default:
		s.vr.Disaggregated++
	}
	s.vr.Routed++
	pb := uint64(len(r.seq))
	s.vr.PromptBlocks += pb
	r.hit = serve.cache.prefix(r.seq)
	s.vr.CachedBlocks += uint64(r.hit)
	s.workers[serve.worker].picks++
	sd := s.workers[serve.worker].domain
	r.dom = sd
	s.domReqs[sd]++
	b := s.ser.at(at)
	b.routed[sd]++
	if pre != nil {
		s.dPicks(sd, true)
		s.workers[r.dec.worker].picks++
		dd := s.workers[r.dec.worker].domain
		s.dPicks(dd, false)
		pv, dv := s.domains[sd], s.domains[dd]
		switch {
		case pv == "-" || dv == "-":
			s.vr.UnknownDomainTransfers++
		case pv == dv:
			s.vr.SameDomainTransfers++
		default:
			s.vr.CrossDomainTransfers++
			r.crossDom = true
		}
	} else {
		s.dPicks(sd, true)
		s.dPicks(sd, false)
	}

	// The router's bookings (add_request on each hop that routed it).
	overlap := s.overlapOn(matches, serve.key)
	if r.pre != nil {
		if err := s.ledger.Add(routecore.ActiveRequest{ID: r.id * 2, Worker: r.pre.key, ISL: r.isl, OverlapBlocks: overlap}); err != nil {
			return err
		}
		s.dirty[r.pre.key] = true
		ar := routecore.ActiveRequest{ID: r.id*2 + 1, Worker: r.dec.key, ISL: r.isl, SkipPrefillTracking: true}
		if s.trackDecodeBlocks {
			ar.PrivateBlocks = len(r.seq) // the decode override: assume_kv_reuse=false
		}
		if err := s.ledger.Add(ar); err != nil {
			return err
		}
		s.dirty[r.dec.key] = true
	} else {
		ar := routecore.ActiveRequest{ID: r.id*2 + 1, Worker: r.dec.key, ISL: r.isl, OverlapBlocks: overlap}
		if s.trackDecodeBlocks {
			if s.reuseDecode {
				ar.Blocks = r.seq
			} else {
				ar.PrivateBlocks = len(r.seq)
			}
		}
		if err := s.ledger.Add(ar); err != nil {
			return err
		}
		s.dirty[r.dec.key] = true
	}
	if s.approx {
		s.storeBlocks(serve, r)
	}
	s.enqueuePrefill(serve, r)
	return nil
}

func (s *state) overlapOn(m routecore.TieredMatches, k routecore.WorkerWithDpRank) uint32 {
	if !s.useIdx {
		return 0
	}
	return m.Hits(routecore.TierDevice, k)
}

func (s *state) dPicks(d int, prefill bool) {
	if prefill {
		s.vrDomain(d).PrefillPicks++
	} else {
		s.vrDomain(d).DecodePicks++
	}
}

func (s *state) vrDomain(d int) *DomainResult {
	for len(s.vr.Domains) <= d {
		s.vr.Domains = append(s.vr.Domains, DomainResult{})
	}
	return &s.vr.Domains[d]
}

// unitOf returns the unit a pick lands on. A KV pick names its dp rank; a
// non-KV pick (round-robin, random, …) names an instance only — the engine's
// own data-parallel balancer places the request among its ranks, which is not
// visible — and lands on the instance's first rank (an instance whose ranks
// do not start at 0, as a vLLM hybrid-LB pod's, included).
func (s *state) unitOf(k routecore.WorkerWithDpRank) *unit {
	if u := s.units[k]; u != nil {
		return u
	}
	pos, ok := s.wpos[k.WorkerID]
	if !ok || k.DpRank != 0 {
		return nil
	}
	start, _ := s.pools[pos[0]][pos[1]].Runtime.DpRange()
	return s.units[routecore.WorkerWithDpRank{WorkerID: k.WorkerID, DpRank: start}]
}

// outcome reads a decision: the prefill and decode picks (prefill nil when
// served on one worker), how it was served, or why it failed. Each hop is
// read from the non-KV pick when that hop ran one, else from the KV flow
// (hops may run different modes).
func outcome(d explain.CoreDecision) (pre, dec *routecore.WorkerWithDpRank, mode routecore.DisaggMode, stage, kind, msg string) {
	if r := d.Refused; r != nil {
		// The frontend refuses the request before either hop routes: the
		// model is not ready at the release read (pkg/behavior).
		return nil, nil, "", explain.StageFrontend, r.Kind, fmt.Sprintf("HTTP %d: %s", r.Status, r.Message)
	}
	kd := d.KV
	id := func(w routecore.WorkerID) *routecore.WorkerWithDpRank {
		return &routecore.WorkerWithDpRank{WorkerID: w}
	}
	// Aggregated (no prefill hop at all).
	if d.Prefill == nil && (kd == nil || kd.Mode == routecore.DisaggModeAggregated) {
		mode = routecore.DisaggModeAggregated
		switch {
		case d.Decode != nil && d.Decode.ErrorKind != "":
			return nil, nil, mode, routecore.StageDecode, d.Decode.ErrorKind, d.Decode.Error
		case d.Decode != nil:
			return nil, id(d.Decode.Selected), mode, "", "", ""
		case kd.Err != nil:
			return nil, nil, mode, kd.FailedStage, cmp.Or(kd.Decode.ErrorKind, "RouterError"), kd.Error
		}
		sel := kd.Decode.Selected
		return nil, &sel, mode, "", "", ""
	}
	if kd != nil && kd.Mode == routecore.DisaggModeBypassed {
		if kd.Err != nil {
			return nil, nil, kd.Mode, kd.FailedStage, cmp.Or(kd.Decode.ErrorKind, "RouterError"), kd.Error
		}
		sel := kd.Decode.Selected
		return nil, &sel, kd.Mode, "", "", ""
	}
	mode = routecore.DisaggModeDisaggregated
	// The prefill hop.
	switch {
	case d.Prefill != nil && d.Prefill.ErrorKind != "":
		return nil, nil, mode, routecore.StagePrefill, d.Prefill.ErrorKind, d.Prefill.Error
	case d.Prefill != nil:
		pre = id(d.Prefill.Selected)
	case kd.FailedStage == routecore.StagePrefill:
		k := ""
		if kd.Prefill != nil {
			k = kd.Prefill.ErrorKind
		}
		return nil, nil, mode, routecore.StagePrefill, cmp.Or(k, "RouterError"), kd.Error
	default:
		p := kd.Prefill.Selected
		pre = &p
	}
	// The transfer derivation.
	if t := d.Transfer; t != nil && t.Failed {
		return pre, nil, mode, routecore.StageTransfer, string(t.Rule), t.Explanation
	}
	// The decode hop.
	switch {
	case d.Decode != nil && d.Decode.ErrorKind != "":
		return pre, nil, mode, routecore.StageDecode, d.Decode.ErrorKind, d.Decode.Error
	case d.Decode != nil:
		return pre, id(d.Decode.Selected), mode, "", "", ""
	case kd.Err != nil:
		k := ""
		if kd.Decode != nil {
			k = kd.Decode.ErrorKind
		}
		return pre, nil, mode, cmp.Or(kd.FailedStage, routecore.StageDecode), cmp.Or(k, "RouterError"), kd.Error
	}
	sel := kd.Decode.Selected
	return pre, &sel, mode, "", "", ""
}

func (s *state) failed(r *req, stage, kind, msg string, preDom int) {
	s.vr.Failed++
	if s.stopAbove >= 0 && s.vr.Failed > s.stopAbove && s.err == nil {
		// A candidate of the search (Recommend) already worse than the best.
		s.err = errWorse
	}
	if stage == routecore.StagePrefill {
		// Load the prefill pool was offered and did not take.
		s.refusedPrefillTokens += float64(r.isl)
	}
	k := [2]string{stage, kind}
	fc := s.fail[k]
	if fc == nil {
		fc = &FailureCount{Stage: stage, Kind: kind, Example: msg}
		s.fail[k] = fc
	}
	fc.Count++
	// A failed request never gets a first token: it misses every objective.
	for i := range s.breaches {
		s.breaches[i]++
		if preDom >= 0 {
			s.domBreaches[preDom][i]++
		}
	}
	if preDom >= 0 {
		s.domReqs[preDom]++
		s.vrDomain(preDom).Failed++
		s.ser.at(r.arrival).failed[preDom]++
	} else {
		s.vr.NoDomainFailed++
		s.ser.at(r.arrival).noDomainFailed++
	}
	s.end = max(s.end, r.arrival)
}

// checkSLOs counts a routed request's breaches of the objectives on metric.
func (s *state) checkSLOs(metric string, r *req, ms float64) {
	for i, o := range s.o.SLOs {
		if o.Metric == metric && ms > o.TargetMs {
			s.breaches[i]++
			s.domBreaches[r.dom][i]++
		}
	}
}

// --- engine model ---------------------------------------------------------

// bump changes a unit's in-flight prefill (queued or prefilling) and active
// decode counts, and with them its worker's load, its domain's loads and the
// series' load areas.
func (s *state) bump(u *unit, dPrefill, dDecode int) {
	w := s.workers[u.worker]
	d := w.domain
	lv := &s.dLevels[d]
	s.ser.area(d, false, lv[0].cur, lv[0].since, s.now)
	s.ser.area(d, true, lv[1].cur, lv[1].since, s.now)
	lv[0].set(s.now, lv[0].cur+dPrefill)
	lv[1].set(s.now, lv[1].cur+dDecode)
	u.inPrefill += dPrefill
	u.inDecode += dDecode
	w.level.set(s.now, w.level.cur+dPrefill+dDecode)
}

func (s *state) enqueuePrefill(u *unit, r *req) {
	s.bump(u, 1, 0)
	u.queue = append(u.queue, r)
	if u.prefilling == nil {
		s.startPrefill(u)
	}
}

func (s *state) startPrefill(u *unit) {
	if len(u.queue) == 0 {
		return
	}
	r := u.queue[0]
	u.queue = u.queue[1:]
	if len(u.queue) == 0 {
		u.queue = nil
	}
	u.prefilling = r
	// The cache may have grown since routing (an earlier prompt of the same
	// prefix finished): the engine reuses what it holds now.
	hit := u.cache.prefix(r.seq)
	newTokens := max(r.isl-hit*s.bs, 0)
	u.prefillTokens += float64(newTokens)
	ms := float64(float64(newTokens) / float64(s.eng.PrefillTokensPerSecondPerGPU*u.gpus) * 1000)
	s.push(event{t: s.now + ms, kind: evPrefillDone, u: u, r: r})
}

func (s *state) prefillDone(u *unit, r *req) {
	u.prefilling = nil
	s.bump(u, -1, 0)
	if !s.approx {
		s.storeBlocks(u, r)
	}
	switch {
	case r.wasted:
		_ = s.ledger.Free(r.id * 2)
		s.dirty[u.key] = true
		s.end = max(s.end, s.now)
	case r.pre != nil:
		// The prefill hop's booking ends with the prefill response.
		_ = s.ledger.Free(r.id * 2)
		s.dirty[u.key] = true
		per := s.eng.KvTransferMsPerBlock
		if r.crossDom {
			per = s.eng.KvTransferMsPerBlockCrossDomain
		}
		s.push(event{t: s.now + float64(per*float64(len(r.seq))), kind: evDecodeStart, u: r.dec, r: r})
	default:
		s.decodeStart(u, r)
	}
	s.startPrefill(u)
}

// storeBlocks puts the prompt's blocks in the unit's cache and publishes the
// KV events the router's index applies.
func (s *state) storeBlocks(u *unit, r *req) {
	if len(r.seq) == 0 {
		return
	}
	var firstNew int
	firstNew, s.evicted = u.cache.store(r.seq, s.evicted[:0])
	s.emitRemoved(u, s.evicted)
	if !s.useIdx || firstNew >= len(r.seq) {
		return
	}
	st := &routecore.KvCacheStoreData{Blocks: make([]routecore.KvCacheStoredBlock, 0, len(r.seq)-firstNew)}
	if firstNew > 0 {
		p := r.seq[firstNew-1]
		st.ParentHash = &p
	}
	for i := firstNew; i < len(r.seq); i++ {
		st.Blocks = append(st.Blocks, routecore.KvCacheStoredBlock{BlockHash: r.seq[i], TokensHash: r.local[i]})
	}
	s.events++
	_ = s.index.ApplyEvent(routecore.RouterEvent{WorkerID: u.key.WorkerID, Event: routecore.KvCacheEvent{EventID: s.events, DpRank: u.key.DpRank, Data: routecore.KvCacheEventData{Stored: st}}})
}

func (s *state) emitRemoved(u *unit, hashes []routecore.SequenceHash) {
	if len(hashes) == 0 {
		return
	}
	s.workers[u.worker].evicted += uint64(len(hashes))
	s.vr.EvictedBlocks += uint64(len(hashes))
	if !s.useIdx {
		return
	}
	s.events++
	_ = s.index.ApplyEvent(routecore.RouterEvent{WorkerID: u.key.WorkerID, Event: routecore.KvCacheEvent{EventID: s.events, DpRank: u.key.DpRank, Data: routecore.KvCacheEventData{Removed: &routecore.KvCacheRemoveData{BlockHashes: slices.Clone(hashes)}}}})
}

// decAdvance moves the unit's decode progress to now.
func (s *state) decAdvance(u *unit) {
	if n := u.decHeap.Len(); n > 0 && s.now > u.decLast {
		u.decG += (s.now - u.decLast) / s.eng.stepMs(n)
	}
	u.decLast = s.now
}

func (s *state) decReschedule(u *unit) {
	u.decVer++
	if u.decHeap.Len() == 0 {
		return
	}
	next := u.decHeap[0].target
	dt := float64(max(next-u.decG, 0) * s.eng.stepMs(u.decHeap.Len()))
	s.push(event{t: s.now + dt, kind: evDecodeDone, u: u, ver: u.decVer})
}

func (s *state) decodeStart(u *unit, r *req) {
	if r.pre != nil && !s.approx && s.decodeCacheRead {
		// The transferred blocks land in the decode worker's cache (modelled
		// only where something reads it: see decodeCacheRead).
		s.storeBlocks(u, r)
	}
	_ = s.ledger.MarkPrefillCompleted(r.id*2 + 1)
	s.dirty[u.key] = true
	s.decAdvance(u)
	s.bump(u, 0, 1)
	u.decodeTokens += float64(r.osl)
	heap.Push(&u.decHeap, decEntry{target: u.decG + float64(r.osl), r: r})
	r.firstTok = s.now + s.eng.stepMs(u.decHeap.Len())
	s.ttft.add(r.firstTok - r.arrival)
	s.domTTFT[r.dom].add(r.firstTok - r.arrival)
	s.checkSLOs(MetricTTFT, r, r.firstTok-r.arrival)
	s.decReschedule(u)
}

// testHookDoneTol, set by tests, replaces doneTol.
var testHookDoneTol func(s *state, u *unit) float64

// doneTol is how many tokens short of its target a sequence may be and still
// count as finished: at least 1e-9, and no less than what the clock can
// resolve at now (a few ulps of now, in tokens) and what the token counter
// decG can (a few of its ulps). With a fixed 1e-9 the remaining time of a
// sequence fell below the clock's precision once virtual time passed about
// 1.5 days (at the default step), and its completion was scheduled at the
// same instant forever.
func (s *state) doneTol(u *unit) float64 {
	if testHookDoneTol != nil {
		return testHookDoneTol(s, u)
	}
	return max(1e-9, 4*ulp(s.now)/s.eng.stepMs(u.decHeap.Len()), 4*ulp(u.decG))
}

func ulp(x float64) float64 {
	x = math.Abs(x)
	return math.Nextafter(x, math.Inf(1)) - x
}

func (s *state) decodeDone(u *unit) {
	s.decAdvance(u)
	tol := s.doneTol(u)
	for u.decHeap.Len() > 0 && u.decHeap[0].target <= u.decG+tol {
		e := heap.Pop(&u.decHeap).(decEntry)
		s.bump(u, 0, -1)
		_ = s.ledger.Free(e.r.id*2 + 1)
		s.dirty[u.key] = true
		s.e2e.add(s.now - e.r.arrival)
		s.checkSLOs(MetricE2E, e.r, s.now-e.r.arrival)
		s.end = max(s.end, s.now)
	}
	s.decReschedule(u)
}
