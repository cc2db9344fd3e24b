package build

import (
	"cmp"
	"math/bits"
	"slices"
	"time"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
)

// The KV-event series a KV-mode frontend exports on /metrics (component
// metrics, reached through the drt_metrics bridge; ai-dynamo/dynamo
// lib/llm/src/kv_router/metrics.rs RouterWorkerStatusMetrics and
// RouterRequestMetrics, lib/kv-router/src/indexer KvIndexerMetrics, names in
// lib/runtime/src/metrics/prometheus_names.rs modules router and kvrouter).
const (
	// bldMetricSourceMismatch is an IntGaugeVec (#11194): the serving workers of
	// one worker set the router expects KV events from and has no source for
	// (missing or ambiguous source, publishing explicitly disabled, no
	// recovery target). Labels model, worker_type, target_namespace,
	// target_component and target_endpoint in the newest code; without
	// target_endpoint in an earlier one; no label at all in the first.
	bldMetricSourceMismatch = "dynamo_component_router_kv_event_source_mismatch_workers"
	// bldMetricEventsApplied counts the KV events the router's indexer applied,
	// by event_type (stored, removed, cleared) and status (ok,
	// parent_block_not_found, block_not_found, invalid_block); no worker label.
	bldMetricEventsApplied = "dynamo_component_kv_cache_events_applied"
	// bldMetricEventsAppliedKvRouter is the same counter registered outside the
	// component hierarchy (KV_CACHE_EVENTS_APPLIED_NAME, the standalone indexer).
	bldMetricEventsAppliedKvRouter = "dynamo_kvrouter_kv_cache_events_applied"
	// bldMetricRouterRequests is router_requests_total (requests the KV router
	// processed).
	bldMetricRouterRequests = "dynamo_component_router_requests_total"
)

// Bounds on what one scrape may add to the model: the metrics text is written
// by whoever answers on the frontend's port.
const (
	bldMaxSourceSets      = 64
	bldMaxAppliedSeries   = 32
	bldMaxKvEventLabelLen = 253
)

// bldIsKvEventsMetric reports the sample names bldKvEvents reads.
func bldIsKvEventsMetric(name string) bool {
	switch name {
	case bldMetricSourceMismatch, bldMetricEventsApplied, bldMetricEventsAppliedKvRouter, bldMetricRouterRequests:
		return true
	}
	return false
}

// bldKvLabelOK accepts a label value to keep: bounded, printable, no control
// characters (the model and target names are printed in findings).
func bldKvLabelOK(s string) bool {
	if len(s) > bldMaxKvEventLabelLen {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == 0xfffd || (r >= 0x80 && r < 0xa0) {
			return false
		}
	}
	return true
}

// bldKvEvents reads the KV-event series of one scrape. It returns nil when none
// is present, and the number of samples it could not use (not an exact count, a
// label too long or with control characters, over the series bounds, a sum that
// overflows).
func bldKvEvents(samples []bldSample, source string, at time.Time) (*model.KvEventsInfo, int) {
	type mk struct{ model, wt, ns, comp, ep string }
	type ak struct{ et, st string }
	mism := map[mk]uint64{}
	applied := map[ak]uint64{}
	var requests uint64
	hasMism, hasApplied, hasRequests := false, false, false
	bad := 0
	for i := range samples {
		s := &samples[i]
		if !bldIsKvEventsMetric(s.name) {
			continue
		}
		v, ok := bldSampleCount(s)
		if !ok {
			bad++
			continue
		}
		switch s.name {
		case bldMetricSourceMismatch:
			k := mk{s.labels["model"], s.labels["worker_type"], s.labels["target_namespace"], s.labels["target_component"], s.labels["target_endpoint"]}
			if !bldKvLabelOK(k.model) || !bldKvLabelOK(k.ns) || !bldKvLabelOK(k.comp) || !bldKvLabelOK(k.ep) || !bldWorkerTypeOK(k.wt) {
				bad++
				continue
			}
			prev, seen := mism[k]
			if !seen && len(mism) >= bldMaxSourceSets {
				bad++
				continue
			}
			sum, c := bits.Add64(prev, v, 0)
			if c != 0 {
				bad++
				continue
			}
			mism[k], hasMism = sum, true
		case bldMetricEventsApplied, bldMetricEventsAppliedKvRouter:
			k := ak{s.labels["event_type"], s.labels["status"]}
			if !bldWorkerTypeOK(k.et) || !bldWorkerTypeOK(k.st) {
				bad++
				continue
			}
			prev, seen := applied[k]
			if !seen && len(applied) >= bldMaxAppliedSeries {
				bad++
				continue
			}
			sum, c := bits.Add64(prev, v, 0)
			if c != 0 {
				bad++
				continue
			}
			applied[k], hasApplied = sum, true
		case bldMetricRouterRequests:
			sum, c := bits.Add64(requests, v, 0)
			if c != 0 {
				bad++
				continue
			}
			requests, hasRequests = sum, true
		}
	}
	if !hasMism && !hasApplied && !hasRequests {
		return nil, bad
	}
	k := &model.KvEventsInfo{Source: source, At: at}
	for key, n := range mism {
		k.SourceMismatch = append(k.SourceMismatch, model.KvEventSourceMismatch{Model: key.model, WorkerType: key.wt,
			TargetNamespace: key.ns, TargetComponent: key.comp, TargetEndpoint: key.ep, Workers: n})
	}
	slices.SortFunc(k.SourceMismatch, func(a, b model.KvEventSourceMismatch) int {
		return cmp.Or(cmp.Compare(a.TargetNamespace, b.TargetNamespace), cmp.Compare(a.TargetComponent, b.TargetComponent),
			cmp.Compare(a.TargetEndpoint, b.TargetEndpoint), cmp.Compare(a.Model, b.Model), cmp.Compare(a.WorkerType, b.WorkerType))
	})
	for key, n := range applied {
		k.Applied = append(k.Applied, model.KvEventsApplied{EventType: key.et, Status: key.st, Count: n})
	}
	slices.SortFunc(k.Applied, func(a, b model.KvEventsApplied) int {
		return cmp.Or(cmp.Compare(a.EventType, b.EventType), cmp.Compare(a.Status, b.Status))
	})
	if hasRequests {
		k.RoutedRequests = &requests
	}
	return k, bad
}
