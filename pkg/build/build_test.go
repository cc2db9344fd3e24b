package build

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/capture"
)

// buildFixture reads test/fixtures/build/<name> as a capture and builds it.
func buildFixture(t *testing.T, name string) *model.Snapshot {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "test", "fixtures", "build", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := capture.Read(f, "")
	if err != nil {
		t.Fatalf("ReadCapture(%s): %v", name, err)
	}
	s, err := Build(b)
	if err != nil {
		t.Fatalf("Build(%s): %v", name, err)
	}
	return s
}

func u64p(v uint64) *uint64   { return &v }
func f64p(v float64) *float64 { return &v }
func i32p(v int32) *int32     { return &v }
func mustDep(t *testing.T, s *model.Snapshot, key string) *model.Deployment {
	t.Helper()
	for i := range s.Deployments {
		if s.Deployments[i].Key() == key {
			return &s.Deployments[i]
		}
	}
	t.Fatalf("deployment %s not in snapshot (have %d)", key, len(s.Deployments))
	return nil
}

// noteMessages returns the notes' severities and messages.
func noteMessages(ns []model.Note) []string {
	var out []string
	for _, n := range ns {
		out = append(out, string(n.Severity)+" "+string(n.Source)+" "+n.Deployment+": "+n.Message)
	}
	return out
}

