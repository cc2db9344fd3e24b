package audit

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// Options tune the audit.
type Options struct {
	// MinProbability flags a pick made at temperature > 0 whose softmax
	// probability is below it (default DefaultMinProbability).
	MinProbability float64
	// MaxDisagreements bounds the disagreements listed (all are counted);
	// default DefaultMaxDisagreements.
	MaxDisagreements int
	// MaxDecisionsListed bounds Report.Decisions; default
	// DefaultMaxDecisionsListed.
	MaxDecisionsListed int
}

// Defaults of Options.
const (
	DefaultMinProbability     = 0.01
	DefaultMaxDisagreements   = 200
	DefaultMaxDecisionsListed = 10_000
)

// Input is what an audit reads: the records of every log stream (in stream
// order), the streams' statistics, and the model (nil: the checks that need
// it do not run).
type Input struct {
	Records []Record
	Streams []StreamStats
	Model   *Model
}

// DebugLogFilter is the DYN_LOG value under which the frontend logs every line
// the audit reads.
const DebugLogFilter = "info,dynamo_kv_router::scheduling::selector=debug,dynamo_llm::kv_router=debug"

// Not-covered reasons.
const (
	reasonNoSelected   = "no Selected line (INFO filtered out for the selector)"
	reasonNoFormulas   = "no Formula lines (DEBUG off for dynamo_kv_router::scheduling::selector)"
	reasonPinned       = "a pinned or session-affinity pick: nothing was chosen"
	reasonNoModel      = "no model of the deployment"
	reasonNoIndex      = "no KV index (the capture holds no KvEvents)"
	reasonNoInput      = "no [ROUTING_INPUT] line (DEBUG off for dynamo_llm::kv_router, or a release that does not log it)"
	reasonCutHashes    = "the logged local hashes are fewer than num_blocks (a cut line)"
	reasonNoPrefill    = "the request's prefill decision is not in the logs"
	reasonUnknownSel   = "the selected worker is unknown to the model"
	reasonZeroCost     = "zero cost: a multiplier does not show on 0"
	reasonNoComparable = "no line carries a cached-blocks value"
)

// Audit joins the records into decisions and runs the five checks on each.
func Audit(in Input, opts Options) *Report {
	if opts.MinProbability <= 0 {
		opts.MinProbability = DefaultMinProbability
	}
	if opts.MaxDisagreements <= 0 {
		opts.MaxDisagreements = DefaultMaxDisagreements
	}
	if opts.MaxDecisionsListed <= 0 {
		opts.MaxDecisionsListed = DefaultMaxDecisionsListed
	}
	decisions, incomplete, js := Join(in.Records)
	a := &auditor{m: in.Model, opts: opts, byHop: map[string]map[CheckName]*tally{}, all: map[CheckName]*tally{},
		prefillByReq: map[reqKey][]*Decision{}, anonDecode: map[string][]int{}}
	for _, c := range Checks {
		a.all[c] = &tally{}
	}
	a.all[CheckArithmetic].lines = &LineCount{}
	rep := &Report{APIVersion: APIVersion, Kind: Kind, Checks: []CheckResult{}, Logs: Logs{Streams: in.Streams, Join: js}}
	for _, s := range in.Streams {
		if s.First != "" && (rep.Logs.First == "" || s.First < rep.Logs.First) {
			rep.Logs.First = s.First
		}
		if s.Last > rep.Logs.Last {
			rep.Logs.Last = s.Last
		}
	}
	if m := in.Model; m != nil {
		rep.Context, rep.Deployment, rep.RouterMode, rep.Release = m.Context, m.Deployment, string(m.Mode), m.Release
		for _, d := range decisions {
			if d.Hop == "" {
				if w, ok := d.Worker(); ok {
					d.Hop = m.hopOf(w.WorkerID)
				}
			}
		}
	}
	for _, d := range decisions {
		if d.Hop == HopPrefill && d.Selected != nil {
			// Lines without request ids (older selectors) are in stream
			// order: a decode decision's prefill is the one just before it.
			k := reqKey{d.Source, d.RequestID}
			a.prefillByReq[k] = append(a.prefillByReq[k], d)
		}
		if d.Hop == HopDecode && d.RequestID == "" {
			a.anonDecode[d.Source] = append(a.anonDecode[d.Source], d.Seq)
		}
	}
	for _, d := range decisions {
		a.decision(d)
	}
	for _, group := range incomplete {
		for _, r := range group {
			if a.inDecision(r) {
				continue
			}
			a.all[CheckArithmetic].lines.Checked++
			if dis := a.formula(nil, r); dis != nil {
				a.add(*dis)
			} else {
				a.all[CheckArithmetic].lines.Agreed++
			}
		}
	}
	for _, c := range Checks {
		rep.Checks = append(rep.Checks, a.all[c].result(c, ""))
	}
	hops := make([]string, 0, len(a.byHop))
	for h := range a.byHop {
		hops = append(hops, h)
	}
	slices.SortFunc(hops, hopOrder)
	for _, h := range hops {
		hr := HopResult{Hop: h, Decisions: a.hopDecisions[h]}
		for _, c := range Checks {
			t := a.byHop[h][c]
			if t == nil {
				t = &tally{}
			}
			hr.Checks = append(hr.Checks, t.result(c, h))
		}
		rep.Hops = append(rep.Hops, hr)
	}
	covered, agreed := 0, 0
	for _, c := range rep.Checks {
		covered += c.Covered
		agreed += c.Agreed
	}
	if covered > 0 {
		r := float64(agreed) / float64(covered)
		rep.Agreement = &r
	}
	if len(a.dis) > opts.MaxDisagreements {
		rep.DisagreementsOmitted = len(a.dis) - opts.MaxDisagreements
		a.dis = a.dis[:opts.MaxDisagreements]
	}
	rep.Disagreements = a.dis
	if len(a.results) > opts.MaxDecisionsListed {
		rep.DecisionsOmitted = len(a.results) - opts.MaxDecisionsListed
		a.results = a.results[:opts.MaxDecisionsListed]
	}
	rep.Decisions = a.results
	rep.Notes = a.notes(in, rep, decisions)
	return rep
}

