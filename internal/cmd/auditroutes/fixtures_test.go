package auditroutes_test

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ai-dynamo/kubectl-dynamo/internal/cmdutil"
	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/golden"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/audit"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/build"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/explain"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// The audit's fixtures are the router's own lines for decisions the plugin
// computes: for every example capture, a handful of requests routed by
// pkg/explain (pkg/routecore) on that capture, its KV index and its loads,
// written out exactly as the router logs them (audit.FormatLine: the
// format strings of lib/kv-router/src/scheduling/selector/{mod,default}.rs,
// lib/llm/src/kv_router/push_router/selection.rs and lib/llm/src/kv_router.rs
// at the commits pkg/audit's doc.go names), in text, in colour and as
// DYN_LOGGING_JSONL, two requests' lines interleaved. An older selector
// generation (text-form Selected lines, the weighted Formula, no request ids)
// is written for one capture at Dynamo 1.1.0, and four planted
// disagreements (a wrong logit, a pick that is not the minimum, an overlap
// the index does not hold, a worker the model does not know) are derived
// from one capture's decisions.
//
// TestFixtures writes them with UPDATE_GOLDEN=1 and otherwise checks they are
// what the plugin computes today.

const (
	examplesDir = "../../../examples/"
	logsDir     = "../../../examples/router-logs/"
	plantedDir  = "../../../test/fixtures/router-logs/"
)

// fixtureEpoch is the fixtures' first timestamp (a little after the example
// captures were taken).
var fixtureEpoch = time.Date(2026, 11, 20, 12, 5, 0, 0, time.UTC)

// requestTokens are the fixtures' requests: the example support-chat prompt
// (whose 10-block system prompt the captures' prefill workers hold), its
// system prompt with another question, its first five blocks, a cold prompt,
// a prompt shorter than a block, and the support-chat prompt again.
func requestTokens(t *testing.T) [][]uint32 {
	t.Helper()
	data, err := os.ReadFile(examplesDir + "prompts/support-chat.tokens")
	if err != nil {
		t.Fatal(err)
	}
	chat, err := cmdutil.ParseTokenList(data, "support-chat.tokens")
	if err != nil {
		t.Fatal(err)
	}
	synthetic := func(n, seed int) []uint32 {
		out := make([]uint32, n)
		for i := range out {
			out[i] = uint32(1000 + (i*7919+seed*104729)%50000)
		}
		return out
	}
	return [][]uint32{
		chat,
		append(slices.Clone(chat[:160]), synthetic(37, 2)...),
		synthetic(100, 3),
		slices.Clone(chat[:80]),
		synthetic(9, 5),
		chat,
	}
}

// scenario is one capture's routed requests.
type scenario struct {
	snap  *model.Snapshot
	dep   *model.Deployment
	ix    *routecore.Index
	xs    []*explain.Explanation
	total map[routecore.WorkerID]*uint64
}

func route(t *testing.T, capture, dynamoVersion string) scenario {
	t.Helper()
	b, err := cmdutil.ReadCaptureFile(nil, examplesDir+capture+".yaml", "--from-file")
	if err != nil {
		t.Fatal(err)
	}
	snap, err := build.Build(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Deployments) != 1 {
		t.Fatalf("%s holds %d deployments", capture, len(snap.Deployments))
	}
	dep := &snap.Deployments[0]
	m, err := audit.NewModel(snap, dep, dynamoVersion)
	if err != nil {
		t.Fatal(err)
	}
	sc := scenario{snap: snap, dep: dep, total: map[routecore.WorkerID]*uint64{}}
	kv := explain.KVCache{Kind: explain.KVCold}
	if sets := explain.BundleEventSets(b, dep); len(sets) > 0 {
		sc.ix, _ = explain.IndexEvents(sets, m.BlockSize)
		kv = explain.IndexCache(sc.ix, "capture", snap.CollectedAt)
	}
	for i := range dep.Workers {
		for _, in := range dep.Workers[i].Instances {
			sc.total[in.ID] = in.Runtime.TotalKvBlocks
		}
	}
	for i, tokens := range requestTokens(t) {
		x, err := explain.Explain(explain.Input{Snapshot: snap, Deployment: dep, Request: explain.Request{Tokens: tokens, Tokenizer: "fixture"},
			KV: kv, Options: explain.Options{Seed: uint64(i + 1), SeedGiven: true, DynamoVersion: dynamoVersion}})
		if err != nil {
			t.Fatalf("%s request %d: %v", capture, i, err)
		}
		sc.xs = append(sc.xs, x)
	}
	return sc
}

