package completion

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/ai-dynamo/kubectl-dynamo/internal/cmdutil"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/build"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw/decode"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/kube"
)

// Timeout bounds everything one completion reads from the cluster; a shorter
// --request-timeout wins. A shell waits for completion, so an API server that does
// not answer must cost the user seconds, not a hang.
const Timeout = 5 * time.Second

// depth is how much of the cluster a completion needs.
type depth int

const (
	// readDeployments lists the DynamoGraphDeployments only (one or two requests).
	readDeployments depth = iota
	// readWorkers reads the deployments and their pods, nodes and worker metadata
	// (the Kubernetes part of a topology read; no etcd, no frontend).
	readWorkers
)

// gvrNamespaces is the namespace LIST of Namespaces.
var gvrNamespaces = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// read returns the snapshot a completion works on: the --from-file capture when
// the command line names one, else the cluster. It is filtered to the namespace
// the command would use and, when target is set, to that deployment.
func read(cmd *cobra.Command, f *cmdutil.Factory, target string, d depth) (*model.Snapshot, error) {
	if file := fromFile(cmd); file != "" {
		s, err := readCapture(file)
		if err != nil {
			return nil, err
		}
		ns := ""
		if cmd.Flags().Changed("namespace") && !allNamespaces(cmd) {
			ns, _, _ = f.ConfigFlags.ToRawKubeConfigLoader().Namespace()
		}
		filter(s, ns, target)
		return s, nil
	}
	cfg, ctx, cancel, err := live(cmd, f)
	if err != nil {
		return nil, err
	}
	defer cancel()
	ns, all := "", allNamespaces(cmd)
	if !all {
		if ns, _, err = f.ConfigFlags.ToRawKubeConfigLoader().Namespace(); err != nil {
			return nil, err
		}
	}
	var b *raw.Bundle
	switch d {
	case readDeployments:
		api, err := kube.NewAPI(cfg)
		if err != nil {
			return nil, err
		}
		objs, err := listDeployments(ctx, api, ns)
		if err != nil {
			return nil, err
		}
		b = &raw.Bundle{Objects: typed(objs)}
	default:
		var names []string
		if target != "" {
			names = []string{target}
		}
		b, err = source.Collect(ctx, source.CollectOptions{
			RESTConfig: cfg, Namespace: ns, AllNamespaces: all, Names: names,
			NoEtcd: true, NoFrontend: true, Now: f.Now,
		})
		if err != nil {
			return nil, err
		}
	}
	s, err := build.Build(b)
	if err != nil {
		return nil, err
	}
	filter(s, ns, target)
	return s, nil
}

// live returns the REST config and a context bounded by Timeout (or a shorter
// --request-timeout).
func live(cmd *cobra.Command, f *cmdutil.Factory) (*rest.Config, context.Context, context.CancelFunc, error) {
	cfg, err := f.ConfigFlags.ToRESTConfig()
	if err != nil {
		return nil, nil, nil, err
	}
	cfg = rest.CopyConfig(cfg)
	timeout := Timeout
	if cfg.Timeout > 0 && cfg.Timeout < timeout {
		timeout = cfg.Timeout
	}
	cfg.Timeout = timeout
	parent := cmd.Context()
	if parent == nil {
		parent = context.Background()
	}
	ctx, cancel := context.WithTimeout(parent, timeout)
	return cfg, ctx, cancel, nil
}

// listDeployments lists DynamoGraphDeployments at nvidia.com/v1beta1, else at
// v1alpha1 (older operators), in namespace ns ("" for all).
func listDeployments(ctx context.Context, api kube.API, ns string) ([]*unstructured.Unstructured, error) {
	var errs []error
	for _, gvr := range []schema.GroupVersionResource{kube.GVRDynamoGraphDeploymentV1beta1, kube.GVRDynamoGraphDeploymentV1alpha1} {
		list, err := api.List(ctx, gvr, ns, metav1.ListOptions{})
		if err != nil {
			errs = append(errs, fmt.Errorf("list %s: %w", gvr.GroupVersion(), err))
			if ctx.Err() != nil {
				break
			}
			continue
		}
		objs := make([]*unstructured.Unstructured, len(list.Items))
		for i := range list.Items {
			objs[i] = &list.Items[i]
		}
		return objs, nil
	}
	return nil, errors.Join(errs...)
}

// liveNamespaces lists the namespaces (nil when forbidden) and the deployments
// in all namespaces (nil when forbidden); the error is set when both failed.
func liveNamespaces(cmd *cobra.Command, f *cmdutil.Factory) ([]string, []model.Deployment, error) {
	cfg, ctx, cancel, err := live(cmd, f)
	if err != nil {
		return nil, nil, err
	}
	defer cancel()
	api, err := kube.NewAPI(cfg)
	if err != nil {
		return nil, nil, err
	}
	var names []string
	list, nsErr := api.List(ctx, gvrNamespaces, "", metav1.ListOptions{})
	if nsErr == nil {
		for _, u := range list.Items {
			names = append(names, u.GetName())
		}
		slices.Sort(names)
	}
	var deps []model.Deployment
	objs, dgdErr := listDeployments(ctx, api, "")
	if dgdErr == nil {
		s, err := build.Build(&raw.Bundle{Objects: typed(objs)})
		if err != nil {
			return names, nil, err
		}
		deps = s.Deployments
	}
	if nsErr != nil && dgdErr != nil {
		return nil, nil, errors.Join(nsErr, dgdErr)
	}
	return names, deps, nil
}

// readCapture reads and builds a capture file. Standard input ("-") is not read:
// a shell completing a command line has nothing to give it.
func readCapture(file string) (*model.Snapshot, error) {
	if file == "-" {
		return nil, errors.New("--from-file - (standard input) cannot be read while completing")
	}
	b, err := cmdutil.ReadCaptureFile(nil, file, "--from-file")
	if err != nil {
		return nil, err
	}
	return build.Build(b)
}

// filter keeps the deployments in namespace ns ("" for all) named target ("" for all).
func filter(s *model.Snapshot, ns, target string) {
	s.Deployments = slices.DeleteFunc(s.Deployments, func(d model.Deployment) bool {
		return (ns != "" && d.Namespace != ns) || (target != "" && d.Name != target)
	})
}

// fromFile is the --from-file value when the command has the flag and it is set.
func fromFile(cmd *cobra.Command) string {
	if fl := cmd.Flags().Lookup("from-file"); fl != nil && fl.Changed {
		return fl.Value.String()
	}
	return ""
}

// allNamespaces reports whether -A/--all-namespaces is set on the command.
func allNamespaces(cmd *cobra.Command) bool {
	fl := cmd.Flags().Lookup("all-namespaces")
	return fl != nil && fl.Value.String() == "true"
}

// typed types listed objects for Build.
func typed(objs []*unstructured.Unstructured) raw.Objects {
	whole := make([]raw.Object, len(objs))
	for i, u := range objs {
		whole[i] = u.Object
	}
	return decode.FromObjects(whole)
}
