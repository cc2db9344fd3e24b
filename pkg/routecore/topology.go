package routecore

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
)

// This file ports the topology-aware KV-transfer rules of Dynamo:
//
//   - runtime-config validation (lib/llm/src/local_model/runtime_config.rs,
//     validate_model_runtime_config and its field validators);
//   - the derivation of decode constraints from the selected prefill worker
//     (lib/llm/src/discovery/model_manager.rs,
//     ModelManager::get_kv_transfer_routing_constraints);
//   - the three ways Dynamo merges derived constraints into a request
//     (prefill_router merge_decode_topology_constraints, the Plan router's
//     placement.rs derived_restrictions, and the engine-handoff
//     merge_routing_constraints).
//
// Dynamo stores preferred-taint weights and kv_transfer_preferred_weight as f32.
// Every weight this file produces is therefore an f32 value widened to float64
// (float64(float32(w))), and weight sums are computed in f32, so that the numbers
// match the Rust router bit for bit.

// MaxDataParallelRanksPerWorker mirrors MAX_DATA_PARALLEL_RANKS_PER_WORKER in
// runtime_config.rs: the largest data_parallel_size a worker may advertise.
const MaxDataParallelRanksPerWorker = 4096

// ErrInvalidTopology is the sentinel every ValidateTopology violation matches
// with errors.Is.
var ErrInvalidTopology = errors.New("invalid worker topology config")

// TopologyValidationError is one runtime-config violation found by
// ValidateTopology. Code is the validator code Dynamo uses for the same rule
// (for example "missing_kv_transfer_domain"), Field names the offending JSON
// field, and Message says what is wrong and how to fix it.
type TopologyValidationError struct {
	Code    string
	Field   string
	Message string
}

// Error returns the message prefixed with the field name.
func (e *TopologyValidationError) Error() string { return e.Field + ": " + e.Message }

// Is makes every TopologyValidationError match ErrInvalidTopology.
func (e *TopologyValidationError) Is(target error) bool { return target == ErrInvalidTopology }

func topoErr(code, field, format string, args ...any) *TopologyValidationError {
	return &TopologyValidationError{Code: code, Field: field, Message: fmt.Sprintf(format, args...)}
}

// validateTaintComponent mirrors validate_taint_component: non-empty after
// trimming, no surrounding whitespace, no '='.
func topoValidateTaintComponent(component, code, field, what string) *TopologyValidationError {
	trimmed := strings.TrimSpace(component)
	switch {
	case trimmed == "":
		return topoErr(code, field, "%s must be non-empty", what)
	case trimmed != component:
		return topoErr(code, field, "%s %q must not contain leading or trailing whitespace; publish %q instead", what, component, trimmed)
	case strings.Contains(component, "="):
		return topoErr(code, field, "%s %q must not contain '=' because it is embedded in the taint %s<domain>=<value>", what, component, TopologyTaintPrefix)
	}
	return nil
}

