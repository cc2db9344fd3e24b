package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/fakefrontend"
	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/kubeenv"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/explain"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/capture"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/tokenizer"
)

// The live explain-route tests run `kubectl dynamo explain-route` through the
// real kubectl against the real API server (the example's objects loaded into
// it), as the least-privilege user "inspector", with a fake Dynamo frontend
// whose /tokenize runs a real tokenizer and whose placements stream publishes
// blocks hashed from that tokenizer's output, so every overlap is real.

const (
	// explainPrompt tokenizes (toy byte-level BPE, BOS added) into 141 tokens:
	// 8 full blocks of 16.
	explainPrompt = "You are a support assistant for an online bookshop. A customer writes: my order of three " +
		"paperbacks arrived with one book missing; please help me get the missing one sent."
	// explainTokenizer is a committed tokenizer.json (not a fetched one).
	explainTokenizer = "../../pkg/tokenizer/testdata/toy_bytelevel.json"

	qwenModel   = "Qwen/Qwen3-32B"
	qwenDynNS   = "serving-qwen3-32b"
	pod1c0      = "qwen3-32b-0-prefill-us-east-1c-0"
	pod1a0      = "qwen3-32b-0-prefill-us-east-1a-0"
	overlap1c0  = 6 // blocks of the prompt the 1c-0 prefill worker holds
	overlap1a0  = 2 // … and the 1a-0 prefill worker
	exampleQwen = "prefill-only-zone-required.yaml"
)

// explainFixture is one example loaded into the API server, with what the fake
// frontend serves and what the test expects.
type explainFixture struct {
	e      *kubeenv.Env
	kc     string // the inspector's kubeconfig
	bundle *raw.Bundle
	tok    *tokenizer.Tokenizer
	tokens []uint32
	blocks []routecore.Block
}

// newExplainFixture loads file, grants the inspector read-only RBAC, and
// tokenizes and hashes the prompt the way the fake frontend will.
func newExplainFixture(t *testing.T, file string) *explainFixture {
	t.Helper()
	e := kubeenv.Require(t, env)
	loadExample(t, e, file)
	f := &explainFixture{e: e, kc: inspectorKubeconfig(t, e)}
	data, err := os.ReadFile("../../examples/" + file)
	if err != nil {
		t.Fatal(err)
	}
	if f.bundle, err = capture.ParseWhole(data, file); err != nil {
		t.Fatal(err)
	}
	if f.tok, err = tokenizer.Load(explainTokenizer); err != nil {
		t.Fatal(err)
	}
	if f.tokens, err = f.tok.Encode(explainPrompt, true); err != nil {
		t.Fatal(err)
	}
	if f.blocks, err = routecore.ComputeBlocks(f.tokens, 16, routecore.HashOptions{}); err != nil {
		t.Fatal(err)
	}
	if len(f.blocks) < overlap1c0+1 {
		t.Fatalf("the prompt has %d blocks; the test needs more than %d", len(f.blocks), overlap1c0)
	}
	return f
}

