package simulate

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/ai-dynamo/kubectl-dynamo/internal/cmdutil"
	"github.com/ai-dynamo/kubectl-dynamo/internal/printers"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/simulate"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/simulate/plot"
)

// chartWidth is the terminal chart's width.
const chartWidth = 100

func (o *Options) print(r *simulate.Report, notes []model.Note) error {
	if ok, err := o.Output.PrintStructured(o.IO.Out, r); ok {
		return err
	}
	st := cmdutil.Style{Color: o.IO.ColorEnabled()}
	wide := o.Output.Format == cmdutil.OutputWide
	if o.Output.NoHeaders {
		for _, n := range notes {
			if n.Severity == model.NoteWarning {
				fmt.Fprintf(o.IO.ErrOut, "warning: %s: %s\n", n.Source, n.Message)
			}
		}
		for _, w := range r.Trace.Warnings {
			fmt.Fprintf(o.IO.ErrOut, "warning: the trace: %s\n", w)
		}
		for _, v := range r.Variants {
			for _, n := range v.Notes {
				fmt.Fprintf(o.IO.ErrOut, "warning: %s: %s\n", v.Name, n)
			}
		}
		return comparison(r, st).Render(o.IO.Out, printers.TableOptions{Wide: wide, NoHeaders: true})
	}
	return printReport(o.IO.Out, r, notes, wide, st)
}

