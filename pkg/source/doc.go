// Package source reads live Dynamo deployments into a raw.Bundle: Collect runs
// the Kubernetes source (pkg/source/kube), the Dynamo discovery etcd
// (pkg/source/etcd, found from the pods' env when asked) and each deployment's
// frontend (pkg/source/frontend: /metrics, /busy_threshold and the KV
// placements stream), each behind its own Source so a command can ask for any
// subset. What a source cannot read becomes a model.Note and a degraded
// model.SourceStatus, never an error, unless nothing at all could be read.
//
// The sub-packages are the sources: kube (the API server, with the request
// guard and the cluster read preflight needs), etcd, frontend (also the
// on-demand route inputs explain-route uses: /tokenize, the placements
// snapshot, a standalone indexer's /query), capture (capture files, read and
// written), manifest (manifest files with the line of each object and field,
// for preflight), watch (live updates for the dashboard and topology --watch),
// redact (what a capture or an error may not carry) and iolimit (bounded
// reads shared by them). Sources return raw objects; pkg/build makes the
// model. Nothing under pkg/explain, pkg/simulate, pkg/preflight or pkg/tui
// imports a source.
//
// Every read is GET or LIST (and the two POSTs of pure computations,
// /tokenize and an indexer's /query, documented in docs/rbac.md), bounded in
// size and time, and keeps 64-bit ids and hashes exact.
package source
