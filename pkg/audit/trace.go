package audit

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// TraceKind is the kind of a Trace document (explain-route --request-id).
const TraceKind = "LoggedRoute"

// ErrRequestNotLogged is returned by TraceRequest when no decision of the
// request is in the logs.
var ErrRequestNotLogged = errors.New("no decision of the request is in the logs")

// Trace is one request's logged decisions beside the model's: per hop, every
// candidate with the terms the router logged and the cost the model computes
// for the same request (its logged block hashes and length, the model's loads
// and KV index), the router's pick and the model's, why the router picked its
// worker in the logged numbers, and the audit's checks of each decision.
type Trace struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Context    string `json:"context,omitempty"`
	Deployment string `json:"deployment,omitempty"`
	RequestID  string `json:"requestId"`
	// Hops are the request's decisions in log order (prefill, then decode).
	Hops []HopTrace `json:"hops"`
	// Disagreements are the audit's disagreements on these decisions.
	Disagreements []Disagreement `json:"disagreements,omitempty"`
	Notes         []string       `json:"notes,omitempty"`
}

// HopTrace is one logged decision.
type HopTrace struct {
	Hop   string     `json:"hop"`
	Lines []Position `json:"lines"`
	// ISL and Blocks are the request as the router logged it ([ROUTING_INPUT]);
	// 0 when that line is missing.
	ISL    uint64 `json:"isl,omitempty"`
	Blocks uint64 `json:"blocks,omitempty"`
	// Temperature is the model's temperature for the hop.
	Temperature float64 `json:"temperature"`
	// Logged is the router's pick; Model the model's for the same request
	// (its tie set when the minimum is shared), or ModelError why it has none.
	Logged     Pick   `json:"logged"`
	Model      *Pick  `json:"model,omitempty"`
	ModelTies  []Pick `json:"modelTies,omitempty"`
	ModelError string `json:"modelError,omitempty"`
	// Candidates are the logged candidates and the model's, by worker.
	Candidates []CandidateTrace `json:"candidates"`
	// Why says, in the logged numbers, why the router picked its worker.
	Why string `json:"why"`
	// Checks are the audit's outcomes on this decision.
	Checks     map[CheckName]string `json:"checks"`
	NotCovered map[CheckName]string `json:"notCovered,omitempty"`
}

// Pick is a (worker, rank) and its cost.
type Pick struct {
	Worker   string             `json:"worker"`
	WorkerID routecore.WorkerID `json:"workerId,string"`
	DpRank   uint32             `json:"dpRank"`
	// Cost is the cost as printed (logged) or computed (model).
	Cost string `json:"cost"`
}

// CandidateTrace is one candidate: its logged terms (nil when the router
// logged no Formula line for it) and the model's cost.
type CandidateTrace struct {
	Worker   string             `json:"worker"`
	WorkerID routecore.WorkerID `json:"workerId,string"`
	DpRank   uint32             `json:"dpRank"`
	Logged   *Formula           `json:"logged,omitempty"`
	// ModelCached and ModelCost are the model's effective cached blocks and
	// cost (after the multiplier); nil when the model does not score it, and
	// ModelReason then says why.
	ModelCached *float64 `json:"modelCached,omitempty"`
	ModelCost   *float64 `json:"modelCost,omitempty"`
	ModelReason string   `json:"modelReason,omitempty"`
	// Picked and ModelPicked mark the router's and the model's pick.
	Picked      bool `json:"picked,omitempty"`
	ModelPicked bool `json:"modelPicked,omitempty"`
}

