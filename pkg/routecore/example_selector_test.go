package routecore_test

import (
	"errors"
	"fmt"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// A warm worker holding half of the prompt beats an idle cold one.
func ExampleSelectWithDraw() {
	warm := routecore.WorkerWithDpRank{WorkerID: 1}
	workers := []routecore.Worker{
		{ID: 1, Loads: map[uint32]routecore.RankLoad{0: {ActiveDecodeBlocks: 2}}},
		{ID: 2},
	}
	req := routecore.Request{
		ISL:       64,
		BlockSize: 16,
		Overlap: routecore.OverlapInput{
			DeviceBlocks: map[routecore.WorkerWithDpRank]uint64{warm: 2},
			CachedTokens: map[routecore.WorkerWithDpRank]uint64{warm: 32},
		},
	}
	d, err := routecore.SelectWithDraw(routecore.DefaultKvRouterConfig(), routecore.BusyThresholds{}, workers, req, 0)
	if err != nil {
		panic(err)
	}
	for _, c := range d.Candidates {
		t := c.Terms
		fmt.Printf("%s: raw %.0f − credit %.0f = %.0f prefill + %.0f decode = %.0f\n",
			c.Candidate, t.RawPrefillBlocks, t.CreditBlocks, t.AdjustedPrefillBlocks, t.DecodeBlocks, t.Cost)
	}
	fmt.Println("selected", d.Selected, "by", d.SelectionRule)
	// Output:
	// 1/0: raw 4 − credit 2 = 2 prefill + 2 decode = 4
	// 2/0: raw 4 − credit 0 = 4 prefill + 0 decode = 4
	// selected 1/0 by minimum-cost-tie-random
}

// At temperature > 0 every candidate gets a probability and the draw picks one.
func ExampleSelect_softmax() {
	cfg := routecore.DefaultKvRouterConfig()
	cfg.RouterTemperature = 0.5
	cfg.PrefillLoadScale = 1.25
	workers := []routecore.Worker{
		{ID: 1, Loads: map[uint32]routecore.RankLoad{0: {ActiveDecodeBlocks: 33}}},
		{ID: 2, Loads: map[uint32]routecore.RankLoad{0: {ActiveDecodeBlocks: 5}}},
		{ID: 3, Loads: map[uint32]routecore.RankLoad{0: {ActiveDecodeBlocks: 127}}},
	}
	r := &routecore.ScriptedRand{Draws: []float64{0.2}}
	d, err := routecore.Select(cfg, routecore.BusyThresholds{}, workers, routecore.Request{ISL: 16, BlockSize: 16}, r)
	if err != nil {
		panic(err)
	}
	for _, c := range d.Candidates {
		fmt.Printf("%s cost %.2f p %.3f\n", c.Candidate, c.Terms.Cost, c.Probability)
	}
	fmt.Println("draw", d.Draw, "selected", d.Selected)
	// Output:
	// 1/0 cost 34.25 p 0.358
	// 2/0 cost 6.25 p 0.566
	// 3/0 cost 128.25 p 0.077
	// draw 0.2 selected 1/0
}

// Failures carry the Dynamo error kind and per-candidate reasons.
func ExampleSelect_overloaded() {
	limit := uint64(1000)
	th := routecore.BusyThresholds{ActivePrefillTokensThreshold: &limit}
	busy := map[uint32]routecore.RankLoad{0: {ActivePrefillTokens: 4096}}
	workers := []routecore.Worker{{ID: 1, Loads: busy}, {ID: 2, Loads: busy}}
	d, err := routecore.Select(routecore.DefaultKvRouterConfig(), th, workers, routecore.Request{ISL: 16, BlockSize: 16}, nil)
	fmt.Println(errors.Is(err, routecore.ErrAllEligibleWorkersOverloaded), d.ErrorKind)
	fmt.Println(d.Candidates[0].Reason.Full())
	// Output:
	// true AllEligibleWorkersOverloaded
	// worker 1 is overloaded (rank 0: active_prefill_tokens 4096 > active_prefill_tokens_threshold limit 1000)
}

// The per-request override used by the disaggregated decode router.
func ExampleRouterConfigOverride_Resolve() {
	zero, no := 0.0, false
	o := routecore.RouterConfigOverride{OverlapScoreCredit: &zero, AssumeKvReuse: &no, TrackPrefillTokens: &no}
	w := o.Resolve(routecore.DefaultKvRouterConfig())
	fmt.Println(w.OverlapScoreCredit, w.AssumeKvReuse, w.TrackPrefillTokens, w.PrefillLoadScale)
	// Output: 0 false false 1
}

// Reading a frontend's flags and environment; flags win.
func ExampleParseFrontendSettings() {
	env := map[string]string{"DYN_ROUTER_TEMPERATURE": "0.3", "DYN_ROUTER_KV_OVERLAP_SCORE_CREDIT": "0.8"}
	s, err := routecore.ParseFrontendSettings(
		[]string{"-m", "dynamo.frontend", "--router-mode", "kv", "--router-temperature", "0.1"},
		func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		panic(err)
	}
	fmt.Println(s.RouterMode, s.Config.RouterTemperature, s.Config.OverlapScoreCredit)
	// Output: kv 0.1 0.8
}
