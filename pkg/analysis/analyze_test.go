package analysis

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// Test helpers for building Snapshots. They are prefixed az (analyze) so that
// they cannot clash with other test files of the package.

const azZoneKey = "topology.kubernetes.io/zone"

type azOpt func(*model.Worker)

// azWorker is a ready single-node worker with 1 GPU in zone value, whose pod and
// node carry the value and whose pod has the operator's topology wiring for a
// required zone policy. It has published nothing.
func azWorker(pod string, role model.Role, value string, opts ...azOpt) model.Worker {
	node := "node-" + pod
	w := model.Worker{
		Pod: pod, Namespace: "ns", Node: node, Component: string(role), Role: role, RoleSignal: "test",
		Replica: pod, Leader: true, Ready: true, Phase: "Running", GPUs: 1,
		Domain:             model.DomainValues{Pod: value, Node: value},
		TopologyEnv:        model.TopologyEnv{Enabled: "true", TransferDomain: "zone", Enforcement: "required", MountPath: "/etc/dynamo/topology"},
		LabelKeyAnnotation: azZoneKey,
		NodeLabels:         map[string]string{HostnameLabel: node},
		PodLabels:          map[string]string{},
	}
	if value != "" {
		w.NodeLabels[azZoneKey] = value
		w.PodLabels[azZoneKey] = value
	}
	for _, o := range opts {
		o(&w)
	}
	return w
}

var azNextID routecore.WorkerID = 1000

// azPub makes the worker publish a model card with topology_domains{zone:value}
// (the worker's pod value), kv_transfer_domain zone and the given enforcement
// (weight 0.5 when preferred), 1000 KV blocks of 16 tokens.
func azPub(enf routecore.KvTransferEnforcement) azOpt {
	return func(w *model.Worker) {
		azNextID++
		rc := routecore.RuntimeConfig{TotalKvBlocks: azU64(1000), DataParallelSize: 1}
		if w.Domain.Pod != "" {
			rc.TopologyDomains = map[string]string{"zone": w.Domain.Pod}
			rc.KvTransferDomain = "zone"
			rc.KvTransferEnforcement = enf
			if enf == routecore.EnforcementPreferred {
				rc.KvTransferPreferredWeight = azF64(0.5)
			}
			w.Domain.Published, w.Domain.PublishedDomain = w.Domain.Pod, "zone"
		}
		w.Instances = append(w.Instances, model.Instance{ID: azNextID, Endpoint: "dyn/" + w.Component + "/generate",
			WorkerType: string(w.Role), BlockSize: 16, Runtime: rc, Source: "dwm/" + w.Pod})
	}
}

// azRuntime replaces the runtime config of the worker's last instance.
func azRuntime(fn func(*routecore.RuntimeConfig)) azOpt {
	return func(w *model.Worker) { fn(&w.Instances[len(w.Instances)-1].Runtime) }
}

func azNotReady(w *model.Worker) { w.Ready = false }

func azGPUs(n int64) azOpt { return func(w *model.Worker) { w.GPUs = n } }

func azLoad(active ...uint64) azOpt {
	return func(w *model.Worker) {
		in := &w.Instances[len(w.Instances)-1]
		for i, a := range active {
			in.Load = append(in.Load, model.RankLoad{DpRank: uint32(i), ActiveDecodeBlocks: a})
		}
	}
}

func azU64(v uint64) *uint64   { return &v }
func azF64(v float64) *float64 { return &v }

func azRequired() *model.TransferPolicy {
	return &model.TransferPolicy{Mode: model.PolicyLabelKey, LabelKey: azZoneKey, Domain: "zone",
		Enforcement: routecore.EnforcementRequired, PodLabelKey: azZoneKey, NodeLabelKey: azZoneKey}
}

func azPreferred() *model.TransferPolicy {
	p := azRequired()
	p.Enforcement, p.PreferredWeight = routecore.EnforcementPreferred, azF64(0.5)
	return p
}

