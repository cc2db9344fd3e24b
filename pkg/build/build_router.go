package build

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/cmdline"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// Frontend metric names Build reads (discovery-state.md §3.2).
const (
	bldMetricDecodeBlocks   = "dynamo_frontend_worker_active_decode_blocks"
	bldMetricPrefillTokens  = "dynamo_frontend_worker_active_prefill_tokens"
	bldMetricOverheadPrefix = "dynamo_router_overhead_"
)

// src is the source of a worker's data for notes.
func (w *bldWorker) src(d *bldDeployment) model.SourceKind {
	if w.p == nil {
		return model.SourceEtcd
	}
	return d.src
}

// finishDeployment completes a deployment once every instance is attached.
func (bd *bldBuilder) finishDeployment(d *bldDeployment) {
	for _, w := range d.workers {
		w.out.Instances = bldMergeInstances(w.insts)
	}
	bd.finishWorkers(d)
	bd.buildFrontends(d)
	bd.discoveryBackend(d)
	bd.dynamoNamespace(d)
	bd.routerConfig(d)
	bd.overrides(d)
	bd.workerRouterArgs(d)
	bd.busyThresholds(d)
	bd.loads(d)
	bd.deploymentEvents(d)
	bd.pendingFromEvents(d)

	slices.SortStableFunc(d.workers, func(a, b *bldWorker) int {
		return cmp.Or(cmp.Compare(a.out.Pod, b.out.Pod), cmp.Compare(a.out.Replica, b.out.Replica))
	})
	if len(d.workers) > 0 {
		d.out.Workers = make([]model.Worker, 0, len(d.workers))
	}
	for _, w := range d.workers {
		d.out.Workers = append(d.out.Workers, w.out)
	}
	slices.SortFunc(d.out.Frontends, func(a, b model.Frontend) int { return cmp.Compare(a.Pod, b.Pod) })
}

// discoveryBackend reads the backend from the pods' DYN_DISCOVERY_BACKEND (what
// the processes use), else the DGD annotation, else the pod label, else what was
// found (DWM objects: kubernetes; etcd entries: etcd).
func (bd *bldBuilder) discoveryBackend(d *bldDeployment) {
	norm := func(s string) string {
		s = strings.ToLower(strings.TrimSpace(s))
		if s == "kv_store" {
			return "etcd"
		}
		return s
	}
	ann := norm(d.u.Annotations[bldAnnDiscoveryBackend])
	env, label := "", ""
	for _, p := range d.pods {
		if p.main != nil && env == "" {
			m, _ := p.mainEnv()
			env = norm(m["DYN_DISCOVERY_BACKEND"])
		}
		if label == "" {
			label = norm(p.pod.Labels[bldLabelDiscoveryBackend])
		}
	}
	if env == "" {
		m, _ := bldEnvMap(d.env)
		env = norm(m["DYN_DISCOVERY_BACKEND"])
	}
	if env != "" && ann != "" && env != ann {
		bd.note(d.src, d.out.Key(), "%s is annotated %s=%s but its pods run with DYN_DISCOVERY_BACKEND=%s; the pods' value is used", bldDGDRef(d), bldAnnDiscoveryBackend, ann, env)
	}
	d.out.DiscoveryBackend = cmp.Or(env, ann, label)
	if d.out.DiscoveryBackend != "" {
		return
	}
	for _, w := range d.workers {
		for _, in := range w.out.Instances {
			switch {
			case strings.HasPrefix(in.Source, "dwm/"):
				d.out.DiscoveryBackend = "kubernetes"
				return
			case strings.HasPrefix(in.Source, "etcd/"):
				d.out.DiscoveryBackend = "etcd"
				return
			}
		}
	}
}

// dynamoNamespace is the most common nvidia.com/dynamo-namespace label of the
// deployment's pods (ties: the smallest), else DYN_NAMESPACE, else the spec's.
func (bd *bldBuilder) dynamoNamespace(d *bldDeployment) {
	count := map[string]int{}
	for _, p := range d.pods {
		if v := p.pod.Labels[bldLabelDynamoNamespace]; v != "" {
			count[v]++
		}
	}
	if len(count) == 0 {
		for _, p := range d.pods {
			if p.main != nil {
				m, _ := p.mainEnv()
				if v := m["DYN_NAMESPACE"]; v != "" {
					count[v]++
				}
			}
		}
	}
	best := ""
	for _, k := range bldSortedKeys(count) {
		if best == "" || count[k] > count[best] {
			best = k
		}
	}
	d.out.DynamoNamespace = cmp.Or(best, d.specDynNamespace)
}

