package agreement

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/analysis"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/build"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/explain"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/preflight"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/simulate"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/simulate/trace"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/capture"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/tui"
)

const root = "../../"

// captures are every capture the project ships: the embedded examples, the
// upstream-shaped fixtures (before and after registration) and the shared
// test captures. Manifests (manifest-*.yaml, examples/preflight) are not
// captures; preflight reads them beside their capture.
func captures(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, pat := range []string{"examples/*.yaml", "test/fixtures/upstream/*.yaml", "test/fixtures/captures/*.yaml"} {
		m, err := filepath.Glob(root + pat)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range m {
			if !strings.HasPrefix(filepath.Base(p), "manifest-") {
				out = append(out, p)
			}
		}
	}
	if len(out) < 40 {
		t.Fatalf("only %d captures found", len(out))
	}
	return out
}

// scenario is one what-if applied to the model every command then reads.
type scenario struct {
	name string
	// version reads the deployment at this Dynamo release ("" detects it).
	version string
	// apply changes the deployment; false when the what-if does not apply.
	apply func(d *model.Deployment) bool
	// knobs is the same what-if as explain-route's flags, on the deployment
	// as captured (nil when it has none): the matrix must not differ.
	knobs func(d *model.Deployment) explain.Knobs
}

func modeKnob(m routecore.RouterMode) func(*model.Deployment) explain.Knobs {
	return func(*model.Deployment) explain.Knobs { return explain.Knobs{RouterMode: &m} }
}

func enforcementKnob(e explain.Enforcement) func(*model.Deployment) explain.Knobs {
	return func(d *model.Deployment) explain.Knobs {
		k := explain.Knobs{Enforcement: &e}
		if e == explain.EnforcementPreferred && d.Policy != nil && d.Policy.PreferredWeight == nil {
			w := 0.5
			k.PreferredWeight = &w
		}
		return k
	}
}

func setMode(m routecore.RouterMode) func(*model.Deployment) bool {
	return func(d *model.Deployment) bool {
		d.Router.Mode, d.Router.ModeSource = string(m), "what-if"
		return true
	}
}

// setEnforcement changes the DGD's policy and what every worker publishes, as
// a redeploy with that policy would (off: no policy, no transfer domain).
func setEnforcement(e explain.Enforcement) func(*model.Deployment) bool {
	return func(d *model.Deployment) bool {
		if d.Policy == nil {
			return false
		}
		if e == explain.EnforcementOff {
			d.Policy = nil
		} else {
			d.Policy.Enforcement, d.Policy.EnforcementDefaulted = routecore.KvTransferEnforcement(e), false
			if e == explain.EnforcementPreferred && d.Policy.PreferredWeight == nil {
				w := 0.5
				d.Policy.PreferredWeight = &w
			}
		}
		for i := range d.Workers {
			for j := range d.Workers[i].Instances {
				rc := &d.Workers[i].Instances[j].Runtime
				switch {
				case e == explain.EnforcementOff:
					rc.KvTransferDomain, rc.KvTransferEnforcement, rc.KvTransferPreferredWeight = "", routecore.EnforcementNone, nil
				case rc.KvTransferDomain != "":
					// The operator sets a weight only under preferred.
					rc.KvTransferEnforcement, rc.KvTransferPreferredWeight = routecore.KvTransferEnforcement(e), nil
					if e == explain.EnforcementPreferred {
						w := *d.Policy.PreferredWeight
						rc.KvTransferPreferredWeight = &w
					}
				}
			}
		}
		return true
	}
}

// prefillDown takes every prefill worker out of service (not ready).
func prefillDown(d *model.Deployment) bool {
	n := 0
	for i := range d.Workers {
		if d.Workers[i].Role == model.RolePrefill && d.Workers[i].Ready {
			d.Workers[i].Ready = false
			n++
		}
	}
	return n > 0
}

// decodeDown takes every decode and aggregated worker out of service.
func decodeDown(d *model.Deployment) bool {
	n := 0
	for i := range d.Workers {
		if r := d.Workers[i].Role; (r == model.RoleDecode || r == model.RoleAggregated) && d.Workers[i].Ready {
			d.Workers[i].Ready = false
			n++
		}
	}
	return n > 0
}

