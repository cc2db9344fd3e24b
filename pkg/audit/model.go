package audit

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/explain"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// Model is what the audit compares the logs with: one deployment as the
// plugin models it (from a capture or a live read), routed by pkg/routecore.
type Model struct {
	Context string
	// Deployment is namespace/name.
	Deployment string
	// CollectedAt is when the model's data was read.
	CollectedAt time.Time
	// Mode is the frontend's router mode; ModeKnown is false when no frontend
	// configuration was read (kv is then assumed).
	Mode      routecore.RouterMode
	ModeKnown bool
	// Release is the Dynamo release the model follows ("" unknown).
	Release string
	// Behavior is the routing core's behaviour for that release (whether the
	// adjusted prefill cost is clamped at zero, …).
	Behavior routecore.ProfileBehavior
	// BlockSize is the KV block size the router hashes with.
	BlockSize int
	// Prefill and Decode are the two hops (Decode is the frontend's router,
	// which also serves an aggregated deployment).
	Prefill, Decode Hop
	// TierWeights weigh host and disk blocks into the effective overlap.
	TierWeights routecore.TierWeights
	// Index is the KV index (nil when there is none); IndexDetail says where
	// it came from.
	Index       *routecore.Index
	IndexDetail string
	// Findings are the deployment's findings (pkg/analysis), which a
	// disagreement links when one explains it.
	Findings []model.Finding

	names map[routecore.WorkerID]string
}

// Hop is one router's configuration and routing pool.
type Hop struct {
	Config     routecore.KvRouterConfig
	Thresholds routecore.BusyThresholds
	Workers    []routecore.Worker
}

// NewModel builds the audit's model of dep with pkg/explain's plan (the same
// resolution explain-route and simulate use: router configuration per hop,
// routing pools, block size, Dynamo release). dynamoVersion is
// --dynamo-version ("" detects it).
func NewModel(snap *model.Snapshot, dep *model.Deployment, dynamoVersion string) (*Model, error) {
	plan, err := explain.NewPlan(explain.Input{Snapshot: snap, Deployment: dep, Options: explain.Options{DynamoVersion: dynamoVersion}})
	if err != nil {
		return nil, err
	}
	m := &Model{Deployment: dep.Key(), BlockSize: plan.BlockSize(), TierWeights: plan.TierWeights(), names: map[routecore.WorkerID]string{}}
	if snap != nil {
		m.Context, m.CollectedAt = snap.Context, snap.CollectedAt
	}
	m.Mode, m.ModeKnown = plan.Mode()
	if rel := plan.Dynamo(); rel != nil {
		m.Release = rel.Version
	}
	ri := plan.Router()
	beh, err := ri.Profile.Behavior()
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	m.Behavior = beh
	prefill, decode := plan.Pools()
	m.Prefill = Hop{Config: ri.PrefillConfig, Thresholds: ri.Thresholds, Workers: slices.Clone(prefill)}
	m.Decode = Hop{Config: ri.Config, Thresholds: ri.Thresholds, Workers: slices.Clone(decode)}
	for _, w := range append(slices.Clone(prefill), decode...) {
		if mem, ok := plan.Member(w.ID); ok && mem.Pod != nil {
			m.names[w.ID] = mem.Pod.Pod
		} else if w.Name != "" {
			m.names[w.ID] = w.Name
		}
	}
	return m, nil
}

// Name is a worker's pod name, or its id when the model does not know it.
func (m *Model) Name(id routecore.WorkerID) string {
	if m != nil {
		if n, ok := m.names[id]; ok {
			return n
		}
	}
	return id.String()
}

// Known reports whether the model holds the worker in either pool.
func (m *Model) Known(id routecore.WorkerID) bool {
	if m == nil {
		return false
	}
	_, ok := m.worker(id)
	return ok
}

// HopFor returns the pool a hop routes over: "prefill" the prefill pool,
// anything else the frontend's (decode or aggregated).
func (m *Model) HopFor(hop string) *Hop {
	if hop == HopPrefill {
		return &m.Prefill
	}
	return &m.Decode
}

// hopOf infers a decision's hop from the pool its selected worker is in, for
// lines that do not say.
func (m *Model) hopOf(id routecore.WorkerID) string {
	for _, w := range m.Prefill.Workers {
		if w.ID == id {
			return HopPrefill
		}
	}
	return HopDecode
}

func (m *Model) worker(id routecore.WorkerID) (routecore.Worker, bool) {
	for _, h := range []*Hop{&m.Prefill, &m.Decode} {
		for _, w := range h.Workers {
			if w.ID == id {
				return w, true
			}
		}
	}
	return routecore.Worker{}, false
}

// prefillConfigs are the prefill pool's runtime configs, for the transfer
// derivation.
func (m *Model) prefillConfigs() map[routecore.WorkerID]routecore.RuntimeConfig {
	out := make(map[routecore.WorkerID]routecore.RuntimeConfig, len(m.Prefill.Workers))
	for _, w := range m.Prefill.Workers {
		out[w.ID] = w.Runtime
	}
	return out
}

// findings returns the model's findings with one of the ids.
func (m *Model) findings(ids ...string) []string {
	if m == nil {
		return nil
	}
	seen := map[string]bool{}
	for _, f := range m.Findings {
		if slices.Contains(ids, f.ID) {
			seen[f.ID] = true
		}
	}
	return slices.Sorted(maps.Keys(seen))
}
