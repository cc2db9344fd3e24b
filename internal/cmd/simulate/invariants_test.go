package simulate_test

import (
	"compress/gzip"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/simulate"
)

// checkInvariants asserts the accounting every variant of a report must
// satisfy, whatever the deployment, router mode or what-if: every request is
// counted once, and the per-domain, per-worker, per-bucket and latency
// figures add up to the totals.
func checkInvariants(t *testing.T, r *simulate.Report, requests int) {
	t.Helper()
	if r.Trace.Requests != requests {
		t.Errorf("trace.requests %d, want %d", r.Trace.Requests, requests)
	}
	for _, v := range r.Variants {
		errorf := func(format string, a ...any) {
			t.Helper()
			t.Errorf("variant %q: "+format, append([]any{v.Name}, a...)...)
		}
		if v.Requests != requests || v.Routed+v.Failed != v.Requests {
			errorf("requests %d, routed %d + failed %d; want %d requests", v.Requests, v.Routed, v.Failed, requests)
		}
		// Failures: by kind and stage, every failed request once.
		failures, decodeFailures, transferFailures := 0, 0, 0
		seen := map[[2]string]bool{}
		for i, f := range v.Failures {
			failures += f.Count
			if f.Count <= 0 || f.Kind == "" || f.Stage == "" || f.Example == "" {
				errorf("failure %+v", f)
			}
			if seen[[2]string{f.Stage, f.Kind}] {
				errorf("failure %s/%s counted twice", f.Stage, f.Kind)
			}
			seen[[2]string{f.Stage, f.Kind}] = true
			if i > 0 && v.Failures[i-1].Count < f.Count {
				errorf("failures not by count: %+v", v.Failures)
			}
			switch f.Stage {
			case routecore.StageDecode:
				decodeFailures += f.Count
			case routecore.StageTransfer:
				transferFailures += f.Count
			}
		}
		if failures != v.Failed {
			errorf("failures add up to %d, failed %d", failures, v.Failed)
		}
		// Wasted prefills: decode-hop failures whose prefill ran.
		if v.WastedPrefills < 0 || v.WastedPrefills > decodeFailures {
			errorf("wasted prefills %d, decode-hop failures %d", v.WastedPrefills, decodeFailures)
		}
		// How routed requests were served.
		if v.Disaggregated+v.Aggregated+v.Bypassed != v.Routed {
			errorf("disaggregated %d + aggregated %d + bypassed %d != routed %d", v.Disaggregated, v.Aggregated, v.Bypassed, v.Routed)
		}
		// Every disaggregated request made exactly one KV transfer, classified once.
		if n := v.SameDomainTransfers + v.CrossDomainTransfers + v.UnknownDomainTransfers; n != v.Disaggregated {
			errorf("transfers same %d + cross %d + unknown %d = %d, disaggregated %d", v.SameDomainTransfers, v.CrossDomainTransfers, v.UnknownDomainTransfers, n, v.Disaggregated)
		}
		if v.SameDomainTransfers < 0 || v.CrossDomainTransfers < 0 || v.UnknownDomainTransfers < 0 {
			errorf("negative transfers")
		}
		// The KV hit rate.
		if v.CachedBlocks > v.PromptBlocks {
			errorf("cached blocks %d > prompt blocks %d", v.CachedBlocks, v.PromptBlocks)
		}
		want := 0.0
		if v.PromptBlocks > 0 {
			want = float64(v.CachedBlocks) / float64(v.PromptBlocks)
		}
		if math.Abs(v.HitRate-want) > 1e-12 {
			errorf("hit rate %v, cached/prompt = %d/%d = %v", v.HitRate, v.CachedBlocks, v.PromptBlocks, want)
		}
		// Latencies: one TTFT and one end-to-end sample per routed request.
		for name, p := range map[string]simulate.Percentiles{"ttft": v.TTFTMs, "e2e": v.E2EMs} {
			if p.Count != v.Routed {
				errorf("%s count %d, routed %d", name, p.Count, v.Routed)
			}
			if p.Count > 0 && !(0 < p.P50 && p.P50 <= p.P90 && p.P90 <= p.P99 && p.P99 <= p.Max*1.0101 && p.Mean <= p.Max) {
				errorf("%s percentiles out of order: %+v", name, p)
			}
		}
		if v.Routed > 0 && v.E2EMs.Max < v.TTFTMs.Max {
			errorf("the slowest end-to-end %v is faster than the slowest first token %v", v.E2EMs.Max, v.TTFTMs.Max)
		}
		// Domains: in value order; prefill picks are the routed requests plus
		// the wasted prefills, decode picks the routed requests; failures land
		// in a domain when a prefill worker had been picked.
		var prefillPicks, decodePicks, domFailed, prefillWorkers, decodeWorkers int
		values := make([]string, len(v.Domains))
		for i, d := range v.Domains {
			values[i] = d.Value
			prefillPicks += d.PrefillPicks
			decodePicks += d.DecodePicks
			domFailed += d.Failed
			prefillWorkers += d.PrefillWorkers
			decodeWorkers += d.DecodeWorkers
			// (A request served aggregated counts in both; with no prefill worker
			// left, Dynamo serves it on a decode worker.)
			if d.PrefillPicks > 0 && d.PrefillWorkers+d.DecodeWorkers == 0 || d.DecodePicks > 0 && d.DecodeWorkers == 0 {
				errorf("domain %s: picks %d/%d with %d/%d workers", d.Value, d.PrefillPicks, d.DecodePicks, d.PrefillWorkers, d.DecodeWorkers)
			}
			for name, l := range map[string]simulate.LoadStats{"prefill": d.PrefillLoad, "decode": d.DecodeLoad} {
				if l.Mean < 0 || l.Mean > l.Peak+1e-9 || l.P95 > l.Peak {
					errorf("domain %s %s load %+v", d.Value, name, l)
				}
			}
		}
		if !slices.IsSorted(values) || len(slices.Compact(slices.Clone(values))) != len(values) {
			errorf("domains not in value order, or twice: %v", values)
		}
		if prefillPicks != v.Routed+v.WastedPrefills {
			errorf("prefill picks %d, routed %d + wasted %d", prefillPicks, v.Routed, v.WastedPrefills)
		}
		if decodePicks != v.Routed {
			errorf("decode picks %d, routed %d", decodePicks, v.Routed)
		}
		if domFailed != v.WastedPrefills+transferFailures {
			errorf("failures in domains %d, wasted prefills %d + transfer failures %d", domFailed, v.WastedPrefills, transferFailures)
		}
		// Requests land in a domain, or failed without one; each domain's
		// first tokens are its routed requests; each objective's breaches add
		// up over the domains and the failures without one.
		landed := v.NoDomainFailed
		breaches := make([]int, len(v.SLOs))
		for _, d := range v.Domains {
			landed += d.Requests
			if d.TTFTMs.Count != d.Requests-d.Failed {
				errorf("domain %s: %d first tokens, %d requests landed of which %d failed", d.Value, d.TTFTMs.Count, d.Requests, d.Failed)
			}
			if len(d.SLOs) != len(v.SLOs) {
				errorf("domain %s: %d objectives, the variant %d", d.Value, len(d.SLOs), len(v.SLOs))
				continue
			}
			for i, s := range d.SLOs {
				breaches[i] += s.Breaches
			}
		}
		if landed != v.Requests {
			errorf("requests landed in domains + failed without one = %d, requests %d", landed, v.Requests)
		}
		for i, s := range v.SLOs {
			if breaches[i]+v.NoDomainFailed != s.Breaches || s.Breaches < v.Failed || s.Met != (s.Breaches <= s.Allowed) {
				errorf("objective %s: %d breaches, domains %d + no domain %d, failed %d, allowed %d, met %v", s.SLO, s.Breaches, breaches[i], v.NoDomainFailed, v.Failed, s.Allowed, s.Met)
			}
		}
		// Every failed request has a domain, or is counted without one.
		if domFailed+v.NoDomainFailed != v.Failed {
			errorf("failures in domains %d + without a domain %d != failed %d", domFailed, v.NoDomainFailed, v.Failed)
		}
		// Workers: one pick per hop routed (two for a disaggregated request),
		// plus the wasted prefills; the roles add up to the domains' counts.
		picks, prefill, decode := 0, 0, 0
		names := make([]string, len(v.Workers))
		for i, w := range v.Workers {
			names[i] = w.Worker
			picks += w.Picks
			switch w.Role {
			case "prefill":
				prefill++
			case "decode", "aggregated":
				decode++
			default:
				errorf("worker %s role %q", w.Worker, w.Role)
			}
			if w.Domain != "" && !slices.Contains(values, w.Domain) {
				errorf("worker %s in domain %q, not a domain of the variant %v", w.Worker, w.Domain, values)
			}
			if w.Load.Mean < 0 || w.Load.Mean > w.Load.Peak+1e-9 {
				errorf("worker %s load %+v", w.Worker, w.Load)
			}
		}
		if picks != v.Routed+v.Disaggregated+v.WastedPrefills {
			errorf("worker picks %d, routed %d + disaggregated %d + wasted %d", picks, v.Routed, v.Disaggregated, v.WastedPrefills)
		}
		if prefill != prefillWorkers || decode != decodeWorkers {
			errorf("workers %d prefill / %d decode, domains count %d / %d", prefill, decode, prefillWorkers, decodeWorkers)
		}
		if !slices.IsSorted(names) {
			errorf("workers not in pod order")
		}
		// The series: each bucket holds every domain; routed and failed add up.
		var sRouted, sFailed, sNoDomain int
		for i, b := range v.Series.Buckets {
			if len(b.Domains) != len(v.Domains) {
				errorf("bucket %d has %d domains, the variant %d", i, len(b.Domains), len(v.Domains))
			}
			if i > 0 && b.StartMs <= v.Series.Buckets[i-1].StartMs {
				errorf("buckets out of order at %d", i)
			}
			for d, p := range b.Domains {
				sRouted += p.Routed
				sFailed += p.Failed
				if d < len(values) && p.Domain != values[d] {
					errorf("bucket %d entry %d names domain %q, the variant's domain %d is %q", i, d, p.Domain, d, values[d])
				}
			}
			sNoDomain += b.NoDomainFailed
		}
		if sRouted != v.Routed || sFailed != domFailed || sNoDomain != v.NoDomainFailed {
			errorf("series: routed %d (want %d), failed %d (want %d), failed without a domain %d (want %d)", sRouted, v.Routed, sFailed, domFailed, sNoDomain, v.NoDomainFailed)
		}
	}
}