func scenarios() []scenario {
	asDeployed := func(*model.Deployment) bool { return true }
	return []scenario{
		{name: "as deployed", apply: asDeployed},
		{name: "router-mode=kv", apply: setMode(routecore.RouterModeKV), knobs: modeKnob(routecore.RouterModeKV)},
		{name: "router-mode=round-robin", apply: setMode(routecore.RouterModeRoundRobin), knobs: modeKnob(routecore.RouterModeRoundRobin)},
		{name: "router-mode=random", apply: setMode(routecore.RouterModeRandom), knobs: modeKnob(routecore.RouterModeRandom)},
		{name: "enforcement=required", apply: setEnforcement(explain.EnforcementRequired), knobs: enforcementKnob(explain.EnforcementRequired)},
		{name: "enforcement=preferred", apply: setEnforcement(explain.EnforcementPreferred), knobs: enforcementKnob(explain.EnforcementPreferred)},
		{name: "enforcement=off", apply: setEnforcement(explain.EnforcementOff), knobs: enforcementKnob(explain.EnforcementOff)},
		// The readiness rule's boundary: decode workers without prefill are
		// served aggregated before 1.3 and refused from 1.3 on.
		{name: "prefill down @1.2.0", version: "1.2.0", apply: prefillDown},
		{name: "prefill down @1.3.0", version: "1.3.0", apply: prefillDown},
		// Prefill without decode: before 1.3 the model is served and every
		// request fails at the decode hop (NoDecodeWorkers); from 1.3 the
		// prefill workers' needs keep it unready.
		{name: "decode down @1.2.0", version: "1.2.0", apply: decodeDown},
		{name: "decode down @1.3.0", version: "1.3.0", apply: decodeDown},
		{name: "as deployed @1.2.0", version: "1.2.0", apply: asDeployed},
		{name: "as deployed @1.4.0", version: "1.4.0", apply: asDeployed},
	}
}

// outcome is a prediction for the requests prefilled in one domain value (or
// for the whole deployment): every request fails, some may, none does.
type outcome string

const (
	fails   outcome = "fails"
	mayFail outcome = "may fail"
	none    outcome = "none fail"
)

// TestCommandsAgree is the invariant: on the same model, topology, explain-route
// and simulate predict the same per-domain outcome, the same readiness and the
// same registration; the dashboard's report is topology's; preflight reads the
// same hops as topology.
func TestCommandsAgree(t *testing.T) {
	tokens := make([]uint32, 64)
	for i := range tokens {
		tokens[i] = uint32(1000 + i)
	}
	checked := 0
	for _, path := range captures(t) {
		name := strings.TrimPrefix(path, root)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(name, func(t *testing.T) {
			bundle, err := capture.Parse(data, name)
			if err != nil {
				t.Fatal(err)
			}
			dash(t, bundle, name)
			base, err := build.Build(bundle)
			if err != nil {
				t.Fatal(err)
			}
			withManifest(t, path, base)
			for di := range base.Deployments {
				for _, sc := range scenarios() {
					snap, err := build.Build(bundle) // a fresh model per what-if
					if err != nil {
						t.Fatal(err)
					}
					dep := &snap.Deployments[di]
					if !sc.apply(dep) {
						continue
					}
					t.Run(dep.Key()+"/"+sc.name, func(t *testing.T) {
						x := agree(t, snap, di, sc.version, tokens)
						if sc.knobs == nil || x == nil {
							return
						}
						// explain-route's flag for the same what-if, on the
						// model as captured, reaches the same outcomes.
						k := sc.knobs(&base.Deployments[di])
						y, err := explain.Explain(explain.Input{Snapshot: base, Deployment: &base.Deployments[di], Request: explain.Request{Tokens: tokens},
							Options: explain.Options{AssumeIdle: true, Seed: 7, Knobs: k, WhatIf: explain.WhatIf{AllPrefill: true}}})
						if err != nil {
							t.Fatalf("explain-route with the what-if flag: %v", err)
						}
						if a, b := matrixOutcomes(x), matrixOutcomes(y); a != b || x.Verdict.Outcome != y.Verdict.Outcome {
							t.Errorf("explain-route on the changed model: %s (%s); with the what-if flag: %s (%s)", a, x.Verdict.Outcome, b, y.Verdict.Outcome)
						}
					})
					checked++
				}
			}
		})
	}
	if checked < 200 {
		t.Errorf("only %d deployment × what-if cases checked", checked)
	}
}