func TestBuildLabelKeyV1beta1(t *testing.T) {
	s := buildFixture(t, "labelkey-v1beta1.yaml")
	if s.Context != "kind-test" || !s.CollectedAt.Equal(time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)) {
		t.Errorf("context/collectedAt = %q %v", s.Context, s.CollectedAt)
	}
	d := mustDep(t, s, "inference/llama-disagg")
	wantPolicy := &model.TransferPolicy{Mode: model.PolicyLabelKey, LabelKey: "topology.kubernetes.io/zone", Domain: "zone",
		Enforcement: routecore.EnforcementPreferred, PreferredWeight: f64p(0.8),
		PodLabelKey: "topology.kubernetes.io/zone", NodeLabelKey: "topology.kubernetes.io/zone"}
	if diff := cmp.Diff(wantPolicy, d.Policy); diff != "" {
		t.Errorf("policy (-want +got):\n%s", diff)
	}
	if d.Topology != nil {
		t.Errorf("topology = %+v, want nil (labelKey mode, no placement)", d.Topology)
	}
	wantComps := []model.Component{
		{Name: "Decode", Type: "decode", Replicas: i32p(8), Image: "example.invalid/dynamo-runtime:1.3.0"},
		{Name: "Frontend", Type: "frontend", Replicas: i32p(2), Image: "example.invalid/dynamo-runtime:1.3.0"},
		{Name: "Prefill", Type: "prefill", Replicas: i32p(4), Image: "example.invalid/dynamo-runtime:1.3.0"},
	}
	if diff := cmp.Diff(wantComps, d.Components); diff != "" {
		t.Errorf("components (-want +got):\n%s", diff)
	}
	if d.DiscoveryBackend != "kubernetes" || d.DynamoNamespace != "inference-llama-disagg" || d.APIVersion != "nvidia.com/v1beta1" {
		t.Errorf("backend %q, dynamo namespace %q, apiVersion %q", d.DiscoveryBackend, d.DynamoNamespace, d.APIVersion)
	}
	if diff := cmp.Diff([]model.Condition{{Type: "Ready", Status: "True", Reason: "all_resources_are_ready"}}, d.Conditions); diff != "" {
		t.Errorf("conditions (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]model.Frontend{{Pod: "llama-disagg-0-frontend-f9q2z", Node: "cpu-node-1", Ready: true, Service: "llama-disagg-frontend:8000", Image: "example.invalid/dynamo-runtime:1.3.0", Container: "main"}}, d.Frontends, ignoreCommandLines); diff != "" {
		t.Errorf("frontends (-want +got):\n%s", diff)
	}

	// Router: env DYN_ROUTER_MODE and DYN_ROUTER_TEMPERATURE on the frontend pod;
	// the live /busy_threshold answer replaces DYN_ACTIVE_DECODE_BLOCKS_THRESHOLD.
	r := d.Router
	if r.Mode != "kv" || r.ModeSource != "frontend pod llama-disagg-0-frontend-f9q2z env DYN_ROUTER_MODE" {
		t.Errorf("router mode %q from %q", r.Mode, r.ModeSource)
	}
	if r.Config.RouterTemperature != 0.25 || r.ConfigSource != "frontend pod llama-disagg-0-frontend-f9q2z (defaults ← env ← args)" {
		t.Errorf("router temperature %v from %q", r.Config.RouterTemperature, r.ConfigSource)
	}
	wantThr := routecore.BusyThresholds{ActiveDecodeBlocksThreshold: f64p(0.7), ActivePrefillTokensThreshold: u64p(18446744073709551615)}
	if diff := cmp.Diff(wantThr, r.Thresholds); diff != "" || r.ThresholdsSource != "frontend /busy_threshold" {
		t.Errorf("thresholds from %q (-want +got):\n%s", r.ThresholdsSource, diff)
	}
	override := routecore.DefaultKvRouterConfig()
	override.RouterTemperature = 0.5
	if diff := cmp.Diff([]model.RouterOverride{{Component: "Decode", Mode: "kv", Config: override}}, r.WorkerSetOverrides); diff != "" {
		t.Errorf("worker set overrides (-want +got):\n%s", diff)
	}
	if len(r.Warnings) != 0 {
		t.Errorf("router warnings: %q", r.Warnings)
	}

	topoEnv := model.TopologyEnv{Enabled: "true", TransferDomain: "zone", Enforcement: "preferred", PreferredWeight: "0.8", MountPath: "/etc/dynamo/topology"}
	wantWorkers := []model.Worker{
		{
			Pod: "llama-disagg-0-decode-x7k2p", Namespace: "inference", Node: "gpu-node-17", Component: "Decode",
			Role: model.RoleDecode, RoleSignal: "label nvidia.com/dynamo-component-type",
			Replica: "llama-disagg-0-decode-x7k2p", Leader: true, Ready: true, Phase: "Running",
			GPUs: 1, GPUResources: map[string]int64{"nvidia.com/gpu": 1},
			// Drift: the pod label says 1a, the node now says 1b.
			Domain:             model.DomainValues{Pod: "us-east-1a", Node: "us-east-1b"},
			TopologyEnv:        topoEnv,
			LabelKeyAnnotation: "topology.kubernetes.io/zone",
			NodeLabels: map[string]string{"kubernetes.io/hostname": "gpu-node-17", "nvidia.com/gpu.clique": "7b968a6d-c8aa-45e1-9e07-e1e51be99c31.1",
				"topology.kubernetes.io/region": "us-east-1", "topology.kubernetes.io/zone": "us-east-1b"},
			PodLabels: map[string]string{"topology.kubernetes.io/zone": "us-east-1a"},
		},
		{
			Pod: "llama-disagg-0-decode-y8m3q", Namespace: "inference", Node: "gpu-node-18", Component: "Decode",
			Role: model.RoleDecode, RoleSignal: "card worker_type",
			// The pod is Ready but its EndpointSlice endpoint is not.
			Replica: "llama-disagg-0-decode-y8m3q", Leader: true, Ready: false, Phase: "Running",
			GPUs: 2, GPUResources: map[string]int64{"nvidia.com/gpu": 2},
			Instances: []model.Instance{{
				ID: 7931044990446460, Endpoint: "inference-llama-disagg/decode/generate", Model: "example/model",
				WorkerType: "decode", BlockSize: 16,
				Runtime: routecore.RuntimeConfig{TotalKvBlocks: u64p(50000), DataParallelSize: 1, DataParallelSizeSet: true, TopologyDomains: map[string]string{},
					KvTransferDomain: "zone", KvTransferEnforcement: "preferred", KvTransferPreferredWeight: f64p(0.8)},
				RouterConfig: []byte(`{"kv_router_config":{"router_temperature":0.5},"router_mode":"kv"}`),
				Source:       "dwm/llama-disagg-0-decode-y8m3q",
				Load:         []model.RankLoad{{DpRank: 0, ActiveDecodeBlocks: 1234}},
			}},
			// Published a transfer domain with no value; the node lacks the label.
			Domain:             model.DomainValues{PublishedDomain: "zone"},
			LabelKeyAnnotation: "topology.kubernetes.io/zone",
			NodeLabels:         map[string]string{"kubernetes.io/hostname": "gpu-node-18"},
		},
		{
			Pod: "llama-disagg-0-prefill-p4n8w", Namespace: "inference", Node: "gpu-node-16", Component: "Prefill",
			Role: model.RolePrefill, RoleSignal: "card worker_type",
			Replica: "llama-disagg-0-prefill-p4n8w", Leader: true, Ready: true, Phase: "Running",
			GPUs: 1, GPUResources: map[string]int64{"nvidia.com/gpu": 1},
			Instances: []model.Instance{{
				ID: 6245565840783911, Endpoint: "inference-llama-disagg/prefill/generate", Model: "example/model",
				WorkerType: "prefill", BlockSize: 16,
				Runtime: routecore.RuntimeConfig{TotalKvBlocks: u64p(92962), MaxNumSeqs: u64p(256), MaxNumBatchedTokens: u64p(16384),
					DataParallelSize: 2, DataParallelSizeSet: true, Taints: []string{"dynamo.topology/zone=us-east-1a"}, TopologyDomains: map[string]string{"zone": "us-east-1a"},
					KvTransferDomain: "zone", KvTransferEnforcement: "preferred", KvTransferPreferredWeight: f64p(0.8)},
				Source: "dwm/llama-disagg-0-prefill-p4n8w",
				// 512.4 tokens round to 512.
				Load: []model.RankLoad{{DpRank: 0, ActivePrefillTokens: 4096}, {DpRank: 1, ActiveDecodeBlocks: 3, ActivePrefillTokens: 512}},
			}},
			Domain:             model.DomainValues{Published: "us-east-1a", PublishedDomain: "zone", Pod: "us-east-1a", Node: "us-east-1a"},
			TopologyEnv:        topoEnv,
			LabelKeyAnnotation: "topology.kubernetes.io/zone",
			NodeLabels: map[string]string{"kubernetes.io/hostname": "gpu-node-16",
				"topology.kubernetes.io/region": "us-east-1", "topology.kubernetes.io/zone": "us-east-1a"},
			PodLabels: map[string]string{"topology.kubernetes.io/zone": "us-east-1a"},
		},
	}
	if diff := cmp.Diff(wantWorkers, d.Workers, ignoreCommandLines); diff != "" {
		t.Errorf("workers (-want +got):\n%s", diff)
	}
	wantEvents := []model.Event{
		{Reason: "TopologyLevelsAvailable", Type: "Normal", Object: "dynamographdeployment/llama-disagg",
			Message: "all topology levels are available", Last: time.Date(2026, 8, 1, 11, 0, 0, 0, time.UTC)},
		{Reason: "TopologyLabelMissing", Type: "Warning", Object: "pod/llama-disagg-0-decode-y8m3q", Count: 3,
			Message: `Node "gpu-node-18" does not have required topology label "topology.kubernetes.io/zone"; topology metadata for "topology.kubernetes.io/zone" will remain unavailable`,
			Last:    time.Date(2026, 8, 1, 11, 58, 0, 0, time.UTC)},
	}
	if diff := cmp.Diff(wantEvents, d.Events); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if d.Load == nil || d.Load.Source != "inference/services/llama-disagg-frontend:8000/proxy/metrics" || !d.Load.At.Equal(time.Date(2026, 8, 1, 11, 59, 58, 0, time.UTC)) {
		t.Errorf("load info = %+v", d.Load)
	}
	wantNotes := []string{
		"info frontend inference/llama-disagg: inference/services/llama-disagg-frontend:8000/proxy/metrics reports load for 1 worker id(s) no published instance has (999); those loads are not shown",
		"warning frontend inference/llama-disagg: inference/services/llama-disagg-frontend:8000/proxy/metrics: 1 line(s) could not be parsed (first: line 11: expected ',' or '}' after label worker_id); they were skipped, so some worker loads may be missing",
		"warning frontend inference/llama-disagg: inference/services/llama-disagg-frontend:8000/proxy/metrics: 1 worker load sample(s) have an unparsable worker_id, dp_rank or value; they were skipped",
	}
	if diff := cmp.Diff(wantNotes, noteMessages(s.Notes)); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}
}