// domainsOf returns the deployment's domain values, as the deployment as it is reports them.
func domainsOf(r *simulate.Report) []string {
	var out []string
	for _, d := range r.Variants[0].Domains {
		out = append(out, d.Value)
	}
	return out
}

// TestSimulateAccounting: the invariants over every example deployment ×
// every router mode × what-ifs, on the trace and on synthetic traffic.
func TestSimulateAccounting(t *testing.T) {
	traffic := []struct {
		name     string
		args     []string
		requests int
	}{
		{"trace", []string{"--trace", mooncake, "--max-requests", "80", "--speedup", "2"}, 80},
		{"synthetic", []string{"--synthetic", "rate=40,isl=64-3000,osl=4-200,prefix-share=0.6,prefixes=4,requests=90"}, 90},
	}
	modes := []string{"kv", "round-robin", "random", "power-of-two", "least-loaded"}
	failedSomewhere, crossSomewhere, wastedSomewhere := false, false, false
	for _, ex := range []string{prefillOnly, healthy, vllm, drift, etcdEx} {
		// The what-ifs name the example's own domains.
		probe, _ := simJSON(t, "--from-file", ex, "--synthetic", "rate=1,isl=16,osl=1,requests=1", "--fail-on", "none")
		doms := domainsOf(probe)
		if len(doms) < 2 {
			t.Fatalf("%s: domains %v", ex, doms)
		}
		variants := []string{
			"--variant", "enforcement=preferred,weight=0.4",
			"--variant", "down=" + doms[0],
			"--variant", "decode+2@" + doms[len(doms)-1],
			"--variant", "enforcement=off",
			"--variant", "exclude=" + probe.Variants[0].Workers[0].Worker,
		}
		for _, tr := range traffic {
			for _, mode := range modes {
				name := strings.TrimSuffix(strings.TrimPrefix(ex, "examples/"), ".yaml") + "/" + tr.name + "/" + mode
				t.Run(name, func(t *testing.T) {
					args := append([]string{"--from-file", ex, "--router-mode", mode, "--seed", "5", "--fail-on", "none"}, tr.args...)
					r, res := simJSON(t, append(args, variants...)...)
					if res.ExitCode != 0 {
						t.Errorf("exit %d with --fail-on none", res.ExitCode)
					}
					if len(r.Variants) != 6 {
						t.Fatalf("%d variants, want 6", len(r.Variants))
					}
					checkInvariants(t, r, tr.requests)
					for _, v := range r.Variants {
						if string(v.RouterMode) != mode {
							t.Errorf("variant %s ran %s, want --router-mode %s", v.Name, v.RouterMode, mode)
						}
						failedSomewhere = failedSomewhere || v.Failed > 0
						crossSomewhere = crossSomewhere || v.CrossDomainTransfers > 0
						wastedSomewhere = wastedSomewhere || v.WastedPrefills > 0
					}
					checkVariants(t, r, doms)
				})
			}
		}
	}
	// The matrix must exercise what the invariants are about.
	if !failedSomewhere || !crossSomewhere || !wastedSomewhere {
		t.Errorf("the matrix never failed (%v), crossed domains (%v) or wasted a prefill (%v)", failedSomewhere, crossSomewhere, wastedSomewhere)
	}
}