// azDep is deployment ns/dgd with a kv-mode frontend and the given workers
// (sorted by pod name, as the model requires); under a preferred policy the
// workers' default topology env is switched to preferred with weight 0.5.
func azDep(pol *model.TransferPolicy, workers ...model.Worker) model.Deployment {
	slices.SortFunc(workers, func(a, b model.Worker) int { return strings.Compare(a.Pod, b.Pod) })
	if pol != nil && pol.Enforcement == routecore.EnforcementPreferred {
		for i := range workers {
			if env := &workers[i].TopologyEnv; env.Enforcement == "required" {
				env.Enforcement, env.PreferredWeight = "preferred", "0.5"
			}
		}
	}
	return model.Deployment{Name: "dgd", Namespace: "ns", APIVersion: "nvidia.com/v1beta1", Policy: pol,
		Router:    model.RouterInfo{Mode: "kv", ModeSource: "frontend args"},
		Frontends: []model.Frontend{{Pod: "dgd-frontend-0", Ready: true}},
		Workers:   workers}
}

func azSnap(deps ...model.Deployment) *model.Snapshot {
	return &model.Snapshot{Context: "test", Namespace: "ns", CollectedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Sources: []model.SourceStatus{{Kind: model.SourceCapture, Detail: "test.yaml"}}, Deployments: deps}
}

// azZones returns prefill and decode workers: for each "zone:P:D" spec, P ready
// prefill and D ready decode workers publishing required in that zone.
func azZones(enf routecore.KvTransferEnforcement, specs ...string) []model.Worker {
	var out []model.Worker
	for _, s := range specs {
		var z string
		var p, d int
		parts := strings.Split(s, ":")
		z = parts[0]
		fmt.Sscan(parts[1], &p)
		fmt.Sscan(parts[2], &d)
		for i := range p {
			out = append(out, azWorker(fmt.Sprintf("%s-prefill-%d", z, i), model.RolePrefill, z, azPub(enf)))
		}
		for i := range d {
			out = append(out, azWorker(fmt.Sprintf("%s-decode-%d", z, i), model.RoleDecode, z, azPub(enf)))
		}
	}
	return out
}

func azDomain(t *testing.T, dr model.DeploymentReport, value string) model.DomainReport {
	t.Helper()
	for _, d := range dr.Domains {
		if d.Value == value {
			return d
		}
	}
	t.Fatalf("no domain %q in %+v", value, dr.Domains)
	return model.DomainReport{}
}

func TestAnalyzeEmptySnapshot(t *testing.T) {
	for name, s := range map[string]*model.Snapshot{"nil": nil, "empty": {}} {
		t.Run(name, func(t *testing.T) {
			r := AnalyzeTopology(s, AnalyzeOptions{})
			if r.APIVersion != "kubectl-dynamo.io/v1alpha1" || r.Kind != "TopologyReport" {
				t.Fatalf("apiVersion/kind = %q/%q", r.APIVersion, r.Kind)
			}
			b, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{`"deployments":[]`, `"findings":[]`} {
				if !strings.Contains(string(b), want) {
					t.Errorf("JSON %s lacks %s", b, want)
				}
			}
		})
	}
}

func TestAnalyzeCopiesHeader(t *testing.T) {
	s := azSnap()
	s.Notes = []model.Note{{Severity: model.NoteWarning, Source: model.SourceKubernetes, Message: "no DWM CRD"}}
	r := AnalyzeTopology(s, AnalyzeOptions{})
	if r.Context != "test" || r.Namespace != "ns" || !reflect.DeepEqual(r.Sources, s.Sources) || !reflect.DeepEqual(r.Notes, s.Notes) {
		t.Fatalf("header not copied: %+v", r)
	}
	r.Notes[0].Message = "changed"
	if s.Notes[0].Message != "no DWM CRD" {
		t.Fatal("report aliases the snapshot's notes")
	}
}

