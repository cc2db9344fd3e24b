package explain

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/behavior"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/build"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/capture"
)

func loadExample(t testing.TB, name string) (*raw.Bundle, *model.Snapshot) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "examples", name))
	if err != nil {
		t.Fatal(err)
	}
	b, err := capture.Read(bytes.NewReader(data), name)
	if err != nil {
		t.Fatal(err)
	}
	s, err := build.Build(b)
	if err != nil {
		t.Fatal(err)
	}
	return b, s
}

func exampleTokens(t testing.TB) []uint32 {
	t.Helper()
	data, err := os.ReadFile("../../examples/prompts/support-chat.tokens")
	if err != nil {
		t.Fatal(err)
	}
	var out []uint32
	for line := range strings.Lines(string(data)) {
		if strings.HasPrefix(line, "#") {
			continue
		}
		for _, f := range strings.Fields(line) {
			v, err := routecore.ParseTokenID(f)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, v)
		}
	}
	return out
}

// TestExplainInvariants checks, over every example, that the explanation is a
// faithful view of the routing core's decision.
func TestExplainInvariants(t *testing.T) {
	files, _ := filepath.Glob("../../examples/*.yaml")
	if len(files) < 4 {
		t.Fatalf("examples: %v", files)
	}
	toks := exampleTokens(t)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			b, s := loadExample(t, filepath.Base(f))
			dep := &s.Deployments[0]
			ix, notes := IndexEvents(BundleEventSets(b, dep), 16)
			if len(notes) > 0 {
				t.Errorf("index notes: %v", notes)
			}
			x, err := Explain(Input{Snapshot: s, Deployment: dep, Request: Request{Tokens: toks, Tokenizer: "test"},
				KV: IndexCache(ix, "capture", b.CollectedAt), Options: Options{WhatIf: WhatIf{AllPrefill: true}}})
			if err != nil {
				t.Fatal(err)
			}
			if x.Request.TokenCount != len(toks) || len(x.Request.Blocks) != len(toks)/16 {
				t.Errorf("request %d tokens %d blocks", x.Request.TokenCount, len(x.Request.Blocks))
			}
			want, _ := routecore.ComputeBlocks(toks, 16, routecore.HashOptions{})
			for i, bl := range x.Request.Blocks {
				if bl.LocalHash != uint64(want[i].LocalHash) || bl.SequenceHash != uint64(want[i].SequenceHash) {
					t.Fatalf("block %d hashes differ from routecore", i)
				}
			}
			for _, st := range []*Stage{x.Prefill, x.Decode} {
				if st == nil {
					continue
				}
				sum, picked := 0.0, 0
				for _, c := range st.Candidates {
					if c.Worker == "" {
						t.Errorf("candidate %d has no pod name", c.InstanceID)
					}
					if c.Scored && c.Cost != c.Terms.Cost {
						t.Errorf("%s cost %v, routecore terms %v", c.Worker, c.Cost, c.Terms.Cost)
					}
					if !c.Eligible && c.Reason == "" {
						t.Errorf("%s ineligible without a reason", c.Worker)
					}
					sum += c.Probability
					if c.Selected {
						picked++
					}
				}
				if st.ErrorKind == "" && (picked != 1 || math.Abs(sum-1) > 1e-9) {
					t.Errorf("picked %d, probabilities sum to %v", picked, sum)
				}
			}
			if x.Verdict.Routable != (x.Verdict.Stage == "") {
				t.Errorf("verdict %+v", x.Verdict)
			}
			for _, r := range x.Matrix {
				if r.Routable == (r.Error != "") {
					t.Errorf("matrix row %+v", r)
				}
			}
			out, err := json.Marshal(x)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(out, []byte(`"instanceId":6`)) || !bytes.Contains(out, []byte(`"instanceId":"`)) {
				t.Error("instance ids must be decimal strings in JSON")
			}
		})
	}
}

// TestExplainEtcdLeaseIDsExact: etcd lease ids above 2^53 survive into the
// explanation and its JSON exactly.
func TestExplainEtcdLeaseIDsExact(t *testing.T) {
	_, s := loadExample(t, "etcd-discovery-v1alpha1.yaml")
	x, err := Explain(Input{Snapshot: s, Deployment: &s.Deployments[0], Request: Request{Tokens: exampleTokens(t)}})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(x)
	for _, id := range []string{"9223372036854775901", "9223372036854775937", "7587888160958627365"} {
		if !bytes.Contains(out, []byte(`"instanceId":"`+id+`"`)) {
			t.Errorf("instance %s missing or altered", id)
		}
	}
}

