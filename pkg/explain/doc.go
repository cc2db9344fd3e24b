// Package explain turns an inspect snapshot and a request (prompt or token ids)
// into routecore inputs, runs the routing core's prefill and decode selection, and
// returns an Explanation model: candidates, cost terms, ties, probabilities, the
// derived transfer constraint and the verdict.
//
// It is filled in by the `kubectl dynamo explain-route` work (issue 4); every number
// it reports comes from pkg/routecore.
package explain
