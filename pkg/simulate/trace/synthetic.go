package trace

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// SyntheticSpec is a parsed --synthetic value.
type SyntheticSpec struct {
	// Rate is the mean arrival rate in requests per second (Poisson).
	Rate float64
	// ISL and OSL are the input and output lengths, uniform in [Min, Max].
	ISL, OSL Range
	// PrefixShare is the fraction of each prompt taken from one of Prefixes
	// shared prefixes (system prompts), rounded to whole tokens.
	PrefixShare float64
	Prefixes    int
	// Duration and Requests end the stream, whichever comes first; at
	// least one is set.
	Duration time.Duration
	Requests int
}

// MinSyntheticRate is the lowest --synthetic rate: below it the arrival
// times of a long stream leave what a time.Duration holds (the review's
// rate=1e-11 overflowed, and the stream never reached its duration).
const MinSyntheticRate = 1e-6

// maxArrivalSeconds is the latest synthetic arrival a time.Duration holds.
const maxArrivalSeconds = float64(math.MaxInt64/int64(time.Second)) - 1

// Range is an inclusive range of token counts.
type Range struct{ Min, Max int }

const syntheticHelp = "rate=<req/s>,isl=<tokens>|<lo-hi>,osl=<tokens>|<lo-hi>,prefix-share=<0..1>,duration=<e.g. 60s>[,prefixes=<N>][,requests=<N>]"

// ParseSynthetic parses a --synthetic value: comma-separated key=value pairs
// rate, isl, osl, prefix-share, duration, prefixes (default 8) and requests;
// rate and isl are required, osl defaults to 128, prefix-share to 0, and one
// of duration and requests is required.
func ParseSynthetic(spec string) (SyntheticSpec, error) {
	s := SyntheticSpec{Prefixes: 8, OSL: Range{128, 128}}
	seen := map[string]bool{}
	for part := range strings.SplitSeq(spec, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		key, val, ok := strings.Cut(part, "=")
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		if !ok {
			return s, fmt.Errorf("synthetic: %q is not key=value; want %s", part, syntheticHelp)
		}
		if seen[key] {
			return s, fmt.Errorf("synthetic: %s is given twice", key)
		}
		seen[key] = true
		bad := func(form string) error {
			return fmt.Errorf("synthetic: %s=%q: want %s", key, val, form)
		}
		switch key {
		case "rate":
			f, err := strconv.ParseFloat(val, 64)
			if err != nil || !(f >= MinSyntheticRate) || f > 1e6 {
				return s, bad("requests per second, a number from 0.000001 (one request in about 12 days) to 1000000 (e.g. rate=5)")
			}
			s.Rate = f
		case "isl", "osl":
			r, ok := parseRange(val)
			lo := 0
			if key == "isl" {
				lo = 1
			}
			if !ok || r.Min < lo || r.Max > DefaultMaxInputTokens {
				return s, bad(fmt.Sprintf("a token count or an inclusive range lo-hi, from %d to %d (e.g. %s=1000 or %s=1000-4000)", lo, DefaultMaxInputTokens, key, key))
			}
			if key == "isl" {
				s.ISL = r
			} else {
				s.OSL = r
			}
		case "prefix-share":
			f, err := strconv.ParseFloat(val, 64)
			if err != nil || !(f >= 0 && f <= 1) {
				return s, bad("a fraction from 0 to 1 (e.g. prefix-share=0.5)")
			}
			s.PrefixShare = f
		case "prefixes":
			n, err := strconv.Atoi(val)
			if err != nil || n < 1 || n > 1<<20 {
				return s, bad("a count of shared prefixes from 1 to 1048576 (e.g. prefixes=8)")
			}
			s.Prefixes = n
		case "duration":
			d, err := time.ParseDuration(val)
			if err != nil || d <= 0 {
				return s, bad("a positive Go duration (e.g. duration=60s or duration=10m)")
			}
			s.Duration = d
		case "requests":
			n, err := strconv.Atoi(val)
			if err != nil || n < 1 {
				return s, bad("a positive request count (e.g. requests=1000)")
			}
			s.Requests = n
		default:
			return s, fmt.Errorf("synthetic: unknown key %q; want %s", key, syntheticHelp)
		}
	}
	switch {
	case s.Rate == 0:
		return s, fmt.Errorf("synthetic: rate is required; want %s", syntheticHelp)
	case s.ISL.Max == 0:
		return s, fmt.Errorf("synthetic: isl is required; want %s", syntheticHelp)
	case s.Duration == 0 && s.Requests == 0:
		return s, fmt.Errorf("synthetic: give duration or requests (or both; the first reached ends the trace); want %s", syntheticHelp)
	}
	return s, nil
}

