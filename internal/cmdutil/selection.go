package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/kube"
)

// ShownDeployments is how many existing deployments an error about a selection
// that matched nothing lists before "and N more".
const ShownDeployments = 10

// Scope is the part of a data source a command was asked to read: the
// namespace and deployment names of its command line, and the source itself.
// Every data command (topology, explain-route, dashboard) checks its selection
// with Select, so that one rule holds live and offline: a namespace or name
// that matches nothing, or a source that holds no Dynamo deployment at all, is
// an error (exit 1) that lists what does exist.
type Scope struct {
	// Command is the command's name, for the hint ("topology").
	Command string
	// Source is the source flags as the user gave them (SourceArgs).
	Source []string
	// File is the --from-file value; "" for a live cluster.
	File string
	// Context is the kubeconfig context of a live run.
	Context string
	// Namespace is the namespace read ("" for every namespace); NamespaceGiven
	// says whether -n chose it (else it is the kubeconfig context's).
	Namespace      string
	NamespaceGiven bool
	// Names are the deployment names asked for (none: every deployment).
	Names []string
	// AllNamespaces says whether the command offers -A (for the hint).
	AllNamespaces bool
}

// Inventory returns the deployments that exist in the whole source
// ("namespace/name"), for the error of a selection that matched nothing.
type Inventory func(ctx context.Context) ([]string, error)

// Select keeps the deployments of s that are in the scope. When a name given
// matches no deployment, or nothing at all is left, it returns an error (exit 1)
// that lists the deployments the source holds and says what to run next.
// inventory is called only then; nil means s itself holds the whole source (a
// capture file, a live -A read), read before it is filtered.
func (sc Scope) Select(ctx context.Context, s *model.Snapshot, inventory Inventory) error {
	all := deploymentKeys(s.Deployments)
	if sc.Namespace != "" {
		s.Deployments = slices.DeleteFunc(s.Deployments, func(d model.Deployment) bool { return d.Namespace != sc.Namespace })
		s.Namespace = sc.Namespace
	}
	var missing []string
	for _, n := range sc.Names {
		if !slices.ContainsFunc(s.Deployments, func(d model.Deployment) bool { return d.Name == n }) {
			missing = append(missing, n)
		}
	}
	if len(sc.Names) > 0 {
		s.Deployments = slices.DeleteFunc(s.Deployments, func(d model.Deployment) bool { return !slices.Contains(sc.Names, d.Name) })
	}
	if len(missing) == 0 && len(s.Deployments) > 0 {
		return nil
	}
	var invErr error
	if inventory != nil {
		all, invErr = inventory(ctx)
	}
	slices.Sort(all)
	all = slices.Compact(all)
	return sc.noMatch(missing, all, invErr)
}

func deploymentKeys(ds []model.Deployment) []string {
	keys := make([]string, 0, len(ds))
	for i := range ds {
		keys = append(keys, ds[i].Key())
	}
	return keys
}

// where names the part of the source that was read.
func (sc Scope) where() string {
	src := "the capture file " + sc.File
	if sc.File == "-" {
		src = "the capture read from standard input"
	}
	if sc.File == "" {
		src = "the cluster"
		if sc.Context != "" {
			src = "context " + sc.Context
		}
	}
	switch {
	case sc.Namespace == "" && sc.File == "":
		return "any namespace of " + src
	case sc.Namespace == "":
		return src
	case sc.File == "" && !sc.NamespaceGiven:
		return "namespace " + sc.Namespace + " (the kubeconfig context's default; -n chooses another) of " + src
	}
	return "namespace " + sc.Namespace + " of " + src
}

func (sc Scope) noMatch(missing, all []string, invErr error) error {
	var msg string
	switch {
	case len(missing) == 1:
		msg = "no DynamoGraphDeployment named " + missing[0] + " in " + sc.where()
	case len(missing) > 1:
		msg = "no DynamoGraphDeployment named " + strings.Join(missing, ", ") + " in " + sc.where()
	default:
		msg = "no DynamoGraphDeployment in " + sc.where()
	}
	if len(all) == 0 && invErr == nil && sc.File != "" {
		// Nothing Dynamo in the file at all: the selection is beside the point.
		msg = Scope{File: sc.File}.where() + " holds no DynamoGraphDeployment and no Dynamo worker pod: is it a capture of a Dynamo deployment (kubectl dynamo capture)?"
		return WithHint(errors.New(msg), sc.hint(missing, all, invErr))
	}
	inv := ""
	switch {
	case invErr != nil:
		inv = "; the deployments of other namespaces could not be listed (" + invErr.Error() + ")"
	case len(all) == 0 && sc.Namespace != "":
		inv = ", nor in any other namespace"
	case len(all) > 0:
		holds := "the cluster holds "
		if sc.File != "" {
			holds = "it holds "
		}
		inv = "; " + holds + ListDeployments(all)
	}
	return WithHint(errors.New(msg+inv), sc.hint(missing, all, invErr))
}

