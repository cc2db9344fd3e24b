package cmdutil

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/etcd"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/kube"
)

// SourceFlags are the flags that reach Dynamo's own data sources besides the
// Kubernetes API: the discovery etcd and the frontend. Every command that reads a
// live deployment (topology, capture, explain-route, dashboard) registers them.
type SourceFlags struct {
	EtcdEndpoints   []string
	EtcdCACert      string
	EtcdCert        string
	EtcdKey         string
	EtcdUsername    string
	EtcdPassword    string
	EtcdDialTimeout time.Duration
	EtcdTimeout     time.Duration
	FrontendURL     string
	NoFrontend      bool
	NoEtcd          bool
	TrustDetected   bool
	NodeSelector    string

	// Getenv reads KDYN_ETCD_USERNAME and KDYN_ETCD_PASSWORD when the flags are
	// empty, and KUBECONFIG / KUBERNETES_SERVICE_HOST for the no-kubeconfig
	// error; os.Getenv when nil (tests replace it).
	Getenv func(string) string

	// command is the name of the command the flags are on (set by AddFlags).
	command string
	// noKubeconfig is set by CollectOptions when there is no cluster to read;
	// Validate returns it after the flag checks, so that a flag mistake is
	// reported first.
	noKubeconfig error
}

// AddFlags registers the flags on cmd.
func (s *SourceFlags) AddFlags(cmd *cobra.Command) {
	s.command = cmd.Name()
	fl := cmd.Flags()
	fl.StringSliceVar(&s.EtcdEndpoints, "etcd-endpoints", nil, "Dynamo discovery etcd endpoints (for deployments using etcd discovery), e.g. https://etcd:2379")
	fl.StringVar(&s.EtcdCACert, "etcd-cacert", "", "CA bundle to verify the etcd server")
	fl.StringVar(&s.EtcdCert, "etcd-cert", "", "Client certificate for etcd")
	fl.StringVar(&s.EtcdKey, "etcd-key", "", "Client key for etcd")
	fl.StringVar(&s.EtcdUsername, "etcd-username", "", "etcd user (or KDYN_ETCD_USERNAME)")
	fl.StringVar(&s.EtcdPassword, "etcd-password", "", "etcd password (or KDYN_ETCD_PASSWORD; never printed)")
	fl.DurationVar(&s.EtcdDialTimeout, "etcd-dial-timeout", 5*time.Second, "Timeout for connecting to etcd")
	fl.DurationVar(&s.EtcdTimeout, "etcd-timeout", 10*time.Second, "Timeout for each etcd request")
	fl.StringVar(&s.FrontendURL, "frontend-url", "", "Reach the frontend directly (e.g. http://localhost:8000 after a port-forward) instead of through the API server's service proxy")
	fl.BoolVar(&s.NoFrontend, "no-frontend", false, "Do not read the frontend's /metrics and /busy_threshold")
	fl.BoolVar(&s.NoEtcd, "no-etcd", false, "Do not read etcd, not even when the deployment's pods name one (ETCD_ENDPOINTS)")
	fl.BoolVar(&s.TrustDetected, "etcd-trust-detected", false, "Send the etcd credentials and client certificate also to an etcd the deployment's pods name (ETCD_ENDPOINTS); by default only to --etcd-endpoints")
	fl.StringVar(&s.NodeSelector, "node-selector", "", "Label selector narrowing the one Node LIST (e.g. nvidia.com/gpu.present=true)")
}

// Validate checks the source flags.
func (s *SourceFlags) Validate() error {
	if (s.EtcdCert == "") != (s.EtcdKey == "") {
		return FlagErrorf("--etcd-cert and --etcd-key must be given together")
	}
	if s.NoFrontend && s.FrontendURL != "" {
		return FlagErrorf("--no-frontend and --frontend-url cannot be used together")
	}
	if s.NoEtcd && len(s.EtcdEndpoints) > 0 {
		return FlagErrorf("--no-etcd and --etcd-endpoints cannot be used together")
	}
	if s.NoEtcd && s.TrustDetected {
		return FlagErrorf("--no-etcd and --etcd-trust-detected cannot be used together")
	}
	return s.noKubeconfig
}

// liveOnlyFlags read a live deployment and mean nothing with a capture file:
// the source flags, then kubectl's connection flags (-n stays: it filters
// the capture).
var liveOnlyFlags = []string{"etcd-endpoints", "etcd-cacert", "etcd-cert", "etcd-key", "etcd-username", "etcd-password",
	"etcd-dial-timeout", "etcd-timeout", "frontend-url", "no-frontend", "no-etcd", "etcd-trust-detected", "node-selector",
	"kubeconfig", "context", "cluster", "user", "server", "token", "as", "as-group", "as-uid", "username", "password",
	"certificate-authority", "client-certificate", "client-key", "insecure-skip-tls-verify", "tls-server-name",
	"request-timeout", "disable-compression"}