func parseRange(v string) (Range, bool) {
	lo, hi, isRange := strings.Cut(v, "-")
	a, err := strconv.Atoi(lo)
	if err != nil {
		return Range{}, false
	}
	if !isRange {
		return Range{a, a}, true
	}
	b, err := strconv.Atoi(hi)
	if err != nil || b < a {
		return Range{}, false
	}
	return Range{a, b}, true
}

// Synthetic makes a trace from a --synthetic spec: Poisson arrivals at rate
// per second from time 0, input and output lengths uniform in their
// ranges, and the first round(prefix-share·isl) tokens of each prompt taken
// from one of prefixes shared prefixes chosen uniformly (so requests that
// pick the same prefix share that many tokens at least up to the shorter
// one), the rest unique to the request. The same spec and seed give the same
// stream, on every platform (math/rand/v2's PCG and integer token mixing).
func Synthetic(spec string, seed uint64) (Reader, error) {
	s, err := ParseSynthetic(spec)
	if err != nil {
		return nil, err
	}
	return NewSynthetic(s, seed), nil
}

// NewSynthetic makes a trace from a parsed spec; see Synthetic.
func NewSynthetic(s SyntheticSpec, seed uint64) Reader {
	return &syntheticReader{s: s, seed: seed, rng: rand.New(rand.NewPCG(seed, 0x73796E7468657469))}
}

type syntheticReader struct {
	s    SyntheticSpec
	seed uint64
	rng  *rand.Rand
	at   float64 // seconds
	n    int
}

func (r *syntheticReader) Next() (Request, error) {
	if r.s.Requests > 0 && r.n >= r.s.Requests {
		return Request{}, io.EOF
	}
	if r.s.Rate <= 0 {
		return Request{}, errors.New("synthetic: rate must be above 0")
	}
	r.at += r.rng.ExpFloat64() / r.s.Rate
	if !(r.at <= maxArrivalSeconds) {
		return Request{}, fmt.Errorf("synthetic: request %d would arrive after %.0f years, later than a replay can represent: raise rate or lower requests", r.n+1, r.at/(365.25*24*3600))
	}
	at := time.Duration(r.at * float64(time.Second))
	if r.s.Duration > 0 && at >= r.s.Duration {
		return Request{}, io.EOF
	}
	isl := pick(r.rng, r.s.ISL)
	osl := pick(r.rng, r.s.OSL)
	prefix := uint64(r.rng.IntN(max(r.s.Prefixes, 1)))
	shared := int(math.Round(r.s.PrefixShare * float64(isl)))
	toks := make([]uint32, 0, isl)
	toks = appendStream(toks, mix64(mix64(r.seed^domainPrefix)^prefix), 0, shared)
	toks = appendStream(toks, mix64(mix64(r.seed^domainUnique)^uint64(r.n)), shared, isl-shared)
	r.n++
	return Request{Arrival: at, Tokens: toks, OutputTokens: osl}, nil
}

func pick(rng *rand.Rand, r Range) int {
	if r.Max <= r.Min {
		return r.Min
	}
	return r.Min + rng.IntN(r.Max-r.Min+1)
}
