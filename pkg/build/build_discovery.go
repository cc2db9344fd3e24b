package build

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/cmdline"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// bldDWM is one DynamoWorkerMetadata object.
type bldDWM struct {
	u *raw.DWM
}

// bldInstance is one decoded DiscoveryInstance ("Endpoint" or "Model" entry)
// with the facts used to match it to a pod.
type bldInstance struct {
	inst    model.Instance
	hasCard bool
	// key is the map key (DWM) or etcd key it came from.
	key string
	// dynNamespace and component are the Dynamo namespace and component.
	dynNamespace, component string
	// host is the IP in the endpoint's transport address, when it has one.
	host string
	// stableID is runtime_config.stable_routing_id (e.g. the pod name).
	stableID string
	// legacyPrefill names the legacy card signal that marks a prefill worker
	// (model_type Prefill, runtime_config.disaggregated_endpoint), when present.
	legacyPrefill string
}

type bldDiscoveryWire struct {
	Type       string          `json:"type"`
	Namespace  string          `json:"namespace"`
	Component  string          `json:"component"`
	Endpoint   string          `json:"endpoint"`
	InstanceID json.RawMessage `json:"instance_id"`
	Transport  json.RawMessage `json:"transport"`
	CardJSON   json.RawMessage `json:"card_json"`
}

type bldCardWire struct {
	DisplayName      string          `json:"display_name"`
	KvCacheBlockSize json.RawMessage `json:"kv_cache_block_size"`
	WorkerType       json.RawMessage `json:"worker_type"`
	ModelType        json.RawMessage `json:"model_type"`
	RuntimeConfig    json.RawMessage `json:"runtime_config"`
	RouterConfig     json.RawMessage `json:"router_config"`
}

func bldIsNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || bytes.Equal(t, []byte("null"))
}

// bldParseU64 parses a JSON number or decimal string as a u64 without float64.
func bldParseU64(raw json.RawMessage) (uint64, error) {
	t := bytes.TrimSpace(raw)
	if len(t) > 0 && t[0] == '"' {
		var s string
		if err := json.Unmarshal(t, &s); err != nil {
			return 0, err
		}
		t = []byte(s)
	}
	v, err := strconv.ParseUint(string(t), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not an unsigned 64-bit integer", string(t))
	}
	return v, nil
}

// decodeDWM decodes one DynamoWorkerMetadata's spec.data (DiscoveryMetadata):
// the instances the source read, or, when it kept spec.data as JSON, every
// map walked and its entries dispatched on "type".
func (bd *bldBuilder) decodeDWM(d *bldDeployment, dw *bldDWM) []*bldInstance {
	u := dw.u
	if out, ok := bd.dwmFast[u]; ok {
		delete(bd.dwmFast, u)
		return out
	}
	ref := "DynamoWorkerMetadata " + u.Namespace + "/" + u.Name
	data := u.Spec.Data
	if data == nil {
		bd.note(d.src, d.out.Key(), "%s has no spec.data; the worker is not discoverable and its instances are not shown", ref)
		return nil
	}
	source := "dwm/" + u.Name
	if data.JSON == nil {
		return bldDiscoveryInstances(data.Instances, source)
	}
	enc, err := json.Marshal(data.JSON)
	if err != nil {
		bd.note(d.src, d.out.Key(), "%s: spec.data could not be encoded (%v); skipped: its instances are not shown", ref, err)
		return nil
	}
	if out, ok := bldFastDWM(enc, source); ok {
		return out
	}
	var maps map[string]json.RawMessage
	if err := json.Unmarshal(enc, &maps); err != nil {
		bd.note(d.src, d.out.Key(), "%s: spec.data is not a JSON object; skipped: its instances, role and runtime config are unknown", ref)
		return nil
	}
	var out []*bldInstance
	for _, mk := range bldSortedKeys(maps) {
		if bldIsNull(maps[mk]) {
			continue
		}
		var entries map[string]json.RawMessage
		if err := json.Unmarshal(maps[mk], &entries); err != nil {
			continue // not a map of instances (older or newer field): ignored
		}
		for _, ek := range bldSortedKeys(entries) {
			bi, err := bd.decodeInstance(entries[ek], ek, source)
			if err != nil {
				bd.note(d.src, d.out.Key(), "%s: entry %s.%q could not be read (%v); skipped: that instance is not shown", ref, mk, ek, err)
				continue
			}
			if bi != nil {
				out = append(out, bi)
			}
		}
	}
	return out
}

