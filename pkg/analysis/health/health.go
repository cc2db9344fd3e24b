package health

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/behavior"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// Finding ids (docs/findings.md).
const (
	// FindingKvEventsNotPublished: the router scores prefix overlap from KV events
	// but workers it scores publish none (warning).
	FindingKvEventsNotPublished = "KvEventsNotPublished"
	// FindingKvHashSpaceMismatch: workers of one worker set publish cards that
	// hash differently (kv_cache_block_size or enable_eagle) (warning).
	FindingKvHashSpaceMismatch = "KvHashSpaceMismatch"
	// FindingDisaggNotActive: decode workers and no registered ready prefill
	// worker: requests run aggregated (warning), or fail under --enforce-disagg
	// (error).
	FindingDisaggNotActive = "DisaggNotActive"
	// FindingRouterReplicasNotSynced: several KV-routing frontend replicas without
	// router replica sync (warning).
	FindingRouterReplicasNotSynced = "RouterReplicasNotSynced"
	// FindingAllWorkersBusy: every ready worker of a role is over a busy
	// threshold at the loads read (warning).
	FindingAllWorkersBusy = "AllWorkersBusy"
	// FindingKvRoutingGivesAwayCache: the frontend's decision counters show the
	// KV router reaching well under the prefix-cache hit rate it could have
	// reached (warning).
	FindingKvRoutingGivesAwayCache = "KvRoutingGivesAwayCache"
)

// FindingIDs returns every id Findings can report, sorted.
func FindingIDs() []string {
	ids := []string{FindingKvEventsNotPublished, FindingKvHashSpaceMismatch, FindingDisaggNotActive,
		FindingRouterReplicasNotSynced, FindingAllWorkersBusy, FindingKvRoutingGivesAwayCache}
	slices.Sort(ids)
	return ids
}

// Findings returns the routing-health findings of every deployment in s for
// the newest Dynamo, in report order (model.SortFindings). A nil Snapshot
// has none.
func Findings(s *model.Snapshot) []model.Finding {
	return FindingsWith(s, Options{})
}

// FindingsWith is Findings at the Dynamo release each deployment runs
// (pkg/behavior.Detect), or the one o names: the rules whose truth changed
// across releases (docs/compatibility.md) follow it. A version that does not
// parse (see ParseRelease) is ignored.
func FindingsWith(s *model.Snapshot, o Options) []model.Finding {
	if s == nil {
		return nil
	}
	var out []model.Finding
	for i := range s.Deployments {
		d := &s.Deployments[i]
		rd, err := behavior.ReadDeployment(s, d, o.DynamoVersion)
		if err != nil {
			rd, _ = behavior.ReadDeployment(s, d, "")
		}
		c := &check{d: d, replicas: replicasOf(d), rel: rd.Release.Release, rd: rd}
		c.kvEvents()
		c.hashSpace()
		c.disagg()
		c.replicaSync()
		c.busy()
		c.quality()
		out = append(out, c.findings...)
	}
	model.SortFindings(out)
	return out
}

// check is the per-deployment state of Findings.
type check struct {
	// rel is the Dynamo release the rules follow (unknown: the newest), and
	// rd how Dynamo treats the deployment at it (pkg/behavior).
	rel      behavior.Release
	rd       *behavior.Reading
	d        *model.Deployment
	replicas []*replica
	findings []model.Finding
}

func (c *check) add(f model.Finding) {
	f.Deployment, f.Namespace = c.d.Name, c.d.Namespace
	slices.Sort(f.Objects)
	f.Objects = slices.Compact(f.Objects)
	c.findings = append(c.findings, f)
}

// replica is one serving replica: a single-node worker pod or the pods of one
// multinode replica, decided by its leader.
type replica struct {
	leader *model.Worker
	pods   []*model.Worker
	ready  bool
	// cards are the instances with model-card data, one per instance id.
	cards []*model.Instance
}

func (r *replica) role() model.Role { return cmp.Or(r.leader.Role, model.RoleUnknown) }

// model is the served model's name from the first card, "" when unknown.
func (r *replica) model() string {
	for _, in := range r.cards {
		if in.Model != "" {
			return in.Model
		}
	}
	return ""
}

func replicasOf(d *model.Deployment) []*replica {
	var out []*replica
	idx := map[string]*replica{}
	for i := range d.Workers {
		w := &d.Workers[i]
		key := cmp.Or(w.Replica, w.Pod)
		r := idx[key]
		if r == nil {
			r = &replica{ready: true}
			idx[key] = r
			out = append(out, r)
		}
		r.pods = append(r.pods, w)
		r.ready = r.ready && w.Ready
	}
	for _, r := range out {
		r.leader = r.pods[0]
		for _, p := range r.pods {
			if p.Leader {
				r.leader = p
				break
			}
		}
		seen := map[routecore.WorkerID]bool{}
		for _, p := range append([]*model.Worker{r.leader}, r.pods...) {
			for j := range p.Instances {
				in := &p.Instances[j]
				if seen[in.ID] || !hasCard(in) {
					continue
				}
				seen[in.ID] = true
				r.cards = append(r.cards, in)
			}
		}
	}
	return out
}

// hasCard reports whether an instance carries model-card data.
func hasCard(in *model.Instance) bool {
	rc := &in.Runtime
	return in.WorkerType != "" || in.BlockSize > 0 || rc.TotalKvBlocks != nil || rc.MaxNumSeqs != nil ||
		rc.MaxNumBatchedTokens != nil || in.KvEventPublishing != nil
}

// routing is the router configuration that applies to one worker set: a worker
// set's published router_config replaces the frontend's (model_card.rs).
type routing struct {
	mode   string
	cfg    routecore.KvRouterConfig
	source string
}

func (c *check) routingFor(component string) routing {
	r := c.rd.SetRouting(component)
	return routing{mode: r.Mode, cfg: r.Config, source: r.Source}
}

func isKV(mode string) bool { return strings.EqualFold(strings.TrimSpace(mode), "kv") }

// names returns the leaders' pod names of rs, sorted.
func names(rs []*replica) []string {
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		out = append(out, r.leader.Pod)
	}
	slices.Sort(out)
	return out
}

// podObjects returns pod/<name> for every pod of rs.
func podObjects(rs []*replica) []string {
	var out []string
	for _, r := range rs {
		for _, p := range r.pods {
			out = append(out, "pod/"+p.Pod)
		}
	}
	return out
}

// examples joins up to three items and says how many more there are.
func examples(items []string) string {
	if len(items) <= 3 {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:3], ", ") + ", … (" + strconv.Itoa(len(items)-3) + " more)"
}

// plural returns "1 worker" / "2 workers".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func (c *check) dgdObject() string { return "dynamographdeployment/" + c.d.Name }

func (c *check) frontendObjects() []string {
	var out []string
	for _, f := range c.d.Frontends {
		out = append(out, "pod/"+f.Pod)
	}
	if len(out) == 0 {
		out = []string{c.dgdObject()}
	}
	return out
}
