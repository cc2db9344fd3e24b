// Package etcdfixture is the discovery-store content the etcd, collect and
// watch tests write into a real etcd, with helpers to write it and to count
// the gRPC calls a client made.
package etcdfixture
