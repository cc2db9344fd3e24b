package decode

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/jsonscan"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// The DWM reader reads spec.data straight from JSON: the walker's reading
// (dwm_tree.go) over the bytes, with the walker's own functions for every
// scalar (given the value the decoder would make of it), so that it gives
// exactly what the walker gives on the decoded value. It gives up where the
// walker does and also on a key given twice where it matters (the decoded
// value keeps the last one); the value is then decoded whole and read by the
// walker, else kept as JSON for Build.

// dwmData types a non-null spec.data at B[i].
func (d *Decoder) dwmData(i int) *raw.DiscoveryMetadata {
	r := dwmReader{d: d, b: d.B}
	if insts, ok := r.data(i); ok {
		return &raw.DiscoveryMetadata{Instances: insts}
	}
	v, _ := d.tree.Value(i)
	return dwmDataTree(v)
}

type dwmReader struct {
	d *Decoder
	b []byte
}

// keyed is one member of an object, by its decoded key.
type keyed struct {
	key string
	val int
}

// members lists an object's members sorted by key; ok is false when a key
// is given twice.
func (r *dwmReader) members(i int, buf []keyed) ([]keyed, bool) {
	o := jsonscan.NewObj(r.d.Ends, r.b, i)
	for o.Next() {
		buf = append(buf, keyed{r.d.mapKey(&o), o.Val})
	}
	slices.SortFunc(buf, func(a, b keyed) int { return strings.Compare(a.key, b.key) })
	for k := 1; k < len(buf); k++ {
		if buf[k].key == buf[k-1].key {
			return nil, false
		}
	}
	return buf, true
}