// requestID is a fixture request's id, a UUID as the frontend makes them.
func requestID(capture string, i int) string {
	h := fnv.New32a()
	h.Write([]byte(capture))
	return fmt.Sprintf("%08x-7d3c-4e1a-9b2f-%012x", h.Sum32(), i+1)
}

// hopRecords are the lines the router logs for one hop of one request: the
// request's hashes, one Formula line per scored candidate, the Selected
// line and the push router's Best line (none of the last two when the hop
// failed). older writes the selector generation before overlap_score_credit
// (no request ids, the weighted Formula, the text-form Selected line).
func hopRecords(sc scenario, x *explain.Explanation, s *explain.Stage, hop, id string, older bool) []audit.Record {
	isl := uint64(x.Request.TokenCount)
	if x.Request.RoutingTokenCount > 0 {
		isl = uint64(x.Request.RoutingTokenCount)
	}
	bs := uint64(x.Request.BlockSize)
	scale := x.Router.Config.PrefillLoadScale
	if hop == audit.HopPrefill {
		scale = x.Router.PrefillConfig.PrefillLoadScale
	}
	var out []audit.Record
	if !older {
		hashes := make([]uint64, len(x.Request.Blocks))
		for i, b := range x.Request.Blocks {
			hashes[i] = b.LocalHash
		}
		out = append(out, audit.Record{Kind: audit.KindInput, RequestID: id,
			Input: &audit.RoutingInput{ISLTokens: isl, BlockSize: bs, NumBlocks: uint64(len(hashes)), LocalHashes: hashes}})
	}
	var sel *explain.Candidate
	for i := range s.Candidates {
		c := &s.Candidates[i]
		if c.Selected {
			sel = c
		}
		if !c.Scored {
			continue
		}
		t := c.Terms
		f := &audit.Formula{Name: "Formula", Worker: routecore.WorkerWithDpRank{WorkerID: c.InstanceID, DpRank: c.DpRank},
			EffectiveBlocks: audit.Printed(t.EffectiveBlocks, 2), Logit: audit.Printed(t.Logit, 3)}
		switch {
		case older:
			f.Shape, f.Weight, f.PrefillBlocks, f.Decode = audit.ShapeWeighted, audit.Printed(scale, 1), audit.Printed(t.AdjustedPrefillBlocks, 3), audit.Printed(t.DecodeBlocks, 3)
		case t.Formula == "decode-overlap":
			f.Shape, f.Decode, f.Credit, f.RequestCost = audit.ShapeDecodeOverlap, audit.Printed(t.DecodeBlocks, 3), audit.Printed(t.CreditBlocks, 3), audit.Printed(t.RequestCost, 3)
		default:
			f.Shape = audit.ShapePrefill
			f.Scale, f.Adjusted, f.Decode, f.RequestCost = audit.Printed(scale, 3), audit.Printed(t.AdjustedPrefillBlocks, 3), audit.Printed(t.DecodeBlocks, 3), audit.Printed(t.RequestCost, 3)
			f.Raw, f.Credit, f.Decay = audit.Printed(t.RawPrefillBlocks, 3), audit.Printed(t.CreditBlocks, 3), audit.Printed(t.DecayFactor, 3)
			if t.SharedBeyondBlocks > 0 {
				n := uint64(t.SharedBeyondBlocks)
				m := audit.Printed(x.Router.Config.SharedCacheMultiplier, 2)
				f.SharedBeyond, f.SharedMultiplier = &n, &m
			}
		}
		r := audit.Record{Kind: audit.KindFormula, Formula: f}
		if !older {
			r.RequestID, r.WorkerType = id, hop
		}
		out = append(out, r)
	}
	if sel == nil || s.ErrorKind != "" {
		return out
	}
	w := routecore.WorkerWithDpRank{WorkerID: sel.InstanceID, DpRank: sel.DpRank}
	host, disk := uint64(sel.Terms.HostBlocks), uint64(sel.Terms.DiskBlocks)
	selection := &audit.Selection{Form: "structured", Worker: w, Logit: audit.Debug(sel.Terms.Cost), HostPinnedBlocks: &host, DiskBlocks: &disk, RouterMode: "kv"}
	if older {
		selection.Form, selection.Logit = "text", audit.Printed(sel.Terms.Cost, 3)
	}
	if hop == audit.HopPrefill {
		eff := audit.Debug(sel.Terms.EffectiveBlocks)
		if older {
			eff = audit.Printed(sel.Terms.EffectiveBlocks, 2)
			var tree uint64
			for _, wb := range sc.ix.TreeSizes() {
				if wb.Worker == w {
					tree = uint64(wb.Blocks)
				}
			}
			selection.TreeSize = &tree
		}
		selection.EffectiveCachedBlocks, selection.TotalKvBlocks = &eff, sc.total[w.WorkerID]
	}
	out = append(out, audit.Record{Kind: audit.KindSelected, RequestID: id, WorkerType: hop, Selection: selection, Level: "INFO"})
	if older {
		out[len(out)-1].RequestID = ""
		return out
	}
	return append(out, audit.Record{Kind: audit.KindBest, RequestID: id,
		Best: &audit.Best{Worker: w, OverlapBlocks: uint64(sel.Terms.DeviceBlocks), TotalBlocks: routecore.RequestBlocks(isl, bs)}})
}

