package completion

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ai-dynamo/kubectl-dynamo/internal/cmdutil"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
)

// noFile is the directive of every completion here: names, never file names.
const noFile = cobra.ShellCompDirectiveNoFileComp

// Target picks, from the command line typed so far, the deployment a completion
// is about; "" means every deployment in scope.
type Target func(cmd *cobra.Command, args []string) string

// Arg is the Target named by the i-th positional argument (explain-route DGD):
// "" until it is typed, so that, like the command, completion then covers the
// deployments in scope.
func Arg(i int) Target {
	return func(_ *cobra.Command, args []string) string {
		if i >= 0 && i < len(args) {
			return args[i]
		}
		return ""
	}
}

// Flag is the Target named by a string flag's value ("" when not given).
func Flag(name string) Target {
	return func(cmd *cobra.Command, _ []string) string {
		if fl := cmd.Flags().Lookup(name); fl != nil {
			return fl.Value.String()
		}
		return ""
	}
}

// Deployments completes DynamoGraphDeployment names in the namespace the command
// line selects (or in the --from-file capture), leaving out the names already
// given. With -A it offers no name (commands take names only within one
// namespace, as kubectl does) and says so as active help.
func Deployments(f *cmdutil.Factory) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if allNamespaces(cmd) {
			return cobra.AppendActiveHelp(nil, "deployment names are taken within one namespace: drop -A and pass -n NAMESPACE"), noFile
		}
		s, err := read(cmd, f, "", readDeployments)
		if err != nil {
			debug(cmd, err)
			return nil, noFile
		}
		var out []cobra.Completion
		seen := map[string]bool{}
		for _, d := range s.Deployments {
			if seen[d.Name] || slices.Contains(args, d.Name) || !strings.HasPrefix(d.Name, toComplete) {
				continue
			}
			seen[d.Name] = true
			out = append(out, cobra.CompletionWithDesc(d.Name, describeDeployment(&d)))
		}
		return out, noFile
	}
}

// MaxArgs offers fn's completions only while fewer than n positional arguments
// are given, for commands taking at most n (explain-route [DGD]: MaxArgs(1, …)).
func MaxArgs(n int, fn cobra.CompletionFunc) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) >= n {
			return nil, noFile
		}
		return fn(cmd, args, toComplete)
	}
}

// Namespaces completes -n: the namespaces holding Dynamo deployments (described
// with their deployments' names), then every other namespace the user may list.
// Users whose role has no list on namespaces (docs/rbac.md's role has none) still
// get the namespaces of the deployments they can read.
func Namespaces(f *cmdutil.Factory) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		byNS := map[string][]string{}
		var others []string
		if file := fromFile(cmd); file != "" {
			s, err := readCapture(file)
			if err != nil {
				debug(cmd, err)
				return nil, noFile
			}
			for _, d := range s.Deployments {
				byNS[d.Namespace] = append(byNS[d.Namespace], d.Name)
			}
		} else {
			names, dgds, err := liveNamespaces(cmd, f)
			if err != nil {
				debug(cmd, err)
			}
			for _, d := range dgds {
				byNS[d.Namespace] = append(byNS[d.Namespace], d.Name)
			}
			others = names
		}
		var out []cobra.Completion
		for _, ns := range sortedKeys(byNS) {
			if strings.HasPrefix(ns, toComplete) {
				out = append(out, cobra.CompletionWithDesc(ns, plural(len(byNS[ns]), "Dynamo deployment")+": "+joinShort(byNS[ns], 3)))
			}
		}
		for _, ns := range others {
			if byNS[ns] == nil && strings.HasPrefix(ns, toComplete) {
				out = append(out, ns)
			}
		}
		return out, noFile | cobra.ShellCompDirectiveKeepOrder
	}
}

// Contexts completes --context from the kubeconfig (no request is sent).
func Contexts(f *cmdutil.Factory) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		raw, err := f.ConfigFlags.ToRawKubeConfigLoader().RawConfig()
		if err != nil {
			debug(cmd, err)
			return nil, noFile
		}
		var out []cobra.Completion
		for _, name := range sortedKeys(raw.Contexts) {
			if !strings.HasPrefix(name, toComplete) {
				continue
			}
			c := raw.Contexts[name]
			desc := "cluster " + c.Cluster
			if c.Namespace != "" {
				desc += ", namespace " + c.Namespace
			}
			if name == raw.CurrentContext {
				desc += " (current)"
			}
			out = append(out, cobra.CompletionWithDesc(name, desc))
		}
		return out, noFile
	}
}

