// Package build turns raw objects (a raw.Bundle) into the model (a
// model.Snapshot): it is the only place where wire formats become the model.
//
// Build groups the Kubernetes objects by DynamoGraphDeployment and reads each
// deployment's kvTransferPolicy, topology object, components, router
// configuration and frontends; recovers every worker's role from the signals
// upstream spreads over cards, labels, declared types and nested command
// lines; decodes DynamoWorkerMetadata and etcd discovery records into
// Instances (u64 ids exact); attaches the frontend's loads, busy thresholds,
// KV-event counters and routing-quality counters; and explains pending pods
// from their events. Anything it cannot read becomes a model.Note, never a
// crash.
//
// It may import the standard library, pkg/model, pkg/raw, pkg/routecore,
// pkg/cmdline and pkg/jsonscan; never a source.
package build
