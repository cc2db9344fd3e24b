// Package etcd is the Dynamo discovery-store source: Collect reads the key
// prefixes Dynamo registers workers and model cards under (v1/instances/,
// v1/mdc/, … and the legacy layouts) with a bounded page size, value size and
// total, and returns them as raw key-values. Credentials are sent only where
// the user named them (docs/rbac.md); errors never carry a password.
package etcd
