package source

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"

	"k8s.io/client-go/rest"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/etcd"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/frontend"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/kube"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/redact"
)

// Source is one kind of live data source. Collect composes them; the dashboard
// reuses them to refresh one source at a time.
type Source interface {
	// Kind names the source.
	Kind() model.SourceKind
	// Collect reads the source into b: it appends objects, key-values or scrapes,
	// its SourceStatus and its Notes. Sources that depend on others (the frontend
	// on the Services read from Kubernetes) read them from b. The error is
	// reserved for a source that cannot be used at all and must stop the
	// collection; anything partial is a note.
	Collect(ctx context.Context, b *raw.Bundle) error
}

// KubeSource is the Kubernetes source as a Source.
type KubeSource struct {
	Options kube.Options
}

// Kind implements Source.
func (s *KubeSource) Kind() model.SourceKind { return model.SourceKubernetes }

// Collect implements Source.
func (s *KubeSource) Collect(ctx context.Context, b *raw.Bundle) error {
	r, err := kube.Collect(ctx, s.Options)
	if err != nil {
		return err
	}
	b.Objects.Append(r.Objects)
	b.AsRead = append(b.AsRead, r.AsRead...)
	b.Sources = append(b.Sources, r.Source)
	b.Notes = append(b.Notes, r.Notes...)
	return nil
}

// EtcdSource is the etcd source as a Source.
type EtcdSource struct {
	Options etcd.Options
}

// Kind implements Source.
func (s *EtcdSource) Kind() model.SourceKind { return model.SourceEtcd }

// Collect implements Source; it never fails (an unreachable etcd is a note).
func (s *EtcdSource) Collect(ctx context.Context, b *raw.Bundle) error {
	r := etcd.Collect(ctx, s.Options)
	b.Etcd = append(b.Etcd, r.KVs...)
	b.Sources = append(b.Sources, r.Source)
	b.Notes = append(b.Notes, r.Notes...)
	return nil
}

// FrontendSource is the frontend source as a Source. With no Options.Targets it
// finds the frontend Services in b.Objects (Targets); with URL set it
// reads that URL as the frontend of the only deployment in b.
type FrontendSource struct {
	Options frontend.Options
	// URL reaches the frontend directly (--frontend-url) instead of the service proxy.
	URL string
	// Placements also reads each frontend's KV placements stream (until the
	// snapshot ends) into Bundle.KvEvents, so captures and the dashboard hold
	// the router's view of the KV cache.
	Placements bool
}

// Kind implements Source.
func (s *FrontendSource) Kind() model.SourceKind { return model.SourceFrontend }

// Collect implements Source; it never fails (every problem is a note).
func (s *FrontendSource) Collect(ctx context.Context, b *raw.Bundle) error {
	o := s.Options
	if len(o.Targets) == 0 {
		var notes []model.Note
		if s.URL != "" {
			o.Targets, notes = URLTarget(b.Objects, s.URL)
		} else {
			o.Targets, notes = frontend.Targets(b.Objects)
		}
		b.Notes = append(b.Notes, notes...)
	}
	if len(o.Targets) == 0 {
		return nil
	}
	r := frontend.Collect(ctx, o)
	b.Metrics = append(b.Metrics, r.Metrics...)
	b.BusyThresholds = append(b.BusyThresholds, r.BusyThresholds...)
	b.Sources = append(b.Sources, r.Source)
	b.Notes = append(b.Notes, r.Notes...)
	if s.Placements {
		for _, t := range o.Targets {
			kv, note := readPlacementEvents(ctx, o, t)
			b.KvEvents = append(b.KvEvents, kv...)
			if note != nil {
				b.Notes = append(b.Notes, *note)
			}
		}
	}
	return nil
}