// bldDiscoveryInstances are the instances of a DiscoveryMetadata the source
// read (raw.DiscoveryMetadata.Instances): what bldFastDWM reads of the same
// entries.
func bldDiscoveryInstances(insts []raw.DiscoveryInstance, source string) []*bldInstance {
	if len(insts) == 0 {
		return nil
	}
	out := make([]*bldInstance, len(insts))
	for i := range insts {
		in := &insts[i]
		bi := &bldInstance{key: in.Key, dynNamespace: in.Namespace, component: in.Component}
		bi.inst.ID, bi.inst.Source = routecore.WorkerID(in.InstanceID), source
		if in.Namespace != "" || in.Component != "" || in.Endpoint != "" {
			bi.inst.Endpoint = in.Namespace + "/" + in.Component + "/" + in.Endpoint
		}
		for _, a := range in.Transport {
			if ip := bldAddrIP(a.Address); ip != "" {
				bi.host = ip
				break
			}
		}
		if c := in.CardJSON; c != nil {
			bi.hasCard = true
			bi.inst.Model = c.DisplayName
			bi.inst.BlockSize = c.KvCacheBlockSize
			bi.inst.WorkerType = c.WorkerType
			if strings.Contains(c.ModelType, "Prefill") {
				bi.legacyPrefill = "card model_type"
			}
			if rc := c.RuntimeConfig; rc != nil {
				bi.inst.Runtime = rc.RuntimeConfig
				bi.stableID = rc.StableRoutingID
				bi.inst.KvEventPublishing = rc.KvEventPublishingEnabled
				if rc.DisaggregatedEndpoint && bi.legacyPrefill == "" {
					bi.legacyPrefill = "card disaggregated_endpoint"
				}
			}
			bi.inst.RouterConfig = c.RouterConfig
		}
		out[i] = bi
	}
	return out
}

// decodeDWMsAhead decodes, on every core, the DWMs whose spec.data the source
// kept as JSON and that bldFastDWM can decode (it has no notes to make);
// decodeDWM then takes them from bd.dwmFast and decodes only the rest itself.
func (bd *bldBuilder) decodeDWMsAhead(byPod map[string][]*bldDWM) {
	var dwms []*raw.DWM
	for _, list := range byPod {
		for _, dw := range list {
			if data := dw.u.Spec.Data; data != nil && data.JSON != nil {
				dwms = append(dwms, dw.u)
			}
		}
	}
	if len(dwms) < bldParallelMin {
		return
	}
	type result struct {
		out []*bldInstance
		ok  bool
	}
	res := make([]result, len(dwms))
	bldParallel(len(dwms), func(i int) {
		u := dwms[i]
		data, err := json.Marshal(u.Spec.Data.JSON)
		if err != nil {
			return
		}
		res[i].out, res[i].ok = bldFastDWM(data, "dwm/"+u.Name)
	})
	if bd.dwmFast == nil {
		bd.dwmFast = make(map[*raw.DWM][]*bldInstance, len(dwms))
	}
	for i, u := range dwms {
		if res[i].ok {
			bd.dwmFast[u] = res[i].out
		}
	}
}

// decodeInstance decodes a DiscoveryInstance; it returns nil for types other
// than Endpoint and Model. key is the map or etcd key (its last hex segment is
// the instance id when the JSON has none).
func (bd *bldBuilder) decodeInstance(raw json.RawMessage, key, source string) (*bldInstance, error) {
	var w bldDiscoveryWire
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, err
	}
	if w.Type != "Endpoint" && w.Type != "Model" {
		return nil, nil
	}
	bi := &bldInstance{key: key, dynNamespace: w.Namespace, component: w.Component}
	bi.inst.Source = source
	if w.Namespace != "" || w.Component != "" || w.Endpoint != "" {
		bi.inst.Endpoint = w.Namespace + "/" + w.Component + "/" + w.Endpoint
	}
	switch {
	case !bldIsNull(w.InstanceID):
		id, err := bldParseU64(w.InstanceID)
		if err != nil {
			return nil, fmt.Errorf("instance_id: %w", err)
		}
		bi.inst.ID = routecore.WorkerID(id)
	default:
		id, ok := bldKeyInstanceID(key)
		if !ok {
			return nil, fmt.Errorf("no instance_id and none in the key")
		}
		bi.inst.ID = routecore.WorkerID(id)
	}
	if !bldIsNull(w.Transport) {
		bi.host = bldTransportHost(w.Transport)
	}
	if w.Type == "Model" && !bldIsNull(w.CardJSON) {
		if err := bldDecodeCard(w.CardJSON, bi); err != nil {
			return nil, fmt.Errorf("card_json: %w", err)
		}
	}
	return bi, nil
}

