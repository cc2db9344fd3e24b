package frontend

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/iolimit"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/kube"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/redact"
)

// Frontend source defaults.
const (
	// DefaultTimeout bounds each frontend request.
	DefaultTimeout = 10 * time.Second
	// DefaultMaxMetricsBytes bounds a /metrics answer.
	DefaultMaxMetricsBytes = 64 << 20
	// DefaultMaxBusyThresholdBytes bounds a /busy_threshold answer.
	DefaultMaxBusyThresholdBytes = 1 << 20
	// DefaultPort is the frontend's HTTP port.
	DefaultPort = 8000
)

// Target is one deployment's frontend: a Service reached through the
// API server's service proxy, or a URL reached directly.
type Target struct {
	Namespace  string
	Deployment string
	// Service and Port (a port name or number) are used when URL is empty.
	Service string
	Port    string
	// URL is the frontend's base URL (http or https), e.g. http://localhost:8000.
	URL string
}

// where describes the target for notes and Source fields.
func (t Target) where() string {
	if t.URL != "" {
		return redact.URLs(t.URL)
	}
	return "service " + t.Namespace + "/" + t.Service + ":" + t.Port
}

// Options configure the frontend source.
type Options struct {
	// API reaches Services through the service proxy; needed for targets without URL.
	API kube.API
	// HTTPClient reaches URL targets; a client without redirects to other hosts
	// when nil.
	HTTPClient *http.Client
	// Targets are the frontends read.
	Targets []Target
	// Timeout bounds each request; DefaultTimeout when 0.
	Timeout time.Duration
	// MaxMetricsBytes and MaxBusyThresholdBytes are size limits (defaults above).
	MaxMetricsBytes       int64
	MaxBusyThresholdBytes int64
	// MaxTokenizeBytes bounds a POST /tokenize answer (Tokenize);
	// DefaultMaxTokenizeBytes when 0.
	MaxTokenizeBytes int64
	// MaxPlacementBytes bounds a whole KV placement snapshot and
	// MaxPlacementLineBytes one of its lines (ReadPlacements);
	// DefaultMaxPlacementBytes and DefaultMaxPlacementLineBytes when 0.
	MaxPlacementBytes     int64
	MaxPlacementLineBytes int64
	// PlacementTimeout bounds the whole placement snapshot read, from the
	// request to placement_snapshot_end; when 0, DefaultPlacementTimeout or
	// Timeout, whichever is longer.
	PlacementTimeout time.Duration
	// Now returns the current time; time.Now when nil.
	Now func() time.Time
}

// Result is what the frontend source read.
type Result struct {
	Metrics        []raw.FrontendMetrics
	BusyThresholds []raw.FrontendBusyThresholds
	Source         model.SourceStatus
	Notes          []model.Note
	// Requests is the number of HTTP GETs made.
	Requests int
}

