package analysis

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// azEdit changes the worker named pod in a deployment.
func azEdit(d *model.Deployment, pod string, fn func(*model.Worker)) {
	for i := range d.Workers {
		if d.Workers[i].Pod == pod {
			fn(&d.Workers[i])
			return
		}
	}
	panic("no worker " + pod)
}

// azGrove switches a deployment to a clusterTopologyName policy naming topo.
func azGrove(d *model.Deployment, topo *model.TopologyObject) {
	d.Policy.Mode, d.Policy.LabelKey, d.Policy.ClusterTopologyName = model.PolicyClusterTopologyName, "", "topo"
	d.Policy.PodLabelKey = "nvidia.com/dynamo-topology.zone"
	d.Topology = topo
	for i := range d.Workers {
		d.Workers[i].LabelKeyAnnotation = "topo"
	}
}

func azFindingStrings(fs []model.Finding) []string {
	out := []string{}
	for _, f := range fs {
		out = append(out, fmt.Sprintf("%s %s %s", f.Severity, f.ID, f.Domain))
	}
	return out
}

func azFind(t *testing.T, fs []model.Finding, id string) model.Finding {
	t.Helper()
	for _, f := range fs {
		if f.ID == id {
			return f
		}
	}
	t.Fatalf("no %s in %v", id, azFindingStrings(fs))
	return model.Finding{}
}

func azContains(t *testing.T, what, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			t.Errorf("%s %q lacks %q", what, s, sub)
		}
	}
}

type findingCase struct {
	name string
	dep  func() model.Deployment
	opts AnalyzeOptions
	// notes are snapshot notes.
	notes []model.Note
	// want is the complete list of findings, as "severity id domain", in report
	// order: anything else is noise and fails the test.
	want  []string
	check func(t *testing.T, fs []model.Finding)
}

func runFindingCases(t *testing.T, cases []findingCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := azSnap(tc.dep())
			s.Notes = tc.notes
			r := AnalyzeTopology(s, tc.opts)
			got := azFindingStrings(r.Findings)
			want := tc.want
			if want == nil {
				want = []string{}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("findings:\n  %s\nwant:\n  %s\nmessages:\n%s", strings.Join(got, "\n  "), strings.Join(want, "\n  "), azMessages(r.Findings))
			}
			for _, f := range r.Findings {
				if f.Message == "" || f.Hint == "" || len(f.Objects) == 0 || f.Deployment != "dgd" || f.Namespace != "ns" {
					t.Errorf("incomplete finding %+v", f)
				}
				if !slices.IsSorted(f.Objects) {
					t.Errorf("objects not sorted: %v", f.Objects)
				}
				for _, o := range f.Objects {
					if kind, name, ok := strings.Cut(o, "/"); !ok || kind == "" || name == "" || kind != strings.ToLower(kind) {
						t.Errorf("object %q is not kind/name", o)
					}
				}
			}
			if tc.check != nil {
				tc.check(t, r.Findings)
			}
		})
	}
}

func azMessages(fs []model.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "  %s: %s | %s | %v\n", f.ID, f.Message, f.Hint, f.Objects)
	}
	return b.String()
}

func TestFindingsHealthy(t *testing.T) {
	runFindingCases(t, []findingCase{
		{name: "required, two zones", dep: func() model.Deployment { return azDep(azRequired(), azZones("required", "a:2:2", "b:2:2")...) }},
		{name: "preferred, two zones", dep: func() model.Deployment { return azDep(azPreferred(), azZones("preferred", "a:2:2", "b:2:2")...) }},
		{name: "not yet published, labelled", dep: func() model.Deployment {
			return azDep(azRequired(), azWorker("p", model.RolePrefill, "a"), azWorker("d0", model.RoleDecode, "a"), azWorker("d1", model.RoleDecode, "a"))
		}},
		{name: "no policy, no topology", dep: func() model.Deployment {
			return azDep(nil, azWorker("p", model.RolePrefill, "", azPub("")), azWorker("d", model.RoleDecode, "", azPub("")))
		}},
		// Decode workers without prefill: Dynamo 1.3 and later keep the model
		// unready (every request 503, #11160); 1.2 served aggregated
		// (DisaggNotActive, a routing-health finding, not a topology one).
		{name: "decode-only deployment", dep: func() model.Deployment { return azDep(azRequired(), azZones("required", "a:0:2")...) },
			want: []string{"error ModelNotReady "},
			check: func(t *testing.T, fs []model.Finding) {
				azContains(t, "message", fs[0].Message, "missing worker types: prefill", "HTTP 503", "1.3 and later")
			}},
		{name: "decode-only deployment on 1.2", opts: AnalyzeOptions{DynamoVersion: "1.2.0"},
			dep: func() model.Deployment { return azDep(azRequired(), azZones("required", "a:0:2")...) }},
	})
}