// routerConfig reads the frontend's router settings from its pod (command, args
// and env, with the DGD's env as fallback), else from the DGD's frontend spec.
func (bd *bldBuilder) routerConfig(d *bldDeployment) {
	r := &d.out.Router
	var argv []string
	var lookup func(string) (string, bool)
	var from string
	var unknownEnv []string
	dgdEnv, dgdUnknown := bldEnvMap(d.env)
	var frontComp *bldComponent
	for _, k := range bldSortedKeys(d.comps) {
		if strings.EqualFold(d.comps[k].c.Type, "frontend") {
			frontComp = d.comps[k]
			break
		}
	}
	var chosen *bldPod
	for _, p := range d.frontends {
		if p.main != nil && (chosen == nil || (!bd.podReady(chosen) && bd.podReady(p))) {
			chosen = p
		}
	}
	switch {
	case chosen != nil:
		podEnv, podUnknown := chosen.mainEnv()
		comp := d.component(chosen.pod.Labels[bldLabelComponent])
		var compEnv map[string]string
		if comp != nil {
			compEnv, _ = bldEnvMap(comp.env)
		}
		lookup = bldLookup(podEnv, compEnv, dgdEnv)
		argv = cmdline.Argv(chosen.main.Command, chosen.main.Args, lookup)
		from = "frontend pod " + chosen.pod.Name
		unknownEnv = podUnknown
		if len(chosen.main.EnvFrom) > 0 {
			r.Warnings = append(r.Warnings, fmt.Sprintf("frontend pod %s takes env from ConfigMaps/Secrets (envFrom), which are not read; router settings set there are not seen", chosen.pod.Name))
		}
		for _, p := range d.frontends {
			if p == chosen || p.main == nil {
				continue
			}
			if !reflect.DeepEqual(p.main.Command, chosen.main.Command) || !reflect.DeepEqual(p.main.Args, chosen.main.Args) || !reflect.DeepEqual(p.main.Env, chosen.main.Env) {
				r.Warnings = append(r.Warnings, fmt.Sprintf("frontend pods %s and %s have different command lines or env; the settings of %s are shown", chosen.pod.Name, p.pod.Name, chosen.pod.Name))
			}
		}
	case frontComp != nil:
		compEnv, compUnknown := bldEnvMap(frontComp.env)
		lookup = bldLookup(compEnv, dgdEnv)
		argv = cmdline.Argv(frontComp.command, frontComp.args, lookup)
		from = "DGD component " + frontComp.c.Name + " spec (no frontend pod)"
		unknownEnv = compUnknown
	default:
		if len(d.pods) > 0 || len(d.comps) > 0 {
			r.Warnings = append(r.Warnings, "no frontend pod or frontend component found; the router configuration is unknown")
		}
		return
	}
	unknownEnv = append(unknownEnv, dgdUnknown...)
	for _, name := range unknownEnv {
		if strings.HasPrefix(name, "DYN_ROUTER") || strings.HasPrefix(name, "DYN_ACTIVE_") {
			r.Warnings = append(r.Warnings, fmt.Sprintf("%s is set from a Secret, ConfigMap or field reference, which is not read; its value is not applied", name))
		}
	}
	set, err := routecore.ParseFrontendSettings(argv, lookup)
	source := from + " (defaults ← env ← args)"
	if err != nil {
		bd.note(d.src, d.out.Key(), "%s: the router flags could not be parsed (%v); only its env and the defaults are used", from, err)
		r.Warnings = append(r.Warnings, fmt.Sprintf("router flags ignored: %v", err))
		set, err = routecore.ParseFrontendSettings(nil, lookup)
		source = from + " (defaults ← env; args unparsable)"
		if err != nil {
			bd.note(d.src, d.out.Key(), "%s: the router env could not be applied either (%v); Dynamo's defaults are shown", from, err)
			set, _ = routecore.ParseFrontendSettings(nil, nil)
			source = "defaults (" + from + " unparsable)"
		}
	}
	r.Warnings = append(r.Warnings, set.Warnings...)
	r.Mode, r.Config, r.ConfigSource = set.RouterMode, set.Config, source
	r.Thresholds, r.ThresholdsSource = set.Thresholds, from+" (args/env)"
	switch {
	case bldHasFlag(argv, "--router-mode"):
		r.ModeSource = from + " args"
	case bldHasFlag(argv, "--load-aware"):
		r.ModeSource = from + " args (--load-aware)"
	case bldHasEnv(lookup, "DYN_ROUTER_MODE"):
		r.ModeSource = from + " env DYN_ROUTER_MODE"
	case bldHasEnv(lookup, "DYN_ROUTER_LOAD_AWARE"):
		r.ModeSource = from + " env DYN_ROUTER_LOAD_AWARE"
	default:
		r.ModeSource = "default"
	}
}

