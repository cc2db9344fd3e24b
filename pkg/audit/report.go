package audit

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// APIVersion and Kind identify a RouteAudit document (-o json|yaml).
const (
	APIVersion = "kubectl-dynamo.io/v1alpha1"
	Kind       = "RouteAudit"
)

// CheckName names one of the five checks.
type CheckName string

// The checks, in report order.
const (
	CheckArithmetic CheckName = "arithmetic"
	CheckChoice     CheckName = "choice"
	CheckTransfer   CheckName = "transfer"
	CheckState      CheckName = "state"
	CheckCandidates CheckName = "candidates"
)

// Checks lists every check in report order.
var Checks = []CheckName{CheckArithmetic, CheckChoice, CheckTransfer, CheckState, CheckCandidates}

// CheckDescriptions say in a few words what each check compares.
var CheckDescriptions = map[CheckName]string{
	CheckArithmetic: "logged terms reproduce the logged logit",
	CheckChoice:     "the pick is the minimum (T=0) or a likely sample (T>0)",
	CheckTransfer:   "the preferred multiplier and required domain match the transfer policy",
	CheckState:      "the KV index gives the logged cached blocks",
	CheckCandidates: "the router scored exactly the workers the model holds eligible",
}

// Report is the audit of a deployment's routing decisions: how many each
// check covered and agreed with, per check and per hop, and every
// disagreement with its most likely cause.
type Report struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// Context is the kubeconfig context or the capture file of the model.
	Context string `json:"context,omitempty"`
	// Deployment is namespace/name ("" without a model).
	Deployment string `json:"deployment,omitempty"`
	// RouterMode and Release are the model's router mode and Dynamo release.
	RouterMode string `json:"routerMode,omitempty"`
	Release    string `json:"release,omitempty"`
	// Logs says what was read and joined.
	Logs Logs `json:"logs"`
	// Agreement is agreed over covered, summed over every check (nil when no
	// check covered anything).
	Agreement *float64 `json:"agreement,omitempty"`
	// Checks has one result per check over every hop; Hops the same per hop.
	Checks []CheckResult `json:"checks"`
	Hops   []HopResult   `json:"hops,omitempty"`
	// Disagreements are listed up to Options.MaxDisagreements;
	// DisagreementsOmitted counts the rest.
	Disagreements        []Disagreement `json:"disagreements,omitempty"`
	DisagreementsOmitted int            `json:"disagreementsOmitted,omitempty"`
	// Decisions lists every decision with its checks' outcomes, up to
	// MaxDecisionsListed (DecisionsOmitted counts the rest).
	Decisions        []DecisionResult `json:"decisions,omitempty"`
	DecisionsOmitted int              `json:"decisionsOmitted,omitempty"`
	// Notes say what limited the audit and what to do about it.
	Notes []string `json:"notes,omitempty"`
}

// Logs summarises the log streams.
type Logs struct {
	Streams []StreamStats `json:"streams"`
	Join    JoinStats     `json:"join"`
	// First and Last are the first and last router line timestamps.
	First string `json:"first,omitempty"`
	Last  string `json:"last,omitempty"`
}

// CheckResult is one check's tally.
type CheckResult struct {
	Check CheckName `json:"check"`
	// Hop is set in HopResult.Checks.
	Hop string `json:"hop,omitempty"`
	// Covered decisions are those the check could run on; Agreed and
	// Disagreed split them.
	Covered   int `json:"covered"`
	Agreed    int `json:"agreed"`
	Disagreed int `json:"disagreed"`
	// Rate is Agreed/Covered (nil when nothing was covered).
	Rate *float64 `json:"rate,omitempty"`
	// NotCovered counts the decisions the check could not run on, and
	// Reasons says why.
	NotCovered int           `json:"notCovered"`
	Reasons    []ReasonCount `json:"reasons,omitempty"`
	// Lines counts, for the arithmetic check, the Formula lines checked
	// (those of incomplete decisions included) and how many reproduced.
	Lines *LineCount `json:"lines,omitempty"`
}

// ReasonCount is why some decisions were not covered.
type ReasonCount struct {
	Reason    string `json:"reason"`
	Decisions int    `json:"decisions"`
}

// LineCount counts lines checked.
type LineCount struct {
	Checked int `json:"checked"`
	Agreed  int `json:"agreed"`
}

// HopResult is the checks of one hop.
type HopResult struct {
	Hop       string        `json:"hop"`
	Decisions int           `json:"decisions"`
	Checks    []CheckResult `json:"checks"`
}

// Cause kinds: the most likely reason for a disagreement.
const (
	CauseReleaseDrift  = "release-drift"
	CauseUnreadConfig  = "unread-config"
	CauseStaleIndex    = "stale-index"
	CauseMissingEvents = "missing-events"
	CauseHashSpace     = "hash-space"
	CauseUnknownWorker = "unknown-worker"
	CauseRegistration  = "registration"
	CauseLoadDrift     = "load-drift"
	CauseDomainDrift   = "domain-drift"
	CauseMissingLines  = "missing-lines"
	CauseUnlikelyDraw  = "unlikely-draw"
)