// hopOrder puts prefill before decode, then the rest by name.
func hopOrder(a, b string) int {
	rank := func(h string) int {
		switch h {
		case HopPrefill:
			return 0
		case HopDecode:
			return 1
		}
		return 2
	}
	if ra, rb := rank(a), rank(b); ra != rb {
		return ra - rb
	}
	return strings.Compare(a, b)
}

type auditor struct {
	m            *Model
	opts         Options
	byHop        map[string]map[CheckName]*tally
	hopDecisions map[string]int
	all          map[CheckName]*tally
	prefillByReq map[reqKey][]*Decision
	anonDecode   map[string][]int
	dis          []Disagreement
	results      []DecisionResult
	seen         map[*Record]bool
	noFormulas   int
	noSelected   int
	noInput      int
}

// inDecision reports whether a Formula record was checked with a decision.
func (a *auditor) inDecision(r *Record) bool { return a.seen[r] }

func (a *auditor) count(d *Decision, dr *DecisionResult, c CheckName, outcome, reason string) {
	hop := d.Hop
	if hop == "" {
		hop = "unknown"
	}
	if a.byHop[hop] == nil {
		a.byHop[hop] = map[CheckName]*tally{}
	}
	t := a.byHop[hop][c]
	if t == nil {
		t = &tally{}
		a.byHop[hop][c] = t
	}
	t.add(outcome, reason)
	a.all[c].add(outcome, reason)
	dr.Checks[c] = outcome
	if outcome == OutcomeNotCovered {
		if dr.NotCovered == nil {
			dr.NotCovered = map[CheckName]string{}
		}
		dr.NotCovered[c] = reason
	}
}

// decision runs every check on one decision.
func (a *auditor) decision(d *Decision) {
	if a.seen == nil {
		a.seen, a.hopDecisions = map[*Record]bool{}, map[string]int{}
	}
	hop := d.Hop
	if hop == "" {
		hop = "unknown"
	}
	a.hopDecisions[hop]++
	dr := DecisionResult{Seq: d.Seq, Source: d.Source, RequestID: d.RequestID, Hop: d.Hop, Candidates: len(d.Formulas),
		Checks: map[CheckName]string{}, Lines: d.Lines()}
	if w, ok := d.Worker(); ok {
		dr.Selected, dr.SelectedID, dr.DpRank = a.m.Name(w.WorkerID), w.WorkerID, w.DpRank
	}
	if d.Selected != nil {
		dr.Logit = d.Selected.Selection.Logit.Text
	} else {
		a.noSelected++
	}
	if len(d.Formulas) == 0 {
		a.noFormulas++
	}
	if d.Input == nil {
		a.noInput++
	}

	// 1. arithmetic
	if len(d.Formulas) == 0 {
		a.count(d, &dr, CheckArithmetic, OutcomeNotCovered, reasonNoFormulas)
	} else {
		ok := true
		for _, r := range d.Formulas {
			a.seen[r] = true
			a.all[CheckArithmetic].lines.Checked++
			if dis := a.formula(d, r); dis != nil {
				ok = false
				a.add(*dis)
			} else {
				a.all[CheckArithmetic].lines.Agreed++
			}
		}
		a.count(d, &dr, CheckArithmetic, outcome(ok), "")
	}

	constraints, cErr := a.constraints(d)

	// 2. choice
	out, reason, dis := a.choice(d, constraints, cErr, &dr)
	a.count(d, &dr, CheckChoice, out, reason)
	a.add(dis...)

	// 3. transfer
	out, reason, dis = a.transfer(d, constraints, cErr)
	a.count(d, &dr, CheckTransfer, out, reason)
	a.add(dis...)

	// 4. state
	out, reason, dis = a.state(d)
	a.count(d, &dr, CheckState, out, reason)
	a.add(dis...)

	// 5. candidates
	out, reason, dis = a.candidates(d, constraints, cErr)
	a.count(d, &dr, CheckCandidates, out, reason)
	a.add(dis...)

	a.results = append(a.results, dr)
}