// TraceRequest audits in's records and returns the logged decisions of one
// request beside the model's. It needs a model; the request id is matched
// exactly.
func TraceRequest(in Input, requestID string, opts Options) (*Trace, error) {
	if in.Model == nil {
		return nil, errors.New("audit: a trace needs the deployment's model")
	}
	rep := Audit(in, Options{MinProbability: opts.MinProbability, MaxDisagreements: 1 << 30, MaxDecisionsListed: 1 << 30})
	decisions, _, _ := Join(in.Records)
	m := in.Model
	t := &Trace{APIVersion: APIVersion, Kind: TraceKind, Context: m.Context, Deployment: m.Deployment, RequestID: requestID}
	results := map[int]DecisionResult{}
	for _, r := range rep.Decisions {
		results[r.Seq] = r
	}
	var prefillPick *routecore.WorkerWithDpRank
	for _, d := range decisions {
		if d.RequestID != requestID {
			continue
		}
		if d.Hop == "" {
			if w, ok := d.Worker(); ok {
				d.Hop = m.hopOf(w.WorkerID)
			}
		}
		h := traceHop(m, d, prefillPick)
		if r, ok := results[d.Seq]; ok {
			h.Checks, h.NotCovered = r.Checks, r.NotCovered
		}
		if d.Hop == HopPrefill && d.Selected != nil {
			w := d.Selected.Selection.Worker
			prefillPick = &w
		}
		t.Hops = append(t.Hops, h)
		for _, dis := range rep.Disagreements {
			if dis.Decision == d.Seq {
				t.Disagreements = append(t.Disagreements, dis)
			}
		}
	}
	if len(t.Hops) == 0 {
		return nil, fmt.Errorf("%w: %q", ErrRequestNotLogged, requestID)
	}
	if len(t.Hops) == 1 && t.Hops[0].Hop == HopPrefill && len(m.Decode.Workers) > 0 {
		t.Notes = append(t.Notes, "the logs hold no decode decision after the prefill one: the decode selection failed (explain-route on the same request says why) or the log ends first")
	}
	if m.Index == nil {
		t.Notes = append(t.Notes, "no KV index: the model's costs assume no cached blocks anywhere")
	}
	return t, nil
}

// RequestIDs returns the request ids of the logged decisions, in log order,
// each once (for the error of an id that matches nothing).
func RequestIDs(recs []Record) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range recs {
		if r.RequestID != "" && r.Kind == KindSelected && !seen[r.RequestID] {
			seen[r.RequestID] = true
			out = append(out, r.RequestID)
		}
	}
	return out
}

// zeroDraw resolves the model's random picks to the first candidate: the
// trace shows the tie set instead.
type zeroDraw struct{}

func (zeroDraw) Float64() float64 { return 0 }

// traceHop builds one hop's trace: the logged candidates, the model's
// selection for the same request (the decode hop with the logged prefill
// pick), and the why.
func traceHop(m *Model, d *Decision, prefillPick *routecore.WorkerWithDpRank) HopTrace {
	h := HopTrace{Hop: d.Hop, Lines: d.Lines(), Temperature: m.HopFor(d.Hop).Config.RouterTemperature}
	index := map[routecore.WorkerWithDpRank]int{}
	cand := func(w routecore.WorkerWithDpRank) *CandidateTrace {
		i, ok := index[w]
		if !ok {
			i = len(h.Candidates)
			index[w] = i
			h.Candidates = append(h.Candidates, CandidateTrace{Worker: m.Name(w.WorkerID), WorkerID: w.WorkerID, DpRank: w.DpRank})
		}
		return &h.Candidates[i]
	}
	for _, r := range d.Formulas {
		f := *r.Formula
		cand(f.Worker).Logged = &f
	}
	if w, ok := d.Worker(); ok {
		cand(w).Picked = true
		h.Logged = Pick{Worker: m.Name(w.WorkerID), WorkerID: w.WorkerID, DpRank: w.DpRank}
		if d.Selected != nil {
			h.Logged.Cost = d.Selected.Selection.Logit.Text
		}
	}
	if d.Input != nil {
		h.ISL, h.Blocks = d.Input.Input.ISLTokens, d.Input.Input.NumBlocks
	}
	h.Why = why(m, d, &h)

	dec, err := modelDecision(m, d, prefillPick)
	if err != nil {
		h.ModelError = err.Error()
		return h
	}
	if dec.ErrorKind != "" {
		h.ModelError = "the model's selection fails: " + dec.ErrorKind
	}
	for _, ce := range dec.Candidates {
		if _, logged := index[ce.Candidate]; !logged && !ce.Scored {
			continue
		}
		c := cand(ce.Candidate)
		if ce.Scored {
			cost, cached := ce.Terms.Cost, ce.Terms.EffectiveBlocks
			c.ModelCost, c.ModelCached = &cost, &cached
		} else if ce.Reason != nil {
			c.ModelReason = string(ce.Reason.Code)
		}
	}
	if dec.ErrorKind == "" {
		h.Model = &Pick{Worker: m.Name(dec.Selected.WorkerID), WorkerID: dec.Selected.WorkerID, DpRank: dec.Selected.DpRank, Cost: trim(dec.SelectedCost)}
		cand(dec.Selected).ModelPicked = true
		if len(dec.TieSet) > 1 {
			// A tie: the model's pick is any of them, as the router's is.
			for _, w := range dec.TieSet {
				h.ModelTies = append(h.ModelTies, Pick{Worker: m.Name(w.WorkerID), WorkerID: w.WorkerID, DpRank: w.DpRank, Cost: trim(dec.MinCost)})
				cand(w).ModelPicked = true
			}
		}
	}
	return h
}