// Disagreement is one place where the logs and the model differ.
type Disagreement struct {
	Check     CheckName `json:"check"`
	Hop       string    `json:"hop,omitempty"`
	RequestID string    `json:"requestId,omitempty"`
	// Decision is the decision's Seq.
	Decision int `json:"decision"`
	// Worker is the pod name (or the id when the model does not know it).
	Worker   string             `json:"worker,omitempty"`
	WorkerID routecore.WorkerID `json:"workerId,string"`
	DpRank   uint32             `json:"dpRank"`
	// Field is what differs; Logged and Expected its two values.
	Field    string `json:"field"`
	Logged   string `json:"logged"`
	Expected string `json:"expected"`
	// CauseKind classifies Cause, the most likely reason.
	CauseKind string `json:"causeKind"`
	Cause     string `json:"cause"`
	// Findings are the deployment's findings that point the same way.
	Findings []string   `json:"findings,omitempty"`
	Lines    []Position `json:"lines,omitempty"`
}

// Outcome of one check on one decision.
const (
	OutcomeAgree      = "agree"
	OutcomeDisagree   = "disagree"
	OutcomeNotCovered = "not-covered"
)

// DecisionResult is one decision and its checks.
type DecisionResult struct {
	Seq       int    `json:"seq"`
	Source    string `json:"source"`
	RequestID string `json:"requestId,omitempty"`
	Hop       string `json:"hop,omitempty"`
	// Selected is the picked worker's pod name (or id); SelectedID its id.
	Selected   string             `json:"selected,omitempty"`
	SelectedID routecore.WorkerID `json:"selectedId,string"`
	DpRank     uint32             `json:"dpRank"`
	// Logit is the logged cost of the pick (after the multiplier).
	Logit string `json:"logit,omitempty"`
	// Candidates is the number of Formula lines; Ties how many of them are
	// within rounding of the minimum cost.
	Candidates int `json:"candidates"`
	Ties       int `json:"ties,omitempty"`
	// Probability is the pick's softmax probability at T>0.
	Probability *float64 `json:"probability,omitempty"`
	// Checks maps each check to agree, disagree or not-covered.
	Checks map[CheckName]string `json:"checks"`
	// NotCovered says why a check did not run.
	NotCovered map[CheckName]string `json:"notCovered,omitempty"`
	Lines      []Position           `json:"lines"`
}

// Below returns the checks (over every hop) whose agreement rate is below
// rate, for --fail-on.
func (r *Report) Below(rate float64) []CheckResult {
	var out []CheckResult
	for _, c := range r.Checks {
		if c.Rate != nil && *c.Rate < rate {
			out = append(out, c)
		}
	}
	return out
}

// Check returns the result of one check over every hop.
func (r *Report) Check(name CheckName) CheckResult {
	for _, c := range r.Checks {
		if c.Check == name {
			return c
		}
	}
	return CheckResult{Check: name}
}

// FormatRate renders a rate as a percentage with one decimal where needed
// (100%, 99.5%), or "-" for nil.
func FormatRate(r *float64) string {
	if r == nil {
		return "-"
	}
	p := *r * 100
	if p == float64(int(p)) {
		return strconv.Itoa(int(p)) + "%"
	}
	s := strconv.FormatFloat(p, 'f', 1, 64)
	if s == "100.0" {
		s = "99.9" // never round a disagreement away
	}
	return s + "%"
}

// ParseRate reads --fail-on: a fraction (0.99) or a percentage (99%, 99.5%).
func ParseRate(s string) (float64, error) {
	t := strings.TrimSpace(s)
	pct := strings.HasSuffix(t, "%")
	t = strings.TrimSuffix(t, "%")
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v != v {
		return 0, fmt.Errorf("%q is not a rate: give a fraction such as 0.99 or a percentage such as 99%%", s)
	}
	if pct || v > 1 {
		v /= 100
	}
	if v < 0 || v > 1 {
		return 0, fmt.Errorf("%q is outside 0..1 (0%%..100%%)", s)
	}
	return v, nil
}

// tally accumulates one check's outcomes.
type tally struct {
	covered, agreed, notCovered int
	reasons                     map[string]int
	lines                       *LineCount
}

func (t *tally) add(outcome, reason string) {
	switch outcome {
	case OutcomeAgree:
		t.covered++
		t.agreed++
	case OutcomeDisagree:
		t.covered++
	default:
		t.notCovered++
		if t.reasons == nil {
			t.reasons = map[string]int{}
		}
		t.reasons[reason]++
	}
}

func (t *tally) result(name CheckName, hop string) CheckResult {
	c := CheckResult{Check: name, Hop: hop, Covered: t.covered, Agreed: t.agreed, Disagreed: t.covered - t.agreed, NotCovered: t.notCovered, Lines: t.lines}
	if t.covered > 0 {
		r := float64(t.agreed) / float64(t.covered)
		c.Rate = &r
	}
	for reason, n := range t.reasons {
		c.Reasons = append(c.Reasons, ReasonCount{Reason: reason, Decisions: n})
	}
	slices.SortFunc(c.Reasons, func(a, b ReasonCount) int {
		if a.Decisions != b.Decisions {
			return b.Decisions - a.Decisions
		}
		return strings.Compare(a.Reason, b.Reason)
	})
	return c
}
