package routecore

import "math/rand/v2"

// NewRand returns a Rand backed by math/rand/v2's PCG generator with the given seeds.
// Equal seeds give equal draw sequences; it does not reproduce Dynamo's fastrand.
func NewRand(seed1, seed2 uint64) Rand {
	return randPCG{r: rand.New(rand.NewPCG(seed1, seed2))}
}

type randPCG struct{ r *rand.Rand }

// Float64 returns a uniform draw in [0,1).
func (p randPCG) Float64() float64 { return p.r.Float64() }

// ScriptedRand replays fixed draws, for tests and examples that need a known outcome.
// Draws are returned in order and then repeat from the start; with no draws it
// returns 0. Calls counts how many draws were taken.
type ScriptedRand struct {
	Draws []float64
	Calls int
}

// Float64 returns the next scripted draw.
func (s *ScriptedRand) Float64() float64 {
	if len(s.Draws) == 0 {
		s.Calls++
		return 0
	}
	u := s.Draws[s.Calls%len(s.Draws)]
	s.Calls++
	return u
}
