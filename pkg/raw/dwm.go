package raw

import (
	"encoding/json"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// DWM is a DynamoWorkerMetadata: the discovery data a worker publishes
// (Dynamo's Kubernetes discovery backend), owned by its pod.
type DWM struct {
	TypeMeta
	ObjectMeta `json:"metadata"`
	Spec       DWMSpec `json:"spec"`
}

// DWMSpec is a DynamoWorkerMetadata's spec.
type DWMSpec struct {
	// Data is spec.data, Dynamo's DiscoveryMetadata; nil when absent or null
	// (or when spec is not an object).
	Data *DiscoveryMetadata `json:"data"`
}

// DiscoveryMetadata is spec.data: maps (endpoints, model_cards, …) of
// DiscoveryInstance entries by key. It is read into Instances when every entry
// reads exactly as Build's reader reads it; anything else (a wrongly typed
// field, an entry without an instance id, a key encoding/json would fold, …)
// keeps the whole value in JSON instead, for Build's tolerant reader, which
// reads what it can and says what it cannot.
type DiscoveryMetadata struct {
	// Instances are the Endpoint and Model entries, map by map and entry by
	// entry in key order (other types and null entries are left out).
	Instances []DiscoveryInstance
	// JSON is spec.data as a JSON value when it was not read into Instances.
	JSON any
}

// DiscoveryInstance is one Endpoint or Model entry of a DiscoveryMetadata.
type DiscoveryInstance struct {
	// Key is the entry's key in its map.
	Key       string `json:"-"`
	Type      string `json:"type"`
	Namespace string `json:"namespace"`
	Component string `json:"component"`
	Endpoint  string `json:"endpoint"`
	// InstanceID is the instance id: a u64, never passed through float64.
	InstanceID uint64 `json:"instance_id"`
	// Transport holds the transport's string members in key order
	// ({"tcp": "10.0.0.1:4000/…"}).
	Transport []TransportAddress `json:"transport"`
	// CardJSON is a Model entry's model card (nil for an Endpoint entry or a
	// Model entry without one).
	CardJSON *ModelCard `json:"card_json"`
}

// TransportAddress is one string member of an instance's transport.
type TransportAddress struct {
	Key, Address string
}

// ModelCard is the part of a model card (card_json) that is read.
type ModelCard struct {
	DisplayName string `json:"display_name"`
	// KvCacheBlockSize is 0 when absent.
	KvCacheBlockSize int    `json:"kv_cache_block_size"`
	WorkerType       string `json:"worker_type"`
	// ModelType is model_type when it is a string ("Chat | Completions",
	// "Prefill" for legacy prefill workers).
	ModelType string `json:"model_type"`
	// RuntimeConfig is nil when absent or null.
	RuntimeConfig *CardRuntimeConfig `json:"runtime_config"`
	// RouterConfig is router_config as compact JSON (json.Marshal's encoding
	// of the value); nil when absent or null.
	RouterConfig json.RawMessage `json:"router_config"`
}

// CardRuntimeConfig is a card's runtime_config: what the router reads, and
// three fields it does not keep.
type CardRuntimeConfig struct {
	routecore.RuntimeConfig
	StableRoutingID string `json:"stable_routing_id"`
	// DisaggregatedEndpoint is whether disaggregated_endpoint is set (not
	// null): the legacy mark of a prefill worker.
	DisaggregatedEndpoint    bool  `json:"disaggregated_endpoint"`
	KvEventPublishingEnabled *bool `json:"kv_event_publishing_enabled"`
}