// Targets finds each deployment's frontend Service among objs: a Service
// labelled nvidia.com/dynamo-graph-deployment-name=<dgd> and
// nvidia.com/dynamo-component-type=frontend, port named "http", else port 8000,
// else its only port. Deployments are the DGDs in objs (or, without DGDs, the
// deployments named by pod labels). A deployment without a frontend Service gets
// a note.
func Targets(objs raw.Objects) ([]Target, []model.Note) {
	deployments := map[string]bool{} // ns/name
	frontendPods := map[string]bool{}
	for _, u := range objs.DGDs {
		deployments[u.Namespace+"/"+u.Name] = true
	}
	for _, u := range objs.Pods {
		if d := u.Labels[kube.SrcLabelDeploymentName]; d != "" && u.Labels[kube.SrcLabelComponentType] == "frontend" {
			frontendPods[u.Namespace+"/"+d] = true
		}
	}
	hasDGD := len(deployments) > 0
	if !hasDGD {
		for k := range frontendPods {
			deployments[k] = true
		}
	}
	found := map[string]Target{}
	for _, u := range objs.Services {
		l := u.Labels
		key := u.Namespace + "/" + l[kube.SrcLabelDeploymentName]
		if l[kube.SrcLabelComponentType] != "frontend" || !deployments[key] {
			continue
		}
		if prev, ok := found[key]; ok && prev.Service < u.Name {
			continue // several: the first by name, deterministically
		}
		found[key] = Target{Namespace: u.Namespace, Deployment: l[kube.SrcLabelDeploymentName], Service: u.Name, Port: servicePort(u)}
	}
	keys := make([]string, 0, len(deployments))
	for k := range deployments {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var targets []Target
	var notes []model.Note
	for _, k := range keys {
		if t, ok := found[k]; ok {
			targets = append(targets, t)
			continue
		}
		notes = append(notes, model.Note{Severity: model.NoteInfo, Source: model.SourceFrontend, Deployment: k,
			Message: fmt.Sprintf("no frontend Service found for %s (labels %s, %s=frontend): live load and busy thresholds are unknown; port-forward the frontend and pass --frontend-url", k, kube.SrcLabelDeploymentName, kube.SrcLabelComponentType)})
	}
	return targets, notes
}

// servicePort picks the frontend's HTTP port of a Service.
func servicePort(u *raw.Service) string {
	ports, _, _ := unstructured.NestedSlice(u.Spec, "ports")
	var byNumber, only string
	for _, p := range ports {
		m, _ := p.(map[string]any)
		name, _ := m["name"].(string)
		port, _, _ := unstructured.NestedInt64(m, "port")
		if name == "http" {
			return name
		}
		if port == DefaultPort {
			byNumber = strconv.Itoa(DefaultPort)
			if name != "" {
				byNumber = name
			}
		}
		if len(ports) == 1 {
			only = strconv.FormatInt(port, 10)
			if name != "" {
				only = name
			}
		}
	}
	switch {
	case byNumber != "":
		return byNumber
	case only != "":
		return only
	}
	return strconv.Itoa(DefaultPort)
}

// Collect GETs /metrics and /busy_threshold from every target. It never
// sends anything but GET. Every failure (no Service endpoints, 404, 500, a
// timeout, an oversized or unparsable answer) is a note; the result is always
// non-nil.
func Collect(ctx context.Context, o Options) *Result {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxMetricsBytes <= 0 {
		o.MaxMetricsBytes = DefaultMaxMetricsBytes
	}
	if o.MaxBusyThresholdBytes <= 0 {
		o.MaxBusyThresholdBytes = DefaultMaxBusyThresholdBytes
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	o.HTTPClient = kube.SafeHTTPClient(o.HTTPClient)
	res := &Result{Source: model.SourceStatus{Kind: model.SourceFrontend, At: o.Now().UTC()}}
	var details, problems []string
	for _, t := range o.Targets {
		details = append(details, t.where())
		dep := t.Namespace + "/" + t.Deployment
		note := func(sev model.NoteSeverity, msg string) {
			res.Notes = append(res.Notes, model.Note{Severity: sev, Source: model.SourceFrontend, Deployment: dep, Message: msg})
		}

		body, err := o.get(ctx, t, "/metrics", o.MaxMetricsBytes)
		res.Requests++
		switch {
		case err != nil:
			note(model.NoteWarning, fmt.Sprintf("cannot read /metrics from the frontend of %s (%s): %s: live load (active decode blocks, prefill tokens) and the router's worker states are unknown", dep, t.where(), describeFrontendErr(err, o.Timeout)))
			problems = append(problems, dep+" /metrics")
		default:
			if line, bad := NotPrometheusText(body); bad {
				note(model.NoteWarning, fmt.Sprintf("the frontend of %s (%s) answered /metrics with something that is not Prometheus text (line %d): live load is unknown; is %s really the Dynamo frontend?", dep, t.where(), line, t.where()))
				problems = append(problems, dep+" /metrics unparsable")
			} else {
				res.Metrics = append(res.Metrics, raw.FrontendMetrics{Namespace: t.Namespace, Deployment: t.Deployment, Source: t.where(), At: o.Now().UTC(), Text: string(body)})
			}
		}

		body, err = o.get(ctx, t, "/busy_threshold", o.MaxBusyThresholdBytes)
		res.Requests++
		switch {
		case isHTTPStatus(err, http.StatusNotFound) || isHTTPStatus(err, http.StatusMethodNotAllowed):
			note(model.NoteInfo, fmt.Sprintf("the frontend of %s (%s) has no GET /busy_threshold (older Dynamo, or the admin API disabled): busy thresholds are taken from the frontend's args and env", dep, t.where()))
		case err != nil:
			note(model.NoteInfo, fmt.Sprintf("cannot read /busy_threshold from the frontend of %s (%s): %s: busy thresholds are taken from the frontend's args and env", dep, t.where(), describeFrontendErr(err, o.Timeout)))
		case !json.Valid(body):
			note(model.NoteInfo, fmt.Sprintf("the frontend of %s (%s) answered /busy_threshold with invalid JSON: busy thresholds are taken from the frontend's args and env", dep, t.where()))
		default:
			res.BusyThresholds = append(res.BusyThresholds, raw.FrontendBusyThresholds{Namespace: t.Namespace, Deployment: t.Deployment, Source: t.where(), At: o.Now().UTC(), JSON: string(body)})
		}
	}
	res.Source.Detail = strings.Join(details, ", ")
	if len(problems) > 0 {
		res.Source.Degraded = true
		res.Source.Message = "unreadable: " + strings.Join(problems, ", ")
	}
	return res
}

// httpStatusError is a non-2xx answer from a URL target.
type httpStatusError struct {
	Code   int
	Status string
	// Message is the answer's error message, when it had one (set by the
	// route-input requests only).
	Message string
}

func (e *httpStatusError) Error() string {
	if e.Message != "" {
		return "HTTP " + e.Status + ": " + e.Message
	}
	return "HTTP " + e.Status
}

func isHTTPStatus(err error, code int) bool {
	var he *httpStatusError
	if errors.As(err, &he) {
		return he.Code == code
	}
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		return int(st.Status().Code) == code && !serviceMissing(err)
	}
	return false
}

// serviceMissing reports whether a service-proxy error says the Service itself
// does not exist (also a 404, like a frontend without the path).
func serviceMissing(err error) bool {
	return apierrors.IsNotFound(err) && strings.Contains(err.Error(), `services "`)
}

// describeFrontendErr is a short, actionable description of a frontend error.
func describeFrontendErr(err error, timeout time.Duration) string {
	var st apierrors.APIStatus
	var re *kube.RedirectError
	switch {
	case errors.As(err, &re):
		return fmt.Sprintf("answered %s %s with a redirect to %s (HTTP %d), which kubectl-dynamo never follows: nothing was sent there", re.Method, re.From, re.To, re.Status)
	case errors.Is(err, kube.ErrRequestRefused):
		return err.Error()
	case errors.Is(err, iolimit.ErrResponseTooLarge):
		return err.Error()
	case errors.Is(err, context.DeadlineExceeded) || iolimit.IsTimeout(context.Background(), err):
		return fmt.Sprintf("no answer within %s", timeout)
	case apierrors.IsForbidden(err):
		return "forbidden (RBAC: needs get on services/proxy in the namespace); pass --frontend-url after a port-forward"
	case errors.As(err, &st) && st.Status().Code == http.StatusServiceUnavailable:
		return "the service proxy answered HTTP 503 (no ready endpoint, or the frontend is down): " + strings.TrimSpace(firstLine(st.Status().Message))
	case serviceMissing(err):
		return "the Service does not exist"
	case errors.As(err, &st):
		return fmt.Sprintf("HTTP %d %s", st.Status().Code, strings.TrimSpace(firstLine(st.Status().Message)))
	}
	return redact.URLs(err.Error())
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// get GETs path from t within the timeout and size limit.
func (o Options) get(ctx context.Context, t Target, path string, limit int64) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	if t.URL == "" {
		if o.API == nil {
			return nil, errors.New("no Kubernetes client to reach the service proxy")
		}
		return o.API.ServiceProxyGet(ctx, t.Namespace, t.Service, t.Port, path, limit)
	}
	base, err := url.Parse(t.URL)
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("--frontend-url %q is not an http(s) URL", redact.URLs(t.URL))
	}
	u := base.JoinPath(path)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/plain, application/json;q=0.9, */*;q=0.1")
	resp, err := o.HTTPClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, &httpStatusError{Code: resp.StatusCode, Status: resp.Status}
	}
	return iolimit.ReadAtMost(resp.Body, limit)
}

// promLineRE matches a Prometheus text-format sample line.
var promLineRE = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*(\{.*\})?[ \t]+[-+0-9.eEaINfn]+([ \t]+-?[0-9]+)?[ \t]*$`)

// NotPrometheusText reports the first line (1-based) of body that is not valid
// Prometheus text exposition, if any; an empty body is valid (no series).
func NotPrometheusText(body []byte) (int, bool) {
	for i, line := range strings.Split(string(body), "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if !promLineRE.MatchString(line) {
			return i + 1, true
		}
	}
	return 0, false
}
