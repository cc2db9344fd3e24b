package analysis

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/build"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/capture"
)

// Upstream deployment shapes: Dynamo's own example DGDs
// (ai-dynamo/dynamo examples/backends/{vllm,sglang,trtllm}/deploy/), with
// components renamed and no DynamoWorkerMetadata published, rendered into pods
// the way the operator reconciles them on the Grove path
// (deploy/operator/internal/dynamo: graph.go labels and env, grove.go
// GroveMultinodeDeployer host names and ranks, backend_trtllm.go's mpirun leader
// and sshd workers, backend_vllm.go's Ray leader and agents, backend_sglang.go's
// --dist-init-addr/--nnodes/--node-rank). The captures are written to
// test/fixtures/upstream/ (UPDATE_GOLDEN=1 rewrites them; the test fails when they
// drift from this generator) so that `topology --from-file` reads them as a
// user's capture.

// upComp is one worker component of an upstream example.
type upComp struct {
	name, ctype, subType string
	nodes                int // multinode.nodeCount (1: single-node)
	gpus                 int // per pod
	command, args        []string
	zones                []string // one per replica: the zone its pods run in
	pending              []bool   // per replica: its pods are not scheduled
	// dp is vLLM's global --data-parallel-size over the replica's nodes: the
	// operator launches it in hybrid load-balancing mode (backend_vllm.go
	// injectDataParallelLaunchFlags), each pod running gpus local ranks and
	// registering itself.
	dp int
}

// upShape is one upstream example, as rebuilt.
type upShape struct {
	file     string // test/fixtures/upstream/<file>
	upstream string // the example it is rebuilt from: path@commit
	api      string // nvidia.com/v1alpha1 or v1beta1
	dgd, ns  string
	backend  string
	policy   bool // add a labelKey zone policy, enforcement required
	env      []map[string]any
	comps    []upComp
	// single-node examples (agg, agg_router, disagg, disagg_router): the DGD
	// as upstream writes it (no backendFramework, the frontend's env as
	// declared, feEnv), and the frontend pod with exactly that env.
	example bool
	feEnv   []map[string]any
	// noDWM leaves out the example's DynamoWorkerMetadata: the workers run but
	// have not published their cards yet, so the pods and the DGD decide roles.
	noDWM bool
	// registered: the multinode workers have registered: each replica's
	// leader (every pod, in hybrid load-balancing mode) publishes its
	// DynamoWorkerMetadata.
	registered bool
}

const upZoneKey = "topology.kubernetes.io/zone"

// upKVFrontend is the frontend env of the multinode rebuilds, declared in their
// DGD and set on their frontend pod: a KV router (upstream's disagg-multinode
// examples leave the router mode at its default, round-robin).
var upKVFrontend = []map[string]any{{"name": "DYN_ROUTER_MODE", "value": "kv"}}

