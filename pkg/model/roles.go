package model

// Role signals of workers that no signal of their own classifies.
const (
	// SignalNone: not a worker type and nothing says what it is (RoleUnknown).
	SignalNone = "no signal"
	// SignalFallbackDecode: a worker component with no signal in a deployment that
	// has prefill workers is counted as decode (vLLM's decode workers carry no flag).
	SignalFallbackDecode = "deployment has prefill workers"
	// SignalFallbackAggregated: a worker component with no signal in a deployment
	// without prefill workers is counted as aggregated.
	SignalFallbackAggregated = "deployment has no prefill workers"
	// SignalOnlyWorkerComponent: the deployment's only worker component, with no
	// role flag, card, label or type of its own, is aggregated: the engines run
	// prefill and decode in one process unless told otherwise, and a
	// disaggregated deployment needs a prefill and a decode component. Upstream's
	// aggregated examples name that component after decode (vLLM's
	// VllmDecodeWorker, SGLang's decode), so the component name does not count
	// against it.
	SignalOnlyWorkerComponent = "only worker component, no role flag"
	// SignalComponentName: the weakest signal, a component name that says prefill
	// or decode.
	SignalComponentName = "component name"
)

// IsWorkerType reports whether a component type runs an engine worker
// (worker, prefill or decode).
func IsWorkerType(t string) bool { return t == "worker" || t == "prefill" || t == "decode" }
