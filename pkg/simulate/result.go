package simulate

import (
	"cmp"
	"slices"
)

// result turns the state into the variant's figures.
func (s *state) result() VariantResult {
	end := max(s.end, s.now)
	vr := s.vr
	vr.Requests = s.requests
	vr.DecodeCachesModelled = s.decodeCacheRead || len(s.pools[0]) == 0
	if vr.PromptBlocks > 0 {
		vr.HitRate = float64(vr.CachedBlocks) / float64(vr.PromptBlocks)
	}
	vr.TTFTMs, vr.E2EMs = s.ttft.percentiles(), s.e2e.percentiles()
	vr.Saturation = s.saturation(s.o.SaturationThreshold)
	vr.SLOs = sloResults(s.o.SLOs, s.breaches, s.requests)
	vr.SLOsMet = true
	for _, r := range vr.SLOs {
		vr.SLOsMet = vr.SLOsMet && r.Met
	}
	for _, st := range vr.Saturation {
		vr.QueueDominated = vr.QueueDominated || st.Saturated
		vr.SlowDown = max(vr.SlowDown, st.SlowDown)
	}
	for _, fc := range s.fail {
		vr.Failures = append(vr.Failures, *fc)
	}
	slices.SortFunc(vr.Failures, func(a, b FailureCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Stage, b.Stage), cmp.Compare(a.Kind, b.Kind))
	})
	// Close the series' load areas at the end.
	for d := range s.domains {
		lv := &s.dLevels[d]
		s.ser.area(d, false, lv[0].cur, lv[0].since, end)
		s.ser.area(d, true, lv[1].cur, lv[1].since, end)
		lv[0].since, lv[1].since = max(lv[0].since, end), max(lv[1].since, end)
	}
	doms := make([]DomainResult, len(s.domains))
	for d, v := range s.domains {
		dr := DomainResult{}
		if d < len(vr.Domains) {
			dr = vr.Domains[d]
		}
		dr.Value = v
		dr.PrefillWorkers, dr.DecodeWorkers = s.dPrefill[d], s.dDecode[d]
		dr.PrefillLoad = s.dLevels[d][0].stats(end)
		dr.DecodeLoad = s.dLevels[d][1].stats(end)
		dr.Requests = s.domReqs[d]
		dr.TTFTMs = s.domTTFT[d].percentiles()
		dr.SLOs = sloResults(s.o.SLOs, s.domBreaches[d], s.domReqs[d])
		doms[d] = dr
	}
	ser := s.ser.result()
	// Order domains by value, and the series with them.
	order := make([]int, len(doms))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(doms[a].Value, doms[b].Value) })
	vr.Domains = make([]DomainResult, len(doms))
	for i, o := range order {
		vr.Domains[i] = doms[o]
	}
	for bi := range ser.Buckets {
		src := ser.Buckets[bi].Domains
		dst := make([]DomainPoint, len(src))
		for i, o := range order {
			dst[i] = src[o]
			dst[i].Domain = doms[o].Value
		}
		ser.Buckets[bi].Domains = dst
	}
	vr.Series = ser
	for _, w := range s.workers {
		wr := WorkerResult{Worker: w.pod, Role: string(w.role), Domain: s.domains[w.domain], Synthetic: w.synthetic, Picks: w.picks,
			Load: w.level.stats(end), EvictedBlocks: w.evicted}
		if wr.Domain == "-" {
			wr.Domain = ""
		}
		for _, u := range w.units {
			wr.CachedBlocksPeak += uint64(u.cache.peak)
		}
		vr.Workers = append(vr.Workers, wr)
	}
	slices.SortFunc(vr.Workers, func(a, b WorkerResult) int { return cmp.Compare(a.Worker, b.Worker) })
	s.end = end
	return vr
}
