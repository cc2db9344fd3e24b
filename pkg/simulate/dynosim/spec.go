package dynosim

// Spec mirrors the documented DynoSim prediction input: the YAML that
// `aisimulate predict --stack dynamo --config FILE` reads (AISimulate owns the
// traffic and engine sections, Dynamo's adapters the router and planner
// sections). Field names and nesting follow ai-dynamo/aisimulate
// docs/cli/user-guide.md sections 9-14 and Dynamo's "DynoSim Replay CLI
// Reference"; upstream rejects unknown fields, so nothing here is invented.
// Optional values are pointers (or omitempty strings) so that an omitted knob
// keeps upstream's default instead of being pinned to Go's zero value.
type Spec struct {
	Traffic    *Traffic    `json:"traffic,omitempty"`
	Engine     Engine      `json:"engine"`
	Router     *Router     `json:"router,omitempty"`
	Planner    *Planner    `json:"planner,omitempty"`
	Evaluation *Evaluation `json:"evaluation,omitempty"`
}

// Traffic is the traffic section: request source, load shape, stop condition.
type Traffic struct {
	Source *TrafficSource `json:"source,omitempty"`
	Load   *TrafficLoad   `json:"load,omitempty"`
	Stop   *TrafficStop   `json:"stop,omitempty"`
}

// TrafficSource is traffic.source (synthetic, synthetic-session or trace).
type TrafficSource struct {
	Type                  string   `json:"type"`
	InputTokens           *int64   `json:"input_tokens,omitempty"`
	OutputTokens          *int64   `json:"output_tokens,omitempty"`
	NewInputTokensPerTurn *int64   `json:"new_input_tokens_per_turn,omitempty"`
	OutputTokensPerTurn   *int64   `json:"output_tokens_per_turn,omitempty"`
	Session               *Session `json:"session,omitempty"`
	Paths                 []string `json:"paths,omitempty"`
	Format                string   `json:"format,omitempty"`
	BlockSize             *int64   `json:"block_size,omitempty"`
	NestedTimestampBasis  string   `json:"nested_timestamp_basis,omitempty"`
}

// Session is traffic.source.session (synthetic-session only).
type Session struct {
	Turns             *int64   `json:"turns,omitempty"`
	SharedPrefixRatio *float64 `json:"shared_prefix_ratio,omitempty"`
	PrefixGroups      *int64   `json:"prefix_groups,omitempty"`
	InterTurnDelayMs  *float64 `json:"inter_turn_delay_ms,omitempty"`
}

// TrafficLoad is traffic.load.
type TrafficLoad struct {
	Type              string   `json:"type"`
	Concurrency       *int64   `json:"concurrency,omitempty"`
	RequestsPerSecond *float64 `json:"requests_per_second,omitempty"`
	SessionsPerSecond *float64 `json:"sessions_per_second,omitempty"`
	Seed              *uint64  `json:"seed,omitempty"`
	Fraction          *float64 `json:"fraction,omitempty"`
	Speedup           *float64 `json:"speedup,omitempty"`
	AgenticLanes      *int64   `json:"agentic_lanes,omitempty"`
}

// TrafficStop is traffic.stop.
type TrafficStop struct {
	Requests              *int64   `json:"requests,omitempty"`
	RequestsPerLoadUnit   *float64 `json:"requests_per_load_unit,omitempty"`
	Sessions              *int64   `json:"sessions,omitempty"`
	SessionsPerLoadUnit   *float64 `json:"sessions_per_load_unit,omitempty"`
	MaxVirtualTimeSeconds *float64 `json:"max_virtual_time_seconds,omitempty"`
}

// Engine is the engine section.
type Engine struct {
	Mode           string `json:"mode"`
	Model          string `json:"model"`
	Hardware       string `json:"hardware"`
	Backend        string `json:"backend,omitempty"`
	BackendVersion string `json:"backend_version,omitempty"`
	// ContextLength is "max" or a positive integer.
	ContextLength any         `json:"context_length,omitempty"`
	KvTransfer    *KvTransfer `json:"kv_transfer,omitempty"`
	Workers       Workers     `json:"workers"`
}

// KvTransfer is engine.kv_transfer (disaggregated mode only).
type KvTransfer struct {
	// BytesPerToken is "auto" or a positive number.
	BytesPerToken        any      `json:"bytes_per_token,omitempty"`
	BandwidthGBPerSecond *float64 `json:"bandwidth_gb_per_second,omitempty"`
	TimingMode           string   `json:"timing_mode,omitempty"`
}

// Workers holds the worker roles engine.mode selects.
type Workers struct {
	Aggregated *Worker `json:"aggregated,omitempty"`
	Prefill    *Worker `json:"prefill,omitempty"`
	Decode     *Worker `json:"decode,omitempty"`
}

