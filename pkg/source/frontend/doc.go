// Package frontend is the source for a deployment's Dynamo frontend, reached
// through the API server's service proxy or a URL the user gives: Collect
// scrapes /metrics and GET /busy_threshold; Tokenize (POST /tokenize),
// ReadPlacements (one snapshot of GET /v1/kv-cache/placements/stream, the
// router's view of every worker's cached blocks) and QueryIndexer (a
// standalone KV indexer's POST /query) are the route inputs explain-route
// reads on demand. Every answer is bounded in size and time, decoded with
// 64-bit ids exact, and an error names what to do next.
package frontend
