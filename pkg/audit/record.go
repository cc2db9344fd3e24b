package audit

import (
	"math"
	"strconv"
	"strings"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// Format is how a log line was written.
type Format string

// Line formats.
const (
	// FormatText is tracing-subscriber's compact text without colour.
	FormatText Format = "text"
	// FormatANSI is the same text with ANSI colour codes (the default on a
	// terminal, and in many pods).
	FormatANSI Format = "ansi"
	// FormatJSON is one JSON object per line (DYN_LOGGING_JSONL=1).
	FormatJSON Format = "json"
)

// LineKind is which router line a record is.
type LineKind string

// Record kinds.
const (
	// KindSelected is "Selected worker" (structured or an older text form) or
	// "Selected pinned worker".
	KindSelected LineKind = "selected"
	// KindFormula is a candidate's cost line ("Formula for worker_id=…").
	KindFormula LineKind = "formula"
	// KindBest is "[ROUTING] Best: …" from the push router.
	KindBest LineKind = "routing-best"
	// KindInput is "[ROUTING_INPUT] request local hashes".
	KindInput LineKind = "routing-input"
)

// Position is where a record was read: the log stream's name and the line
// number (1-based).
type Position struct {
	Source string `json:"source"`
	Line   int    `json:"line"`
}

// String renders source:line.
func (p Position) String() string { return p.Source + ":" + strconv.Itoa(p.Line) }

// Number is a number as the router printed it: its value, its text, and how
// precise the text is.
type Number struct {
	Value float64 `json:"value"`
	Text  string  `json:"text"`
	// Decimals is the number of digits printed after the decimal point; -1
	// when the text has an exponent or is not finite.
	Decimals int `json:"decimals"`
	// Exact is true when the text is the shortest form that reads back to the
	// router's float64 (Rust's Debug and serde_json's f64 form): the value is
	// the router's own, not a rounding of it.
	Exact bool `json:"exact,omitempty"`
}

// Half is half a unit of the last printed digit: the most the printed value
// can differ from the router's (0 for an exact number).
func (n Number) Half() float64 {
	if n.Exact || n.Decimals < 0 {
		return 0
	}
	return 0.5 * math.Pow10(-n.Decimals)
}

// Valid reports whether the number was read.
func (n Number) Valid() bool { return n.Text != "" }

// numberChar reports whether c can be part of a number the router prints:
// digits, the point, signs, an exponent, and the letters of inf and NaN.
func numberChar(c byte) bool {
	if c >= '0' && c <= '9' {
		return true
	}
	switch c {
	case '.', '-', '+', 'e', 'E', 'i', 'n', 'f', 'N', 'a':
		return true
	}
	return false
}

// parseNumber reads a number in the forms the router prints: Rust's {:.N}
// ("12.345", "-0.000", "inf", "NaN"), Rust's Debug and serde_json's f64 form
// ("12.0", "1e-5", "1.5e16"). exact says whether the text is a shortest
// round-trip form.
func parseNumber(s string, exact bool) (Number, bool) {
	if s == "" || len(s) > 64 {
		return Number{}, false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !numberChar(c) && c != 'I' && c != 'F' && c != 'A' {
			return Number{}, false
		}
	}
	lower := strings.ToLower(strings.TrimLeft(s, "+-"))
	if lower != "inf" && lower != "nan" && strings.ContainsAny(lower, "inaf") {
		return Number{}, false // "infinity", "0x…" and the like are not the router's forms
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return Number{}, false
	}
	n := Number{Value: v, Text: s, Decimals: -1, Exact: exact}
	if strings.ContainsAny(s, "eE") || math.IsInf(v, 0) || math.IsNaN(v) {
		return n, true
	}
	if i := strings.IndexByte(s, '.'); i >= 0 {
		n.Decimals = len(s) - i - 1
	} else {
		n.Decimals = 0
	}
	return n, true
}

// Selection is a "Selected worker" line: the router's pick for one hop.
type Selection struct {
	// Form is "structured" (the newest selector), "text" (older selectors),
	// "text-v1" (the first generation, without worker_type) or "pinned".
	Form   string                     `json:"form"`
	Worker routecore.WorkerWithDpRank `json:"worker"`
	// Logit is the selected worker's cost after the preferred-taint multiplier
	// (the structured form prints it exactly).
	Logit Number `json:"logit"`
	// EffectiveCachedBlocks is the selected worker's effective overlap in
	// blocks (absent from the decode form).
	EffectiveCachedBlocks *Number `json:"effectiveCachedBlocks,omitempty"`
	HostPinnedBlocks      *uint64 `json:"hostPinnedBlocks,omitempty"`
	DiskBlocks            *uint64 `json:"diskBlocks,omitempty"`
	TotalKvBlocks         *uint64 `json:"totalKvBlocks,omitempty"`
	TreeSize              *uint64 `json:"treeSize,omitempty"`
	// RouterMode is the structured router_mode field ("kv").
	RouterMode string `json:"routerMode,omitempty"`
}

// Pinned reports whether the request pinned the worker.
func (s *Selection) Pinned() bool { return s.Form == "pinned" }

// Formula shapes.
const (
	// ShapePrefill is the newest formula: scale·adjusted + decode + request cost.
	ShapePrefill = "prefill"
	// ShapeDecodeOverlap is the conditional-disaggregation decode branch:
	// max(0, decode − credit) + request cost.
	ShapeDecodeOverlap = "decode-overlap"
	// ShapeWeighted is the formula before overlap_score_credit:
	// overlap_score_weight·prefill blocks + decode blocks.
	ShapeWeighted = "weighted"
)

// Formula is one candidate's cost line.
type Formula struct {
	// Name is "Formula", "Pinned formula" or "Session affinity formula".
	Name  string `json:"name"`
	Shape string `json:"shape"`
	// Worker is not serialised: a u64 id is a decimal string in documents,
	// which the structures holding a Formula carry (CandidateTrace).
	Worker routecore.WorkerWithDpRank `json:"-"`
	// EffectiveBlocks is the "with E effective cached blocks" value (the
	// first generation prints the integer device overlap there).
	EffectiveBlocks Number `json:"effectiveBlocks"`
	// SharedBeyond and SharedMultiplier are printed when shared-cache hits
	// beyond the device prefix exist.
	SharedBeyond     *uint64 `json:"sharedBeyond,omitempty"`
	SharedMultiplier *Number `json:"sharedMultiplier,omitempty"`
	// Logit is the cost before the preferred-taint multiplier.
	Logit Number `json:"logit"`

	// The prefill shape: Logit = Scale·Adjusted + Decode + RequestCost, with
	// Adjusted = max(0, Raw − Credit) and Decay the overlap-credit decay.
	Scale       Number `json:"scale,omitzero"`
	Adjusted    Number `json:"adjusted,omitzero"`
	Decode      Number `json:"decode,omitzero"`
	RequestCost Number `json:"requestCost,omitzero"`
	Raw         Number `json:"raw,omitzero"`
	Credit      Number `json:"credit,omitzero"`
	Decay       Number `json:"decay,omitzero"`

	// The weighted shape: Logit = Weight·PrefillBlocks + Decode.
	Weight        Number `json:"weight,omitzero"`
	PrefillBlocks Number `json:"prefillBlocks,omitzero"`
	// PrefillTokens and AdjustedTokens are the shared-cache form's
	// "(prefill_tokens: A -> B)".
	PrefillTokens  *uint64 `json:"prefillTokens,omitempty"`
	AdjustedTokens *uint64 `json:"adjustedTokens,omitempty"`
}

// Best is a "[ROUTING] Best" line: the push router's view of the pick.
type Best struct {
	Worker routecore.WorkerWithDpRank `json:"worker"`
	// OverlapBlocks is the selected worker's device overlap in blocks;
	// TotalBlocks the request's blocks (ceil(isl / block size)).
	OverlapBlocks uint64 `json:"overlapBlocks"`
	TotalBlocks   uint64 `json:"totalBlocks"`
}

// RoutingInput is a "[ROUTING_INPUT]" line: the request as the router hashed it.
type RoutingInput struct {
	ISLTokens   uint64   `json:"islTokens"`
	BlockSize   uint64   `json:"blockSize"`
	NumBlocks   uint64   `json:"numBlocks"`
	LocalHashes []uint64 `json:"localHashes,omitempty"`
}

// Record is one router line.
type Record struct {
	Pos    Position `json:"pos"`
	Format Format   `json:"format"`
	Kind   LineKind `json:"kind"`
	// Time and Level are as printed ("" when the line has none).
	Time  string `json:"time,omitempty"`
	Level string `json:"level,omitempty"`
	// RequestID is the request's id ("" when the line has none; the router
	// prints "-" or "" for a request without one, which reads as none).
	RequestID string `json:"requestId,omitempty"`
	// WorkerType is the router's worker_type: "prefill" or "decode" (the
	// frontend's router, aggregated deployments included); "" when the line
	// has none.
	WorkerType string `json:"workerType,omitempty"`

	Selection *Selection    `json:"selection,omitempty"`
	Formula   *Formula      `json:"formula,omitempty"`
	Best      *Best         `json:"best,omitempty"`
	Input     *RoutingInput `json:"input,omitempty"`
}

// Worker returns the (worker, dp rank) the record names, if any.
func (r *Record) Worker() (routecore.WorkerWithDpRank, bool) {
	switch {
	case r.Selection != nil:
		return r.Selection.Worker, true
	case r.Formula != nil:
		return r.Formula.Worker, true
	case r.Best != nil:
		return r.Best.Worker, true
	}
	return routecore.WorkerWithDpRank{}, false
}