// workerSummary is the part of a Worker the fixture tables assert.
type workerSummary struct {
	Pod, Component, Replica string
	Role                    model.Role
	Signal                  string
	Leader, Ready           bool
	GPUs                    int64
	GPURes                  map[string]int64
	Domain                  model.DomainValues
	IDs                     []string
	Sources                 []string
}

func summarize(ws []model.Worker) []workerSummary {
	var out []workerSummary
	for _, w := range ws {
		s := workerSummary{Pod: w.Pod, Component: w.Component, Replica: w.Replica, Role: w.Role, Signal: w.RoleSignal,
			Leader: w.Leader, Ready: w.Ready, GPUs: w.GPUs, GPURes: w.GPUResources, Domain: w.Domain}
		for _, in := range w.Instances {
			s.IDs = append(s.IDs, in.ID.String())
			s.Sources = append(s.Sources, in.Source)
		}
		out = append(out, s)
	}
	return out
}

func TestBuildGroveTopologyMode(t *testing.T) {
	s := buildFixture(t, "grove-topology.yaml")
	d := mustDep(t, s, "inference/qwen-rack")
	wantPolicy := &model.TransferPolicy{Mode: model.PolicyClusterTopologyName, ClusterTopologyName: "gpu-fabric", Domain: "rack",
		Enforcement: "required", PodLabelKey: "nvidia.com/dynamo-topology.rack", NodeLabelKey: "nvidia.com/gpu.clique"}
	if diff := cmp.Diff(wantPolicy, d.Policy); diff != "" {
		t.Errorf("policy (-want +got):\n%s", diff)
	}
	wantTopo := &model.TopologyObject{Kind: "ClusterTopologyBinding", Name: "gpu-fabric", Found: true, Levels: []model.TopologyLevel{
		{Domain: "zone", NodeLabelKey: "topology.kubernetes.io/zone"}, {Domain: "rack", NodeLabelKey: "nvidia.com/gpu.clique"},
		{Domain: "host", NodeLabelKey: "kubernetes.io/hostname"}}}
	if diff := cmp.Diff(wantTopo, d.Topology); diff != "" {
		t.Errorf("topology (-want +got):\n%s", diff)
	}
	want := []workerSummary{
		{Pod: "qwen-rack-0-sgldecodeworker-x9p4t", Component: "SglDecodeWorker", Replica: "qwen-rack-0-sgldecodeworker-x9p4t",
			Role: model.RoleDecode, Signal: "arg --disaggregation-mode", Leader: true, Ready: true, GPUs: 2, GPURes: map[string]int64{"nvidia.com/gpu": 2},
			Domain: model.DomainValues{Pod: "7b968a6d-c8aa-45e1-9e07-e1e51be99c31.2", Node: "7b968a6d-c8aa-45e1-9e07-e1e51be99c31.3"}},
		{Pod: "qwen-rack-0-sglprefillworker-7kq2m", Component: "SglPrefillWorker", Replica: "qwen-rack-0-sglprefillworker-7kq2m",
			Role: model.RolePrefill, Signal: "arg --disaggregation-mode", Leader: true, Ready: true, GPUs: 2, GPURes: map[string]int64{"nvidia.com/gpu": 2},
			Domain: model.DomainValues{Pod: "7b968a6d-c8aa-45e1-9e07-e1e51be99c31.1", Node: "7b968a6d-c8aa-45e1-9e07-e1e51be99c31.1"}},
		// No type label, no args: the component's declared type is worker and the
		// deployment has prefill workers.
		{Pod: "qwen-rack-0-sglworker-q8w3e", Component: "SglWorker", Replica: "qwen-rack-0-sglworker-q8w3e",
			Role: model.RoleDecode, Signal: "deployment has prefill workers", Leader: true,
			Domain: model.DomainValues{Node: "7b968a6d-c8aa-45e1-9e07-e1e51be99c31.3"}},
	}
	if diff := cmp.Diff(want, summarize(d.Workers)); diff != "" {
		t.Errorf("workers (-want +got):\n%s", diff)
	}
	w := d.Workers[1]
	if w.LabelKeyAnnotation != "gpu-fabric" || w.TopologyEnv != (model.TopologyEnv{TransferDomain: "rack", Enforcement: "required"}) ||
		len(w.PodLabels) != 3 || w.NodeLabels["network.topology.nvidia.com/accelerator"] != "nvl72-a" {
		t.Errorf("prefill worker topology facts: %+v", w)
	}
	// bash -lc script: $(MODE) and "${TEMP}" expanded from the pod env, the
	// trailing comment ignored; the pod's DYN_ROUTER_TTL_SECS wins over spec.env.
	r := d.Router
	if r.Mode != "kv" || r.ModeSource != "frontend pod qwen-rack-0-frontend-2bcdf args" || r.Config.RouterTemperature != 0.5 || r.Config.RouterTTLSecs != 90 {
		t.Errorf("router = mode %q (%s), temperature %v, ttl %v", r.Mode, r.ModeSource, r.Config.RouterTemperature, r.Config.RouterTTLSecs)
	}
	if diff := cmp.Diff([]model.Frontend{{Pod: "qwen-rack-0-frontend-2bcdf", Node: "cpu-1", Container: "main"}}, d.Frontends, ignoreCommandLines); diff != "" {
		t.Errorf("frontends (-want +got):\n%s", diff)
	}
	if len(s.Notes) != 0 {
		t.Errorf("unexpected notes: %q", noteMessages(s.Notes))
	}

	t.Run("legacy ClusterTopology", func(t *testing.T) {
		b := ReadFixtureBundle(t, "grove-topology.yaml")
		b.Objects.Topologies[0].Kind = "ClusterTopology"
		s, _ := Build(b)
		d := mustDep(t, s, "inference/qwen-rack")
		if d.Topology.Kind != "ClusterTopology" || !d.Topology.Found || d.Policy.NodeLabelKey != "nvidia.com/gpu.clique" {
			t.Errorf("topology %+v, node key %q", d.Topology, d.Policy.NodeLabelKey)
		}
	})
	t.Run("topology object missing", func(t *testing.T) {
		b := ReadFixtureBundle(t, "grove-topology.yaml")
		b.Objects.Topologies = b.Objects.Topologies[1:]
		s, _ := Build(b)
		d := mustDep(t, s, "inference/qwen-rack")
		if diff := cmp.Diff(&model.TopologyObject{Kind: "ClusterTopologyBinding", Name: "gpu-fabric"}, d.Topology); diff != "" || d.Policy.NodeLabelKey != "" {
			t.Errorf("node key %q; topology (-want +got):\n%s", d.Policy.NodeLabelKey, diff)
		}
		if got := d.Workers[1].Domain; got != (model.DomainValues{Pod: "7b968a6d-c8aa-45e1-9e07-e1e51be99c31.1"}) {
			t.Errorf("domain values without a node key: %+v", got)
		}
	})
}

