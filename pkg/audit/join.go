package audit

import (
	"slices"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// Hop names: the router's worker_type.
const (
	HopPrefill = "prefill"
	HopDecode  = "decode"
)

// Decision is one routing decision as the logs record it: the Selected line
// of one hop of one request, the Formula lines of its candidates, and the
// [ROUTING_INPUT] and [ROUTING] Best lines that belong to it.
type Decision struct {
	// Seq numbers decisions in the order they closed (from 1).
	Seq       int    `json:"seq"`
	Source    string `json:"source"`
	RequestID string `json:"requestId,omitempty"`
	// Hop is the router's worker_type ("prefill", "decode"); "" when no line
	// of the decision says (the first generation of the selector).
	Hop string `json:"hop,omitempty"`
	// JoinedBy is "request-id", or "position" for lines without a request id
	// (older selectors), joined by their order in the stream.
	JoinedBy string    `json:"joinedBy"`
	Selected *Record   `json:"selected,omitempty"`
	Formulas []*Record `json:"formulas,omitempty"`
	Best     *Record   `json:"best,omitempty"`
	Input    *Record   `json:"input,omitempty"`
}

// Pinned reports whether the decision was a pinned or session-affinity pick
// (one candidate, no choice).
func (d *Decision) Pinned() bool {
	if d.Selected != nil && d.Selected.Selection.Pinned() {
		return true
	}
	for _, f := range d.Formulas {
		if f.Formula.Name != "Formula" {
			return true
		}
	}
	return false
}

// Worker is the selected (worker, rank): from the Selected line, else the
// [ROUTING] Best line.
func (d *Decision) Worker() (routecore.WorkerWithDpRank, bool) {
	switch {
	case d.Selected != nil:
		return d.Selected.Selection.Worker, true
	case d.Best != nil:
		return d.Best.Best.Worker, true
	}
	return routecore.WorkerWithDpRank{}, false
}

// Formula returns the Formula line of a candidate.
func (d *Decision) Formula(w routecore.WorkerWithDpRank) *Formula {
	for _, r := range d.Formulas {
		if r.Formula.Worker == w {
			return r.Formula
		}
	}
	return nil
}

// Lines are the positions of the decision's lines, in order.
func (d *Decision) Lines() []Position {
	var out []Position
	if d.Input != nil {
		out = append(out, d.Input.Pos)
	}
	for _, f := range d.Formulas {
		out = append(out, f.Pos)
	}
	if d.Selected != nil {
		out = append(out, d.Selected.Pos)
	}
	if d.Best != nil {
		out = append(out, d.Best.Pos)
	}
	slices.SortFunc(out, func(a, b Position) int {
		if a.Source != b.Source {
			if a.Source < b.Source {
				return -1
			}
			return 1
		}
		return a.Line - b.Line
	})
	return out
}

// JoinStats say what Join could not put in a decision.
type JoinStats struct {
	// Decisions is the number of decisions.
	Decisions int `json:"decisions"`
	// Incomplete counts groups of Formula lines no Selected line closed (the
	// selection failed, or the log ends or was rotated mid-decision); their
	// lines are still checked for arithmetic.
	Incomplete int `json:"incomplete,omitempty"`
	// OrphanFormulas counts Formula lines that carry no request id and could
	// not be placed by position either.
	OrphanFormulas int `json:"orphanFormulas,omitempty"`
	// OrphanBest and OrphanInputs count [ROUTING] Best and [ROUTING_INPUT]
	// lines no decision took.
	OrphanBest   int `json:"orphanBest,omitempty"`
	OrphanInputs int `json:"orphanInputs,omitempty"`
	// Evicted counts pending groups dropped because too many requests were
	// open at once (MaxOpenGroups).
	Evicted int `json:"evicted,omitempty"`
}

// MaxOpenGroups bounds the requests Join keeps open at once; beyond it the
// oldest open group is dropped as incomplete.
const MaxOpenGroups = 100_000

type groupKey struct{ source, request, hop string }

type reqKey struct{ source, request string }

type pending struct {
	key      groupKey
	formulas []*Record
	opened   int
}

// Join groups records into decisions: by request id and hop where the lines
// carry them, by position in the stream otherwise. recs must be in stream
// order per source (ReadLogs' order). Incomplete is every group of Formula
// lines that no Selected line closed, for the arithmetic check.
func Join(recs []Record) (decisions []*Decision, incomplete [][]*Record, st JoinStats) {
	open := map[groupKey]*pending{}
	var order []groupKey // open groups, oldest first (lazily cleaned)
	inputs := map[reqKey][]*Record{}
	byRequest := map[reqKey][]*Decision{}
	anon := map[string]*pending{} // per source: Formula lines without a request id
	seq := 0

	closeGroup := func(p *pending, complete bool) {
		if !complete && len(p.formulas) > 0 {
			incomplete = append(incomplete, p.formulas)
			st.Incomplete++
		}
	}
	takeInput := func(k reqKey, before Position) *Record {
		list := inputs[k]
		for i := len(list) - 1; i >= 0; i-- {
			if list[i].Pos.Line < before.Line {
				in := list[i]
				inputs[k] = slices.Delete(list, i, i+1)
				return in
			}
		}
		return nil
	}
	newDecision := func(source, request, hop, by string) *Decision {
		seq++
		return &Decision{Seq: seq, Source: source, RequestID: request, Hop: hop, JoinedBy: by}
	}

	for i := range recs {
		r := &recs[i]
		src := r.Pos.Source
		switch r.Kind {
		case KindInput:
			if r.RequestID == "" {
				st.OrphanInputs++
				continue
			}
			k := reqKey{src, r.RequestID}
			inputs[k] = append(inputs[k], r)
		case KindFormula:
			if r.RequestID == "" {
				p := anon[src]
				if p == nil {
					p = &pending{}
					anon[src] = p
				}
				if hasWorker(p.formulas, r.Formula.Worker) {
					closeGroup(p, false)
					p.formulas = nil
				}
				p.formulas = append(p.formulas, r)
				continue
			}
			k := groupKey{src, r.RequestID, r.WorkerType}
			p := open[k]
			if p != nil && hasWorker(p.formulas, r.Formula.Worker) {
				// A second line for the same candidate: a new decision of
				// this hop began (the last one has no Selected line).
				closeGroup(p, false)
				p.formulas = nil
			}
			if p == nil {
				if len(open) >= MaxOpenGroups {
					for len(order) > 0 {
						oldest := order[0]
						order = order[1:]
						if q := open[oldest]; q != nil {
							closeGroup(q, false)
							delete(open, oldest)
							st.Evicted++
							break
						}
					}
				}
				p = &pending{key: k, opened: i}
				open[k] = p
				order = append(order, k)
			}
			p.formulas = append(p.formulas, r)
		case KindSelected:
			var d *Decision
			if r.RequestID == "" {
				d = newDecision(src, "", r.WorkerType, "position")
				if p := anon[src]; p != nil {
					d.Formulas = p.formulas
					delete(anon, src)
				}
			} else {
				d = newDecision(src, r.RequestID, r.WorkerType, "request-id")
				k := groupKey{src, r.RequestID, r.WorkerType}
				if p := open[k]; p != nil {
					d.Formulas = p.formulas
					delete(open, k)
				} else if r.WorkerType == "" {
					// An older Selected line without worker_type closes the
					// request's only open group, if there is one.
					if q := onlyGroup(open, src, r.RequestID); q != nil {
						d.Formulas, d.Hop = q.formulas, q.key.hop
						delete(open, q.key)
					}
				}
				rk := reqKey{src, r.RequestID}
				d.Input = takeInput(rk, r.Pos)
				byRequest[rk] = append(byRequest[rk], d)
			}
			d.Selected = r
			decisions = append(decisions, d)
		case KindBest:
			if r.RequestID == "" {
				st.OrphanBest++
				continue
			}
			rk := reqKey{src, r.RequestID}
			var target *Decision
			for _, d := range slices.Backward(byRequest[rk]) {
				if w, ok := d.Worker(); ok && w == r.Best.Worker && d.Best == nil {
					target = d
					break
				}
			}
			if target == nil {
				// No Selected line (INFO filtered out): the Best line is the
				// decision's only record of the pick.
				target = newDecision(src, r.RequestID, "", "request-id")
				target.Input = takeInput(rk, r.Pos)
				byRequest[rk] = append(byRequest[rk], target)
				decisions = append(decisions, target)
			}
			target.Best = r
		}
	}
	// What is still open at the end never got its Selected line.
	keys := make([]groupKey, 0, len(open))
	for k := range open {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b groupKey) int { return open[a].opened - open[b].opened })
	for _, k := range keys {
		closeGroup(open[k], false)
	}
	anonSources := make([]string, 0, len(anon))
	for s := range anon {
		anonSources = append(anonSources, s)
	}
	slices.Sort(anonSources)
	for _, s := range anonSources {
		st.OrphanFormulas += len(anon[s].formulas)
		closeGroup(anon[s], false)
	}
	for _, list := range inputs {
		st.OrphanInputs += len(list)
	}
	st.Decisions = len(decisions)
	return decisions, incomplete, st
}

func hasWorker(rs []*Record, w routecore.WorkerWithDpRank) bool {
	for _, r := range rs {
		if r.Formula.Worker == w {
			return true
		}
	}
	return false
}

// onlyGroup returns the one open group of a request, or nil when it has none
// or several.
func onlyGroup(open map[groupKey]*pending, source, request string) *pending {
	var found *pending
	for k, p := range open {
		if k.source == source && k.request == request {
			if found != nil {
				return nil
			}
			found = p
		}
	}
	return found
}