// ValidateTopology checks the topology and KV-transfer fields of a worker's
// runtime config the way Dynamo's ModelRuntimeConfig validator does
// (validate_topology_domains, validate_kv_transfer_domain, the range check on
// kv_transfer_preferred_weight, then validate_model_runtime_config). It also
// rejects a kv_transfer_enforcement other than "required" or "preferred", which
// Dynamo's serde rejects at parse time (code "unknown_variant").
//
// As in Rust, the per-field checks run first and their violations are reported
// together (joined with errors.Join): the first bad topology_domains entry (in
// sorted key order), the kv_transfer_domain, the enforcement value and the
// weight range; the cross-field checks run only when every field is valid and stop
// at the first violation, in Rust's order: data-parallel rank range,
// kv_transfer_domain must be a key of topology_domains, enforcement requires a
// domain, preferred requires a weight, a weight requires preferred. Every
// violation is a *TopologyValidationError and matches ErrInvalidTopology.
//
// A transfer domain with no enforcement passes validation, exactly as in Dynamo,
// even though DeriveTransferConstraints later fails every request routed through
// such a worker; callers that want to flag that should use
// DeriveTransferConstraints or check KvTransferEnforcement themselves.
//
// A published data_parallel_size 0 (DataParallelSizeSet) fails with Dynamo's
// "data_parallel_size must be at least 1" (validate_model_runtime_config, code
// invalid_data_parallel_size); an omitted one is 1. The rank-range overflow and
// the MaxDataParallelRanksPerWorker bound are reported too.
func ValidateTopology(rc RuntimeConfig) error {
	var fieldErrs []error
	// validate_topology_domains stops at the first bad entry (key before value);
	// Rust walks HashMap order, this port walks sorted keys.
	for _, domain := range slices.Sorted(maps.Keys(rc.TopologyDomains)) {
		e := topoValidateTaintComponent(domain, "invalid_topology_domain", "topology_domains", "topology_domains key")
		if e == nil {
			e = topoValidateTaintComponent(rc.TopologyDomains[domain], "invalid_topology_value", "topology_domains",
				fmt.Sprintf("topology_domains value for %q", domain))
		}
		if e != nil {
			fieldErrs = append(fieldErrs, e)
			break
		}
	}
	if rc.KvTransferDomain != "" {
		if e := topoValidateTaintComponent(rc.KvTransferDomain, "invalid_kv_transfer_domain", "kv_transfer_domain", "kv_transfer_domain"); e != nil {
			fieldErrs = append(fieldErrs, e)
		}
	}
	switch rc.KvTransferEnforcement {
	case EnforcementNone, EnforcementRequired, EnforcementPreferred:
	default:
		// Dynamo rejects any other value (including the never-implemented
		// "fallback") when deserializing; RuntimeConfig's JSON decoding does not.
		fieldErrs = append(fieldErrs, topoErr("unknown_variant", "kv_transfer_enforcement",
			"kv_transfer_enforcement %q is invalid: use \"required\" or \"preferred\"", string(rc.KvTransferEnforcement)))
	}
	if w := rc.KvTransferPreferredWeight; w != nil {
		// validator's range(min = 0.0, max = 1.0) runs on the f32 value.
		if f := float32(*w); !(f >= 0 && f <= 1) {
			fieldErrs = append(fieldErrs, topoErr("range", "kv_transfer_preferred_weight",
				"kv_transfer_preferred_weight %v is out of range: it must be between 0 and 1 (set DYN_KV_TRANSFER_PREFERRED_WEIGHT or the DGD kvTransferPolicy.preferredWeight to a value in [0,1])", *w))
		}
	}
	if len(fieldErrs) > 0 {
		return errors.Join(fieldErrs...)
	}

	if rc.DataParallelSizeSet && rc.DataParallelSize == 0 {
		return topoErr("invalid_data_parallel_size", "data_parallel_size", "data_parallel_size must be at least 1")
	}
	if size := rc.DataParallelSize; size > MaxDataParallelRanksPerWorker {
		return topoErr("invalid_data_parallel_rank_range", "data_parallel_size",
			"data_parallel_size %d exceeds the supported maximum %d", size, MaxDataParallelRanksPerWorker)
	}
	if start := rc.DataParallelStartRank; uint64(start)+uint64(rc.DpSize()) > math.MaxUint32 {
		return topoErr("invalid_data_parallel_rank_range", "data_parallel_start_rank",
			"data-parallel rank range [%d, %d+%d) overflows u32", start, start, rc.DpSize())
	}
	if rc.KvTransferDomain != "" {
		if _, ok := rc.TopologyDomains[rc.KvTransferDomain]; !ok {
			return topoErr("missing_kv_transfer_domain", "kv_transfer_domain",
				"kv_transfer_domain %q must reference a key in topology_domains (published domains: %s); check that /etc/dynamo/topology/%s is projected and non-empty",
				rc.KvTransferDomain, topoDescribeDomains(rc.TopologyDomains), rc.KvTransferDomain)
		}
	}
	if rc.KvTransferEnforcement != EnforcementNone && rc.KvTransferDomain == "" {
		return topoErr("missing_kv_transfer_domain", "kv_transfer_enforcement",
			"kv_transfer_enforcement %q requires kv_transfer_domain; set DYN_KV_TRANSFER_DOMAIN or drop the enforcement", rc.KvTransferEnforcement)
	}
	if rc.KvTransferEnforcement == EnforcementPreferred && rc.KvTransferPreferredWeight == nil {
		return topoErr("missing_kv_transfer_preferred_weight", "kv_transfer_preferred_weight",
			"kv_transfer_preferred_weight is required when kv_transfer_enforcement is preferred; set DYN_KV_TRANSFER_PREFERRED_WEIGHT (0..1)")
	}
	if rc.KvTransferPreferredWeight != nil && rc.KvTransferEnforcement != EnforcementPreferred {
		return topoErr("invalid_kv_transfer_preferred_weight", "kv_transfer_preferred_weight",
			"kv_transfer_preferred_weight can only be set when kv_transfer_enforcement is preferred; remove the weight or switch enforcement to preferred")
	}
	return nil
}