// data is walkDiscovery over the JSON at B[i].
func (r *dwmReader) data(i int) ([]raw.DiscoveryInstance, bool) {
	if r.b[i] != '{' {
		return nil, false
	}
	var mbuf, ebuf [8]keyed
	maps, ok := r.members(i, mbuf[:0])
	if !ok {
		return nil, false
	}
	var out []raw.DiscoveryInstance
	for _, m := range maps {
		switch r.b[m.val] {
		case 'n':
			continue
		case '{':
		default:
			return nil, false
		}
		entries, ok := r.members(m.val, ebuf[:0])
		if !ok {
			return nil, false
		}
		for _, e := range entries {
			in, kept, ok := r.entry(e.val, e.key)
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

// scalar is the decoder's value of a scalar at B[i] (nil, bool, string,
// int64, float64 or json.Number); isScalar is false for an object or array.
func (r *dwmReader) scalar(i int) (v any, isScalar bool) {
	switch r.b[i] {
	case '{', '[':
		return nil, false
	case '"':
		s, _ := r.d.str(i)
		return s, true
	case 't':
		return true, true
	case 'f':
		return false, true
	case 'n':
		return nil, true
	}
	end, _ := jsonscan.NumberEnd(r.b, i)
	return jsonscan.Number(r.b[i:end]), true
}

// str is walkString over the value at B[i].
func (r *dwmReader) str(i int) (string, bool) {
	v, isScalar := r.scalar(i)
	if !isScalar {
		return "", false
	}
	return walkString(v)
}

// plain is walkPlain over the value at B[i], nested depth deep: any
// JSON value is encodable; only nesting walkMaxDepth deep is refused.
func (r *dwmReader) plain(i, depth int) bool {
	switch r.b[i] {
	case '{':
		if depth >= walkMaxDepth {
			return false
		}
		o := jsonscan.NewObj(r.d.Ends, r.b, i)
		for o.Next() {
			if !r.plain(o.Val, depth+1) {
				return false
			}
		}
	case '[':
		if depth >= walkMaxDepth {
			return false
		}
		a := jsonscan.NewArr(r.d.Ends, r.b, i)
		for a.Next() {
			if !r.plain(a.Val, depth+1) {
				return false
			}
		}
	}
	return true
}

// foldsJSON is walkFolds over a key's bytes (decoded when escaped).
func foldsJSON(key []byte, names []string) bool {
	for _, c := range key {
		if c >= utf8.RuneSelf {
			return true
		}
	}
	for _, name := range names {
		if len(name) == len(key) && strings.EqualFold(name, string(key)) {
			return true
		}
	}
	return false
}

// seen records the known fields of one object, to give up on a repeated one.
type seen uint32

func (s *seen) first(bit int) bool {
	if *s&(1<<bit) != 0 {
		return false
	}
	*s |= 1 << bit
	return true
}

// entry is walkEntry over the value at B[i].
func (r *dwmReader) entry(i int, key string) (in raw.DiscoveryInstance, kept, ok bool) {
	switch r.b[i] {
	case 'n':
		return in, false, true
	case '{':
	default:
		return in, false, false
	}
	var (
		id              uint64
		hasID, parsedID bool
		transport, card = -1, -1
		s               seen
	)
	o := jsonscan.NewObj(r.d.Ends, r.b, i)
	for o.Next() {
		k := r.d.key(&o)
		bit := -1
		switch string(k) {
		case "type":
			bit = 0
			in.Type, ok = r.str(o.Val)
		case "namespace":
			bit = 1
			in.Namespace, ok = r.str(o.Val)
		case "component":
			bit = 2
			in.Component, ok = r.str(o.Val)
		case "endpoint":
			bit = 3
			in.Endpoint, ok = r.str(o.Val)
		case "instance_id":
			bit = 4
			v, isScalar := r.scalar(o.Val)
			if ok = isScalar; ok {
				id, hasID, parsedID, ok = walkInstanceID(v)
			}
		case "transport":
			bit = 5
			transport, ok = o.Val, true
		case "card_json":
			bit = 6
			switch r.b[o.Val] {
			case 'n':
				card, ok = -1, true
			case '{':
				card, ok = o.Val, true
			default:
				ok = false
			}
		default:
			ok = !foldsJSON(k, WalkEntryFields) && r.plain(o.Val, 3)
		}
		if !ok || (bit >= 0 && !s.first(bit)) {
			return raw.DiscoveryInstance{}, false, false
		}
	}
	isModel := in.Type == "Model"
	var c walkedCard
	if card >= 0 && !r.card(card, isModel, &c) {
		return raw.DiscoveryInstance{}, false, false
	}
	if in.Type != "Endpoint" && !isModel {
		return raw.DiscoveryInstance{}, false, transport < 0 || r.plain(transport, 3)
	}
	if !hasID || !parsedID {
		return raw.DiscoveryInstance{}, false, false
	}
	in.Key, in.InstanceID = key, id
	if transport >= 0 {
		if in.Transport, ok = r.transport(transport); !ok {
			return raw.DiscoveryInstance{}, false, false
		}
	}
	if card >= 0 && isModel {
		if c.hasBlockSize && c.card.KvCacheBlockSize > 1<<31 {
			return raw.DiscoveryInstance{}, false, false
		}
		in.CardJSON = &c.card
	}
	return in, true, true
}

// transport is walkTransport over the value at B[i].
func (r *dwmReader) transport(i int) ([]raw.TransportAddress, bool) {
	if r.b[i] != '{' {
		return nil, r.plain(i, 3)
	}
	var buf [4]keyed
	ms, ok := r.members(i, buf[:0])
	if !ok {
		return nil, false
	}
	var out []raw.TransportAddress
	for _, m := range ms {
		if r.b[m.val] != '"' {
			if !r.plain(m.val, 4) {
				return nil, false
			}
			continue
		}
		s, _ := r.d.str(m.val)
		out = append(out, raw.TransportAddress{Key: m.key, Address: s})
	}
	return out, true
}

// card is walkedCard.walk over the card at B[i].
func (r *dwmReader) card(i int, model bool, c *walkedCard) bool {
	var s seen
	o := jsonscan.NewObj(r.d.Ends, r.b, i)
	for o.Next() {
		k := r.d.key(&o)
		bit := -1
		var ok bool
		switch string(k) {
		case "display_name":
			bit = 0
			c.card.DisplayName, ok = r.str(o.Val)
		case "kv_cache_block_size":
			bit = 1
			v, isScalar := r.scalar(o.Val)
			if ok = isScalar; ok {
				var n uint64
				n, c.hasBlockSize, ok = walkUint(v, 32)
				c.card.KvCacheBlockSize = int(n)
			}
		case "worker_type":
			bit = 2
			c.card.WorkerType, ok = r.str(o.Val)
		case "model_type":
			bit = 3
			if r.b[o.Val] == '"' {
				c.card.ModelType, ok = r.str(o.Val)
			} else {
				ok = r.plain(o.Val, 5)
			}
		case "runtime_config":
			bit = 4
			switch r.b[o.Val] {
			case 'n':
				ok = true
			case '{':
				c.card.RuntimeConfig = &raw.CardRuntimeConfig{}
				ok = r.runtime(o.Val, c.card.RuntimeConfig)
			}
		case "router_config":
			bit = 5
			ok = r.plain(o.Val, 5)
			if ok && model && r.b[o.Val] != 'n' {
				v, _ := r.d.tree.Value(o.Val)
				c.card.RouterConfig, ok = encodeRouterConfig(v)
			}
		default:
			ok = !foldsJSON(k, WalkCardFields) && r.plain(o.Val, 5)
		}
		if !ok || (bit >= 0 && !s.first(bit)) {
			return false
		}
	}
	return true
}

// runtime is walkRuntime over the runtime_config at B[i].
func (r *dwmReader) runtime(i int, rc *raw.CardRuntimeConfig) bool {
	rt := &rc.RuntimeConfig
	var s seen
	o := jsonscan.NewObj(r.d.Ends, r.b, i)
	for o.Next() {
		k := r.d.key(&o)
		bit := -1
		var ok bool
		v, isScalar := r.scalar(o.Val)
		switch string(k) {
		case "total_kv_blocks":
			bit = 0
			if ok = isScalar; ok {
				rt.TotalKvBlocks, ok = walkUintPtr(v)
			}
		case "max_num_seqs":
			bit = 1
			if ok = isScalar; ok {
				rt.MaxNumSeqs, ok = walkUintPtr(v)
			}
		case "max_num_batched_tokens":
			bit = 2
			if ok = isScalar; ok {
				rt.MaxNumBatchedTokens, ok = walkUintPtr(v)
			}
		case "data_parallel_start_rank":
			bit = 3
			if ok = isScalar; ok {
				var n uint64
				n, _, ok = walkUint(v, 32)
				rt.DataParallelStartRank = uint32(n)
			}
		case "data_parallel_size":
			bit = 4
			if ok = isScalar; ok {
				var n uint64
				n, rt.DataParallelSizeSet, ok = walkUint(v, 32)
				rt.DataParallelSize = uint32(n)
			}
		case "enable_eagle":
			bit = 5
			switch b := v.(type) {
			case nil:
				ok = isScalar
			case bool:
				rt.EnableEagle, ok = b, true
			}
		case "taints":
			bit = 6
			rt.Taints, ok = r.strings(o.Val)
		case "topology_domains":
			bit = 7
			rt.TopologyDomains, ok = r.stringMap(o.Val)
		case "kv_transfer_domain":
			bit = 8
			rt.KvTransferDomain, ok = r.str(o.Val)
		case "kv_transfer_enforcement":
			bit = 9
			var e string
			e, ok = r.str(o.Val)
			rt.KvTransferEnforcement = routecore.KvTransferEnforcement(e)
		case "kv_transfer_preferred_weight":
			bit = 10
			if ok = isScalar; ok {
				rt.KvTransferPreferredWeight, ok = walkFloatPtr(v)
			}
		case "stable_routing_id":
			bit = 11
			rc.StableRoutingID, ok = r.str(o.Val)
		case "kv_event_publishing_enabled":
			bit = 12
			switch b := v.(type) {
			case nil:
				rc.KvEventPublishingEnabled, ok = nil, isScalar
			case bool:
				rc.KvEventPublishingEnabled, ok = &b, true
			}
		case "disaggregated_endpoint":
			bit = 13
			ok = r.plain(o.Val, 6)
			rc.DisaggregatedEndpoint = r.b[o.Val] != 'n'
		default:
			ok = !foldsJSON(k, WalkRuntimeFields) && r.plain(o.Val, 6)
		}
		if !ok || (bit >= 0 && !s.first(bit)) {
			return false
		}
	}
	return true
}

// strings is walkStrings over the value at B[i].
func (r *dwmReader) strings(i int) ([]string, bool) {
	switch r.b[i] {
	case 'n':
		return nil, true
	case '[':
	default:
		return nil, false
	}
	out := []string{}
	a := jsonscan.NewArr(r.d.Ends, r.b, i)
	for a.Next() {
		s, ok := r.str(a.Val)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

// stringMap is walkStringMap over the value at B[i] (a key given twice keeps
// its last value, as in the decoded map).
func (r *dwmReader) stringMap(i int) (map[string]string, bool) {
	switch r.b[i] {
	case 'n':
		return nil, true
	case '{':
	default:
		return nil, false
	}
	out := map[string]string{}
	o := jsonscan.NewObj(r.d.Ends, r.b, i)
	for o.Next() {
		s, ok := r.str(o.Val)
		if !ok {
			return nil, false
		}
		out[r.d.mapKey(&o)] = s
	}
	return out, true
}