// modelDecision routes the logged request through routecore on the model: its
// length and block hashes from the [ROUTING_INPUT] line, the overlap from
// the model's KV index, the model's loads, thresholds and configuration; the
// decode hop with the logged prefill pick pinned, so that its transfer
// constraint is the router's.
func modelDecision(m *Model, d *Decision, prefillPick *routecore.WorkerWithDpRank) (routecore.Decision, error) {
	bs := max(m.BlockSize, 1)
	req := routecore.Request{BlockSize: bs}
	switch {
	case d.Input != nil && d.Input.Input.ISLTokens > 0:
		in := d.Input.Input
		req.ISL = int(min(in.ISLTokens, 1<<31-1))
		if m.Index != nil && int(in.BlockSize) == bs && uint64(len(in.LocalHashes)) == in.NumBlocks {
			hashes := make([]routecore.LocalBlockHash, len(in.LocalHashes))
			for i, x := range in.LocalHashes {
				hashes[i] = routecore.LocalBlockHash(x)
			}
			req.Overlap = routecore.ToOverlapInput(m.Index.FindTieredMatches(hashes), m.TierWeights, uint32(bs), nil)
		}
	case d.Best != nil && d.Best.Best.TotalBlocks > 0:
		req.ISL = int(min(d.Best.Best.TotalBlocks*uint64(bs), 1<<31-1))
	default:
		return routecore.Decision{}, errors.New("the logs give neither the request's length nor its hashes ([ROUTING_INPUT] or [ROUTING] Best)")
	}
	pcfg := m.Prefill.Config
	di := routecore.DisaggInput{Config: m.Decode.Config, PrefillConfig: &pcfg, Thresholds: m.Decode.Thresholds,
		PrefillWorkers: m.Prefill.Workers, DecodeWorkers: m.Decode.Workers, Request: req, SkipAlternatives: true, ApplySita: true}
	if d.Hop != HopPrefill && len(m.Prefill.Workers) > 0 {
		if prefillPick == nil {
			return routecore.Decision{}, errors.New("the request's prefill decision is not in the logs, so the decode hop's transfer constraint is unknown")
		}
		di.PrefillPin = prefillPick
	}
	dd, err := routecore.RouteDisaggregated(di, zeroDraw{})
	if err != nil && dd.Err == nil {
		return routecore.Decision{}, err
	}
	var dec *routecore.Decision
	if d.Hop == HopPrefill {
		dec = dd.Prefill
	} else {
		dec = dd.Decode
	}
	if dec == nil {
		if dd.Error != "" {
			return routecore.Decision{}, fmt.Errorf("the model routes the request otherwise: %s", dd.Error)
		}
		return routecore.Decision{}, fmt.Errorf("the model makes no %s decision for the request (mode %s)", d.Hop, dd.Mode)
	}
	return *dec, nil
}