func bldHasFlag(argv []string, flag string) bool {
	return slices.ContainsFunc(argv, func(a string) bool { return a == flag || strings.HasPrefix(a, flag+"=") })
}

func bldHasEnv(lookup func(string) (string, bool), name string) bool {
	if lookup == nil {
		return false
	}
	_, ok := lookup(name)
	return ok
}

// overrides collects the router_config blocks worker cards publish, one per
// component.
func (bd *bldBuilder) overrides(d *bldDeployment) {
	r := &d.out.Router
	byComp := map[string]*model.RouterOverride{}
	for _, w := range d.workers {
		for _, in := range w.out.Instances {
			if len(in.RouterConfig) == 0 {
				continue
			}
			comp := cmp.Or(w.out.Component, bldEndpointComponent(in.Endpoint))
			doc, err := routecore.DecodeRouterConfigJSON(in.RouterConfig)
			if err != nil {
				bd.note(w.src(d), d.out.Key(), "router_config of instance %s (%s) could not be read (%v); the frontend's configuration is assumed for component %s", in.ID, bldWorkerRef(w), err, comp)
				continue
			}
			if len(doc.Unknown) > 0 {
				r.Warnings = append(r.Warnings, fmt.Sprintf("router_config of component %s has fields this version does not know: %s", comp, strings.Join(doc.Unknown, ", ")))
			}
			o := &model.RouterOverride{Component: comp, Mode: doc.RouterMode, Config: doc.Config}
			if prev := byComp[comp]; prev != nil {
				if !reflect.DeepEqual(prev, o) {
					r.Warnings = append(r.Warnings, fmt.Sprintf("workers of component %s publish different router_config blocks; the first (by pod and instance id) is shown", comp))
				}
				continue
			}
			byComp[comp] = o
		}
	}
	for _, k := range bldSortedKeys(byComp) {
		r.WorkerSetOverrides = append(r.WorkerSetOverrides, *byComp[k])
	}
	r.Warnings = slices.Compact(r.Warnings)
}

func bldEndpointComponent(ep string) string {
	parts := strings.Split(ep, "/")
	if len(parts) >= 2 {
		return parts[1]
	}
	return ""
}

type bldBusyEntry struct {
	Model                            string          `json:"model"`
	ActiveDecodeBlocksThreshold      *float64        `json:"active_decode_blocks_threshold"`
	ActivePrefillTokensThreshold     json.RawMessage `json:"active_prefill_tokens_threshold"`
	ActivePrefillTokensThresholdFrac *float64        `json:"active_prefill_tokens_threshold_frac"`
}

// busyThresholds replaces the flag/env thresholds by the frontend's live
// GET /busy_threshold answer when the bundle has one.
func (bd *bldBuilder) busyThresholds(d *bldDeployment) {
	for _, bt := range bd.b.BusyThresholds {
		if bt.Namespace != d.out.Namespace || bt.Deployment != d.out.Name {
			continue
		}
		what := cmp.Or(bt.Source, "frontend /busy_threshold")
		var wire struct {
			Thresholds []bldBusyEntry `json:"thresholds"`
		}
		if err := json.Unmarshal([]byte(bt.JSON), &wire); err != nil {
			bd.note(model.SourceFrontend, d.out.Key(), "%s answer is not the expected JSON (%v); the thresholds from the frontend's flags and env are shown", what, err)
			return
		}
		if len(wire.Thresholds) == 0 {
			d.out.Router.Warnings = append(d.out.Router.Warnings, fmt.Sprintf("%s lists no model; the thresholds from the frontend's flags and env are shown", what))
			return
		}
		slices.SortStableFunc(wire.Thresholds, func(a, b bldBusyEntry) int { return cmp.Compare(a.Model, b.Model) })
		var t routecore.BusyThresholds
		for i, e := range wire.Thresholds {
			var cur routecore.BusyThresholds
			cur.ActiveDecodeBlocksThreshold = e.ActiveDecodeBlocksThreshold
			cur.ActivePrefillTokensThresholdFrac = e.ActivePrefillTokensThresholdFrac
			if !bldIsNull(e.ActivePrefillTokensThreshold) {
				v, err := bldParseU64(e.ActivePrefillTokensThreshold)
				if err != nil {
					f, ferr := strconv.ParseFloat(string(bytes.TrimSpace(e.ActivePrefillTokensThreshold)), 64)
					if ferr != nil || f < 0 || f != math.Trunc(f) || f > math.MaxUint64 {
						bd.note(model.SourceFrontend, d.out.Key(), "%s: active_prefill_tokens_threshold %s of model %q is not a token count; it is ignored", what, string(e.ActivePrefillTokensThreshold), e.Model)
					} else {
						v = uint64(f)
						cur.ActivePrefillTokensThreshold = &v
					}
				} else {
					cur.ActivePrefillTokensThreshold = &v
				}
			}
			if i == 0 {
				t = cur
			} else if !reflect.DeepEqual(t, cur) {
				d.out.Router.Warnings = append(d.out.Router.Warnings, fmt.Sprintf("%s has different thresholds per model; those of model %q are shown", what, wire.Thresholds[0].Model))
			}
		}
		d.out.Router.Thresholds = t
		d.out.Router.ThresholdsSource = what
		if !bt.At.IsZero() {
			d.out.Router.ThresholdsSource += " at " + bt.At.UTC().Format(time.RFC3339)
		}
		return
	}
}