// inspectorKubeconfig applies the read-only ClusterRole and its binding to the
// user "inspector" (test/fixtures/live/rbac.yaml) and returns a
// kubeconfig for that user.
func inspectorKubeconfig(t *testing.T, e *kubeenv.Env) string {
	t.Helper()
	rbac, err := os.ReadFile("../../test/fixtures/live/rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	docs := strings.SplitN(string(rbac), "\n---", 3)
	if _, err := e.ApplyYAML(context.Background(), []byte(docs[0]+"\n---"+docs[1])); err != nil {
		t.Fatal(err)
	}
	kc, err := e.KubeconfigFor("inspector", nil)
	if err != nil {
		t.Fatal(err)
	}
	return kc
}

// metrics returns the example's frontend /metrics text and /busy_threshold answer.
func (f *explainFixture) metrics(t *testing.T, deployment string) (text, busy string) {
	t.Helper()
	for _, m := range f.bundle.Metrics {
		if m.Deployment == deployment {
			text = m.Text
		}
	}
	for _, b := range f.bundle.BusyThresholds {
		if b.Deployment == deployment {
			busy = b.JSON
		}
	}
	if text == "" || busy == "" {
		t.Fatalf("the example has no frontend metrics or busy_threshold for %s", deployment)
	}
	return text, busy
}

// frontendConfig is a fake frontend serving the example's metrics and
// busy_threshold and tokenizing with the test's tokenizer.
func (f *explainFixture) frontendConfig(t *testing.T, deployment, model string) fakefrontend.Config {
	text, busy := f.metrics(t, deployment)
	return fakefrontend.Config{
		Metrics:       text,
		BusyThreshold: busy,
		Models:        []string{model},
		MaxModelLen:   131072,
		Tokenize: func(prompt string, messages json.RawMessage) ([]uint32, error) {
			if messages != nil {
				return nil, errors.New("the fake has no chat template")
			}
			return f.tok.Encode(prompt, true)
		},
		IndexerModels: []string{model},
	}
}

// stored is a placement event: worker holds the prompt's first n blocks.
func (f *explainFixture) stored(worker routecore.WorkerID, eventID uint64, n int) routecore.RouterEvent {
	blocks := make([]routecore.KvCacheStoredBlock, n)
	for i := range blocks {
		blocks[i] = routecore.KvCacheStoredBlock{BlockHash: f.blocks[i].SequenceHash, TokensHash: f.blocks[i].LocalHash}
	}
	return routecore.RouterEvent{WorkerID: worker, Event: routecore.KvCacheEvent{EventID: eventID,
		Data: routecore.KvCacheEventData{Stored: &routecore.KvCacheStoreData{Blocks: blocks}}}}
}

// dwmInstanceIDs returns pod name → endpoint instance id from the example's
// DynamoWorkerMetadata objects (independently of the plugin's discovery code).
func dwmInstanceIDs(t *testing.T, b *raw.Bundle) map[string]routecore.WorkerID {
	t.Helper()
	ids := map[string]routecore.WorkerID{}
	for _, m := range b.AsRead {
		u := &unstructured.Unstructured{Object: m}
		if u.GetKind() != "DynamoWorkerMetadata" {
			continue
		}
		eps, _, _ := unstructured.NestedMap(u.Object, "spec", "data", "endpoints")
		for _, ep := range eps {
			m, _ := ep.(map[string]any)
			id, err := strconv.ParseUint(fmt.Sprint(m["instance_id"]), 10, 64)
			if err != nil {
				t.Fatalf("DWM %s: instance_id %v: %v", u.GetName(), m["instance_id"], err)
			}
			ids[u.GetName()] = routecore.WorkerID(id)
		}
	}
	if len(ids) == 0 {
		t.Fatal("the example has no DynamoWorkerMetadata endpoints")
	}
	return ids
}

// kubectlEnv is kubectlWith with extra environment variables (later entries
// win over the inherited ones).
func kubectlEnv(t *testing.T, kubeconfig string, extraEnv []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	path := kubectlBinary(t)
	cmd := exec.Command(path, args...)
	cmd.Env = append(os.Environ(),
		"PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"),
		"KUBECONFIG="+kubeconfig,
		"HOME="+t.TempDir(),
	)
	cmd.Env = append(cmd.Env, extraEnv...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return out.String(), errb.String(), ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run kubectl: %v", err)
	}
	return out.String(), errb.String(), 0
}

// emptyHFCache points every Hugging Face cache variable at an empty directory,
// so no tokenizer on the machine can be found.
func emptyHFCache(t *testing.T) []string {
	dir := t.TempDir()
	return []string{
		"HF_HUB_CACHE=" + filepath.Join(dir, "hub"),
		"HUGGINGFACE_HUB_CACHE=" + filepath.Join(dir, "hub"),
		"HF_HOME=" + filepath.Join(dir, "hf"),
		"XDG_CACHE_HOME=" + filepath.Join(dir, "xdg"),
	}
}

// explainRun is one explain-route run.
type explainRun struct {
	x              explain.Explanation
	stdout, stderr string
	code           int
	elapsed        time.Duration
}

// runExplain runs `kubectl dynamo explain-route -o json ARGS` and decodes the
// explanation when the exit code is 0 or 2.
func runExplain(t *testing.T, kubeconfig string, extraEnv []string, args ...string) explainRun {
	t.Helper()
	began := time.Now()
	out, errOut, code := kubectlEnv(t, kubeconfig, extraEnv, append([]string{"dynamo", "explain-route", "-o", "json"}, args...)...)
	r := explainRun{stdout: out, stderr: errOut, code: code, elapsed: time.Since(began)}
	if code == 0 || code == 2 {
		if err := json.Unmarshal([]byte(out), &r.x); err != nil {
			t.Fatalf("not JSON (exit %d): %v\n%s\nstderr: %s", code, err, out, errOut)
		}
		if r.x.Kind != explain.Kind {
			t.Fatalf("kind %q, want %s", r.x.Kind, explain.Kind)
		}
	}
	t.Logf("explain-route %s: exit %d in %v", strings.Join(args, " "), code, r.elapsed.Round(time.Millisecond))
	for _, n := range r.x.Notes {
		t.Logf("  note (%s, %s): %s", n.Severity, n.Source, n.Message)
	}
	return r
}

// wantExit is the exit code the verdict calls for (0 routable, 2 fails or can fail).
func wantExit(x explain.Explanation) int {
	if x.Verdict.Routable && x.Verdict.FailureProbability == 0 && len(x.Verdict.FailingPrefill) == 0 {
		return 0
	}
	return 2
}

func candidate(s *explain.Stage, worker string) *explain.Candidate {
	if s == nil {
		return nil
	}
	for i := range s.Candidates {
		if s.Candidates[i].Worker == worker {
			return &s.Candidates[i]
		}
	}
	return nil
}

func source(x explain.Explanation, what string) string {
	for _, s := range x.Sources {
		if s.What == what {
			return s.Detail
		}
	}
	return ""
}

