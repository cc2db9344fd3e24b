package explain

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// Input is everything one dry run reads. Snapshot and Deployment come from
// pkg/build (live or a capture); Request, KV and Options from the user.
type Input struct {
	Snapshot   *model.Snapshot
	Deployment *model.Deployment
	Request    Request
	KV         KVCache
	Options    Options
}

// Request is the request to route.
type Request struct {
	// Tokens are the prompt's token ids, exactly as the frontend tokenizes them.
	Tokens []uint32
	// Tokenizer says where Tokens came from ("--tokens", "frontend POST /tokenize", …).
	Tokenizer      string
	LoraName       string
	CacheNamespace string
	// Constraints are the user's nvext.routing_constraints.
	Constraints routecore.RoutingConstraints
	// Override is the user's per-request router_config_override.
	Override routecore.RouterConfigOverride
	// Multimodal are the request's multimodal objects (mm_hash and placeholder
	// ranges), which change the hashes of the blocks holding them.
	Multimodal routecore.Multimodal
}

// KVKind says how the KV-cache contents are known.
type KVKind string

// KV-cache sources.
const (
	// KVCold assumes no worker holds any block of the prompt.
	KVCold KVKind = "cold"
	// KVIndex uses a radix index built from RouterEvents (a capture's KvEvents or
	// the frontend's placements stream).
	KVIndex KVKind = "index"
	// KVIndexer uses a standalone indexer's POST /query answer.
	KVIndexer KVKind = "indexer"
)

// KVCache is the KV-cache contents the overlap is computed from.
type KVCache struct {
	Kind KVKind
	// Index holds the contents when Kind is KVIndex.
	Index *routecore.Index
	// IndexerTokens are matched tokens per candidate when Kind is KVIndexer
	// (the indexer reports tokens: blocks × block size).
	IndexerTokens map[routecore.WorkerWithDpRank]uint64
	// Detail names the source (file, URL, stream); At is when it was read.
	Detail string
	At     time.Time
	// Incomplete is set when the source said its snapshot is incomplete.
	Incomplete string
}

// Knobs override router settings for a what-if; nil fields keep the
// deployment's effective value. They apply to the frontend (decode) router
// and to the prefill router alike.
type Knobs struct {
	OverlapScoreCredit        *float64
	OverlapScoreCreditDecay   *float64
	PrefillLoadScale          *float64
	DecodeActiveRequestWeight *float64
	HostCacheHitWeight        *float64
	DiskCacheHitWeight        *float64
	Temperature               *float64
	SharedCacheMultiplier     *float64
	TrackActiveBlocks         *bool
	AssumeKvReuse             *bool
	TrackPrefillTokens        *bool
	ConditionalDisagg         *bool
	// Profile selects a Dynamo compatibility profile (--dynamo-version).
	Profile *routecore.Profile
	// Enforcement replaces every prefill worker's kv_transfer_enforcement;
	// EnforcementOff removes its transfer domain (topology-aware transfer off).
	Enforcement *Enforcement
	// PreferredWeight replaces the preferred weight of every prefill worker.
	PreferredWeight *float64
	// Thresholds replace the busy thresholds when set.
	Thresholds *routecore.BusyThresholds
	// RouterMode replaces the frontend's router mode (--router-mode what-if).
	RouterMode *routecore.RouterMode
}

// Enforcement is a what-if transfer enforcement.
type Enforcement string

// Enforcement what-ifs.
const (
	EnforcementRequired  Enforcement = "required"
	EnforcementPreferred Enforcement = "preferred"
	EnforcementOff       Enforcement = "off"
)

// ParseEnforcement accepts required, preferred or off.
func ParseEnforcement(s string) (Enforcement, error) {
	switch e := Enforcement(strings.ToLower(strings.TrimSpace(s))); e {
	case EnforcementRequired, EnforcementPreferred, EnforcementOff:
		return e, nil
	}
	return "", fmt.Errorf("enforcement %q: must be required, preferred or off", s)
}

// LoadOverride replaces the load of one worker (all its dp ranks).
type LoadOverride struct {
	Worker         string
	DecodeBlocks   *uint64
	PrefillTokens  *uint64
	ActiveRequests *uint64
}