func TestFindingPrefillDomainWithoutDecode(t *testing.T) {
	runFindingCases(t, []findingCase{
		{
			name: "required: error",
			dep:  func() model.Deployment { return azDep(azRequired(), azZones("required", "a:2:2", "b:2:2", "c:2:0")...) },
			want: []string{"error PrefillDomainWithoutDecode c"},
			check: func(t *testing.T, fs []model.Finding) {
				f := fs[0]
				azContains(t, "message", f.Message, "zone c has 2 ready prefill and 0 ready decode replicas: under required enforcement every request prefilled there fails", "NoEndpoints", "dynamo.topology/zone=c")
				if f.Hint != "add decode capacity in zone=c or set kvTransferPolicy.enforcement: preferred with a preferredWeight" {
					t.Errorf("hint %q", f.Hint)
				}
				if !slices.Equal(f.Objects, []string{"pod/c-prefill-0", "pod/c-prefill-1"}) {
					t.Errorf("objects %v", f.Objects)
				}
			},
		},
		{
			name: "preferred: warning",
			dep: func() model.Deployment {
				return azDep(azPreferred(), azZones("preferred", "a:2:2", "b:2:2", "c:2:0")...)
			},
			want: []string{"warning PrefillDomainWithoutDecode c"},
			check: func(t *testing.T, fs []model.Finding) {
				azContains(t, "message", fs[0].Message, "under preferred enforcement", "decode in another zone")
				if fs[0].Hint != "add decode capacity in zone=c" {
					t.Errorf("hint %q", fs[0].Hint)
				}
			},
		},
		{
			name: "decode present but not ready",
			dep: func() model.Deployment {
				return azDep(azRequired(), append(azZones("required", "a:2:2", "c:1:0"),
					azWorker("c-decode-x", model.RoleDecode, "c", azPub("required"), azNotReady))...)
			},
			want: []string{"error PrefillDomainWithoutDecode c", "info NotReadyWorkers "},
			check: func(t *testing.T, fs []model.Finding) {
				f := azFind(t, fs, FindingPrefillDomainWithoutDecode)
				azContains(t, "message", f.Message, "(1 not ready)")
				if !slices.Contains(f.Objects, "pod/c-decode-x") {
					t.Errorf("objects %v", f.Objects)
				}
			},
		},
		{
			name: "prefill not ready: silent",
			dep: func() model.Deployment {
				return azDep(azRequired(), append(azZones("required", "a:2:2"),
					azWorker("c-prefill-x", model.RolePrefill, "c", azPub("required"), azNotReady))...)
			},
			want: []string{"info NotReadyWorkers "},
		},
		{
			name: "prefill workers published without kv_transfer_domain: no failure, but a mismatch",
			dep: func() model.Deployment {
				d := azDep(azRequired(), azZones("required", "a:2:2", "c:1:0")...)
				azEdit(&d, "c-prefill-0", func(w *model.Worker) {
					w.Instances[0].Runtime.KvTransferDomain, w.Instances[0].Runtime.KvTransferEnforcement = "", ""
					w.Domain.PublishedDomain = ""
				})
				return d
			},
			want: []string{"error PolicyMismatch "},
		},
		{
			// Prefill workers without decode: never ready on 1.3 and later.
			name: "no policy: only readiness",
			dep:  func() model.Deployment { return azDep(nil, azZones("required", "c:2:0")...) },
			want: []string{"error ModelNotReady "},
		},
	})
}

func TestFindingDecodeDomainWithoutPrefill(t *testing.T) {
	runFindingCases(t, []findingCase{
		{
			name: "required",
			dep:  func() model.Deployment { return azDep(azRequired(), azZones("required", "a:2:2", "b:0:2")...) },
			want: []string{"warning DecodeDomainWithoutPrefill b"},
			check: func(t *testing.T, fs []model.Finding) {
				azContains(t, "message", fs[0].Message, "zone b has 2 ready decode and 0 ready prefill replicas", "stays idle")
				azContains(t, "hint", fs[0].Hint, "add prefill capacity in zone=b")
			},
		},
		{
			name: "preferred",
			dep:  func() model.Deployment { return azDep(azPreferred(), azZones("preferred", "a:2:2", "b:0:2")...) },
			want: []string{"warning DecodeDomainWithoutPrefill b"},
		},
		{
			name: "no ready prefill anywhere: only readiness",
			dep:  func() model.Deployment { return azDep(azRequired(), azZones("required", "a:0:2", "b:0:2")...) },
			want: []string{"error ModelNotReady "},
		},
	})
}