func TestAnalyzeDeploymentWithoutPolicy(t *testing.T) {
	ws := []model.Worker{
		azWorker("p0", model.RolePrefill, "a"), azWorker("p1", model.RolePrefill, "b"),
		azWorker("d0", model.RoleDecode, "a"), azWorker("agg", model.RoleAggregated, ""),
		azWorker("enc", model.RoleEncode, "a"),
	}
	r := AnalyzeTopology(azSnap(azDep(nil, ws...)), AnalyzeOptions{})
	dr := r.Deployments[0]
	if dr.Policy != nil || len(dr.Domains) != 1 || dr.Domains[0].Value != "" {
		t.Fatalf("want one \"\" domain and no policy, got %+v", dr)
	}
	d := dr.Domains[0]
	if d.Prefill.Ready != 2 || d.Decode.Ready != 1 || d.Aggregated.Ready != 1 {
		t.Fatalf("counts: %+v", d)
	}
	if d.PrefillToDecode == nil || *d.PrefillToDecode != 2 {
		t.Fatalf("ratio %v", d.PrefillToDecode)
	}
	if len(r.Findings) != 0 {
		t.Fatalf("no findings expected without a policy, got %+v", r.Findings)
	}
	// A deployment without workers still has its single "" entry.
	r = AnalyzeTopology(azSnap(azDep(nil)), AnalyzeOptions{})
	if len(r.Deployments[0].Domains) != 1 {
		t.Fatalf("domains %+v", r.Deployments[0].Domains)
	}
	// With a policy and no workers there is no domain entry.
	r = AnalyzeTopology(azSnap(azDep(azRequired())), AnalyzeOptions{})
	if r.Deployments[0].Domains == nil || len(r.Deployments[0].Domains) != 0 {
		t.Fatalf("domains %+v", r.Deployments[0].Domains)
	}
}

func TestAnalyzePolicySummary(t *testing.T) {
	r := AnalyzeTopology(azSnap(azDep(azPreferred())), AnalyzeOptions{})
	want := &model.PolicySummary{Domain: "zone", Enforcement: "preferred", PreferredWeight: azF64(0.5), Mode: "labelKey", LabelKey: azZoneKey}
	if got := r.Deployments[0].Policy; !reflect.DeepEqual(got, want) {
		t.Fatalf("policy %+v, want %+v", got, want)
	}
	if r.Deployments[0].RouterMode != "kv" {
		t.Fatalf("router mode %q", r.Deployments[0].RouterMode)
	}
}

// azMultinode returns the pods of one multinode replica: leader plus n-1 workers.
func azMultinode(name string, role model.Role, value string, n int, gpus int64, ready []bool, opts ...azOpt) []model.Worker {
	var out []model.Worker
	for i := range n {
		pod := fmt.Sprintf("%s-%d", name, i)
		var o []azOpt
		o = append(o, azGPUs(gpus), func(w *model.Worker) { w.Replica, w.Leader = name, i == 0 })
		if i == 0 {
			o = append(o, opts...)
		}
		if !ready[i] {
			o = append(o, azNotReady)
		}
		out = append(out, azWorker(pod, role, value, o...))
	}
	return out
}

