// Package raw holds what the sources read, before it is understood: the
// Bundle of Kubernetes objects, etcd key-values, frontend /metrics and
// /busy_threshold answers and KV events that a live read or a capture file
// fills, the frontend's KV placement snapshot, and the objects a placement
// prediction reads of a cluster. pkg/build is the only place where these wire
// shapes become the model.
//
// It may import the standard library, pkg/model and pkg/routecore (for the
// RouterEvent the KV sources carry).
package raw
