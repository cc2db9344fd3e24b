package build

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/jsonscan"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// The DWM walker decodes a DynamoWorkerMetadata's spec.data straight from the
// unstructured map the capture reader or the API client built, instead of
// json.Marshal-ing it and handing the bytes to bldFastDWM: that roundtrip was
// most of Build's time on 10,000 DWMs. It must give exactly what
// bldFastDWM(json.Marshal(data)) gives, so it only reads what it can reproduce
// exactly — the value types our JSON decoders produce, valid UTF-8, integers as
// int64, json.Number or (instance_id) decimal strings — and gives up (ok false)
// on anything else: floats in integer fields, keys that encoding/json would
// match to a field only case-insensitively, non-ASCII keys, typed nil maps or
// slices, unusual Go types, very deep values. The caller then runs the
// roundtrip, which explains whatever it rejects. build_dwm_walk_test.go checks
// the equivalence on every example capture and fuzzes it.

// bldWalkMaxDepth bounds the nesting the walker follows (encoding/json's
// decoder stops at 10000; real spec.data is about 8 deep).
const bldWalkMaxDepth = 500

// The JSON field names of bldFastEntry, bldFastCard and bldFastRuntime (with
// routecore.RuntimeConfig's promoted fields): a key that is none of them but
// equals one case-insensitively would be decoded into it by encoding/json.
// TestDWMWalkKnowsEveryField keeps these lists in step with the structs.
var (
	bldWalkEntryFields   = []string{"type", "namespace", "component", "endpoint", "instance_id", "transport", "card_json"}
	bldWalkCardFields    = []string{"display_name", "kv_cache_block_size", "worker_type", "model_type", "runtime_config", "router_config"}
	bldWalkRuntimeFields = []string{"total_kv_blocks", "max_num_seqs", "max_num_batched_tokens", "data_parallel_start_rank",
		"data_parallel_size", "enable_eagle", "taints", "topology_domains", "kv_transfer_domain", "kv_transfer_enforcement",
		"kv_transfer_preferred_weight", "stable_routing_id", "disaggregated_endpoint", "kv_event_publishing_enabled"}
)

// bldWalkDWM is bldFastDWM(json.Marshal(data), source) without the roundtrip,
// or ok false when the walker cannot tell (the caller then runs the roundtrip).
// A panic, which would be a bug, also just means "cannot tell": the roundtrip
// path is always there to fall back on.
func bldWalkDWM(data any, source string) (out []*bldInstance, ok bool) {
	defer func() {
		if recover() != nil {
			out, ok = nil, false
		}
	}()
	return bldWalkDWMNoRecover(data, source)
}

// bldWalkDWMNoRecover is bldWalkDWM without the recover, so that the tests see
// any panic.
func bldWalkDWMNoRecover(data any, source string) ([]*bldInstance, bool) {
	if data == nil {
		return nil, true // "null" decodes to no maps
	}
	maps, isMap := data.(map[string]any)
	if !isMap || maps == nil {
		return nil, false
	}
	var mkBuf, ekBuf [8]string
	mks, ok := bldWalkSortedKeys(maps, mkBuf[:0])
	if !ok {
		return nil, false
	}
	var out []*bldInstance
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
		eks, ok := bldWalkSortedKeys(entries, ekBuf[:0])
		if !ok {
			return nil, false
		}
		for _, ek := range eks {
			bi, ok := bldWalkEntry(entries[ek], ek, source)
			if !ok {
				return nil, false
			}
			if bi != nil {
				out = append(out, bi)
			}
		}
	}
	return out, true
}

// bldWalkSortedKeys appends m's keys to buf, sorted as bldSortedKeys sorts the
// decoded map's; ok is false when a key is not valid UTF-8 (json.Marshal would
// rewrite it, possibly into another key).
func bldWalkSortedKeys(m map[string]any, buf []string) ([]string, bool) {
	for k := range m {
		if !utf8.ValidString(k) {
			return nil, false
		}
		buf = append(buf, k)
	}
	slices.Sort(buf)
	return buf, true
}

