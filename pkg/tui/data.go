package tui

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/analysis"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/build"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/explain"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
)

// Data is what the dashboard shows: a snapshot, its topology report and, per
// deployment ("namespace/name"), the KV-cache contents the route explorer
// matches prompts against. Report.Deployments is in Snapshot.Deployments order.
type Data struct {
	Snapshot *model.Snapshot
	Report   *model.Report
	KV       map[string]explain.KVCache
	// KVNotes are problems met while indexing the KV events, per deployment.
	KVNotes map[string][]string
	// DynamoVersion is the --dynamo-version override the report was read at
	// ("": each deployment's own release); the route explorer reads the same.
	DynamoVersion string
}

// Loader reads the data once; the dashboard calls it at start and on every
// refresh. It runs in a tea.Cmd, never in Update.
type Loader func(ctx context.Context) (*Data, error)

// DataOptions select the deployments NewData keeps.
type DataOptions struct {
	// Namespace keeps only this namespace's deployments ("" keeps all).
	Namespace string
	// Name keeps only this deployment ("" keeps all); naming a missing one is an
	// error.
	Name string
	// SkewFactor is passed to analysis.Analyze.
	SkewFactor float64
	// DynamoVersion overrides the Dynamo release (--dynamo-version).
	DynamoVersion string
	// Select, when set, replaces the Namespace/Name filter: it keeps the
	// deployments in scope and fails when nothing matches (the CLI's one rule
	// for a selection that matches nothing, cmdutil.Scope.Select).
	Select func(*model.Snapshot) error
}

// NewData builds the dashboard's data from a bundle (a capture or a live
// collection): build.Build, the deployment filter, analysis.Analyze (the
// topology and routing-health findings, as topology reports them), and a KV
// index per deployment from the bundle's KvEvents (cold when it has none).
func NewData(b *raw.Bundle, o DataOptions) (*Data, error) {
	snap, err := build.Build(b)
	if err != nil {
		return nil, err
	}
	if o.Select != nil {
		if err := o.Select(snap); err != nil {
			return nil, err
		}
	} else if o.Namespace != "" {
		snap.Deployments = slices.DeleteFunc(snap.Deployments, func(d model.Deployment) bool { return d.Namespace != o.Namespace })
		snap.Namespace = o.Namespace
	}
	if o.Select == nil && o.Name != "" {
		snap.Deployments = slices.DeleteFunc(snap.Deployments, func(d model.Deployment) bool { return d.Name != o.Name })
		if len(snap.Deployments) == 0 {
			where := "namespace " + o.Namespace
			if o.Namespace == "" {
				where = "any namespace"
			}
			return nil, fmt.Errorf("no DynamoGraphDeployment named %s in %s", o.Name, where)
		}
	}
	d := &Data{
		Snapshot:      snap,
		Report:        analysis.Analyze(snap, analysis.AnalyzeOptions{SkewFactor: o.SkewFactor, DynamoVersion: o.DynamoVersion}),
		KV:            map[string]explain.KVCache{},
		KVNotes:       map[string][]string{},
		DynamoVersion: o.DynamoVersion,
	}
	for i := range snap.Deployments {
		dep := &snap.Deployments[i]
		sets := explain.BundleEventSets(b, dep)
		if len(sets) == 0 {
			d.KV[dep.Key()] = explain.KVCache{Kind: explain.KVCold, Detail: "cold: no KV events were read for " + dep.Key()}
			continue
		}
		ix, notes := explain.IndexEvents(sets, blockSize(dep))
		names := make([]string, 0, len(sets))
		for _, s := range sets {
			names = append(names, s.Name)
		}
		d.KV[dep.Key()] = explain.IndexCache(ix, "KvEvents ("+strings.Join(names, ", ")+")", b.CollectedAt)
		d.KVNotes[dep.Key()] = notes
	}
	return d, nil
}

// blockSize is the first kv_cache_block_size a worker card publishes.
func blockSize(dep *model.Deployment) int {
	for _, w := range dep.Workers {
		for _, in := range w.Instances {
			if in.BlockSize > 0 {
				return in.BlockSize
			}
		}
	}
	return 0
}

// workerRow is one row of the workers table, derived from an model.Worker.
type workerRow struct {
	Pod, Role, Domain, Node string
	Ready                   bool
	// Unregistered: the pod is ready but its replica published no Dynamo
	// instance (the report's reading), so the router does not know it.
	Unregistered bool
	DpRanks      int
	// KVBlocks, ActiveDecode and PrefillTokens are -1 when unknown.
	KVBlocks, ActiveDecode, PrefillTokens int64
}

// workerRows are the deployment's pods, with the report's reading of their
// registration (rep may be nil).
func workerRows(dep *model.Deployment, rep *model.DeploymentReport) []workerRow {
	unregistered := map[string]bool{}
	if rep != nil {
		for _, wr := range rep.Workers {
			if wr.Unregistered {
				for _, p := range wr.Pods {
					unregistered[p] = true
				}
			}
		}
	}
	rows := make([]workerRow, 0, len(dep.Workers))
	for i := range dep.Workers {
		w := &dep.Workers[i]
		r := workerRow{Pod: w.Pod, Role: string(w.Role), Domain: w.Domain.Effective(), Node: w.Node, Ready: w.Ready,
			Unregistered: w.Ready && unregistered[w.Pod], KVBlocks: -1, ActiveDecode: -1, PrefillTokens: -1}
		for _, in := range cardInstances(w) {
			start, end := in.Runtime.DpRange()
			r.DpRanks += int(end - start)
			if in.Runtime.TotalKvBlocks != nil {
				r.KVBlocks = max(r.KVBlocks, 0) + int64(*in.Runtime.TotalKvBlocks)
			}
			for _, l := range in.Load {
				r.ActiveDecode = max(r.ActiveDecode, 0) + int64(l.ActiveDecodeBlocks)
				r.PrefillTokens = max(r.PrefillTokens, 0) + int64(l.ActivePrefillTokens)
			}
		}
		rows = append(rows, r)
	}
	return rows
}

// cardInstances returns one instance per instance id, preferring the one with
// a model card (an instance publishes several endpoints).
func cardInstances(w *model.Worker) []*model.Instance {
	var out []*model.Instance
	for i := range w.Instances {
		in := &w.Instances[i]
		j := slices.IndexFunc(out, func(o *model.Instance) bool { return o.ID == in.ID })
		switch {
		case j < 0:
			out = append(out, in)
		case hasCard(in) && !hasCard(out[j]):
			out[j] = in
		}
	}
	return out
}

func hasCard(in *model.Instance) bool {
	return in.BlockSize > 0 || in.Model != "" || in.Runtime.TotalKvBlocks != nil
}
