package explain

import (
	"strings"
	"testing"
)

// TestSitaDecodeBandUnderTheTransferConstraint: with SITA on the decode hop
// (the frontend's config) and a required zone policy, the decode band is
// taken, as pick_default_worker does inside the decode selection, among the
// decode workers the derived transfer constraint leaves — the two of the
// prefill pick's zone — so the request stays routable and decode stays in
// the zone. (Taken over all six decode workers before the transfer
// constraint, the band could hold only other zones' workers.)
func TestSitaDecodeBandUnderTheTransferConstraint(t *testing.T) {
	_, s := loadExample(t, "healthy-three-zone-required.yaml")
	dep := &s.Deployments[0]
	cfg := dep.Router.Config
	cfg.SitaEnabled, cfg.SitaBoundary1, cfg.SitaBoundary2, cfg.SitaSmallBandShare, cfg.SitaSpillThreshold = true, 16, 0, 0.5, 1.0
	dep.Router.Config = cfg
	toks := exampleTokens(t)
	for seed := range uint64(12) {
		for _, n := range []int{10, len(toks)} { // a small (band 0) and a large (band 1) request
			x, err := Explain(Input{Snapshot: s, Deployment: dep, Request: Request{Tokens: toks[:n], Tokenizer: "test"}, Options: Options{Seed: seed, AssumeIdle: true}})
			if err != nil {
				t.Fatal(err)
			}
			if !x.Verdict.Routable {
				t.Fatalf("seed %d, %d tokens: %+v", seed, n, x.Verdict)
			}
			b := x.Decode.Sita
			if b == nil || !b.Applied {
				t.Fatalf("seed %d, %d tokens: decode band %+v", seed, n, b)
			}
			zone := x.Transfer.Value
			if !strings.Contains(x.Decode.Pick, zone) {
				t.Errorf("seed %d: decode %s outside the prefill's zone %s", seed, x.Decode.Pick, zone)
			}
			for _, c := range x.Decode.Candidates {
				if b.Allows(c.InstanceID) && !strings.Contains(c.Worker, zone) {
					t.Errorf("seed %d: the band holds %s, outside zone %s", seed, c.Worker, zone)
				}
			}
		}
	}
}