func upShapes() []upShape {
	trtArgs := func(cfg, mode string) []string {
		return []string{"--model-path", "Qwen/Qwen3-0.6B", "--served-model-name", "Qwen/Qwen3-0.6B", "--extra-engine-args", "/workspace/" + cfg, "--disaggregation-mode", mode}
	}
	trtEnv := []map[string]any{{"name": "OMPI_ALLOW_RUN_AS_ROOT", "value": "1"}, {"name": "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "value": "1"}, {"name": "HF_HOME", "value": "/models"}}
	vllmArgs := func(role string) []string {
		a := []string{"--model", "Qwen/Qwen3-0.6B", "--tensor-parallel-size", "2"}
		if role == "decode" {
			a = append(a, "--is-decode-worker")
		} else {
			a = append(a, "--disaggregation-mode", "prefill")
		}
		return append(a, "--kv-transfer-config", `{"kv_connector": "NixlConnector", "kv_role": "kv_both", "engine_id": "vllm-disagg-`+role+`-engine-0abc123"}`)
	}
	sglArgs := func(mode string) []string {
		return []string{"--model-path", "Qwen/Qwen3-0.6B", "--served-model-name", "Qwen/Qwen3-0.6B", "--tp-size", "8", "--trust-remote-code", "--skip-tokenizer-init",
			"--disaggregation-mode", mode, "--disaggregation-transfer-backend", "nixl", "--disaggregation-bootstrap-port", "30001", "--host", "0.0.0.0", "--mem-fraction-static", "0.82"}
	}
	sglEnv := []map[string]any{{"name": "GLOO_SOCKET_IFNAME", "value": "eth0"}}
	trt := []string{"python3", "-m", "dynamo.trtllm"}
	vllm := []string{"python3", "-m", "dynamo.vllm"}
	sgl := []string{"python3", "-m", "dynamo.sglang"}
	return []upShape{
		{file: "trtllm-disagg-multinode-v1alpha1.yaml", upstream: "examples/backends/trtllm/deploy/disagg-multinode.yaml@25417557c21eb30586fa9996bfd179cbce956318",
			api: "nvidia.com/v1alpha1", dgd: "trtllm-disagg-tp8", ns: "llm", backend: "trtllm", env: trtEnv, comps: []upComp{
				{name: "ctx", ctype: "worker", nodes: 2, gpus: 4, command: trt, args: trtArgs("prefill.yaml", "prefill"), zones: []string{"us-east-1a"}},
				{name: "gen", ctype: "worker", nodes: 2, gpus: 4, command: trt, args: trtArgs("decode.yaml", "decode"), zones: []string{"us-east-1a"}},
			}},
		// The case: context workers in a zone without generation workers, under
		// a zone policy with required enforcement; TRT-LLM's own role words.
		{file: "trtllm-disagg-multinode-v1beta1-zone-required.yaml", upstream: "examples/backends/trtllm/deploy/v1beta1/disagg-multinode.yaml@78f05084eb0c07fbfdf36de0d459634a4417f495",
			api: "nvidia.com/v1beta1", dgd: "trtllm-disagg-tp8", ns: "llm", backend: "trtllm", policy: true, env: trtEnv, comps: []upComp{
				{name: "ctx", ctype: "worker", nodes: 2, gpus: 4, command: trt, args: trtArgs("prefill.yaml", "context"), zones: []string{"us-east-1a", "us-east-1b"}},
				{name: "gen", ctype: "worker", nodes: 2, gpus: 4, command: trt, args: trtArgs("decode.yaml", "generation"), zones: []string{"us-east-1a"}},
			}},
		// Issue 17 item 3: the generation workers cannot be scheduled (no GPU left),
		// so they have no node and no zone yet; the context workers run in both zones.
		{file: "trtllm-disagg-multinode-v1beta1-zone-required-gen-pending.yaml", upstream: "examples/backends/trtllm/deploy/v1beta1/disagg-multinode.yaml@78f05084eb0c07fbfdf36de0d459634a4417f495",
			api: "nvidia.com/v1beta1", dgd: "trtllm-disagg-tp8", ns: "llm", backend: "trtllm", policy: true, env: trtEnv, comps: []upComp{
				{name: "ctx", ctype: "worker", nodes: 2, gpus: 4, command: trt, args: trtArgs("prefill.yaml", "context"), zones: []string{"us-east-1a", "us-east-1b"}},
				{name: "gen", ctype: "worker", nodes: 2, gpus: 4, command: trt, args: trtArgs("decode.yaml", "generation"), zones: []string{"us-east-1a", "us-east-1b"}, pending: []bool{true, true}},
			}},
		{file: "vllm-disagg-multinode-v1alpha1.yaml", upstream: "examples/backends/vllm/deploy/disagg-multinode.yaml@d2143fc82c1307ca322c10c88db5977b966ff790",
			api: "nvidia.com/v1alpha1", dgd: "vllm-disagg", ns: "llm", backend: "vllm", comps: []upComp{
				{name: "gen", ctype: "worker", nodes: 2, gpus: 1, command: vllm, args: vllmArgs("decode"), zones: []string{"us-east-1a"}},
				{name: "ctx", ctype: "worker", nodes: 2, gpus: 1, command: vllm, args: vllmArgs("prefill"), zones: []string{"us-east-1a"}},
			}},
		{file: "vllm-disagg-multinode-v1beta1.yaml", upstream: "examples/backends/vllm/deploy/v1beta1/disagg-multinode.yaml@369732d4303affed83a61039bcdcb32d89aeb528",
			api: "nvidia.com/v1beta1", dgd: "vllm-disagg", ns: "llm", backend: "vllm", policy: true, comps: []upComp{
				{name: "gen", ctype: "worker", nodes: 2, gpus: 1, command: vllm, args: vllmArgs("decode"), zones: []string{"us-east-1a", "us-east-1b"}},
				{name: "ctx", ctype: "worker", nodes: 2, gpus: 1, command: vllm, args: vllmArgs("prefill"), zones: []string{"us-east-1a", "us-east-1b"}},
			}},
		{file: "sglang-disagg-multinode-v1alpha1.yaml", upstream: "examples/backends/sglang/deploy/disagg-multinode.yaml@64ae795121910bb247718c166d760737d961ef97",
			api: "nvidia.com/v1alpha1", dgd: "sglang-disagg-multinode", ns: "llm", backend: "sglang", env: sglEnv, comps: []upComp{
				{name: "gen", ctype: "worker", nodes: 2, gpus: 4, command: sgl, args: sglArgs("decode"), zones: []string{"us-east-1a"}},
				{name: "ctx", ctype: "worker", nodes: 2, gpus: 4, command: sgl, args: sglArgs("prefill"), zones: []string{"us-east-1a"}},
			}},
		{file: "sglang-disagg-multinode-v1beta1.yaml", upstream: "examples/backends/sglang/deploy/v1beta1/disagg-multinode.yaml@4d0c5ed69f62cf53c38ef7167086657fc4f8227c",
			api: "nvidia.com/v1beta1", dgd: "sglang-disagg-multinode", ns: "llm", backend: "sglang", policy: true, env: sglEnv, comps: []upComp{
				{name: "gen", ctype: "decode", nodes: 2, gpus: 4, command: sgl, args: sglArgs("decode"), zones: []string{"us-east-1a"}},
				{name: "ctx", ctype: "prefill", nodes: 2, gpus: 4, command: sgl, args: sglArgs("prefill"), zones: []string{"us-east-1a"}},
			}},
		// vLLM data parallel over two nodes (DeepSeek-style wide EP): the
		// operator runs both pods of a replica with --data-parallel-hybrid-lb,
		// each owning 4 local ranks and registering its own instance, leader
		// ranks 0-3, worker ranks 4-7 (injectDataParallelLaunchFlags).
		{file: "vllm-dp-hybrid-lb-v1beta1.yaml", upstream: "deploy/operator/internal/dynamo/backend_vllm.go@18bda5104f78405f8102d4987ef6be8f520a135d",
			api: "nvidia.com/v1beta1", dgd: "vllm-dp", ns: "llm", backend: "vllm", policy: true, registered: true, comps: []upComp{
				{name: "decode", ctype: "decode", nodes: 2, gpus: 4, dp: 8, command: vllm, args: []string{"--model", "deepseek-ai/DeepSeek-V3", "--data-parallel-size", "8", "--enable-expert-parallel", "--is-decode-worker"}, zones: []string{"us-east-1a"}},
				{name: "prefill", ctype: "prefill", nodes: 2, gpus: 4, dp: 8, command: vllm, args: []string{"--model", "deepseek-ai/DeepSeek-V3", "--data-parallel-size", "8", "--enable-expert-parallel", "--disaggregation-mode", "prefill"}, zones: []string{"us-east-1a"}},
			}},
	}
}

// upAllShapes is every generated shape.
func upAllShapes() []upShape {
	multi := upShapes()
	var before []string
	for _, sh := range multi {
		if !sh.registered {
			before = append(before, sh.file)
		}
	}
	multi = append(multi, upRegistered(multi, before...)...)
	return append(multi, upSingleShapes()...)
}

// upRegistered returns the multinode shapes whose workers have registered
// (file <name>-registered.yaml), beside their before-registration captures.
func upRegistered(shapes []upShape, files ...string) []upShape {
	var out []upShape
	for _, sh := range shapes {
		if !slices.Contains(files, sh.file) {
			continue
		}
		sh.file = strings.TrimSuffix(sh.file, ".yaml") + "-registered.yaml"
		sh.registered = true
		out = append(out, sh)
	}
	return out
}

// upSingleShapes are the single-node examples of examples/backends/*/deploy/ and
// their v1beta1/ variants, with upstream's component names and commands: the
// aggregated workers carry no role flag (vLLM's is named VllmDecodeWorker,
// SGLang's decode), the disaggregated ones --disaggregation-mode, and the
// router variants the KV-event flags of their examples. Every replica runs in
// us-east-1a; none of these examples declares a kvTransferPolicy.
func upSingleShapes() []upShape {
	const (
		vllmDir, sglDir, trtDir = "examples/backends/vllm/deploy/", "examples/backends/sglang/deploy/", "examples/backends/trtllm/deploy/"
		a1, b1                  = "nvidia.com/v1alpha1", "nvidia.com/v1beta1"
	)
	kvFE := upKVFrontend
	zones := func(n int) []string {
		z := make([]string, n)
		for i := range z {
			z[i] = "us-east-1a"
		}
		return z
	}
	cat := func(parts ...[]string) []string {
		var out []string
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	vllm := []string{"python3", "-m", "dynamo.vllm"}
	sgl := []string{"python3", "-m", "dynamo.sglang"}
	trt := []string{"python3", "-m", "dynamo.trtllm"}
	vModel := []string{"--model", "Qwen/Qwen3-0.6B"}
	vEvents := []string{"--kv-events-config", `{"publisher":"zmq","topic":"kv-events","endpoint":"tcp://*:20080","enable_kv_cache_events":true}`}
	vNixl := []string{"--kv-transfer-config", `{"kv_connector":"NixlConnector","kv_role":"kv_both"}`}
	mode := func(m string) []string { return []string{"--disaggregation-mode", m} }
	sModel := []string{"--model-path", "Qwen/Qwen3-0.6B", "--served-model-name", "Qwen/Qwen3-0.6B", "--page-size", "16", "--tp", "1", "--trust-remote-code", "--skip-tokenizer-init"}
	sEvents := []string{"--kv-events-config", `{"publisher":"zmq","topic":"kv-events","endpoint":"tcp://*:5557"}`}
	sDisagg := func(m string) []string {
		return cat(sModel, mode(m), []string{"--disaggregation-transfer-backend", "nixl", "--disaggregation-bootstrap-port", "12345", "--host", "0.0.0.0"})
	}
	tModel := func(cfg string) []string {
		return []string{"--model-path", "Qwen/Qwen3-0.6B", "--served-model-name", "Qwen/Qwen3-0.6B", "--extra-engine-args", "./examples/backends/trtllm/engine_configs/qwen3/" + cfg}
	}
	tEvents := []string{"--publish-events-and-metrics"}
	w := func(name, ctype, sub string, replicas int, cmd, args []string) upComp {
		return upComp{name: name, ctype: ctype, subType: sub, nodes: 1, gpus: 1, command: cmd, args: args, zones: zones(replicas)}
	}
	sh := func(file, upstream, api, dgd, backend string, fe []map[string]any, comps ...upComp) upShape {
		return upShape{file: file, upstream: upstream, api: api, dgd: dgd, ns: "llm", backend: backend, example: true, feEnv: fe, comps: comps}
	}
	// The aggregated examples whose worker is named after decode, before their
	// cards are published: the component name must not make them decode.
	noDWM := func(shapes []upShape, of string) upShape {
		for _, s := range shapes {
			if s.file == of {
				s.file, s.noDWM = strings.TrimSuffix(of, ".yaml")+"-no-dwm.yaml", true
				return s
			}
		}
		panic("no shape " + of)
	}
	shapes := []upShape{
		sh("vllm-agg-v1alpha1.yaml", vllmDir+"agg.yaml@c6fcf991079ccaeb323ba914d23d7a8a0617e9c3", a1, "vllm-agg", "vllm", nil,
			w("VllmDecodeWorker", "worker", "", 1, vllm, vModel)),
		sh("vllm-agg-v1beta1.yaml", vllmDir+"v1beta1/agg.yaml@4d0c5ed69f62cf53c38ef7167086657fc4f8227c", b1, "vllm-agg", "vllm", nil,
			w("VllmDecodeWorker", "worker", "", 1, vllm, vModel)),
		sh("vllm-agg-router-v1alpha1.yaml", vllmDir+"agg_router.yaml@b7f730feb6b2ac8da2200631a3dec0732a6231a1", a1, "vllm-agg-router", "vllm", kvFE,
			w("VllmDecodeWorker", "worker", "", 2, vllm, cat(vModel, vEvents))),
		sh("vllm-agg-router-v1beta1.yaml", vllmDir+"v1beta1/agg_router.yaml@369732d4303affed83a61039bcdcb32d89aeb528", b1, "vllm-agg-router", "vllm", kvFE,
			w("VllmDecodeWorker", "worker", "", 2, vllm, cat(vModel, vEvents))),
		sh("vllm-disagg-v1alpha1.yaml", vllmDir+"disagg.yaml@7893f2684e43bd9b8b9fac31e9582238b72f0581", a1, "vllm-disagg", "vllm", nil,
			w("VllmDecodeWorker", "worker", "decode", 1, vllm, cat(vModel, mode("decode"))),
			w("VllmPrefillWorker", "worker", "prefill", 1, vllm, cat(vModel, mode("prefill")))),
		sh("vllm-disagg-v1beta1.yaml", vllmDir+"v1beta1/disagg.yaml@88396aa037539d4714490a866c654a8be6377cfc", b1, "vllm-disagg", "vllm", nil,
			w("VllmDecodeWorker", "decode", "", 1, vllm, cat(vModel, mode("decode"))),
			w("VllmPrefillWorker", "prefill", "", 1, vllm, cat(vModel, mode("prefill"), vNixl))),
		sh("vllm-disagg-router-v1alpha1.yaml", vllmDir+"disagg_router.yaml@8401366d94c1150040e49510e1a295aa1c010f7b", a1, "vllm-v1-disagg-router", "vllm", kvFE,
			w("VllmDecodeWorker", "worker", "", 2, vllm, cat(vModel, mode("decode"))),
			w("VllmPrefillWorker", "worker", "", 2, vllm, cat(vModel, mode("prefill"), vEvents))),
		sh("vllm-disagg-router-v1beta1.yaml", vllmDir+"v1beta1/disagg_router.yaml@4d0c5ed69f62cf53c38ef7167086657fc4f8227c", b1, "vllm-v1-disagg-router", "vllm", kvFE,
			w("VllmDecodeWorker", "worker", "", 2, vllm, cat(vModel, mode("decode"))),
			w("VllmPrefillWorker", "worker", "", 2, vllm, cat(vModel, mode("prefill"), vNixl, vEvents))),
		sh("sglang-agg-v1alpha1.yaml", sglDir+"agg.yaml@4f5cb2abd9acb4754aa4078c9f35c1317a4ab0ae", a1, "sglang-agg", "sglang", nil,
			w("decode", "worker", "", 1, sgl, sModel)),
		sh("sglang-agg-v1beta1.yaml", sglDir+"v1beta1/agg.yaml@4d0c5ed69f62cf53c38ef7167086657fc4f8227c", b1, "sglang-agg", "sglang", nil,
			w("decode", "worker", "", 1, sgl, sModel)),
		sh("sglang-agg-router-v1alpha1.yaml", sglDir+"agg_router.yaml@41a72ab36698ce3eba0fba9af1dfad124d9e71ea", a1, "sglang-agg-router", "sglang", kvFE,
			w("decode", "worker", "", 1, sgl, cat(sModel, sEvents))),
		sh("sglang-agg-router-v1beta1.yaml", sglDir+"v1beta1/agg_router.yaml@4d0c5ed69f62cf53c38ef7167086657fc4f8227c", b1, "sglang-agg-router", "sglang", kvFE,
			w("decode", "worker", "", 1, sgl, cat(sModel, sEvents))),
		sh("sglang-disagg-v1alpha1.yaml", sglDir+"disagg.yaml@da6dc882377f1c6e15eec8c6bdeb2eecbc2206c4", a1, "sglang-disagg", "sglang", nil,
			w("decode", "worker", "decode", 1, sgl, sDisagg("decode")),
			w("prefill", "worker", "prefill", 1, sgl, sDisagg("prefill"))),
		sh("sglang-disagg-v1beta1.yaml", sglDir+"v1beta1/disagg.yaml@88396aa037539d4714490a866c654a8be6377cfc", b1, "sglang-disagg", "sglang", nil,
			w("decode", "decode", "", 1, sgl, sDisagg("decode")),
			w("prefill", "prefill", "", 1, sgl, sDisagg("prefill"))),
		sh("trtllm-agg-v1alpha1.yaml", trtDir+"agg.yaml@64ae795121910bb247718c166d760737d961ef97", a1, "trtllm-agg", "trtllm", nil,
			w("TRTLLMWorker", "worker", "", 1, trt, tModel("agg.yaml"))),
		sh("trtllm-agg-v1beta1.yaml", trtDir+"v1beta1/agg.yaml@4d0c5ed69f62cf53c38ef7167086657fc4f8227c", b1, "trtllm-agg", "trtllm", nil,
			w("TRTLLMWorker", "worker", "", 1, trt, tModel("agg.yaml"))),
		sh("trtllm-agg-router-v1alpha1.yaml", trtDir+"agg_router.yaml@2806586944d8406e89ae943cd1f9c8a8163a3734", a1, "trtllm-agg-router", "trtllm", kvFE,
			w("TRTLLMWorker", "worker", "", 2, trt, cat(tModel("agg.yaml"), tEvents))),
		sh("trtllm-agg-router-v1beta1.yaml", trtDir+"v1beta1/agg_router.yaml@4d0c5ed69f62cf53c38ef7167086657fc4f8227c", b1, "trtllm-agg-router", "trtllm", kvFE,
			w("TRTLLMWorker", "worker", "", 2, trt, cat(tModel("agg.yaml"), tEvents))),
		sh("trtllm-disagg-v1alpha1.yaml", trtDir+"disagg.yaml@25417557c21eb30586fa9996bfd179cbce956318", a1, "trtllm-disagg", "trtllm", nil,
			w("TRTLLMPrefillWorker", "worker", "prefill", 1, trt, cat(tModel("prefill.yaml"), mode("prefill"))),
			w("TRTLLMDecodeWorker", "worker", "decode", 1, trt, cat(tModel("decode.yaml"), mode("decode")))),
		sh("trtllm-disagg-v1beta1.yaml", trtDir+"v1beta1/disagg.yaml@369732d4303affed83a61039bcdcb32d89aeb528", b1, "trtllm-disagg", "trtllm", nil,
			w("decode", "decode", "", 1, trt, cat(tModel("decode.yaml"), mode("decode"))),
			w("prefill", "prefill", "", 1, trt, cat(tModel("prefill.yaml"), mode("prefill")))),
		sh("trtllm-disagg-router-v1alpha1.yaml", trtDir+"disagg_router.yaml@9f0e044d250fd1408b0804a3b37a66155280415b", a1, "trtllm-v1-disagg-router", "trtllm", kvFE,
			w("TRTLLMPrefillWorker", "worker", "", 2, trt, cat(tModel("prefill.yaml"), mode("prefill"), tEvents)),
			w("TRTLLMDecodeWorker", "worker", "", 2, trt, cat(tModel("decode.yaml"), mode("decode")))),
		sh("trtllm-disagg-router-v1beta1.yaml", trtDir+"v1beta1/disagg_router.yaml@4d0c5ed69f62cf53c38ef7167086657fc4f8227c", b1, "trtllm-v1-disagg-router", "trtllm", kvFE,
			w("decode", "worker", "", 2, trt, cat(tModel("decode.yaml"), mode("decode"))),
			w("prefill", "worker", "", 2, trt, cat(tModel("prefill.yaml"), mode("prefill"), tEvents))),
	}
	return append(shapes, noDWM(shapes, "vllm-agg-v1alpha1.yaml"), noDWM(shapes, "sglang-agg-v1beta1.yaml"))
}

// upQuote quotes a word for a sh -c script as the operator's shellQuoteForBashC does.
func upQuote(s string) string {
	if !strings.ContainsAny(s, " \t\n'\"\\{}[]$`!") {
		return s
	}
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, `$`, `\$`, "`", "\\`", "'", `'"'"'`)
	return `"` + r.Replace(s) + `"`
}

func upJoin(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = upQuote(w)
	}
	return strings.Join(q, " ")
}

// mainContainer returns the command and args of one pod of a replica, as the
// operator's backend rewrites them (leader: rank 0).
func (sh *upShape) mainContainer(c upComp, leader bool, env []map[string]any) (cmd, args []string) {
	if c.nodes <= 1 {
		return c.command, c.args
	}
	comp := strings.ToLower(c.name)
	ldrHost := "$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-" + comp + "-ldr-0.$(GROVE_HEADLESS_SERVICE)"
	switch sh.backend {
	case "trtllm":
		ssh := []string{"mkdir -p $HOME/.ssh", "ls -la /ssh-pk/", "cp /ssh-pk/private.key $HOME/.ssh/id_rsa", "cp /ssh-pk/private.key.pub $HOME/.ssh/id_rsa.pub",
			"cp /ssh-pk/private.key.pub $HOME/.ssh/authorized_keys", "chmod 600 $HOME/.ssh/id_rsa $HOME/.ssh/authorized_keys", "chmod 644 $HOME/.ssh/id_rsa.pub",
			`printf 'Host *\nIdentityFile '$HOME'/.ssh/id_rsa\nStrictHostKeyChecking no\nPort 2222\n' > $HOME/.ssh/config`}
		if !leader {
			ssh[0] = "mkdir -p $HOME/.ssh $HOME/.ssh/host_keys $HOME/.ssh/run"
			ssh = append(ssh, "ssh-keygen -t rsa -f $HOME/.ssh/host_keys/ssh_host_rsa_key -N ''",
				`printf 'Port 2222\nHostKey '$HOME'/.ssh/host_keys/ssh_host_rsa_key\nPidFile '$HOME'/.ssh/run/sshd.pid\nStrictModes no\nPermitRootLogin yes\nPasswordAuthentication no\nPubkeyAuthentication yes\nAuthorizedKeysFile '$HOME'/.ssh/authorized_keys\n' > $HOME/.ssh/sshd_config`,
				"/usr/sbin/sshd -D -f $HOME/.ssh/sshd_config")
			return []string{"/bin/sh", "-c"}, []string{strings.Join(ssh, " && ")}
		}
		hosts := []string{ldrHost}
		for i := 0; i < c.nodes-1; i++ {
			hosts = append(hosts, fmt.Sprintf("$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-%s-wkr-%d.$(GROVE_HEADLESS_SERVICE)", comp, i))
		}
		names := map[string]bool{"CUDA_VISIBLE_DEVICES": true, "HF_HOME": true, "HOME": true, "LD_LIBRARY_PATH": true, "PATH": true, "PYTHONPATH": true, "OMPI_MCA_orte_keep_fqdn_hostnames": true}
		for _, e := range env {
			names[e["name"].(string)] = true
		}
		var x []string
		for _, n := range sortedKeys(names) {
			x = append(x, "-x "+n)
		}
		mpirun := fmt.Sprintf(`mpirun $([ "$(id -u)" = "0" ] && echo --allow-run-as-root) --oversubscribe -n %d -H %s --mca pml ob1 --mca plm_rsh_args "-p 2222 -o StrictHostKeyChecking=no -i $HOME/.ssh/id_rsa" %s bash -c 'trtllm-llmapi-launch %s'`,
			c.nodes*c.gpus, strings.Join(hosts, ","), strings.Join(x, " "), upJoin(append(append([]string{}, c.command...), c.args...)))
		return []string{"/bin/sh", "-c"}, []string{strings.Join(append(ssh, mpirun), " && ")}
	case "vllm":
		if c.dp > 0 { // data parallel over nodes, hybrid load balancing
			local := c.gpus
			flags := fmt.Sprintf("--data-parallel-hybrid-lb --data-parallel-size-local %d --data-parallel-start-rank %%s --data-parallel-address %s --data-parallel-rpc-port 13445", local, ldrHost)
			if leader {
				return c.command, append(append([]string{}, c.args...), strings.Fields(fmt.Sprintf(flags, "0"))...)
			}
			return []string{"sh", "-c"}, []string{"exec " + upJoin(c.command) + " " + upJoin(c.args) + " " + fmt.Sprintf(flags, fmt.Sprintf("$(( %d * $((GROVE_PCLQ_POD_INDEX + 1)) ))", local))}
		}
		// tensor parallel over nodes, Ray executor
		if !leader {
			return []string{"/bin/sh", "-c"}, []string{"ray start --address=" + ldrHost + ":6379 --block"}
		}
		return []string{"/bin/sh", "-c"}, []string{"ray start --head --port=6379 && " + upJoin(c.command) + " " + upJoin(c.args) + " --distributed-executor-backend ray"}
	case "sglang":
		flags := "--dist-init-addr " + ldrHost + ":29500 --nnodes " + fmt.Sprint(c.nodes) + " --node-rank "
		if leader {
			return c.command, append(append([]string{}, c.args...), strings.Fields(flags+"0")...)
		}
		return []string{"sh", "-c"}, []string{"exec " + upJoin(c.command) + " " + upJoin(c.args) + " " + flags + "$((GROVE_PCLQ_POD_INDEX + 1))"}
	}
	return c.command, c.args
}

func sortedKeys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// dgdObject is the DGD as the user applied it (the upstream example, renamed).
func (sh *upShape) dgdObject() map[string]any {
	spec := map[string]any{}
	if !sh.example {
		spec["backendFramework"] = sh.backend
	}
	if sh.policy {
		spec["experimental"] = map[string]any{"kvTransferPolicy": map[string]any{"labelKey": upZoneKey, "domain": "zone", "enforcement": "required"}}
	}
	fe := []string{"python3", "-m", "dynamo.frontend"}
	feEnv := sh.feEnv
	if !sh.example {
		feEnv = upKVFrontend // the multinode rebuilds run a KV router
	}
	if sh.api == "nvidia.com/v1alpha1" {
		services := map[string]any{"Frontend": map[string]any{"componentType": "frontend", "replicas": 1,
			"extraPodSpec": map[string]any{"mainContainer": map[string]any{"image": "my-registry/" + sh.backend + "-runtime:my-tag", "command": fe}}}}
		if len(feEnv) > 0 {
			services["Frontend"].(map[string]any)["envs"] = feEnv
		}
		for _, c := range sh.comps {
			s := map[string]any{"componentType": c.ctype, "replicas": len(c.zones), "resources": map[string]any{"limits": map[string]any{"gpu": fmt.Sprint(c.gpus)}},
				"extraPodSpec": map[string]any{"mainContainer": map[string]any{"image": "my-registry/" + sh.backend + "-runtime:my-tag", "command": c.command, "args": c.args}}}
			if c.nodes > 1 {
				s["multinode"] = map[string]any{"nodeCount": c.nodes}
			}
			if c.subType != "" {
				s["subComponentType"] = c.subType
			}
			services[c.name] = s
		}
		spec["services"] = services
		if len(sh.env) > 0 {
			spec["envs"] = sh.env
		}
	} else {
		feC := map[string]any{"name": "main", "image": "nvcr.io/nvidia/ai-dynamo/" + sh.backend + "-runtime:1.2.0", "command": fe}
		if len(feEnv) > 0 {
			feC["env"] = feEnv
		}
		comps := []any{map[string]any{"name": "Frontend", "type": "frontend", "replicas": 1,
			"podTemplate": map[string]any{"spec": map[string]any{"containers": []any{feC}}}}}
		for _, c := range sh.comps {
			m := map[string]any{"name": c.name, "type": c.ctype, "replicas": len(c.zones),
				"podTemplate": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "main", "image": "nvcr.io/nvidia/ai-dynamo/" + sh.backend + "-runtime:1.2.0",
					"command": c.command, "args": c.args, "resources": map[string]any{"limits": map[string]any{"nvidia.com/gpu": fmt.Sprint(c.gpus)}}}}}}}
			if c.nodes > 1 {
				m["multinode"] = map[string]any{"nodeCount": c.nodes}
			}
			comps = append(comps, m)
		}
		spec["components"] = comps
		if len(sh.env) > 0 {
			spec["env"] = sh.env
		}
	}
	return map[string]any{"apiVersion": sh.api, "kind": "DynamoGraphDeployment",
		"metadata": map[string]any{"name": sh.dgd, "namespace": sh.ns, "generation": 1}, "spec": spec}
}