// matrixOutcomes is the all-prefill matrix as "pod:routable" lines.
func matrixOutcomes(x *explain.Explanation) string {
	var out []string
	for _, r := range x.Matrix {
		out = append(out, fmt.Sprintf("%s:%v", r.Prefill, r.Routable))
	}
	return strings.Join(out, " ")
}

// agree runs the three readers on one deployment of snap and compares them;
// it returns explain-route's explanation.
func agree(t *testing.T, snap *model.Snapshot, di int, version string, tokens []uint32) *explain.Explanation {
	t.Helper()
	dep := &snap.Deployments[di]
	rep := analysis.Analyze(snap, analysis.AnalyzeOptions{DynamoVersion: version})
	dr := &rep.Deployments[di]
	var fs []model.Finding
	for _, f := range rep.Findings {
		if f.Namespace == dep.Namespace && f.Deployment == dep.Name {
			fs = append(fs, f)
		}
	}

	x, err := explain.Explain(explain.Input{Snapshot: snap, Deployment: dep, Request: explain.Request{Tokens: tokens},
		Options: explain.Options{AssumeIdle: true, Seed: 7, DynamoVersion: version, WhatIf: explain.WhatIf{AllPrefill: true}}})
	if err != nil {
		t.Fatalf("explain-route: %v", err)
	}
	sim, err := simulate.Run(context.Background(), simulate.Options{Snapshot: snap, Deployment: dep,
		Base: explain.Options{AssumeIdle: true, Seed: 7, DynamoVersion: version}, Engine: simulate.DefaultEngine(),
		Open: func() (trace.Reader, error) { return trace.Synthetic("rate=40,isl=128-512,osl=4,requests=160", 3) }})
	if err != nil {
		t.Fatalf("simulate: %v", err)
	}
	sv := sim.Variants[0]

	// The release: one reading for all three.
	if a, b, c := dr.Dynamo.Short(), x.Dynamo.Short(), sim.Dynamo.Short(); a != b || b != c {
		t.Errorf("release: topology %q, explain-route %q, simulate %q", a, b, c)
	}

	// Readiness: the frontend serves the model or refuses every request.
	topoRefused := hasFinding(fs, analysis.FindingModelNotReady, model.SeverityError, "")
	explRefused := x.Verdict.Stage == explain.StageFrontend
	simRefused := sv.Failed == sv.Requests && sv.Requests > 0 && len(sv.Failures) > 0 && sv.Failures[0].Stage == explain.StageFrontend
	if topoRefused != explRefused || explRefused != simRefused {
		t.Fatalf("readiness: topology ModelNotReady %v, explain-route refused %v (%s: %s), simulate refused %v (%d of %d failed %+v)",
			topoRefused, explRefused, x.Verdict.Error, x.Verdict.Message, simRefused, sv.Failed, sv.Requests, sv.Failures)
	}

	// Registration: the workers the router does not know.
	var topoUnreg, explUnreg []string
	for _, w := range dr.Workers {
		if w.Unregistered {
			topoUnreg = append(topoUnreg, w.Leader)
		}
	}
	for _, e := range x.Excluded {
		// (a pod that is not ready is excluded for that first, in topology)
		unknown := strings.HasPrefix(e.Reason, "publishes no Dynamo instance") || strings.HasPrefix(e.Reason, "publishes a runtime config that Dynamo's validator rejects")
		if unknown && isLeader(dep, e.Worker) && isReady(dep, e.Worker) && !slices.Contains(explUnreg, e.Worker) {
			explUnreg = append(explUnreg, e.Worker)
		}
	}
	sort.Strings(topoUnreg)
	sort.Strings(explUnreg)
	if !slices.Equal(topoUnreg, explUnreg) {
		t.Errorf("registration: topology says %v are not registered, explain-route excludes %v", topoUnreg, explUnreg)
	}
	if topoRefused {
		return x // no routing happens: nothing per domain to compare
	}

	// No decode instance anywhere while the model is served (NoDecodeWorkers):
	// every request fails at the decode hop, in explain-route and simulate;
	// and when both fail every request at the decode hop for want of any
	// decode instance, topology reports an error.
	topoNoDecode := hasFinding(fs, analysis.FindingNoDecodeWorkers, model.SeverityError, "")
	explDecodeFails := x.Verdict.Stage == "decode" && !x.Verdict.Routable
	simDecodeFails := sv.Requests > 0 && sv.Failed == sv.Requests && !slices.ContainsFunc(sv.Failures, func(f simulate.FailureCount) bool { return f.Stage != "decode" })
	if topoNoDecode && (!explDecodeFails || !simDecodeFails) {
		t.Errorf("no decode: topology NoDecodeWorkers, explain-route fails at decode %v (%s: %s), simulate fails every request at decode %v (%d of %d %+v)",
			explDecodeFails, x.Verdict.Error, x.Verdict.Message, simDecodeFails, sv.Failed, sv.Requests, sv.Failures)
	}
	if x.Verdict.Error == "NoInstances" && explDecodeFails && simDecodeFails && !hasError(fs) {
		t.Errorf("no decode instance: explain-route and simulate fail every request at decode (NoInstances), topology reports no error")
	}

	// Per domain: every domain value with ready prefill replicas.
	topo := map[string]outcome{}
	for _, d := range dr.Domains {
		if d.Value == "" || d.Prefill.Ready == 0 {
			continue
		}
		topo[d.Value] = none
		if hasFinding(fs, analysis.FindingPrefillDomainWithoutDecode, model.SeverityError, d.Value) {
			topo[d.Value] = fails
		}
	}
	expl := map[string][]bool{}
	for _, r := range x.Matrix {
		if r.Domain != "" {
			expl[r.Domain] = append(expl[r.Domain], r.Routable)
		}
	}
	simDom := map[string]simulate.DomainResult{}
	for _, d := range sv.Domains {
		simDom[d.Value] = d
	}
	for v, want := range topo {
		if rows, ok := expl[v]; ok {
			got := none
			switch n := count(rows, false); {
			case n == len(rows):
				got = fails
			case n > 0:
				got = mayFail
			}
			if got != want {
				t.Errorf("%s: topology predicts %q, explain-route's all-prefill matrix %q (%v)", v, want, got, rows)
			}
		} else if x.Prefill != nil && len(x.Matrix) > 0 {
			t.Errorf("%s: topology counts ready prefill there, explain-route's matrix has no row for it", v)
		}
		if d, ok := simDom[v]; ok && d.PrefillPicks > 0 {
			got := none
			switch {
			case d.Failed == d.PrefillPicks:
				got = fails
			case d.Failed > 0:
				got = mayFail
			}
			if got != want {
				t.Errorf("%s: topology predicts %q, simulate failed %d of the %d requests prefilled there (%+v)", v, want, d.Failed, d.PrefillPicks, sv.Failures)
			}
		} else if want == fails && x.Prefill != nil {
			t.Errorf("%s: topology predicts every request prefilled there fails, simulate prefilled none there", v)
		}
	}
	// No domain prediction: simulate fails nothing topology does not predict.
	if len(topo) > 0 {
		predicted := 0
		for _, d := range sv.Domains {
			if topo[d.Value] == fails {
				predicted += d.Failed
			}
		}
		if unexplained := sv.Failed - predicted; unexplained > 0 {
			t.Errorf("simulate failed %d requests outside the domains topology predicts failing (%+v)", unexplained, sv.Failures)
		}
	} else if sv.Failed > 0 && !hasError(fs) {
		t.Errorf("simulate failed %d of %d requests (%+v), topology reports no error", sv.Failed, sv.Requests, sv.Failures)
	}
	return x
}