func TestFindingWorkerMissingDomain(t *testing.T) {
	base := func(pol *model.TransferPolicy, extra ...model.Worker) func() model.Deployment {
		return func() model.Deployment {
			enf := pol.Enforcement
			return azDep(pol, append(azZones(enf, "a:2:2"), extra...)...)
		}
	}
	runFindingCases(t, []findingCase{
		{
			name: "decode, required: error",
			dep:  base(azRequired(), azWorker("x-decode", model.RoleDecode, "")),
			want: []string{"error WorkerMissingDomain "},
			check: func(t *testing.T, fs []model.Finding) {
				azContains(t, "message", fs[0].Message, "1 decode replica has no zone value", "never chosen")
				if !slices.Equal(fs[0].Objects, []string{"pod/x-decode"}) {
					t.Errorf("objects %v", fs[0].Objects)
				}
			},
		},
		{
			name: "decode, preferred: warning",
			dep:  base(azPreferred(), azWorker("x-decode", model.RoleDecode, "")),
			want: []string{"warning WorkerMissingDomain "},
		},
		{
			name: "prefill, required: error",
			dep:  base(azRequired(), azWorker("x-prefill", model.RolePrefill, "")),
			want: []string{"error WorkerMissingDomain "},
			check: func(t *testing.T, fs []model.Finding) {
				azContains(t, "message", fs[0].Message, "derives no decode constraint")
			},
		},
		{
			name: "published a card without the zone although the pod is labelled",
			dep: base(azRequired(), azWorker("x-decode", model.RoleDecode, "a", azPub("required"), azRuntime(func(rc *routecore.RuntimeConfig) {
				rc.TopologyDomains, rc.KvTransferDomain, rc.KvTransferEnforcement = nil, "", ""
			}), func(w *model.Worker) { w.Domain.Published, w.Domain.PublishedDomain = "", "" })),
			want: []string{"error WorkerMissingDomain "},
		},
		{
			name: "aggregated and encode workers without a value: silent",
			dep:  base(azRequired(), azWorker("agg", model.RoleAggregated, ""), azWorker("enc", model.RoleEncode, "")),
		},
		{
			name: "prefill and decode both: two findings",
			dep:  base(azRequired(), azWorker("x-decode", model.RoleDecode, ""), azWorker("x-prefill", model.RolePrefill, "")),
			want: []string{"error WorkerMissingDomain ", "error WorkerMissingDomain "},
		},
		{
			name: "no policy: silent (on 1.2, where a lone decode worker serves aggregated)",
			opts: AnalyzeOptions{DynamoVersion: "1.2.0"},
			dep:  func() model.Deployment { return azDep(nil, azWorker("x-decode", model.RoleDecode, "")) },
		},
	})
}

func TestFindingTopologyLabelDrift(t *testing.T) {
	runFindingCases(t, []findingCase{
		{
			name: "pod label differs from node label",
			dep: func() model.Deployment {
				d := azDep(azRequired(), azZones("required", "a:2:2")...)
				azEdit(&d, "a-decode-0", func(w *model.Worker) { w.Domain.Node = "b" })
				return d
			},
			want: []string{"warning TopologyLabelDrift a"},
			check: func(t *testing.T, fs []model.Finding) {
				azContains(t, "message", fs[0].Message, "pod/a-decode-0: pod a, node b", "read the value at startup")
				if !slices.Equal(fs[0].Objects, []string{"node/node-a-decode-0", "pod/a-decode-0"}) {
					t.Errorf("objects %v", fs[0].Objects)
				}
			},
		},
		{
			name: "published value differs from pod label",
			dep: func() model.Deployment {
				d := azDep(azRequired(), azZones("required", "a:2:2")...)
				azEdit(&d, "a-decode-0", func(w *model.Worker) { w.Domain.Pod, w.Domain.Node = "b", "b" })
				return d
			},
			want: []string{"warning TopologyLabelDrift a"},
			check: func(t *testing.T, fs []model.Finding) {
				azContains(t, "message", fs[0].Message, "published a zone value that differs", "the router uses the published value")
			},
		},
		{
			name: "no policy: silent",
			dep: func() model.Deployment {
				d := azDep(nil, azZones("required", "a:1:1")...)
				azEdit(&d, "a-decode-0", func(w *model.Worker) { w.Domain.Node = "b" })
				return d
			},
		},
	})
}

func TestFindingEnforcementMissing(t *testing.T) {
	noEnf := azRuntime(func(rc *routecore.RuntimeConfig) { rc.KvTransferEnforcement = "" })
	runFindingCases(t, []findingCase{
		{
			name: "prefill: error",
			dep: func() model.Deployment {
				return azDep(azRequired(), append(azZones("required", "a:1:2"), azWorker("a-prefill-x", model.RolePrefill, "a", azPub("required"), noEnf))...)
			},
			want: []string{"error EnforcementMissing a"},
			check: func(t *testing.T, fs []model.Finding) {
				azContains(t, "message", fs[0].Message, "without kv_transfer_enforcement", "fails every request it prefills on them")
			},
		},
		{
			name: "decode: warning",
			dep: func() model.Deployment {
				return azDep(azRequired(), append(azZones("required", "a:1:2"), azWorker("a-decode-x", model.RoleDecode, "a", azPub("required"), noEnf))...)
			},
			want: []string{"warning EnforcementMissing a"},
		},
		{
			name: "without a policy",
			dep:  func() model.Deployment { return azDep(nil, azZones("", "a:1:1")...) },
			want: []string{"error EnforcementMissing ", "warning EnforcementMissing "},
		},
	})
}

func TestFindingTransferDomainNotPublished(t *testing.T) {
	runFindingCases(t, []findingCase{
		{
			name: "kv_transfer_domain not a key of topology_domains",
			dep: func() model.Deployment {
				return azDep(azRequired(), append(azZones("required", "a:1:2"),
					azWorker("x-prefill", model.RolePrefill, "a", azPub("required"), azRuntime(func(rc *routecore.RuntimeConfig) {
						rc.TopologyDomains = map[string]string{"rack": "r1"}
					}), func(w *model.Worker) { w.Domain.Published = "" }))...)
			},
			// The worker has no zone value either; InvalidWorkerTopology must not
			// repeat the same violation.
			want: []string{"error TransferDomainNotPublished ", "error WorkerMissingDomain "},
			check: func(t *testing.T, fs []model.Finding) {
				f := azFind(t, fs, FindingTransferDomainNotPublished)
				azContains(t, "message", f.Message, `kv_transfer_domain "zone" but no topology_domains.zone`, "fails every request")
				azContains(t, "hint", f.Hint, "/etc/dynamo/topology/zone")
			},
		},
	})
}