// readPlacementEvents reads one frontend's placements snapshot as KvEvents
// (one per source); a frontend without the stream, or a failed read, is a note.
func readPlacementEvents(ctx context.Context, o frontend.Options, t frontend.Target) ([]raw.KvEvents, *model.Note) {
	dep := t.Namespace + "/" + t.Deployment
	snap, err := o.ReadPlacements(ctx, t)
	if err != nil {
		sev := model.NoteWarning
		if errors.Is(err, frontend.ErrPlacementsUnsupported) {
			sev = model.NoteInfo
		}
		return nil, &model.Note{Severity: sev, Source: model.SourceFrontend, Deployment: dep,
			Message: "KV-cache contents not read: " + err.Error() + "; dry runs treat the cache as cold"}
	}
	var out []raw.KvEvents
	for _, src := range snap.Sources {
		out = append(out, raw.KvEvents{Namespace: t.Namespace, Deployment: t.Deployment, BlockSize: src.BlockSize,
			Source: snap.Source + " " + src.String(), Events: src.Events})
	}
	var note *model.Note
	if !snap.Complete || len(snap.Errors) > 0 {
		msg := "the KV placements snapshot is incomplete"
		if len(snap.Errors) > 0 {
			msg += " (" + strings.Join(snap.Errors, "; ") + ")"
		}
		note = &model.Note{Severity: model.NoteWarning, Source: model.SourceFrontend, Deployment: dep, Message: msg + ": overlaps may be understated"}
	}
	return out, note
}

// URLTarget attributes --frontend-url to the only deployment in objs.
func URLTarget(objs raw.Objects, u string) ([]frontend.Target, []model.Note) {
	deps := deploymentsIn(objs)
	switch len(deps) {
	case 1:
		ns, name, _ := strings.Cut(deps[0], "/")
		return []frontend.Target{{Namespace: ns, Deployment: name, URL: u}}, nil
	case 0:
		return nil, []model.Note{{Severity: model.NoteWarning, Source: model.SourceFrontend,
			Message: fmt.Sprintf("--frontend-url %s was not read: no deployment was found to attribute it to", redact.URLs(u))}}
	}
	return nil, []model.Note{{Severity: model.NoteWarning, Source: model.SourceFrontend,
		Message: fmt.Sprintf("--frontend-url %s was not read: it reaches one frontend but %d deployments are in scope (%s); name the deployment, e.g. kubectl dynamo topology %s -n %s --frontend-url …",
			redact.URLs(u), len(deps), strings.Join(deps, ", "), strings.SplitN(deps[0], "/", 2)[1], strings.SplitN(deps[0], "/", 2)[0])}}
}

