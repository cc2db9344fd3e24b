package decode

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/jsonscan"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// The DWM walker reads a DynamoWorkerMetadata's spec.data (Dynamo's
// DiscoveryMetadata) from a decoded JSON value into raw.DiscoveryInstances.
// Build's reference reader is bldFastDWM over json.Marshal of the value (then,
// for what that rejects, its tolerant entry-by-entry reader, which explains
// each entry it skips): the walker must give exactly what bldFastDWM gives, so
// it only reads what it can reproduce exactly — the value types our JSON
// decoders produce, valid UTF-8, integers as int64, json.Number or
// (instance_id) decimal strings — and gives up (ok false) on anything else:
// floats in integer fields, keys that encoding/json would match to a field
// only case-insensitively, non-ASCII keys, typed nil maps or slices, unusual
// Go types, very deep values. The whole value then stays JSON for Build.
// pkg/build's build_dwm_walk_test.go checks the equivalence on every example
// capture and fuzzes it; dwm_json.go reads the same from JSON and gives up in
// the same cases.

// walkMaxDepth bounds the nesting the walker follows (encoding/json's
// decoder stops at 10000; real spec.data is about 8 deep).
const walkMaxDepth = 500

// The JSON field names of build's bldFastEntry, bldFastCard and bldFastRuntime
// (with routecore.RuntimeConfig's promoted fields): a key that is none of
// them but equals one case-insensitively would be decoded into it by
// encoding/json. pkg/build's TestDWMWalkKnowsEveryField keeps these lists in
// step with the structs.
var (
	WalkEntryFields   = []string{"type", "namespace", "component", "endpoint", "instance_id", "transport", "card_json"}
	WalkCardFields    = []string{"display_name", "kv_cache_block_size", "worker_type", "model_type", "runtime_config", "router_config"}
	WalkRuntimeFields = []string{"total_kv_blocks", "max_num_seqs", "max_num_batched_tokens", "data_parallel_start_rank",
		"data_parallel_size", "enable_eagle", "taints", "topology_domains", "kv_transfer_domain", "kv_transfer_enforcement",
		"kv_transfer_preferred_weight", "stable_routing_id", "disaggregated_endpoint", "kv_event_publishing_enabled"}
)

// dwmDataTree types a non-null spec.data: the walker's instances, else the
// value itself for Build's reader. A panic of the walker, which would be a
// bug, also just means "cannot tell": Build's reader is always there to fall
// back on.
func dwmDataTree(data any) (dm *raw.DiscoveryMetadata) {
	defer func() {
		if recover() != nil {
			dm = &raw.DiscoveryMetadata{JSON: data}
		}
	}()
	if insts, ok := WalkDiscovery(data); ok {
		return &raw.DiscoveryMetadata{Instances: insts}
	}
	return &raw.DiscoveryMetadata{JSON: data}
}

// WalkDiscovery reads a decoded spec.data into instances, or reports ok false
// when it cannot tell what build's bldFastDWM would make of it. It does not
// recover from a panic, so that tests see one.
func WalkDiscovery(data any) ([]raw.DiscoveryInstance, bool) {
	if data == nil {
		return nil, true // "null" decodes to no maps
	}
	maps, isMap := data.(map[string]any)
	if !isMap || maps == nil {
		return nil, false
	}
	var mkBuf, ekBuf [8]string
	mks, ok := walkSortedKeys(maps, mkBuf[:0])
	if !ok {
		return nil, false
	}
	var out []raw.DiscoveryInstance
	for _, mk := range mks {
		var entries map[string]any
		switch v := maps[mk].(type) {
		case nil:
			continue
		case map[string]any:
			entries = v
		}
		if entries == nil { // not an object (a decode error) or a typed nil map
			return nil, false
		}
		eks, ok := walkSortedKeys(entries, ekBuf[:0])
		if !ok {
			return nil, false
		}
		for _, ek := range eks {
			in, kept, ok := walkEntry(entries[ek], ek)
			if !ok {
				return nil, false
			}
			if kept {
				out = append(out, in)
			}
		}
	}
	return out, true
}

// walkSortedKeys appends m's keys to buf, sorted as bldSortedKeys sorts the
// decoded map's; ok is false when a key is not valid UTF-8 (json.Marshal would
// rewrite it, possibly into another key).
func walkSortedKeys(m map[string]any, buf []string) ([]string, bool) {
	for k := range m {
		if !utf8.ValidString(k) {
			return nil, false
		}
		buf = append(buf, k)
	}
	slices.Sort(buf)
	return buf, true
}

