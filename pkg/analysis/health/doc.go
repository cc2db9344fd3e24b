// Package health reports routing-health findings: the silent routing failures
// Dynamo users hit, where requests still flow but worse and nothing says so — a
// KV router whose workers publish no KV events, workers of one worker set
// hashing in different spaces, disaggregation that quietly serves aggregated,
// router replicas that do not share their load view, busy thresholds every
// worker of a role already exceeds, and a KV router that reaches well under the
// prefix-cache hit rate its own counters say was reachable.
//
// It sits above the model (pkg/model): Findings reads only a Snapshot — the
// pods' command lines and DYN_* env, the published model cards, the frontend's
// router configuration, and the loads and decision counters from its /metrics —
// and returns model.Finding values with the ids documented in docs/findings.md, each
// citing the upstream issues behind it. pkg/analysis merges them into the
// topology report. Findings is pure and deterministic.
package health
