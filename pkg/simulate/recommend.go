package simulate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// errWorse ends a search candidate's run once it has failed more requests
// than the best candidate of its step (it cannot win).
var errWorse = errors.New("the candidate fails more requests than the best so far")

// The search's default bounds.
const (
	DefaultRecommendRuns  = 60
	DefaultRecommendAdded = 8
	// maxProposals bounds the candidates of one step.
	maxProposals = 4
)

// DefaultRecommendWeights are the preferred weights the policy switch tries.
var DefaultRecommendWeights = []float64{0.1, 0.3, 0.5, 0.7, 0.9}

// RecommendOptions bound the search.
type RecommendOptions struct {
	// MaxRuns is the most candidates simulated (0: DefaultRecommendRuns);
	// MaxAdded the most workers a recommendation adds (0:
	// DefaultRecommendAdded).
	MaxRuns  int
	MaxAdded int
	// Weights are the preferred weights the policy switch tries (nil:
	// DefaultRecommendWeights).
	Weights []float64
}

// Recommendation is the outcome of the search for the smallest change that
// meets the goal: no failed request, and every objective (Options.SLOs) met.
type Recommendation struct {
	// Goal and SearchSpace say, in words, what was looked for and where.
	Goal        string `json:"goal"`
	SearchSpace string `json:"searchSpace"`
	// Runs is the candidates simulated, MaxRuns the bound; Stopped says why
	// the search ended before it found what it looked for ("" when it did, or
	// when every path was followed to its end).
	Runs    int    `json:"runs"`
	MaxRuns int    `json:"maxRuns"`
	Stopped string `json:"stopped,omitempty"`
	// NoChangeNeeded: the deployment as it is meets the goal.
	NoChangeNeeded bool `json:"noChangeNeeded,omitempty"`
	// Recommended is the smallest change that meets the goal (nil when none
	// was found); Alternatives the best of the other path (replicas only, or
	// the policy switch), whether it meets the goal or not.
	Recommended  *Candidate  `json:"recommended,omitempty"`
	Alternatives []Candidate `json:"alternatives,omitempty"`
	// Patch is the change as a unified diff of the DynamoGraphDeployment,
	// filled by the caller that holds the manifest (the command).
	Patch string `json:"patch,omitempty"`
}

// Candidate is one change the search simulated.
type Candidate struct {
	// Spec is the change as a --variant (decode+1@us-east-1c,prefill+2@us-east-1a).
	Spec string `json:"spec"`
	// Enforcement and PreferredWeight are the policy switch, when the change
	// makes one; Add the workers it adds, per role and domain value.
	Enforcement     string       `json:"enforcement,omitempty"`
	PreferredWeight *float64     `json:"preferredWeight,omitempty"`
	Add             []AddWorkers `json:"add,omitempty"`
	// AddedWorkers and AddedGPUs count what Add adds (GPUs as the cloned
	// workers request).
	AddedWorkers int `json:"addedWorkers"`
	AddedGPUs    int `json:"addedGPUs"`
	// MeetsGoal: no failed request, every objective met.
	MeetsGoal bool `json:"meetsGoal"`
	// Steps are the search's steps to this change, each with the failed
	// requests after it.
	Steps []Step `json:"steps,omitempty"`
	// Result is the change's simulated figures.
	Result VariantResult `json:"result"`
}

// Step is one step of the search: the change it made and the failed
// requests and objective breaches after it.
type Step struct {
	Change   string `json:"change"`
	Failed   int    `json:"failed"`
	Breaches int    `json:"breaches"`
}

// RecommendProgress reports the search's progress.
type RecommendProgress struct {
	Run, MaxRuns int
	Candidate    string
	Progress     Progress
}

// recommendSearch is one search's state.
type recommendSearch struct {
	o       Options
	ro      RecommendOptions
	runs    int
	stopped string
	// roles: which roles the deployment has workers of (to clone).
	decodeRole, prefillRole model.Role
	gpus                    map[model.Role]int
	progress                func(RecommendProgress)
}