// objects renders the DGD, its nodes and the pods the operator and Grove create.
func (sh *upShape) objects() []map[string]any {
	objs := []map[string]any{sh.dgdObject()}
	pcs := sh.dgd
	dynNS := sh.ns + "-" + sh.dgd
	nodeN := 0
	var nodes []map[string]any
	newNode := func(zone string, gpus int) string {
		nodeN++
		name := fmt.Sprintf("gpu-node-%02d", nodeN)
		nodes = append(nodes, map[string]any{"apiVersion": "v1", "kind": "Node",
			"metadata": map[string]any{"name": name, "labels": map[string]any{"kubernetes.io/hostname": name, upZoneKey: zone}},
			"status":   map[string]any{"capacity": map[string]any{"nvidia.com/gpu": fmt.Sprint(gpus)}, "allocatable": map[string]any{"nvidia.com/gpu": fmt.Sprint(gpus)}}})
		return name
	}
	podIP := 10
	pod := func(name, comp, ctype, clique string, extraLabels map[string]string, node, zone string, env []map[string]any, cmd, args []string, gpus int, pending bool) map[string]any {
		labels := map[string]any{"nvidia.com/dynamo-graph-deployment-name": sh.dgd, "nvidia.com/dynamo-component": comp, "nvidia.com/dynamo-component-type": ctype,
			"nvidia.com/dynamo-namespace": dynNS, "nvidia.com/dynamo-discovery-backend": "kubernetes", "nvidia.com/dynamo-discovery-enabled": "true",
			"app.kubernetes.io/managed-by": "grove-operator", "app.kubernetes.io/part-of": pcs, "grove.io/podclique": clique, "grove.io/podcliqueset-replica-index": "0"}
		for k, v := range extraLabels {
			labels[k] = v
		}
		worker := ctype != "frontend"
		ann := map[string]any{}
		if worker && sh.policy {
			ann["nvidia.com/topology-label-key"] = upZoneKey
			if !pending {
				labels[upZoneKey] = zone // copied from the node by the topology-label controller
			}
		}
		c := map[string]any{"name": "main", "image": "nvcr.io/nvidia/ai-dynamo/" + sh.backend + "-runtime:1.2.0", "env": env}
		if len(cmd) > 0 {
			c["command"] = cmd
		}
		if len(args) > 0 {
			c["args"] = args
		}
		if gpus > 0 {
			c["resources"] = map[string]any{"limits": map[string]any{"nvidia.com/gpu": fmt.Sprint(gpus)}, "requests": map[string]any{"nvidia.com/gpu": fmt.Sprint(gpus)}}
		}
		spec := map[string]any{"containers": []any{c}}
		status := map[string]any{"phase": "Running", "podIP": fmt.Sprintf("10.0.%d.%d", podIP/250, podIP%250),
			"conditions": []any{map[string]any{"type": "PodScheduled", "status": "True"}, map[string]any{"type": "Ready", "status": "True"}}}
		podIP++
		if pending {
			status = map[string]any{"phase": "Pending", "conditions": []any{map[string]any{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
				"message": fmt.Sprintf("0/%d nodes are available: %d Insufficient nvidia.com/gpu. preemption: 0/%d nodes are available: %d No preemption victims found for incoming pod.", nodeN, nodeN, nodeN, nodeN)}}}
		} else {
			spec["nodeName"] = node
		}
		md := map[string]any{"name": name, "namespace": sh.ns, "labels": labels}
		if len(ann) > 0 {
			md["annotations"] = ann
		}
		return map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec, "status": status}
	}
	baseEnv := func(ctype string) []map[string]any {
		env := []map[string]any{{"name": "DYN_NAMESPACE", "value": dynNS}, {"name": "DYN_COMPONENT", "value": ctype},
			{"name": "DYN_PARENT_DGD_K8S_NAME", "value": sh.dgd}, {"name": "DYN_PARENT_DGD_K8S_NAMESPACE", "value": sh.ns},
			{"name": "DYN_DISCOVERY_BACKEND", "value": "kubernetes"}}
		env = append(env, sh.env...)
		if ctype != "frontend" {
			env = append(env, map[string]any{"name": "DYN_SYSTEM_ENABLED", "value": "true"}, map[string]any{"name": "DYN_SYSTEM_PORT", "value": "9090"})
			if sh.policy {
				env = append(env, map[string]any{"name": "DYN_KV_TRANSFER_DOMAIN", "value": "zone"}, map[string]any{"name": "DYN_KV_TRANSFER_ENFORCEMENT", "value": "required"},
					map[string]any{"name": "DYN_TOPOLOGY_ENABLED", "value": "true"}, map[string]any{"name": "DYN_TOPOLOGY_MOUNT_PATH", "value": "/etc/dynamo/topology"})
			}
		}
		return env
	}
	feNode := newNode("us-east-1a", 0)
	feEnv := upKVFrontend
	if sh.example {
		feEnv = sh.feEnv
	}
	objs = append(objs, pod(pcs+"-0-frontend-"+genHex(sh.file+"fe", 5), "Frontend", "frontend", pcs+"-0-frontend", nil, feNode, "us-east-1a",
		append(baseEnv("frontend"), feEnv...), []string{"python3", "-m", "dynamo.frontend"}, nil, 0, false))
	for _, c := range sh.comps {
		comp := strings.ToLower(c.name)
		for ri, zone := range c.zones {
			pending := ri < len(c.pending) && c.pending[ri]
			pcsg := pcs + "-0-" + comp
			for pi := 0; pi < max(c.nodes, 1); pi++ {
				leader := pi == 0
				node := ""
				if !pending {
					node = newNode(zone, 8)
				}
				env := baseEnv(c.ctype)
				var clique string
				extra := map[string]string{}
				if c.nodes > 1 {
					role, podIdx := "ldr", 0
					if !leader {
						role, podIdx = "wkr", pi-1
					}
					clique = fmt.Sprintf("%s-%d-%s-%s", pcsg, ri, comp, role)
					extra = map[string]string{"grove.io/podcliquescalinggroup": pcsg, "grove.io/podcliquescalinggroup-replica-index": fmt.Sprint(ri), "grove.io/podclique-pod-index": fmt.Sprint(podIdx)}
					env = append(env, map[string]any{"name": "GROVE_PCS_NAME", "value": pcs}, map[string]any{"name": "GROVE_PCSG_NAME", "value": pcsg},
						map[string]any{"name": "GROVE_PCSG_INDEX", "value": fmt.Sprint(ri)}, map[string]any{"name": "GROVE_PCLQ_NAME", "value": clique},
						map[string]any{"name": "GROVE_PCLQ_POD_INDEX", "value": fmt.Sprint(podIdx)}, map[string]any{"name": "GROVE_HEADLESS_SERVICE", "value": pcs + "-0"})
					if sh.backend == "trtllm" {
						env = append(env, map[string]any{"name": "OMPI_MCA_orte_keep_fqdn_hostnames", "value": "1"})
					}
				} else {
					clique = pcs + "-0-" + comp
					extra["grove.io/podclique-pod-index"] = fmt.Sprint(ri)
				}
				if c.subType != "" {
					extra["nvidia.com/dynamo-sub-component-type"] = c.subType
				}
				policyZone := ""
				if sh.policy {
					policyZone = zone
				}
				cmd, args := sh.mainContainer(c, leader, env)
				name := clique + "-" + genHex(fmt.Sprintf("%s/%s/%d/%d", sh.file, comp, ri, pi), 5)
				p := pod(name, c.name, c.ctype, clique, extra, node, zone, env, cmd, args, c.gpus, pending)
				objs = append(objs, p)
				switch {
				case pending:
				case sh.example && !sh.noDWM:
					objs = append(objs, upDWM(p, dynNS, c.args, 0, 1, ""))
				case sh.registered && c.dp > 0:
					objs = append(objs, upDWM(p, dynNS, c.args, pi*c.gpus, c.gpus, policyZone))
				case sh.registered && leader:
					objs = append(objs, upDWM(p, dynNS, c.args, 0, 1, policyZone))
				}
			}
		}
	}
	return append(objs, nodes...)
}

