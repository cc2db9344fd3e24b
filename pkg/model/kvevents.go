package model

import "time"

// KvEventsInfo is what the frontend's router says about the KV events it
// receives, from one /metrics scrape.
type KvEventsInfo struct {
	Source string    `json:"source"`
	At     time.Time `json:"at"`
	// SourceMismatch is router_kv_event_source_mismatch_workers per worker set,
	// sorted; nil when the frontend does not export it.
	SourceMismatch []KvEventSourceMismatch `json:"sourceMismatch,omitempty"`
	// Applied is kv_cache_events_applied by event type and status, sorted; nil
	// when not exported.
	Applied []KvEventsApplied `json:"applied,omitempty"`
	// RoutedRequests is router_requests_total, when exported.
	RoutedRequests *uint64 `json:"routedRequests,omitempty"`
}

// KvEventSourceMismatch is one worker set's count of workers without a KV
// event source. Labels upstream does not set are "".
type KvEventSourceMismatch struct {
	Model           string `json:"model,omitempty"`
	WorkerType      string `json:"workerType,omitempty"`
	TargetNamespace string `json:"targetNamespace,omitempty"`
	TargetComponent string `json:"targetComponent,omitempty"`
	TargetEndpoint  string `json:"targetEndpoint,omitempty"`
	Workers         uint64 `json:"workers"`
}

// KvEventsApplied is one (event type, status) count.
type KvEventsApplied struct {
	EventType string `json:"eventType"`
	Status    string `json:"status"`
	Count     uint64 `json:"count"`
}

// StoredOK is the number of stored events applied without error; false when
// the counter is not exported.
func (k *KvEventsInfo) StoredOK() (uint64, bool) {
	if k == nil || k.Applied == nil {
		return 0, false
	}
	var n uint64
	for _, a := range k.Applied {
		if a.EventType == "stored" && a.Status == "ok" {
			n = satAdd(n, a.Count)
		}
	}
	return n, true
}
