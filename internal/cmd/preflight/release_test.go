package preflight_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestPreflightWorkerRouterArgsByRelease: workers that pass --router-mode kv
// behind a frontend with no mode govern the decode hop from Dynamo 1.4
// (parse_worker_router_config, #13192/#13197), so RouterNotKV is raised on
// 1.3 only; the release comes from the manifest's images, and
// --dynamo-version overrides it.
func TestPreflightWorkerRouterArgsByRelease(t *testing.T) {
	data, err := os.ReadFile("../../../" + capacity)
	if err != nil {
		t.Fatal(err)
	}
	base := strings.Replace(string(data), "args: [--router-mode, kv]", "args: []", 1)
	base = strings.ReplaceAll(base, "args: [--model, Qwen/Qwen3-32B, --disaggregation-mode,", "args: [--router-mode, kv, --model, Qwen/Qwen3-32B, --disaggregation-mode,")
	if strings.Contains(base, "args: [--router-mode, kv]") || strings.Count(base, "--router-mode, kv, --model") != 5 {
		t.Fatal("the example manifest changed: update this test's edits")
	}
	type report struct {
		Deployments []struct {
			Dynamo struct {
				Version string `json:"version"`
				Via     string `json:"via"`
			} `json:"dynamo"`
		} `json:"deployments"`
		Findings []struct {
			ID string `json:"id"`
		} `json:"findings"`
	}
	for _, tc := range []struct {
		name, tag, override, version string
		routerNotKV                  bool
	}{
		{name: "1.3 images", tag: "1.3.0", version: "1.3.0", routerNotKV: true},
		{name: "1.4 images", tag: "1.4.0", version: "1.4.0", routerNotKV: false},
		{name: "1.4 images read at 1.3", tag: "1.4.0", override: "1.3.0", version: "1.3.0", routerNotKV: true},
		{name: "1.3 images read at 1.4", tag: "1.3.0", override: "1.4.0", version: "1.4.0", routerNotKV: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			manifest := strings.ReplaceAll(base, "vllm-runtime:1.3.0", "vllm-runtime:"+tc.tag)
			args := []string{"preflight", "-f", "-", "--no-cluster", "-o", "json", "--exit-zero"}
			if tc.override != "" {
				args = append(args, "--dynamo-version", tc.override)
			}
			r := runIn(t, manifest, args...)
			var rep report
			if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil || len(rep.Deployments) != 1 {
				t.Fatalf("%v\n%s%s", err, r.Stdout, r.Stderr)
			}
			if got := rep.Deployments[0].Dynamo.Version; got != tc.version {
				t.Errorf("release %q, want %q", got, tc.version)
			}
			has := false
			for _, f := range rep.Findings {
				has = has || f.ID == "RouterNotKV"
			}
			if has != tc.routerNotKV {
				t.Errorf("RouterNotKV %v, want %v: %s", has, tc.routerNotKV, r.Stdout)
			}
		})
	}
}
