// Package inspect reads Dynamo deployments into one plain data model that the
// CLI printers, the findings engine and the dashboard all render, without
// exposing client-go, etcd or HTTP types.
//
// The flow has three steps:
//
//  1. Collect. A source fills a Bundle with raw material: Kubernetes objects
//     as the API returns them (DynamoGraphDeployments, DynamoWorkerMetadatas,
//     Pods, Nodes, EndpointSlices, Events, Services, Grove topology objects),
//     etcd key-values of the Dynamo discovery store, the frontend's /metrics
//     text and /busy_threshold answer, and KV events. Live sources read a
//     cluster; ReadCapture reads a capture file written by WriteCapture (or by
//     hand) so that every command also works offline.
//  2. Build. Build is the only place where wire formats become the model: it
//     turns a Bundle into a Snapshot of Deployments, each with its
//     kvTransferPolicy, topology object, components, router configuration,
//     frontends and Workers (role and the signal that decided it, multinode
//     replica, readiness, GPUs, published Instances with their runtime
//     config and live load, and the transfer-domain value as published, on
//     the pod label and on the node). Anything it cannot read becomes a Note,
//     never a crash.
//  3. Analyze. Analyze turns a Snapshot into a Report: capacity per value of
//     the transfer domain and the findings documented in docs/findings.md.
//
// # Route inputs
//
// explain-route needs three more live inputs, read on demand rather than by
// Collect:
//
//   - FrontendOptions.Tokenize: the frontend's POST /tokenize (prompt or chat
//     messages), so that prompts hash exactly as the router hashes them.
//   - FrontendOptions.ReadPlacements: one snapshot of the frontend's NDJSON
//     stream GET /v1/kv-cache/placements/stream, the router's view of every
//     worker's cached blocks as RouterEvents per (model, endpoint). Reading
//     stops at placement_snapshot_end and the connection is closed; the live
//     tail is never read.
//   - QueryIndexer: a standalone KV indexer's POST /query (overlap scores).
//
// The frontend is reached through the API server's service proxy
// (KubeAPI.ServiceProxyPost and ServiceProxyStream) or a URL. POST /tokenize
// and POST /query are the only requests the package sends that are not GETs;
// both are pure computations, and a POST through the service proxy needs RBAC
// verb create on services/proxy (docs/rbac.md). Every read is bounded in size
// and time, and keeps 64-bit ids and hashes exact.
//
// # Capture files
//
// A capture is a Kubernetes List (YAML or JSON; a multi-document YAML stream
// or a single object is accepted too) whose items are Kubernetes objects as
// `kubectl get -o yaml` prints them, plus three kinds with apiVersion
// kubectl-dynamo.io/v1alpha1:
//
//	EtcdKeyValues   {metadata: {name}, entries: [{key, value}]}
//	FrontendMetrics {metadata: {name, namespace}, deployment, text,
//	                 source?, collectedAt?, busyThreshold?,
//	                 busyThresholdSource?, busyThresholdCollectedAt?}
//	KvEvents        {metadata: {name, namespace}, deployment, blockSize,
//	                 source?, events: [RouterEvent]}
//
// The List's metadata.annotations may carry kubectl-dynamo.io/collected-at,
// /context, /namespace, /sources and /notes. Integers keep full 64-bit
// precision on the way in and out. docs/capture-format.md has the details.
package inspect