func topoDescribeDomains(d map[string]string) string {
	if len(d) == 0 {
		return "none"
	}
	keys := slices.Sorted(maps.Keys(d))
	return strings.Join(keys, ", ")
}

// F32 rounds a weight to the nearest float32, the precision Dynamo stores
// preferred-taint weights and kv_transfer_preferred_weight in, and widens it
// back to float64 exactly.
func F32(w float64) float64 { return float64(float32(w)) }

// addF32 adds two weights in f32 arithmetic, as `*entry += weight` does on an
// f32 map value in Rust.
func topoAddF32(a, b float64) float64 { return float64(float32(a) + float32(b)) }

// TransferRule names the branch of get_kv_transfer_routing_constraints (or of
// the placement.rs transfer rule) that decided a TransferDerivation. The values
// are stable strings suitable for machine-readable output.
type TransferRule string

const (
	// TransferRuleNoRuntimeConfigs means the prefill endpoint has no runtime configs at all,
	// so nothing is derived and decode is unconstrained.
	TransferRuleNoRuntimeConfigs TransferRule = "no-runtime-configs"
	// TransferRuleSelectedMissing means the selected prefill worker has no runtime config and no
	// worker on the endpoint advertises required enforcement; decode is unconstrained.
	TransferRuleSelectedMissing TransferRule = "selected-missing-unconstrained"
	// TransferRuleSelectedMissingRequired means the selected prefill worker has no runtime
	// config while some worker advertises required enforcement; the request fails
	// closed.
	TransferRuleSelectedMissingRequired TransferRule = "selected-missing-required"
	// TransferRuleNoTransferDomain means the selected prefill worker publishes no
	// kv_transfer_domain; decode is unconstrained even if other workers use
	// required enforcement.
	TransferRuleNoTransferDomain TransferRule = "no-transfer-domain"
	// TransferRuleDomainNotInTopology means the worker's kv_transfer_domain is not a key of its
	// topology_domains; the request fails.
	TransferRuleDomainNotInTopology TransferRule = "domain-not-in-topology"
	// TransferRuleRequired means decode must carry dynamo.topology/<domain>=<value>.
	TransferRuleRequired TransferRule = "required"
	// TransferRulePreferred means decode workers carrying the taint get the preferred weight.
	TransferRulePreferred TransferRule = "preferred"
	// TransferRulePreferredWeightMissing means preferred enforcement without a weight; the
	// request fails.
	TransferRulePreferredWeightMissing TransferRule = "preferred-weight-missing"
	// TransferRuleEnforcementMissing means a transfer domain with no enforcement; the request
	// fails.
	TransferRuleEnforcementMissing TransferRule = "enforcement-missing"
)