// bldKeyInstanceID reads the hex instance id from a key ns/comp/ep/<hex>[/…].
func bldKeyInstanceID(key string) (uint64, bool) {
	parts := strings.Split(key, "/")
	if len(parts) < 4 {
		return 0, false
	}
	v, err := strconv.ParseUint(parts[3], 16, 64)
	return v, err == nil
}

// bldTransportHost extracts the IP from an externally tagged transport
// ({"tcp": "10.0.0.1:4000/…"}, {"http": "http://10.0.0.1:8000/…"}); "" when the
// transport carries none (NATS subjects).
func bldTransportHost(raw json.RawMessage) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return ""
	}
	for _, k := range bldSortedKeys(m) {
		var s string
		if json.Unmarshal(m[k], &s) != nil {
			continue
		}
		if ip := bldAddrIP(s); ip != "" {
			return ip
		}
	}
	return ""
}

// bldAddrIP is the IP in one transport address ("10.0.0.1:4000/…",
// "http://[fd00::1]:8000/…"), "" when it names none; shared with the DWM
// walker (bldWalkTransport) so both read addresses alike.
func bldAddrIP(s string) string {
	if _, rest, ok := strings.Cut(s, "://"); ok {
		s = rest
	}
	if i := strings.IndexByte(s, '/'); i >= 0 {
		s = s[:i]
	}
	if h, _, err := net.SplitHostPort(s); err == nil {
		s = h
	}
	s = strings.Trim(s, "[]")
	if ip := net.ParseIP(s); ip != nil {
		return ip.String()
	}
	return ""
}

// bldDecodeCard reads the model card fields the model keeps.
func bldDecodeCard(raw json.RawMessage, bi *bldInstance) error {
	var c bldCardWire
	if err := json.Unmarshal(raw, &c); err != nil {
		return err
	}
	bi.hasCard = true
	bi.inst.Model = c.DisplayName
	if !bldIsNull(c.KvCacheBlockSize) {
		v, err := bldParseU64(c.KvCacheBlockSize)
		if err != nil || v > 1<<31 {
			return fmt.Errorf("kv_cache_block_size %s is not a block size", string(c.KvCacheBlockSize))
		}
		bi.inst.BlockSize = int(v)
	}
	if !bldIsNull(c.WorkerType) {
		if err := json.Unmarshal(c.WorkerType, &bi.inst.WorkerType); err != nil {
			return fmt.Errorf("worker_type must be a string")
		}
	}
	var modelType string
	if json.Unmarshal(c.ModelType, &modelType) == nil && strings.Contains(modelType, "Prefill") {
		bi.legacyPrefill = "card model_type"
	}
	if !bldIsNull(c.RuntimeConfig) {
		if err := json.Unmarshal(c.RuntimeConfig, &bi.inst.Runtime); err != nil {
			return fmt.Errorf("runtime_config: %w", err)
		}
		var extra struct {
			StableRoutingID       string          `json:"stable_routing_id"`
			DisaggregatedEndpoint json.RawMessage `json:"disaggregated_endpoint"`
		}
		_ = json.Unmarshal(c.RuntimeConfig, &extra)
		bi.stableID = extra.StableRoutingID
		// Dynamo's Option<bool>: a value that is neither a bool nor null makes
		// the card undecodable, as a bad enable_eagle does.
		var kv struct {
			Enabled *bool `json:"kv_event_publishing_enabled"`
		}
		if err := json.Unmarshal(c.RuntimeConfig, &kv); err != nil {
			return fmt.Errorf("runtime_config: %w", err)
		}
		bi.inst.KvEventPublishing = kv.Enabled
		if !bldIsNull(extra.DisaggregatedEndpoint) && bi.legacyPrefill == "" {
			bi.legacyPrefill = "card disaggregated_endpoint"
		}
	}
	if !bldIsNull(c.RouterConfig) {
		var buf bytes.Buffer
		if json.Compact(&buf, c.RouterConfig) == nil {
			bi.inst.RouterConfig = buf.Bytes()
		}
	}
	return nil
}