// Recommend searches the smallest change that makes the deployment meet
// the goal for this traffic: no failed request and every objective of
// o.SLOs met. It simulates candidates (o.Variants are ignored) along two
// greedy paths — workers only, and the switch to preferred enforcement (each
// weight of ro.Weights) then workers — each step adding one decode or
// prefill worker in one domain value, among the few the last run points at
// (the domain whose requests failed after their prefill, the domains whose
// prefill or decode runs the hottest when requests fail at the prefill hop,
// stages saturate or objectives are missed), keeping the best by failed
// requests, then objectives missed, then breaches. It stops when a path
// meets the goal, stops improving, adds ro.MaxAdded workers or the runs reach
// ro.MaxRuns, or ctx ends (its deadline is the time bound). Of the paths that
// meet the goal, the one that adds the fewest GPUs is recommended (no policy
// switch on a tie).
func Recommend(ctx context.Context, o Options, ro RecommendOptions, progress func(RecommendProgress)) (*Recommendation, error) {
	if o.Deployment == nil {
		return nil, errors.New("simulate: no deployment")
	}
	ro.MaxRuns = cmp.Or(ro.MaxRuns, DefaultRecommendRuns)
	ro.MaxAdded = cmp.Or(ro.MaxAdded, DefaultRecommendAdded)
	if ro.Weights == nil {
		ro.Weights = DefaultRecommendWeights
	}
	o.Variants, o.Progress = nil, nil
	if o.Speedup == 0 {
		o.Speedup = 1
	}
	if o.SaturationThreshold == 0 {
		o.SaturationThreshold = DefaultSaturationThreshold
	}
	s := &recommendSearch{o: o, ro: ro, gpus: map[model.Role]int{}, progress: progress}
	for _, w := range o.Deployment.Workers {
		if len(w.Instances) == 0 {
			continue
		}
		if _, ok := s.gpus[w.Role]; !ok {
			s.gpus[w.Role] = int(max(w.GPUs, 1))
		}
	}
	switch {
	case s.gpus[model.RoleDecode] > 0:
		s.decodeRole = model.RoleDecode
	case s.gpus[model.RoleAggregated] > 0:
		s.decodeRole = model.RoleAggregated
	}
	if s.gpus[model.RolePrefill] > 0 {
		s.prefillRole = model.RolePrefill
	}
	rec := &Recommendation{MaxRuns: ro.MaxRuns, Goal: "no failed request"}
	if len(o.SLOs) > 0 {
		specs := make([]string, len(o.SLOs))
		for i, x := range o.SLOs {
			specs[i] = x.Spec
		}
		rec.Goal += " and every objective met (" + strings.Join(specs, ", ") + ")"
	}
	weights := make([]string, len(ro.Weights))
	for i, w := range ro.Weights {
		weights[i] = strconv.FormatFloat(w, 'g', -1, 64)
	}
	rec.SearchSpace = fmt.Sprintf("one more decode or prefill worker in one domain a step (the domains the last run points at, at most %d a step), up to %d workers added; and the switch to preferred enforcement with weight %s, then workers as above; at most %d runs",
		maxProposals, ro.MaxAdded, strings.Join(weights, ", "), ro.MaxRuns)

	base, err := s.run(ctx, candidateSpec(nil, nil), -1)
	if err != nil {
		return nil, err
	}
	if meets(base) {
		rec.NoChangeNeeded, rec.Runs = true, s.runs
		return rec, nil
	}
	var paths []*Candidate
	// Workers only.
	if c, err := s.greedy(ctx, nil, base, nil); err != nil {
		return nil, err
	} else if c != nil {
		paths = append(paths, c)
	}
	// The policy switch, where there is a policy and prefill workers that do
	// not all run preferred already.
	if p := o.Deployment.Policy; p != nil && p.Domain != "" && s.prefillRole != "" && s.stopped == "" {
		var best *Candidate
		for _, w := range ro.Weights {
			pol := &policySwitch{weight: w}
			if s.runs >= ro.MaxRuns {
				s.stopped = fmt.Sprintf("the search reached its bound of %d runs", ro.MaxRuns)
				break
			}
			vr, err := s.run(ctx, candidateSpec(pol, nil), -1)
			if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
				s.stopped = "the search ran out of time (--recommend-timeout)"
				break
			}
			if err != nil {
				return nil, err
			}
			c := s.candidate(pol, nil, vr, []Step{{Change: fmt.Sprintf("enforcement=preferred,weight=%g", w), Failed: vr.Failed, Breaches: breaches(vr)}})
			if best == nil || better(c, best) {
				best = c
			}
		}
		if best != nil {
			pol := &policySwitch{weight: *best.PreferredWeight}
			c, err := s.greedy(ctx, pol, best.Result, best.Steps)
			if err != nil {
				return nil, err
			}
			if c != nil {
				paths = append(paths, c)
			}
		}
	}
	rec.Runs = s.runs
	rec.Stopped = s.stopped
	// The smallest that meets the goal: the fewest GPUs, then no policy
	// switch, then the fewer cross-domain transfers.
	slices.SortStableFunc(paths, func(a, b *Candidate) int {
		return cmp.Or(boolOrder(b.MeetsGoal, a.MeetsGoal), cmp.Compare(a.AddedGPUs, b.AddedGPUs), boolOrder(a.Enforcement != "", b.Enforcement != ""),
			cmp.Compare(a.Result.CrossDomainTransfers, b.Result.CrossDomainTransfers))
	})
	for i, c := range paths {
		if i == 0 && c.MeetsGoal {
			rec.Recommended = c
			continue
		}
		rec.Alternatives = append(rec.Alternatives, *c)
	}
	return rec, nil
}

