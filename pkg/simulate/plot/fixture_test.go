package plot

import (
	"fmt"
	"math"
	"strings"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/simulate"
)

// The fixtures are built from small integer formulas (exact in float64 on
// every architecture), shaped like a replay: traffic ramps up, holds, drains.

var zones = []string{"us-east-1a", "us-east-1b", "us-east-1c"}

// ramp is the traffic shape at bucket k of n: 0 → 1 → 0 in eighths.
func ramp(k, n int) float64 {
	return float64(min(k+1, 8, n-k)) / 8
}

// domainSpec describes one domain of a fixture variant: its decode and prefill
// capacity (the load at full traffic) and the failed requests per bucket at
// full traffic.
type domainSpec struct {
	value           string
	decode, prefill float64
	failed          int
}

func variant(name string, buckets int, bucketMs float64, doms []domainSpec) simulate.VariantResult {
	v := simulate.VariantResult{
		Name:       name,
		RouterMode: routecore.RouterModeKV,
		Series:     simulate.Series{BucketMs: bucketMs},
	}
	for _, d := range doms {
		v.Domains = append(v.Domains, simulate.DomainResult{Value: d.value, PrefillWorkers: 1, DecodeWorkers: 2})
	}
	for k := range buckets {
		p := simulate.SeriesPoint{StartMs: float64(k) * bucketMs}
		for i, d := range doms {
			r := ramp(k, buckets)
			// A little texture per domain and bucket, exact in eighths.
			wob := float64((k*3+i*5)%4) / 8
			dp := simulate.DomainPoint{
				Routed:      int(40 * r),
				Failed:      int(float64(d.failed) * r),
				DecodeLoad:  d.decode * (r + wob*r),
				PrefillLoad: d.prefill * r,
			}
			v.Domains[i].DecodePicks += dp.Routed
			v.Domains[i].PrefillPicks += dp.Routed
			v.Domains[i].Failed += dp.Failed
			v.Routed += dp.Routed
			v.Failed += dp.Failed
			p.Domains = append(p.Domains, dp)
		}
		v.Series.Buckets = append(v.Series.Buckets, p)
	}
	v.Requests = v.Routed + v.Failed
	v.Disaggregated = v.Routed
	v.SameDomainTransfers = v.Routed * 7 / 8
	v.CrossDomainTransfers = v.Routed - v.SameDomainTransfers
	v.PromptBlocks = uint64(v.Routed) * 16
	v.CachedBlocks = uint64(v.Routed) * 6
	if v.PromptBlocks > 0 {
		v.HitRate = float64(v.CachedBlocks) / float64(v.PromptBlocks)
	}
	return v
}

func report(vs ...simulate.VariantResult) *simulate.Report {
	return &simulate.Report{
		APIVersion: simulate.APIVersion,
		Kind:       simulate.Kind,
		Deployment: "llama-disagg",
		Namespace:  "inference",
		Model:      "meta-llama/Llama-3.1-8B-Instruct",
		DomainKey:  "zone",
		Trace:      simulate.TraceInfo{Source: "mooncake_trace.jsonl", Format: "mooncake", Requests: 2400, RouterBlockSize: 16, Speedup: 2},
		Engine:     simulate.EngineInfo{Source: "defaults"},
		Seed:       42,
		Variants:   vs,
	}
}

// threeVariants is the usual comparison: the deployment as it is, a softer
// transfer policy, and a zone down (its domain idle, failures while the
// others absorb the traffic).
func threeVariants() *simulate.Report {
	return report(
		variant("as deployed", 30, 2000, []domainSpec{
			{zones[0], 24, 4, 0}, {zones[1], 18, 3, 0}, {zones[2], 12, 2, 0},
		}),
		variant("enforcement=preferred,weight=0.3", 30, 2000, []domainSpec{
			{zones[0], 20, 4, 0}, {zones[1], 19, 3, 0}, {zones[2], 16, 3, 0},
		}),
		variant("down=us-east-1a", 30, 2000, []domainSpec{
			{zones[0], 0, 0, 0}, {zones[1], 30, 5, 6}, {zones[2], 26, 4, 3},
		}),
	)
}

// twoVariants is the browser test's report: a panel without failures beside
// one with them.
func twoVariants() *simulate.Report {
	r := threeVariants()
	r.Variants = []simulate.VariantResult{r.Variants[0], r.Variants[2]}
	return r
}

func oneDomain() *simulate.Report {
	r := report(variant("as deployed", 12, 5000, []domainSpec{{"-", 9, 2, 1}}))
	r.DomainKey = ""
	return r
}