func TestAnalyzeReplicaCounting(t *testing.T) {
	tests := []struct {
		name                 string
		workers              []model.Worker
		wantReady, wantTotal int
		wantGPUs             int64
		wantKv               uint64
		wantWorkers          []string
	}{
		{
			name:      "multinode replica all ready counts once",
			workers:   azMultinode("dec-a", model.RoleDecode, "a", 3, 8, []bool{true, true, true}, azPub("required")),
			wantReady: 1, wantTotal: 1, wantGPUs: 24, wantKv: 16000, wantWorkers: []string{"dec-a-0"},
		},
		{
			name:      "multinode replica with one pod not ready is not ready",
			workers:   azMultinode("dec-a", model.RoleDecode, "a", 2, 8, []bool{true, false}, azPub("required")),
			wantReady: 0, wantTotal: 1, wantGPUs: 16, wantKv: 0, wantWorkers: []string{"dec-a-0"},
		},
		{
			name: "two multinode replicas and a single-node one",
			workers: slices.Concat(
				azMultinode("dec-a", model.RoleDecode, "a", 2, 4, []bool{true, true}, azPub("required")),
				azMultinode("dec-b", model.RoleDecode, "a", 2, 4, []bool{false, true}, azPub("required")),
				[]model.Worker{azWorker("dec-c", model.RoleDecode, "a", azGPUs(2), azPub("required"))}),
			wantReady: 2, wantTotal: 3, wantGPUs: 18, wantKv: 32000, wantWorkers: []string{"dec-a-0", "dec-b-0", "dec-c"},
		},
		{
			name: "the leader's value places a replica whose non-leader sits elsewhere",
			workers: []model.Worker{
				azWorker("dec-0", model.RoleDecode, "a", func(w *model.Worker) { w.Replica = "dec" }, azPub("required")),
				azWorker("dec-1", model.RoleDecode, "b", func(w *model.Worker) { w.Replica, w.Leader = "dec", false }),
			},
			wantReady: 1, wantTotal: 1, wantGPUs: 2, wantKv: 16000, wantWorkers: []string{"dec-0"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := AnalyzeTopology(azSnap(azDep(azRequired(), tt.workers...)), AnalyzeOptions{})
			dr := r.Deployments[0]
			if len(dr.Domains) != 1 {
				t.Fatalf("domains %+v", dr.Domains)
			}
			d := dr.Domains[0].Decode
			if d.Ready != tt.wantReady || d.Total != tt.wantTotal || d.GPUs != tt.wantGPUs || d.KvTokens != tt.wantKv || !slices.Equal(d.Workers, tt.wantWorkers) {
				t.Fatalf("decode = %+v, want ready %d total %d gpus %d kv %d workers %v", d, tt.wantReady, tt.wantTotal, tt.wantGPUs, tt.wantKv, tt.wantWorkers)
			}
		})
	}
}

func TestAnalyzeKvTokens(t *testing.T) {
	dup := func(w *model.Worker) { // the same instance id published on a second endpoint
		in := w.Instances[0]
		in.Endpoint = "dyn/decode/clear_kv_blocks"
		w.Instances = append(w.Instances, in)
	}
	bare := func(w *model.Worker) { // an endpoint registration without a card
		w.Instances = append(w.Instances, model.Instance{ID: 1, Endpoint: "dyn/decode/load_metrics", Source: "etcd/x"})
	}
	tests := []struct {
		name string
		w    model.Worker
		want uint64
	}{
		{"blocks times block size", azWorker("d", model.RoleDecode, "a", azPub("required")), 16000},
		{"times dp ranks", azWorker("d", model.RoleDecode, "a", azPub("required"), azRuntime(func(rc *routecore.RuntimeConfig) { rc.DataParallelSize = 4 })), 64000},
		{"duplicate instance ids count once", azWorker("d", model.RoleDecode, "a", azPub("required"), dup), 16000},
		{"two instances add", azWorker("d", model.RoleDecode, "a", azPub("required"), azPub("required")), 32000}, //nolint:gocritic // two identical instances on purpose,
		{"bare endpoint instances do not count", azWorker("d", model.RoleDecode, "a", azPub("required"), bare), 16000},
		{"unknown total_kv_blocks", azWorker("d", model.RoleDecode, "a", azPub("required"), azRuntime(func(rc *routecore.RuntimeConfig) { rc.TotalKvBlocks = nil })), 0},
		{"not ready", azWorker("d", model.RoleDecode, "a", azPub("required"), azNotReady), 0},
		{"not published", azWorker("d", model.RoleDecode, "a"), 0},
		{"saturates", azWorker("d", model.RoleDecode, "a", azPub("required"), azRuntime(func(rc *routecore.RuntimeConfig) { rc.TotalKvBlocks = azU64(math.MaxUint64 / 2) })), math.MaxUint64},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := AnalyzeTopology(azSnap(azDep(azRequired(), tt.w)), AnalyzeOptions{})
			if got := r.Deployments[0].Domains[0].Decode.KvTokens; got != tt.want {
				t.Fatalf("KvTokens = %d, want %d", got, tt.want)
			}
		})
	}
	// Prefill KV tokens are counted the same way.
	r := AnalyzeTopology(azSnap(azDep(azRequired(), azZones("required", "a:2:1")...)), AnalyzeOptions{})
	if got := r.Deployments[0].Domains[0].Prefill.KvTokens; got != 32000 {
		t.Fatalf("prefill KvTokens = %d", got)
	}
}

