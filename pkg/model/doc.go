// Package model is the plain data every kubectl-dynamo command renders: a
// Snapshot of Dynamo deployments (kvTransferPolicy, topology object,
// components, router configuration, frontends and Workers with their role,
// readiness, GPUs, published Instances, runtime config, live load and KV-event
// state), the routing-quality counters, the notes that say what could not be
// read, and the Report of capacity per transfer-domain value with its Findings.
//
// It is the bottom of the house: it imports only the standard library and
// pkg/routecore, and holds no client-go, etcd or HTTP types. Sources
// (pkg/source/...) read raw objects, pkg/build turns them into a Snapshot,
// pkg/analysis turns a Snapshot into a Report; pkg/explain, pkg/simulate,
// pkg/preflight, pkg/tui and the commands read the model and never a source.
// hack/verify-layout.sh checks these rules.
package model