func TestFindingInvalidWorkerTopology(t *testing.T) {
	runFindingCases(t, []findingCase{
		{
			name: "value with whitespace",
			dep: func() model.Deployment {
				d := azDep(azRequired(), azZones("required", "a:1:2")...)
				azEdit(&d, "a-decode-0", func(w *model.Worker) { w.Instances[0].Runtime.TopologyDomains["rack"] = " r1" })
				return d
			},
			// The rejected worker cannot register: zone a keeps one decode.
			want: []string{"error InvalidWorkerTopology a", "warning SingleDecodeInDomain a"},
			check: func(t *testing.T, fs []model.Finding) {
				azContains(t, "message", fs[0].Message, "leading or trailing whitespace")
			},
		},
		{
			name: "preferred without weight",
			dep: func() model.Deployment {
				d := azDep(azPreferred(), azZones("preferred", "a:1:2")...)
				azEdit(&d, "a-prefill-0", func(w *model.Worker) { w.Instances[0].Runtime.KvTransferPreferredWeight = nil })
				return d
			},
			// The only prefill worker cannot register: the decode workers'
			// needs are unmet (1.3 and later).
			want: []string{"error InvalidWorkerTopology a", "error ModelNotReady "},
			check: func(t *testing.T, fs []model.Finding) {
				azContains(t, "message", fs[0].Message, "kv_transfer_preferred_weight is required")
			},
		},
		{
			name: "unknown enforcement value",
			dep: func() model.Deployment {
				d := azDep(nil, azZones("fallback", "a:1:1")...)
				return d
			},
			// No worker can register: nothing serves the model.
			want: []string{"error InvalidWorkerTopology ", "error ModelNotReady "},
		},
	})
}

func TestFindingPolicyMismatch(t *testing.T) {
	runFindingCases(t, []findingCase{
		{
			name: "published enforcement differs from the policy",
			dep: func() model.Deployment {
				d := azDep(azRequired(), azZones("required", "a:2:2")...)
				azEdit(&d, "a-prefill-0", func(w *model.Worker) {
					w.Instances[0].Runtime.KvTransferEnforcement = "preferred"
					w.Instances[0].Runtime.KvTransferPreferredWeight = azF64(0.5)
				})
				return d
			},
			want: []string{"error PolicyMismatch "},
			check: func(t *testing.T, fs []model.Finding) {
				azContains(t, "message", fs[0].Message, "1 worker publishes kv_transfer_enforcement preferred but the DGD policy says required", "only biased")
				if !slices.Equal(fs[0].Objects, []string{"pod/a-prefill-0"}) {
					t.Errorf("objects %v", fs[0].Objects)
				}
			},
		},
		{
			name: "published domain differs from the policy",
			dep: func() model.Deployment {
				d := azDep(azRequired(), azZones("required", "a:2:2")...)
				azEdit(&d, "a-decode-1", func(w *model.Worker) {
					w.Instances[0].Runtime.TopologyDomains["rack"] = "r1"
					w.Instances[0].Runtime.KvTransferDomain = "rack"
					w.Domain.PublishedDomain = "rack"
				})
				return d
			},
			want: []string{"error PolicyMismatch "},
		},
		{
			name: "env DYN_KV_TRANSFER_DOMAIN differs",
			dep: func() model.Deployment {
				d := azDep(azRequired(), azZones("required", "a:2:2")...)
				azEdit(&d, "a-decode-0", func(w *model.Worker) { w.TopologyEnv.TransferDomain = "rack" })
				return d
			},
			want: []string{"error PolicyMismatch "},
			check: func(t *testing.T, fs []model.Finding) {
				azContains(t, "message", fs[0].Message, "DYN_KV_TRANSFER_DOMAIN=rack but the DGD policy says zone")
			},
		},
		{
			name: "env enforcement differs",
			dep: func() model.Deployment {
				d := azDep(azRequired(), azZones("required", "a:2:2")...)
				azEdit(&d, "a-decode-0", func(w *model.Worker) { w.TopologyEnv.Enforcement = "preferred" })
				return d
			},
			want: []string{"error PolicyMismatch "},
		},
		{
			name: "published and env weights differ",
			dep: func() model.Deployment {
				d := azDep(azPreferred(), azZones("preferred", "a:2:2")...)
				azEdit(&d, "a-prefill-0", func(w *model.Worker) { w.Instances[0].Runtime.KvTransferPreferredWeight = azF64(0.8) })
				azEdit(&d, "a-prefill-1", func(w *model.Worker) { w.TopologyEnv.PreferredWeight = "0.9" })
				return d
			},
			want: []string{"error PolicyMismatch ", "error PolicyMismatch "},
		},
		{
			name: "same weight as f32 is not a mismatch",
			dep: func() model.Deployment {
				p := azPreferred()
				p.PreferredWeight = azF64(float64(float32(0.85)))
				d := azDep(p, azZones("preferred", "a:2:2")...)
				for i := range d.Workers {
					d.Workers[i].TopologyEnv.PreferredWeight = "0.85"
					d.Workers[i].Instances[0].Runtime.KvTransferPreferredWeight = azF64(0.85)
				}
				return d
			},
		},
		{
			name: "annotation names another label",
			dep: func() model.Deployment {
				d := azDep(azRequired(), azZones("required", "a:2:2")...)
				azEdit(&d, "a-decode-0", func(w *model.Worker) { w.LabelKeyAnnotation = "example.com/zone" })
				return d
			},
			want: []string{"error PolicyMismatch "},
		},
		{
			name: "no policy: workers disagree",
			dep: func() model.Deployment {
				return azDep(nil, azWorker("p0", model.RolePrefill, "a", azPub("required")), azWorker("p1", model.RolePrefill, "", azPub("")),
					azWorker("d0", model.RoleDecode, "a", azPub("required")))
			},
			want: []string{"error PolicyMismatch "},
			check: func(t *testing.T, fs []model.Finding) {
				azContains(t, "message", fs[0].Message, "1 × none", "2 × zone/required")
			},
		},
		{
			name: "no policy: workers agree",
			dep:  func() model.Deployment { return azDep(nil, azZones("required", "a:1:1", "b:1:1")...) },
		},
	})
}