// bldMergeInstances merges the Endpoint and Model entries of one (id, endpoint)
// into one Instance and sorts by id, then endpoint.
func bldMergeInstances(bis []*bldInstance) []model.Instance {
	if len(bis) == 0 {
		return nil
	}
	type k struct {
		id routecore.WorkerID
		ep string
	}
	byKey := map[k]*model.Instance{}
	carded := map[k]bool{}
	var order []k
	for _, bi := range bis {
		kk := k{bi.inst.ID, bi.inst.Endpoint}
		cur, ok := byKey[kk]
		switch {
		case !ok:
			in := bi.inst
			byKey[kk] = &in
			order = append(order, kk)
		case bi.hasCard && !carded[kk]:
			// The Model entry carries the card: it replaces the bare Endpoint.
			*cur = bi.inst
		}
		carded[kk] = carded[kk] || bi.hasCard
	}
	out := make([]model.Instance, 0, len(order))
	for _, kk := range order {
		out = append(out, *byKey[kk])
	}
	slices.SortStableFunc(out, func(a, b model.Instance) int {
		return cmp.Or(cmp.Compare(a.ID, b.ID), cmp.Compare(a.Endpoint, b.Endpoint))
	})
	return out
}

// bldEtcdState is the decoded etcd discovery state.
type bldEtcdState struct {
	insts []*bldInstance
}

// decodeEtcd reads v1/instances/ and v1/mdc/ entries; other keys are ignored.
func (bd *bldBuilder) decodeEtcd() *bldEtcdState {
	st := &bldEtcdState{}
	if len(bd.b.Etcd) == 0 {
		return st
	}
	kvs := slices.Clone(bd.b.Etcd)
	slices.SortStableFunc(kvs, func(a, b raw.EtcdKeyValue) int { return cmp.Compare(a.Key, b.Key) })
	legacy := 0
	for _, kv := range kvs {
		var rel string
		switch {
		case strings.HasPrefix(kv.Key, "v1/instances/"):
			rel = strings.TrimPrefix(kv.Key, "v1/instances/")
		case strings.HasPrefix(kv.Key, "v1/mdc/"):
			rel = strings.TrimPrefix(kv.Key, "v1/mdc/")
		case strings.HasPrefix(kv.Key, "instances/"), strings.HasPrefix(kv.Key, "models/"):
			legacy++
			continue
		default:
			continue
		}
		bi, err := bd.decodeInstance(json.RawMessage(kv.Value), rel, "etcd/"+kv.Key)
		if err != nil {
			bd.note(model.SourceEtcd, "", "etcd key %s could not be read (%v); skipped: that instance is not shown", kv.Key, err)
			continue
		}
		if bi == nil {
			continue
		}
		if id, ok := bldKeyInstanceID(rel); ok && routecore.WorkerID(id) != bi.inst.ID {
			bd.note(model.SourceEtcd, "", "etcd key %s names instance %x but its value says %d; the value's id is used", kv.Key, id, uint64(bi.inst.ID))
		}
		st.insts = append(st.insts, bi)
	}
	if legacy > 0 {
		bd.info(model.SourceEtcd, "", "%d etcd keys use the pre-v1 layout (instances/, models/), which is not read; workers of such old deployments are not shown from etcd", legacy)
	}
	return st
}