func TestAnalyzeDecodeLoad(t *testing.T) {
	pub := azPub("required")
	tests := []struct {
		name    string
		workers []model.Worker
		want    *float64
	}{
		{"no loads known", []model.Worker{azWorker("d0", model.RoleDecode, "a", pub)}, nil},
		{"one worker", []model.Worker{azWorker("d0", model.RoleDecode, "a", pub, azLoad(250))}, azF64(25)},
		{"sum over workers", []model.Worker{azWorker("d0", model.RoleDecode, "a", pub, azLoad(250)), azWorker("d1", model.RoleDecode, "a", pub, azLoad(750))}, azF64(50)},
		{"workers without load are left out", []model.Worker{azWorker("d0", model.RoleDecode, "a", pub, azLoad(100)), azWorker("d1", model.RoleDecode, "a", pub)}, azF64(10)},
		{"per dp rank", []model.Worker{azWorker("d0", model.RoleDecode, "a", pub, azRuntime(func(rc *routecore.RuntimeConfig) { rc.DataParallelSize = 2 }), azLoad(100, 300))}, azF64(20)},
		{"not ready decode left out", []model.Worker{azWorker("d0", model.RoleDecode, "a", pub, azLoad(100)), azWorker("d1", model.RoleDecode, "a", pub, azLoad(900), azNotReady)}, azF64(10)},
		{"prefill load ignored", []model.Worker{azWorker("p0", model.RolePrefill, "a", pub, azLoad(900)), azWorker("d0", model.RoleDecode, "a", pub, azLoad(0))}, azF64(0)},
		{"unknown total blocks", []model.Worker{azWorker("d0", model.RoleDecode, "a", pub, azLoad(100), azRuntime(func(rc *routecore.RuntimeConfig) { rc.TotalKvBlocks = nil }))}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := AnalyzeTopology(azSnap(azDep(azRequired(), tt.workers...)), AnalyzeOptions{})
			got := r.Deployments[0].Domains[0].DecodeLoadPercent
			if (got == nil) != (tt.want == nil) || (got != nil && math.Abs(*got-*tt.want) > 1e-9) {
				t.Fatalf("DecodeLoadPercent = %v, want %v", fp(got), fp(tt.want))
			}
		})
	}
}

func fp(p *float64) string {
	if p == nil {
		return "nil"
	}
	return fmt.Sprint(*p)
}

func TestAnalyzeRatios(t *testing.T) {
	ws := azZones("required", "a:3:2", "b:2:2", "c:1:0")
	ws = append(ws, azWorker("b-prefill-x", model.RolePrefill, "b", azPub("required"), azNotReady))
	r := AnalyzeTopology(azSnap(azDep(azRequired(), ws...)), AnalyzeOptions{})
	dr := r.Deployments[0]
	for _, tt := range []struct {
		value string
		want  *float64
	}{{"a", azF64(1.5)}, {"b", azF64(1)}, {"c", nil}} {
		got := azDomain(t, dr, tt.value).PrefillToDecode
		if (got == nil) != (tt.want == nil) || (got != nil && *got != *tt.want) {
			t.Errorf("zone %s P:D = %s, want %s", tt.value, fp(got), fp(tt.want))
		}
	}
	if dr.PrefillToDecode == nil || *dr.PrefillToDecode != 1.5 {
		t.Errorf("deployment P:D = %s, want 1.5", fp(dr.PrefillToDecode))
	}
	b := azDomain(t, dr, "b")
	if b.Prefill.Ready != 2 || b.Prefill.Total != 3 {
		t.Errorf("zone b prefill %+v", b.Prefill)
	}
	// No ready decode anywhere: no deployment ratio.
	r = AnalyzeTopology(azSnap(azDep(azRequired(), azZones("required", "a:1:0")...)), AnalyzeOptions{})
	if r.Deployments[0].PrefillToDecode != nil {
		t.Errorf("deployment ratio should be nil")
	}
}