func TestFindingTopologyObjectMissing(t *testing.T) {
	grove := func(topo *model.TopologyObject) func() model.Deployment {
		return func() model.Deployment {
			d := azDep(azRequired(), azZones("required", "a:2:2")...)
			azGrove(&d, topo)
			return d
		}
	}
	zoneLevels := []model.TopologyLevel{{Domain: "zone", NodeLabelKey: azZoneKey}, {Domain: "host", NodeLabelKey: HostnameLabel}}
	runFindingCases(t, []findingCase{
		{name: "found with the domain", dep: grove(&model.TopologyObject{Kind: "ClusterTopologyBinding", Name: "topo", Found: true, Levels: zoneLevels})},
		{
			name: "not found",
			dep:  grove(&model.TopologyObject{Kind: "ClusterTopologyBinding", Name: "topo"}),
			want: []string{"error TopologyObjectMissing "},
			check: func(t *testing.T, fs []model.Finding) {
				azContains(t, "message", fs[0].Message, `ClusterTopologyBinding "topo", which does not exist`)
				if !slices.Equal(fs[0].Objects, []string{"clustertopologybinding/topo", "dynamographdeployment/dgd"}) {
					t.Errorf("objects %v", fs[0].Objects)
				}
			},
		},
		{name: "nil topology", dep: grove(nil), want: []string{"error TopologyObjectMissing "}},
		{
			name:  "could not be read",
			dep:   grove(&model.TopologyObject{Kind: "ClusterTopologyBinding", Name: "topo"}),
			notes: []model.Note{{Severity: model.NoteWarning, Source: model.SourceKubernetes, Message: "clustertopologybindings.grove.io is forbidden: topology not checked"}},
			want:  []string{"warning TopologyObjectMissing "},
		},
		{
			name: "lacks the domain",
			dep:  grove(&model.TopologyObject{Kind: "ClusterTopology", Name: "topo", Found: true, Levels: zoneLevels[1:]}),
			want: []string{"error TopologyObjectMissing "},
			check: func(t *testing.T, fs []model.Finding) {
				azContains(t, "message", fs[0].Message, `has no level "zone" (levels: host)`)
				if !slices.Contains(fs[0].Objects, "clustertopology/topo") {
					t.Errorf("objects %v", fs[0].Objects)
				}
			},
		},
		{
			name: "labelKey mode ignores the topology object",
			dep: func() model.Deployment {
				d := azDep(azRequired(), azZones("required", "a:2:2")...)
				d.Topology = &model.TopologyObject{Kind: "ClusterTopologyBinding", Name: "other"}
				return d
			},
		},
	})
}

