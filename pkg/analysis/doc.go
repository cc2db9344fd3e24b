// Package analysis is the analysis layer above the model: Analyze runs the
// topology analysis (inspect.Analyze) and adds the routing-health findings
// (pkg/inspect/health) to the same report, so that topology, the dashboard and
// preflight report one set of finding ids with one ordering and one exit rule.
package analysis