// checkVariants: each what-if shows in its variant (the order of --variant).
func checkVariants(t *testing.T, r *simulate.Report, doms []string) {
	t.Helper()
	base := r.Variants[0]
	pref, down, add, off, excl := r.Variants[1], r.Variants[2], r.Variants[3], r.Variants[4], r.Variants[5]
	if base.Name != "as deployed" || pref.Enforcement != "preferred" || off.Enforcement != "none" && off.Enforcement != "off" {
		t.Errorf("variants %q %q/%q %q/%q", base.Name, pref.Name, pref.Enforcement, off.Name, off.Enforcement)
	}
	for _, w := range down.Workers {
		if w.Domain == doms[0] {
			t.Errorf("down=%s: worker %s is still there", doms[0], w.Worker)
		}
	}
	for _, d := range down.Domains {
		if d.Value == doms[0] {
			t.Errorf("down=%s: the domain is still there", doms[0])
		}
	}
	added := 0
	for _, w := range add.Workers {
		if w.Synthetic {
			added++
			if w.Domain != doms[len(doms)-1] || w.Role != "decode" {
				t.Errorf("added worker %+v, want decode in %s", w, doms[len(doms)-1])
			}
		}
	}
	if added != 2 || len(add.Workers) != len(base.Workers)+2 {
		t.Errorf("decode+2: %d added, %d workers (as deployed %d)", added, len(add.Workers), len(base.Workers))
	}
	if len(excl.Workers) != len(base.Workers)-1 || excl.Workers[0].Worker == base.Workers[0].Worker {
		t.Errorf("exclude: %d workers (as deployed %d)", len(excl.Workers), len(base.Workers))
	}
}

// TestSimulateSpeedup: --speedup divides the inter-arrival times — the same
// requests, in a shorter span.
func TestSimulateSpeedup(t *testing.T) {
	var spans []float64
	for _, s := range []string{"1", "4"} {
		r, _ := simJSON(t, "--from-file", healthy, "--trace", mooncake, "--max-requests", "50", "--assume-idle", "--fail-on", "none", "--speedup", s)
		checkInvariants(t, r, 50)
		if strconv.FormatFloat(r.Trace.Speedup, 'g', -1, 64) != s {
			t.Errorf("speedup %v, want %s", r.Trace.Speedup, s)
		}
		spans = append(spans, r.Trace.DurationMs)
	}
	if !(spans[1] < spans[0]) {
		t.Errorf("durations %v: --speedup 4 did not shorten the replay", spans)
	}
}

func gzipTo(t *testing.T, w io.Writer, data []byte) {
	t.Helper()
	zw := gzip.NewWriter(w)
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
}