// Pods completes the worker pods of the target deployment (every deployment in
// scope when the target is ""), limited to the given roles when any, e.g.
// model.RolePrefill for --prefill. A multinode replica is offered once, by
// the pod that publishes it (rank 0), which is how reports name workers.
func Pods(f *cmdutil.Factory, target Target, roles ...model.Role) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		s, err := read(cmd, f, target(cmd, args), readWorkers)
		if err != nil {
			debug(cmd, err)
			return nil, noFile
		}
		given, last := splitList(toComplete)
		var out []cobra.Completion
		seen := map[string]bool{}
		for _, d := range s.Deployments {
			for _, w := range d.Workers {
				if !w.Leader || (len(roles) > 0 && !slices.Contains(roles, w.Role)) {
					continue
				}
				if seen[w.Pod] || slices.Contains(given, w.Pod) || !strings.HasPrefix(w.Pod, last) {
					continue
				}
				seen[w.Pod] = true
				out = append(out, cobra.CompletionWithDesc(joinList(given, w.Pod), describeWorker(&d, &w)))
			}
		}
		return out, noFile
	}
}

// DomainValues completes DOMAIN=VALUE for the target deployment's KV-transfer
// domain (zone=us-east-1c), one per value its workers carry, described with the
// ready prefill and decode workers there. Deployments without a kvTransferPolicy
// have no domain and contribute nothing.
func DomainValues(f *cmdutil.Factory, target Target) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		s, err := read(cmd, f, target(cmd, args), readWorkers)
		if err != nil {
			debug(cmd, err)
			return nil, noFile
		}
		given, last := splitList(toComplete)
		type counts struct{ prefill, decode, other int }
		byPair := map[string]*counts{}
		for _, d := range s.Deployments {
			if d.Policy == nil || d.Policy.Domain == "" {
				continue
			}
			for _, w := range d.Workers {
				v := w.Domain.Effective()
				if !w.Leader || v == "" {
					continue
				}
				pair := d.Policy.Domain + "=" + v
				c := byPair[pair]
				if c == nil {
					c = &counts{}
					byPair[pair] = c
				}
				if !w.Ready {
					continue
				}
				switch w.Role {
				case model.RolePrefill:
					c.prefill++
				case model.RoleDecode:
					c.decode++
				default:
					c.other++
				}
			}
		}
		var out []cobra.Completion
		for _, pair := range sortedKeys(byPair) {
			if slices.Contains(given, pair) || !strings.HasPrefix(pair, last) {
				continue
			}
			c := byPair[pair]
			desc := fmt.Sprintf("%d prefill, %d decode ready", c.prefill, c.decode)
			if c.other > 0 {
				desc += fmt.Sprintf(", %d other", c.other)
			}
			out = append(out, cobra.CompletionWithDesc(joinList(given, pair), desc))
		}
		return out, noFile
	}
}

// describeDeployment is "zone required, namespace serving".
func describeDeployment(d *model.Deployment) string {
	policy := "no kvTransferPolicy"
	if p := d.Policy; p != nil {
		policy = p.Domain + " " + string(p.Enforcement)
	}
	return policy + ", namespace " + d.Namespace
}

// describeWorker is "prefill, zone us-east-1a" (", not ready" when it is not).
func describeWorker(d *model.Deployment, w *model.Worker) string {
	desc := string(w.Role)
	if d.Policy != nil && d.Policy.Domain != "" {
		v := w.Domain.Effective()
		if v == "" {
			v = "(no value)"
		}
		desc += ", " + d.Policy.Domain + " " + v
	}
	if !w.Ready {
		desc += ", not ready"
	}
	return desc
}

// splitList splits a comma-separated flag value being typed into the complete
// elements before the last comma and the element being completed.
func splitList(toComplete string) (given []string, last string) {
	i := strings.LastIndexByte(toComplete, ',')
	if i < 0 {
		return nil, toComplete
	}
	return strings.Split(toComplete[:i], ","), toComplete[i+1:]
}

// joinList rebuilds the flag value with the completed element.
func joinList(given []string, v string) string {
	if len(given) == 0 {
		return v
	}
	return strings.Join(given, ",") + "," + v
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// joinShort lists at most n names, then "…".
func joinShort(names []string, n int) string {
	names = slices.Clone(names)
	sort.Strings(names)
	if len(names) > n {
		return strings.Join(names[:n], ", ") + ", …"
	}
	return strings.Join(names, ", ")
}

// debug explains an empty completion in $BASH_COMP_DEBUG_FILE (never on the
// terminal: completion must stay silent).
func debug(cmd *cobra.Command, err error) {
	cobra.CompDebugln(fmt.Sprintf("kubectl dynamo %s: no completions: %v", cmd.Name(), err), false)
}