func outcome(ok bool) string {
	if ok {
		return OutcomeAgree
	}
	return OutcomeDisagree
}

func (a *auditor) add(ds ...Disagreement) { a.dis = append(a.dis, ds...) }

// disagree builds a disagreement about worker w of decision d.
func (a *auditor) disagree(d *Decision, c CheckName, w routecore.WorkerWithDpRank, field, logged, expected, kind, cause string, lines ...Position) Disagreement {
	dis := Disagreement{Check: c, Field: field, Logged: logged, Expected: expected, CauseKind: kind, Cause: cause,
		WorkerID: w.WorkerID, DpRank: w.DpRank, Worker: a.m.Name(w.WorkerID), Lines: lines}
	if d != nil {
		dis.Hop, dis.RequestID, dis.Decision = d.Hop, d.RequestID, d.Seq
		if len(lines) == 0 {
			dis.Lines = d.Lines()
		}
	}
	dis.Findings = a.m.findings(causeFindings[kind]...)
	return dis
}

// causeFindings are the finding ids that point the same way as a cause.
var causeFindings = map[string][]string{
	CauseReleaseDrift:  {"MixedDynamoReleases"},
	CauseStaleIndex:    {"KvEventsNotPublished", "RouterReplicasNotSynced"},
	CauseMissingEvents: {"KvEventsNotPublished", "RouterReplicasNotSynced"},
	CauseHashSpace:     {"KvHashSpaceMismatch"},
	CauseUnknownWorker: {"WorkersNotRegistered", "NotReadyWorkers", "WorkerPodsPending"},
	CauseRegistration:  {"WorkersNotRegistered", "NotReadyWorkers", "WorkerPodsPending", "AllWorkersBusy"},
	CauseLoadDrift:     {"AllWorkersBusy"},
	CauseDomainDrift:   {"TopologyLabelDrift", "WorkerMissingDomain", "TransferDomainNotPublished", "EnforcementMissing", "PolicyMismatch", "PolicyWithoutTopologyEnv"},
	CauseUnreadConfig:  {"PolicyMismatch"},
}

// ---- 1. arithmetic ----

// ival is a closed interval: a printed number stands for every value that
// rounds to it.
type ival struct{ lo, hi float64 }

func iv(n Number) ival { h := n.Half(); return ival{n.Value - h, n.Value + h} }

func (x ival) add(y ival) ival { return ival{x.lo + y.lo, x.hi + y.hi} }
func (x ival) sub(y ival) ival { return ival{x.lo - y.hi, x.hi - y.lo} }
func (x ival) mul(y ival) ival {
	c := []float64{x.lo * y.lo, x.lo * y.hi, x.hi * y.lo, x.hi * y.hi}
	return ival{slices.Min(c), slices.Max(c)}
}
func (x ival) max0() ival { return ival{math.Max(x.lo, 0), math.Max(x.hi, 0)} }

// meets reports whether the intervals overlap, with a relative slack for
// the float operations themselves.
func (x ival) meets(y ival) bool {
	if math.IsNaN(x.lo) || math.IsNaN(x.hi) || math.IsNaN(y.lo) || math.IsNaN(y.hi) {
		return false
	}
	size := 0.0
	for _, v := range []float64{x.lo, x.hi, y.lo, y.hi} {
		if !math.IsInf(v, 0) {
			size = math.Max(size, math.Abs(v))
		}
	}
	eps := float64(1e-9 * (1 + size)) // rounded: never fused into the sums below (arm64)
	return x.lo <= y.hi+eps && y.lo <= x.hi+eps
}

