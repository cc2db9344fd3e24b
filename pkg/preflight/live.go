package preflight

import (
	"context"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/inspect"
)

// pageSize bounds each LIST page.
const pageSize = 500

// ReadCluster reads what a prediction needs with GET and LIST only: the Nodes,
// the Pods of every namespace that are not finished (for the GPUs they already
// request) and the Grove topology objects. exclude names deployments
// ("namespace/name") whose pods are not counted (they are being re-applied).
// A resource that cannot be read becomes a Note; an API server that cannot be
// used at all (the Node LIST fails) is an error.
func ReadCluster(ctx context.Context, api inspect.KubeAPI, detail string, now time.Time, exclude []string) (*Cluster, error) {
	var objs []*unstructured.Unstructured
	nodes, err := listAll(ctx, api, inspect.GVRNodes, "", metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list nodes: %w: preflight needs list on nodes at cluster scope (docs/rbac.md), or use --nodes-from CAPTURE or --no-cluster", err)
	}
	objs = append(objs, nodes...)
	var notes []inspect.Note
	note := func(sev inspect.NoteSeverity, format string, args ...any) {
		notes = append(notes, inspect.Note{Severity: sev, Source: inspect.SourceKubernetes, Message: fmt.Sprintf(format, args...)})
	}
	src := inspect.SourceStatus{Kind: inspect.SourceKubernetes, Detail: detail, At: now.UTC()}
	podsKnown := true
	pods, err := listAll(ctx, api, inspect.GVRPods, "", metav1.ListOptions{FieldSelector: "status.phase!=Succeeded,status.phase!=Failed"})
	if err != nil {
		podsKnown = false
		src.Degraded = true
		note(inspect.NoteWarning, "cannot list pods in all namespaces (%v): the GPUs running pods already request are unknown and counted as free, so capacity findings may be missed", reason(err))
	}
	objs = append(objs, pods...)
	groveServed, topoKnown := true, true
	served, err := api.ServedResources(ctx, "grove.io/v1alpha1")
	switch {
	case err != nil && apierrors.IsNotFound(err):
		groveServed = false
	case err != nil:
		topoKnown = false
		note(inspect.NoteWarning, "cannot read API discovery for grove.io/v1alpha1 (%v): Grove topology objects are unknown, so clusterTopologyName and packDomain are not checked", reason(err))
	default:
		var gvr schema.GroupVersionResource
		switch {
		case slices.Contains(served, "clustertopologybindings"):
			gvr = inspect.GVRClusterTopologyBinding
		case slices.Contains(served, "clustertopologies"):
			gvr = inspect.GVRClusterTopology
		default:
			groveServed = false
		}
		if groveServed {
			ts, err := listAll(ctx, api, gvr, "", metav1.ListOptions{})
			if err != nil {
				topoKnown = false
				src.Degraded = true
				note(inspect.NoteWarning, "cannot list %s.grove.io (%v): clusterTopologyName and packDomain are not checked against the topology objects", gvr.Resource, reason(err))
			}
			objs = append(objs, ts...)
		}
	}
	c := NewCluster(objs, exclude)
	c.Source, c.Notes, c.PodsKnown, c.GroveServed, c.TopologiesKnown = src, notes, podsKnown, groveServed, topoKnown
	return c, nil
}

func reason(err error) string {
	if apierrors.IsForbidden(err) {
		return "forbidden by RBAC"
	}
	return err.Error()
}

// listAll reads every page of a LIST.
func listAll(ctx context.Context, api inspect.KubeAPI, gvr schema.GroupVersionResource, ns string, opts metav1.ListOptions) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	opts.Limit = pageSize
	for {
		l, err := api.List(ctx, gvr, ns, opts)
		if err != nil {
			return nil, err
		}
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
		if l.GetContinue() == "" {
			return out, nil
		}
		opts.Continue = l.GetContinue()
	}
}