// walkEntry is one entry of bldFastDWM: kept false for a null entry or a type
// other than Endpoint and Model. Every field is checked whatever the type,
// because encoding/json rejects a wrongly typed field of any entry.
func walkEntry(v any, key string) (in raw.DiscoveryInstance, kept, ok bool) {
	if v == nil {
		return in, false, true
	}
	m, _ := v.(map[string]any)
	if m == nil {
		return in, false, false
	}
	var (
		id              uint64
		hasID, parsedID bool
		transport       any
		card            map[string]any
	)
	for k, fv := range m {
		switch k {
		case "type":
			in.Type, ok = walkString(fv)
		case "namespace":
			in.Namespace, ok = walkString(fv)
		case "component":
			in.Component, ok = walkString(fv)
		case "endpoint":
			in.Endpoint, ok = walkString(fv)
		case "instance_id":
			id, hasID, parsedID, ok = walkInstanceID(fv)
		case "transport":
			transport, ok = fv, true // read below, once the type is known
		case "card_json":
			card, ok = walkObject(fv)
		default:
			ok = !walkFolds(k, WalkEntryFields) && walkPlain(fv, 3)
		}
		if !ok {
			return raw.DiscoveryInstance{}, false, false
		}
	}
	isModel := in.Type == "Model"
	var c walkedCard
	if card != nil && !c.walk(card, isModel) {
		return raw.DiscoveryInstance{}, false, false
	}
	if in.Type != "Endpoint" && !isModel {
		return raw.DiscoveryInstance{}, false, walkPlain(transport, 3)
	}
	if !hasID || !parsedID {
		return raw.DiscoveryInstance{}, false, false // bldFastDWM gives up on a missing or non-u64 id
	}
	in.Key, in.InstanceID = key, id
	if in.Transport, ok = walkTransport(transport); !ok {
		return raw.DiscoveryInstance{}, false, false
	}
	if card != nil && isModel {
		if c.hasBlockSize && c.card.KvCacheBlockSize > 1<<31 {
			return raw.DiscoveryInstance{}, false, false
		}
		in.CardJSON = &c.card
	}
	return in, true, true
}

// walkedCard is what bldFastDWM reads of a card_json (bldFastCard).
type walkedCard struct {
	card         raw.ModelCard
	hasBlockSize bool
}

// walk reads a card; model says whether the entry is a Model (only then is
// router_config encoded: for other entries it only has to be encodable).
func (c *walkedCard) walk(m map[string]any, model bool) bool {
	var ok bool
	for k, v := range m {
		switch k {
		case "display_name":
			c.card.DisplayName, ok = walkString(v)
		case "kv_cache_block_size":
			var n uint64
			n, c.hasBlockSize, ok = walkUint(v, 32)
			c.card.KvCacheBlockSize = int(n)
		case "worker_type":
			c.card.WorkerType, ok = walkString(v)
		case "model_type":
			// Only a string is read (a JSON string that names "Prefill").
			if s, isString := v.(string); isString {
				ok = utf8.ValidString(s)
				c.card.ModelType = s
			} else {
				ok = walkPlain(v, 5)
			}
		case "runtime_config":
			var rc map[string]any
			if rc, ok = walkObject(v); ok && rc != nil {
				c.card.RuntimeConfig = &raw.CardRuntimeConfig{}
				ok = walkRuntime(rc, c.card.RuntimeConfig)
			}
		case "router_config":
			ok = walkPlain(v, 5)
			if ok && model && v != nil {
				c.card.RouterConfig, ok = encodeRouterConfig(v)
			}
		default:
			ok = !walkFolds(k, WalkCardFields) && walkPlain(v, 5)
		}
		if !ok {
			return false
		}
	}
	return true
}

// encodeRouterConfig keeps router_config as bldFastDWM does: the raw JSON of
// the value, compacted. The bytes are those json.Marshal gives the value on
// its own, which are the bytes it has inside the whole spec.data.
func encodeRouterConfig(v any) (json.RawMessage, bool) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, false
	}
	var buf bytes.Buffer
	if json.Compact(&buf, data) != nil {
		return nil, true
	}
	return buf.Bytes(), true
}