// Sentinel errors for the failing branches of DeriveTransferConstraints and
// TransferConstraintFor. The returned errors are *TransferError values that
// match exactly one of these with errors.Is.
var (
	// ErrSelectedPrefillMissing: the selected worker has no runtime config while
	// some worker advertises required enforcement (fail closed).
	ErrSelectedPrefillMissing = errors.New("selected prefill worker missing from runtime configs")
	// ErrTransferDomainNotInTopology: kv_transfer_domain has no value in topology_domains.
	ErrTransferDomainNotInTopology = errors.New("kv_transfer_domain not in topology_domains")
	// ErrPreferredWeightMissing: preferred enforcement without kv_transfer_preferred_weight.
	ErrPreferredWeightMissing = errors.New("kv_transfer_preferred_weight missing")
	// ErrEnforcementMissing: kv_transfer_domain without kv_transfer_enforcement.
	ErrEnforcementMissing = errors.New("kv_transfer_enforcement missing")
)

// TransferError is the error DeriveTransferConstraints returns when Dynamo would
// fail the request before dispatching prefill. It unwraps to one of the
// Err* sentinels above.
type TransferError struct {
	// Rule is the failing rule; Worker the prefill worker; Domain its
	// kv_transfer_domain when known.
	Rule   TransferRule
	Worker WorkerID
	Domain string
	// Remedy says what to change; it is not part of Error.
	Remedy string
	msg    string
	kind   error
}

// Error returns Dynamo's message word for word (ModelManager::
// get_kv_transfer_routing_constraints in lib/llm/src/discovery/model_manager.rs),
// without the " for endpoint …" the missing-worker message names there: the
// dry run does not know the endpoint id. Remedy holds the fix.
func (e *TransferError) Error() string { return e.msg }

// Unwrap returns the sentinel for the failing rule.
func (e *TransferError) Unwrap() error { return e.kind }

// TransferDerivation is the evidence for the decode constraints derived from
// one prefill worker: which rule fired, the worker's transfer settings, and the
// resulting constraints (empty when decode is unconstrained).
type TransferDerivation struct {
	// PrefillWorker is the prefill worker the derivation was made for.
	PrefillWorker WorkerID `json:"prefillWorker"`
	// Rule is the stable code of the branch that decided the outcome.
	Rule TransferRule `json:"rule"`
	// Explanation describes the outcome in one sentence.
	Explanation string `json:"explanation"`
	// Domain, Value and Enforcement are the worker's kv_transfer_domain, its value
	// in topology_domains and its kv_transfer_enforcement, when known.
	Domain string `json:"domain,omitempty"`
	// Value is the worker's topology_domains[Domain].
	Value string `json:"value,omitempty"`
	// Enforcement is the worker's kv_transfer_enforcement ("" when absent).
	Enforcement KvTransferEnforcement `json:"enforcement,omitempty"`
	// Weight is the preferred weight as the router holds it (an f32 value).
	Weight *float64 `json:"weight,omitempty"`
	// Taint is dynamo.topology/<domain>=<value> when a value was found.
	Taint string `json:"taint,omitempty"`
	// RequiredPolicyWorkers lists, in ascending order, the prefill workers that
	// advertise required enforcement; it is filled when the selected worker is
	// missing, because that list decides whether the request fails.
	RequiredPolicyWorkers []WorkerID `json:"requiredPolicyWorkers,omitempty"`
	// Constraints are the derived decode constraints.
	Constraints RoutingConstraints `json:"constraints"`
	// Failed reports that the rule fails the request.
	Failed bool `json:"failed,omitempty"`
}

// Constrained reports whether the derivation restricts or biases decode.
func (d TransferDerivation) Constrained() bool { return !d.Constraints.IsEmpty() }

