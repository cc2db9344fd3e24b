// Package capture reads and writes capture files: a Kubernetes List (YAML or
// JSON; a multi-document YAML stream or a single object is accepted too) whose
// items are Kubernetes objects as `kubectl get -o yaml` prints them, plus
// three kinds with apiVersion kubectl-dynamo.io/v1alpha1:
//
//	EtcdKeyValues   {metadata: {name}, entries: [{key, value}]}
//	FrontendMetrics {metadata: {name, namespace}, deployment, text,
//	                 source?, collectedAt?, busyThreshold?,
//	                 busyThresholdSource?, busyThresholdCollectedAt?}
//	KvEvents        {metadata: {name, namespace}, deployment, blockSize,
//	                 source?, events: [RouterEvent]}
//
// The List's metadata.annotations may carry kubectl-dynamo.io/collected-at,
// /context, /namespace, /sources and /notes. Read and Parse return a
// raw.Bundle, so that every command works offline exactly as live; Write is
// the inverse. Integers keep full 64-bit precision on the way in and out; a
// JSON capture is decoded by a fast path (pkg/jsonscan) proved equal to the
// straightforward decoder. docs/capture-format.md has the details.
package capture