func TestAnalyzeDomainsGroupingAndFlags(t *testing.T) {
	ws := azZones("required", "b:1:2", "a:1:2", "c:2:0")
	ws = append(ws,
		azWorker("nolabel-decode", model.RoleDecode, ""),
		// Published a card without the zone: the router sees no value even though
		// the pod is labelled.
		azWorker("unpublished-zone", model.RoleDecode, "a", azPub("required"), azRuntime(func(rc *routecore.RuntimeConfig) {
			rc.TopologyDomains, rc.KvTransferDomain, rc.KvTransferEnforcement = nil, "", ""
		}), func(w *model.Worker) { w.Domain.Published, w.Domain.PublishedDomain = "", "" }),
		// Not yet published: grouped by its pod label.
		azWorker("starting", model.RoleDecode, "b", azNotReady),
	)
	r := AnalyzeTopology(azSnap(azDep(azRequired(), ws...)), AnalyzeOptions{})
	dr := r.Deployments[0]
	var values []string
	for _, d := range dr.Domains {
		values = append(values, d.Value)
	}
	if !slices.Equal(values, []string{"", "a", "b", "c"}) {
		t.Fatalf("domain values %q", values)
	}
	none := azDomain(t, dr, "")
	if !slices.Equal(none.Decode.Workers, []string{"nolabel-decode", "unpublished-zone"}) {
		t.Errorf("\"\" decode workers %v", none.Decode.Workers)
	}
	if b := azDomain(t, dr, "b"); b.Decode.Total != 3 || b.Decode.Ready != 2 {
		t.Errorf("zone b decode %+v", b.Decode)
	}
	if got := azDomain(t, dr, "c").Flags; !slices.Equal(got, []string{FindingPrefillDomainWithoutDecode}) {
		t.Errorf("zone c flags %v", got)
	}
	if got := none.Flags; !slices.Equal(got, []string{FindingWorkerMissingDomain}) {
		t.Errorf("\"\" flags %v", got)
	}
	if got := azDomain(t, dr, "a").Flags; len(got) != 0 {
		t.Errorf("zone a flags %v", got)
	}
}

