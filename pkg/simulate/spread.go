package simulate

import (
	"fmt"
	"slices"
)

// Spread is a figure's spread over several seeds.
type Spread struct {
	Min    float64 `json:"min"`
	Median float64 `json:"median"`
	Max    float64 `json:"max"`
}

// VariantSpread is the spread of a variant's headline figures over the
// seeds of a multi-seed run (--seeds).
type VariantSpread struct {
	Failed      Spread `json:"failed"`
	CrossDomain Spread `json:"crossDomain"`
	HitRate     Spread `json:"hitRate"`
	TTFTP50     Spread `json:"ttftP50Ms"`
	TTFTP99     Spread `json:"ttftP99Ms"`
	E2EP50      Spread `json:"e2eP50Ms"`
	E2EP99      Spread `json:"e2eP99Ms"`
	// SLOBreaches is each objective's breaches (Report.SLOs order).
	SLOBreaches []Spread `json:"sloBreaches,omitempty"`
}

// MaxSeeds bounds --seeds.
const MaxSeeds = 100

// MergeSeeds returns the first run with the spread of every variant's
// headline figures over all the runs: the same deployment, traffic and
// variants under consecutive seeds (runs[i] under seed runs[0].Seed + i).
func MergeSeeds(runs []*Report) (*Report, error) {
	if len(runs) == 0 {
		return nil, fmt.Errorf("simulate: no runs to merge")
	}
	out := runs[0]
	out.Seeds = len(runs)
	for i, r := range runs {
		if len(r.Variants) != len(out.Variants) || r.Seed != out.Seed+uint64(i) {
			return nil, fmt.Errorf("simulate: run %d does not match the first (variants %d, seed %d)", i, len(r.Variants), r.Seed)
		}
	}
	for vi := range out.Variants {
		figure := func(f func(VariantResult) float64) Spread {
			vals := make([]float64, len(runs))
			for i, r := range runs {
				vals[i] = f(r.Variants[vi])
			}
			return spreadOf(vals)
		}
		sp := &VariantSpread{
			Failed:      figure(func(v VariantResult) float64 { return float64(v.Failed) }),
			CrossDomain: figure(func(v VariantResult) float64 { return float64(v.CrossDomainTransfers) }),
			HitRate:     figure(func(v VariantResult) float64 { return v.HitRate }),
			TTFTP50:     figure(func(v VariantResult) float64 { return v.TTFTMs.P50 }),
			TTFTP99:     figure(func(v VariantResult) float64 { return v.TTFTMs.P99 }),
			E2EP50:      figure(func(v VariantResult) float64 { return v.E2EMs.P50 }),
			E2EP99:      figure(func(v VariantResult) float64 { return v.E2EMs.P99 }),
		}
		for si := range out.Variants[vi].SLOs {
			sp.SLOBreaches = append(sp.SLOBreaches, figure(func(v VariantResult) float64 { return float64(v.SLOs[si].Breaches) }))
		}
		out.Variants[vi].Spread = sp
	}
	return out, nil
}

// spreadOf is the minimum, median (the mean of the middle two of an even
// count) and maximum of vals.
func spreadOf(vals []float64) Spread {
	v := slices.Clone(vals)
	slices.Sort(v)
	n := len(v)
	med := v[n/2]
	if n%2 == 0 {
		med = (v[n/2-1] + v[n/2]) / 2
	}
	return Spread{Min: v[0], Median: med, Max: v[n-1]}
}
