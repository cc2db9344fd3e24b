// Package analysis turns a model.Snapshot into a model.Report: capacity per
// value of the transfer domain, the topology findings documented in
// docs/findings.md (AnalyzeTopology), the routing-health findings of
// pkg/analysis/health, and the freshness notes of what was read. Analyze runs
// both finding sets into one report, so that topology, the dashboard and
// preflight report one set of finding ids with one ordering and one exit rule.
//
// It reads only the model: it may import the standard library, pkg/model,
// pkg/routecore, pkg/cmdline and its health sub-package; never a source or
// pkg/build. Everything in it is pure and deterministic.
package analysis