// ListDeployments says how many deployments in how many namespaces, and names
// the first ShownDeployments ("namespace/name") with "and N more" after them.
func ListDeployments(keys []string) string {
	namespaces := map[string]bool{}
	for _, k := range keys {
		ns, _, _ := strings.Cut(k, "/")
		namespaces[ns] = true
	}
	shown := keys[:min(len(keys), ShownDeployments)]
	s := fmt.Sprintf("%s in %s: %s", plural(len(keys), "deployment"), plural(len(namespaces), "namespace"), strings.Join(shown, ", "))
	if more := len(keys) - len(shown); more > 0 {
		s += fmt.Sprintf(" and %d more", more)
	}
	return s
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// hint is the next step: the command again with the user's source flags and a
// namespace and name that exist.
func (sc Scope) hint(missing, all []string, invErr error) string {
	if len(all) == 0 {
		switch {
		case sc.File != "":
			return "Try: kubectl dynamo capture -n NAMESPACE > capture.yaml where the cluster is reachable, then --from-file capture.yaml; " +
				"or an example capture: " + CommandLine(sc.Command, []string{"--from-file", ExampleCapture})
		case invErr != nil:
			return "Try: " + CommandLine(sc.Command, sc.Source, "-n", "NAMESPACE") + " with a namespace that holds a deployment (kubectl get dynamographdeployments -A lists them)"
		}
		return "Check that this is the intended cluster (kubectl config current-context) and that the Dynamo operator runs there " +
			"(kubectl get dynamographdeployments -A); or work offline: " + CommandLine(sc.Command, []string{"--from-file", ExampleCapture})
	}
	// A name that exists in another namespace: point at it.
	for _, n := range append(slices.Clone(missing), sc.Names...) {
		for _, k := range all {
			if ns, name, _ := strings.Cut(k, "/"); name == n && ns != sc.Namespace {
				return "Try: " + CommandLine(sc.Command, sc.Source, "-n", ns, name)
			}
		}
	}
	// Prefer a deployment of the namespace the user named (a wrong name there);
	// else the first that exists.
	pick := all[0]
	for _, k := range all {
		if ns, _, _ := strings.Cut(k, "/"); ns == sc.Namespace {
			pick = k
			break
		}
	}
	ns, name, _ := strings.Cut(pick, "/")
	if len(sc.Names) > 0 || sc.Command == "explain-route" {
		return "Try: " + CommandLine(sc.Command, sc.Source, "-n", ns, name)
	}
	h := "Try: " + CommandLine(sc.Command, sc.Source, "-n", ns)
	if sc.AllNamespaces {
		h += ", or -A for every namespace"
	}
	return h
}

// ExampleCapture is the example capture hints point at (in the repository's
// examples/ directory).
const ExampleCapture = "examples/prefill-only-zone-required.yaml"

// CommandLine is "kubectl dynamo COMMAND SOURCE… ARGS…" for a hint: the
// user's own source flags, then args; explain-route's request flags are left
// to the user ("with the same request flags").
func CommandLine(command string, source []string, args ...string) string {
	parts := append([]string{"kubectl dynamo", command}, source...)
	parts = append(parts, args...)
	if command == "explain-route" {
		return strings.Join(parts, " ") + " with the same request flags"
	}
	return strings.Join(parts, " ")
}

// LiveInventory lists the DynamoGraphDeployments of every namespace the user
// may read (nvidia.com/v1beta1, else v1alpha1), for the error of a live
// selection that matched nothing. It sends one LIST (two on an older
// operator), bounded by timeout.
func LiveInventory(cfg *rest.Config, timeout time.Duration) Inventory {
	return func(ctx context.Context) ([]string, error) {
		if ctx == nil {
			ctx = context.Background()
		}
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		api, err := kube.NewAPI(cfg)
		if err != nil {
			return nil, err
		}
		var errs []error
		for _, gvr := range []schema.GroupVersionResource{kube.GVRDynamoGraphDeploymentV1beta1, kube.GVRDynamoGraphDeploymentV1alpha1} {
			list, err := api.List(ctx, gvr, "", metav1.ListOptions{})
			if err != nil {
				errs = append(errs, err)
				if ctx.Err() != nil {
					break
				}
				continue
			}
			keys := make([]string, 0, len(list.Items))
			for i := range list.Items {
				keys = append(keys, list.Items[i].GetNamespace()+"/"+list.Items[i].GetName())
			}
			return keys, nil
		}
		// One cause, on one line: the first version's (the second is only
		// tried because the first is not served).
		if apierrors.IsForbidden(errs[0]) {
			return nil, errors.New("forbidden: needs list on dynamographdeployments.nvidia.com in all namespaces")
		}
		return nil, errs[0]
	}
}