// checkBlocks asserts that the explanation hashed exactly the test's tokens.
func (f *explainFixture) checkBlocks(t *testing.T, x explain.Explanation) {
	t.Helper()
	if x.Request.TokenCount != len(f.tokens) || x.Request.BlockSize != 16 || len(x.Request.Blocks) != len(f.blocks) {
		t.Fatalf("request: %d tokens, block size %d, %d blocks; want %d, 16, %d",
			x.Request.TokenCount, x.Request.BlockSize, len(x.Request.Blocks), len(f.tokens), len(f.blocks))
	}
	for i, b := range x.Request.Blocks {
		if b.LocalHash != uint64(f.blocks[i].LocalHash) || b.SequenceHash != uint64(f.blocks[i].SequenceHash) {
			t.Errorf("block %d: %d/%d, want %d/%d", i, b.LocalHash, b.SequenceHash, f.blocks[i].LocalHash, f.blocks[i].SequenceHash)
		}
	}
}

// auditReadOnly asserts that user sent only get/list/watch from offset on and
// returns how many requests it sent.
func auditReadOnly(t *testing.T, e *kubeenv.Env, offset int64, user string) int {
	t.Helper()
	events, _, err := e.AuditEventsFrom(offset)
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	verbs := map[string]int{}
	for _, ev := range events {
		if ev.User != user {
			continue
		}
		seen++
		verbs[ev.Verb]++
		if ev.IsMutating() || (ev.Verb != "get" && ev.Verb != "list" && ev.Verb != "watch") {
			t.Errorf("the plugin sent %s %s", ev.Verb, ev.RequestURI)
		}
	}
	if seen == 0 {
		t.Errorf("no audited request from %s: the audit check is not looking at the right user", user)
	}
	t.Logf("API server requests of %s: %d %v", user, seen, verbs)
	return seen
}