func ReadFixtureBundle(t testing.TB, name string) *raw.Bundle {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "test", "fixtures", "build", name))
	if err != nil {
		t.Fatal(err)
	}
	b, err := capture.Read(bytes.NewReader(data), "")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestBuildV1alpha1Etcd(t *testing.T) {
	s := buildFixture(t, "v1alpha1-etcd.yaml")
	d := mustDep(t, s, "inference/legacy-disagg")
	if d.APIVersion != "nvidia.com/v1alpha1" || d.DiscoveryBackend != "etcd" || d.DynamoNamespace != "inference-legacy-disagg" {
		t.Errorf("apiVersion %q backend %q dynamo namespace %q", d.APIVersion, d.DiscoveryBackend, d.DynamoNamespace)
	}
	if !d.Policy.EnforcementDefaulted || d.Policy.Enforcement != routecore.EnforcementRequired {
		t.Errorf("enforcement %q defaulted %v", d.Policy.Enforcement, d.Policy.EnforcementDefaulted)
	}
	// Placement names a topology profile that is absent.
	if diff := cmp.Diff(&model.TopologyObject{Kind: "ClusterTopologyBinding", Name: "gpu-fabric"}, d.Topology); diff != "" {
		t.Errorf("topology (-want +got):\n%s", diff)
	}
	wantComps := []model.Component{
		{Name: "Frontend", Type: "frontend", Replicas: i32p(1)},
		{Name: "VllmDecodeWorker", Type: "worker", SubComponentType: "decode", Replicas: i32p(3), NodesPerReplica: 2},
		{Name: "VllmPrefillWorker", Type: "worker", SubComponentType: "prefill", Replicas: i32p(3)},
	}
	if diff := cmp.Diff(wantComps, d.Components); diff != "" {
		t.Errorf("components (-want +got):\n%s", diff)
	}
	// No frontend pod: the router comes from the spec (services envs, DGD envs,
	// extraPodSpec.mainContainer.args).
	r := d.Router
	if r.Mode != "kv" || r.ModeSource != "DGD component Frontend spec (no frontend pod) env DYN_ROUTER_MODE" ||
		r.Config.RouterTemperature != 0.5 || r.Config.UseKvEvents {
		t.Errorf("router = %q (%s) temperature %v use_kv_events %v", r.Mode, r.ModeSource, r.Config.RouterTemperature, r.Config.UseKvEvents)
	}
	want := []workerSummary{
		// Matched by nothing: a worker without a pod; role from the Dynamo component.
		{Component: "decode", Replica: "instance-2246800662264969600", Role: model.RoleDecode, Signal: "component name", Leader: true, Ready: true,
			IDs: []string{"2246800662264969600"}, Sources: []string{"etcd/v1/instances/inference-legacy-disagg/decode/generate/1f2e3d4c5b6a7980"}},
		// Matched by stable_routing_id; id above 2^63.
		{Pod: "legacy-disagg-0-vllmdecodeworker-fghij", Component: "VllmDecodeWorker", Replica: "legacy-disagg-0-vllmdecodeworker-fghij",
			Role: model.RoleDecode, Signal: "card worker_type", Leader: true, Ready: true,
			Domain: model.DomainValues{Published: "clique-1", PublishedDomain: "rack", Pod: "clique-1", Node: "clique-2"},
			IDs:    []string{"18364758544493064720"}, Sources: []string{"etcd/v1/mdc/inference-legacy-disagg/decode/generate/fedcba9876543210"}},
		// Matched by the pod IP in the tcp transport; id above 2^53; no worker_type.
		{Pod: "legacy-disagg-0-vllmprefillworker-abcde", Component: "VllmPrefillWorker", Replica: "legacy-disagg-0-vllmprefillworker-abcde",
			Role: model.RolePrefill, Signal: "label nvidia.com/dynamo-sub-component-type", Leader: true, Ready: true,
			Domain: model.DomainValues{Published: "clique-1", PublishedDomain: "rack", Pod: "clique-1", Node: "clique-1"},
			IDs:    []string{"7587888160958627365"}, Sources: []string{"etcd/v1/mdc/inference-legacy-disagg/prefill/generate/694d98147d54be25"}},
	}
	if diff := cmp.Diff(want, summarize(d.Workers)); diff != "" {
		t.Errorf("workers (-want +got):\n%s", diff)
	}
	if in := d.Workers[2].Instances[0]; in.BlockSize != 32 || in.Model != "Qwen/Qwen3-32B" || *in.Runtime.TotalKvBlocks != 12000 {
		t.Errorf("prefill instance = %+v", in)
	}
	wantNotes := []string{
		"warning etcd : 1 etcd instance(s) belong to no deployment in scope (their Dynamo namespace matches none): 42 (other-ns/backend/generate); they are not shown",
		"info etcd : 1 etcd keys use the pre-v1 layout (instances/, models/), which is not read; workers of such old deployments are not shown from etcd",
		"warning etcd inference/legacy-disagg: 1 etcd instance(s) of DynamoGraphDeployment inference/legacy-disagg could not be matched to a pod (no runtime_config.stable_routing_id naming a pod and no pod IP in the transport address); they are shown as workers without a pod, assumed ready because their lease is alive: their node, GPUs and topology labels are unknown",
	}
	if diff := cmp.Diff(wantNotes, noteMessages(s.Notes)); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}
}

