package redact

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/capture"
)

// plantedSecrets are secret values planted in every place one can appear; none
// may reach a redacted capture. Each is unique so a leak names its place.
var plantedSecrets = map[string]string{
	"env HF_TOKEN":                 "hf_PLANTEDenvhftokenAAAAAAAAAAAA",
	"env secret-like name":         "planted-db-password-0001",
	"env API_KEY":                  "planted-api-key-0002",
	"env from secretKeyRef":        "planted-secretkeyref-value-0003",
	"arg --token=":                 "planted-token-eq-0004",
	"arg --api-key next":           "planted-api-key-next-0005",
	"sh -c export":                 "planted-shell-export-0006",
	"sh -c --password":             "planted-shell-password-0007",
	"Authorization header in args": "planted-bearer-0008",
	"last-applied annotation":      "planted-last-applied-0009",
	"managedFields":                "planted-managed-fields-0010",
	"Secret object data":           "cGxhbnRlZC1zZWNyZXQtZGF0YS0wMDEx",
	"Secret stringData":            "planted-secret-stringdata-0012",
	"etcd value bearer":            "planted-etcd-bearer-0013",
	"etcd password literal":        "planted-etcd-password-0014",
	"URL userinfo":                 "planted-url-password-0015",
	"note URL userinfo":            "planted-note-password-0016",
	"JWT in annotation":            "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW06c2EifQ.c2lnbmF0dXJlUExBTlRFRA",
	"DGD v1beta1 env":              "planted-dgd-beta-env-0017",
	"DGD v1alpha1 envs":            "planted-dgd-alpha-env-0018",
	"DGD mainContainer arg":        "planted-dgd-alpha-arg-0019",
	"secret-named annotation":      "planted-annotation-token-0020",
	"metrics bearer":               "planted-metrics-bearer-0021",
	"kubeconfig token literal":     "planted-kubeconfig-token-0022",
	"field password":               "planted-field-password-0023",
	"separate --password arg":      "planted-separate-password-0024",
}