// formula checks one Formula line: its terms, combined in the router's
// operation order (DefaultWorkerScorer::worker_logit; routecore's
// CandidateLogit), give its logit to the printed precision. d may be nil (a
// line of an incomplete decision).
func (a *auditor) formula(d *Decision, r *Record) *Disagreement {
	f := r.Formula
	w := f.Worker
	clamp := true
	if a.m != nil {
		clamp = a.m.Behavior.ClampAdjustedPrefill
	}
	mk := func(field, logged, expected, kind, cause string) *Disagreement {
		dis := a.disagree(d, CheckArithmetic, w, field, logged, expected, kind, cause, r.Pos)
		if d == nil {
			dis.RequestID, dis.Hop = r.RequestID, r.WorkerType
		}
		return &dis
	}
	switch f.Shape {
	case ShapePrefill:
		diff := iv(f.Raw).sub(iv(f.Credit))
		adj := diff
		if clamp {
			adj = diff.max0()
		}
		if !adj.meets(iv(f.Adjusted)) {
			point := f.Raw.Value - f.Credit.Value
			if clamp {
				point = math.Max(point, 0)
			}
			kind, cause := CauseReleaseDrift, "the router computes adjusted_prefill_blocks otherwise than max(0, raw − credit): a selector the model does not port (a newer release, or a custom selection policy)"
			switch {
			case clamp && f.Adjusted.Value < 0 && diff.meets(iv(f.Adjusted)):
				cause = "the router keeps a negative adjusted prefill cost: it predates the clamp (a Dynamo release before 1.2) while the model follows " + a.release() + "; pass --dynamo-version with the router's release"
			case !clamp && diff.max0().meets(iv(f.Adjusted)):
				cause = "the router clamps the adjusted prefill cost at 0 (Dynamo 1.2 and later) while the model follows an older release; pass --dynamo-version with the router's release"
			}
			return mk("adjusted_prefill_blocks", f.Adjusted.Text, Printed(point, 3).Text, kind, cause)
		}
		sum := iv(f.Scale).mul(iv(f.Adjusted)).add(iv(f.Decode)).add(iv(f.RequestCost))
		if !sum.meets(iv(f.Logit)) {
			p := float64(f.Scale.Value*f.Adjusted.Value) + f.Decode.Value + f.RequestCost.Value
			return mk("logit", f.Logit.Text, Printed(p, 3).Text, CauseReleaseDrift,
				"the logged terms do not add up to the logged logit (prefill_load_scale·adjusted + decode + active-request cost): the router costs candidates otherwise than the release the model ports (a newer release, or a custom selection policy)")
		}
	case ShapeDecodeOverlap:
		sum := iv(f.Decode).sub(iv(f.Credit)).max0().add(iv(f.RequestCost))
		if !sum.meets(iv(f.Logit)) {
			p := math.Max(f.Decode.Value-f.Credit.Value, 0) + f.RequestCost.Value
			return mk("logit", f.Logit.Text, Printed(p, 3).Text, CauseReleaseDrift,
				"the logged terms do not give the logged logit of the decode branch (max(0, decode − credit) + active-request cost): the router costs candidates otherwise than the release the model ports")
		}
	case ShapeWeighted:
		sum := iv(f.Weight).mul(iv(f.PrefillBlocks)).add(iv(f.Decode))
		if !sum.meets(iv(f.Logit)) {
			p := float64(f.Weight.Value*f.PrefillBlocks.Value) + f.Decode.Value
			return mk("logit", f.Logit.Text, Printed(p, 3).Text, CauseReleaseDrift,
				"the logged terms do not give the logged logit (overlap_score_weight·prefill blocks + decode blocks): the router costs candidates otherwise than this selector generation")
		}
	}
	return nil
}

func (a *auditor) release() string {
	if a.m == nil || a.m.Release == "" {
		return "the newest release"
	}
	return "Dynamo " + a.m.Release
}

// ---- the transfer constraint of a decode decision ----

// constraints derives the routing constraint the decode hop of d ran with,
// from the request's prefill pick and the model's transfer policy
// (routecore.DeriveTransferConstraints); empty for a prefill decision or an
// aggregated deployment. The error says why it cannot be known (a
// not-covered reason).
func (a *auditor) constraints(d *Decision) (routecore.RoutingConstraints, error) {
	if a.m == nil {
		return routecore.RoutingConstraints{}, fmt.Errorf("%s", reasonNoModel)
	}
	if d.Hop == HopPrefill || len(a.m.Prefill.Workers) == 0 {
		return routecore.RoutingConstraints{}, nil
	}
	p := a.prefillFor(d)
	if p == nil {
		return routecore.RoutingConstraints{}, fmt.Errorf("%s", reasonNoPrefill)
	}
	deriv, err := routecore.DeriveTransferConstraints(a.m.prefillConfigs(), p.Selected.Selection.Worker.WorkerID)
	if err != nil {
		return routecore.RoutingConstraints{}, fmt.Errorf("the model derives no constraint from prefill worker %s: %w", a.m.Name(p.Selected.Selection.Worker.WorkerID), err)
	}
	return deriv.Constraints, nil
}

// prefillFor is the request's latest prefill decision before d; for lines
// without request ids, the stream's prefill decision just before d, when no
// decode decision came between them.
func (a *auditor) prefillFor(d *Decision) *Decision {
	var best *Decision
	for _, p := range a.prefillByReq[reqKey{d.Source, d.RequestID}] {
		if p.Seq < d.Seq {
			best = p
		}
	}
	if d.RequestID == "" && best != nil && a.lastDecodeBefore(d) > best.Seq {
		return nil
	}
	return best
}

// lastDecodeBefore is the Seq of the last position-joined decode decision
// of d's stream before d.
func (a *auditor) lastDecodeBefore(d *Decision) int {
	last := 0
	for _, s := range a.anonDecode[d.Source] {
		if s < d.Seq {
			last = s
		}
	}
	return last
}