// loads reads per-(instance, dp rank) loads from the deployment's frontend
// /metrics scrape and infers KV mode from the router overhead metrics.
func (bd *bldBuilder) loads(d *bldDeployment) {
	var m *raw.FrontendMetrics
	n := 0
	for i := range bd.b.Metrics {
		fm := &bd.b.Metrics[i]
		if fm.Namespace == d.out.Namespace && fm.Deployment == d.out.Name {
			n++
			if m == nil || fm.At.After(m.At) {
				m = fm
			}
		}
	}
	if m == nil {
		return
	}
	what := "frontend /metrics"
	if m.Source != "" && !strings.Contains(m.Source, "/metrics") {
		what += " (" + m.Source + ")"
	} else if m.Source != "" {
		what = m.Source
	}
	if n > 1 {
		bd.info(model.SourceFrontend, d.out.Key(), "%d frontend /metrics scrapes for %s; the newest is used", n, bldDGDRef(d))
	}
	res := bldParsePromText(m.Text, func(name string) bool {
		return name == bldMetricDecodeBlocks || name == bldMetricPrefillTokens || strings.HasPrefix(name, bldMetricOverheadPrefix) ||
			bldIsQualityMetric(name) || bldIsKvEventsMetric(name)
	})
	if res.errors > 0 {
		bd.note(model.SourceFrontend, d.out.Key(), "%s: %d line(s) could not be parsed (first: %s); they were skipped, so some worker loads may be missing", what, res.errors, res.firstError)
	}
	type rk struct {
		id   uint64
		rank uint32
	}
	loads := map[rk]*model.RankLoad{}
	bad := 0
	kv := false
	q, qbad := bldRoutingQuality(res.samples, what, m.At)
	d.out.RoutingQuality = q
	if qbad > 0 {
		bd.note(model.SourceFrontend, d.out.Key(), "%s: %d router decision-quality sample(s) are not exact counts or are inconsistent (more optimal decisions than decisions, a hit-rate sum above its count); the series they belong to are not shown", what, qbad)
	}
	kve, kbad := bldKvEvents(res.samples, what, m.At)
	d.out.KvEvents = kve
	if kbad > 0 {
		bd.note(model.SourceFrontend, d.out.Key(), "%s: %d router KV-event sample(s) (kv_event_source_mismatch_workers, kv_cache_events_applied, router_requests_total) are not exact counts, carry an unusable label or exceed the series bounds; they were skipped", what, kbad)
	}
	for _, s := range res.samples {
		if bldIsQualityMetric(s.name) || bldIsKvEventsMetric(s.name) {
			continue
		}
		if strings.HasPrefix(s.name, bldMetricOverheadPrefix) {
			kv = true
			continue
		}
		id, err := strconv.ParseUint(s.labels["worker_id"], 10, 64)
		if err != nil {
			bad++
			continue
		}
		var rank uint64
		if r := s.labels["dp_rank"]; r != "" && r != "none" {
			if rank, err = strconv.ParseUint(r, 10, 32); err != nil {
				bad++
				continue
			}
		}
		if math.IsNaN(s.value) || s.value < 0 || math.IsInf(s.value, 0) {
			bad++
			continue
		}
		v := uint64(math.MaxUint64)
		if s.value < math.MaxUint64 {
			v = uint64(math.Round(s.value))
		}
		k := rk{id, uint32(rank)}
		l := loads[k]
		if l == nil {
			l = &model.RankLoad{DpRank: uint32(rank)}
			loads[k] = l
		}
		if s.name == bldMetricDecodeBlocks {
			l.ActiveDecodeBlocks = v
		} else {
			l.ActivePrefillTokens = v
		}
	}
	if bad > 0 {
		bd.note(model.SourceFrontend, d.out.Key(), "%s: %d worker load sample(s) have an unparsable worker_id, dp_rank or value; they were skipped", what, bad)
	}
	byID := map[uint64][]model.RankLoad{}
	for k, l := range loads {
		byID[k.id] = append(byID[k.id], *l)
	}
	matched := map[uint64]bool{}
	for _, w := range d.workers {
		for i := range w.out.Instances {
			in := &w.out.Instances[i]
			ls := slices.Clone(byID[uint64(in.ID)])
			if len(ls) == 0 {
				continue
			}
			matched[uint64(in.ID)] = true
			slices.SortFunc(ls, func(a, b model.RankLoad) int { return cmp.Compare(a.DpRank, b.DpRank) })
			in.Load = ls
		}
	}
	unknown := map[uint64]bool{}
	for k := range loads {
		if !matched[k.id] {
			unknown[k.id] = true
		}
	}
	if len(unknown) > 0 {
		ids := make([]string, 0, len(unknown))
		for id := range unknown {
			ids = append(ids, strconv.FormatUint(id, 10))
		}
		slices.Sort(ids)
		bd.info(model.SourceFrontend, d.out.Key(), "%s reports load for %d worker id(s) no published instance has (%s); those loads are not shown", what, len(ids), bldExamples(ids))
	}
	d.out.Load = &model.LoadInfo{Source: what, At: m.At}
	r := &d.out.Router
	switch {
	case kv && r.Mode == "":
		r.Mode, r.ModeSource = "kv", what+" (router overhead metrics)"
	case kv && r.Mode != "kv":
		r.Warnings = append(r.Warnings, fmt.Sprintf("%s has dynamo_router_overhead_* metrics, which only KV mode exports, but the frontend's configuration says %q", what, r.Mode))
	}
}

