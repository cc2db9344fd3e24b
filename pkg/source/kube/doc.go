// Package kube is the Kubernetes source: API (and its REST implementation)
// lists the objects Dynamo deployments are made of — DynamoGraphDeployments
// (v1beta1 and v1alpha1), DynamoWorkerMetadatas, Pods, Nodes, Services,
// EndpointSlices, Events and Grove topology objects — page by page, GETs and
// LISTs only, and reaches a frontend through the API server's service proxy.
// Collect reads a namespace (or all) into raw objects, degrading with a note
// where RBAC or the server refuses; ReadCluster reads what preflight's
// placement prediction needs.
//
// The request guard (guard.go) is part of the source: every request leaves
// through a transport that refuses anything but GET, LIST, WATCH and the two
// documented POSTs, never follows a redirect, and never sends credentials to a
// host the user did not name. SafeHTTPClient is the same guard for direct
// URLs.
package kube