func TestFindingRouterNotKV(t *testing.T) {
	withMode := func(pol *model.TransferPolicy, mode string) func() model.Deployment {
		return func() model.Deployment {
			d := azDep(pol, azZones("required", "a:2:2")...)
			d.Router.Mode = mode
			return d
		}
	}
	runFindingCases(t, []findingCase{
		{
			name: "round-robin", dep: withMode(azRequired(), "round-robin"),
			want: []string{"warning RouterNotKV "},
			check: func(t *testing.T, fs []model.Finding) {
				azContains(t, "message", fs[0].Message, "round-robin mode (from frontend args)", "does not read routing constraints", "a request still fails when that prefill worker publishes a constraint that cannot be derived")
				if !slices.Equal(fs[0].Objects, []string{"pod/dgd-frontend-0"}) {
					t.Errorf("objects %v", fs[0].Objects)
				}
			},
		},
		{name: "unknown mode", dep: withMode(azRequired(), "")},
		{name: "KV", dep: withMode(azRequired(), "KV")},
		{name: "no policy", dep: withMode(nil, "random")},
		{
			// Only the decode hop reads the transfer constraint: a non-KV
			// prefill set behind a kv decode set leaves the policy honoured.
			name: "prefill worker-set override",
			dep: func() model.Deployment {
				d := azDep(azRequired(), azZones("required", "a:2:2")...)
				d.Router.WorkerSetOverrides = []model.RouterOverride{{Component: "prefill", Mode: "random"}, {Component: "decode", Mode: "kv"}}
				return d
			},
		},
		{
			name: "decode worker-set override",
			dep: func() model.Deployment {
				d := azDep(azRequired(), azZones("required", "a:2:2")...)
				d.Router.Mode = "kv"
				d.Router.WorkerSetOverrides = []model.RouterOverride{{Component: "decode", Mode: "random"}}
				return d
			},
			want: []string{"warning RouterNotKV "},
			check: func(t *testing.T, fs []model.Finding) {
				azContains(t, "message", fs[0].Message, "random mode (from worker set decode card router_config)")
				if !slices.Equal(fs[0].Objects, []string{"pod/a-decode-0", "pod/a-decode-1"}) {
					t.Errorf("objects %v", fs[0].Objects)
				}
			},
		},
		{
			// Workers advertise --router-mode kv in their own args: from 1.4
			// that is their card's router_config, so the decode hop is kv.
			name: "decode workers' args on 1.4",
			dep: func() model.Deployment {
				d := azDep(azRequired(), azZones("required", "a:2:2")...)
				d.Router.Mode, d.Router.ModeSource = "round-robin", "default"
				d.Router.WorkerArgs = []model.RouterOverride{{Component: "decode", Mode: "kv", Source: "pod a-decode-0 args"}}
				d.Workers[0].Image = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.4.0"
				return d
			},
		},
		{
			name: "decode workers' args on 1.3",
			dep: func() model.Deployment {
				d := azDep(azRequired(), azZones("required", "a:2:2")...)
				d.Router.Mode, d.Router.ModeSource = "round-robin", "default"
				d.Router.WorkerArgs = []model.RouterOverride{{Component: "decode", Mode: "kv", Source: "pod a-decode-0 args"}}
				d.Workers[0].Image = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.3.0"
				return d
			},
			want: []string{"warning RouterNotKV "},
		},
	})
}

func TestFindingSingleDecodeInDomain(t *testing.T) {
	runFindingCases(t, []findingCase{
		{
			name: "required: warning",
			dep:  func() model.Deployment { return azDep(azRequired(), azZones("required", "a:2:1", "b:2:2")...) },
			want: []string{"warning SingleDecodeInDomain a"},
			check: func(t *testing.T, fs []model.Finding) {
				azContains(t, "message", fs[0].Message, "zone a has 1 ready decode replica for 2 ready prefill", "no cross-zone failover")
			},
		},
		{
			name: "preferred: info",
			dep:  func() model.Deployment { return azDep(azPreferred(), azZones("preferred", "a:2:1", "b:2:2")...) },
			want: []string{"info SingleDecodeInDomain a"},
		},
		{
			name: "no prefill: silent",
			dep:  func() model.Deployment { return azDep(azRequired(), azZones("required", "a:0:1", "b:2:2")...) },
			want: []string{"warning DecodeDomainWithoutPrefill a"},
		},
	})
}

func TestFindingCapacitySkew(t *testing.T) {
	runFindingCases(t, []findingCase{
		{
			name: "too much decode",
			dep:  func() model.Deployment { return azDep(azRequired(), azZones("required", "a:1:4", "b:4:4", "c:4:4")...) },
			want: []string{"warning CapacitySkew a"},
			check: func(t *testing.T, fs []model.Finding) {
				azContains(t, "message", fs[0].Message, "zone a has a P:D ratio of 0.25 (1:4 ready replicas) against 0.75 deployment-wide, more than 2× off", "in excess")
			},
		},
		{
			name: "too little decode",
			dep: func() model.Deployment {
				return azDep(azRequired(), azZones("required", "a:10:2", "b:2:2", "c:2:2", "d:2:2")...)
			},
			want: []string{"warning CapacitySkew a"},
			check: func(t *testing.T, fs []model.Finding) {
				azContains(t, "message", fs[0].Message, "ratio of 5", "decode is short")
			},
		},
		{
			name: "exactly the factor: silent",
			dep:  func() model.Deployment { return azDep(azRequired(), azZones("required", "a:2:4", "b:6:4")...) },
		},
		{
			name: "custom factor",
			dep:  func() model.Deployment { return azDep(azRequired(), azZones("required", "a:1:4", "b:4:4", "c:4:4")...) },
			opts: AnalyzeOptions{SkewFactor: 4},
		},
		{
			name: "factor 1.2",
			dep:  func() model.Deployment { return azDep(azRequired(), azZones("required", "a:2:2", "b:3:2")...) },
			opts: AnalyzeOptions{SkewFactor: 1.2},
			// a: 1 against 1.25 is 1.25× off; b: 1.5 is exactly 1.2× off.
			want: []string{"warning CapacitySkew a"},
		},
	})
}

