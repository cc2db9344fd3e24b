package e2e

import (
	"context"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/fakefrontend"
	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/kubeenv"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/capture"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/redact"
)

// secretsNS is the namespace of the planted deployment.
const secretsNS = "safety-secrets"

// TestSafetySecretsNeverReachOutput plants known secret values everywhere one
// can appear — a Secret and a secretKeyRef, literal env (HF_TOKEN, API keys, a
// bearer header under an innocent name, URLs with a password), args (--api-key=,
// shell assignments), the last-applied annotation, etcd values, the frontend's
// metrics, the etcd password (flag and environment), URLs with userinfo in
// --etcd-endpoints and --frontend-url, the kubeconfig's bearer token and client
// key, an invalid --token — then runs every command that reads them in every
// output format, offline replay included, and asserts that no planted value
// reaches stdout, stderr or a capture file.
func TestSafetySecretsNeverReachOutput(t *testing.T) {
	e := kubeenv.Require(t, env)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	planted := map[string]string{
		"secret-object":      "kdyn-planted-secret-object-7Qx",
		"hf-token-env":       "hf_PlantedHuggingFaceToken0123456789abcd",
		"bearer-in-env":      "kdyn-planted-bearer-in-env-5Rt",
		"api-key-env":        "kdyn-planted-api-key-env-9Lm",
		"password-env":       "kdyn-planted-password-env-1Qa",
		"api-key-flag":       "kdyn-planted-flag-apikey-2Ws",
		"token-flag-split":   "kdyn-planted-token-flag-split-6Ge",
		"shell-assign":       "kdyn-planted-shell-assign-8Pq",
		"nats-url-password":  "kdyn-planted-nats-pass-4Hj",
		"last-applied":       "kdyn-planted-last-applied-6Tg",
		"etcd-value-url":     "kdyn-planted-etcd-value-pass-1Zx",
		"etcd-value-hf":      "hf_PlantedInEtcdValue0123456789abcdefgh",
		"metrics-bearer":     "kdyn-planted-metrics-bearer-2Ff",
		"etcd-password-flag": "kdyn-planted-etcd-password-3Vb",
		"etcd-password-env":  "kdyn-planted-env-etcd-password-8Ju",
		"etcd-url-password":  "kdyn-planted-etcd-url-pass-0Kc",
		"frontend-url-pass":  "kdyn-planted-frontend-url-pass-5Nd",
		"invalid-bearer":     "kdyn-planted-invalid-bearer-7Yh",
		// Misses of the hostile-cluster review (issue 16), through a live capture.
		"db-pass-env":        "kdyn-planted-db-pass-env-3Kd",
		"cookie-env":         "kdyn-planted-cookie-env-8Mv",
		"openai-key-flag":    "kdyn-planted-openai-key-flag-4Xc",
		"pass-flag":          "kdyn-planted-pass-flag-9Bn",
		"annotation-json":    "kdyn-planted-annotation-json-2Lp",
		"etcd-json-password": "kdyn-planted-etcd-json-pass-5Tr",
		"etcd-json-number":   "918273645546372",
		"etcd-key-file":      "a2R5bi1wbGFudGVkLWV0Y2Qta2V5LWZpbGUtNFJy",
		"kubeconfig-bearer":  e.AdminToken,
	}

	// The example deployment in its own namespace, with the plants.
	loadPlanted(t, e, planted)

	// A discovery etcd with planted values.
	discovery := kubeenv.StartEtcd(t)
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{discovery.Endpoint}, DialTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	_, err = cli.Put(ctx, "v1/instances/"+secretsNS+"/backend/generate/694d9a1b2c3d4e5f",
		`{"component":"backend","endpoint":"generate","namespace":"`+secretsNS+`","instance_id":7587890123456789,`+
			`"transport":{"nats_tcp":"nats://dynamo:`+planted["etcd-value-url"]+`@nats:4222"},"hf_token":"`+planted["etcd-value-hf"]+`",`+
			`"auth":{"password":"`+planted["etcd-json-password"]+`"},"nats_password":`+planted["etcd-json-number"]+`}`)
	_ = cli.Close()
	if err != nil {
		t.Fatal(err)
	}

	// A frontend whose metrics carry a bearer token in a HELP line.
	fe := fakefrontend.New(fakefrontend.Config{
		Metrics: "# HELP dynamo_debug_header Authorization: Bearer " + planted["metrics-bearer"] + "\n# TYPE dynamo_debug_header gauge\ndynamo_debug_header 1\n",
	})
	defer fe.Close()
	feURL := strings.Replace(fe.URL, "http://", "http://dynamo:"+planted["frontend-url-pass"]+"@", 1)
	etcdURL := strings.Replace(discovery.Endpoint, "http://", "http://root:"+planted["etcd-url-password"]+"@", 1)

	kc := docsReaderKubeconfig(t, e, "safety-secrets")
	// The client key of that kubeconfig: none of its PEM lines may appear.
	keyLines := clientKeyLines(t, kc)
	// A kubeconfig that authenticates with a (real) bearer token.
	tokenKC := bearerKubeconfig(t, e, planted["kubeconfig-bearer"])

	live := []string{"--frontend-url", feURL, "--etcd-endpoints", etcdURL, "--etcd-password", planted["etcd-password-flag"], "--etcd-username", "root", "--etcd-dial-timeout", "2s"}
	envPass := []string{"KDYN_ETCD_PASSWORD=" + planted["etcd-password-env"], "KDYN_ETCD_USERNAME=root"}
	// An etcd client key file (PEM-shaped, planted body) and certificate: the
	// load error must name the files, never their content.
	keyDir := t.TempDir()
	keyFile, certFile := filepath.Join(keyDir, "etcd.key"), filepath.Join(keyDir, "etcd.crt")
	pemBody := "-----BEGIN PRIVATE KEY-----\n" + planted["etcd-key-file"] + "\n-----END PRIVATE KEY-----\n"
	if err := os.WriteFile(keyFile, []byte(pemBody), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(certFile, []byte(strings.ReplaceAll(pemBody, "PRIVATE KEY", "CERTIFICATE")), 0o600); err != nil {
		t.Fatal(err)
	}
	capDir := t.TempDir()
	var capFiles []string
	type run struct {
		kc   string
		env  []string
		args []string
	}
	var runs []run
	for _, o := range []string{"table", "wide", "json", "yaml"} {
		runs = append(runs,
			run{kc, nil, append([]string{"topology", "-n", secretsNS, "-o", o}, live...)},
			run{kc, nil, append([]string{"explain-route", "qwen3-32b", "-n", secretsNS, "--tokens", "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17", "-o", o}, live...)},
		)
	}
	runs = append(runs,
		run{kc, nil, append([]string{"capture", "-n", secretsNS}, live...)},
		run{kc, nil, append([]string{"capture", "-n", secretsNS, "-o", "json"}, live...)},
		run{kc, envPass, []string{"topology", "-n", secretsNS, "-o", "json", "--etcd-endpoints", etcdURL, "--frontend-url", feURL}},
		run{kc, envPass, []string{"capture", "-n", secretsNS, "--etcd-endpoints", etcdURL, "--no-frontend"}},
		run{tokenKC, nil, append([]string{"topology", "-n", secretsNS, "-o", "yaml"}, live...)},
		run{tokenKC, nil, append([]string{"capture", "-n", secretsNS}, live...)},
		// An invalid bearer token (401): in the kubeconfig, and as --token.
		run{bearerKubeconfig(t, e, planted["invalid-bearer"]), nil, []string{"topology", "-n", secretsNS}},
		run{tokenKC, nil, []string{"capture", "-n", secretsNS, "--token", planted["invalid-bearer"]}},
		// etcd read for real (no credentials: the test etcd has no auth), so
		// that the planted etcd values reach the capture.
		run{kc, nil, []string{"capture", "-n", secretsNS, "--etcd-endpoints", discovery.Endpoint, "--frontend-url", feURL}},
		run{kc, nil, []string{"topology", "-n", secretsNS, "--etcd-endpoints", discovery.Endpoint, "-o", "yaml", "--frontend-url", feURL}},
		run{kc, nil, []string{"topology", "-n", secretsNS, "--no-frontend", "--etcd-endpoints", "https://127.0.0.1:1", "--etcd-cert", certFile, "--etcd-key", keyFile}},
		run{kc, nil, []string{"capture", "-n", secretsNS, "--no-frontend", "--etcd-endpoints", "https://127.0.0.1:1", "--etcd-cert", certFile, "--etcd-key", keyFile}},
		// There are no klog verbosity flags: -v is refused, and the refusal
		// must not echo the other arguments' secrets either.
		run{kc, nil, append([]string{"topology", "-n", secretsNS, "-v=10"}, live...)},
		run{kc, nil, append([]string{"capture", "-n", secretsNS, "--v=10"}, live...)},
	)
	outputs := 0
	check := func(what, text string) {
		t.Helper()
		outputs++
		for name, v := range planted {
			if strings.Contains(text, v) {
				t.Errorf("%s leaks the planted %s (%q)", what, name, v)
			}
		}
		for _, l := range keyLines {
			if strings.Contains(text, l) {
				t.Errorf("%s leaks a line of the kubeconfig's client key", what)
			}
		}
	}
	sawRedacted := false
	for _, r := range runs {
		res := runPlugin(t, r.kc, r.env, 0, r.args...)
		what := "kubectl dynamo " + strings.Join(r.args[:2], " ")
		check(what+" stdout", res.stdout)
		check(what+" stderr", res.stderr)
		if r.args[0] == "capture" && res.code == 0 {
			sawRedacted = sawRedacted || strings.Contains(res.stdout, redact.Redacted)
			capFiles = append(capFiles, filepath.Join(capDir, fmt.Sprintf("capture-%d.yaml", len(capFiles))))
			if err := os.WriteFile(capFiles[len(capFiles)-1], []byte(res.stdout), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("%s: exit %d; stderr %q", strings.Join(r.args[:2], " "), res.code, strings.TrimSpace(res.stderr))
		if len(r.args) > 4 && r.args[3] == "-o" && r.args[4] == "json" {
			t.Logf("  notes: %s", notesOf(res.stdout))
		}
	}
	if !sawRedacted {
		t.Error("no capture contained REDACTED: the plants did not reach the captures, so the test proves nothing")
	}
	// Every capture file replayed offline, in every format.
	var all strings.Builder
	for _, f := range capFiles {
		for _, o := range []string{"table", "wide", "json", "yaml"} {
			res := runPlugin(t, kc, nil, 0, "topology", "--from-file", f, "-o", o)
			check("topology --from-file -o "+o+" stdout", res.stdout)
			check("topology --from-file -o "+o+" stderr", res.stderr)
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		check("capture file "+filepath.Base(f), string(data))
		all.Write(data)
	}
	data := []byte(all.String())
	// The plants are really there: the Secret-backed env reference, the literal
	// env names and the etcd key made it into the capture (values redacted).
	for _, want := range []string{"secretKeyRef", "HUGGING_FACE_HUB_TOKEN", "NATS_SERVER", "v1/instances/" + secretsNS} {
		if !strings.Contains(string(data), want) {
			t.Errorf("the capture lacks %q: the plant did not reach it", want)
		}
	}
	t.Logf("SAFETY-FIGURE secrets-planted=%d (+%d client-key lines) runs=%d outputs-checked=%d leaks=0 unless reported above",
		len(planted), len(keyLines), len(runs)+4*len(capFiles), outputs)
}

// loadPlanted loads the prefill-only example into secretsNS with the plants.
func loadPlanted(t *testing.T, e *kubeenv.Env, planted map[string]string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	data, err := os.ReadFile("../../examples/" + exampleQwen)
	if err != nil {
		t.Fatal(err)
	}
	b, err := capture.ParseWhole(data, exampleQwen)
	if err != nil {
		t.Fatal(err)
	}
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": secretsNS}}}
	secret := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata":   map[string]any{"name": "hf-token", "namespace": secretsNS},
		"stringData": map[string]any{"token": planted["secret-object"]}}}
	objs := []*unstructured.Unstructured{ns, secret}
	planted0 := false
	for _, m := range b.AsRead {
		u := &unstructured.Unstructured{Object: m}
		if u.GetNamespace() == "" {
			continue // nodes: already loaded by other tests or harmless
		}
		u = u.DeepCopy()
		for _, f := range []string{"uid", "resourceVersion", "creationTimestamp", "generation"} {
			unstructured.RemoveNestedField(u.Object, "metadata", f)
		}
		u.SetNamespace(secretsNS)
		switch u.GetKind() {
		case "Service":
			unstructured.RemoveNestedField(u.Object, "spec", "clusterIP")
			unstructured.RemoveNestedField(u.Object, "spec", "clusterIPs")
		case "DynamoGraphDeployment":
			u.SetAnnotations(map[string]string{"kubectl.kubernetes.io/last-applied-configuration": `{"spec":{"token":"` + planted["last-applied"] + `"}}`,
				"kapp.k14s.io/original": `{"spec":{"auth":{"password":"` + planted["annotation-json"] + `"}}}`})
		case "Pod":
			if planted0 {
				break
			}
			planted0 = true
			containers, _, _ := unstructured.NestedSlice(u.Object, "spec", "containers")
			c := containers[0].(map[string]any)
			env, _ := c["env"].([]any)
			env = append(env,
				map[string]any{"name": "HUGGING_FACE_HUB_TOKEN", "value": planted["hf-token-env"]},
				map[string]any{"name": "EXTRA_HEADERS", "value": "Authorization: Bearer " + planted["bearer-in-env"]},
				map[string]any{"name": "OPENAI_API_KEY", "value": planted["api-key-env"]},
				map[string]any{"name": "DB_PASSWORD", "value": planted["password-env"]},
				map[string]any{"name": "DB_PASS", "value": planted["db-pass-env"]},
				map[string]any{"name": "SESSION_COOKIE", "value": planted["cookie-env"]},
				map[string]any{"name": "NATS_SERVER", "value": "nats://dynamo:" + planted["nats-url-password"] + "@nats:4222"},
				map[string]any{"name": "HF_TOKEN_FROM_SECRET", "valueFrom": map[string]any{"secretKeyRef": map[string]any{"name": "hf-token", "key": "token"}}},
			)
			c["env"] = env
			args, _ := c["args"].([]any)
			c["args"] = append(args, "--api-key="+planted["api-key-flag"], "--auth-token", planted["token-flag-split"],
				"--openai-key", planted["openai-key-flag"], "--pass", planted["pass-flag"])
			c["command"] = []any{"sh", "-c", "OPENAI_API_KEY=" + planted["shell-assign"] + " exec python3 -m dynamo.vllm"}
			containers[0] = c
			if err := unstructured.SetNestedSlice(u.Object, containers, "spec", "containers"); err != nil {
				t.Fatal(err)
			}
		}
		objs = append(objs, u)
	}
	if _, err := e.Apply(ctx, objs...); err != nil {
		t.Fatal(err)
	}
}

// clientKeyLines returns the base64 lines of the kubeconfig's client key.
func clientKeyLines(t *testing.T, kubeconfig string) []string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, a := range cfg.AuthInfos {
		blk, _ := pem.Decode(a.ClientKeyData)
		if blk == nil {
			continue
		}
		for _, l := range strings.Split(string(pem.EncodeToMemory(blk)), "\n") {
			if len(l) >= 32 && !strings.HasPrefix(l, "-----") {
				lines = append(lines, l)
			}
		}
	}
	if len(lines) == 0 {
		t.Fatal("the kubeconfig has no client key")
	}
	return lines
}

// bearerKubeconfig writes a kubeconfig that authenticates with token.
func bearerKubeconfig(t *testing.T, e *kubeenv.Env, token string) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(e.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for name := range cfg.AuthInfos {
		cfg.AuthInfos[name].ClientCertificateData = nil
		cfg.AuthInfos[name].ClientKeyData = nil
		cfg.AuthInfos[name].Token = token
	}
	path := filepath.Join(t.TempDir(), "token.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(fmt.Errorf("write %s: %w", path, err))
	}
	return path
}