// bldWalkEntry is one entry of bldFastDWM: nil for a null entry or a type other
// than Endpoint and Model. Every field is checked whatever the type, because
// encoding/json rejects a wrongly typed field of any entry.
func bldWalkEntry(v any, key, source string) (*bldInstance, bool) {
	if v == nil {
		return nil, true
	}
	m, _ := v.(map[string]any)
	if m == nil {
		return nil, false
	}
	var (
		typ, ns, comp, ep string
		id                uint64
		hasID, parsedID   bool
		transport         any
		card              map[string]any
		ok                bool
	)
	for k, fv := range m {
		switch k {
		case "type":
			typ, ok = bldWalkString(fv)
		case "namespace":
			ns, ok = bldWalkString(fv)
		case "component":
			comp, ok = bldWalkString(fv)
		case "endpoint":
			ep, ok = bldWalkString(fv)
		case "instance_id":
			id, hasID, parsedID, ok = bldWalkInstanceID(fv)
		case "transport":
			transport, ok = fv, true // read below, once the type is known
		case "card_json":
			card, ok = bldWalkObject(fv)
		default:
			ok = !bldWalkFolds(k, bldWalkEntryFields) && bldWalkPlain(fv, 3)
		}
		if !ok {
			return nil, false
		}
	}
	kept := typ == "Endpoint" || typ == "Model"
	var c bldWalkedCard
	if card != nil && !c.walk(card, typ == "Model") {
		return nil, false
	}
	if !kept {
		return nil, bldWalkPlain(transport, 3)
	}
	if !hasID || !parsedID {
		return nil, false // bldFastDWM gives up on a missing or non-u64 id
	}
	bi := &bldInstance{key: key, dynNamespace: ns, component: comp}
	bi.inst.ID, bi.inst.Source = routecore.WorkerID(id), source
	if ns != "" || comp != "" || ep != "" {
		bi.inst.Endpoint = ns + "/" + comp + "/" + ep
	}
	if bi.host, ok = bldWalkTransport(transport); !ok {
		return nil, false
	}
	if card != nil && typ == "Model" {
		if c.hasBlockSize && c.blockSize > 1<<31 {
			return nil, false
		}
		bi.hasCard = true
		bi.inst.Model = c.displayName
		bi.inst.BlockSize = int(c.blockSize)
		bi.inst.WorkerType = c.workerType
		if c.prefillModelType {
			bi.legacyPrefill = "card model_type"
		}
		if c.hasRuntime {
			bi.inst.Runtime = c.runtime
			bi.stableID = c.stableID
			bi.inst.KvEventPublishing = c.kvEvents
			if c.disaggregated && bi.legacyPrefill == "" {
				bi.legacyPrefill = "card disaggregated_endpoint"
			}
		}
		bi.inst.RouterConfig = c.routerConfig
	}
	return bi, true
}

// bldWalkedCard is what bldFastDWM reads of a card_json (bldFastCard).
type bldWalkedCard struct {
	displayName, workerType string
	blockSize               uint64
	hasBlockSize            bool
	prefillModelType        bool
	hasRuntime              bool
	runtime                 routecore.RuntimeConfig
	stableID                string
	disaggregated           bool
	kvEvents                *bool
	routerConfig            json.RawMessage
}