func TestFindingEventsAndConditions(t *testing.T) {
	runFindingCases(t, []findingCase{
		{
			name: "TopologyLabelMissing events",
			dep: func() model.Deployment {
				d := azDep(azRequired(), azZones("required", "a:2:2")...)
				d.Events = []model.Event{
					{Reason: "Scheduled", Type: "Normal", Object: "Pod/a-decode-0"},
					{Reason: "TopologyLabelMissing", Type: "Warning", Object: "Pod/x-decode-0", Count: 3, Message: `Node "n1" does not have required topology label "topology.kubernetes.io/zone"`},
					{Reason: "TopologyLabelMissing", Type: "Warning", Object: "x-decode-1", Message: `Node "n2" does not have required topology label "topology.kubernetes.io/zone"`},
				}
				return d
			},
			want: []string{"warning TopologyLabelMissingEvent "},
			check: func(t *testing.T, fs []model.Finding) {
				azContains(t, "message", fs[0].Message, "4 TopologyLabelMissing events about 2 objects", `Node \"n2\"`)
				if !slices.Equal(fs[0].Objects, []string{"pod/x-decode-0", "pod/x-decode-1"}) {
					t.Errorf("objects %v", fs[0].Objects)
				}
			},
		},
		{
			name: "TopologyLevelsAvailable=False",
			dep: func() model.Deployment {
				d := azDep(azRequired(), azZones("required", "a:2:2")...)
				d.Conditions = []model.Condition{{Type: "Ready", Status: "True"}, {Type: "TopologyLevelsAvailable", Status: "False", Reason: "LevelsMissing", Message: "rack"}}
				return d
			},
			want: []string{"warning TopologyLevelsUnavailable "},
			check: func(t *testing.T, fs []model.Finding) {
				azContains(t, "message", fs[0].Message, "(LevelsMissing: rack)")
			},
		},
		{
			name: "TopologyLevelsAvailable=True",
			dep: func() model.Deployment {
				d := azDep(azRequired(), azZones("required", "a:2:2")...)
				d.Conditions = []model.Condition{{Type: "TopologyLevelsAvailable", Status: "True"}}
				return d
			},
		},
	})
}

func TestFindingTopologyWiring(t *testing.T) {
	runFindingCases(t, []findingCase{
		{
			name: "env missing",
			dep: func() model.Deployment {
				return azDep(azRequired(), append(azZones("required", "a:2:2"),
					azWorker("a-decode-x", model.RoleDecode, "a", func(w *model.Worker) { w.TopologyEnv = model.TopologyEnv{} }))...)
			},
			want: []string{"warning PolicyWithoutTopologyEnv "},
			check: func(t *testing.T, fs []model.Finding) {
				azContains(t, "message", fs[0].Message, "1 worker pod lacks the operator-injected topology environment")
			},
		},
		{
			name: "DYN_TOPOLOGY_ENABLED false",
			dep: func() model.Deployment {
				return azDep(azRequired(), append(azZones("required", "a:2:2"),
					azWorker("a-decode-x", model.RoleDecode, "a", func(w *model.Worker) { w.TopologyEnv.Enabled = "false" }))...)
			},
			want: []string{"warning PolicyWithoutTopologyEnv "},
		},
		{
			name: "annotation missing",
			dep: func() model.Deployment {
				return azDep(azRequired(), append(azZones("required", "a:2:2"),
					azWorker("a-decode-x", model.RoleDecode, "a", func(w *model.Worker) { w.LabelKeyAnnotation = "" }))...)
			},
			want: []string{"warning PolicyWithoutTopologyEnv "},
			check: func(t *testing.T, fs []model.Finding) {
				azContains(t, "message", fs[0].Message, "1 worker pod lacks the nvidia.com/topology-label-key annotation", "exits after 30 s")
			},
		},
		{
			name: "published correctly although the env is not visible: silent",
			dep: func() model.Deployment {
				d := azDep(azRequired(), azZones("required", "a:2:2")...)
				azEdit(&d, "a-decode-0", func(w *model.Worker) { w.TopologyEnv, w.LabelKeyAnnotation = model.TopologyEnv{}, "" })
				return d
			},
		},
		{
			name: "label not copied although the node has it",
			dep: func() model.Deployment {
				return azDep(azRequired(), append(azZones("required", "a:2:2"),
					azWorker("a-decode-x", model.RoleDecode, "a", azNotReady, func(w *model.Worker) { w.Domain.Pod = "" }))...)
			},
			want: []string{"warning TopologyLabelNotCopied a", "info NotReadyWorkers "},
			check: func(t *testing.T, fs []model.Finding) {
				f := azFind(t, fs, FindingTopologyLabelNotCopied)
				azContains(t, "message", f.Message, "1 scheduled worker pod has no topology.kubernetes.io/zone pod label although its node is labelled zone=a")
				if !slices.Equal(f.Objects, []string{"node/node-a-decode-x", "pod/a-decode-x"}) {
					t.Errorf("objects %v", f.Objects)
				}
			},
		},
	})
}

func TestFindingRolesAndReadiness(t *testing.T) {
	runFindingCases(t, []findingCase{
		{
			name: "unknown role",
			dep: func() model.Deployment {
				return azDep(azRequired(), append(azZones("required", "a:2:2"), azWorker("mystery", model.RoleUnknown, "a"), azWorker("empty-role", "", "a"))...)
			},
			want: []string{"warning WorkerRoleUnknown "},
			check: func(t *testing.T, fs []model.Finding) {
				azContains(t, "message", fs[0].Message, "2 worker replicas")
			},
		},
		{
			name: "not ready",
			dep: func() model.Deployment {
				d := azDep(nil, azZones("required", "a:2:2")...)
				azEdit(&d, "a-decode-1", azNotReady)
				azEdit(&d, "a-prefill-1", azNotReady)
				return d
			},
			want: []string{"info NotReadyWorkers "},
			check: func(t *testing.T, fs []model.Finding) {
				azContains(t, "message", fs[0].Message, "2 of 4 worker replicas are not ready (prefill 1, decode 1)")
			},
		},
	})
}

