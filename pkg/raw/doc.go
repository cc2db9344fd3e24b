// Package raw holds what the sources read, before it is understood: the
// Bundle of Kubernetes objects, etcd key-values, frontend /metrics and
// /busy_threshold answers and KV events that a live read or a capture file
// fills, the frontend's KV placement snapshot, and the objects a placement
// prediction reads of a cluster. pkg/build is the only place where these wire
// shapes become the model.
//
// Kubernetes objects are small typed structs, one per kind (Pod, DWM, DGD,
// Node, Service, EndpointSlice, Event, ClusterTopology), holding only the
// fields something reads, named after their JSON paths; to read one more
// field, add it to its struct and to its reader in pkg/raw/decode (the
// equivalence tests there compare every field with the reference decoder).
// Parts with an open schema that Build reads through JSON (a DGD's spec and
// status, a Service's spec) stay JSON values. Whole objects (Object) are kept
// only where they are written or checked whole: capture files and preflight.
//
// It may import the standard library, pkg/model and pkg/routecore (for the
// RouterEvent the KV sources carry), and no k8s.io package
// (hack/verify-layout.sh).
package raw