// nonGET lists the requests that are not GET, as "METHOD PATH".
func nonGET(s *fakefrontend.Server) []string {
	var out []string
	for _, r := range s.Requests() {
		if r.Method != "GET" {
			out = append(out, r.String())
		}
	}
	return out
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func requestLog(s *fakefrontend.Server) string {
	var out []string
	for _, r := range s.Requests() {
		out = append(out, r.String())
	}
	return strings.Join(out, ", ")
}

func countRequests(s *fakefrontend.Server, method, path string) int {
	n := 0
	for _, r := range s.Requests() {
		if r.Method == method && r.Path == path {
			n++
		}
	}
	return n
}

// checkPlacementsStoppedAtEnd asserts that the plugin opened the placements
// stream once and disconnected after placement_snapshot_end: the fake follows
// the snapshot with a live tail that never ends, so a reader that did not stop
// there would have hung until its timeout.
func checkPlacementsStoppedAtEnd(t *testing.T, fe *fakefrontend.Server, r explainRun) {
	t.Helper()
	if n := fe.StreamsOpened(); n != 1 {
		t.Errorf("placements streams opened: %d, want 1", n)
	}
	if !fe.WaitStreamsClosed(1, 10*time.Second) {
		t.Errorf("the placements stream was not closed by the plugin (closed %d)", fe.StreamsClosed())
	}
	if r.elapsed > 25*time.Second { // below the 30 s --kv-timeout default
		t.Errorf("explain-route took %v: did it read the live tail until the KV timeout?", r.elapsed)
	}
	t.Logf("placements: opened %d, closed %d, live-tail lines written %d", fe.StreamsOpened(), fe.StreamsClosed(), fe.LiveLines())
}

// TestExplainLivePlacements: the prompt is tokenized by the frontend's
// /tokenize, its blocks are matched against the placements stream (worker 1c-0
// holds 6 of them), the router prefills on 1c-0, and the required zone policy
// leaves no decode worker: NoEndpoints at decode, exit 2. The plugin's user only
// reads the API server, and the frontend only gets GETs plus POST /tokenize.
func TestExplainLivePlacements(t *testing.T) {
	f := newExplainFixture(t, exampleQwen)
	ids := dwmInstanceIDs(t, f.bundle)
	cfg := f.frontendConfig(t, "qwen3-32b", qwenModel)
	cfg.Sources = []fakefrontend.PlacementSource{{
		Model: qwenModel, Namespace: qwenDynNS, Component: "prefill", Endpoint: "generate", BlockSize: 16, Cursor: 41,
		Events: []routecore.RouterEvent{f.stored(ids[pod1c0], 1, overlap1c0), f.stored(ids[pod1a0], 1, overlap1a0)},
	}}
	// A busy threshold that differs from the example's args, to see that the
	// GET /busy_threshold answer is the one used.
	cfg.BusyThreshold = `{"thresholds":[{"model":"` + qwenModel + `","active_decode_blocks_threshold":0.97,"active_prefill_tokens_threshold":null,"active_prefill_tokens_threshold_frac":1.25}]}`
	fe := fakefrontend.New(cfg)
	defer fe.Close()

	offset, err := f.e.AuditOffset()
	if err != nil {
		t.Fatal(err)
	}
	r := runExplain(t, f.kc, nil, "qwen3-32b", "-n", "serving", "--prompt", explainPrompt, "--frontend-url", fe.URL)
	if r.code != 2 {
		t.Fatalf("exit %d, want 2 (NoEndpoints at decode); stderr:\n%s", r.code, r.stderr)
	}
	x := r.x
	f.checkBlocks(t, x)
	if !strings.HasPrefix(x.Request.Tokenizer, "frontend POST /tokenize") || source(x, "tokens") != x.Request.Tokenizer {
		t.Errorf("tokenizer %q (source %q), want the frontend's POST /tokenize", x.Request.Tokenizer, source(x, "tokens"))
	}
	if x.Prefill == nil || x.Prefill.Pick != pod1c0 || x.Prefill.RandomTie {
		t.Fatalf("prefill pick %+v, want %s", x.Prefill, pod1c0)
	}
	if c := candidate(x.Prefill, pod1c0); c == nil || c.OverlapBlocks != overlap1c0 || c.InstanceID != ids[pod1c0] || !c.Selected {
		t.Errorf("%s: %+v, want overlap %d, instance %d, selected", pod1c0, c, overlap1c0, ids[pod1c0])
	}
	if c := candidate(x.Prefill, pod1a0); c == nil || c.OverlapBlocks != overlap1a0 {
		t.Errorf("%s: %+v, want overlap %d", pod1a0, c, overlap1a0)
	}
	v := x.Verdict
	if v.Routable || v.Stage != "decode" || v.Error != "NoEndpoints" || !strings.Contains(v.Cause, "us-east-1c") {
		t.Errorf("verdict %+v, want NoEndpoints at decode caused by us-east-1c", v)
	}
	if x.Transfer == nil || !slices.Equal(x.Transfer.RequiredTaints, []string{"dynamo.topology/zone=us-east-1c"}) {
		t.Errorf("transfer %+v", x.Transfer)
	}
	if kv := source(x, "kv-cache"); !strings.Contains(kv, "frontend GET /v1/kv-cache/placements/stream") || !strings.Contains(kv, fe.URL) {
		t.Errorf("kv-cache source %q, want the placements stream of %s", kv, fe.URL)
	}
	// Loads come from the frontend's /metrics: the source names the frontend
	// (live it is just the URL), and the example's active prefill tokens are
	// in the cost terms.
	if lo := source(x, "loads"); !strings.Contains(lo, fe.URL) {
		t.Errorf("loads source %q, want the frontend metrics of %s", lo, fe.URL)
	}
	for pod, want := range map[string]uint64{pod1c0: 512, "qwen3-32b-0-prefill-us-east-1c-1": 1024} {
		if c := candidate(x.Prefill, pod); c == nil || !c.Terms.HasLoad || c.Terms.ActivePrefillTokens != want {
			t.Errorf("%s: load terms %+v, want %d active prefill tokens from /metrics", pod, c, want)
		}
	}
	if th := x.Router.Thresholds; th.ActiveDecodeBlocksThreshold == nil || *th.ActiveDecodeBlocksThreshold != 0.97 ||
		th.ActivePrefillTokensThresholdFrac == nil || *th.ActivePrefillTokensThresholdFrac != 1.25 {
		t.Errorf("busy thresholds %s, want the frontend's GET /busy_threshold answer (0.97, frac 1.25)", jsonString(th))
	}
	for _, n := range x.Notes {
		if strings.Contains(n.Message, "tokenized locally") || strings.Contains(n.Message, "assumed cold") {
			t.Errorf("unexpected fallback note: %s", n.Message)
		}
	}
	for _, a := range x.Assumptions {
		if strings.Contains(a, "incomplete") {
			t.Errorf("the complete snapshot was reported incomplete: %s", a)
		}
	}

	auditReadOnly(t, f.e, offset, "inspector")
	if got := nonGET(fe); !slices.Equal(got, []string{"POST /tokenize"}) {
		t.Errorf("non-GET requests to the frontend: %v, want only POST /tokenize (all: %s)", got, requestLog(fe))
	}
	if n := countRequests(fe, "POST", fakefrontend.PathBusyThreshold); n != 0 {
		t.Errorf("%d POST /busy_threshold (that would change the thresholds)", n)
	}
	if countRequests(fe, "GET", fakefrontend.PathMetrics) == 0 || countRequests(fe, "GET", fakefrontend.PathBusyThreshold) == 0 {
		t.Errorf("metrics or busy_threshold not read: %s", requestLog(fe))
	}
	checkPlacementsStoppedAtEnd(t, fe, r)
	t.Logf("frontend requests: %s", requestLog(fe))
}

// TestExplainLiveWhatIfs: --cold --assume-idle --all-prefill evaluates every
// prefill landing (2 of the 4 are in the zone without decode), and
// --indexer-url takes the overlaps from a standalone indexer's POST /query
// instead of the placements stream.
func TestExplainLiveWhatIfs(t *testing.T) {
	f := newExplainFixture(t, exampleQwen)
	ids := dwmInstanceIDs(t, f.bundle)

	t.Run("cold-idle-all-prefill", func(t *testing.T) {
		fe := fakefrontend.New(f.frontendConfig(t, "qwen3-32b", qwenModel))
		defer fe.Close()
		offset, err := f.e.AuditOffset()
		if err != nil {
			t.Fatal(err)
		}
		r := runExplain(t, f.kc, nil, "qwen3-32b", "-n", "serving", "--prompt", explainPrompt, "--frontend-url", fe.URL,
			"--cold", "--assume-idle", "--all-prefill")
		if r.code != 2 {
			t.Fatalf("exit %d, want 2; stderr:\n%s", r.code, r.stderr)
		}
		x := r.x
		f.checkBlocks(t, x)
		if len(x.Matrix) != 4 {
			t.Fatalf("matrix has %d rows, want 4: %+v", len(x.Matrix), x.Matrix)
		}
		var failing []string
		for _, row := range x.Matrix {
			if row.Probability != 0.25 {
				t.Errorf("row %s: probability %v, want 0.25 (4 idle, cold workers tie)", row.Prefill, row.Probability)
			}
			if !row.Routable {
				failing = append(failing, row.Prefill)
				if row.Domain != "us-east-1c" || !strings.Contains(row.Error, "NoEndpoints") {
					t.Errorf("failing row %+v, want us-east-1c NoEndpoints", row)
				}
			}
		}
		slices.Sort(failing)
		want := []string{pod1c0, "qwen3-32b-0-prefill-us-east-1c-1"}
		if !slices.Equal(failing, want) {
			t.Errorf("failing rows %v, want %v", failing, want)
		}
		if got := slices.Sorted(slices.Values(x.Verdict.FailingPrefill)); !slices.Equal(got, want) {
			t.Errorf("verdict failing prefill %v, want %v", got, want)
		}
		if x.Verdict.FailureProbability != 0.5 {
			t.Errorf("failure probability %v, want 0.5", x.Verdict.FailureProbability)
		}
		if kv := source(x, "kv-cache"); !strings.Contains(kv, "--cold") {
			t.Errorf("kv-cache source %q, want cold (--cold)", kv)
		}
		if lo := source(x, "loads"); !strings.Contains(lo, "--assume-idle") {
			t.Errorf("loads source %q, want --assume-idle", lo)
		}
		auditReadOnly(t, f.e, offset, "inspector")
		if got := nonGET(fe); !slices.Equal(got, []string{"POST /tokenize"}) {
			t.Errorf("non-GET requests: %v, want only POST /tokenize (all: %s)", got, requestLog(fe))
		}
		if n := fe.StreamsOpened(); n != 0 {
			t.Errorf("--cold opened the placements stream %d time(s)", n)
		}
		t.Logf("frontend requests: %s", requestLog(fe))
	})

	t.Run("indexer", func(t *testing.T) {
		cfg := f.frontendConfig(t, "qwen3-32b", qwenModel)
		// The indexer says 1a-0 holds the whole prompt and 1c-0 two blocks;
		// the placements stream (not to be read) says the opposite.
		all := len(f.blocks)
		cfg.Scores = map[routecore.WorkerWithDpRank]uint64{
			{WorkerID: ids[pod1a0]}: uint64(all * 16),
			{WorkerID: ids[pod1c0]}: 2 * 16,
		}
		cfg.Sources = []fakefrontend.PlacementSource{{Model: qwenModel, Namespace: qwenDynNS, Component: "prefill", Endpoint: "generate",
			BlockSize: 16, Events: []routecore.RouterEvent{f.stored(ids[pod1c0], 1, all)}}}
		fe := fakefrontend.New(cfg)
		defer fe.Close()
		offset, err := f.e.AuditOffset()
		if err != nil {
			t.Fatal(err)
		}
		r := runExplain(t, f.kc, nil, "qwen3-32b", "-n", "serving", "--prompt", explainPrompt, "--frontend-url", fe.URL,
			"--indexer-url", fe.URL)
		x := r.x
		if r.code != 0 || r.code != wantExit(x) {
			t.Fatalf("exit %d, want 0 (prefill and decode in us-east-1a); verdict %+v; stderr:\n%s", r.code, x.Verdict, r.stderr)
		}
		f.checkBlocks(t, x)
		if x.Prefill == nil || x.Prefill.Pick != pod1a0 {
			t.Fatalf("prefill pick %+v, want %s", x.Prefill, pod1a0)
		}
		if c := candidate(x.Prefill, pod1a0); c == nil || c.OverlapBlocks != float64(all) {
			t.Errorf("%s: %+v, want overlap %d from the indexer", pod1a0, c, all)
		}
		if c := candidate(x.Prefill, pod1c0); c == nil || c.OverlapBlocks != 2 {
			t.Errorf("%s: %+v, want overlap 2 from the indexer", pod1c0, c)
		}
		if x.Decode == nil || !strings.Contains(x.Decode.Pick, "us-east-1a") || !x.Verdict.Routable {
			t.Errorf("decode %+v, verdict %+v: want routable in us-east-1a", x.Decode, x.Verdict)
		}
		if kv := source(x, "kv-cache"); !strings.HasPrefix(kv, "KV indexer POST /query") || !strings.Contains(kv, fe.URL) {
			t.Errorf("kv-cache source %q, want the indexer at %s", kv, fe.URL)
		}
		auditReadOnly(t, f.e, offset, "inspector")
		if got := nonGET(fe); !slices.Equal(got, []string{"POST /tokenize", "POST /query"}) {
			t.Errorf("non-GET requests: %v, want POST /tokenize then POST /query (all: %s)", got, requestLog(fe))
		}
		for _, req := range fe.Requests() {
			if req.Path != fakefrontend.PathQuery {
				continue
			}
			var q struct {
				TokenIDs  []uint32 `json:"token_ids"`
				ModelName string   `json:"model_name"`
			}
			if err := json.Unmarshal(req.Body, &q); err != nil || q.ModelName != qwenModel || !slices.Equal(q.TokenIDs, f.tokens) {
				t.Errorf("POST /query body %s (%v): want the prompt's %d tokens and model %s", req.Body, err, len(f.tokens), qwenModel)
			}
		}
		if n := fe.StreamsOpened(); n != 0 {
			t.Errorf("--indexer-url also opened the placements stream %d time(s)", n)
		}
		t.Logf("frontend requests: %s", requestLog(fe))
	})
}

// TestExplainLiveDegraded: a frontend without /tokenize and without the
// placements stream (404, an older Dynamo). With --tokens the command still
// explains, assuming a cold KV cache and saying why; with --prompt and no
// tokenizer anywhere it fails with exit 1 and says what to pass.
func TestExplainLiveDegraded(t *testing.T) {
	f := newExplainFixture(t, exampleQwen)
	cfg := f.frontendConfig(t, "qwen3-32b", qwenModel)
	cfg.Status = map[string]int{fakefrontend.PathTokenize: 404, fakefrontend.PathPlacements: 404}

	t.Run("tokens", func(t *testing.T) {
		fe := fakefrontend.New(cfg)
		defer fe.Close()
		offset, err := f.e.AuditOffset()
		if err != nil {
			t.Fatal(err)
		}
		ids := make([]string, len(f.tokens))
		for i, id := range f.tokens {
			ids[i] = strconv.FormatUint(uint64(id), 10)
		}
		r := runExplain(t, f.kc, emptyHFCache(t), "qwen3-32b", "-n", "serving", "--tokens", strings.Join(ids, ","), "--frontend-url", fe.URL)
		if r.code != 0 && r.code != 2 {
			t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
		}
		x := r.x
		if r.code != wantExit(x) {
			t.Errorf("exit %d, but the verdict %+v calls for %d", r.code, x.Verdict, wantExit(x))
		}
		f.checkBlocks(t, x)
		if x.Request.Tokenizer != "token ids from --tokens" {
			t.Errorf("tokenizer %q", x.Request.Tokenizer)
		}
		var note string
		for _, n := range x.Notes {
			if strings.Contains(n.Message, "KV cache assumed cold") {
				note = n.Message
			}
		}
		if note == "" || !strings.Contains(note, "no KV placements stream") || !strings.Contains(note, "HTTP 404") {
			t.Errorf("no note saying the KV cache is assumed cold because the stream answered 404; notes: %+v", x.Notes)
		}
		if kv := source(x, "kv-cache"); !strings.HasPrefix(kv, "cold") {
			t.Errorf("kv-cache source %q, want cold", kv)
		}
		for _, c := range x.Prefill.Candidates {
			if c.OverlapBlocks != 0 {
				t.Errorf("%s has overlap %v with a cold cache", c.Worker, c.OverlapBlocks)
			}
		}
		auditReadOnly(t, f.e, offset, "inspector")
		if got := nonGET(fe); len(got) != 0 {
			t.Errorf("non-GET requests with --tokens: %v (all: %s)", got, requestLog(fe))
		}
		if n := countRequests(fe, "GET", fakefrontend.PathPlacements); n != 1 {
			t.Errorf("GET placements %d times, want 1", n)
		}
		t.Logf("verdict: routable %v, failure probability %v; note: %s", x.Verdict.Routable, x.Verdict.FailureProbability, note)
		t.Logf("frontend requests: %s", requestLog(fe))
	})

	t.Run("prompt-without-tokenizer", func(t *testing.T) {
		fe := fakefrontend.New(cfg)
		defer fe.Close()
		offset, err := f.e.AuditOffset()
		if err != nil {
			t.Fatal(err)
		}
		r := runExplain(t, f.kc, emptyHFCache(t), "qwen3-32b", "-n", "serving", "--prompt", explainPrompt, "--frontend-url", fe.URL)
		if r.code != 1 {
			t.Fatalf("exit %d, want 1; stdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
		}
		for _, want := range []string{"cannot tokenize the prompt", qwenModel, "--tokenizer", "--tokens"} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
			}
		}
		if strings.TrimSpace(r.stdout) != "" {
			t.Errorf("stdout on failure:\n%s", r.stdout)
		}
		auditReadOnly(t, f.e, offset, "inspector")
		if got := nonGET(fe); !slices.Equal(got, []string{"POST /tokenize"}) {
			t.Errorf("non-GET requests: %v, want one POST /tokenize (all: %s)", got, requestLog(fe))
		}
		t.Logf("stderr: %s", strings.TrimSpace(r.stderr))
		t.Logf("frontend requests: %s", requestLog(fe))
	})
}