func TestFindingIDsDocumented(t *testing.T) {
	ids := TopologyFindingIDs()
	if len(ids) != 25 || !slices.IsSorted(ids) {
		t.Fatalf("ids %v", ids)
	}
	doc := azReadDoc(t)
	for _, id := range ids {
		if !strings.Contains(doc, "\n## "+id+"\n") {
			t.Errorf("docs/findings.md has no section ## %s", id)
		}
	}
}

func azReadDoc(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../docs/findings.md")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestFindingNoDecodeWorkers(t *testing.T) {
	img := func(tag string) azOpt {
		return func(w *model.Worker) { w.Image = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:" + tag }
	}
	prefillOnly := func(tag string, decodeOpts ...azOpt) func() model.Deployment {
		return func() model.Deployment {
			ws := []model.Worker{azWorker("a-prefill-0", model.RolePrefill, "a", azPub("required"), img(tag))}
			for i, o := range decodeOpts {
				ws = append(ws, azWorker(fmt.Sprintf("a-decode-%d", i), model.RoleDecode, "a", azPub("required"), img(tag), o))
			}
			return azDep(nil, ws...)
		}
	}
	runFindingCases(t, []findingCase{
		{
			// Before 1.3 the frontend serves the model with prefill alone:
			// every request is prefilled, then fails at the decode hop.
			name: "1.2 decode not ready",
			dep:  prefillOnly("1.2.0", azNotReady),
			want: []string{"error NoDecodeWorkers ", "info NotReadyWorkers "},
			check: func(t *testing.T, fs []model.Finding) {
				azContains(t, "message", fs[0].Message, "none of its 1 decode replica is live")
				azContains(t, "message", fs[0].Message, "Dynamo 1.2.0")
				if !slices.Equal(fs[0].Objects, []string{"pod/a-decode-0"}) {
					t.Errorf("objects %v", fs[0].Objects)
				}
			},
		},
		{
			// From 1.3 the prefill workers' needs are unmet: the model is
			// unready, which is ModelNotReady, not NoDecodeWorkers.
			name: "1.3 decode not ready",
			dep:  prefillOnly("1.3.0", azNotReady),
			want: []string{"error ModelNotReady ", "info NotReadyWorkers "},
		},
		{
			name: "1.2 no decode component at all",
			dep:  prefillOnly("1.2.0"),
			want: []string{"error NoDecodeWorkers "},
			check: func(t *testing.T, fs []model.Finding) {
				azContains(t, "message", fs[0].Message, "the deployment has no decode worker")
				if !slices.Equal(fs[0].Objects, []string{"deployment/dgd"}) && !slices.Equal(fs[0].Objects, []string{"dynamographdeployment/dgd"}) {
					t.Errorf("objects %v", fs[0].Objects)
				}
			},
		},
		{
			name: "1.2 with a live decode",
			dep:  prefillOnly("1.2.0", func(*model.Worker) {}),
			want: []string{},
		},
	})
}

func TestFindingMixedDynamoReleases(t *testing.T) {
	img := func(tag string) azOpt {
		return func(w *model.Worker) { w.Image = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:" + tag }
	}
	runFindingCases(t, []findingCase{
		{
			name: "one release",
			dep: func() model.Deployment {
				return azDep(azRequired(), azWorker("a-prefill-0", model.RolePrefill, "a", azPub("required"), img("1.3.0")),
					azWorker("a-decode-0", model.RoleDecode, "a", azPub("required"), img("1.3.0")),
					azWorker("a-decode-1", model.RoleDecode, "a", azPub("required"), img("1.3.0")))
			},
			want: []string{},
		},
		{
			name: "a rollout in progress",
			dep: func() model.Deployment {
				return azDep(azRequired(), azWorker("a-prefill-0", model.RolePrefill, "a", azPub("required"), img("1.3.0")),
					azWorker("a-decode-0", model.RoleDecode, "a", azPub("required"), img("1.2.0")),
					azWorker("a-decode-1", model.RoleDecode, "a", azPub("required"), img("1.3.0")))
			},
			want: []string{"warning MixedDynamoReleases "},
			check: func(t *testing.T, fs []model.Finding) {
				azContains(t, "message", fs[0].Message, "1.2.0 (")
				azContains(t, "message", fs[0].Message, "a-decode-0")
				// No frontend image: the oldest release is followed.
				azContains(t, "message", fs[0].Message, "read at 1.2.0")
				if !slices.Contains(fs[0].Objects, "pod/a-decode-0") {
					t.Errorf("objects %v", fs[0].Objects)
				}
			},
		},
		{
			name: "the override reads one release and says nothing of the images",
			dep: func() model.Deployment {
				return azDep(azRequired(), azWorker("a-prefill-0", model.RolePrefill, "a", azPub("required"), img("1.3.0")),
					azWorker("a-decode-0", model.RoleDecode, "a", azPub("required"), img("1.2.0")),
					azWorker("a-decode-1", model.RoleDecode, "a", azPub("required"), img("1.3.0")))
			},
			opts: AnalyzeOptions{DynamoVersion: "1.3.0"},
			want: []string{},
		},
	})
}
