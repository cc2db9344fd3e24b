// Package completion holds the dynamic shell completions of kubectl dynamo: the
// names a user would otherwise look up with kubectl get before typing them.
//
// Every function returns a cobra.CompletionFunc for a positional argument
// (ValidArgsFunction) or a flag (RegisterFlagCompletionFunc):
//
//   - Deployments: DynamoGraphDeployment names (topology, capture, explain-route);
//   - Namespaces: for -n, the namespaces holding Dynamo deployments first;
//   - Contexts: for --context, from the kubeconfig only;
//   - Pods: a deployment's worker pods, optionally of some roles (--exclude-worker,
//     --prefill);
//   - DomainValues: DOMAIN=VALUE pairs of a deployment's KV-transfer domain
//     (--domain-down).
//
// They read what the command itself would read. When the command line already
// holds --from-file FILE, they read that capture file, so completion works
// offline and agrees with the report. Otherwise they read the cluster with the
// kubectl connection flags typed so far (--kubeconfig, --context, -n, -A): only
// LIST requests, bounded by Timeout (or a shorter --request-timeout), never etcd
// or the frontend. Any failure (no kubeconfig, an unreachable or slow API server,
// a 403) gives no completions and ShellCompDirectiveNoFileComp: completion never
// prints an error and never falls back to file names. Set BASH_COMP_DEBUG_FILE to
// see why a completion came back empty.
//
// Candidates are filtered by the prefix typed so far and carry a short
// description (shown by zsh, fish and PowerShell). Flags that take a
// comma-separated list (--exclude-worker a,b) complete the element after the
// last comma and leave out the elements already given.
package completion