// Worker is engine.workers.<role>.
type Worker struct {
	// Hardware overrides engine.hardware (disaggregated roles only).
	Hardware       string      `json:"hardware,omitempty"`
	Parallelism    Parallelism `json:"parallelism"`
	Scheduler      *Scheduler  `json:"scheduler,omitempty"`
	KvCache        *KvCache    `json:"kv_cache,omitempty"`
	Timing         *Timing     `json:"timing,omitempty"`
	StartupSeconds *float64    `json:"startup_seconds,omitempty"`
}

// Parallelism is engine.workers.<role>.parallelism; the Dynamo stack wants all
// six fields concrete. A role's GPUs are replicas × tensor × pipeline ×
// attention_data (moe_tensor and moe_expert partition within that shape).
type Parallelism struct {
	Replicas      int64 `json:"replicas"`
	Tensor        int64 `json:"tensor"`
	Pipeline      int64 `json:"pipeline"`
	AttentionData int64 `json:"attention_data"`
	MoeTensor     int64 `json:"moe_tensor"`
	MoeExpert     int64 `json:"moe_expert"`
}

// Scheduler is engine.workers.<role>.scheduler.
type Scheduler struct {
	MaxBatchedTokens        *int64 `json:"max_batched_tokens,omitempty"`
	MaxSequences            *int64 `json:"max_sequences,omitempty"`
	PrefillScheduleInterval *int64 `json:"prefill_schedule_interval,omitempty"`
}

// KvCache is engine.workers.<role>.kv_cache.
type KvCache struct {
	BlockSize     *int64 `json:"block_size,omitempty"`
	PrefixCaching *bool  `json:"prefix_caching,omitempty"`
	// BytesPerToken is "auto" or a positive number.
	BytesPerToken any       `json:"bytes_per_token,omitempty"`
	Capacity      *Capacity `json:"capacity,omitempty"`
}

// Capacity is kv_cache.capacity: type default (memory_fraction) or fixed
// (blocks or bytes).
type Capacity struct {
	Type                   string   `json:"type"`
	MemoryFraction         *float64 `json:"memory_fraction,omitempty"`
	Blocks                 *uint64  `json:"blocks,omitempty"`
	Bytes                  *uint64  `json:"bytes,omitempty"`
	CudaGraphReservedBytes *uint64  `json:"cuda_graph_reserved_bytes,omitempty"`
}

// Timing is engine.workers.<role>.timing: default (AIConfigurator), fixed
// (prefill_ms and decode_ms) or polynomial.
type Timing struct {
	Type         string   `json:"type"`
	PrefillMs    *float64 `json:"prefill_ms,omitempty"`
	DecodeMs     *float64 `json:"decode_ms,omitempty"`
	ForwardModel string   `json:"forward_model,omitempty"`
}

// Router is the Dynamo router adapter's section (version 1 contract).
type Router struct {
	Policy             string            `json:"policy"`
	PrefillLoadModel   *PrefillLoadModel `json:"prefill_load_model,omitempty"`
	OverlapScoreCredit *float64          `json:"overlap_score_credit,omitempty"`
	PrefillLoadScale   *float64          `json:"prefill_load_scale,omitempty"`
	Temperature        *float64          `json:"temperature,omitempty"`
}

// PrefillLoadModel is router.prefill_load_model.
type PrefillLoadModel struct {
	Type string `json:"type"`
}

// Planner is the Dynamo planner adapter's section. The export always writes
// policy: disabled; the other fields exist so upstream examples decode.
type Planner struct {
	Policy                              string   `json:"policy"`
	Target                              string   `json:"target,omitempty"`
	EnableThroughputScaling             *bool    `json:"enable_throughput_scaling,omitempty"`
	EnableLoadScaling                   *bool    `json:"enable_load_scaling,omitempty"`
	ThroughputAdjustmentIntervalSeconds *float64 `json:"throughput_adjustment_interval_seconds,omitempty"`
	LoadAdjustmentIntervalSeconds       *float64 `json:"load_adjustment_interval_seconds,omitempty"`
	LoadScalingDownSensitivity          *float64 `json:"load_scaling_down_sensitivity,omitempty"`
	LoadMinObservations                 *int64   `json:"load_min_observations,omitempty"`
	MaxNumGpus                          *int64   `json:"max_num_gpus,omitempty"`
	MinWorkers                          *int64   `json:"min_workers,omitempty"`
}

// Evaluation is the evaluation section (SLA thresholds for reporting).
type Evaluation struct {
	SLA *SLA `json:"sla,omitempty"`
}

// SLA is evaluation.sla: e2e_ms alone, or ttft_ms and itl_ms together.
type SLA struct {
	TtftMs *float64 `json:"ttft_ms,omitempty"`
	ItlMs  *float64 `json:"itl_ms,omitempty"`
	E2eMs  *float64 `json:"e2e_ms,omitempty"`
}