// attachEtcd matches etcd instances to pods (by runtime_config.stable_routing_id
// naming the pod, else by the pod IP in the endpoint's transport); all entries
// with the id of a matched entry follow it (one lease is one process).
// Unmatched instances become workers without a pod in the deployment whose
// Dynamo namespace they use.
func (bd *bldBuilder) attachEtcd(deps []*bldDeployment) {
	insts := bd.etcd.insts
	if len(insts) == 0 {
		return
	}
	type podRef struct {
		d *bldDeployment
		w *bldWorker
	}
	byName := map[string][]podRef{}
	byIP := map[string][]podRef{}
	for _, d := range deps {
		for _, w := range d.workers {
			if w.p == nil {
				continue
			}
			byName[w.p.pod.Name] = append(byName[w.p.pod.Name], podRef{d, w})
			ips := map[string]bool{}
			if ip := net.ParseIP(w.p.pod.Status.PodIP); ip != nil {
				ips[ip.String()] = true
			}
			for _, pip := range w.p.pod.Status.PodIPs {
				if ip := net.ParseIP(pip.IP); ip != nil {
					ips[ip.String()] = true
				}
			}
			for ip := range ips {
				byIP[ip] = append(byIP[ip], podRef{d, w})
			}
		}
	}
	byID := map[routecore.WorkerID]*podRef{}
	for _, bi := range insts {
		if _, done := byID[bi.inst.ID]; done {
			continue
		}
		var cands []podRef
		if bi.stableID != "" {
			cands = byName[bi.stableID]
		}
		if len(cands) == 0 && bi.host != "" {
			cands = byIP[bi.host]
		}
		if len(cands) == 1 {
			byID[bi.inst.ID] = &cands[0]
		}
	}
	// Unmatched ids: a worker without a pod, in the deployment whose Dynamo
	// namespace the instance uses.
	orphans := map[*bldDeployment]map[routecore.WorkerID]*bldWorker{}
	var unplaced []string
	for _, bi := range insts {
		if ref := byID[bi.inst.ID]; ref != nil {
			ref.w.insts = append(ref.w.insts, bi)
			continue
		}
		var owner *bldDeployment
		for _, d := range deps {
			ns := d.dynNamespaces
			if ns[bi.dynNamespace] || (len(ns) == 0 && bi.dynNamespace == d.out.Namespace+"-"+d.out.Name) {
				if owner != nil {
					owner = nil
					break
				}
				owner = d
			}
		}
		if owner == nil {
			unplaced = append(unplaced, fmt.Sprintf("%d (%s)", uint64(bi.inst.ID), bi.inst.Endpoint))
			continue
		}
		if orphans[owner] == nil {
			orphans[owner] = map[routecore.WorkerID]*bldWorker{}
		}
		w := orphans[owner][bi.inst.ID]
		if w == nil {
			w = &bldWorker{ctype: "worker", comp: owner.componentForDynamo(bi.component)}
			w.out = model.Worker{Namespace: owner.out.Namespace, Component: bi.component,
				Replica: "instance-" + strconv.FormatUint(uint64(bi.inst.ID), 10), Leader: true, Ready: true}
			if w.comp != nil {
				w.out.Component = w.comp.c.Name
				w.ctype = cmp.Or(strings.ToLower(w.comp.c.Type), "worker")
			}
			w.env = bd.workerEnv(owner, w)
			if w.comp != nil {
				w.argv = cmdline.Argv(w.comp.command, w.comp.args, w.env)
			}
			orphans[owner][bi.inst.ID] = w
			owner.workers = append(owner.workers, w)
		}
		w.insts = append(w.insts, bi)
	}
	for _, d := range deps {
		if n := len(orphans[d]); n > 0 {
			bd.note(model.SourceEtcd, d.out.Key(), "%d etcd instance(s) of %s could not be matched to a pod (no runtime_config.stable_routing_id naming a pod and no pod IP in the transport address); they are shown as workers without a pod, assumed ready because their lease is alive: their node, GPUs and topology labels are unknown", n, bldDGDRef(d))
		}
	}
	if len(unplaced) > 0 {
		slices.Sort(unplaced)
		unplaced = slices.Compact(unplaced)
		bd.note(model.SourceEtcd, "", "%d etcd instance(s) belong to no deployment in scope (their Dynamo namespace matches none): %s; they are not shown", len(unplaced), bldExamples(unplaced))
	}
}

// componentForDynamo finds the DGD component a Dynamo component name belongs to
// (Dynamo lower-cases component names; v1beta1 types prefill/decode are also
// used as component names).
func (d *bldDeployment) componentForDynamo(name string) *bldComponent {
	if c := d.component(name); c != nil {
		return c
	}
	for _, k := range bldSortedKeys(d.comps) {
		c := d.comps[k]
		if strings.EqualFold(c.c.Type, name) && (name == "prefill" || name == "decode") {
			return c
		}
	}
	return nil
}

// bldExamples joins up to five items and says how many more there are.
func bldExamples(items []string) string {
	if len(items) <= 5 {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:5], ", ") + fmt.Sprintf(", … (%d more)", len(items)-5)
}

// bldFastEntry, bldFastCard and bldFastRuntime decode a well-formed
// DiscoveryMetadata in one pass; bldFastDWM falls back (ok false) to the
// tolerant entry-by-entry decoder on any error, which then explains it.
type bldFastEntry struct {
	Type       string          `json:"type"`
	Namespace  string          `json:"namespace"`
	Component  string          `json:"component"`
	Endpoint   string          `json:"endpoint"`
	InstanceID *json.Number    `json:"instance_id"`
	Transport  json.RawMessage `json:"transport"`
	CardJSON   *bldFastCard    `json:"card_json"`
}