// ParseLoadOverride parses POD=decodeBlocks:N,prefillTokens:M[,activeRequests:K].
func ParseLoadOverride(s string) (LoadOverride, error) {
	pod, spec, ok := strings.Cut(s, "=")
	pod = strings.TrimSpace(pod)
	if !ok || pod == "" || strings.TrimSpace(spec) == "" {
		return LoadOverride{}, fmt.Errorf("load %q: want POD=decodeBlocks:N,prefillTokens:M", s)
	}
	lo := LoadOverride{Worker: pod}
	for part := range strings.SplitSeq(spec, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), ":")
		if !ok {
			return LoadOverride{}, fmt.Errorf("load %q: %q is not KEY:N (keys: decodeBlocks, prefillTokens, activeRequests)", s, part)
		}
		n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return LoadOverride{}, fmt.Errorf("load %q: %s must be a non-negative integer, got %q", s, k, v)
		}
		switch strings.TrimSpace(k) {
		case "decodeBlocks":
			lo.DecodeBlocks = &n
		case "prefillTokens":
			lo.PrefillTokens = &n
		case "activeRequests":
			lo.ActiveRequests = &n
		default:
			return LoadOverride{}, fmt.Errorf("load %q: unknown key %q (keys: decodeBlocks, prefillTokens, activeRequests)", s, k)
		}
	}
	return lo, nil
}

// DomainValue is KEY=VALUE naming a topology domain value (--domain-down).
// KEY is a transfer domain (zone, rack, …) or a node/pod label key.
type DomainValue struct {
	Key, Value string
}

// String returns KEY=VALUE.
func (d DomainValue) String() string { return d.Key + "=" + d.Value }

// ParseDomainValue parses KEY=VALUE.
func ParseDomainValue(s string) (DomainValue, error) {
	k, v, ok := strings.Cut(s, "=")
	k, v = strings.TrimSpace(k), strings.TrimSpace(v)
	if !ok || k == "" || v == "" {
		return DomainValue{}, fmt.Errorf("domain %q: want KEY=VALUE, e.g. zone=us-east-1c", s)
	}
	return DomainValue{Key: k, Value: v}, nil
}

// WhatIf changes the deployment for the dry run.
type WhatIf struct {
	// ExcludeWorkers are pods removed from routing.
	ExcludeWorkers []string
	// DomainDown removes every worker in these domain values.
	DomainDown []DomainValue
	// Prefill forces the prefill pick: POD or POD:RANK (a pinned
	// prefill_worker_id).
	Prefill string
	// AllPrefill evaluates the decode outcome for every prefill candidate.
	AllPrefill bool
	// Decode is the decode worker a direct-mode request names: POD.
	Decode string
}

// Options tune the dry run.
type Options struct {
	Knobs Knobs
	// AssumeIdle ignores observed loads: every worker is idle.
	AssumeIdle bool
	// Loads override individual workers' loads (after AssumeIdle).
	Loads  []LoadOverride
	WhatIf WhatIf
	// Seed seeds the draws for ties and sampling; SeedGiven says the user chose it.
	Seed      uint64
	SeedGiven bool
	// BlockSize is used when no worker card publishes kv_cache_block_size; a
	// value that contradicts the cards is an error.
	BlockSize int
	// DynamoVersion overrides the Dynamo release the deployment is read at
	// (--dynamo-version); "" detects it (pkg/behavior). The routing profile,
	// each hop's mode and the frontend's readiness follow it.
	DynamoVersion string
}

// ErrInput marks errors caused by the user's input (flags, names, tokens).
var ErrInput = errors.New("invalid input")

// InputError is an ErrInput with what to do next.
type InputError struct {
	Msg  string
	Hint string
}

// Error implements error.
func (e *InputError) Error() string { return e.Msg }

// Is makes errors.Is(err, ErrInput) true.
func (e *InputError) Is(target error) bool { return target == ErrInput }

func inputErr(hint, format string, args ...any) error {
	return &InputError{Msg: fmt.Sprintf(format, args...), Hint: hint}
}