// deploymentEvents keeps the events about the DGD and its pods that matter to
// topology: warnings and any reason mentioning topology.
func (bd *bldBuilder) deploymentEvents(d *bldDeployment) {
	pods := map[string]bool{}
	for _, p := range d.pods {
		pods[p.pod.Name] = true
	}
	for _, u := range bd.events {
		if u.Namespace != d.out.Namespace && u.Namespace != "" {
			continue
		}
		kind, name := u.InvolvedObject.Kind, u.InvolvedObject.Name
		if name == "" {
			kind, name = u.Regarding.Kind, u.Regarding.Name
		}
		about := kind == "Pod" && pods[name] || kind == "DynamoGraphDeployment" && name == d.out.Name
		if !about {
			continue
		}
		reason, typ := u.Reason, u.Type
		if typ != "Warning" && !strings.Contains(strings.ToLower(reason), "topology") {
			continue
		}
		e := model.Event{Reason: reason, Type: typ, Object: strings.ToLower(kind) + "/" + name}
		e.Message = u.Message
		if e.Message == "" {
			e.Message = u.Note
		}
		for _, c := range []*int64{u.Count, u.Series.Count, u.DeprecatedCount} {
			if c != nil && *c > 0 && *c <= math.MaxInt32 {
				e.Count = int32(*c)
				break
			}
		}
		for _, s := range []string{u.LastTimestamp, u.Series.LastObservedTime, u.DeprecatedLastTimestamp, u.EventTime, u.FirstTimestamp, u.CreationTimestamp} {
			if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
				e.Last = t
				break
			}
		}
		d.out.Events = append(d.out.Events, e)
	}
	slices.SortStableFunc(d.out.Events, func(a, b model.Event) int {
		return cmp.Or(a.Last.Compare(b.Last), cmp.Compare(a.Object, b.Object), cmp.Compare(a.Reason, b.Reason), cmp.Compare(a.Message, b.Message))
	})
}

// noteOrphanScrapes notes frontend data for deployments that are not in the
// bundle.
func (bd *bldBuilder) noteOrphanScrapes(deps []*bldDeployment) {
	have := map[string]bool{}
	for _, d := range deps {
		have[d.out.Key()] = true
	}
	seen := map[string]bool{}
	check := func(ns, dep, what string) {
		k := ns + "/" + dep
		if !have[k] && !seen[k+what] {
			seen[k+what] = true
			bd.info(model.SourceFrontend, k, "%s for %s is in the bundle but that DynamoGraphDeployment is not; it is not shown", what, k)
		}
	}
	for _, m := range bd.b.Metrics {
		check(m.Namespace, m.Deployment, "a frontend /metrics scrape")
	}
	for _, t := range bd.b.BusyThresholds {
		check(t.Namespace, t.Deployment, "a frontend /busy_threshold answer")
	}
}