type bldFastCard struct {
	DisplayName      string          `json:"display_name"`
	KvCacheBlockSize *uint32         `json:"kv_cache_block_size"`
	WorkerType       *string         `json:"worker_type"`
	ModelType        json.RawMessage `json:"model_type"`
	RuntimeConfig    *bldFastRuntime `json:"runtime_config"`
	RouterConfig     json.RawMessage `json:"router_config"`
}

type bldFastRuntime struct {
	routecore.RuntimeConfig
	StableRoutingID          string          `json:"stable_routing_id"`
	DisaggregatedEndpoint    json.RawMessage `json:"disaggregated_endpoint"`
	KvEventPublishingEnabled *bool           `json:"kv_event_publishing_enabled"`
}

// UnmarshalJSON decodes the runtime config and the three fields routecore does
// not keep in one pass (the embedded RuntimeConfig's own UnmarshalJSON would
// otherwise be promoted and skip them), recording as it does whether
// data_parallel_size was present.
func (r *bldFastRuntime) UnmarshalJSON(data []byte) error {
	type plainRC routecore.RuntimeConfig
	var v struct {
		plainRC
		DataParallelSize         *uint32         `json:"data_parallel_size"`
		StableRoutingID          string          `json:"stable_routing_id"`
		DisaggregatedEndpoint    json.RawMessage `json:"disaggregated_endpoint"`
		KvEventPublishingEnabled *bool           `json:"kv_event_publishing_enabled"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	r.RuntimeConfig = routecore.RuntimeConfig(v.plainRC)
	r.DataParallelSize, r.DataParallelSizeSet = 0, v.DataParallelSize != nil
	if v.DataParallelSize != nil {
		r.DataParallelSize = *v.DataParallelSize
	}
	r.StableRoutingID, r.DisaggregatedEndpoint = v.StableRoutingID, v.DisaggregatedEndpoint
	r.KvEventPublishingEnabled = v.KvEventPublishingEnabled
	return nil
}

func bldFastDWM(data []byte, source string) (out []*bldInstance, ok bool) {
	var maps map[string]map[string]*bldFastEntry
	if json.Unmarshal(data, &maps) != nil {
		return nil, false
	}
	for _, mk := range bldSortedKeys(maps) {
		entries := maps[mk]
		for _, ek := range bldSortedKeys(entries) {
			e := entries[ek]
			if e == nil || e.Type != "Endpoint" && e.Type != "Model" {
				continue
			}
			if e.InstanceID == nil {
				return nil, false
			}
			id, err := strconv.ParseUint(string(*e.InstanceID), 10, 64)
			if err != nil {
				return nil, false
			}
			bi := &bldInstance{key: ek, dynNamespace: e.Namespace, component: e.Component}
			bi.inst.ID, bi.inst.Source = routecore.WorkerID(id), source
			if e.Namespace != "" || e.Component != "" || e.Endpoint != "" {
				bi.inst.Endpoint = e.Namespace + "/" + e.Component + "/" + e.Endpoint
			}
			if !bldIsNull(e.Transport) {
				bi.host = bldTransportHost(e.Transport)
			}
			if c := e.CardJSON; e.Type == "Model" && c != nil {
				if c.KvCacheBlockSize != nil && *c.KvCacheBlockSize > 1<<31 {
					return nil, false
				}
				bi.hasCard = true
				bi.inst.Model = c.DisplayName
				if c.KvCacheBlockSize != nil {
					bi.inst.BlockSize = int(*c.KvCacheBlockSize)
				}
				if c.WorkerType != nil {
					bi.inst.WorkerType = *c.WorkerType
				}
				var modelType string
				if json.Unmarshal(c.ModelType, &modelType) == nil && strings.Contains(modelType, "Prefill") {
					bi.legacyPrefill = "card model_type"
				}
				if rc := c.RuntimeConfig; rc != nil {
					bi.inst.Runtime = rc.RuntimeConfig
					bi.stableID = rc.StableRoutingID
					bi.inst.KvEventPublishing = rc.KvEventPublishingEnabled
					if !bldIsNull(rc.DisaggregatedEndpoint) && bi.legacyPrefill == "" {
						bi.legacyPrefill = "card disaggregated_endpoint"
					}
				}
				if !bldIsNull(c.RouterConfig) {
					var buf bytes.Buffer
					if json.Compact(&buf, c.RouterConfig) == nil {
						bi.inst.RouterConfig = buf.Bytes()
					}
				}
			}
			out = append(out, bi)
		}
	}
	return out, true
}
