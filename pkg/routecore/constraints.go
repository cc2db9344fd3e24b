package routecore

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// TopologyTaintPrefix is the prefix of the taints Dynamo derives from a worker's
// topology_domains (TOPOLOGY_TAINT_PREFIX): dynamo.topology/<domain>=<value>.
const TopologyTaintPrefix = "dynamo.topology/"

// TopologyTaint returns the canonical taint for a topology domain and value.
func TopologyTaint(domain, value string) string {
	return TopologyTaintPrefix + domain + "=" + value
}

// RoutingConstraints mirrors Dynamo's RoutingConstraints (nvext.routing_constraints):
// a worker is eligible only if it carries every required taint; preferred taints
// scale its cost by exp(-tanh(sum of the weights of the preferred taints it has)).
type RoutingConstraints struct {
	RequiredTaints  []string           `json:"required_taints,omitempty"`
	PreferredTaints map[string]float64 `json:"preferred_taints,omitempty"`
}

// IsEmpty reports whether the constraints restrict or bias nothing.
func (c RoutingConstraints) IsEmpty() bool {
	return len(c.RequiredTaints) == 0 && len(c.PreferredTaints) == 0
}

// Clone returns a deep copy.
func (c RoutingConstraints) Clone() RoutingConstraints {
	out := RoutingConstraints{RequiredTaints: slices.Clone(c.RequiredTaints)}
	if c.PreferredTaints != nil {
		out.PreferredTaints = make(map[string]float64, len(c.PreferredTaints))
		for k, v := range c.PreferredTaints {
			out.PreferredTaints[k] = v
		}
	}
	return out
}

// Normalize sorts and de-duplicates the required taints (they are a set in Dynamo).
func (c *RoutingConstraints) Normalize() {
	slices.Sort(c.RequiredTaints)
	c.RequiredTaints = slices.Compact(c.RequiredTaints)
}

// SortedPreferred returns the preferred taint names in sorted order.
func (c RoutingConstraints) SortedPreferred() []string {
	keys := make([]string, 0, len(c.PreferredTaints))
	for k := range c.PreferredTaints {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// ParseRoutingConstraints decodes the JSON form used in nvext.routing_constraints,
// e.g. {"required_taints":["a"],"preferred_taints":{"b":0.5}}.
func ParseRoutingConstraints(data []byte) (RoutingConstraints, error) {
	var c RoutingConstraints
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return RoutingConstraints{}, fmt.Errorf("parse routing constraints: %w (expected {\"required_taints\":[...],\"preferred_taints\":{\"taint\":weight}})", err)
	}
	c.Normalize()
	return c, nil
}

// KvTransferEnforcement is a worker's kv_transfer_enforcement: how strictly the decode
// worker must share the prefill worker's transfer domain.
type KvTransferEnforcement string

const (
	// EnforcementNone means the field is absent. A worker that publishes a transfer
	// domain with no enforcement makes the router fail its requests.
	EnforcementNone KvTransferEnforcement = ""
	// EnforcementRequired restricts decode to workers in the same domain.
	EnforcementRequired KvTransferEnforcement = "required"
	// EnforcementPreferred biases decode towards workers in the same domain.
	EnforcementPreferred KvTransferEnforcement = "preferred"
)

// ParseKvTransferEnforcement accepts "required", "preferred" or "" (absent); any
// other value, including the never-implemented "fallback", is rejected as Dynamo does.
func ParseKvTransferEnforcement(s string) (KvTransferEnforcement, error) {
	switch KvTransferEnforcement(s) {
	case EnforcementNone, EnforcementRequired, EnforcementPreferred:
		return KvTransferEnforcement(s), nil
	}
	return "", fmt.Errorf("invalid kv transfer enforcement %q: must be \"required\" or \"preferred\"", s)
}

// RuntimeConfig is the subset of Dynamo's ModelRuntimeConfig (card_json.runtime_config)
// that routing depends on. Pointer fields are nil when the worker did not publish them.
type RuntimeConfig struct {
	TotalKvBlocks       *uint64 `json:"total_kv_blocks,omitempty"`
	MaxNumSeqs          *uint64 `json:"max_num_seqs,omitempty"`
	MaxNumBatchedTokens *uint64 `json:"max_num_batched_tokens,omitempty"`
	// DataParallelStartRank and DataParallelSize give the ranks [start, start+size).
	DataParallelStartRank uint32 `json:"data_parallel_start_rank"`
	// DataParallelSize is the number of ranks. Dynamo's serde default makes an
	// omitted field 1, but a published 0 stays 0: the worker has no rank
	// (start..start+0 is empty) and its config fails validation ("data_parallel_size
	// must be at least 1"). Here 0 means omitted (1) unless DataParallelSizeSet.
	DataParallelSize uint32 `json:"data_parallel_size"`
	// DataParallelSizeSet records that data_parallel_size was published (JSON
	// decoding sets it), so that an explicit 0 is told from an omitted field.
	DataParallelSizeSet bool     `json:"-"`
	EnableEagle         bool     `json:"enable_eagle"`
	Taints              []string `json:"taints,omitempty"`
	// TopologyDomains maps a domain (zone, rack, …) to this worker's value.
	TopologyDomains           map[string]string     `json:"topology_domains,omitempty"`
	KvTransferDomain          string                `json:"kv_transfer_domain,omitempty"`
	KvTransferEnforcement     KvTransferEnforcement `json:"kv_transfer_enforcement,omitempty"`
	KvTransferPreferredWeight *float64              `json:"kv_transfer_preferred_weight,omitempty"`
}

// DpSize is the worker's number of data-parallel ranks as Dynamo reads it: 1
// when data_parallel_size was omitted (serde's default_data_parallel_size), else
// the published value, 0 included.
func (r RuntimeConfig) DpSize() uint32 {
	if r.DataParallelSize == 0 && !r.DataParallelSizeSet {
		return 1
	}
	return r.DataParallelSize
}

// DpRange returns the worker's data-parallel ranks as [start, end); empty for a
// published data_parallel_size 0.
func (r RuntimeConfig) DpRange() (start, end uint32) {
	return r.DataParallelStartRank, r.DataParallelStartRank + r.DpSize()
}

// UnmarshalJSON decodes a runtime config and records whether
// data_parallel_size was present (DataParallelSizeSet); null counts as absent.
func (r *RuntimeConfig) UnmarshalJSON(data []byte) error {
	type plain RuntimeConfig
	var v struct {
		plain
		DataParallelSize *uint32 `json:"data_parallel_size"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	*r = RuntimeConfig(v.plain)
	r.DataParallelSize, r.DataParallelSizeSet = 0, v.DataParallelSize != nil
	if v.DataParallelSize != nil {
		r.DataParallelSize = *v.DataParallelSize
	}
	return nil
}

// EffectiveTaints returns the worker's taints as the router sees them: the published
// taints with every dynamo.topology/ taint replaced by one per topology domain
// (add_topology_taints: domain and value trimmed, empty ones skipped), sorted.
func (r RuntimeConfig) EffectiveTaints() []string {
	out := make([]string, 0, len(r.Taints)+len(r.TopologyDomains))
	for _, t := range r.Taints {
		if !strings.HasPrefix(t, TopologyTaintPrefix) {
			out = append(out, t)
		}
	}
	for d, v := range r.TopologyDomains {
		d, v = strings.TrimSpace(d), strings.TrimSpace(v)
		if d == "" || v == "" {
			continue
		}
		out = append(out, TopologyTaint(d, v))
	}
	slices.Sort(out)
	return slices.Compact(out)
}