func count(rows []bool, v bool) int {
	n := 0
	for _, r := range rows {
		if r == v {
			n++
		}
	}
	return n
}

func hasFinding(fs []model.Finding, id string, sev model.Severity, domain string) bool {
	return slices.ContainsFunc(fs, func(f model.Finding) bool {
		return f.ID == id && f.Severity == sev && (domain == "" || f.Domain == domain)
	})
}

func hasError(fs []model.Finding) bool {
	return slices.ContainsFunc(fs, func(f model.Finding) bool { return f.Severity == model.SeverityError })
}

func isReady(d *model.Deployment, pod string) bool {
	return slices.ContainsFunc(d.Workers, func(w model.Worker) bool { return w.Pod == pod && w.Ready })
}

// isLeader reports whether pod decides its replica (single-node pods do).
func isLeader(d *model.Deployment, pod string) bool {
	for i := range d.Workers {
		if w := &d.Workers[i]; w.Pod == pod {
			return w.Leader || w.Replica == "" || w.Replica == w.Pod
		}
	}
	return false
}

// dash: the dashboard's report is topology's, and its workers tab marks the
// same pods unregistered.
func dash(t *testing.T, b *raw.Bundle, name string) {
	t.Helper()
	d, err := tui.NewData(b, tui.DataOptions{})
	if err != nil {
		t.Fatalf("dashboard: %v", err)
	}
	snap, err := build.Build(b)
	if err != nil {
		t.Fatal(err)
	}
	rep := analysis.Analyze(snap, analysis.AnalyzeOptions{})
	if a, b := findingKeys(d.Report.Findings), findingKeys(rep.Findings); a != b {
		t.Errorf("%s: the dashboard reports\n%s\ntopology reports\n%s", name, a, b)
	}
	for i := range rep.Deployments {
		if a, b := rep.Deployments[i].Dynamo.Short(), d.Report.Deployments[i].Dynamo.Short(); a != b {
			t.Errorf("%s: release: topology %q, dashboard %q", name, a, b)
		}
	}
}