// boolOrder orders false before true.
func boolOrder(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

type policySwitch struct{ weight float64 }

// candidateSpec is a change as a --variant.
func candidateSpec(pol *policySwitch, add map[addKey]int) string {
	var parts []string
	if pol != nil {
		parts = append(parts, fmt.Sprintf("enforcement=preferred,weight=%g", pol.weight))
	}
	for _, k := range sortedKeys(add) {
		parts = append(parts, fmt.Sprintf("%s+%d@%s", k.role, add[k], k.value))
	}
	return strings.Join(parts, ",")
}

type addKey struct {
	role  model.Role
	value string
}

func sortedKeys(add map[addKey]int) []addKey {
	keys := make([]addKey, 0, len(add))
	for k := range add {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b addKey) int { return cmp.Or(cmp.Compare(a.role, b.role), cmp.Compare(a.value, b.value)) })
	return keys
}

// meets is the goal.
func meets(v VariantResult) bool { return v.Failed == 0 && v.SLOsMet }

// breaches is every objective's breaches together.
func breaches(v VariantResult) int {
	n := 0
	for _, s := range v.SLOs {
		n += s.Breaches
	}
	return n
}

// score orders results, the best first: fewer failed requests, fewer
// objectives missed, fewer breaches, not saturated.
func score(v VariantResult) [4]int {
	missed := 0
	for _, s := range v.SLOs {
		if !s.Met {
			missed++
		}
	}
	sat := 0
	if v.QueueDominated {
		sat = 1
	}
	return [4]int{v.Failed, missed, breaches(v), sat}
}

func scoreLess(a, b [4]int) bool { return slices.Compare(a[:], b[:]) < 0 }

// better orders candidates of one path: the better score, then fewer GPUs,
// then fewer cross-domain transfers.
func better(a, b *Candidate) bool {
	sa, sb := score(a.Result), score(b.Result)
	if sa != sb {
		return scoreLess(sa, sb)
	}
	if a.AddedGPUs != b.AddedGPUs {
		return a.AddedGPUs < b.AddedGPUs
	}
	return a.Result.CrossDomainTransfers < b.Result.CrossDomainTransfers
}

// greedy adds workers one step at a time from cur (the result of pol with
// nothing added) while the result improves and the goal is not met.
func (s *recommendSearch) greedy(ctx context.Context, pol *policySwitch, cur VariantResult, steps []Step) (*Candidate, error) {
	add := map[addKey]int{}
	best := s.candidate(pol, add, cur, steps)
	for added := 0; !best.MeetsGoal && added < s.ro.MaxAdded; added++ {
		props := s.proposals(best.Result)
		if len(props) == 0 {
			break
		}
		var stepBest *Candidate
		for _, p := range props {
			if s.runs >= s.ro.MaxRuns {
				s.stopped = fmt.Sprintf("the search reached its bound of %d runs", s.ro.MaxRuns)
				break
			}
			next := maps1(add)
			next[p]++
			bound := best.Result.Failed
			if stepBest != nil {
				bound = stepBest.Result.Failed
			}
			vr, err := s.run(ctx, candidateSpec(pol, next), bound)
			switch {
			case errors.Is(err, errWorse):
				continue
			case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
				s.stopped = "the search ran out of time (--recommend-timeout)"
			case err != nil:
				return nil, err
			}
			if s.stopped != "" {
				break
			}
			c := s.candidate(pol, next, vr, append(slices.Clone(best.Steps), Step{Change: fmt.Sprintf("%s+1@%s", p.role, p.value), Failed: vr.Failed, Breaches: breaches(vr)}))
			if stepBest == nil || better(c, stepBest) {
				stepBest = c
			}
		}
		if stepBest == nil || !scoreLess(score(stepBest.Result), score(best.Result)) {
			break // no step improves: more of the same will not
		}
		best = stepBest
		add = map[addKey]int{}
		for _, a := range best.Add {
			add[addKey{a.Role, a.Value}] = a.Count
		}
		if s.stopped != "" {
			break
		}
	}
	return best, nil
}

