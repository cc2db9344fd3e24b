package explain

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/analysis"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/build"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/capture"
)

// TestTopologyAndExplainAgreeOnRouterMode runs topology's analysis and
// explain-route on the same captures (every example, the build test
// captures, and every capture once more with the frontend's --router-mode
// removed, as in upstream's vllm disagg example) and checks that they name the
// same router mode, that explain runs the KV cost model exactly when topology
// says kv, and that RouterNotKV fires exactly when explain reports a transfer
// constraint its decode pick ignores.
// routerModeArg is "--router-mode kv" as two YAML list items.
var routerModeArg = regexp.MustCompile(`(?m)^\s*- --router-mode\n\s*- kv\n`)

func TestTopologyAndExplainAgreeOnRouterMode(t *testing.T) {
	files, _ := filepath.Glob("../../examples/*.yaml")
	more, _ := filepath.Glob("../../test/fixtures/captures/*.yaml")
	files = append(files, more...)
	if len(files) < 6 {
		t.Fatalf("captures: %v", files)
	}
	toks := exampleTokens(t)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		stripped := bytes.ReplaceAll(data, []byte(" --router-mode kv"), nil)
		stripped = routerModeArg.ReplaceAll(stripped, nil)
		if bytes.Contains(stripped, []byte("- --router-mode\n")) || bytes.Contains(stripped, []byte("--router-mode kv")) {
			t.Fatalf("%s: --router-mode left after stripping", f)
		}
		variants := map[string][]byte{"as captured": data, "without --router-mode": stripped}
		for name, data := range variants {
			t.Run(filepath.Base(f)+"/"+name, func(t *testing.T) {
				b, err := capture.Read(bytes.NewReader(data), filepath.Base(f))
				if err != nil {
					t.Fatal(err)
				}
				s, err := build.Build(b)
				if err != nil {
					t.Fatal(err)
				}
				rep := analysis.AnalyzeTopology(s, analysis.AnalyzeOptions{})
				for i := range s.Deployments {
					dep := &s.Deployments[i]
					x, err := Explain(Input{Snapshot: s, Deployment: dep, Request: Request{Tokens: toks, Tokenizer: "test"}})
					if err != nil {
						t.Fatal(err)
					}
					var topoMode string
					for _, dr := range rep.Deployments {
						if dr.Name == dep.Name && dr.Namespace == dep.Namespace {
							topoMode = dr.RouterMode
						}
					}
					notKV := false
					for _, fd := range rep.Findings {
						if fd.ID == analysis.FindingRouterNotKV && fd.Deployment == dep.Name {
							notKV = true
						}
					}
					if topoMode == "" {
						if x.Router.Mode != routecore.RouterModeKV {
							t.Errorf("%s: topology knows no mode, explain says %q", dep.Key(), x.Router.Mode)
						}
						continue
					}
					want, err := routecore.ParseRouterMode(topoMode)
					if err != nil {
						t.Fatalf("%s: topology mode %q: %v", dep.Key(), topoMode, err)
					}
					if name != "as captured" && want != routecore.DefaultRouterMode {
						t.Errorf("%s: without --router-mode topology says %s, want the default %s", dep.Key(), want, routecore.DefaultRouterMode)
					}
					if x.Router.Mode != want {
						t.Errorf("%s: topology says Router: %s, explain-route says %s", dep.Key(), topoMode, x.Router.Mode)
					}
					kvRan := false
					for _, st := range []*Stage{x.Prefill, x.Decode} {
						if st != nil && st.ModeExplanation == "" && st.Rule != "" {
							kvRan = true
						}
					}
					if kvRan != want.IsKV() {
						t.Errorf("%s: mode %s but the KV cost model ran = %v", dep.Key(), want, kvRan)
					}
					ignored := x.Transfer != nil && x.Transfer.Ignored
					if notKV != (!want.IsKV() && dep.Policy != nil) {
						t.Errorf("%s: RouterNotKV = %v for mode %s, policy %v", dep.Key(), notKV, want, dep.Policy != nil)
					}
					if ignored && !notKV {
						t.Errorf("%s: explain ignores a transfer constraint but topology does not warn RouterNotKV", dep.Key())
					}
				}
			})
		}
	}
}
