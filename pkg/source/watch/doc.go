// Package watch keeps a live read current for the dashboard and
// `topology --watch`: Start lists once (as pkg/source.Collect does), then
// watches every Kubernetes resource it listed and the discovery etcd, and
// hands the caller a fresh raw.Bundle after each debounced burst of changes
// (Watcher.Next). A watch that breaks is re-listed; one that cannot be
// restored is reported as a stale source (model.StaleSource) instead of
// silently showing old data.
package watch