// multiplier is the preferred-taint multiplier routecore applies to worker
// id under c (1 when c has no preferred taints or the worker is unknown).
func (a *auditor) multiplier(c routecore.RoutingConstraints, id routecore.WorkerID) float64 {
	if a.m == nil {
		return 1
	}
	w, ok := a.m.worker(id)
	if !ok {
		return 1
	}
	m, _, _, has := routecore.PreferredTaintMultiplier(c, w.Runtime.EffectiveTaints())
	if !has {
		return 1
	}
	return m
}

// ---- 2. choice ----

func (a *auditor) choice(d *Decision, c routecore.RoutingConstraints, cErr error, dr *DecisionResult) (string, string, []Disagreement) {
	switch {
	case d.Selected == nil:
		return OutcomeNotCovered, reasonNoSelected, nil
	case d.Pinned():
		return OutcomeNotCovered, reasonPinned, nil
	case len(d.Formulas) == 0:
		return OutcomeNotCovered, reasonNoFormulas, nil
	}
	sel := d.Selected.Selection.Worker
	if d.Formula(sel) == nil {
		return OutcomeDisagree, "", []Disagreement{a.disagree(d, CheckChoice, sel, "worker", sel.String(),
			fmt.Sprintf("one of the %d scored candidates", len(d.Formulas)), CauseMissingLines,
			"the router picked a worker none of this decision's Formula lines scores: lines are missing (rotation, a cut log) or two decisions of the request interleave")}
	}
	temperature := 0.0
	if a.m != nil {
		temperature = a.m.HopFor(d.Hop).Config.RouterTemperature
	}
	mult := func(id routecore.WorkerID) float64 {
		if cErr != nil {
			return 1
		}
		return a.multiplier(c, id)
	}
	costs := make([]float64, len(d.Formulas))
	halves := make([]float64, len(d.Formulas))
	selIdx := -1
	for i, r := range d.Formulas {
		m := mult(r.Formula.Worker.WorkerID)
		costs[i], halves[i] = r.Formula.Logit.Value*m, r.Formula.Logit.Half()*m
		if r.Formula.Worker == sel {
			selIdx = i
		}
	}
	// The Selected line's logit is the pick's cost after the multiplier, as
	// the picker compared it (exact in the structured form).
	if l := d.Selected.Selection.Logit; l.Valid() {
		costs[selIdx], halves[selIdx] = l.Value, l.Half()
	}
	if temperature == 0 {
		minJ, minHi := -1, math.Inf(1)
		for j := range costs {
			if j != selIdx && costs[j]+halves[j] < minHi {
				minJ, minHi = j, costs[j]+halves[j]
			}
		}
		ties := 0
		for j := range costs {
			if (ival{costs[j] - halves[j], costs[j] + halves[j]}).meets(ival{costs[selIdx] - halves[selIdx], costs[selIdx] + halves[selIdx]}) {
				ties++
			}
		}
		if ties > 1 {
			dr.Ties = ties
		}
		if lo := costs[selIdx] - halves[selIdx]; minJ < 0 || lo <= minHi+float64(1e-9*(1+math.Abs(minHi))) {
			return OutcomeAgree, "", nil
		}
		other := d.Formulas[minJ].Formula.Worker
		return OutcomeDisagree, "", []Disagreement{a.disagree(d, CheckChoice, sel, "cost", trim(costs[selIdx]),
			fmt.Sprintf("≤ %s (the cost of %s)", trim(costs[minJ]), a.m.Name(other.WorkerID)), CauseUnreadConfig,
			"at temperature 0 the router picks a minimum-cost candidate, and this pick is not one: the request ran with a temperature above 0 (a per-request router_temperature override), or the router compared costs the Formula lines do not show (a custom selection policy, DYN_ROUTER_WORKER_SELECTION_POLICY)")}
	}
	probs, err := routecore.SoftmaxProbabilities(costs, temperature)
	if err != nil {
		return OutcomeNotCovered, "costs the softmax cannot take: " + err.Error(), nil
	}
	p := probs[selIdx]
	dr.Probability = &p
	if p >= a.opts.MinProbability {
		return OutcomeAgree, "", nil
	}
	return OutcomeDisagree, "", []Disagreement{a.disagree(d, CheckChoice, sel, "probability", strconv.FormatFloat(p, 'g', 4, 64),
		fmt.Sprintf("≥ %s at temperature %s", strconv.FormatFloat(a.opts.MinProbability, 'g', 4, 64), trim(temperature)), CauseUnlikelyDraw,
		fmt.Sprintf("a draw this unlikely happens about once in %d decisions; many of them point at costs the Formula lines do not show (a per-request router_temperature, a custom selection policy)", int(math.Round(1/math.Max(p, 1e-12)))))}
}