// upDWM is the DynamoWorkerMetadata a single-node example's worker publishes
// once it runs (discovery backend kubernetes): one generate endpoint and its
// model card, whose worker_type is the engine's mode (--disaggregation-mode,
// else aggregated), and a KV-event channel when the worker's flags publish KV
// events.
func upDWM(pod map[string]any, dynNS string, args []string, dpStart, dpSize int, zone string) map[string]any {
	md := pod["metadata"].(map[string]any)
	name := md["name"].(string)
	ip := pod["status"].(map[string]any)["podIP"].(string)
	role, events := "aggregated", false
	for i, a := range args {
		switch a {
		case "--disaggregation-mode":
			role = map[string]string{"context": "prefill", "generation": "decode"}[args[i+1]]
			if role == "" {
				role = args[i+1]
			}
		case "--is-decode-worker":
			role = "decode"
		case "--is-prefill-worker":
			role = "prefill"
		case "--kv-events-config", "--publish-events-and-metrics":
			events = true
		}
	}
	comp, needs := "backend", []any{}
	if role == "prefill" {
		comp, needs = "prefill", []any{[]any{"decode"}}
	}
	id := genInstanceID(name)
	hexID := fmt.Sprintf("%x", id)
	runtime := map[string]any{"total_kv_blocks": int64(20000), "max_num_seqs": int64(256), "max_num_batched_tokens": int64(8192),
		"data_parallel_start_rank": int64(dpStart), "data_parallel_size": int64(dpSize), "enable_local_indexer": true, "enable_eagle": false}
	if zone != "" { // DYN_TOPOLOGY_ENABLED: the worker publishes the mounted topology and the policy
		runtime["topology_domains"] = map[string]any{"zone": zone}
		runtime["kv_transfer_domain"] = "zone"
		runtime["kv_transfer_enforcement"] = "required"
	}
	key := dynNS + "/" + comp + "/generate/" + hexID
	channels := map[string]any{}
	if events {
		kid := genInstanceID(name + "kv")
		channels[fmt.Sprintf("namespace/%s/component/%s/topic/kv-events/%x", dynNS, comp, kid)] = map[string]any{
			"type": "EventChannel", "scope": map[string]any{"kind": "component", "namespace": dynNS, "component": comp},
			"topic": "kv-events", "instance_id": int64(kid),
			"transport": map[string]any{"kind": "Zmq", "config": map[string]any{"endpoint": "tcp://" + ip + ":20080"}}}
	}
	return map[string]any{"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoWorkerMetadata",
		"metadata": map[string]any{"name": name, "namespace": md["namespace"],
			"ownerReferences": []any{map[string]any{"apiVersion": "v1", "kind": "Pod", "name": name, "uid": genUID(name)}}},
		"spec": map[string]any{"data": map[string]any{
			"endpoints": map[string]any{key: map[string]any{"type": "Endpoint", "namespace": dynNS, "component": comp, "endpoint": "generate",
				"instance_id": int64(id), "transport": map[string]any{"tcp": ip + ":41200/" + hexID + "/generate"}}},
			"model_cards": map[string]any{key: map[string]any{"type": "Model", "namespace": dynNS, "component": comp, "endpoint": "generate",
				"instance_id": int64(id), "card_json": map[string]any{
					"display_name": "Qwen/Qwen3-0.6B", "slug": "qwen--qwen3-0_6b", "kv_cache_block_size": int64(16), "migration_limit": int64(0),
					"model_type": "Chat | Completions", "model_input": "Tokens", "worker_type": role, "needs": needs, "context_length": int64(40960),
					"runtime_config": runtime}}},
			"event_channels": channels,
			"event_sources":  map[string]any{},
		}}}
}