// printReport writes the human form: what was replayed, the comparison
// table, each variant's domains and failures, the chart, and the notes.
func printReport(w io.Writer, r *simulate.Report, notes []model.Note, wide bool, st cmdutil.Style) error {
	var b strings.Builder
	kv := func(k, v string) { fmt.Fprintf(&b, "%s %s\n", st.Bold(fmt.Sprintf("%-11s", k+":")), v) }
	name := r.Deployment
	if r.Namespace != "" {
		name = r.Namespace + "/" + name
	}
	kv("Deployment", fmt.Sprintf("%s   %s %s   %s %s   %s %s", name, st.Bold("Context:"), dash(r.Context), st.Bold("Model:"), dash(r.Model), st.Bold("Dynamo:"), r.Dynamo.Short()))
	kv("Traffic", trafficLine(r.Trace))
	for _, w := range r.Trace.Warnings {
		fmt.Fprintf(&b, "%s %s the trace: %s\n", strings.Repeat(" ", 11), st.Severity(model.SeverityWarning, "⚠"), w)
	}
	e := r.Engine
	kv("Engine", fmt.Sprintf("%s prefill tok/s per GPU, decode step %g ms + %g ms per sequence — %s; timings are estimates",
		count(int(e.PrefillTokensPerSecondPerGPU)), e.DecodeStepMs, e.DecodeStepMsPerSequence, e.Source))
	if len(r.KvCapacity) > 0 {
		kv("KV cache", kvCapacityLine(r.KvCapacity))
	}
	kv("Seed", strconv.FormatUint(r.Seed, 10))
	b.WriteString("\n")
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	// Saturation first: when a stage runs at or above the threshold, the
	// figures below are queueing, and the table says so before them.
	if err := printSaturation(w, r, wide, st); err != nil {
		return err
	}
	if err := comparison(r, st).Render(w, printers.TableOptions{Wide: wide, HeaderStyle: st.Bold}); err != nil {
		return err
	}
	if len(r.SLOs) > 0 {
		specs := make([]string, len(r.SLOs))
		for i, s := range r.SLOs {
			specs[i] = fmt.Sprintf("%d. %s", i+1, s.Spec)
		}
		if _, err := fmt.Fprintf(w, "SLOs: %s (a failed request misses every one; SLO BREACHES columns list them in this order)\n", strings.Join(specs, ", ")); err != nil {
			return err
		}
	}
	if r.Seeds > 1 {
		if _, err := fmt.Fprintf(w, "\nSpread over %d seeds (%d to %d; the figures above are seed %d's), min / median / max:\n", r.Seeds, r.Seed, r.Seed+uint64(r.Seeds)-1, r.Seed); err != nil {
			return err
		}
		if err := spreadTable(r).Render(w, printers.TableOptions{HeaderStyle: st.Bold}); err != nil {
			return err
		}
	}
	if slices.ContainsFunc(r.Variants, func(v simulate.VariantResult) bool { return v.QueueDominated }) {
		if _, err := fmt.Fprintf(w, "* queue-dominated: a stage runs at or above %s of its capacity (Saturation above), so these latencies are mostly waiting and the KV hit rate is depressed by it (a turn arrives before its previous prefill ran)\n", pctAny(r.SaturationThreshold)); err != nil {
			return err
		}
	}
	domain := "DOMAIN"
	if r.DomainKey != "" {
		domain = strings.ToUpper(r.DomainKey)
	}
	legend := false
	for _, v := range r.Variants {
		b.Reset()
		if !legend && len(v.Domains) > 0 {
			fmt.Fprintf(&b, "\n%s\n", loadLegend)
			legend = true
		}
		fmt.Fprintf(&b, "\n%s %s\n", st.Bold(v.Name+":"), headline(v))
		for _, n := range v.Notes {
			fmt.Fprintf(&b, "  %s %s\n", st.Severity(model.SeverityWarning, "⚠"), n)
		}
		if len(v.SLOs) > 0 {
			b.WriteString(sloLine(v, st) + "\n")
		}
		for _, f := range v.Failures {
			fmt.Fprintf(&b, "  %s %d %s at the %s hop, e.g. %s\n", st.Severity(model.SeverityError, "✗"), f.Count, f.Kind, f.Stage, f.Example)
		}
		if _, err := io.WriteString(w, b.String()); err != nil {
			return err
		}
		if len(v.Domains) == 0 {
			// No worker took part (the frontend refused every request, or none
			// is routable): an empty table would say nothing.
			if _, err := io.WriteString(w, "  (no worker is routable: no per-"+strings.ToLower(domain)+" figures)\n"); err != nil {
				return err
			}
			continue
		}
		if err := domainTable(r, v, domain).Render(w, printers.TableOptions{Wide: wide, HeaderStyle: st.Bold}); err != nil {
			return err
		}
		if wide {
			if _, err := io.WriteString(w, "\n"); err != nil {
				return err
			}
			if err := workerTable(v, domain).Render(w, printers.TableOptions{Wide: wide, HeaderStyle: st.Bold}); err != nil {
				return err
			}
		}
	}
	if _, err := io.WriteString(w, "\n"+st.Bold("Over time")+" (decode load per domain; failures marked below each)\n"); err != nil {
		return err
	}
	if err := plot.Terminal(w, r, chartWidth); err != nil {
		return err
	}
	if r.Recommendation != nil {
		// The answer last: what to change, with the figures and the patch.
		if err := printRecommendation(w, r, st); err != nil {
			return err
		}
	}
	b.Reset()
	if len(r.Assumptions) > 0 || len(notes) > 0 {
		b.WriteString("\nNotes:\n")
		for _, n := range notes {
			fmt.Fprintf(&b, "- %s: %s\n", n.Source, n.Message)
		}
		for _, a := range r.Assumptions {
			fmt.Fprintf(&b, "- %s\n", a)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// trafficLine says what was replayed: the requests and tokens, the span of
// their arrivals and the rates over it (the trace's own, divided by
// --speedup), and when the last request finished.
func trafficLine(t simulate.TraceInfo) string {
	s := fmt.Sprintf("%s (%s): %s requests, %s input + %s output tokens", t.Source, t.Format, count(t.Requests),
		count(int(t.InputTokens)), count(int(t.OutputTokens)))
	switch {
	case t.SpanMs > 0:
		s += fmt.Sprintf(", arriving over %s: %s req/s, %s prompt tok/s, %s output tok/s", fmtDur(t.SpanMs),
			rate(t.RequestRate), rate(t.PromptTokensPerSecond), rate(t.OutputTokensPerSecond))
	case t.Requests > 1:
		s += ", all arriving at once"
	}
	if t.Speedup != 1 {
		s += fmt.Sprintf(" (speedup ×%g: the trace's own span is %s)", t.Speedup, fmtDur(t.SpanMs*t.Speedup))
	}
	s += fmt.Sprintf("; the last finished at %s", fmtDur(t.DurationMs))
	if t.TraceBlockSize > 0 {
		s += fmt.Sprintf("; hash ids of %d tokens hashed at the router's block size %d", t.TraceBlockSize, t.RouterBlockSize)
	}
	return s
}

// kvCapacityLine says the prefix-cache capacity each pool's workers run
// with and where it came from.
func kvCapacityLine(caps []simulate.PoolCapacity) string {
	parts := make([]string, 0, len(caps))
	for _, c := range caps {
		p := fmt.Sprintf("%s %s blocks per rank on %s worker(s), from %s", c.Role, count(int(c.BlocksPerRank)), count(c.Workers), c.Source)
		if !c.Modelled {
			p += " (not modelled: no decision reads a decode cache)"
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, "; ")
}

// rate prints a rate with three significant figures at most (2.78, 38.6,
// 41,234).
func rate(v float64) string {
	switch {
	case v <= 0:
		return "0"
	case v < 10:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case v < 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return count(int(v + 0.5))
}

// loadLegend explains the load columns of the per-domain tables.
const loadLegend = "Load columns: prefill = requests queued or prefilling, decode = sequences decoding, summed over the domain's workers; mean over time / 95th percentile / peak"

// printSaturation writes the stages' load against their capacity: the
// saturated ones first and alone (every one with -o wide), or one line
// saying that none is.
func printSaturation(w io.Writer, r *simulate.Report, wide bool, st cmdutil.Style) error {
	th := pctAny(r.SaturationThreshold)
	var top *simulate.Saturation
	var topVariant string
	saturated := 0
	for _, v := range r.Variants {
		for i := range v.Saturation {
			s := &v.Saturation[i]
			if s.Saturated {
				saturated++
			}
			if !s.Unbounded && (top == nil || s.Utilisation > top.Utilisation) {
				top, topVariant = s, v.Name
			}
		}
	}
	if top == nil {
		why := "no worker serves the traffic, so there is no capacity to compare it with"
		if r.Trace.SpanMs == 0 {
			why = "every request arrives at once, so the traffic has no rate to compare with capacity"
		}
		_, err := fmt.Fprintf(w, "%s %s\n\n", st.Bold("Saturation:"), why)
		return err
	}
	if saturated == 0 {
		if _, err := fmt.Fprintf(w, "%s every stage below %s of its capacity under the engine model (highest: %s %s at %s, %s)\n", st.Bold("Saturation:"), th,
			top.Stage, domainWords(top.Domain), pctAny(top.Utilisation), topVariant); err != nil {
			return err
		}
		if !wide {
			_, err := io.WriteString(w, "\n")
			return err
		}
	} else {
		if _, err := fmt.Fprintf(w, "%s %s %d stage(s) at or above %s of their capacity under the engine model: the traffic queues, and the figures marked * below are queue-dominated\n",
			st.Bold("Saturation:"), st.Severity(model.SeverityError, "✗"), saturated, th); err != nil {
			return err
		}
	}
	t := &printers.Table{Columns: []printers.Column{
		{Header: "  Variant"}, {Header: "Stage"}, {Header: "Domain"}, {Header: "Load"}, {Header: "Work / Capacity (tok/s)"},
		{Header: "Offered (no cache)"}, {Header: "To be stable"},
	}}
	for _, v := range r.Variants {
		for _, s := range v.Saturation {
			if !s.Saturated && !wide {
				continue
			}
			load, capacity, offered := pctAny(s.Utilisation), rate(s.CapacityTokensPerSecond), "-"
			if s.Unbounded {
				load, capacity = "-", "unbounded"
			}
			if s.Domain == "" && !s.Unbounded {
				offered = fmt.Sprintf("%s (%s)", rate(s.OfferedTokensPerSecond), pctAny(s.OfferedUtilisation))
			}
			if s.Saturated {
				load = st.Severity(model.SeverityError, load)
			}
			t.AddRow("  "+v.Name, s.Stage, cmp.Or(s.Domain, "(pool)"), load, rate(s.WorkTokensPerSecond)+" / "+capacity, offered, stable(r, s))
		}
	}
	if err := t.Render(w, printers.TableOptions{HeaderStyle: st.Bold}); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// stable says what makes a saturated stage stable: the traffic slowed (for
// the pool), or workers added (where).
func stable(r *simulate.Report, s simulate.Saturation) string {
	if !s.Saturated {
		return "-"
	}
	add := fmt.Sprintf("add %d %s worker(s)", s.AddWorkers, s.Role)
	if s.Domain != "" {
		return fmt.Sprintf("%s in %s (%s+%d@%s)", add, s.Domain, s.Role, s.AddWorkers, s.Domain)
	}
	slow := fmt.Sprintf("slow the traffic ×%.2f (--speedup %s", s.SlowDown, shortFloat(r.Trace.Speedup/s.SlowDown))
	if r.Trace.RequestRate > 0 {
		slow += ", or --rate " + shortFloat(r.Trace.RequestRate/s.SlowDown)
	}
	return slow + ") or " + add
}

// domainWords names a saturation row's domain: the pool, or a value.
func domainWords(d string) string {
	if d == "" {
		return "pool"
	}
	return "in " + d
}

// pctAny prints a share as a whole percentage, above 100 % too.
func pctAny(f float64) string {
	if f > 0 && f < 0.01 {
		return "<1%"
	}
	return strconv.FormatFloat(math.Round(f*100), 'f', 0, 64) + "%"
}

// shortFloat prints a flag value with three significant figures.
func shortFloat(v float64) string {
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// printRecommendation writes the --recommend search's answer: the change,
// its figures beside the deployment as it is and the other path's best, the
// search's steps and bounds, and the change as a DGD patch.
func printRecommendation(w io.Writer, r *simulate.Report, st cmdutil.Style) error {
	rec := r.Recommendation
	var b strings.Builder
	b.WriteString("\n")
	switch {
	case rec.NoChangeNeeded:
		fmt.Fprintf(&b, "%s %s the deployment as it is meets the goal (%s): no change needed\n", st.Bold("Recommendation:"), st.Severity(model.SeverityInfo, "✓"), rec.Goal)
	case rec.Recommended != nil:
		c := rec.Recommended
		fmt.Fprintf(&b, "%s %s %s — %s: %s\n", st.Bold("Recommendation:"), st.Severity(model.SeverityInfo, "✓"), c.Spec, candidateCost(c), rec.Goal)
	default:
		fmt.Fprintf(&b, "%s %s no change within the search meets the goal (%s); the best found are below\n", st.Bold("Recommendation:"), st.Severity(model.SeverityError, "✗"), rec.Goal)
	}
	fmt.Fprintf(&b, "  searched %d candidate(s): %s", rec.Runs, rec.SearchSpace)
	if rec.Stopped != "" {
		fmt.Fprintf(&b, "; stopped early: %s", rec.Stopped)
	}
	b.WriteString("\n")
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	if rec.NoChangeNeeded {
		return nil
	}
	t := &printers.Table{Columns: []printers.Column{
		{Header: "  Candidate"}, {Header: "Change"}, {Header: "Added"}, {Header: "Failed"}, {Header: "Cross-domain"}, {Header: "KV Hit"},
		{Header: "TTFT p50/p99 (est)"}, {Header: "E2E p50/p99 (est)"}, {Header: "SLOs met"}, {Header: "Saturated"},
	}}
	row := func(name, change, added string, v simulate.VariantResult) {
		n := v.SameDomainTransfers + v.CrossDomainTransfers + v.UnknownDomainTransfers
		cross := "-"
		if n > 0 {
			cross = fmt.Sprintf("%s (%s)", count(v.CrossDomainTransfers), pct(float64(v.CrossDomainTransfers)/float64(n)))
		}
		met := 0
		for _, s := range v.SLOs {
			if s.Met {
				met++
			}
		}
		slo := "-"
		if len(v.SLOs) > 0 {
			slo = fmt.Sprintf("%d of %d", met, len(v.SLOs))
		}
		sat := "no"
		if v.QueueDominated {
			sat = fmt.Sprintf("yes (×%.2f)", v.SlowDown)
		}
		failed := count(v.Failed)
		if v.Failed > 0 {
			failed = fmt.Sprintf("%s (%s)", count(v.Failed), pct(float64(v.Failed)/float64(max(v.Requests, 1))))
		}
		t.AddRow("  "+name, change, added, failed, cross, pct(v.HitRate), ms(v.TTFTMs.P50)+" / "+ms(v.TTFTMs.P99), ms(v.E2EMs.P50)+" / "+ms(v.E2EMs.P99), slo, sat)
	}
	row("as deployed", "-", "-", r.Variants[0])
	if c := rec.Recommended; c != nil {
		row("recommended", c.Spec, candidateCost(c), c.Result)
	}
	for _, c := range rec.Alternatives {
		name := "alternative"
		if !c.MeetsGoal {
			name = "best found"
		}
		row(name, c.Spec, candidateCost(&c), c.Result)
	}
	if err := t.Render(w, printers.TableOptions{HeaderStyle: st.Bold}); err != nil {
		return err
	}
	b.Reset()
	for _, c := range append(optional(rec.Recommended), rec.Alternatives...) {
		steps := make([]string, len(c.Steps))
		prev := r.Variants[0].Failed
		for i, s := range c.Steps {
			steps[i] = fmt.Sprintf("%s (failed %s → %s)", s.Change, count(prev), count(s.Failed))
			prev = s.Failed
		}
		fmt.Fprintf(&b, "  steps to %s: %s\n", c.Spec, strings.Join(steps, ", "))
	}
	if rec.Patch != "" {
		fmt.Fprintf(&b, "\n%s (review it and apply it yourself, e.g. with kubectl edit; kubectl-dynamo changes nothing):\n%s", st.Bold("The recommended change as a DGD patch"), rec.Patch)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func optional(c *simulate.Candidate) []simulate.Candidate {
	if c == nil {
		return nil
	}
	return []simulate.Candidate{*c}
}

// candidateCost says what a change adds.
func candidateCost(c *simulate.Candidate) string {
	var parts []string
	if c.Enforcement != "" {
		parts = append(parts, "preferred enforcement")
	}
	if c.AddedWorkers > 0 {
		parts = append(parts, fmt.Sprintf("%d worker(s), %d GPU(s)", c.AddedWorkers, c.AddedGPUs))
	} else {
		parts = append(parts, "no GPU added")
	}
	return strings.Join(parts, ", ")
}

// headline says in one line what happened to the variant's requests.
func headline(v simulate.VariantResult) string {
	s := fmt.Sprintf("%s of %s requests routed", count(v.Routed), count(v.Requests))
	if v.Failed > 0 {
		s += fmt.Sprintf(", %s failed (%s)", count(v.Failed), pct(float64(v.Failed)/float64(v.Requests)))
	}
	if n := v.SameDomainTransfers + v.CrossDomainTransfers + v.UnknownDomainTransfers; n > 0 {
		s += fmt.Sprintf("; %s of %s KV transfers cross domains", count(v.CrossDomainTransfers), count(n))
	}
	s += fmt.Sprintf("; KV hit rate %s", pct(v.HitRate))
	if v.WastedPrefills > 0 {
		s += fmt.Sprintf("; %s prefills ran for requests that then failed", count(v.WastedPrefills))
	}
	return s
}

// comparison is the side-by-side table: one row per variant.
func comparison(r *simulate.Report, st cmdutil.Style) *printers.Table {
	t := &printers.Table{Columns: []printers.Column{
		{Header: "Variant"}, {Header: "Mode"}, {Header: "Enforcement"}, {Header: "Routed"}, {Header: "Failed"},
		{Header: "Cross-domain"}, {Header: "KV Hit"}, {Header: "TTFT p50/p99 (est)"}, {Header: "E2E p50/p99 (est)"},
	}}
	slo := len(r.SLOs) > 0
	if slo {
		t.Columns = append(t.Columns, printers.Column{Header: "SLOs met"})
	}
	delta := len(r.Variants) > 1
	if delta {
		t.Columns = append(t.Columns, printers.Column{Header: "Δ vs as deployed"})
	}
	t.Columns = append(t.Columns, printers.Column{Header: "Served as", Wide: true}, printers.Column{Header: "Evicted Blocks", Wide: true})
	for i, v := range r.Variants {
		failed := "0"
		if v.Failed > 0 {
			failed = st.Severity(model.SeverityError, fmt.Sprintf("%s (%s)", count(v.Failed), pct(float64(v.Failed)/float64(max(v.Requests, 1)))))
		}
		n := v.SameDomainTransfers + v.CrossDomainTransfers + v.UnknownDomainTransfers
		cross := "-"
		if n > 0 {
			cross = fmt.Sprintf("%s (%s)", count(v.CrossDomainTransfers), pct(float64(v.CrossDomainTransfers)/float64(n)))
		}
		served := fmt.Sprintf("%d disagg, %d agg, %d bypassed", v.Disaggregated, v.Aggregated, v.Bypassed)
		mark := ""
		if v.QueueDominated {
			mark = "*"
		}
		cells := []string{v.Name, string(v.RouterMode), v.Enforcement, count(v.Routed), failed, cross, pct(v.HitRate) + mark,
			ms(v.TTFTMs.P50) + " / " + ms(v.TTFTMs.P99) + mark, ms(v.E2EMs.P50) + " / " + ms(v.E2EMs.P99) + mark}
		if slo {
			met := 0
			for _, s := range v.SLOs {
				if s.Met {
					met++
				}
			}
			cell := fmt.Sprintf("%d of %d", met, len(v.SLOs))
			if met < len(v.SLOs) {
				cell = st.Severity(model.SeverityError, cell)
			}
			cells = append(cells, cell)
		}
		if delta {
			cells = append(cells, deltaCell(r.Variants[0], v, i == 0))
		}
		t.AddRow(append(cells, served, count(int(v.EvictedBlocks)))...)
	}
	return t
}

func domainTable(r *simulate.Report, v simulate.VariantResult, domain string) *printers.Table {
	t := &printers.Table{Columns: []printers.Column{
		{Header: "  " + domain}, {Header: "P/D Workers"}, {Header: "Prefill Picks"}, {Header: "Decode Picks"}, {Header: "Failed"},
		{Header: "Prefill Load mean/p95/peak"}, {Header: "Decode Load mean/p95/peak"}, {Header: "TTFT p50/p99 (est)"},
	}}
	var specs []string
	for _, s := range r.SLOs {
		specs = append(specs, s.Spec)
	}
	if len(specs) > 0 {
		t.Columns = append(t.Columns, printers.Column{Header: "SLO breaches"})
	}
	breaches := func(rs []simulate.SLOResult) string {
		cells := make([]string, len(rs))
		for i, s := range rs {
			cells[i] = count(s.Breaches)
		}
		return strings.Join(cells, ", ")
	}
	for _, d := range v.Domains {
		row := []string{"  " + d.Value, fmt.Sprintf("%d/%d", d.PrefillWorkers, d.DecodeWorkers), count(d.PrefillPicks), count(d.DecodePicks), count(d.Failed),
			loadStats(d.PrefillLoad), loadStats(d.DecodeLoad), ms(d.TTFTMs.P50) + " / " + ms(d.TTFTMs.P99)}
		if len(specs) > 0 {
			row = append(row, breaches(d.SLOs))
		}
		t.AddRow(row...)
	}
	if v.NoDomainFailed > 0 {
		// Requests that failed before any worker was picked: no domain, and
		// every objective missed.
		row := []string{"  (no domain)", "-", "-", "-", count(v.NoDomainFailed), "-", "-", "-"}
		if len(specs) > 0 {
			row = append(row, strings.TrimSuffix(strings.Repeat(count(v.NoDomainFailed)+", ", len(specs)), ", "))
		}
		t.AddRow(row...)
	}
	return t
}

// deltaCell is a variant's change against the deployment as it is: failed
// requests, cross-domain transfers, KV hit rate (percentage points) and TTFT
// p50.
func deltaCell(base, v simulate.VariantResult, self bool) string {
	if self {
		return "-"
	}
	signed := func(n int) string {
		switch {
		case n > 0:
			return "+" + count(n)
		case n < 0:
			return "−" + count(-n)
		}
		return "0"
	}
	hit := (v.HitRate - base.HitRate) * 100
	hitS := strconv.FormatFloat(math.Abs(hit), 'f', 1, 64) + "pp"
	switch {
	case hitS == "0.0pp":
		hitS = "0pp"
	case hit > 0:
		hitS = "+" + hitS
	default:
		hitS = "−" + hitS
	}
	ttft := "-"
	if v.TTFTMs.Count > 0 && base.TTFTMs.Count > 0 {
		d := v.TTFTMs.P50 - base.TTFTMs.P50
		switch {
		case math.Abs(d) < 0.5:
			ttft = "0ms"
		case d > 0:
			ttft = "+" + ms(d)
		default:
			ttft = "−" + ms(-d)
		}
	}
	return fmt.Sprintf("failed %s · cross %s · hit %s · TTFT p50 %s", signed(v.Failed-base.Failed), signed(v.CrossDomainTransfers-base.CrossDomainTransfers), hitS, ttft)
}

// sloLine says each objective's outcome for a variant.
func sloLine(v simulate.VariantResult, st cmdutil.Style) string {
	parts := make([]string, len(v.SLOs))
	for i, s := range v.SLOs {
		mark := st.Severity(model.SeverityInfo, "✓")
		if !s.Met {
			mark = st.Severity(model.SeverityError, "✗")
		}
		parts[i] = fmt.Sprintf("%s %s %s breaches (%s; %s allowed)", mark, s.SLO, count(s.Breaches), pct(s.Share), count(s.Allowed))
	}
	return "  SLOs: " + strings.Join(parts, " · ")
}

// spreadTable is the spread of each variant's headline figures over the
// seeds of a --seeds run.
func spreadTable(r *simulate.Report) *printers.Table {
	t := &printers.Table{Columns: []printers.Column{
		{Header: "  Variant"}, {Header: "Failed"}, {Header: "Cross-domain"}, {Header: "KV Hit"}, {Header: "TTFT p50"}, {Header: "TTFT p99"},
		{Header: "E2E p50"}, {Header: "E2E p99"},
	}}
	for i := range r.SLOs {
		t.Columns = append(t.Columns, printers.Column{Header: fmt.Sprintf("SLO %d breaches", i+1)})
	}
	three := func(s simulate.Spread, f func(float64) string) string {
		return f(s.Min) + " / " + f(s.Median) + " / " + f(s.Max)
	}
	num := func(v float64) string {
		if v == math.Trunc(v) {
			return count(int(v))
		}
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	for _, v := range r.Variants {
		sp := v.Spread
		if sp == nil {
			continue
		}
		row := []string{"  " + v.Name, three(sp.Failed, num), three(sp.CrossDomain, num), three(sp.HitRate, pct), three(sp.TTFTP50, ms), three(sp.TTFTP99, ms),
			three(sp.E2EP50, ms), three(sp.E2EP99, ms)}
		for _, b := range sp.SLOBreaches {
			row = append(row, three(b, num))
		}
		t.AddRow(row...)
	}
	return t
}

func workerTable(v simulate.VariantResult, domain string) *printers.Table {
	t := &printers.Table{Columns: []printers.Column{
		{Header: "  Worker"}, {Header: "Role"}, {Header: domain}, {Header: "Picks"}, {Header: "Load mean/p95/peak"}, {Header: "Cached Blocks Peak"}, {Header: "Evicted"},
	}}
	for _, w := range v.Workers {
		name := w.Worker
		if w.Synthetic {
			name += " (added)"
		}
		cached, evicted := count(int(w.CachedBlocksPeak)), count(int(w.EvictedBlocks))
		if w.Role == "decode" && !v.DecodeCachesModelled {
			cached, evicted = "-", "-" // not modelled: nothing reads a decode cache
		}
		t.AddRow("  "+name, w.Role, dash(w.Domain), count(w.Picks), loadStats(w.Load), cached, evicted)
	}
	return t
}

func loadStats(l simulate.LoadStats) string {
	return fmt.Sprintf("%.1f / %g / %g", l.Mean, l.P95, l.Peak)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// count prints an integer with thousands separators.
func count(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// pct prints a share as a percentage: whole numbers, with one decimal below
// 10 %, and never 0 % or 100 % for a share that is not exactly that.
func pct(f float64) string {
	switch {
	case f <= 0:
		return "0%"
	case f >= 1:
		return "100%"
	case f < 0.001:
		return "<0.1%"
	case f > 0.999:
		return ">99.9%"
	case f < 0.1:
		return strconv.FormatFloat(f*100, 'f', 1, 64) + "%"
	}
	return strconv.FormatFloat(f*100, 'f', 0, 64) + "%"
}

// ms prints a duration given in milliseconds.
func ms(v float64) string {
	switch {
	case v <= 0:
		return "-"
	case v < 1000:
		return strconv.FormatFloat(v, 'f', 0, 64) + "ms"
	case v < 60000:
		return strconv.FormatFloat(v/1000, 'f', 1, 64) + "s"
	}
	return fmtDur(v)
}

// fmtDur prints virtual time given in milliseconds as 1h02m, 3m05s, 12.5s.
func fmtDur(v float64) string {
	s := int64(v / 1000)
	switch {
	case v < 60000:
		return strconv.FormatFloat(v/1000, 'f', 1, 64) + "s"
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	}
	return fmt.Sprintf("%dh%02dm", s/3600, (s%3600)/60)
}