// RequiredTransferPolicyWorkers mirrors has_required_kv_transfer_policy, but
// returns the matching workers (sorted) instead of a bool: every worker whose
// runtime config advertises required kv_transfer_enforcement. Preferred
// enforcement does not count.
func RequiredTransferPolicyWorkers(configs map[WorkerID]RuntimeConfig) []WorkerID {
	var out []WorkerID
	for _, id := range slices.Sorted(maps.Keys(configs)) {
		if configs[id].KvTransferEnforcement == EnforcementRequired {
			out = append(out, id)
		}
	}
	return out
}

// HasRequiredTransferPolicy mirrors ModelManager::has_kv_transfer_required_routing_policy:
// whether any prefill worker advertises required enforcement.
func HasRequiredTransferPolicy(configs map[WorkerID]RuntimeConfig) bool {
	for _, rc := range configs {
		if rc.KvTransferEnforcement == EnforcementRequired {
			return true
		}
	}
	return false
}

// DeriveTransferConstraints mirrors ModelManager::get_kv_transfer_routing_constraints:
// given the runtime configs of every worker on the prefill endpoint and the
// prefill worker the router selected, it returns the constraints the decode
// request must carry. The checks run in Rust's order:
//
//  1. no runtime configs → no constraints;
//  2. selected worker missing → an error if any worker advertises required
//     enforcement (fail closed), otherwise no constraints;
//  3. no kv_transfer_domain on the selected worker → no constraints;
//  4. domain absent from its topology_domains → error;
//  5. required → required taint; preferred → preferred taint with the worker's
//     weight (missing weight → error); no enforcement → error.
//
// The derivation is returned on success and on failure; on failure the error is
// a *TransferError and the derivation's Failed field is set.
func DeriveTransferConstraints(configs map[WorkerID]RuntimeConfig, selected WorkerID) (TransferDerivation, error) {
	if len(configs) == 0 {
		return TransferDerivation{
			PrefillWorker: selected,
			Rule:          TransferRuleNoRuntimeConfigs,
			Explanation:   "the prefill endpoint has no runtime configs, so decode is unconstrained",
		}, nil
	}
	rc, ok := configs[selected]
	if !ok {
		required := RequiredTransferPolicyWorkers(configs)
		d := TransferDerivation{PrefillWorker: selected, RequiredPolicyWorkers: required}
		if len(required) > 0 {
			d.Rule, d.Failed = TransferRuleSelectedMissingRequired, true
			d.Explanation = fmt.Sprintf("prefill worker %s has no runtime config while workers %s use required enforcement; the router fails the request closed", selected, topoJoinIDs(required))
			return d, &TransferError{
				Rule: d.Rule, Worker: selected, kind: ErrSelectedPrefillMissing,
				msg:    fmt.Sprintf("selected prefill worker %s missing from runtime configs; cannot derive KV transfer topology constraints for required policy", selected),
				Remedy: fmt.Sprintf("workers %s advertise required enforcement: wait for the worker to publish its runtime config or remove it from the prefill pool", topoJoinIDs(required)),
			}
		}
		d.Rule = TransferRuleSelectedMissing
		d.Explanation = fmt.Sprintf("prefill worker %s has no runtime config and no prefill worker uses required enforcement, so decode is unconstrained", selected)
		return d, nil
	}
	return TransferConstraintFor(selected, rc)
}