// render is the capture file for a shape.
func (sh *upShape) render(t *testing.T) []byte {
	t.Helper()
	items := make([]any, 0, 16)
	for _, o := range sh.objects() {
		items = append(items, o)
	}
	out, err := yaml.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
	if err != nil {
		t.Fatal(err)
	}
	how := "components renamed, no DynamoWorkerMetadata"
	switch {
	case sh.registered:
		how = "components renamed, the workers registered (their DynamoWorkerMetadata)"
	case sh.noDWM:
		how = "upstream's component names, no DynamoWorkerMetadata published yet"
	case sh.example:
		how = "upstream's component names, each worker's DynamoWorkerMetadata"
	}
	head := "# Generated by TestUpstreamShapeFixtures (pkg/analysis/upstream_shapes_test.go); do not edit.\n" +
		"# Rebuilt from ai-dynamo/dynamo " + sh.upstream + ",\n" +
		"# " + how + ", pods as the operator reconciles them on the Grove path.\n"
	return append([]byte(head), out...)
}

// renderManifest is the DGD alone, as a user's manifest file holds it (no
// namespace, no status): what `topology --from-file` must not mistake for a
// deployment.
func (sh *upShape) renderManifest(t *testing.T) []byte {
	t.Helper()
	o := sh.dgdObject()
	delete(o["metadata"].(map[string]any), "namespace")
	delete(o["metadata"].(map[string]any), "generation")
	out, err := yaml.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	how := "(renamed components)"
	if sh.example {
		how = "(upstream's component names)"
	}
	return append([]byte("# Generated by TestUpstreamShapeFixtures; the DGD of ai-dynamo/dynamo "+sh.upstream+"\n# "+how+" as a manifest: not applied, no pods, no status.\n"), out...)
}