// requestRecords are one request's lines: prefill hop, then decode hop.
func requestRecords(sc scenario, x *explain.Explanation, id string, older bool) []audit.Record {
	if x.Router.Mode != routecore.RouterModeKV {
		return nil // round-robin and the other modes log no KV decision
	}
	var out []audit.Record
	if x.Prefill != nil {
		out = append(out, hopRecords(sc, x, x.Prefill, audit.HopPrefill, id, older)...)
	}
	if x.Decode != nil && (x.Prefill == nil || x.Prefill.ErrorKind == "") {
		out = append(out, hopRecords(sc, x, x.Decode, audit.HopDecode, id, older)...)
	}
	return out
}

// interleave merges two requests' lines one by one, as concurrent requests'
// lines reach one log.
func interleave(a, b []audit.Record) []audit.Record {
	var out []audit.Record
	for len(a) > 0 || len(b) > 0 {
		if len(a) > 0 {
			out, a = append(out, a[0]), a[1:]
		}
		if len(b) > 0 {
			out, b = append(out, b[0]), b[1:]
		}
	}
	return out
}

// scenarioRecords are every request of a capture, in pairs interleaved, with
// timestamps.
func scenarioRecords(capture string, sc scenario, older bool) []audit.Record {
	var out []audit.Record
	for i := 0; i < len(sc.xs); i += 2 {
		a := requestRecords(sc, sc.xs[i], requestID(capture, i), older)
		var b []audit.Record
		if i+1 < len(sc.xs) {
			b = requestRecords(sc, sc.xs[i+1], requestID(capture, i+1), older)
		}
		if older {
			out = append(append(out, a...), b...) // no request ids: lines join by position
		} else {
			out = append(out, interleave(a, b)...)
		}
	}
	for i := range out {
		out[i].Time = fixtureEpoch.Add(time.Duration(i) * 1250 * time.Microsecond).Format("2006-01-02T15:04:05.000000Z")
	}
	return out
}