func plantedBundle(t *testing.T) *raw.Bundle {
	t.Helper()
	s := plantedSecrets
	pod := mustYAML(t, `
apiVersion: v1
kind: Pod
metadata:
  name: llama-decode-0
  namespace: inf
  labels: {nvidia.com/dynamo-graph-deployment-name: llama}
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: '{"env":"`+s["last-applied annotation"]+`"}'
    example.com/sa-token: `+s["JWT in annotation"]+`
    example.com/auth-token: `+s["secret-named annotation"]+`
    nvidia.com/topology-label-key: topology.kubernetes.io/zone
  managedFields:
  - manager: kubectl
    fieldsV1: {"f:metadata": {"f:x": "`+s["managedFields"]+`"}}
spec:
  nodeName: gpu-1
  containers:
  - name: main
    command: ["sh", "-c", "export HF_TOKEN=`+s["sh -c export"]+` && python3 -m dynamo.vllm --password `+s["sh -c --password"]+` --max-num-batched-tokens 8192"]
    args:
    - --token=`+s["arg --token="]+`
    - --api-key
    - `+s["arg --api-key next"]+`
    - --header
    - "Authorization: Bearer `+s["Authorization header in args"]+`"
    - --max-num-batched-tokens
    - "8192"
    - --password
    - `+s["separate --password arg"]+`
    env:
    - {name: HF_TOKEN, value: `+s["env HF_TOKEN"]+`}
    - {name: DB_PASSWORD, value: `+s["env secret-like name"]+`}
    - {name: NGC_API_KEY, value: `+s["env API_KEY"]+`}
    - name: FROM_SECRET
      value: `+s["env from secretKeyRef"]+`
      valueFrom: {secretKeyRef: {name: hf-secret, key: token}}
    - {name: ETCD_ENDPOINTS, value: "http://root:`+s["URL userinfo"]+`@etcd:2379"}
    - {name: DYN_KV_TRANSFER_DOMAIN, value: zone}
    - {name: DYN_ROUTER_MODE, value: kv}
    - {name: TOKENIZER_PATH, value: /models/tok}
    - {name: HF_TOKEN_SECRET_NAME, value: hf-secret}
    envFrom:
    - secretRef: {name: all-the-secrets}
  volumes:
  - name: token
    projected:
      sources:
      - serviceAccountToken: {path: token, expirationSeconds: 3600}
  - name: creds
    secret: {secretName: creds-secret}
`)
	secret := mustYAML(t, `
apiVersion: v1
kind: Secret
metadata: {name: hf-secret, namespace: inf}
data: {token: `+s["Secret object data"]+`}
stringData: {token: `+s["Secret stringData"]+`}
`)
	dgdBeta := mustYAML(t, `
apiVersion: nvidia.com/v1beta1
kind: DynamoGraphDeployment
metadata: {name: llama, namespace: inf}
spec:
  experimental:
    kvTransferPolicy: {labelKey: topology.kubernetes.io/zone, domain: zone, enforcement: required}
  components:
  - name: Decode
    type: decode
    podTemplate:
      spec:
        containers:
        - name: main
          env:
          - {name: OPENAI_API_KEY, value: `+s["DGD v1beta1 env"]+`}
          - {name: DYN_ROUTER_MODE, value: kv}
`)
	dgdAlpha := mustYAML(t, `
apiVersion: nvidia.com/v1alpha1
kind: DynamoGraphDeployment
metadata: {name: old, namespace: inf}
spec:
  services:
    Worker:
      envs:
      - {name: HUGGING_FACE_HUB_TOKEN, value: `+s["DGD v1alpha1 envs"]+`}
      extraPodSpec:
        mainContainer:
          args: ["--model", "x", "--hf-token=`+s["DGD mainContainer arg"]+`"]
      auth: {password: `+s["field password"]+`}
`)
	topo := mustYAML(t, `
apiVersion: grove.io/v1alpha1
kind: ClusterTopologyBinding
metadata: {name: fabric}
spec:
  levels:
  - {domain: zone, key: topology.kubernetes.io/zone}
`)
	return &raw.Bundle{
		Context:     "prod",
		CollectedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		AsRead:      []raw.Object{dgdBeta.Object, dgdAlpha.Object, topo.Object, pod.Object, secret.Object},
		Etcd: []raw.EtcdKeyValue{
			{Key: "v1/instances/ns/c/e/694d98147d54be25", Value: `{"type":"Endpoint","instance_id":7587885012467105317,"transport":{"http":"http://x"},"headers":"Authorization: Bearer ` + s["etcd value bearer"] + `","note":"` + s["etcd password literal"] + `"}`},
		},
		Metrics: []raw.FrontendMetrics{{Namespace: "inf", Deployment: "llama", Text: "# HELP x\nx 1\n# Bearer " + s["metrics bearer"] + "\n", Source: "service inf/llama-frontend:http"}},
		Notes: []model.Note{{Severity: model.NoteWarning, Source: model.SourceEtcd,
			Message: "etcd at https://user:" + s["note URL userinfo"] + "@etcd:2379 is unreachable; token " + s["kubeconfig token literal"]}},
		Sources: []model.SourceStatus{{Kind: model.SourceEtcd, Detail: "https://user:" + s["note URL userinfo"] + "@etcd:2379"}},
	}
}

func mustYAML(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(y), &u.Object); err != nil {
		t.Fatalf("fixture: %v\n%s", err, y)
	}
	return u
}

func TestRedactPlantedSecrets(t *testing.T) {
	b := plantedBundle(t)
	red := Redact(b, Options{Secrets: []string{plantedSecrets["etcd password literal"], plantedSecrets["kubeconfig token literal"]}})
	var out bytes.Buffer
	if err := capture.Write(&out, red); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for where, secret := range plantedSecrets {
		if strings.Contains(text, secret) {
			t.Errorf("secret planted in %s leaked into the capture", where)
		}
	}
	// Useful non-secret content is kept.
	for _, keep := range []string{
		"nvidia.com/topology-label-key: topology.kubernetes.io/zone",
		"labelKey: topology.kubernetes.io/zone",
		"key: topology.kubernetes.io/zone",
		"value: zone", "DYN_ROUTER_MODE", "--max-num-batched-tokens", "\"8192\"", "8192\"",
		"value: /models/tok", "value: hf-secret", "secretKeyRef", "name: all-the-secrets", "secretName: creds-secret",
		"serviceAccountToken", "7587885012467105317", "http://root:REDACTED@etcd:2379", "--model",
	} {
		if !strings.Contains(text, keep) {
			t.Errorf("redaction removed %q", keep)
		}
	}
	if strings.Contains(text, "kind: Secret") {
		t.Error("a Secret object was captured")
	}
	if strings.Contains(text, "last-applied-configuration") || strings.Contains(text, "managedFields") {
		t.Error("last-applied-configuration or managedFields kept")
	}
	if n := strings.Count(text, Redacted); n < len(plantedSecrets)-4 {
		t.Errorf("only %d REDACTED markers", n)
	}
	// The input is unchanged.
	if !strings.Contains(b.Etcd[0].Value, plantedSecrets["etcd value bearer"]) || len(b.AsRead) != 5 {
		t.Error("Redact changed its input")
	}
	// Round trip: the redacted capture is still a readable capture.
	back, err := capture.ParseWhole([]byte(text), "x")
	if err != nil {
		t.Fatalf("redacted capture does not read back: %v", err)
	}
	if len(back.AsRead) != 4 || len(back.Etcd) != 1 {
		t.Errorf("read back %d objects, %d etcd entries", len(back.AsRead), len(back.Etcd))
	}
	// The redacted bundle's typed objects are its whole objects'.
	if !reflect.DeepEqual(red.Objects, back.Objects) || len(red.Objects.DGDs) != 2 || len(red.Objects.Pods) != 1 {
		t.Errorf("redacted typed objects %+v, read back %+v", red.Objects, back.Objects)
	}
}