// why explains the router's pick in the logged numbers.
func why(m *Model, d *Decision, h *HopTrace) string {
	w, ok := d.Worker()
	if !ok {
		return ""
	}
	name := m.Name(w.WorkerID)
	if d.Pinned() {
		return name + " was pinned by the request (prefill_worker_id, decode_worker_id or session affinity): nothing was chosen"
	}
	f := d.Formula(w)
	if f == nil {
		if len(d.Formulas) == 0 {
			return name + " was picked; the log has no Formula lines (DEBUG off), so the candidates' costs are unknown"
		}
		return name + " was picked, but none of the decision's Formula lines scores it"
	}
	var b strings.Builder
	// The other candidates, cheapest first.
	others := slices.DeleteFunc(slices.Clone(d.Formulas), func(r *Record) bool { return r.Formula.Worker == w })
	slices.SortStableFunc(others, func(a, c *Record) int {
		switch {
		case a.Formula.Logit.Value < c.Formula.Logit.Value:
			return -1
		case a.Formula.Logit.Value > c.Formula.Logit.Value:
			return 1
		}
		return 0
	})
	cost := f.Logit.Text + " blocks"
	if s := d.Selected; s != nil && s.Selection.Logit.Valid() && !iv(s.Selection.Logit).meets(iv(f.Logit)) {
		cost += " (" + s.Selection.Logit.Text + " after the preferred-domain multiplier)"
	}
	switch {
	case len(others) == 0:
		fmt.Fprintf(&b, "%s was the only candidate (cost %s)", name, cost)
	case others[0].Formula.Logit.Value+others[0].Formula.Logit.Half() < f.Logit.Value-f.Logit.Half():
		next := others[0].Formula
		fmt.Fprintf(&b, "%s had cost %s although %s had %s", name, cost, m.Name(next.Worker.WorkerID), next.Logit.Text)
		if h.Temperature > 0 {
			fmt.Fprintf(&b, " (sampled at temperature %s)", trim(h.Temperature))
		} else {
			b.WriteString(": at temperature 0 the router does not pick a candidate that is not the cheapest (the choice check says what that means)")
		}
	case others[0].Formula.Logit.Value-others[0].Formula.Logit.Half() <= f.Logit.Value+f.Logit.Half():
		next := others[0].Formula
		fmt.Fprintf(&b, "%s had cost %s, level with %s's %s within the printed rounding (the router picks among tied candidates at random)", name, cost, m.Name(next.Worker.WorkerID), next.Logit.Text)
	default:
		next := others[0].Formula
		fmt.Fprintf(&b, "%s had the lowest cost, %s, against %s for %s, the next", name, cost, next.Logit.Text, m.Name(next.Worker.WorkerID))
		if h.Temperature > 0 {
			fmt.Fprintf(&b, " (sampled at temperature %s)", trim(h.Temperature))
		}
	}
	switch {
	case f.Shape == ShapePrefill && f.Raw.Value == 0 && f.Adjusted.Value == 0:
		// The decode router (prefill tracking off): the cost is the load.
		fmt.Fprintf(&b, "; its cost is its decode load, %s blocks, plus %s for active requests", f.Decode.Text, f.RequestCost.Text)
		if len(others) > 0 {
			o := others[0].Formula
			fmt.Fprintf(&b, "; %s carries %s", m.Name(o.Worker.WorkerID), o.Decode.Text)
		}
	case f.Shape == ShapePrefill:
		fmt.Fprintf(&b, "; it holds %s effective cached blocks", f.EffectiveBlocks.Text)
		if h.Blocks > 0 {
			fmt.Fprintf(&b, " of the request's %d", h.Blocks)
		}
		fmt.Fprintf(&b, " (overlap credit %s), so its prefill is %s × %s of %s raw blocks, plus %s decode blocks and %s for active requests",
			f.Credit.Text, f.Scale.Text, f.Adjusted.Text, f.Raw.Text, f.Decode.Text, f.RequestCost.Text)
		if len(others) > 0 {
			o := others[0].Formula
			fmt.Fprintf(&b, "; %s holds %s, with %s raw prefill blocks (its queued prompt work included) and %s decode blocks",
				m.Name(o.Worker.WorkerID), o.EffectiveBlocks.Text, o.Raw.Text, o.Decode.Text)
		}
	case f.Shape == ShapeDecodeOverlap:
		fmt.Fprintf(&b, "; %s decode blocks less %s of overlap credit, plus %s for active requests", f.Decode.Text, f.Credit.Text, f.RequestCost.Text)
	case f.Shape == ShapeWeighted:
		fmt.Fprintf(&b, "; %s × %s prefill blocks plus %s decode blocks", f.Weight.Text, f.PrefillBlocks.Text, f.Decode.Text)
	}
	return b.String()
}

// FormatCost renders a model cost for a table.
func FormatCost(v *float64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatFloat(*v, 'f', 3, 64)
}