// TransferConstraintFor derives the decode constraints from one worker's own
// runtime config: steps 3 to 5 of DeriveTransferConstraints, which are also the
// TransferCompatible rule of Dynamo's Plan router (placement.rs
// transfer_constraint).
func TransferConstraintFor(worker WorkerID, rc RuntimeConfig) (TransferDerivation, error) {
	d := TransferDerivation{PrefillWorker: worker, Domain: rc.KvTransferDomain, Enforcement: rc.KvTransferEnforcement}
	if rc.KvTransferDomain == "" {
		d.Rule = TransferRuleNoTransferDomain
		d.Explanation = fmt.Sprintf("worker %s publishes no kv_transfer_domain, so decode is unconstrained", worker)
		return d, nil
	}
	value, ok := rc.TopologyDomains[rc.KvTransferDomain]
	if !ok {
		d.Rule, d.Failed = TransferRuleDomainNotInTopology, true
		d.Explanation = fmt.Sprintf("worker %s names kv_transfer_domain %q but publishes no value for it; the router fails the request", worker, rc.KvTransferDomain)
		return d, &TransferError{
			Rule: d.Rule, Worker: worker, Domain: rc.KvTransferDomain, kind: ErrTransferDomainNotInTopology,
			msg: fmt.Sprintf("selected prefill worker %s configured kv_transfer_domain=%q, but topology_domains does not contain that domain", worker, rc.KvTransferDomain),
			Remedy: fmt.Sprintf("published topology domains: %s; make sure /etc/dynamo/topology/%s is projected and non-empty on that pod",
				topoDescribeDomains(rc.TopologyDomains), rc.KvTransferDomain),
		}
	}
	d.Value = value
	d.Taint = TopologyTaint(rc.KvTransferDomain, value)
	switch rc.KvTransferEnforcement {
	case EnforcementRequired:
		d.Rule = TransferRuleRequired
		d.Constraints = RoutingConstraints{RequiredTaints: []string{d.Taint}}
		d.Explanation = fmt.Sprintf("worker %s requires decode in %s=%s: only decode workers tainted %s are eligible", worker, d.Domain, value, d.Taint)
		return d, nil
	case EnforcementPreferred:
		if rc.KvTransferPreferredWeight == nil {
			d.Rule, d.Failed = TransferRulePreferredWeightMissing, true
			d.Explanation = fmt.Sprintf("worker %s prefers decode in %s=%s but publishes no weight; the router fails the request", worker, d.Domain, value)
			return d, &TransferError{
				Rule: d.Rule, Worker: worker, Domain: d.Domain, kind: ErrPreferredWeightMissing,
				msg:    fmt.Sprintf("selected prefill worker %s configured preferred KV transfer enforcement for domain %q, but kv_transfer_preferred_weight is missing", worker, d.Domain),
				Remedy: "set kvTransferPolicy.preferredWeight (DYN_KV_TRANSFER_PREFERRED_WEIGHT)",
			}
		}
		w := F32(*rc.KvTransferPreferredWeight)
		d.Rule, d.Weight = TransferRulePreferred, &w
		d.Constraints = RoutingConstraints{PreferredTaints: map[string]float64{d.Taint: w}}
		d.Explanation = fmt.Sprintf("worker %s prefers decode in %s=%s: decode workers tainted %s get preferred weight %v, others stay eligible", worker, d.Domain, value, d.Taint, float32(w))
		return d, nil
	}
	d.Rule, d.Failed = TransferRuleEnforcementMissing, true
	d.Explanation = fmt.Sprintf("worker %s names kv_transfer_domain %q without an enforcement; the router fails the request", worker, d.Domain)
	return d, &TransferError{
		Rule: d.Rule, Worker: worker, Domain: d.Domain, kind: ErrEnforcementMissing,
		msg:    fmt.Sprintf("selected prefill worker %s configured kv_transfer_domain=%q, but kv_transfer_enforcement is missing", worker, d.Domain),
		Remedy: "set DYN_KV_TRANSFER_ENFORCEMENT to required or preferred (the operator does this for DGDs with kvTransferPolicy)",
	}
}

func topoJoinIDs(ids []WorkerID) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = id.String()
	}
	return strings.Join(s, ", ")
}