// walkRuntime reads a runtime_config into routecore.RuntimeConfig (which has
// no custom JSON decoding: plain fields only) plus the three extra fields.
func walkRuntime(m map[string]any, rc *raw.CardRuntimeConfig) bool {
	r := &rc.RuntimeConfig
	var ok bool
	for k, v := range m {
		switch k {
		case "total_kv_blocks":
			r.TotalKvBlocks, ok = walkUintPtr(v)
		case "max_num_seqs":
			r.MaxNumSeqs, ok = walkUintPtr(v)
		case "max_num_batched_tokens":
			r.MaxNumBatchedTokens, ok = walkUintPtr(v)
		case "data_parallel_start_rank":
			var n uint64
			n, _, ok = walkUint(v, 32)
			r.DataParallelStartRank = uint32(n)
		case "data_parallel_size":
			var n uint64
			n, r.DataParallelSizeSet, ok = walkUint(v, 32)
			r.DataParallelSize = uint32(n)
		case "enable_eagle":
			switch b := v.(type) {
			case nil:
				ok = true
			case bool:
				r.EnableEagle, ok = b, true
			default:
				ok = false
			}
		case "taints":
			r.Taints, ok = walkStrings(v)
		case "topology_domains":
			r.TopologyDomains, ok = walkStringMap(v)
		case "kv_transfer_domain":
			r.KvTransferDomain, ok = walkString(v)
		case "kv_transfer_enforcement":
			var s string
			s, ok = walkString(v)
			r.KvTransferEnforcement = routecore.KvTransferEnforcement(s)
		case "kv_transfer_preferred_weight":
			r.KvTransferPreferredWeight, ok = walkFloatPtr(v)
		case "stable_routing_id":
			rc.StableRoutingID, ok = walkString(v)
		case "kv_event_publishing_enabled":
			rc.KvEventPublishingEnabled, ok = nil, v == nil
			if b, isBool := v.(bool); isBool {
				rc.KvEventPublishingEnabled, ok = &b, true
			}
		case "disaggregated_endpoint":
			ok = walkPlain(v, 6)
			rc.DisaggregatedEndpoint = v != nil
		default:
			ok = !walkFolds(k, WalkRuntimeFields) && walkPlain(v, 6)
		}
		if !ok {
			return false
		}
	}
	return true
}

// walkFolds reports whether encoding/json could decode key into one of the
// fields named names, key not being any of them exactly: it equals one but for
// ASCII case, or it has non-ASCII bytes (some fold to ASCII letters: the
// Kelvin sign, the long s; the walker does not try to follow Unicode folding).
func walkFolds(key string, names []string) bool {
	for i := 0; i < len(key); i++ {
		if key[i] >= utf8.RuneSelf {
			return true
		}
	}
	for _, name := range names {
		if len(name) == len(key) && strings.EqualFold(name, key) {
			return true
		}
	}
	return false
}

// walkPlain reports whether json.Marshal can encode v, nested depth deep,
// with the walker's rules: the value types of our decoders only, finite floats,
// valid json.Numbers, no typed nil containers (they encode as null, which the
// walker does not model), at most walkMaxDepth deep.
func walkPlain(v any, depth int) bool {
	switch x := v.(type) {
	case nil, bool, string, int64:
		return true
	case float64:
		return !math.IsNaN(x) && !math.IsInf(x, 0)
	case json.Number:
		return x == "" || walkValidNumber(string(x))
	case map[string]any:
		if x == nil || depth >= walkMaxDepth {
			return false
		}
		for _, e := range x {
			if !walkPlain(e, depth+1) {
				return false
			}
		}
		return true
	case []any:
		if x == nil || depth >= walkMaxDepth {
			return false
		}
		for _, e := range x {
			if !walkPlain(e, depth+1) {
				return false
			}
		}
		return true
	}
	return false
}

// walkObject reads a pointer-to-struct field: nil for null, the map for an
// object; ok false for anything else (a decode error, or a typed nil map).
// The map's own values are checked by the caller.
func walkObject(v any) (map[string]any, bool) {
	if v == nil {
		return nil, true
	}
	m, _ := v.(map[string]any)
	return m, m != nil
}

// walkString reads a string field: null leaves it empty. A string that is
// not valid UTF-8 would be rewritten by json.Marshal: not followed.
func walkString(v any) (string, bool) {
	switch s := v.(type) {
	case nil:
		return "", true
	case string:
		return s, utf8.ValidString(s)
	}
	return "", false
}

// walkStrings reads a []string field: null is nil, [] is empty (not nil),
// null elements are "".
func walkStrings(v any) ([]string, bool) {
	if v == nil {
		return nil, true
	}
	a, _ := v.([]any)
	if a == nil {
		return nil, false
	}
	out := make([]string, len(a))
	for i, e := range a {
		var ok bool
		if out[i], ok = walkString(e); !ok {
			return nil, false
		}
	}
	return out, true
}

// walkStringMap reads a map[string]string field: null is nil, {} is empty
// (not nil), null values are "".
func walkStringMap(v any) (map[string]string, bool) {
	if v == nil {
		return nil, true
	}
	m, _ := v.(map[string]any)
	if m == nil {
		return nil, false
	}
	out := make(map[string]string, len(m))
	for k, e := range m {
		s, ok := walkString(e)
		if !ok || !utf8.ValidString(k) {
			return nil, false
		}
		out[k] = s
	}
	return out, true
}