// TestUpstreamShapeFixtures keeps test/fixtures/upstream/ in step with the generator.
func TestUpstreamShapeFixtures(t *testing.T) {
	type fixture struct {
		file   string
		render func(*testing.T) []byte
	}
	var fixtures []fixture
	for _, sh := range upAllShapes() {
		// Every capture has its DGD alone beside it, for preflight and for
		// topology's "nothing is deployed".
		fixtures = append(fixtures, fixture{sh.file, sh.render})
		if !strings.HasSuffix(sh.file, "-registered.yaml") { // the same DGD as before registration
			fixtures = append(fixtures, fixture{"manifest-" + sh.file, sh.renderManifest})
		}
	}
	for _, fx := range fixtures {
		t.Run(fx.file, func(t *testing.T) {
			got := fx.render(t)
			path := filepath.Join("..", "..", "test", "fixtures", "upstream", fx.file)
			if os.Getenv("UPDATE_GOLDEN") != "" {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (UPDATE_GOLDEN=1 go test ./pkg/analysis -run TestUpstreamShapeFixtures writes it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s drifted from its generator: UPDATE_GOLDEN=1 go test ./pkg/analysis -run TestUpstreamShapeFixtures", path)
			}
		})
	}
}

// upBuild reads a generated upstream capture and analyzes it.
func upBuild(t *testing.T, file string) (*model.Snapshot, *model.Report) {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "test", "fixtures", "upstream", file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := capture.Read(f, file)
	if err != nil {
		t.Fatal(err)
	}
	s, err := build.Build(b)
	if err != nil {
		t.Fatal(err)
	}
	return s, AnalyzeTopology(s, AnalyzeOptions{})
}

// TestUpstreamShapes: every rebuilt upstream shape is counted by role, a
// multinode replica once with its leader's role and all its GPUs, and each pod
// says which signal decided its role.
// TestUpstreamShapes: every rebuilt upstream shape, once its workers have
// registered, is counted by role, a multinode replica once with its leader's
// role and all its GPUs, and each pod says which signal decided its role.
func TestUpstreamShapes(t *testing.T) {
	type dom struct {
		value                 string
		prefill, decode       int
		prefillGPU, decodeGPU int64
	}
	const nested = "arg --disaggregation-mode (in mpirun › bash -c)"
	tests := []struct {
		file     string
		domains  []dom
		signals  map[string]string // component/leader|worker → role signal
		findings []string          // ids at warning or above
	}{
		{"trtllm-disagg-multinode-v1alpha1.yaml", []dom{{"", 1, 1, 8, 8}},
			map[string]string{"ctx/leader": nested, "ctx/worker": "leader *: " + nested, "gen/leader": nested, "gen/worker": "leader *: " + nested}, nil},
		{"trtllm-disagg-multinode-v1beta1-zone-required.yaml", []dom{{"us-east-1a", 1, 1, 8, 8}, {"us-east-1b", 1, 0, 8, 0}},
			map[string]string{"ctx/leader": nested, "ctx/worker": "leader *: " + nested, "gen/leader": nested},
			[]string{"PrefillDomainWithoutDecode", "SingleDecodeInDomain"}},
		// Issue 17 item 3: Pending generation workers have no zone because they have
		// no node; that is WorkerPodsPending, not WorkerMissingDomain.
		{"trtllm-disagg-multinode-v1beta1-zone-required-gen-pending.yaml", []dom{{"", 0, 2, 0, 16}, {"us-east-1a", 1, 0, 8, 0}, {"us-east-1b", 1, 0, 8, 0}},
			map[string]string{"gen/leader": nested, "gen/worker": "leader *: " + nested},
			[]string{"PrefillDomainWithoutDecode", "PrefillDomainWithoutDecode", "WorkerPodsPending"}},
		{"vllm-disagg-multinode-v1alpha1.yaml", []dom{{"", 1, 1, 2, 2}},
			map[string]string{"ctx/leader": "arg --disaggregation-mode", "ctx/worker": "leader *: arg --disaggregation-mode",
				"gen/leader": "arg --is-decode-worker", "gen/worker": "leader *: arg --is-decode-worker"}, nil},
		{"vllm-disagg-multinode-v1beta1.yaml", []dom{{"us-east-1a", 1, 1, 2, 2}, {"us-east-1b", 1, 1, 2, 2}},
			map[string]string{"ctx/leader": "arg --disaggregation-mode", "gen/worker": "leader *: arg --is-decode-worker"},
			[]string{"SingleDecodeInDomain", "SingleDecodeInDomain"}},
		// SGLang workers carry the engine args too (with --node-rank in a sh -c).
		{"sglang-disagg-multinode-v1alpha1.yaml", []dom{{"", 1, 1, 8, 8}},
			map[string]string{"ctx/leader": "arg --disaggregation-mode", "ctx/worker": "arg --disaggregation-mode", "gen/worker": "arg --disaggregation-mode"}, nil},
		{"sglang-disagg-multinode-v1beta1.yaml", []dom{{"us-east-1a", 1, 1, 8, 8}},
			map[string]string{"ctx/leader": "label nvidia.com/dynamo-component-type", "gen/worker": "label nvidia.com/dynamo-component-type"},
			[]string{"SingleDecodeInDomain"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			// Before registration (no DynamoWorkerMetadata yet): roles come from
			// the pods and their args; the router knows no worker, so the model
			// is not served and the workers are not counted as ready.
			s, r := upBuild(t, tt.file)
			if len(r.Deployments) != 1 {
				t.Fatalf("deployments: %+v", r.Deployments)
			}
			for _, w := range s.Deployments[0].Workers {
				kind := "worker"
				if w.Leader {
					kind = "leader"
				}
				want, ok := tt.signals[w.Component+"/"+kind]
				if !ok {
					continue
				}
				if pre, post, found := strings.Cut(want, "*"); found {
					if !strings.HasPrefix(w.RoleSignal, pre) || !strings.HasSuffix(w.RoleSignal, post) {
						t.Errorf("%s: role signal %q, want %q", w.Pod, w.RoleSignal, want)
					}
				} else if w.RoleSignal != want {
					t.Errorf("%s: role signal %q, want %q", w.Pod, w.RoleSignal, want)
				}
			}
			var before []string
			for _, f := range r.Findings {
				if f.ID == FindingModelNotReady || f.ID == FindingWorkersNotRegistered {
					before = append(before, f.ID)
				}
			}
			for _, d := range r.Deployments[0].Domains {
				if d.Prefill.Ready+d.Decode.Ready > 0 {
					t.Errorf("before registration, domain %q counts ready replicas: %+v", d.Value, d)
				}
			}
			if fmt.Sprint(before) != fmt.Sprint([]string{FindingModelNotReady, FindingWorkersNotRegistered}) && !strings.Contains(tt.file, "pending") {
				t.Errorf("before registration: findings %v, want ModelNotReady and WorkersNotRegistered", before)
			}

			// Registered: counted by role and domain, with the domain findings.
			_, r = upBuild(t, strings.TrimSuffix(tt.file, ".yaml")+"-registered.yaml")
			var got []dom
			for _, d := range r.Deployments[0].Domains {
				got = append(got, dom{d.Value, d.Prefill.Total, d.Decode.Total, d.Prefill.GPUs, d.Decode.GPUs})
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.domains) {
				t.Errorf("domains = %v, want %v", got, tt.domains)
			}
			var ids []string
			for _, f := range r.Findings {
				if f.Severity.Rank() >= model.SeverityWarning.Rank() && f.ID != "KvEventsNotPublished" {
					ids = append(ids, f.ID)
				}
			}
			if fmt.Sprint(ids) != fmt.Sprint(tt.findings) {
				t.Errorf("findings = %v, want %v", ids, tt.findings)
			}
			for _, wr := range r.Deployments[0].Workers {
				if len(wr.Pods) != 2 || wr.RoleSignal == "" {
					t.Errorf("worker report %+v: want a multinode replica of 2 pods with its role signal", wr)
				}
			}
		})
	}
}

// upAnalyzeObjects builds and analyzes objects rendered in memory.
func upAnalyzeObjects(t *testing.T, objs []map[string]any) *model.Report {
	t.Helper()
	items := make([]any, len(objs))
	for i, o := range objs {
		items[i] = o
	}
	data, err := yaml.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
	if err != nil {
		t.Fatal(err)
	}
	b, err := capture.Parse(data, "shape.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s, err := build.Build(b)
	if err != nil {
		t.Fatal(err)
	}
	return AnalyzeTopology(s, AnalyzeOptions{})
}

// TestUnclassifiedWorkers: a deployment whose workers cannot be classified, or
// whose worker components have no pods, is never "No findings".
func TestUnclassifiedWorkers(t *testing.T) {
	shape := func(file string) upShape {
		for _, sh := range upShapes() {
			if sh.file == file {
				return sh
			}
		}
		t.Fatalf("no shape %s", file)
		return upShape{}
	}
	// stripRole drops the role flags from the components' args: the role lives
	// only in the engine config file, as a user may write it.
	stripRole := func(sh upShape) upShape {
		comps := make([]upComp, len(sh.comps))
		for i, c := range sh.comps {
			c.args = append([]string{}, c.args...)
			for j := 0; j < len(c.args); j++ {
				switch c.args[j] {
				case "--disaggregation-mode":
					c.args = append(c.args[:j], c.args[j+2:]...)
					j--
				case "--is-decode-worker":
					c.args = append(c.args[:j], c.args[j+1:]...)
					j--
				}
			}
			comps[i] = c
		}
		sh.comps = comps
		return sh
	}
	onlyDGD := func(objs []map[string]any) []map[string]any { return objs[:1] }
	withStatus := func(objs []map[string]any) []map[string]any {
		objs[0]["status"] = map[string]any{"state": "pending", "conditions": []any{map[string]any{"type": "Ready", "status": "False", "reason": "pods_not_ready", "message": "components not ready: ctx, gen"}}}
		return objs
	}
	tests := []struct {
		name     string
		shape    upShape
		edit     func([]map[string]any) []map[string]any
		want     string // "id severity", "" for none
		contains []string
		notDep   bool
	}{
		{"trtllm roles only in config files, no policy", stripRole(shape("trtllm-disagg-multinode-v1alpha1.yaml")), nil,
			"WorkerRolesUndecided warning", []string{"2 worker replicas", "trtllm-disagg-tp8-0-ctx-0-ctx-ldr-", "no --disaggregation-mode", "inside sh -c, bash -c and mpirun"}, false},
		{"trtllm roles only in config files, zone policy", stripRole(shape("trtllm-disagg-multinode-v1beta1-zone-required.yaml")), nil,
			"WorkerRolesUndecided error", []string{"3 worker replicas", "so the zone policy cannot be checked against them"}, false},
		{"vllm without role flags", stripRole(shape("vllm-disagg-multinode-v1alpha1.yaml")), nil,
			"WorkerRolesUndecided warning", nil, false},
		{"classified deployment", shape("vllm-disagg-multinode-v1alpha1.yaml"), nil, "", nil, false},
		{"worker components without pods, reconciled", shape("sglang-disagg-multinode-v1beta1.yaml"), func(o []map[string]any) []map[string]any { return withStatus(onlyDGD(o)) },
			"WorkerPodsMissing error", []string{"declares worker components ctx (type prefill, 1 replica), gen (type decode, 1 replica) but none of their pods exists", "kubectl describe dgd"}, false},
		{"bare v1alpha1 manifest", shape("trtllm-disagg-multinode-v1alpha1.yaml"), onlyDGD,
			"WorkerPodsMissing warning", []string{"nothing is deployed", "kubectl dynamo preflight -f MANIFEST"}, true},
		{"bare v1beta1 manifest with a policy", shape("trtllm-disagg-multinode-v1beta1-zone-required.yaml"), onlyDGD,
			"WorkerPodsMissing error", []string{"nothing is deployed"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := tt.shape.objects()
			if tt.edit != nil {
				objs = tt.edit(objs)
			}
			r := upAnalyzeObjects(t, objs)
			var got []string
			var msg string
			for _, f := range r.Findings {
				if f.ID == FindingWorkerRolesUndecided || f.ID == FindingWorkerPodsMissing {
					got = append(got, f.ID+" "+string(f.Severity))
					msg = f.Message + " | " + f.Hint + " | " + strings.Join(f.Objects, ",")
				}
			}
			want := []string{}
			if tt.want != "" {
				want = append(want, tt.want)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("findings %v, want %v (all: %+v)", got, want, r.Findings)
			}
			for _, c := range tt.contains {
				if !strings.Contains(msg, c) {
					t.Errorf("finding %q lacks %q", msg, c)
				}
			}
			if r.Deployments[0].NotDeployed != tt.notDep {
				t.Errorf("notDeployed = %v, want %v", r.Deployments[0].NotDeployed, tt.notDep)
			}
		})
	}
}

// TestUpstreamExampleShapes: the single-node examples (agg, agg_router, disagg,
// disagg_router, v1alpha1 and v1beta1) are counted by role as their engines run,
// with their DynamoWorkerMetadata (the card decides) and without (the pods and
// the DGD decide, as right after start or in preflight). Upstream names its
// aggregated vLLM worker VllmDecodeWorker and its aggregated SGLang worker
// decode: neither is a decode worker without prefill.
func TestUpstreamExampleShapes(t *testing.T) {
	const (
		agg     = model.SignalOnlyWorkerComponent
		arg     = "arg --disaggregation-mode"
		subType = "label nvidia.com/dynamo-sub-component-type"
		typ     = "label nvidia.com/dynamo-component-type"
	)
	tests := []struct {
		file  string
		roles string // component=role×replicas, sorted by component
		bare  string // the role signal of every worker without DWMs
	}{
		{"vllm-agg-v1alpha1.yaml", "VllmDecodeWorker=aggregated×1", agg},
		{"vllm-agg-v1beta1.yaml", "VllmDecodeWorker=aggregated×1", agg},
		{"vllm-agg-router-v1alpha1.yaml", "VllmDecodeWorker=aggregated×2", agg},
		{"vllm-agg-router-v1beta1.yaml", "VllmDecodeWorker=aggregated×2", agg},
		{"vllm-disagg-v1alpha1.yaml", "VllmDecodeWorker=decode×1 VllmPrefillWorker=prefill×1", subType},
		{"vllm-disagg-v1beta1.yaml", "VllmDecodeWorker=decode×1 VllmPrefillWorker=prefill×1", typ},
		{"vllm-disagg-router-v1alpha1.yaml", "VllmDecodeWorker=decode×2 VllmPrefillWorker=prefill×2", arg},
		{"vllm-disagg-router-v1beta1.yaml", "VllmDecodeWorker=decode×2 VllmPrefillWorker=prefill×2", arg},
		{"sglang-agg-v1alpha1.yaml", "decode=aggregated×1", agg},
		{"sglang-agg-v1beta1.yaml", "decode=aggregated×1", agg},
		{"sglang-agg-router-v1alpha1.yaml", "decode=aggregated×1", agg},
		{"sglang-agg-router-v1beta1.yaml", "decode=aggregated×1", agg},
		{"sglang-disagg-v1alpha1.yaml", "decode=decode×1 prefill=prefill×1", subType},
		{"sglang-disagg-v1beta1.yaml", "decode=decode×1 prefill=prefill×1", typ},
		{"trtllm-agg-v1alpha1.yaml", "TRTLLMWorker=aggregated×1", agg},
		{"trtllm-agg-v1beta1.yaml", "TRTLLMWorker=aggregated×1", agg},
		{"trtllm-agg-router-v1alpha1.yaml", "TRTLLMWorker=aggregated×2", agg},
		{"trtllm-agg-router-v1beta1.yaml", "TRTLLMWorker=aggregated×2", agg},
		{"trtllm-disagg-v1alpha1.yaml", "TRTLLMDecodeWorker=decode×1 TRTLLMPrefillWorker=prefill×1", subType},
		{"trtllm-disagg-v1beta1.yaml", "decode=decode×1 prefill=prefill×1", typ},
		{"trtllm-disagg-router-v1alpha1.yaml", "TRTLLMDecodeWorker=decode×2 TRTLLMPrefillWorker=prefill×2", arg},
		{"trtllm-disagg-router-v1beta1.yaml", "decode=decode×2 prefill=prefill×2", arg},
		{"vllm-agg-v1alpha1-no-dwm.yaml", "VllmDecodeWorker=aggregated×1", agg},
		{"sglang-agg-v1beta1-no-dwm.yaml", "decode=aggregated×1", agg},
	}
	shapes := map[string]upShape{}
	for _, sh := range upSingleShapes() {
		shapes[sh.file] = sh
	}
	if len(tests) != len(shapes) {
		t.Fatalf("%d cases for %d example shapes", len(tests), len(shapes))
	}
	for _, tt := range tests {
		sh, ok := shapes[tt.file]
		if !ok {
			t.Fatalf("no shape %s", tt.file)
		}
		for _, dwm := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/dwm=%v", tt.file, dwm), func(t *testing.T) {
				var objs []map[string]any
				for _, o := range sh.objects() {
					if dwm || o["kind"] != "DynamoWorkerMetadata" {
						objs = append(objs, o)
					}
				}
				items := make([]any, len(objs))
				for i, o := range objs {
					items[i] = o
				}
				data, err := yaml.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
				if err != nil {
					t.Fatal(err)
				}
				b, err := capture.Parse(data, tt.file)
				if err != nil {
					t.Fatal(err)
				}
				s, err := build.Build(b)
				if err != nil {
					t.Fatal(err)
				}
				r := AnalyzeTopology(s, AnalyzeOptions{})
				count := map[string]int{}
				var keys []string
				for _, w := range s.Deployments[0].Workers {
					k := w.Component + "=" + string(w.Role)
					if count[k] == 0 {
						keys = append(keys, k)
					}
					count[k]++
					want := "card worker_type"
					if !dwm || sh.noDWM {
						want = tt.bare
					}
					if w.RoleSignal != want {
						t.Errorf("%s: role signal %q, want %q", w.Pod, w.RoleSignal, want)
					}
				}
				var got []string
				for _, k := range sortedKeys(func() map[string]bool {
					m := map[string]bool{}
					for _, k := range keys {
						m[k] = true
					}
					return m
				}()) {
					got = append(got, fmt.Sprintf("%s×%d", k, count[k]))
				}
				if strings.Join(got, " ") != tt.roles {
					t.Errorf("roles %q, want %q", strings.Join(got, " "), tt.roles)
				}
				// No finding at all once the workers registered: an aggregated
				// example is not a decode worker without prefill, nor a
				// deployment whose roles are undecided. Before they register,
				// only that: the router knows none of them.
				for _, f := range r.Findings {
					if !dwm || sh.noDWM {
						if f.ID == FindingModelNotReady || f.ID == FindingWorkersNotRegistered {
							continue
						}
					}
					t.Errorf("finding %s %s: %s", f.Severity, f.ID, f.Message)
				}
			})
		}
	}
}