// unionRequired returns the sorted, de-duplicated union of the required
// taints of all inputs, or nil when there are none.
func topoUnionRequired(sets ...[]string) []string {
	var out []string
	for _, s := range sets {
		out = append(out, s...)
	}
	if len(out) == 0 {
		return nil
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// copyPreferredF32 copies a preferred map, rounding each weight to f32.
func topoCopyPreferredF32(dst, src map[string]float64) {
	for k, v := range src {
		dst[k] = F32(v)
	}
}

func topoFinishPreferred(m map[string]float64) map[string]float64 {
	if len(m) == 0 {
		return nil
	}
	return m
}

// MergeFrontend mirrors merge_decode_topology_constraints in the frontend
// PrefillRouter: when added is empty the user's constraints are returned
// unchanged; otherwise required taints are unioned and added's preferred taints
// are inserted with HashMap::extend semantics, so a taint present in both keeps
// added's weight (overwrite, not sum). The result is a fresh value with sorted
// required taints; weights are f32 values.
func MergeFrontend(user, added RoutingConstraints) RoutingConstraints {
	if added.IsEmpty() {
		out := user.Clone()
		out.Normalize()
		return out
	}
	out := RoutingConstraints{RequiredTaints: topoUnionRequired(user.RequiredTaints, added.RequiredTaints)}
	pref := make(map[string]float64, len(user.PreferredTaints)+len(added.PreferredTaints))
	topoCopyPreferredF32(pref, user.PreferredTaints)
	topoCopyPreferredF32(pref, added.PreferredTaints)
	out.PreferredTaints = topoFinishPreferred(pref)
	return out
}

// MergePlacement mirrors the accumulation in the Plan router's
// derived_restrictions (placement.rs): required taints are unioned and
// preferred weights of the same taint are added, in f32 arithmetic, in the
// order the constraint sets are given.
func MergePlacement(sets ...RoutingConstraints) RoutingConstraints {
	var out RoutingConstraints
	pref := map[string]float64{}
	for _, c := range sets {
		out.RequiredTaints = append(out.RequiredTaints, c.RequiredTaints...)
		for _, k := range c.SortedPreferred() {
			pref[k] = topoAddF32(pref[k], c.PreferredTaints[k])
		}
	}
	out.RequiredTaints = topoUnionRequired(out.RequiredTaints)
	out.PreferredTaints = topoFinishPreferred(pref)
	return out
}

// MergeEngineHandoff mirrors merge_routing_constraints, used when an engine
// returns added_topology_routing_constraints: required taints are unioned,
// added preferred weights are summed into the base (f32) unless the taint is
// required, and finally every taint that is required is dropped from the
// preferred map ("required wins").
func MergeEngineHandoff(base, added RoutingConstraints) RoutingConstraints {
	out := RoutingConstraints{RequiredTaints: topoUnionRequired(base.RequiredTaints, added.RequiredTaints)}
	required := make(map[string]bool, len(out.RequiredTaints))
	for _, t := range out.RequiredTaints {
		required[t] = true
	}
	pref := make(map[string]float64, len(base.PreferredTaints)+len(added.PreferredTaints))
	topoCopyPreferredF32(pref, base.PreferredTaints)
	for _, k := range added.SortedPreferred() {
		if !required[k] {
			pref[k] = topoAddF32(pref[k], added.PreferredTaints[k])
		}
	}
	for t := range required {
		delete(pref, t)
	}
	out.PreferredTaints = topoFinishPreferred(pref)
	return out
}

// PlacementMode is the strength of a Plan-router SameDomain rule.
type PlacementMode struct {
	// Required makes the domain a hard constraint; otherwise Weight is the
	// preferred-taint weight (an f32 value in Dynamo).
	Required bool
	Weight   float64
}

// PlacementRule mirrors the Plan router's PlacementRule: either
// TransferCompatible (derive from the selected worker's KV-transfer settings,
// as the frontend does) or SameDomain{Domain, Mode}.
type PlacementRule struct {
	TransferCompatible bool
	// Domain and Mode define a SameDomain rule (ignored when TransferCompatible).
	Domain string
	Mode   PlacementMode
}

// PlacedWorker is a worker already selected for a stage of a multi-stage plan.
type PlacedWorker struct {
	// Stage is the plan stage ("prefill", "decode", "encode", …); Worker and
	// Config are the selected worker and its runtime config.
	Stage  string
	Worker WorkerID
	Config RuntimeConfig
}

// ErrPlacementConflict is the sentinel matched by every *PlacementError.
var ErrPlacementConflict = errors.New("placement conflict")

// PlacementError mirrors CoordinationError::Placement: two stages whose workers
// violate a placement rule.
type PlacementError struct {
	// First is the stage whose worker imposes the rule; Second its peer.
	First, Second string
	Reason        string
}

// Error describes the conflict.
func (e *PlacementError) Error() string {
	return fmt.Sprintf("placement conflict between stages %s and %s: %s", e.First, e.Second, e.Reason)
}

// Is makes every PlacementError match ErrPlacementConflict.
func (e *PlacementError) Is(target error) bool { return target == ErrPlacementConflict }

// placementConstraint derives what one rule makes `selected` impose on `stage`.
func topoPlacementConstraint(rule PlacementRule, selected PlacedWorker, stage string) (RoutingConstraints, error) {
	if rule.TransferCompatible {
		d, err := TransferConstraintFor(selected.Worker, selected.Config)
		if err != nil {
			reason := err.Error()
			var te *TransferError
			if errors.As(err, &te) {
				reason = strings.TrimPrefix(reason, "selected prefill ")
			}
			return RoutingConstraints{}, &PlacementError{First: selected.Stage, Second: stage, Reason: reason}
		}
		return d.Constraints, nil
	}
	value, ok := selected.Config.TopologyDomains[rule.Domain]
	if !ok {
		if rule.Mode.Required {
			return RoutingConstraints{}, &PlacementError{First: selected.Stage, Second: stage,
				Reason: fmt.Sprintf("worker %s publishes no topology domain %q", selected.Worker, rule.Domain)}
		}
		return RoutingConstraints{}, nil
	}
	taint := TopologyTaint(rule.Domain, value)
	if rule.Mode.Required {
		return RoutingConstraints{RequiredTaints: []string{taint}}, nil
	}
	return RoutingConstraints{PreferredTaints: map[string]float64{taint: F32(rule.Mode.Weight)}}, nil
}

// DerivePlacement mirrors derived_restrictions in the Plan router's
// placement.rs: the constraints `stage` inherits from the workers already
// selected for other stages under `rules`. Required taints are unioned and
// preferred weights add up (f32); a stage never constrains itself.
func DerivePlacement(rules []PlacementRule, selected []PlacedWorker, stage string) (RoutingConstraints, error) {
	var parts []RoutingConstraints
	for _, s := range selected {
		if s.Stage == stage {
			continue
		}
		for _, r := range rules {
			c, err := topoPlacementConstraint(r, s, stage)
			if err != nil {
				return RoutingConstraints{}, err
			}
			parts = append(parts, c)
		}
	}
	return MergePlacement(parts...), nil
}

// ValidatePlacementPair mirrors validate_pair in placement.rs: every required
// rule is checked in both directions, so a worker that itself advertises a
// required transfer domain forces its peer into that domain whichever stage was
// selected first. The peer's taints are its EffectiveTaints.
func ValidatePlacementPair(rules []PlacementRule, first, second PlacedWorker) error {
	for _, pair := range [2][2]PlacedWorker{{first, second}, {second, first}} {
		source, peer := pair[0], pair[1]
		for _, r := range rules {
			c, err := topoPlacementConstraint(r, source, peer.Stage)
			if err != nil {
				return err
			}
			taints := peer.Config.EffectiveTaints()
			for _, t := range c.RequiredTaints {
				if _, found := slices.BinarySearch(taints, t); !found {
					return &PlacementError{First: source.Stage, Second: peer.Stage,
						Reason: fmt.Sprintf("worker %s requires peers tainted %q, but worker %s is not", source.Worker, t, peer.Worker)}
				}
			}
		}
	}
	return nil
}