// deploymentsIn lists "ns/name" of the DGDs in objs, or, without DGDs, of the
// deployments named by pod labels; sorted.
func deploymentsIn(objs raw.Objects) []string {
	set := map[string]bool{}
	for _, u := range objs.DGDs {
		set[u.Namespace+"/"+u.Name] = true
	}
	if len(set) == 0 {
		for _, u := range objs.Pods {
			if d := u.Labels[kube.SrcLabelDeploymentName]; d != "" {
				set[u.Namespace+"/"+d] = true
			}
		}
	}
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// CollectOptions select what Collect reads.
type CollectOptions struct {
	// RESTConfig reaches the cluster (ConfigFlags.ToRESTConfig: honours
	// --request-timeout); ignored when Kube is set.
	RESTConfig *rest.Config
	// Kube is the Kubernetes client; built from RESTConfig when nil.
	Kube kube.API
	// Context names the kubeconfig context (Bundle.Context, SourceStatus.Detail).
	Context string
	// Namespace, AllNamespaces and Names select the deployments.
	Namespace     string
	AllNamespaces bool
	Names         []string
	// NodeSelector narrows the single Node LIST.
	NodeSelector string
	// PageSize is the LIST page size (DefaultPageSize when 0).
	PageSize int64
	// Etcd configures the etcd source. It is read when Etcd.Endpoints is set, or
	// when the deployments use etcd discovery and the ETCD_ENDPOINTS of their
	// pods are reachable from here (see EtcdProbe).
	Etcd etcd.Options
	// NoEtcd disables the etcd source, auto-detection included.
	NoEtcd bool
	// TrustDetectedEtcd sends Etcd's credentials and client certificate also to
	// endpoints auto-detected from the pods' ETCD_ENDPOINTS (--etcd-trust-detected).
	// By default they go only to endpoints the user named (Etcd.Endpoints): a pod
	// is cluster data, and whoever can write one must not receive them.
	TrustDetectedEtcd bool
	// EtcdProbe tells whether an auto-detected endpoint is reachable; a 2-second
	// TCP dial when nil.
	EtcdProbe func(ctx context.Context, endpoint string) bool
	// NoFrontend disables the frontend source.
	NoFrontend bool
	// KVPlacements also reads the frontends' KV placements streams into
	// Bundle.KvEvents (capture --kv-cache, the dashboard).
	KVPlacements bool
	// FrontendURL reaches the frontend directly instead of through the service proxy.
	FrontendURL string
	// HTTPClient is used for FrontendURL.
	HTTPClient *http.Client
	// FrontendTimeout bounds each frontend request.
	FrontendTimeout time.Duration
	// Now returns the current time; time.Now when nil.
	Now func() time.Time
	// KeepObjects also keeps every Kubernetes object whole, as read
	// (Bundle.AsRead): the capture command writes them.
	KeepObjects bool
}

// Collect reads a Bundle from a live cluster: the Kubernetes objects, then etcd
// (when configured or detected), then the frontends. It fails only when the
// Kubernetes API cannot be used at all; everything partial is in Bundle.Notes
// and Bundle.Sources.
func Collect(ctx context.Context, o CollectOptions) (*raw.Bundle, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	api := o.Kube
	if api == nil {
		if o.RESTConfig == nil {
			return nil, errors.New("no Kubernetes configuration: pass a kubeconfig (--kubeconfig) or use --from-file")
		}
		k, err := kube.NewAPI(o.RESTConfig)
		if err != nil {
			return nil, err
		}
		api = k
	}
	detail := o.Context
	if o.RESTConfig != nil && o.RESTConfig.Host != "" {
		if detail != "" {
			detail += " "
		}
		detail += "(" + redact.URLs(o.RESTConfig.Host) + ")"
	}
	b := &raw.Bundle{Context: o.Context, CollectedAt: o.Now().UTC()}
	if !o.AllNamespaces {
		b.Namespace = o.Namespace
	}
	ks := &KubeSource{Options: kube.Options{API: api, Namespace: o.Namespace, AllNamespaces: o.AllNamespaces, Names: o.Names,
		NodeSelector: o.NodeSelector, PageSize: o.PageSize, Detail: detail, Now: o.Now, KeepObjects: o.KeepObjects}}
	if err := ks.Collect(ctx, b); err != nil {
		return nil, err
	}

	if !o.NoEtcd {
		eo := o.Etcd
		if eo.Now == nil {
			eo.Now = o.Now
		}
		if len(eo.Endpoints) == 0 {
			var notes []model.Note
			eo.Endpoints, notes = detectEtcd(ctx, b.Objects, o.EtcdProbe)
			b.Notes = append(b.Notes, notes...)
			if len(eo.Endpoints) > 0 {
				var note model.Note
				eo, note = detectedEtcdOptions(eo, o.TrustDetectedEtcd)
				b.Notes = append(b.Notes, note)
			}
		}
		if len(eo.Endpoints) > 0 {
			_ = (&EtcdSource{Options: eo}).Collect(ctx, b)
		}
	}

	if !o.NoFrontend {
		fs := &FrontendSource{URL: o.FrontendURL, Placements: o.KVPlacements,
			Options: frontend.Options{API: api, HTTPClient: o.HTTPClient, Timeout: o.FrontendTimeout, Now: o.Now}}
		_ = fs.Collect(ctx, b)
	}
	kube.SortCollectedNotes(b.Notes)
	return b, nil
}

// detectedEtcdOptions is eo for endpoints that the cluster's own data named:
// without the username, password and client certificate unless trust is set
// (the CA bundle stays: it only verifies the server). The note says which
// endpoints are read, why, and what was withheld.
func detectedEtcdOptions(eo etcd.Options, trust bool) (etcd.Options, model.Note) {
	eps := redact.URLs(strings.Join(eo.Endpoints, ","))
	hasCreds := eo.Username != "" || eo.Password != "" || eo.Cert != "" || eo.Key != ""
	var msg string
	switch {
	case !hasCreds:
		msg = fmt.Sprintf("etcd: reading %s, auto-detected from the ETCD_ENDPOINTS of the deployment's pods (no credentials configured)", eps)
	case trust:
		msg = fmt.Sprintf("etcd: reading %s, auto-detected from the ETCD_ENDPOINTS of the deployment's pods, with the configured credentials (--etcd-trust-detected)", eps)
	default:
		eo.Username, eo.Password, eo.Cert, eo.Key = "", "", "", ""
		msg = fmt.Sprintf("etcd: reading %s, auto-detected from the ETCD_ENDPOINTS of the deployment's pods, without the configured credentials and client certificate: "+
			"the cluster's own data named this endpoint, so they are sent only to endpoints you name; pass --etcd-endpoints %s (or --etcd-trust-detected) to use them", eps, eps)
	}
	return eo, model.Note{Severity: model.NoteInfo, Source: model.SourceEtcd, Message: msg}
}

// etcdDeployment is a deployment using etcd discovery and the endpoints its pods name.
type etcdDeployment struct {
	key       string
	endpoints []string
}

// detectEtcd finds deployments using etcd discovery (DGD annotation
// nvidia.com/dynamo-discovery-backend: etcd, or DYN_DISCOVERY_BACKEND=etcd in a
// pod) and the ETCD_ENDPOINTS their pods name. It returns the endpoints reachable
// from here, and a note for every deployment whose etcd is not reachable.
func detectEtcd(ctx context.Context, objs raw.Objects, probe func(context.Context, string) bool) ([]string, []model.Note) {
	if probe == nil {
		probe = dialProbe
	}
	deps := map[string]*etcdDeployment{}
	get := func(key string) *etcdDeployment {
		if deps[key] == nil {
			deps[key] = &etcdDeployment{key: key}
		}
		return deps[key]
	}
	usesEtcd := map[string]bool{}
	for _, u := range objs.DGDs {
		if strings.EqualFold(u.Annotations[kube.SrcAnnotationDiscoveryBackend], "etcd") {
			usesEtcd[u.Namespace+"/"+u.Name] = true
		}
	}
	for _, u := range objs.Pods {
		dgd := u.Labels[kube.SrcLabelDeploymentName]
		if dgd == "" {
			continue
		}
		key := u.Namespace + "/" + dgd
		env := podEnv(u)
		if strings.EqualFold(env["DYN_DISCOVERY_BACKEND"], "etcd") || strings.EqualFold(env["DYN_DISCOVERY_BACKEND"], "kv_store") {
			usesEtcd[key] = true
		}
		if eps := env["ETCD_ENDPOINTS"]; eps != "" {
			d := get(key)
			for _, e := range strings.Split(eps, ",") {
				if e = strings.TrimSpace(e); e != "" && !slices.Contains(d.endpoints, e) {
					d.endpoints = append(d.endpoints, e)
				}
			}
		}
	}
	keys := make([]string, 0, len(usesEtcd))
	for k := range usesEtcd {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var reachable []string
	var notes []model.Note
	for _, k := range keys {
		d := deps[k]
		if d == nil || len(d.endpoints) == 0 {
			notes = append(notes, model.Note{Severity: model.NoteWarning, Source: model.SourceEtcd, Deployment: k,
				Message: fmt.Sprintf("%s uses etcd discovery but its pods name no ETCD_ENDPOINTS: %s; pass --etcd-endpoints", k, etcd.Consequence)})
			continue
		}
		var ok []string
		for _, e := range d.endpoints {
			if slices.Contains(reachable, e) || probe(ctx, e) {
				ok = append(ok, e)
			}
		}
		if len(ok) == 0 {
			notes = append(notes, model.Note{Severity: model.NoteWarning, Source: model.SourceEtcd, Deployment: k,
				Message: fmt.Sprintf("%s uses etcd discovery (ETCD_ENDPOINTS=%s), which is not reachable from here: %s; port-forward etcd (e.g. kubectl port-forward svc/etcd 2379) and pass --etcd-endpoints http://localhost:2379",
					k, redact.URLs(strings.Join(d.endpoints, ",")), etcd.Consequence)})
			continue
		}
		for _, e := range ok {
			if !slices.Contains(reachable, e) {
				reachable = append(reachable, e)
			}
		}
	}
	return reachable, notes
}

// podEnv returns the literal env values of a pod's containers (first wins;
// values from Secrets or ConfigMaps are not resolved). An empty value counts
// as none: the API server never writes one (value is omitted when empty).
func podEnv(u *raw.Pod) map[string]string {
	env := map[string]string{}
	for _, cs := range [][]raw.Container{u.Spec.InitContainers, u.Spec.Containers} {
		for _, c := range cs {
			for _, e := range c.Env {
				if _, seen := env[e.Name]; e.Name != "" && e.Value != "" && !seen {
					env[e.Name] = e.Value
				}
			}
		}
	}
	return env
}

// dialProbe reports whether a TCP connection to the endpoint's host:port opens
// within 2 seconds.
func dialProbe(ctx context.Context, endpoint string) bool {
	host := endpoint
	if u, err := url.Parse(endpoint); err == nil && u.Host != "" {
		host = u.Host
	}
	if _, _, err := net.SplitHostPort(host); err != nil {
		host = net.JoinHostPort(host, "2379")
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", host)
	if err != nil {
		return false
	}
	_ = conn.Close()
	return true
}