func findingKeys(fs []model.Finding) string {
	var out []string
	for _, f := range fs {
		out = append(out, fmt.Sprintf("%s %s %s/%s %s", f.ID, f.Severity, f.Namespace, f.Deployment, f.Domain))
	}
	return strings.Join(out, "\n")
}

// withManifest: for an upstream-shaped capture, preflight on its DGD (the
// manifest it was rebuilt from) reads the same release and the same hop
// modes as topology on the capture: RouterNotKV fires in both or neither.
func withManifest(t *testing.T, path string, snap *model.Snapshot) {
	t.Helper()
	base := filepath.Base(path)
	base = strings.Replace(strings.Replace(base, "-registered.yaml", ".yaml", 1), "-no-dwm.yaml", ".yaml", 1)
	mpath := filepath.Join(filepath.Dir(path), "manifest-"+base)
	data, err := os.ReadFile(mpath)
	if os.IsNotExist(err) {
		return
	} else if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := yaml.Unmarshal(data, &obj); err != nil {
		t.Fatalf("%s: %v", mpath, err)
	}
	u := &unstructured.Unstructured{Object: obj}
	if len(snap.Deployments) != 1 {
		t.Fatalf("%s: %d deployments", path, len(snap.Deployments))
	}
	if u.GetNamespace() == "" {
		u.SetNamespace(snap.Deployments[0].Namespace)
	}
	pf := preflight.Check(preflight.Options{Manifests: []preflight.Manifest{{Object: u, Source: mpath}}})
	rep := analysis.Analyze(snap, analysis.AnalyzeOptions{})
	if len(pf.Deployments) != 1 {
		t.Fatalf("preflight %s: %d deployments", mpath, len(pf.Deployments))
	}
	// (upstream's v1alpha1 manifests name placeholder images, my-tag: the
	// release is then unknown in the manifest alone)
	if a, b := pf.Deployments[0].Dynamo, rep.Deployments[0].Dynamo; a == nil || b == nil || a.Known && (a.Version != b.Version || !b.Known) {
		t.Errorf("release: preflight %+v, topology %+v", a, b)
	}
	pfRR := slices.ContainsFunc(pf.Findings, func(f preflight.Finding) bool { return f.ID == analysis.FindingRouterNotKV })
	topoRR := slices.ContainsFunc(rep.Findings, func(f model.Finding) bool { return f.ID == analysis.FindingRouterNotKV })
	if pfRR != topoRR {
		t.Errorf("RouterNotKV: preflight %v, topology %v", pfRR, topoRR)
	}
}