// LiveOnlyFlagsSet names the flags given on cmd that read a live deployment
// (liveOnlyFlags), such as --etcd-endpoints or --context.
func (s *SourceFlags) LiveOnlyFlagsSet(cmd *cobra.Command) []string {
	var set []string
	for _, name := range liveOnlyFlags {
		if cmd.Flags().Changed(name) {
			set = append(set, "--"+name)
		}
	}
	return set
}

// CollectOptions turns the flags and the kubectl connection flags into the
// options of a live collection.
func (s *SourceFlags) CollectOptions(f *Factory, namespace string, all bool, names []string) (source.CollectOptions, error) {
	s.noKubeconfig = NoKubeconfig(f, s.command, s.Getenv)
	cfg, err := f.ConfigFlags.ToRESTConfig()
	if err != nil {
		return source.CollectOptions{}, WithHint(fmt.Errorf("load the kubeconfig: %w", err), kubeconfigHint(f, s.command))
	}
	contextName := ""
	if f.ConfigFlags.Context != nil && *f.ConfigFlags.Context != "" {
		contextName = *f.ConfigFlags.Context
	} else if raw, err := f.ConfigFlags.ToRawKubeConfigLoader().RawConfig(); err == nil {
		contextName = raw.CurrentContext
	}
	etcd := etcd.Options{
		Endpoints: s.EtcdEndpoints, CACert: s.EtcdCACert, Cert: s.EtcdCert, Key: s.EtcdKey,
		Username: s.EtcdUsername, Password: s.EtcdPassword,
		DialTimeout: s.EtcdDialTimeout, RequestTimeout: s.EtcdTimeout, Now: f.Now,
	}.WithEnv(s.Getenv)
	return source.CollectOptions{
		RESTConfig: cfg, Context: contextName,
		Namespace: namespace, AllNamespaces: all, Names: names, NodeSelector: s.NodeSelector,
		Etcd: etcd, NoEtcd: s.NoEtcd, TrustDetectedEtcd: s.TrustDetected, NoFrontend: s.NoFrontend, FrontendURL: s.FrontendURL, Now: f.Now,
	}, nil
}

// Collector returns a function that reads the live deployment each time it is
// called (once for a report, repeatedly for --watch).
func (s *SourceFlags) Collector(f *Factory, namespace string, all bool, names []string) (func(ctx context.Context) (*raw.Bundle, error), error) {
	opts, err := s.CollectOptions(f, namespace, all, names)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) (*raw.Bundle, error) { return source.Collect(ctx, opts) }, nil
}

// FromFile prepares a command's --from-file mode: it refuses the live-only
// source flags, returns the namespace given with -n ("" when not given: every
// deployment of the file) and a loader that reads and parses the capture (at
// most capture.MaxBytes; "-" reads in).
func (s *SourceFlags) FromFile(f *Factory, cmd *cobra.Command, in io.Reader, name string) (string, func(context.Context) (*raw.Bundle, error), error) {
	if set := s.LiveOnlyFlagsSet(cmd); len(set) > 0 {
		verb := "reads"
		if len(set) > 1 {
			verb = "read"
		}
		return "", nil, FlagErrorf("%s %s a live deployment and cannot be used with --from-file, which reads the capture instead: drop %s, or drop --from-file to read the cluster",
			strings.Join(set, ", "), verb, map[bool]string{true: "them", false: "it"}[len(set) > 1])
	}
	namespace := ""
	if cmd.Flags().Changed("namespace") {
		if ns, _, err := f.ConfigFlags.ToRawKubeConfigLoader().Namespace(); err == nil {
			namespace = ns
		}
	}
	load := func(context.Context) (*raw.Bundle, error) {
		return ReadCaptureFile(in, name, "--from-file")
	}
	return namespace, load, nil
}

// LiveNamespace is the kubeconfig's namespace (or -n), with a hint naming the
// command when it cannot be resolved.
func LiveNamespace(f *Factory, command string) (string, error) {
	ns, _, err := f.ConfigFlags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		// Only a broken kubeconfig or context fails here (-n would not help).
		return "", WithHint(fmt.Errorf("resolve the namespace from the kubeconfig: %w", err), kubeconfigHint(f, command))
	}
	return ns, nil
}

// kubeconfigHint is the next step when the kubeconfig (or the context chosen
// in it) cannot be used: list its contexts and pick one, reading the same
// kubeconfig the user named; or work offline on a capture or an example.
func kubeconfigHint(f *Factory, command string) string {
	var kubeconfig []string
	if k := f.ConfigFlags.KubeConfig; k != nil && *k != "" {
		kubeconfig = []string{"--kubeconfig", shellWord(*k)}
	}
	h := "Try: " + strings.Join(append([]string{"kubectl config get-contexts"}, kubeconfig...), " ") + " to list the contexts, then " +
		CommandLine(command, kubeconfig, "--context", "NAME")
	if command == "capture" {
		return h // capture reads a cluster or nothing
	}
	return h + "; or work offline: " +
		CommandLine(command, []string{"--from-file", "capture.yaml"}) + " (kubectl dynamo capture writes one), or an example: " +
		CommandLine(command, []string{"--from-file", ExampleCapture})
}