func render(t *testing.T, recs []audit.Record, f audit.Format) []byte {
	t.Helper()
	var b bytes.Buffer
	for _, r := range recs {
		line, err := audit.FormatLine(r, f)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// examples are the example captures by name.
func examples(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(examplesDir + "*.yaml")
	if err != nil || len(files) != 5 {
		t.Fatalf("examples: %v %v", files, err)
	}
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = strings.TrimSuffix(filepath.Base(f), ".yaml")
	}
	return out
}

// plantedFrom is the capture the planted disagreements are derived from.
const plantedFrom = "prefill-only-zone-required"

// olderFrom is the capture written in the older selector generation.
const olderFrom = "healthy-three-zone-required"

func TestFixtures(t *testing.T) {
	for _, capture := range examples(t) {
		t.Run(capture, func(t *testing.T) {
			recs := scenarioRecords(capture, route(t, capture, ""), false)
			golden.AssertFile(t, logsDir+capture+".log", render(t, recs, audit.FormatText))
			golden.AssertFile(t, logsDir+capture+".color.log", render(t, recs, audit.FormatANSI))
			golden.AssertFile(t, logsDir+capture+".jsonl", render(t, recs, audit.FormatJSON))
		})
	}
	t.Run(olderFrom+"/older-selector", func(t *testing.T) {
		recs := scenarioRecords(olderFrom, route(t, olderFrom, "1.1.0"), true)
		golden.AssertFile(t, logsDir+olderFrom+".dynamo-1.1.log", render(t, recs, audit.FormatText))
	})
	recs := scenarioRecords(plantedFrom, route(t, plantedFrom, ""), false)
	for _, p := range planted {
		t.Run("planted/"+p.name, func(t *testing.T) {
			mutated := p.plant(t, slices.Clone(recs))
			golden.AssertFile(t, plantedDir+p.name+".log", render(t, mutated, audit.FormatText))
		})
	}
}

// clone deep-copies the parts of a record a planting changes.
func clone(r audit.Record) audit.Record {
	if r.Formula != nil {
		f := *r.Formula
		r.Formula = &f
	}
	if r.Selection != nil {
		s := *r.Selection
		r.Selection = &s
	}
	if r.Best != nil {
		b := *r.Best
		r.Best = &b
	}
	return r
}

// firstPrefillDecision returns the indices of the first prefill decision with
// at least two candidates of different cost: its Formula lines, its Selected
// line and its Best line.
func firstPrefillDecision(t *testing.T, recs []audit.Record) (formulas []int, selected, best int) {
	t.Helper()
	byReq := map[string][]int{}
	for i, r := range recs {
		if r.Kind == audit.KindFormula && r.WorkerType == audit.HopPrefill {
			byReq[r.RequestID] = append(byReq[r.RequestID], i)
		}
		if r.Kind == audit.KindSelected && r.WorkerType == audit.HopPrefill && len(byReq[r.RequestID]) >= 2 {
			fs := byReq[r.RequestID]
			distinct := false
			for _, j := range fs {
				distinct = distinct || recs[j].Formula.Logit.Text != recs[fs[0]].Formula.Logit.Text
			}
			if !distinct {
				continue
			}
			for j := i + 1; j < len(recs); j++ {
				if recs[j].Kind == audit.KindBest && recs[j].RequestID == r.RequestID {
					return fs, i, j
				}
			}
		}
	}
	t.Fatal("no prefill decision with two candidates of different cost")
	return nil, 0, 0
}

var planted = []struct {
	name string
	// check is the check the planting must be the one disagreement of.
	check audit.CheckName
	field string
	plant func(t *testing.T, recs []audit.Record) []audit.Record
}{
	{"wrong-logit", audit.CheckArithmetic, "logit", func(t *testing.T, recs []audit.Record) []audit.Record {
		fs, _, _ := firstPrefillDecision(t, recs)
		// The most expensive candidate's logit, one block higher than its
		// terms: the pick (the cheapest) is unchanged.
		i := fs[0]
		for _, j := range fs {
			if recs[j].Formula.Logit.Value > recs[i].Formula.Logit.Value {
				i = j
			}
		}
		r := clone(recs[i])
		r.Formula.Logit = audit.Printed(r.Formula.Logit.Value+1, 3)
		recs[i] = r
		return recs
	}},
	{"not-minimum", audit.CheckChoice, "cost", func(t *testing.T, recs []audit.Record) []audit.Record {
		fs, s, b := firstPrefillDecision(t, recs)
		// The pick moves to the most expensive candidate (its Selected and
		// Best lines say so, with that candidate's cost and overlap).
		worst := fs[0]
		for _, j := range fs {
			if recs[j].Formula.Logit.Value > recs[worst].Formula.Logit.Value {
				worst = j
			}
		}
		f := recs[worst].Formula
		sel, best := clone(recs[s]), clone(recs[b])
		sel.Selection.Worker, sel.Selection.Logit = f.Worker, audit.Debug(f.Logit.Value)
		eff := audit.Debug(f.EffectiveBlocks.Value)
		sel.Selection.EffectiveCachedBlocks = &eff
		best.Best.Worker, best.Best.OverlapBlocks = f.Worker, uint64(math.Round(f.EffectiveBlocks.Value))
		recs[s], recs[b] = sel, best
		return recs
	}},
	{"stale-overlap", audit.CheckState, "effective_cached_blocks", func(t *testing.T, recs []audit.Record) []audit.Record {
		fs, _, _ := firstPrefillDecision(t, recs)
		// A candidate the index holds nothing of is logged with 4 cached
		// blocks: the router's index held what the capture's did not.
		for _, j := range fs {
			if recs[j].Formula.EffectiveBlocks.Value == 0 {
				r := clone(recs[j])
				r.Formula.EffectiveBlocks = audit.Printed(4, 2)
				recs[j] = r
				return recs
			}
		}
		t.Fatal("no cold candidate to plant an overlap on")
		return nil
	}},
	{"unknown-worker", audit.CheckCandidates, "worker", func(t *testing.T, recs []audit.Record) []audit.Record {
		fs, _, _ := firstPrefillDecision(t, recs)
		// One more candidate, more expensive than every other, with an id
		// the capture does not hold.
		r := clone(recs[fs[0]])
		r.Formula.Worker = routecore.WorkerWithDpRank{WorkerID: 4242424242424242424}
		r.Formula.EffectiveBlocks = audit.Printed(0, 2)
		r.Formula.Logit, r.Formula.Adjusted, r.Formula.Raw = audit.Printed(999, 3), audit.Printed(999, 3), audit.Printed(999, 3)
		r.Formula.Scale, r.Formula.Decode, r.Formula.RequestCost, r.Formula.Credit = audit.Printed(1, 3), audit.Printed(0, 3), audit.Printed(0, 3), audit.Printed(0, 3)
		last := fs[len(fs)-1]
		return slices.Insert(recs, last+1, r)
	}},
}