// TestExplainLiveEtcdDiscovery runs the etcd-discovery example live: its
// discovery keys in a separate etcd (kubeenv.StartEtcd, not the API server's),
// --etcd-endpoints and --frontend-url. Every instance id is a lease id above
// 2^53 and must come back exactly, as a JSON string, including through the
// placements stream (a rounded id would match no worker).
func TestExplainLiveEtcdDiscovery(t *testing.T) {
	f := newExplainFixture(t, "etcd-discovery-v1alpha1.yaml")
	if len(f.bundle.Etcd) == 0 {
		t.Fatal("the example has no EtcdKeyValues")
	}
	discovery := kubeenv.StartEtcd(t)
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{discovery.Endpoint}, DialTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// Instance ids as published (exact decimal strings), and the prefill ones.
	published := map[string]bool{}
	var prefill []string
	for _, kv := range f.bundle.Etcd {
		if _, err := cli.Put(ctx, kv.Key, kv.Value); err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(strings.NewReader(kv.Value))
		dec.UseNumber()
		var v struct {
			InstanceID json.Number `json:"instance_id"`
			Card       struct {
				WorkerType string `json:"worker_type"`
			} `json:"card_json"`
		}
		if err := dec.Decode(&v); err != nil || v.InstanceID == "" {
			continue
		}
		published[v.InstanceID.String()] = true
		if strings.HasPrefix(kv.Key, "v1/mdc/") && v.Card.WorkerType == "prefill" {
			prefill = append(prefill, v.InstanceID.String())
		}
	}
	slices.Sort(prefill)
	prefill = slices.Compact(prefill)
	if len(published) == 0 || len(prefill) == 0 {
		t.Fatalf("no instance ids in the example's etcd keys (prefill %v)", prefill)
	}
	for id := range published {
		if n, err := strconv.ParseUint(id, 10, 64); err != nil || n <= 1<<53 {
			t.Fatalf("instance id %s is not above 2^53: the example no longer tests exactness", id)
		}
	}
	// The placements say the last prefill worker holds the whole prompt.
	hot, _ := strconv.ParseUint(prefill[len(prefill)-1], 10, 64)
	const model = "deepseek-ai/DeepSeek-R1"
	cfg := f.frontendConfig(t, "deepseek-r1", model)
	cfg.Sources = []fakefrontend.PlacementSource{{Model: model, Namespace: "dynamo", Component: "prefill", Endpoint: "generate", BlockSize: 16,
		Events: []routecore.RouterEvent{f.stored(routecore.WorkerID(hot), 1, len(f.blocks))}}}
	fe := fakefrontend.New(cfg)
	defer fe.Close()

	offset, err := f.e.AuditOffset()
	if err != nil {
		t.Fatal(err)
	}
	r := runExplain(t, f.kc, nil, "deepseek-r1", "-n", "research", "--prompt", explainPrompt,
		"--etcd-endpoints", discovery.Endpoint, "--frontend-url", fe.URL)
	if r.code != 0 && r.code != 2 {
		t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
	}
	x := r.x
	if r.code != wantExit(x) {
		t.Errorf("exit %d, but the verdict %+v calls for %d", r.code, x.Verdict, wantExit(x))
	}
	f.checkBlocks(t, x)
	if x.Prefill == nil || x.Decode == nil || len(x.Prefill.Candidates) == 0 || len(x.Decode.Candidates) == 0 {
		t.Fatalf("no candidates: prefill %+v, decode %+v; stderr:\n%s", x.Prefill, x.Decode, r.stderr)
	}
	// Exactness in the raw JSON: every instanceId is a string equal to a
	// published id, digit for digit.
	var raw struct {
		Prefill, Decode struct {
			Candidates []struct {
				Worker     string          `json:"worker"`
				InstanceID json.RawMessage `json:"instanceId"`
			} `json:"candidates"`
		}
		Matrix []struct {
			InstanceID json.RawMessage `json:"instanceId"`
		} `json:"alternatives"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &raw); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	check := func(what string, id json.RawMessage) {
		var s string
		if err := json.Unmarshal(id, &s); err != nil {
			t.Errorf("%s: instanceId %s is not a JSON string", what, id)
			return
		}
		if !published[s] {
			t.Errorf("%s: instanceId %s was not published in etcd (rounded?)", what, s)
		}
		seen[s] = true
	}
	for _, c := range append(raw.Prefill.Candidates, raw.Decode.Candidates...) {
		check(c.Worker, c.InstanceID)
	}
	for i, m := range raw.Matrix {
		check(fmt.Sprintf("alternative %d", i), m.InstanceID)
	}
	if len(seen) != len(published) {
		t.Errorf("%d of the %d published instances are candidates: %v", len(seen), len(published), seen)
	}
	// The placements stream's worker id matched exactly: that worker has the
	// whole prompt cached and is picked.
	var hotWorker string
	for _, c := range x.Prefill.Candidates {
		if uint64(c.InstanceID) == hot {
			hotWorker = c.Worker
			if c.OverlapBlocks != float64(len(f.blocks)) {
				t.Errorf("%s (%d): overlap %v, want %d from the placements stream", c.Worker, hot, c.OverlapBlocks, len(f.blocks))
			}
		}
	}
	if hotWorker == "" || x.Prefill.Pick != hotWorker {
		t.Errorf("prefill pick %q, want the worker of instance %d (%q)", x.Prefill.Pick, hot, hotWorker)
	}
	if w := source(x, "workers"); !strings.Contains(w, "2 prefill and 4 decode") {
		t.Errorf("workers source %q", w)
	}
	auditReadOnly(t, f.e, offset, "inspector")
	if got := nonGET(fe); !slices.Equal(got, []string{"POST /tokenize"}) {
		t.Errorf("non-GET requests: %v, want only POST /tokenize (all: %s)", got, requestLog(fe))
	}
	checkPlacementsStoppedAtEnd(t, fe, r)
	t.Logf("instance ids round-tripped: %v; verdict routable %v", slices.Sorted(maps.Keys(seen)), x.Verdict.Routable)
	t.Logf("frontend requests: %s", requestLog(fe))
}

// TestExplainLiveCaptureKVCache records a live deployment with `capture
// --kv-cache` (the frontend's placements snapshot becomes KvEvents) and checks
// that explain-route on the capture file reaches the same decision as the live
// run: same prefill pick and overlaps, same verdict and costs.
func TestExplainLiveCaptureKVCache(t *testing.T) {
	f := newExplainFixture(t, exampleQwen)
	ids := dwmInstanceIDs(t, f.bundle)
	cfg := f.frontendConfig(t, "qwen3-32b", qwenModel)
	cfg.Sources = []fakefrontend.PlacementSource{{
		Model: qwenModel, Namespace: qwenDynNS, Component: "prefill", Endpoint: "generate", BlockSize: 16, Cursor: 7,
		Events: []routecore.RouterEvent{f.stored(ids[pod1c0], 1, overlap1c0), f.stored(ids[pod1a0], 1, overlap1a0)},
	}}
	fe := fakefrontend.New(cfg)
	defer fe.Close()

	capture, errOut, code := kubectlEnv(t, f.kc, nil, "dynamo", "capture", "-n", "serving", "--kv-cache", "--frontend-url", fe.URL)
	if code != 0 {
		t.Fatalf("capture exit %d: %s", code, errOut)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "capture.yaml")
	tokens := filepath.Join(dir, "prompt.tokens")
	var ids32 []string
	for _, tk := range f.tokens {
		ids32 = append(ids32, strconv.FormatUint(uint64(tk), 10))
	}
	if err := os.WriteFile(file, []byte(capture), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tokens, []byte(strings.Join(ids32, " ")), 0o644); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(capture, "kind: KvEvents") {
		t.Fatalf("the capture holds no KvEvents:\n%.2000s", capture)
	}

	live := runExplain(t, f.kc, nil, "qwen3-32b", "-n", "serving", "--token-file", tokens, "--frontend-url", fe.URL)
	offline := runExplain(t, f.kc, nil, "--from-file", file, "--token-file", tokens)
	if live.code != 2 || offline.code != 2 {
		t.Fatalf("exit codes live %d, offline %d, want 2 (stderr %s / %s)", live.code, offline.code, live.stderr, offline.stderr)
	}
	if kv := source(offline.x, "kv-cache"); !strings.Contains(kv, "capture KvEvents") || !strings.Contains(kv, "placements") {
		t.Errorf("offline kv-cache source %q, want the captured placements", kv)
	}
	if offline.x.Prefill.Pick != pod1c0 || live.x.Prefill.Pick != pod1c0 {
		t.Errorf("prefill picks live %s, offline %s, want %s", live.x.Prefill.Pick, offline.x.Prefill.Pick, pod1c0)
	}
	for _, c := range live.x.Prefill.Candidates {
		o := candidate(offline.x.Prefill, c.Worker)
		if o == nil || o.OverlapBlocks != c.OverlapBlocks || o.Cost != c.Cost || o.Eligible != c.Eligible {
			t.Errorf("%s: live %+v, offline %+v", c.Worker, c, o)
		}
	}
	if lv, ov := live.x.Verdict, offline.x.Verdict; lv.Routable != ov.Routable || lv.Error != ov.Error || lv.Cause != ov.Cause {
		t.Errorf("verdicts differ: live %+v, offline %+v", lv, ov)
	}
	if m := nonGET(fe); len(m) != 0 {
		t.Errorf("non-GET requests to the frontend: %v", m)
	}
}