func TestSecretNames(t *testing.T) {
	for name, want := range map[string]bool{
		"HF_TOKEN": true, "HUGGING_FACE_HUB_TOKEN": true, "DB_PASSWORD": true, "AWS_SECRET_ACCESS_KEY": true,
		"NGC_API_KEY": true, "MY_CREDENTIALS": true, "apiKey": true, "TOKENIZER_PATH": false, "MAX_TOKENS": false,
		"DYN_KV_TRANSFER_DOMAIN": false, "HF_TOKEN_SECRET_NAME": false, "DYN_ROUTER_MODE": false, "token": true,
		"DYN_ACTIVE_PREFILL_TOKENS_THRESHOLD": false, "DB_PASS": true, "SESSION_COOKIE": true, "DATABASE_DSN": true,
		"BYPASS_CACHE": false,
	} {
		if got := secretWords(name); got != want {
			t.Errorf("secretWords(%q) = %v, want %v", name, got, want)
		}
	}
	for flag, want := range map[string]bool{
		"--token": true, "--hf-token": true, "--api-key": true, "--password": true, "--max-num-batched-tokens": false,
		"--router-track-prefill-tokens": false, "--tokenizer": false, "--label-key": false, "--etcd-key": false, "model": false,
		"--openai-key": true, "--pass": true, "--key": true, "--tls-key": false, "--kv-cache-key-prefix": false,
	} {
		if got := secretFlag(flag); got != want {
			t.Errorf("secretFlag(%q) = %v, want %v", flag, got, want)
		}
	}
	for field, want := range map[string]bool{"labelKey": false, "key": false, "password": true, "secretName": false, "accessKey": true, "eos_token_id": false,
		"tokens": true, "max_tokens": false, "active_prefill_tokens": false, "nats_password": true, "cookie": true, "dsn": true} {
		if got := secretField(field); got != want {
			t.Errorf("secretField(%q) = %v, want %v", field, got, want)
		}
	}
}