// walkNumberLiteral is the literal json.Marshal writes for a json.Number,
// or ok false when it refuses to.
func walkNumberLiteral(n json.Number) (string, bool) {
	if n == "" {
		return "0", true // encoding/json writes the zero Number as 0
	}
	return string(n), walkValidNumber(string(n))
}

// walkValidNumber reports whether s is a JSON number literal.
func walkValidNumber(s string) bool {
	end, ok := jsonscan.NumberEnd([]byte(s), 0)
	return ok && end == len(s)
}

// walkUint reads an unsigned integer field of bits bits (null: not set).
// An int64 or json.Number is read as encoding/json reads its literal; a
// float64 is not followed (json.Marshal may print an integral float as an
// integer, which encoding/json would then accept).
func walkUint(v any, bits int) (n uint64, set, ok bool) {
	switch x := v.(type) {
	case nil:
		return 0, false, true
	case int64:
		if x < 0 {
			return 0, false, false
		}
		n = uint64(x)
	case json.Number:
		lit, valid := walkNumberLiteral(x)
		if !valid {
			return 0, false, false
		}
		var err error
		if n, err = strconv.ParseUint(lit, 10, 64); err != nil {
			return 0, false, false
		}
	default:
		return 0, false, false
	}
	if bits < 64 && n>>bits != 0 {
		return 0, false, false
	}
	return n, true, true
}

// walkUintPtr reads a *uint64 field (null: nil).
func walkUintPtr(v any) (*uint64, bool) {
	n, set, ok := walkUint(v, 64)
	if !ok || !set {
		return nil, ok
	}
	return &n, true
}

// walkFloatPtr reads a *float64 field (null: nil) as encoding/json parses
// the literal json.Marshal writes: a finite float64 comes back unchanged (the
// shortest representation round-trips), integers and json.Numbers go through
// strconv.ParseFloat exactly as in the roundtrip.
func walkFloatPtr(v any) (*float64, bool) {
	var f float64
	switch x := v.(type) {
	case nil:
		return nil, true
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, false
		}
		f = x
	case int64:
		var err error
		if f, err = strconv.ParseFloat(strconv.FormatInt(x, 10), 64); err != nil {
			return nil, false
		}
	case json.Number:
		lit, valid := walkNumberLiteral(x)
		if !valid {
			return nil, false
		}
		var err error
		if f, err = strconv.ParseFloat(lit, 64); err != nil {
			return nil, false
		}
	default:
		return nil, false
	}
	return &f, true
}

// walkInstanceID reads instance_id as bldFastDWM does (a json.Number, then
// strconv.ParseUint): present is false for null or absent, parsed whether it
// is a u64. encoding/json also accepts a string holding a number literal. u64
// ids above 2^63 arrive as json.Number and never pass through float64; a
// float64 id is not followed.
func walkInstanceID(v any) (id uint64, present, parsed, ok bool) {
	var lit string
	switch x := v.(type) {
	case nil:
		return 0, false, false, true
	case int64:
		return uint64(x), true, x >= 0, true
	case json.Number:
		var valid bool
		if lit, valid = walkNumberLiteral(x); !valid {
			return 0, false, false, false
		}
	case string:
		if !walkValidNumber(x) { // encoding/json rejects it (also when not UTF-8: not ASCII digits)
			return 0, false, false, false
		}
		lit = x
	default:
		return 0, false, false, false
	}
	id, err := strconv.ParseUint(lit, 10, 64)
	return id, true, err == nil, true
}

// walkTransport reads the transport's string members in key order (build's
// bldTransportHost reads the IP of the first that names one); none for null
// or a value that is not an object. Every value must be encodable.
func walkTransport(v any) ([]raw.TransportAddress, bool) {
	m, isMap := v.(map[string]any)
	if !isMap {
		return nil, walkPlain(v, 3)
	}
	if m == nil {
		return nil, false
	}
	var out []raw.TransportAddress
	for k, e := range m {
		if !utf8.ValidString(k) {
			return nil, false
		}
		s, isString := e.(string)
		if !isString { // null or not a string: skipped by bldTransportHost
			if !walkPlain(e, 4) {
				return nil, false
			}
			continue
		}
		if !utf8.ValidString(s) {
			return nil, false
		}
		out = append(out, raw.TransportAddress{Key: k, Address: s})
	}
	slices.SortFunc(out, func(a, b raw.TransportAddress) int { return strings.Compare(a.Key, b.Key) })
	return out, true
}