func TestAnalyzeTree(t *testing.T) {
	rackKey := "nvidia.com/rack"
	withRack := func(region, rack string) azOpt {
		return func(w *model.Worker) {
			w.NodeLabels["topology.kubernetes.io/region"] = region
			w.NodeLabels[rackKey] = rack
		}
	}
	ws := []model.Worker{
		azWorker("p0", model.RolePrefill, "a", withRack("us", "r1"), azPub("required")),
		azWorker("d0", model.RoleDecode, "a", withRack("us", "r1"), azPub("required"), azGPUs(2)),
		azWorker("d1", model.RoleDecode, "a", withRack("us", "r2"), azPub("required"), azNotReady),
		azWorker("p1", model.RolePrefill, "b", withRack("us", "r3"), azPub("required")),
		azWorker("agg", model.RoleAggregated, "b", withRack("us", "r3")),
	}
	// Two pods on the same node.
	ws[1].Node, ws[1].NodeLabels[HostnameLabel] = ws[0].Node, ws[0].Node

	t.Run("well-known labels", func(t *testing.T) {
		tr := AnalyzeTopology(azSnap(azDep(azRequired(), ws...)), AnalyzeOptions{}).Deployments[0].Tree
		if tr == nil {
			t.Fatal("no tree")
		}
		if tr.Prefill.Total != 2 || tr.Decode.Total != 2 || tr.Decode.Ready != 1 || tr.Decode.GPUs != 3 || len(tr.Prefill.Workers) != 0 {
			t.Fatalf("root %+v", tr)
		}
		got := azTreeLines(tr, "")
		want := []string{
			" P2/2 D1/2",
			"  region=us P2/2 D1/2",
			"    zone=a P1/1 D1/2",
			"      rack=r1 P1/1 D1/1",
			"        host=node-p0 P1/1 D1/1 [p0] [d0]",
			"      rack=r2 P0/0 D0/1",
			"        host=node-d1 P0/0 D0/1 [] [d1]",
			"    zone=b P1/1 D0/0",
			"      rack=r3 P1/1 D0/0",
			"        host=node-p1 P1/1 D0/0 [p1] []",
		}
		if !slices.Equal(got, want) {
			t.Fatalf("tree:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
	t.Run("grove levels win", func(t *testing.T) {
		d := azDep(azRequired(), ws...)
		d.Topology = &model.TopologyObject{Kind: "ClusterTopologyBinding", Name: "topo", Found: true,
			Levels: []model.TopologyLevel{{Domain: "zone", NodeLabelKey: azZoneKey}, {Domain: "rack", NodeLabelKey: rackKey}}}
		got := azTreeLines(AnalyzeTopology(azSnap(d), AnalyzeOptions{}).Deployments[0].Tree, "")
		want := []string{
			" P2/2 D1/2",
			"  zone=a P1/1 D1/2",
			"    rack=r1 P1/1 D1/1 [p0] [d0]",
			"    rack=r2 P0/0 D0/1 [] [d1]",
			"  zone=b P1/1 D0/0",
			"    rack=r3 P1/1 D0/0 [p1] []",
		}
		if !slices.Equal(got, want) {
			t.Fatalf("tree:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
	t.Run("custom policy label key", func(t *testing.T) {
		p := azRequired()
		p.LabelKey, p.PodLabelKey, p.NodeLabelKey = "example.com/pod", "example.com/pod", "example.com/pod"
		w0 := azWorker("p0", model.RolePrefill, "x")
		w0.NodeLabels = map[string]string{"example.com/pod": "x", HostnameLabel: w0.Node}
		w1 := azWorker("d0", model.RoleDecode, "y")
		w1.NodeLabels = map[string]string{HostnameLabel: w1.Node} // falls back to the copied value
		got := azTreeLines(AnalyzeTopology(azSnap(azDep(p, w0, w1)), AnalyzeOptions{}).Deployments[0].Tree, "")
		want := []string{
			" P1/1 D1/1",
			"  zone=x P1/1 D0/0",
			"    host=node-p0 P1/1 D0/0 [p0] []",
			"  zone=y P0/0 D1/1",
			"    host=node-d0 P0/0 D1/1 [] [d0]",
		}
		if !slices.Equal(got, want) {
			t.Fatalf("tree:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
	t.Run("no levels known", func(t *testing.T) {
		w := azWorker("p0", model.RolePrefill, "")
		w.Node, w.NodeLabels = "", nil
		if tr := AnalyzeTopology(azSnap(azDep(nil, w)), AnalyzeOptions{}).Deployments[0].Tree; tr != nil {
			t.Fatalf("tree %+v", tr)
		}
	})
}

// azTreeLines renders a tree compactly: "domain=value Pready/total Dready/total
// [prefill workers] [decode workers]" (workers at leaves only).
func azTreeLines(n *model.TreeNode, indent string) []string {
	line := fmt.Sprintf("%s P%d/%d D%d/%d", indent, n.Prefill.Ready, n.Prefill.Total, n.Decode.Ready, n.Decode.Total)
	if n.Domain != "" {
		line = fmt.Sprintf("%s%s=%s P%d/%d D%d/%d", indent, n.Domain, n.Value, n.Prefill.Ready, n.Prefill.Total, n.Decode.Ready, n.Decode.Total)
	}
	if len(n.Children) == 0 {
		line += fmt.Sprintf(" [%s] [%s]", strings.Join(n.Prefill.Workers, ","), strings.Join(n.Decode.Workers, ","))
	}
	out := []string{line}
	for _, c := range n.Children {
		out = append(out, azTreeLines(c, indent+"  ")...)
	}
	return out
}

func TestAnalyzeSortingAndDeterminism(t *testing.T) {
	build := func() *model.Snapshot {
		d1 := azDep(azRequired(), azZones("required", "a:2:2", "c:2:0", "d:1:1")...)
		d1.Router.Mode = "round-robin"
		d1.Workers = append(d1.Workers, azWorker("zz-notready", model.RoleDecode, "a", azNotReady))
		d2 := azDep(azPreferred(), azZones("preferred", "x:1:0")...)
		d2.Name = "another"
		d0 := azDep(azRequired(), azZones("required", "q:1:0")...)
		d0.Namespace = "aaa"
		return azSnap(d0, d2, d1)
	}
	s := build()
	before, _ := json.Marshal(s)
	r1 := AnalyzeTopology(s, AnalyzeOptions{})
	after, _ := json.Marshal(s)
	if string(before) != string(after) {
		t.Fatal("Analyze modified its input")
	}
	r2 := AnalyzeTopology(build(), AnalyzeOptions{})
	if !reflect.DeepEqual(r1, r2) {
		t.Fatal("Analyze is not deterministic")
	}
	var got []string
	for _, f := range r1.Findings {
		got = append(got, fmt.Sprintf("%s %s/%s %s %s", f.Severity, f.Namespace, f.Deployment, f.ID, f.Domain))
	}
	// Prefill-only deployments are never ready (Dynamo 1.3 and later); the
	// round-robin decode hop ignores the required constraint, so the
	// prefill-only zone c and the single decode of d do not fail requests;
	// ns/another has no decode worker at all, so preferred cannot help it.
	want := []string{
		"error aaa/dgd ModelNotReady ",
		"error aaa/dgd PrefillDomainWithoutDecode q",
		"error ns/another ModelNotReady ",
		"error ns/another PrefillDomainWithoutDecode x",
		"warning ns/dgd PrefillDomainWithoutDecode c",
		"warning ns/dgd RouterNotKV ",
		"info ns/dgd NotReadyWorkers ",
		"info ns/dgd SingleDecodeInDomain d",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("order:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// SortFindings is a total order: shuffling gives back the same order.
	sh := slices.Clone(r1.Findings)
	slices.Reverse(sh)
	model.SortFindings(sh)
	if !reflect.DeepEqual(sh, r1.Findings) {
		t.Fatal("SortFindings is not a total order")
	}
}

func TestAnalyzeSkewFactorDefault(t *testing.T) {
	ws := azZones("required", "a:1:4", "b:4:4", "c:4:4")
	for _, f := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		r := AnalyzeTopology(azSnap(azDep(azRequired(), ws...)), AnalyzeOptions{SkewFactor: f})
		if !slices.ContainsFunc(r.Findings, func(x model.Finding) bool { return x.ID == FindingCapacitySkew && x.Domain == "a" }) {
			t.Errorf("SkewFactor %v: default 2 not applied: %+v", f, r.Findings)
		}
	}
}

// BenchmarkAnalyze: 10,000 workers (prefill and decode, published, with loads)
// over 2,000 nodes in 8 zones and 100 racks.
func BenchmarkAnalyze(b *testing.B) {
	s := azBigSnapshot(10000, 2000)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		r := AnalyzeTopology(s, AnalyzeOptions{})
		if len(r.Deployments) != 1 {
			b.Fatal("bad report")
		}
	}
}

func azBigSnapshot(workers, nodes int) *model.Snapshot {
	ws := make([]model.Worker, 0, workers)
	for i := range workers {
		n := i % nodes
		zone := fmt.Sprintf("zone-%d", n%8)
		role := model.RoleDecode
		if i%3 == 0 {
			role = model.RolePrefill
		}
		w := azWorker(fmt.Sprintf("w-%05d", i), role, zone, azPub("required"), azLoad(uint64(i%1000)))
		w.Node = fmt.Sprintf("node-%04d", n)
		w.NodeLabels = map[string]string{HostnameLabel: w.Node, azZoneKey: zone,
			"topology.kubernetes.io/region": "us", "nvidia.com/rack": fmt.Sprintf("rack-%03d", n%100)}
		w.GPUs = 8
		if i%50 == 0 {
			w.Ready = false
		}
		ws = append(ws, w)
	}
	return azSnap(azDep(azRequired(), ws...))
}

func TestBigSnapshotSanity(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	r := AnalyzeTopology(azBigSnapshot(10000, 2000), AnalyzeOptions{})
	dr := r.Deployments[0]
	if len(dr.Domains) != 8 {
		t.Fatalf("domains %d", len(dr.Domains))
	}
	total := 0
	for _, d := range dr.Domains {
		total += d.Prefill.Total + d.Decode.Total
	}
	if total != 10000 {
		t.Fatalf("total replicas %d", total)
	}
}