// trim prints a float without trailing zeros.
func trim(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// ---- 3. transfer ----

func (a *auditor) transfer(d *Decision, c routecore.RoutingConstraints, cErr error) (string, string, []Disagreement) {
	switch {
	case a.m == nil:
		return OutcomeNotCovered, reasonNoModel, nil
	case d.Selected == nil:
		return OutcomeNotCovered, reasonNoSelected, nil
	case cErr != nil:
		return OutcomeNotCovered, cErr.Error(), nil
	}
	var out []Disagreement
	covered := false
	// Required enforcement: every scored decode candidate carries the taint.
	if len(c.RequiredTaints) > 0 {
		for _, r := range d.Formulas {
			w, ok := a.m.worker(r.Formula.Worker.WorkerID)
			if !ok {
				continue // the candidates check reports it
			}
			covered = true
			taints := w.Runtime.EffectiveTaints()
			for _, t := range c.RequiredTaints {
				if _, found := slices.BinarySearch(taints, t); !found {
					out = append(out, a.disagree(d, CheckTransfer, r.Formula.Worker, "domain", domainOf(taints, t), t, CauseDomainDrift,
						"the router scored a decode worker outside the prefill pick's domain, which required enforcement excludes: the worker's domain, or the prefill worker's, changed since the model was read (label drift), or the prefill worker published no transfer domain then", r.Pos))
					break
				}
			}
		}
	}
	sel := d.Selected.Selection
	f := d.Formula(sel.Worker)
	switch {
	case f == nil:
		if !covered {
			return OutcomeNotCovered, reasonNoFormulas, nil
		}
	case !a.m.Known(sel.Worker.WorkerID):
		if !covered {
			return OutcomeNotCovered, reasonUnknownSel, nil
		}
	case math.Abs(f.Logit.Value) <= f.Logit.Half():
		if !covered {
			return OutcomeNotCovered, reasonZeroCost, nil
		}
	default:
		covered = true
		want := 1.0
		if !d.Pinned() {
			want = a.multiplier(c, sel.Worker.WorkerID)
		}
		expected := ival{(f.Logit.Value - f.Logit.Half()) * want, (f.Logit.Value + f.Logit.Half()) * want}
		if !expected.meets(iv(sel.Logit)) {
			implied := sel.Logit.Value / f.Logit.Value
			cause := "the router applied a preferred-taint bias the model does not derive: the request's own nvext.routing_constraints.preferred_taints (which logs do not show), or a kv_transfer_preferred_weight the model does not read"
			kind := CauseUnreadConfig
			switch {
			case want != 1 && math.Abs(implied-1) < 1e-3:
				cause, kind = "the router applied no preferred-taint bias where the policy gives one: at that time the prefill worker published no preferred transfer policy, or the decode worker lacked the domain taint (domain drift since the model was read)", CauseDomainDrift
			case want != 1:
				cause = "the router's preferred weight differs from the model's kv_transfer_preferred_weight (a config change since the model was read), or the request carried its own preferred_taints"
			}
			out = append(out, a.disagree(d, CheckTransfer, sel.Worker, "multiplier", strconv.FormatFloat(implied, 'f', 4, 64),
				strconv.FormatFloat(want, 'f', 4, 64), kind, cause))
		}
	}
	if !covered {
		return OutcomeNotCovered, reasonZeroCost, nil
	}
	return outcome(len(out) == 0), "", out
}

// domainOf names the worker's value for the required taint's domain, or
// says it has none.
func domainOf(taints []string, required string) string {
	domain, _, _ := strings.Cut(strings.TrimPrefix(required, routecore.TopologyTaintPrefix), "=")
	for _, t := range taints {
		if d, _, ok := strings.Cut(strings.TrimPrefix(t, routecore.TopologyTaintPrefix), "="); ok && d == domain && strings.HasPrefix(t, routecore.TopologyTaintPrefix) {
			return t
		}
	}
	return "no " + domain + " value"
}

// ---- 4. state ----

func (a *auditor) state(d *Decision) (string, string, []Disagreement) {
	switch {
	case a.m == nil:
		return OutcomeNotCovered, reasonNoModel, nil
	case a.m.Index == nil:
		return OutcomeNotCovered, reasonNoIndex, nil
	case d.Input == nil:
		return OutcomeNotCovered, reasonNoInput, nil
	}
	in := d.Input.Input
	if uint64(len(in.LocalHashes)) != in.NumBlocks {
		return OutcomeNotCovered, reasonCutHashes, nil
	}
	if in.BlockSize != uint64(a.m.BlockSize) {
		w, _ := d.Worker()
		return OutcomeDisagree, "", []Disagreement{a.disagree(d, CheckState, w, "block_size", strconv.FormatUint(in.BlockSize, 10),
			strconv.Itoa(a.m.BlockSize), CauseHashSpace,
			"the router hashes with another block size than the workers' cards say: its blocks cannot match the index (kv_cache_block_size drift)", d.Input.Pos)}
	}
	hashes := make([]routecore.LocalBlockHash, len(in.LocalHashes))
	for i, h := range in.LocalHashes {
		hashes[i] = routecore.LocalBlockHash(h)
	}
	tm := a.m.Index.FindTieredMatches(hashes)
	ov := routecore.ToOverlapInput(tm, a.m.TierWeights, uint32(a.m.BlockSize), nil)
	eff := func(w routecore.WorkerWithDpRank) float64 { return ov.EffectiveBlocks[w] }
	var out []Disagreement
	compared := false
	check := func(w routecore.WorkerWithDpRank, field string, logged Number, want float64, pos Position) {
		compared = true
		if iv(logged).meets(ival{want, want}) {
			return
		}
		kind, cause := CauseMissingEvents, "the router's index holds more of this prompt on the worker than the model's: KV events the model's index never received (lost, or the worker's publishing is off), or blocks stored after the model's index was read (a stale index: read it near the logs' time)"
		if want > logged.Value {
			kind, cause = CauseStaleIndex, "the model's index holds more of this prompt on the worker than the router's did: blocks stored after the logged decision or evicted before it (a stale index: read it near the logs' time), or removals the router received and the model's index did not"
		}
		out = append(out, a.disagree(d, CheckState, w, field, logged.Text, Printed(want, max(logged.Decimals, 2)).Text, kind, cause, pos))
	}
	for _, r := range d.Formulas {
		check(r.Formula.Worker, "effective_cached_blocks", r.Formula.EffectiveBlocks, eff(r.Formula.Worker), r.Pos)
	}
	if d.Selected != nil && d.Selected.Selection.EffectiveCachedBlocks != nil && d.Formula(d.Selected.Selection.Worker) == nil {
		s := d.Selected.Selection
		check(s.Worker, "effective_cached_blocks", *s.EffectiveCachedBlocks, eff(s.Worker), d.Selected.Pos)
	}
	if d.Best != nil {
		b := d.Best.Best
		n, _ := parseNumber(strconv.FormatUint(b.OverlapBlocks, 10), true)
		check(b.Worker, "overlap_blocks", n, float64(ov.DeviceBlocks[b.Worker]), d.Best.Pos)
	}
	if !compared {
		return OutcomeNotCovered, reasonNoComparable, nil
	}
	return outcome(len(out) == 0), "", out
}

// ---- 5. candidates ----

func (a *auditor) candidates(d *Decision, c routecore.RoutingConstraints, cErr error) (string, string, []Disagreement) {
	switch {
	case a.m == nil:
		return OutcomeNotCovered, reasonNoModel, nil
	case d.Pinned():
		return OutcomeNotCovered, reasonPinned, nil
	case len(d.Formulas) == 0:
		return OutcomeNotCovered, reasonNoFormulas, nil
	case cErr != nil:
		return OutcomeNotCovered, cErr.Error(), nil
	}
	hop := a.m.HopFor(d.Hop)
	isl := uint64(1)
	switch {
	case d.Input != nil && d.Input.Input.ISLTokens > 0:
		isl = d.Input.Input.ISLTokens
	case d.Best != nil && d.Best.Best.TotalBlocks > 0:
		isl = d.Best.Best.TotalBlocks * uint64(max(a.m.BlockSize, 1))
	}
	bs := max(a.m.BlockSize, 1)
	dec, _ := routecore.SelectWithDraw(hop.Config, hop.Thresholds, hop.Workers,
		routecore.Request{ISL: int(min(isl, math.MaxInt32)), BlockSize: bs, Constraints: c}, 0)
	if len(dec.Candidates) == 0 && len(hop.Workers) > 0 {
		return OutcomeNotCovered, "the routing core could not enumerate the pool", nil
	}
	model := map[routecore.WorkerWithDpRank]routecore.CandidateEvidence{}
	for _, ce := range dec.Candidates {
		model[ce.Candidate] = ce
	}
	scored := map[routecore.WorkerWithDpRank]*Record{}
	for _, r := range d.Formulas {
		scored[r.Formula.Worker] = r
	}
	var out []Disagreement
	for _, r := range d.Formulas {
		w := r.Formula.Worker
		ce, ok := model[w]
		switch {
		case !ok && a.m.Known(w.WorkerID):
			out = append(out, a.disagree(d, CheckCandidates, w, "dp_rank", strconv.FormatUint(uint64(w.DpRank), 10), "a rank the worker publishes",
				CauseRegistration, "the router scored a dp rank the model's runtime config does not give the worker (data_parallel_start_rank/size changed since the model was read)", r.Pos))
		case !ok:
			out = append(out, a.disagree(d, CheckCandidates, w, "worker", "scored", "not in the "+hopName(d.Hop)+" pool",
				CauseUnknownWorker, "the router scored a worker the model does not hold in this pool: it registered after the model was read, belongs to another deployment or pool, or the model missed it (an unreadable DynamoWorkerMetadata or etcd key)", r.Pos))
		case !ce.Eligible && ce.Reason != nil && ce.Reason.Code == routecore.ReasonWorkerOverloaded:
			out = append(out, a.disagree(d, CheckCandidates, w, "eligibility", "scored", "overloaded",
				CauseLoadDrift, "the model's loads mark the worker overloaded (busy thresholds) but the router scored it: the loads changed since the model was read", r.Pos))
		case !ce.Eligible:
			reason := "ineligible"
			if ce.Reason != nil {
				reason = string(ce.Reason.Code)
			}
			out = append(out, a.disagree(d, CheckCandidates, w, "eligibility", "scored", reason,
				CauseDomainDrift, "the model excludes the worker ("+reason+") but the router scored it: its taints, domain or the request's constraints differ from the model's", r.Pos))
		}
	}
	for _, ce := range dec.Candidates {
		if !ce.Eligible || scored[ce.Candidate] != nil {
			continue
		}
		out = append(out, a.disagree(d, CheckCandidates, ce.Candidate, "candidate", "not scored", "eligible",
			CauseRegistration, "the model holds the worker eligible but the router never scored it: it was not registered or not ready then, overloaded at that moment (busy thresholds), or excluded by constraints the logs do not show (the request's own routing constraints or allowed workers)"))
	}
	return outcome(len(out) == 0), "", out
}

func hopName(h string) string {
	if h == HopPrefill {
		return "prefill"
	}
	return "decode"
}

// ---- notes ----

// ModelLogsGap is how far apart the model's read and a log timestamp may be
// before the report says their differences may be time.
const ModelLogsGap = 10 * time.Minute

// apart reports whether a log timestamp is more than ModelLogsGap from t
// (false when it cannot be read).
func apart(t time.Time, stamp string) bool {
	ts, err := time.Parse(time.RFC3339Nano, stamp)
	if err != nil {
		return false
	}
	d := ts.Sub(t)
	return d > ModelLogsGap || d < -ModelLogsGap
}

func (a *auditor) notes(in Input, rep *Report, decisions []*Decision) []string {
	var notes []string
	m := in.Model
	records := len(in.Records)
	switch {
	case m == nil:
		notes = append(notes, "no model of the deployment: the transfer, state and candidates checks did not run, and temperature 0 was assumed; give --from-file CAPTURE (or read the cluster)")
	case m.ModeKnown && !m.Mode.IsKV():
		notes = append(notes, fmt.Sprintf("the frontend routes in %s mode, which logs no KV decisions: there is nothing to audit unless it runs with --router-mode kv", m.Mode))
	}
	if records == 0 {
		notes = append(notes, "the logs hold no KV router lines: read the frontend's logs (every replica), with DYN_LOG="+DebugLogFilter+" for the full audit")
	}
	if n := a.noFormulas; n > 0 && len(decisions) > 0 {
		notes = append(notes, fmt.Sprintf("%d of %d decisions have no Formula lines, so the arithmetic, choice and candidates checks skipped them: run the frontend with DYN_LOG=%s", n, len(decisions), DebugLogFilter))
	}
	if js := rep.Logs.Join; js.OrphanInputs > 0 {
		notes = append(notes, fmt.Sprintf("%d [ROUTING_INPUT] lines are followed by no decision of their request: its selection failed (NoEndpoints, all workers overloaded; kubectl dynamo topology names the cause) or the log ends first", js.OrphanInputs))
	}
	if js := rep.Logs.Join; js.Incomplete > 0 {
		notes = append(notes, fmt.Sprintf("%d groups of Formula lines were never closed by a Selected line (the selection failed, or the log is cut or rotated mid-decision); their lines were still checked for arithmetic", js.Incomplete))
	}
	for _, s := range in.Streams {
		if s.Truncated {
			notes = append(notes, fmt.Sprintf("%s: the read stopped at its bound (%s): later decisions are not audited", s.Name, s.TruncatedBy))
		}
		if s.Overlong > 0 {
			notes = append(notes, fmt.Sprintf("%s: %d lines longer than the line bound were skipped", s.Name, s.Overlong))
		}
		if s.Malformed > 0 {
			notes = append(notes, fmt.Sprintf("%s: %d router lines could not be read (first: %s)", s.Name, s.Malformed, s.MalformedExamples[0]))
		}
	}
	if m != nil && !m.CollectedAt.IsZero() && (apart(m.CollectedAt, rep.Logs.First) || apart(m.CollectedAt, rep.Logs.Last)) {
		notes = append(notes, fmt.Sprintf("the model was read at %s and the logs run from %s to %s: state and eligibility differences may be time, not routing (read the model near the logs' time)",
			m.CollectedAt.UTC().Format("2006-01-02T15:04:05Z"), rep.Logs.First, rep.Logs.Last))
	}
	return notes
}
