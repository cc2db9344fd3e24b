// Package dynosim connects `kubectl dynamo simulate` with DynoSim, Dynamo's
// own offline simulator (`aisimulate predict --stack dynamo`, formerly
// `python -m dynamo.replay`). It does not simulate anything itself:
//
//   - Export writes a Scenario (a live deployment's backend, model, worker
//     pools with replicas and parallelism, router mode and KV router knobs,
//     trace and load settings) as a DynoSim prediction input, the YAML
//     documented in ai-dynamo/aisimulate docs/cli/user-guide.md and Dynamo's
//     DynoSim Replay CLI Reference. Whatever the schema cannot carry is listed
//     in the file's comment header.
//   - ScenarioFromDeployment fills a Scenario from an model.Deployment.
//   - ParseTimingProfile reads the timing numbers our engine model uses from
//     the text profile formats upstream documents: Dynamo's planner profiling
//     raw data (prefill_raw_data.json, decode_raw_data.json, or the ConfigMap
//     holding both) and DynoSim specs with fixed timing. Binary .npz profiles
//     are refused with an error saying so.
//
// # What each simulator models
//
// The two simulators answer different questions; the export lets one
// deployment be run through both.
//
// kubectl-dynamo's simulator models, and DynoSim does not:
//
//   - the live topology: every worker's transfer-domain value (zone, rack, …)
//     as published, labelled or inherited from its node, and the DGD's
//     kvTransferPolicy with required or preferred enforcement (a required
//     policy refusing a cross-domain transfer, a preferred one weighting it);
//   - a separate KV transfer time per block within a domain and across
//     domains;
//   - an exact port of Dynamo's router selection: the KV cost function with
//     every KvRouterConfig knob (credit decay, request weight, host and disk
//     tier weights, shared cache, queueing, conditional disaggregation, SITA),
//     seeded tie-breaking and softmax sampling, the overload latch and busy
//     thresholds, and the non-KV modes (random, power-of-two, least-loaded,
//     direct, device-aware-weighted) besides round-robin;
//   - the deployment as captured: replica counts, pending pods and per-worker
//     published runtime configuration.
//
// DynoSim models, and kubectl-dynamo's simulator does not:
//
//   - each engine's scheduler: vLLM's waiting and running queues under a
//     shared token budget with chunked prefill and recompute preemption,
//     SGLang's cache-aware queues with radix-prefix reuse and decode
//     retraction, TensorRT-LLM's capacity-first admission;
//   - a real KV manager per data-parallel rank: a block pool (or SGLang token
//     pool) with prefix reuse, LRU eviction, memory pressure and the KV events
//     the router indexes;
//   - forward-pass timing from AIConfigurator's model for the exact model,
//     hardware, backend version and parallel shape (or profile-derived
//     interpolation, a polynomial baseline or fixed times), where our model is
//     linear: prefill tokens per second per GPU and a decode step of base plus
//     per-sequence slope;
//   - prefill-to-decode transfer as bytes per token over a link bandwidth,
//     charged for the whole prompt or only what the destination misses;
//     speculative decoding, host/G3 offload and Planner-in-the-loop scaling.
//
// Neither measures real GPUs; DynoSim's router adapter exposes only
// round_robin and kv_router with overlap_score_credit, prefill_load_scale,
// temperature and the prefill load model, and it has no topology domains.
package dynosim