// TestOnlyWorkerComponentRule: the only-worker-component rule decides only what
// nothing else does, and only when there is one worker component.
func TestOnlyWorkerComponentRule(t *testing.T) {
	shape := func(file string) upShape {
		for _, sh := range upSingleShapes() {
			if sh.file == file {
				return sh
			}
		}
		t.Fatalf("no shape %s", file)
		return upShape{}
	}
	roleOf := func(sh upShape) (model.Role, string) {
		var objs []map[string]any
		for _, o := range sh.objects() {
			if o["kind"] != "DynamoWorkerMetadata" {
				objs = append(objs, o)
			}
		}
		items := make([]any, len(objs))
		for i, o := range objs {
			items[i] = o
		}
		data, err := yaml.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
		if err != nil {
			t.Fatal(err)
		}
		b, err := capture.Parse(data, "x.yaml")
		if err != nil {
			t.Fatal(err)
		}
		s, err := build.Build(b)
		if err != nil {
			t.Fatal(err)
		}
		w := s.Deployments[0].Workers[0]
		return w.Role, w.RoleSignal
	}
	// An explicit decode flag on the only worker component stays decode: that is a
	// decode worker without prefill (DisaggNotActive), not an aggregated one.
	sh := shape("vllm-agg-v1alpha1.yaml")
	sh.comps = []upComp{sh.comps[0]}
	sh.comps[0].args = append(append([]string{}, sh.comps[0].args...), "--disaggregation-mode", "decode")
	if r, sig := roleOf(sh); r != model.RoleDecode || sig != "arg --disaggregation-mode" {
		t.Errorf("explicit decode flag: %s (%s)", r, sig)
	}
	// Two worker components with no role flag: undecided, as before.
	sh = shape("vllm-disagg-router-v1alpha1.yaml")
	for i := range sh.comps {
		sh.comps[i].args = []string{"--model", "Qwen/Qwen3-0.6B"}
		sh.comps[i].name = fmt.Sprintf("Pool%d", i)
	}
	if r, sig := roleOf(sh); r != model.RoleAggregated || sig != model.SignalFallbackAggregated {
		t.Errorf("two unflagged components: %s (%s)", r, sig)
	}
	// Two components named after decode and prefill, no flags: the names decide.
	sh = shape("vllm-disagg-router-v1alpha1.yaml")
	for i := range sh.comps {
		sh.comps[i].args = []string{"--model", "Qwen/Qwen3-0.6B"}
	}
	if r, sig := roleOf(sh); r != model.RoleDecode || sig != "component name" {
		t.Errorf("decode/prefill names: %s (%s)", r, sig)
	}
}