func maps1(m map[addKey]int) map[addKey]int {
	out := make(map[addKey]int, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}

// candidate describes a simulated change.
func (s *recommendSearch) candidate(pol *policySwitch, add map[addKey]int, vr VariantResult, steps []Step) *Candidate {
	c := &Candidate{Spec: candidateSpec(pol, add), Steps: steps, MeetsGoal: meets(vr), Result: vr}
	if pol != nil {
		w := pol.weight
		c.Enforcement, c.PreferredWeight = string(routecore.EnforcementPreferred), &w
	}
	for _, k := range sortedKeys(add) {
		c.Add = append(c.Add, AddWorkers{Role: k.role, Count: add[k], Value: k.value})
		c.AddedWorkers += add[k]
		c.AddedGPUs += add[k] * s.gpus[k.role]
	}
	c.Result.Series = Series{} // the figures, not the time series
	return c
}

// proposals are the steps the result points at: one more worker of a role
// in one domain value.
func (s *recommendSearch) proposals(v VariantResult) []addKey {
	var out []addKey
	addTo := func(role model.Role, value string) {
		if role == "" || value == "" || value == "-" || len(out) >= maxProposals {
			return
		}
		k := addKey{role, value}
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	// Hottest domains of a stage, by utilisation.
	hottest := func(stage string) []string {
		var rows []Saturation
		for _, r := range v.Saturation {
			if r.Stage == stage && r.Domain != "" {
				rows = append(rows, r)
			}
		}
		slices.SortStableFunc(rows, func(a, b Saturation) int { return cmp.Compare(b.Utilisation, a.Utilisation) })
		var vals []string
		for _, r := range rows {
			vals = append(vals, r.Domain)
		}
		if len(vals) == 0 {
			// One domain (no domain rows): its value.
			for _, d := range v.Domains {
				vals = append(vals, d.Value)
			}
		}
		return vals
	}
	ttftMissed, e2eMissed := false, false
	for i, x := range v.SLOs {
		if !x.Met && i < len(s.o.SLOs) {
			ttftMissed = ttftMissed || s.o.SLOs[i].Metric == MetricTTFT
			e2eMissed = e2eMissed || s.o.SLOs[i].Metric == MetricE2E
		}
	}
	// Requests that failed after their prefill landed (the decode hop had no
	// worker there): decode workers where they landed, most first.
	doms := slices.Clone(v.Domains)
	slices.SortStableFunc(doms, func(a, b DomainResult) int { return cmp.Compare(b.Failed, a.Failed) })
	for _, d := range doms {
		if d.Failed > 0 {
			addTo(s.decodeRole, d.Value)
		}
	}
	saturated := func(stage string) bool {
		return slices.ContainsFunc(v.Saturation, func(r Saturation) bool { return r.Stage == stage && r.Saturated })
	}
	prefill := s.prefillRole
	if prefill == "" {
		prefill = s.decodeRole // aggregated workers prefill
	}
	if v.NoDomainFailed > 0 || saturated(StagePrefill) || ttftMissed {
		for _, val := range hottest(StagePrefill)[:min(2, len(hottest(StagePrefill)))] {
			addTo(prefill, val)
		}
	}
	if saturated(StageDecode) || e2eMissed {
		for _, val := range hottest(StageDecode)[:min(2, len(hottest(StageDecode)))] {
			addTo(s.decodeRole, val)
		}
	}
	return out
}

// run simulates one candidate (the deployment as it is for ""), ending it
// early once more than bound requests failed (bound < 0: never).
func (s *recommendSearch) run(ctx context.Context, spec string, bound int) (VariantResult, error) {
	if err := ctx.Err(); err != nil {
		return VariantResult{}, err
	}
	v := Variant{Spec: "as deployed"}
	if spec != "" {
		var err error
		if v, err = ParseVariant(spec); err != nil {
			return VariantResult{}, err
		}
	}
	s.runs++
	o := s.o
	o.bounded, o.stopAbove = bound >= 0, bound
	if s.progress != nil {
		run := s.runs
		o.Progress = func(p Progress) {
			s.progress(RecommendProgress{Run: run, MaxRuns: s.ro.MaxRuns, Candidate: v.name(), Progress: p})
		}
		o.ProgressEvery = cmp.Or(s.o.ProgressEvery, 256)
	}
	dep, plan, err := v.plan(o)
	if err != nil {
		return VariantResult{}, err
	}
	vr, _, err := runVariant(ctx, o, 0, 1, v, dep, plan, 0)
	return vr, err
}
