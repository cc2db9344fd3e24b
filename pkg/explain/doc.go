// Package explain is the dry run behind `kubectl dynamo explain-route` and the
// dashboard's route explorer: it turns a model snapshot of one deployment
// and a request (token ids, LoRA, cache namespace, routing constraints) into
// the routing core's inputs, runs pkg/routecore's disaggregated flow (prefill
// selection, KV-transfer derivation, decode selection, conditional
// disaggregation) and returns an Explanation: plain data holding every
// candidate with its cost terms, eligibility reason and probability, the tie
// sets, the derived transfer constraint, the verdict with its cause and fix,
// the outcome of every possible prefill landing, and the sources and
// assumptions behind the numbers.
//
// Every number comes from pkg/routecore; this package only maps the
// deployment onto routing inputs (instances → candidates, metrics → loads,
// KV events → the radix index, worker-set router_config → the per-leg
// configs) and what-ifs (excluded workers, domains down, pinned prefill,
// knob and enforcement overrides) onto them. It performs no I/O: callers
// read the cluster, a capture, the frontend or an indexer (pkg/source) and
// pass the results in.
package explain
