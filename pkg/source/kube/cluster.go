package kube

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
)

// ReadCluster reads what a placement prediction needs with GET and LIST only:
// the Nodes, the Pods of every namespace that are not finished (for the GPUs
// they already request) and the Grove topology objects. A resource that cannot
// be read becomes a Note; an API server that cannot be used at all (the Node
// LIST fails) is an error.
func ReadCluster(ctx context.Context, api API, detail string, now time.Time) (*raw.ClusterObjects, error) {
	var objs []*unstructured.Unstructured
	nodes, err := listAllPages(ctx, api, GVRNodes, "", metav1.ListOptions{})
	if err != nil {
		return nil, nodeListError(ctx, detail, err)
	}
	objs = append(objs, nodes...)
	var notes []model.Note
	note := func(sev model.NoteSeverity, format string, args ...any) {
		notes = append(notes, model.Note{Severity: sev, Source: model.SourceKubernetes, Message: fmt.Sprintf(format, args...)})
	}
	src := model.SourceStatus{Kind: model.SourceKubernetes, Detail: detail, At: now.UTC()}
	podsKnown := true
	pods, err := listAllPages(ctx, api, GVRPods, "", metav1.ListOptions{FieldSelector: "status.phase!=Succeeded,status.phase!=Failed"})
	if err != nil {
		podsKnown = false
		src.Degraded = true
		note(model.NoteWarning, "cannot list pods in all namespaces (%v): the GPUs running pods already request are unknown and counted as free, so capacity findings may be missed", readReason(err))
	}
	objs = append(objs, pods...)
	groveServed, topoKnown := true, true
	served, err := api.ServedResources(ctx, "grove.io/v1alpha1")
	switch {
	case err != nil && apierrors.IsNotFound(err):
		groveServed = false
	case err != nil:
		topoKnown = false
		note(model.NoteWarning, "cannot read API discovery for grove.io/v1alpha1 (%v): Grove topology objects are unknown, so clusterTopologyName and packDomain are not checked", readReason(err))
	default:
		var gvr schema.GroupVersionResource
		switch {
		case slices.Contains(served, "clustertopologybindings"):
			gvr = GVRClusterTopologyBinding
		case slices.Contains(served, "clustertopologies"):
			gvr = GVRClusterTopology
		default:
			groveServed = false
		}
		if groveServed {
			ts, err := listAllPages(ctx, api, gvr, "", metav1.ListOptions{})
			if err != nil {
				topoKnown = false
				src.Degraded = true
				note(model.NoteWarning, "cannot list %s.grove.io (%v): clusterTopologyName and packDomain are not checked against the topology objects", gvr.Resource, readReason(err))
			}
			objs = append(objs, ts...)
		}
	}
	whole := make([]raw.Object, len(objs))
	for i, u := range objs {
		whole[i] = u.Object
	}
	return &raw.ClusterObjects{Objects: whole, Source: src, Notes: notes, PodsKnown: podsKnown, GroveServed: groveServed, TopologiesKnown: topoKnown}, nil
}

// nodeListError says why the Node LIST failed and what to do: only a
// refusal by RBAC is about permissions; an API server that cannot be reached
// (connection refused, no route, DNS, TLS) or that rejects the credentials is
// about the connection.
func nodeListError(ctx context.Context, detail string, err error) error {
	alt := "or check the manifests without the cluster: --nodes-from CAPTURE or --no-cluster"
	switch {
	case apierrors.IsForbidden(err):
		return fmt.Errorf("list nodes: %w: preflight needs list on nodes at cluster scope (docs/rbac.md), %s", err, alt)
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("list nodes: %s rejected the credentials (%w): refresh them (kubectl get nodes shows the same), %s", apiServerName(detail), err, alt)
	}
	if cause, ok := unreachableCause(ctx, err); ok {
		return fmt.Errorf("list nodes: %s is unreachable, %s: %s, %s", apiServerName(detail), cause, unreachableAdvice, alt)
	}
	return fmt.Errorf("list nodes: %w: %s", err, alt)
}

func readReason(err error) string {
	if apierrors.IsForbidden(err) {
		return "forbidden by RBAC"
	}
	return err.Error()
}

// listAll reads every page of a LIST.
func listAllPages(ctx context.Context, api API, gvr schema.GroupVersionResource, ns string, opts metav1.ListOptions) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	opts.Limit = DefaultPageSize
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

// Getter reads one object (a GET).
type Getter interface {
	Get(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, error)
}

// Get implements Getter with one GET request.
func (k *RESTAPI) Get(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, error) {
	return k.dyn.Resource(gvr).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
}

// ReadDeployments GETs each DynamoGraphDeployment at the apiVersion its
// manifest uses (the API server converts), so that preflight can apply the
// webhook's update rules to the ones that exist. Not found is an answer (the
// manifest creates the DGD); a GET that fails otherwise (RBAC, an unreachable
// server, the version not served) leaves that DGD unchecked, with a note.
func ReadDeployments(ctx context.Context, g Getter, refs []raw.DeploymentRef) *raw.ExistingDeployments {
	out := &raw.ExistingDeployments{Objects: map[string]raw.Object{}, Checked: map[string]bool{}}
	for _, r := range refs {
		key := r.Namespace + "/" + r.Name
		if out.Checked[key] {
			continue
		}
		gvr := GVRDynamoGraphDeploymentV1beta1
		if strings.HasSuffix(r.APIVersion, "/v1alpha1") {
			gvr = GVRDynamoGraphDeploymentV1alpha1
		}
		u, err := g.Get(ctx, gvr, r.Namespace, r.Name)
		switch {
		case err == nil:
			out.Objects[key], out.Checked[key] = u.Object, true
		case apierrors.IsNotFound(err):
			out.Checked[key] = true
		default:
			why := readReason(err)
			if apierrors.IsForbidden(err) {
				why = "forbidden by RBAC: preflight needs get on dynamographdeployments.nvidia.com (docs/rbac.md)"
			}
			out.Notes = append(out.Notes, model.Note{Severity: model.NoteWarning, Source: model.SourceKubernetes, Deployment: key,
				Message: fmt.Sprintf("cannot read the existing DynamoGraphDeployment (%s): the webhook's update rules were not checked, and the hints hold for a new deployment", why)})
		}
	}
	return out
}