func TestBuildMultinodeAndMIG(t *testing.T) {
	s := buildFixture(t, "multinode-mig.yaml")
	want := map[string][]workerSummary{
		"llm/ds-r1": {
			{Pod: "ds-r1-0-decode-0-decode-ldr-a1b2c", Component: "Decode", Replica: "ds-r1-0-decode-0-decode", Role: model.RoleDecode,
				Signal: "label nvidia.com/dynamo-component-type", Leader: true, Ready: true, GPUs: 8, GPURes: map[string]int64{"nvidia.com/gpu": 8}},
			{Pod: "ds-r1-0-decode-0-decode-wkr-d3e4f", Component: "Decode", Replica: "ds-r1-0-decode-0-decode", Role: model.RoleDecode,
				Signal: "label nvidia.com/dynamo-component-type", GPUs: 8, GPURes: map[string]int64{"nvidia.com/gpu": 8}},
			// MIG: 2 × 3g.40gb (request) + 1g.10gb (limit only) + 1g.10gb in a
			// native sidecar; the ordinary init container's GPU is not counted.
			{Pod: "ds-r1-0-prefill-g5h6i", Component: "Prefill", Replica: "ds-r1-0-prefill-g5h6i", Role: model.RolePrefill,
				Signal: "label nvidia.com/dynamo-component-type", Leader: true, Ready: true, GPUs: 4,
				GPURes: map[string]int64{"nvidia.com/mig-3g.40gb": 2, "nvidia.com/mig-1g.10gb": 2}},
		},
		"llm/lws-dgd": {
			{Pod: "lws-dgd-worker-0", Component: "Worker", Replica: "lws-dgd-worker-0", Role: model.RoleAggregated,
				Signal: model.SignalOnlyWorkerComponent, Leader: true, Ready: true, GPUs: 4, GPURes: map[string]int64{"nvidia.com/gpu": 4}},
			{Pod: "lws-dgd-worker-0-1", Component: "Worker", Replica: "lws-dgd-worker-0", Role: model.RoleAggregated,
				Signal: model.SignalOnlyWorkerComponent, Ready: true, GPUs: 4, GPURes: map[string]int64{"nvidia.com/gpu": 4}},
		},
	}
	for key, w := range want {
		if diff := cmp.Diff(w, summarize(mustDep(t, s, key).Workers)); diff != "" {
			t.Errorf("%s workers (-want +got):\n%s", key, diff)
		}
	}
	if c := mustDep(t, s, "llm/ds-r1").Components[0]; c.NodesPerReplica != 2 {
		t.Errorf("decode nodes per replica = %d", c.NodesPerReplica)
	}
}