// walk reads a card; model says whether the entry is a Model (only then is
// router_config encoded: for other entries it only has to be encodable).
func (c *bldWalkedCard) walk(m map[string]any, model bool) bool {
	var ok bool
	for k, v := range m {
		switch k {
		case "display_name":
			c.displayName, ok = bldWalkString(v)
		case "kv_cache_block_size":
			c.blockSize, c.hasBlockSize, ok = bldWalkUint(v, 32)
		case "worker_type":
			c.workerType, ok = bldWalkString(v)
		case "model_type":
			// Only a string is read (a JSON string that names "Prefill").
			if s, isString := v.(string); isString {
				ok = utf8.ValidString(s)
				c.prefillModelType = strings.Contains(s, "Prefill")
			} else {
				ok = bldWalkPlain(v, 5)
			}
		case "runtime_config":
			var rc map[string]any
			if rc, ok = bldWalkObject(v); ok && rc != nil {
				c.hasRuntime = true
				ok = c.walkRuntime(rc)
			}
		case "router_config":
			ok = bldWalkPlain(v, 5)
			if ok && model && v != nil {
				ok = c.encodeRouterConfig(v)
			}
		default:
			ok = !bldWalkFolds(k, bldWalkCardFields) && bldWalkPlain(v, 5)
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
func (c *bldWalkedCard) encodeRouterConfig(v any) bool {
	raw, err := json.Marshal(v)
	if err != nil {
		return false
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) == nil {
		c.routerConfig = buf.Bytes()
	}
	return true
}

// walkRuntime reads a runtime_config into routecore.RuntimeConfig (which has
// no custom JSON decoding: plain fields only) plus the three extra fields.
func (c *bldWalkedCard) walkRuntime(m map[string]any) bool {
	r := &c.runtime
	var ok bool
	for k, v := range m {
		switch k {
		case "total_kv_blocks":
			r.TotalKvBlocks, ok = bldWalkUintPtr(v)
		case "max_num_seqs":
			r.MaxNumSeqs, ok = bldWalkUintPtr(v)
		case "max_num_batched_tokens":
			r.MaxNumBatchedTokens, ok = bldWalkUintPtr(v)
		case "data_parallel_start_rank":
			var n uint64
			n, _, ok = bldWalkUint(v, 32)
			r.DataParallelStartRank = uint32(n)
		case "data_parallel_size":
			var n uint64
			n, r.DataParallelSizeSet, ok = bldWalkUint(v, 32)
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
			r.Taints, ok = bldWalkStrings(v)
		case "topology_domains":
			r.TopologyDomains, ok = bldWalkStringMap(v)
		case "kv_transfer_domain":
			r.KvTransferDomain, ok = bldWalkString(v)
		case "kv_transfer_enforcement":
			var s string
			s, ok = bldWalkString(v)
			r.KvTransferEnforcement = routecore.KvTransferEnforcement(s)
		case "kv_transfer_preferred_weight":
			r.KvTransferPreferredWeight, ok = bldWalkFloatPtr(v)
		case "stable_routing_id":
			c.stableID, ok = bldWalkString(v)
		case "kv_event_publishing_enabled":
			c.kvEvents, ok = nil, v == nil
			if b, isBool := v.(bool); isBool {
				c.kvEvents, ok = &b, true
			}
		case "disaggregated_endpoint":
			ok = bldWalkPlain(v, 6)
			c.disaggregated = v != nil
		default:
			ok = !bldWalkFolds(k, bldWalkRuntimeFields) && bldWalkPlain(v, 6)
		}
		if !ok {
			return false
		}
	}
	return true
}

// bldWalkFolds reports whether encoding/json could decode key into one of the
// fields named names, key not being any of them exactly: it equals one but for
// ASCII case, or it has non-ASCII bytes (some fold to ASCII letters: the
// Kelvin sign, the long s; the walker does not try to follow Unicode folding).
func bldWalkFolds(key string, names []string) bool {
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

// bldWalkPlain reports whether json.Marshal can encode v, nested depth deep,
// with the walker's rules: the value types of our decoders only, finite floats,
// valid json.Numbers, no typed nil containers (they encode as null, which the
// walker does not model), at most bldWalkMaxDepth deep.
func bldWalkPlain(v any, depth int) bool {
	switch x := v.(type) {
	case nil, bool, string, int64:
		return true
	case float64:
		return !math.IsNaN(x) && !math.IsInf(x, 0)
	case json.Number:
		return x == "" || bldWalkValidNumber(string(x))
	case map[string]any:
		if x == nil || depth >= bldWalkMaxDepth {
			return false
		}
		for _, e := range x {
			if !bldWalkPlain(e, depth+1) {
				return false
			}
		}
		return true
	case []any:
		if x == nil || depth >= bldWalkMaxDepth {
			return false
		}
		for _, e := range x {
			if !bldWalkPlain(e, depth+1) {
				return false
			}
		}
		return true
	}
	return false
}

// bldWalkObject reads a pointer-to-struct field: nil for null, the map for an
// object; ok false for anything else (a decode error, or a typed nil map).
// The map's own values are checked by the caller.
func bldWalkObject(v any) (map[string]any, bool) {
	if v == nil {
		return nil, true
	}
	m, _ := v.(map[string]any)
	return m, m != nil
}

// bldWalkString reads a string field: null leaves it empty. A string that is
// not valid UTF-8 would be rewritten by json.Marshal: not followed.
func bldWalkString(v any) (string, bool) {
	switch s := v.(type) {
	case nil:
		return "", true
	case string:
		return s, utf8.ValidString(s)
	}
	return "", false
}

// bldWalkStrings reads a []string field: null is nil, [] is empty (not nil),
// null elements are "".
func bldWalkStrings(v any) ([]string, bool) {
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
		if out[i], ok = bldWalkString(e); !ok {
			return nil, false
		}
	}
	return out, true
}

// bldWalkStringMap reads a map[string]string field: null is nil, {} is empty
// (not nil), null values are "".
func bldWalkStringMap(v any) (map[string]string, bool) {
	if v == nil {
		return nil, true
	}
	m, _ := v.(map[string]any)
	if m == nil {
		return nil, false
	}
	out := make(map[string]string, len(m))
	for k, e := range m {
		s, ok := bldWalkString(e)
		if !ok || !utf8.ValidString(k) {
			return nil, false
		}
		out[k] = s
	}
	return out, true
}

// bldWalkNumberLiteral is the literal json.Marshal writes for a json.Number,
// or ok false when it refuses to.
func bldWalkNumberLiteral(n json.Number) (string, bool) {
	if n == "" {
		return "0", true // encoding/json writes the zero Number as 0
	}
	return string(n), bldWalkValidNumber(string(n))
}

// bldWalkValidNumber reports whether s is a JSON number literal.
func bldWalkValidNumber(s string) bool {
	end, ok := jsonscan.NumberEnd([]byte(s), 0)
	return ok && end == len(s)
}

// bldWalkUint reads an unsigned integer field of bits bits (null: not set).
// An int64 or json.Number is read as encoding/json reads its literal; a
// float64 is not followed (json.Marshal may print an integral float as an
// integer, which encoding/json would then accept).
func bldWalkUint(v any, bits int) (n uint64, set, ok bool) {
	switch x := v.(type) {
	case nil:
		return 0, false, true
	case int64:
		if x < 0 {
			return 0, false, false
		}
		n = uint64(x)
	case json.Number:
		lit, valid := bldWalkNumberLiteral(x)
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

// bldWalkUintPtr reads a *uint64 field (null: nil).
func bldWalkUintPtr(v any) (*uint64, bool) {
	n, set, ok := bldWalkUint(v, 64)
	if !ok || !set {
		return nil, ok
	}
	return &n, true
}

// bldWalkFloatPtr reads a *float64 field (null: nil) as encoding/json parses
// the literal json.Marshal writes: a finite float64 comes back unchanged (the
// shortest representation round-trips), integers and json.Numbers go through
// strconv.ParseFloat exactly as in the roundtrip.
func bldWalkFloatPtr(v any) (*float64, bool) {
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
		lit, valid := bldWalkNumberLiteral(x)
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

// bldWalkInstanceID reads instance_id as bldFastDWM does (a json.Number, then
// strconv.ParseUint): present is false for null or absent, parsed whether it
// is a u64. encoding/json also accepts a string holding a number literal. u64
// ids above 2^63 arrive as json.Number and never pass through float64; a
// float64 id is not followed.
func bldWalkInstanceID(v any) (id uint64, present, parsed, ok bool) {
	var lit string
	switch x := v.(type) {
	case nil:
		return 0, false, false, true
	case int64:
		return uint64(x), true, x >= 0, true
	case json.Number:
		var valid bool
		if lit, valid = bldWalkNumberLiteral(x); !valid {
			return 0, false, false, false
		}
	case string:
		if !bldWalkValidNumber(x) { // encoding/json rejects it (also when not UTF-8: not ASCII digits)
			return 0, false, false, false
		}
		lit = x
	default:
		return 0, false, false, false
	}
	id, err := strconv.ParseUint(lit, 10, 64)
	return id, true, err == nil, true
}

// bldWalkTransport is bldTransportHost of the transport's JSON: the IP of the
// first key (in sorted order) whose string value names one; "" for null, a
// non-object or none. Every value must be encodable.
func bldWalkTransport(v any) (host string, ok bool) {
	m, isMap := v.(map[string]any)
	if !isMap {
		return "", bldWalkPlain(v, 3)
	}
	if m == nil {
		return "", false
	}
	var best string
	found := false
	for k, e := range m {
		if !utf8.ValidString(k) {
			return "", false
		}
		s, isString := e.(string)
		if !isString { // null or not a string: skipped by bldTransportHost
			if !bldWalkPlain(e, 4) {
				return "", false
			}
			continue
		}
		if !utf8.ValidString(s) {
			return "", false
		}
		if found && k >= best {
			continue
		}
		if ip := bldAddrIP(s); ip != "" {
			host, best, found = ip, k, true
		}
	}
	return host, true
}