func TestRedactStrings(t *testing.T) {
	r := &redactor{}
	for in, want := range map[string]string{
		"curl -H 'Authorization: Bearer abc.def' http://x": "curl -H 'Authorization: Bearer REDACTED' http://x",
		"--token abc --model m":                            "--token REDACTED --model m",
		"--token --model m":                                "--token --model m",
		"HF_TOKEN=abc python":                              "HF_TOKEN=REDACTED python",
		"MODEL=abc python":                                 "MODEL=abc python",
		"https://u:p4ss@host/x":                            "https://u:REDACTED@host/x",
		"--max-num-batched-tokens=8192":                    "--max-num-batched-tokens=8192",
		"x-api-key: s3cr3t":                                "x-api-key: REDACTED",
	} {
		if got := r.str(in); got != want {
			t.Errorf("str(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestRedactEngineMisses is the planted-secrets corpus of every redaction miss
// found by the hostile-cluster review (issue 16), plus new ones: one engine
// for every source, by key name at any depth and whatever the value type,
// recursing into JSON held in strings.
func TestRedactEngineMisses(t *testing.T) {
	plants := map[string]string{
		"env DB_PASS":              "kdyn-miss-db-pass-1",
		"flag --openai-key":        "kdyn-miss-openai-key-2",
		"flag --pass":              "kdyn-miss-pass-flag-3",
		"JSON in an annotation":    "kdyn-miss-annotation-json-4",
		"number under a secret":    "987654321012",
		"list under tokens":        "kdyn-miss-token-list-5",
		"etcd JSON value":          "kdyn-miss-etcd-json-6",
		"etcd JSON number":         "876543210987",
		"env SESSION_COOKIE":       "kdyn-miss-cookie-7",
		"env DATABASE_DSN":         "kdyn-miss-dsn-8",
		"busy_threshold JSON body": "kdyn-miss-busy-body-9",
		"JSON in a DWM string":     "kdyn-miss-dwm-nested-10",
		"YAML in an env value":     "kdyn-miss-env-yaml-11",
		"YAML in an annotation":    "kdyn-miss-annotation-yaml-12",
		"YAML list in a DWM":       "kdyn-miss-dwm-yaml-13",
	}
	pod := mustYAML(t, `apiVersion: v1
kind: Pod
metadata:
  name: w-0
  namespace: ns
  labels: {nvidia.com/dynamo-graph-deployment-name: d}
  annotations:
    kapp.k14s.io/original: '{"spec":{"containers":[{"env":[{"name":"X","value":"y"}]}],"password":"`+plants["JSON in an annotation"]+`"}}'
    example.com/config: "server:\n  port: 8080\n  auth:\n    client_secret: `+plants["YAML in an annotation"]+`\n"
spec:
  volumes:
  - name: creds
    secret: {secretName: creds-secret}
  containers:
  - name: main
    command: [python3, -m, dynamo.vllm]
    args: [--model, Qwen/Qwen3-0.6B, --openai-key, `+plants["flag --openai-key"]+`, --pass, `+plants["flag --pass"]+`, --kv-cache-key-prefix, kvp]
    env:
    - {name: DB_PASS, value: `+plants["env DB_PASS"]+`}
    - {name: SESSION_COOKIE, value: `+plants["env SESSION_COOKIE"]+`}
    - {name: DATABASE_DSN, value: "`+plants["env DATABASE_DSN"]+`"}
    - {name: DYN_KV_TRANSFER_DOMAIN, value: zone}
    - name: ENGINE_CONFIG
      value: |
        model: Qwen/Qwen3-0.6B
        hub:
          hf_token: `+plants["YAML in an env value"]+`
        max_num_seqs: 256
`)
	dwm := mustYAML(t, `apiVersion: nvidia.com/v1alpha1
kind: DynamoWorkerMetadata
metadata: {name: w-0, namespace: ns}
spec:
  data:
    instance_id: 7587885012467105317
    transport: {nats_password: `+plants["number under a secret"]+`}
    tokens: [`+plants["list under tokens"]+`, other]
    max_num_batched_tokens: 8192
    extra: '{"inner":{"api_key":"`+plants["JSON in a DWM string"]+`"}}'
    notes: "- name: a\n  password: `+plants["YAML list in a DWM"]+`\n- name: b\n"
    prose: "this line: is text\nand so: is this one\n"
`)
	// Exact u64-range integers, as the capture reader keeps them (YAML above would round them).
	if err := unstructured.SetNestedField(dwm.Object, int64(7587885012467105317), "spec", "data", "instance_id"); err != nil {
		t.Fatal(err)
	}
	b := &raw.Bundle{
		AsRead: []raw.Object{pod.Object, dwm.Object},
		Etcd: []raw.EtcdKeyValue{{Key: "v1/mdc/ns/x", Value: `{"auth":{"user":"dynamo","password":"` + plants["etcd JSON value"] + `"},"api_key":` +
			plants["etcd JSON number"] + `,"instance_id":18446744073709551615}`}},
		BusyThresholds: []raw.FrontendBusyThresholds{{JSON: `{"model":"m","token":"` + plants["busy_threshold JSON body"] + `"}`}},
	}
	red := Redact(b, Options{})
	var out bytes.Buffer
	if err := capture.Write(&out, red); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	leaks := 0
	for where, secret := range plants {
		if strings.Contains(text, secret) {
			t.Errorf("the secret planted as %s leaked into the capture", where)
			leaks++
		}
	}
	// What the analysis needs stays, exactly.
	for _, keep := range []string{"secretName: creds-secret", "7587885012467105317", "18446744073709551615", "max_num_batched_tokens: 8192",
		"--kv-cache-key-prefix", "kvp", "DYN_KV_TRANSFER_DOMAIN", "value: zone", `"user":"dynamo"`, "Qwen/Qwen3-0.6B",
		"max_num_seqs: 256", "port: 8080", "this line: is text", "and so: is this one"} {
		if !strings.Contains(text, keep) {
			t.Errorf("redaction removed %q", keep)
		}
	}
	t.Logf("%d planted secrets, %d leaks", len(plants), leaks)
	if t.Failed() {
		t.Log(text)
	}
}