func TestExplainNoWorkers(t *testing.T) {
	dep := &model.Deployment{Name: "empty", Namespace: "ns"}
	x, err := Explain(Input{Deployment: dep, Request: Request{Tokens: []uint32{1, 2, 3}}})
	if err != nil {
		t.Fatal(err)
	}
	// No worker live: the frontend has dropped the model (every release).
	if x.Verdict.Routable || x.Verdict.Stage != StageFrontend || x.Verdict.Error != "ModelNotReady" ||
		!strings.Contains(x.Verdict.Message, "HTTP 404") || !strings.Contains(x.Verdict.Cause, "no worker of the deployment is live") {
		t.Errorf("verdict %+v", x.Verdict)
	}
	if _, err := Explain(Input{Deployment: dep}); !errors.Is(err, ErrInput) {
		t.Errorf("no tokens: %v", err)
	}
}

func TestNamesReplacesInstanceIDs(t *testing.T) {
	e := &explainer{byID: map[routecore.WorkerID]*member{
		12:  {pod: &model.Worker{Pod: "a"}, inst: &model.Instance{}},
		123: {pod: &model.Worker{Pod: "b"}, inst: &model.Instance{Runtime: routecore.RuntimeConfig{DataParallelSize: 2}}},
	}}
	for in, want := range map[string]string{
		"worker 12 and 123":            "worker a and b",
		"on 12/0, then 123/1":          "on a, then b:1",
		"1234 and x12 stay; /12 too":   "1234 and x12 stay; /12 too",
		"tainted dynamo.topology/z=12": "tainted dynamo.topology/z=12",
	} {
		if got := e.names(in); got != want {
			t.Errorf("names(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseFlagsValues(t *testing.T) {
	lo, err := ParseLoadOverride("pod-a=decodeBlocks:10,prefillTokens:20,activeRequests:3")
	if err != nil || lo.Worker != "pod-a" || *lo.DecodeBlocks != 10 || *lo.PrefillTokens != 20 || *lo.ActiveRequests != 3 {
		t.Errorf("%+v %v", lo, err)
	}
	for _, bad := range []string{"pod", "=decodeBlocks:1", "p=decodeBlocks", "p=x:1", "p=decodeBlocks:-1", "p="} {
		if _, err := ParseLoadOverride(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	// --dynamo-version maps to a routing profile through pkg/behavior.
	for in, want := range map[string]routecore.Profile{"1.1.0": routecore.ProfileLegacyV1_1, "v0.9": routecore.ProfileLegacyV1_1,
		"1.2.0": routecore.ProfileLegacyV1_2, "v1.2.7": routecore.ProfileLegacyV1_2, "1.3.0": routecore.ProfileLatest, "legacy-v1.2": routecore.ProfileLegacyV1_2, "2.0": routecore.ProfileLatest, "legacy-tree-size": routecore.ProfileLegacyTreeSize, "pre-clamp": routecore.ProfileLegacyV1_1} {
		if rel, err := behavior.ParseRelease(in); err != nil || rel.Profile() != want {
			t.Errorf("ParseRelease(%q).Profile() = %v, %v; want %v", in, rel.Profile(), err, want)
		}
	}
	for _, bad := range []string{"x", "1", "1.x", "-1.2"} {
		if _, err := behavior.ParseRelease(bad); err == nil {
			t.Errorf("ParseRelease(%q) accepted", bad)
		}
	}
	if _, err := ParseEnforcement("Preferred"); err != nil {
		t.Error(err)
	}
	if _, err := ParseDomainValue("zone="); err == nil {
		t.Error("empty value accepted")
	}
}

// BenchmarkExplainScale times each phase of `explain-route --from-file` on the
// capture written by `go run ./hack/gen-examples -scale -out DIR` (see
// hack/explain-bench.sh, which sets KDYN_SCALE_DIR).
func BenchmarkExplainScale(b *testing.B) {
	dir := os.Getenv("KDYN_SCALE_DIR")
	if dir == "" {
		b.Skip("set KDYN_SCALE_DIR (hack/explain-bench.sh does)")
	}
	data, err := os.ReadFile(filepath.Join(dir, "capture.json"))
	if err != nil {
		b.Fatal(err)
	}
	tokData, err := os.ReadFile(filepath.Join(dir, "prompt.tokens"))
	if err != nil {
		b.Fatal(err)
	}
	var toks []uint32
	for _, f := range strings.Fields(string(tokData)) {
		v, err := routecore.ParseTokenID(f)
		if err != nil {
			b.Fatal(err)
		}
		toks = append(toks, v)
	}
	bundle, err := capture.Read(bytes.NewReader(data), "capture.json")
	if err != nil {
		b.Fatal(err)
	}
	snap, err := build.Build(bundle)
	if err != nil {
		b.Fatal(err)
	}
	dep := &snap.Deployments[0]
	ix, _ := IndexEvents(BundleEventSets(bundle, dep), 16)
	in := Input{Snapshot: snap, Deployment: dep, Request: Request{Tokens: toks}, KV: IndexCache(ix, "capture", time.Time{})}
	b.Run("read-capture", func(b *testing.B) {
		for b.Loop() {
			if _, err := capture.Read(bytes.NewReader(data), "capture.json"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("build-snapshot", func(b *testing.B) {
		for b.Loop() {
			if _, err := build.Build(bundle); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("index-1M-blocks", func(b *testing.B) {
		for b.Loop() {
			IndexEvents(BundleEventSets(bundle, dep), 16)
		}
	})
	b.Run("explain", func(b *testing.B) {
		for b.Loop() {
			if _, err := Explain(in); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("explain-all-prefill", func(b *testing.B) {
		in := in
		in.Options.WhatIf.AllPrefill = true
		for b.Loop() {
			if _, err := Explain(in); err != nil {
				b.Fatal(err)
			}
		}
	})
	x, _ := Explain(in)
	b.Run("json", func(b *testing.B) {
		for b.Loop() {
			if err := json.NewEncoder(io.Discard).Encode(x); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestExplainExcludesWorkersThatCannotRegister: the dry run applies the
// validator the router applies at registration (the one behind topology's
// InvalidWorkerTopology finding), so a worker publishing a preferred weight of
// 2.0, or a topology value containing '=', is excluded with the reason instead
// of being routed to.
func TestExplainExcludesWorkersThatCannotRegister(t *testing.T) {
	b, s := loadExample(t, "prefill-only-zone-required.yaml")
	dep := &s.Deployments[0]
	bad := map[string]string{}
	for i := range dep.Workers {
		w := &dep.Workers[i]
		if len(w.Instances) == 0 || (w.Role != model.RolePrefill && w.Role != model.RoleDecode) {
			continue
		}
		rc := &w.Instances[0].Runtime
		switch {
		case w.Role == model.RolePrefill && bad["weight"] == "":
			two := 2.0
			rc.KvTransferEnforcement, rc.KvTransferPreferredWeight = routecore.EnforcementPreferred, &two
			bad["weight"] = w.Pod
		case w.Role == model.RoleDecode && bad["equals"] == "":
			for k := range rc.TopologyDomains {
				rc.TopologyDomains[k] = "us=east"
			}
			bad["equals"] = w.Pod
		}
		for j := 1; j < len(w.Instances); j++ {
			w.Instances[j].Runtime = *rc
		}
	}
	if bad["weight"] == "" || bad["equals"] == "" {
		t.Fatalf("the example has no prefill or decode worker to break: %v", bad)
	}
	for _, rc := range []string{bad["weight"], bad["equals"]} {
		for i := range dep.Workers {
			if dep.Workers[i].Pod == rc && len(behavior.RegistrationErrors(dep.Workers[i].Instances[0].Runtime)) == 0 {
				t.Fatalf("%s: the validator accepts the broken runtime config", rc)
			}
		}
	}
	ix, _ := IndexEvents(BundleEventSets(b, dep), 16)
	x, err := Explain(Input{Snapshot: s, Deployment: dep, Request: Request{Tokens: exampleTokens(t), Tokenizer: "test"},
		KV: IndexCache(ix, "capture", b.CollectedAt), Options: Options{WhatIf: WhatIf{AllPrefill: true}}})
	if err != nil {
		t.Fatal(err)
	}
	for what, pod := range bad {
		var reason string
		for _, e := range x.Excluded {
			if e.Worker == pod {
				reason = e.Reason
			}
		}
		if !strings.Contains(reason, "cannot register") {
			t.Errorf("%s (%s) not excluded as unregistrable: %q", pod, what, reason)
		}
		for leg, st := range map[string]*Stage{"prefill": x.Prefill, "decode": x.Decode} {
			if st == nil {
				continue
			}
			for _, c := range st.Candidates {
				if c.Worker == pod {
					t.Errorf("%s (%s) is still a %s candidate", pod, what, leg)
				}
			}
		}
	}
	t.Logf("excluded: %+v", x.Excluded)
}

// TestExplainPreferredWeightWhatIfRange: the what-if is checked with the
// router's range, as the flag and the dashboard's `w` key feed it.
func TestExplainPreferredWeightWhatIfRange(t *testing.T) {
	b, s := loadExample(t, "prefill-only-zone-required.yaml")
	dep := &s.Deployments[0]
	ix, _ := IndexEvents(BundleEventSets(b, dep), 16)
	for _, w := range []float64{-1, 1.0000001, 2, math.NaN(), math.Inf(1), 0, 0.5, 1} {
		ww := w
		_, err := Explain(Input{Snapshot: s, Deployment: dep, Request: Request{Tokens: exampleTokens(t), Tokenizer: "test"},
			KV: IndexCache(ix, "capture", b.CollectedAt), Options: Options{Knobs: Knobs{PreferredWeight: &ww}}})
		valid := w >= 0 && w <= 1
		if valid != (err == nil) {
			t.Errorf("--preferred-weight %v: %v (want valid=%v)", w, err, valid)
		}
		if err != nil && (!errors.Is(err, ErrInput) || !strings.Contains(err.Error(), "between 0 and 1")) {
			t.Errorf("--preferred-weight %v: %v", w, err)
		}
	}
}

// TestExplainHugeDataParallelSizeIsBounded: a DWM can publish any
// data_parallel_size; above Dynamo's 4096-rank maximum the worker cannot
// register, and it is excluded before anything is sized from the count.
func TestExplainHugeDataParallelSizeIsBounded(t *testing.T) {
	b, s := loadExample(t, "prefill-only-zone-required.yaml")
	dep := &s.Deployments[0]
	var pod string
	for i := range dep.Workers {
		w := &dep.Workers[i]
		if w.Role == model.RolePrefill && len(w.Instances) > 0 {
			for j := range w.Instances {
				w.Instances[j].Runtime.DataParallelSize = math.MaxUint32
			}
			pod = w.Pod
			break
		}
	}
	ix, _ := IndexEvents(BundleEventSets(b, dep), 16)
	x, err := Explain(Input{Snapshot: s, Deployment: dep, Request: Request{Tokens: exampleTokens(t), Tokenizer: "test"},
		KV: IndexCache(ix, "capture", b.CollectedAt), Options: Options{WhatIf: WhatIf{AllPrefill: true}}})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range x.Excluded {
		if e.Worker == pod && strings.Contains(e.Reason, "exceeds the supported maximum 4096") {
			found = true
		}
	}
	if !found {
		t.Errorf("%s with data_parallel_size 2^32-1 not excluded: %+v", pod, x.Excluded)
	}
}

// TestPendingWorkersAreNotCandidates (issue 17 item 3): a decode pod the
// scheduler has not placed is excluded as Pending with the scheduler's reason,
// not as a worker that publishes nothing.
func TestPendingWorkersAreNotCandidates(t *testing.T) {
	// The prefill workers registered; the decode workers cannot be scheduled.
	const file = "../../test/fixtures/upstream/trtllm-disagg-multinode-v1beta1-zone-required-gen-pending-registered.yaml"
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	b, err := capture.Read(bytes.NewReader(data), file)
	if err != nil {
		t.Fatal(err)
	}
	s, err := build.Build(b)
	if err != nil {
		t.Fatal(err)
	}
	x, err := Explain(Input{Snapshot: s, Deployment: &s.Deployments[0], Request: Request{Tokens: []uint32{1, 2, 3}}})
	if err != nil {
		t.Fatal(err)
	}
	const want = `Pending, not scheduled, Unschedulable "0/5 nodes are available: 5 Insufficient nvidia.com/gpu."; it runs nowhere, so the router does not know it`
	n := 0
	for _, e := range x.Excluded {
		if e.Role == model.RoleDecode {
			n++
			if e.Reason != want {
				t.Errorf("%s: %q, want %q", e.Worker, e.Reason, want)
			}
		}
	}
	if n != 2 || x.Verdict.Routable || !strings.Contains(x.Verdict.Cause, "Insufficient nvidia.com/gpu") {
		t.Errorf("excluded %+v, verdict %+v", x.Excluded, x.Verdict)
	}
	if got := pendingReason(&model.PodPending{}); got != "Pending, not scheduled, no reason read; it runs nowhere, so the router does not know it" {
		t.Errorf("no reason: %q", got)
	}
}