func TestBuildDWMPayloads(t *testing.T) {
	s := buildFixture(t, "dwm-payloads.yaml")
	d := mustDep(t, s, "dynamo-system/qwen3-disagg")
	want := []model.Worker{
		{
			// Legacy v1.2 card: display_name only; role from the deployment.
			Pod: "legacy-worker", Namespace: "dynamo-system", Component: "backend", Role: model.RoleDecode, RoleSignal: "deployment has prefill workers",
			Replica: "legacy-worker", Leader: true, Ready: true, Phase: "Running",
			Instances: []model.Instance{{ID: 42, Endpoint: "dynamo/backend/generate", Model: "Qwen/Qwen3-0.6B", Source: "dwm/legacy-worker"}},
		},
		{
			Pod: "qwen3-disagg-0-vllmprefillworker-7xk2p", Namespace: "dynamo-system", Component: "VllmPrefillWorker",
			Role: model.RolePrefill, RoleSignal: "card worker_type", Replica: "qwen3-disagg-0-vllmprefillworker-7xk2p", Leader: true, Ready: true, Phase: "Running",
			Instances: []model.Instance{{
				ID: 6245565840783911, Endpoint: "dynamo-qwen3/prefill/generate", Model: "Qwen/Qwen3-32B", WorkerType: "prefill", BlockSize: 16,
				Runtime: routecore.RuntimeConfig{TotalKvBlocks: u64p(92962), MaxNumSeqs: u64p(256), MaxNumBatchedTokens: u64p(16384),
					DataParallelSize: 1, DataParallelSizeSet: true, Taints: []string{"dynamo.topology/zone=us-east-1a"}, TopologyDomains: map[string]string{"zone": "us-east-1a"},
					KvTransferDomain: "zone", KvTransferEnforcement: "preferred", KvTransferPreferredWeight: f64p(0.85)},
				Source: "dwm/qwen3-disagg-0-vllmprefillworker-7xk2p",
			}},
			Domain: model.DomainValues{Published: "us-east-1a", PublishedDomain: "zone"},
		},
	}
	if diff := cmp.Diff(want, d.Workers, ignoreCommandLines); diff != "" {
		t.Errorf("workers (-want +got):\n%s", diff)
	}
}

// ignoreCommandLines leaves out the command lines and DYN_* env the model keeps
// for the routing-health rules (pkg/analysis/health tests them): these tests pin
// what the builder decides from them.
var ignoreCommandLines = cmp.Options{cmpopts.IgnoreFields(model.Worker{}, "Argv", "Env"), cmpopts.IgnoreFields(model.Frontend{}, "Argv", "Env")}
