// Package upstreamscale generates a large capture shaped like what users have:
// Dynamo's own vLLM disaggregated-router example
// (examples/backends/vllm/deploy/v1beta1/disagg_router.yaml, the shape of
// test/fixtures/upstream/vllm-disagg-router-v1beta1.yaml) under a required zone
// policy, scaled to thousands of workers, with every object as a real API
// server returns it: the pods carry what the operator and Grove set (labels,
// env, args, probes, ports, volumes, owner references) and what the API
// server and the kubelet add (uid, resourceVersion, default fields, the
// service-account volume, conditions with times, container statuses); each
// worker has its DynamoWorkerMetadata with a full model card; the nodes carry
// the labels, conditions, images and node info of GPU nodes.
//
// The output is deterministic (same options, same bytes) and is never
// committed: the benchmarks and hack/ scripts generate it (Capture, or
// `go run ./hack/gen-examples -upstream-scale -out DIR`). It is test-only data
// (internal/testutil), imported by tests, benchmarks and hack/ programs.
package upstreamscale
