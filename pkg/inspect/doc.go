// Package inspect reads a Dynamo deployment — from the Kubernetes API, etcd, the
// frontend's HTTP endpoints or an offline capture file — into one plain data model
// (deployments, workers, runtime configs, topology domains, loads and findings)
// that the CLI printers and the dashboard both render.
//
// It is filled in by the `kubectl dynamo topology` work (issue 3); the repository
// layout reserves it now so that commands and the TUI depend on this package, never
// on client-go types, from the start.
package inspect