// NoKubeconfig returns an error when a live run has no cluster to read at
// all: no kubeconfig (no --kubeconfig, KUBECONFIG unset or naming no cluster,
// no ~/.kube/config), no --server and not inside a pod. client-go would fall back
// to http://localhost:8080 and fail with "unreachable"; this says what is
// missing and points at the offline mode and the examples. getenv is os.Getenv
// when nil.
func NoKubeconfig(f *Factory, command string, getenv func(string) string) error {
	if getenv == nil {
		getenv = os.Getenv
	}
	if f.ConfigFlags.APIServer != nil && *f.ConfigFlags.APIServer != "" {
		return nil
	}
	if getenv("KUBERNETES_SERVICE_HOST") != "" {
		return nil // in-cluster configuration
	}
	raw, err := f.ConfigFlags.ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return nil //nolint:nilerr // a broken kubeconfig is reported by the loader, with its own cause
	}
	if len(raw.Clusters) > 0 {
		return nil
	}
	where := "KUBECONFIG is not set and ~/.kube/config does not exist"
	switch {
	case f.ConfigFlags.KubeConfig != nil && *f.ConfigFlags.KubeConfig != "":
		where = "--kubeconfig " + *f.ConfigFlags.KubeConfig + " names no cluster"
	case getenv("KUBECONFIG") != "":
		where = "KUBECONFIG names no cluster"
		if !anyFileExists(filepath.SplitList(getenv("KUBECONFIG"))) {
			where = "the file KUBECONFIG names does not exist"
		}
	}
	err = fmt.Errorf("no kubeconfig: %s, so there is no cluster to read", where)
	if command == "capture" || command == "" {
		return WithHint(err, "Try: kubectl dynamo capture --kubeconfig FILE (or set KUBECONFIG) on a machine with access to the cluster")
	}
	return WithHint(err, "Try: "+CommandLine(command, []string{"--from-file", "capture.yaml"})+" to work offline on a capture (kubectl dynamo capture writes one), "+
		"or on an example from the repository's examples/ directory: "+CommandLine(command, []string{"--from-file", ExampleCapture}))
}

func anyFileExists(paths []string) bool {
	for _, p := range paths {
		if _, err := os.Stat(p); err == nil {
			return true
		}
	}
	return false
}

// SourceArgs are the flags of cmd's command line that chose the data source,
// as the user gave them (--from-file FILE offline; --kubeconfig and --context
// live), so that a next-step hint runs against the same data.
func SourceArgs(cmd *cobra.Command) []string {
	var out []string
	if fl := cmd.Flags().Lookup("from-file"); fl != nil && fl.Changed {
		return []string{"--from-file", shellWord(fl.Value.String())}
	}
	for _, name := range []string{"kubeconfig", "context"} {
		if fl := cmd.Flags().Lookup(name); fl != nil && fl.Changed {
			out = append(out, "--"+name, shellWord(fl.Value.String()))
		}
	}
	return out
}

// shellWord quotes s for a POSIX shell when it holds anything but plain
// characters.
func shellWord(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		plain := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_=,./:@%+~", r)
		return !plain
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// LiveSource is what a one-deployment command (explain-route, simulate)
// needs to read the cluster: the namespace, the collection options with one
// Kubernetes client and the SSRF-safe HTTP client set, and the inventory
// that lists what exists when the selection matches nothing.
type LiveSource struct {
	Namespace string
	Options   source.CollectOptions
	Inventory Inventory
}

// Live prepares a live read of the named deployment ("" for the namespace's
// only one). client is the HTTP client for frontends and indexers (nil: a
// default); it is wrapped by kube.SafeHTTPClient either way.
func (s *SourceFlags) Live(f *Factory, command, name string, client *http.Client) (*LiveSource, error) {
	ns, err := LiveNamespace(f, command)
	if err != nil {
		return nil, err
	}
	var names []string
	if name != "" {
		names = []string{name}
	}
	opts, err := s.CollectOptions(f, ns, false, names)
	if err != nil {
		return nil, err
	}
	api, err := kube.NewAPI(opts.RESTConfig)
	if err != nil {
		return nil, err
	}
	opts.Kube = api
	opts.HTTPClient = kube.SafeHTTPClient(client)
	timeout := 10 * time.Second
	if t := opts.RESTConfig.Timeout; t > 0 {
		timeout = t
	}
	return &LiveSource{Namespace: ns, Options: opts, Inventory: LiveInventory(opts.RESTConfig, timeout)}, nil
}