func oneBucket() *simulate.Report {
	return report(
		variant("as deployed", 1, 60000, []domainSpec{{zones[0], 64, 16, 0}, {zones[1], 40, 8, 0}}),
		variant("down=us-east-1b", 1, 60000, []domainSpec{{zones[0], 104, 24, 40}, {zones[1], 0, 0, 0}}),
	)
}

func noBuckets() *simulate.Report {
	v := variant("as deployed", 0, 1000, []domainSpec{{zones[0], 8, 2, 0}})
	v.Requests, v.Failed = 0, 0
	return report(v, variant("down=us-east-1a", 0, 0, nil))
}

// nonFinite puts NaN, infinities and negative numbers where numbers are read.
func nonFinite() *simulate.Report {
	v := variant("as deployed", 10, 1000, []domainSpec{{zones[0], 10, 2, 1}, {zones[1], 6, 1, 0}})
	v.HitRate = math.NaN()
	b := v.Series.Buckets
	b[2].Domains[0].DecodeLoad = math.NaN()
	b[3].Domains[0].DecodeLoad = math.Inf(1)
	b[5].Domains[1].DecodeLoad = -4
	b[5].Domains[1].PrefillLoad = math.Inf(-1)
	b[7].Domains[0].DecodeLoad = math.NaN() // leaves bucket 8 alone between gaps
	b[9].Domains[0].DecodeLoad = math.NaN()
	b[4].StartMs = math.NaN()
	b[6].Domains = b[6].Domains[:1] // a series shorter than the domain list
	w := variant("bucket length not a number", 4, math.NaN(), []domainSpec{{zones[0], 5, 1, 0}})
	w.Series.Buckets[1].Domains[0].Failed = -3
	w.HitRate = math.Inf(1)
	r := report(v, w)
	r.Trace.Speedup = math.NaN()
	return r
}

// manyDomains has 1,000 domains of different loads.
func manyDomains() *simulate.Report {
	var doms []domainSpec
	for i := range 1000 {
		doms = append(doms, domainSpec{value: fmt.Sprintf("rack-%04d", i), decode: float64((i*37)%101) / 4, prefill: float64(i%7) / 2})
	}
	return report(variant("as deployed", 4, 15000, doms))
}

// hostile has names from the cluster built to break out of the document,
// drive a terminal, reorder text, or be long.
func hostile() *simulate.Report {
	long := strings.Repeat("very-long-zone-name-", 300) + "end"
	r := report(
		variant(`</text><script>alert("x")</script><text>`+"\x1b]52;c;ZXZpbA==\x07", 6, 1000, []domainSpec{
			{`a&b<c>"d'e`, 6, 1, 0},
			{"zone\x1b[2J\x00\u202eevil\u200b\ufffe", 4, 1, 1},
			{long, 3, 1, 0},
			{"bad\xff\xfeutf8\r\nnext", 2, 1, 0},
			{"", 1, 0, 0},
			{"雲-東京-1a", 5, 2, 0},
		}),
		variant(strings.Repeat("W", 5000), 6, 1000, []domainSpec{{long, 2, 1, 0}}),
	)
	r.Deployment = "dep\x1b[31m<x>&"
	r.Namespace = strings.Repeat("n", 300)
	r.Model = "model\u202e<![CDATA[x]]>"
	r.DomainKey = "topology.kubernetes.io/zone\x07"
	r.Trace.Source = "file:///etc/passwd\"onload=\"alert(1)"
	r.Engine.Source = "]]>-->"
	return r
}

// failureShares has one domain and four buckets of ten requests: none, one,
// five and ten of them failed.
func failureShares() *simulate.Report {
	v := variant("failures", 4, 1000, []domainSpec{{zones[0], 8, 1, 0}})
	for k, f := range []int{0, 1, 5, 10} {
		v.Series.Buckets[k].Domains[0].Routed = 10 - f
		v.Series.Buckets[k].Domains[0].Failed = f
	}
	return report(v)
}

// noDomainFailures is a variant whose only failures have no domain (the
// prefill hop refused them before any worker was picked): 3 in bucket 1, 2 in
// bucket 4.
func noDomainFailures() *simulate.Report {
	v := variant("as deployed", 6, 1000, []domainSpec{{zones[0], 8, 2, 0}, {zones[1], 6, 2, 0}})
	v.Series.Buckets[1].NoDomainFailed = 3
	v.Series.Buckets[4].NoDomainFailed = 2
	v.NoDomainFailed, v.Failed = 5, 5
	v.Requests = v.Routed + v.Failed
	return report(v)
}
