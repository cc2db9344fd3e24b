package explain

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Headline is the verdict in one line, the same for every seed: the risk of
// the routing decision over every pick the router may draw (Verdict.Outcome),
// with its symbol (✓ ! ✗) so it reads without colour. explain-route and the
// dashboard print it; Draw says what this run's seed picked.
func (x *Explanation) Headline() string {
	v := x.Verdict
	switch v.Outcome {
	case OutcomeFails:
		return fmt.Sprintf("✗ NOT ROUTABLE — fails at the %s stage (%s)", v.Stage, dashIfEmpty(v.Error))
	case OutcomeCanFail:
		return "! " + x.canFailHeadline()
	}
	return "✓ ROUTABLE"
}

// canFailHeadline states how often the decision fails over every pick the
// router may draw, or, when its pick is fixed, which other landings fail.
func (x *Explanation) canFailHeadline() string {
	v := x.Verdict
	rows := x.Alternatives
	if v.FailureProbability == 0 {
		rows = x.Matrix
	}
	var kinds []string
	for _, r := range rows {
		if kind, _, _ := strings.Cut(r.Error, ":"); !r.Routable && kind != "" && !slices.Contains(kinds, kind) {
			kinds = append(kinds, kind)
		}
	}
	why := ""
	if len(kinds) > 0 {
		why = " (" + strings.Join(kinds, ", ") + ")"
	}
	if v.FailureProbability == 0 {
		return "CAN FAIL — the router's pick routes, but prefill on " + strings.Join(v.FailingPrefill, ", ") + " fails" + why
	}
	return fmt.Sprintf("CAN FAIL — %s of prefill picks fail%s", PercentWhole(v.FailureProbability), why)
}

// Draw is the pick this run drew and whether it routed, when the router's
// prefill pick is random ("" otherwise); ok reports whether it routed.
func (x *Explanation) Draw() (text string, ok bool) {
	if len(x.Alternatives) == 0 || x.Prefill == nil {
		return "", false
	}
	how := "seed " + strconv.FormatUint(x.Router.Seed, 10)
	if !x.Router.SeedGiven {
		how += "; --seed N draws another"
	}
	v := x.Verdict
	out := "✓ routes"
	if !v.Routable {
		out = fmt.Sprintf("✗ fails at the %s stage (%s)", v.Stage, dashIfEmpty(v.Error))
	}
	return fmt.Sprintf("this run drew prefill %s (%s): %s", x.Prefill.Pick, how, out), v.Routable
}

// PercentWhole is a probability in whole percent, never rounded to 0% or 100%.
func PercentWhole(p float64) string {
	switch {
	case p > 0 && p < 0.01:
		return "<1%"
	case p < 1 && p > 0.99:
		return ">99%"
	}
	return strconv.FormatFloat(math.Round(100*p), 'f', 0, 64) + "%"
}

func dashIfEmpty(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// ShortReason is why the candidate is not eligible without the "worker NAME "
// the router's message starts with (the row already names the worker).
func (c Candidate) ShortReason() string {
	return strings.TrimPrefix(c.Reason, "worker "+c.Worker+" ")
}

// RouterModeLine is the router mode and where it came from, with what a
// non-KV mode means for this dry run (explain-route's second line, the
// dashboard's route page).
func (x *Explanation) RouterModeLine() string {
	if len(x.Router.Hops) == 2 && x.Router.Hops[0].Mode != "" && x.Router.Hops[1].Mode != "" && x.Router.Hops[0].Mode != x.Router.Hops[1].Mode {
		// A worker set's router_config gives its hop its own mode.
		var parts []string
		for _, h := range x.Router.Hops {
			parts = append(parts, fmt.Sprintf("%s hop %s (%s)", h.Hop, h.Mode, dashIfEmpty(h.ModeSource)))
		}
		return strings.Join(parts, " · ") + " — each hop runs its own mode; a non-KV hop does not run the KV cost model, and a non-KV decode hop ignores routing constraints"
	}
	line := fmt.Sprintf("%s (%s)", dashIfEmpty(string(x.Router.Mode)), dashIfEmpty(x.Router.ModeSource))
	if x.Router.Mode != "" && !x.Router.Mode.IsKV() {
		line += " — not kv: the KV cost model does not run, and decode picks ignore routing constraints"
	}
	return line
}
