package kube

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
)

// ErrRequestRefused is wrapped by the error of a request that kubectl-dynamo
// refused to send: it never left the process.
var ErrRequestRefused = errors.New("kubectl-dynamo is read-only: request refused before it left the process")

// RedirectError is a 3xx answer that was not followed. Nothing was sent to
// its target: no client of kubectl-dynamo follows a redirect, so an answer
// cannot send the operator's credentials, or a POST, somewhere else.
type RedirectError struct {
	Status int
	// Method and From are the request that was answered with the redirect.
	Method, From string
	// To is the redirect's target (Location), with credentials and query removed.
	To string
}

func (e *RedirectError) Error() string {
	return fmt.Sprintf("%s %s answered HTTP %d, a redirect to %s; kubectl-dynamo never follows redirects, so nothing was sent there",
		e.Method, e.From, e.Status, e.To)
}

// apiProxyPOST matches the only POSTs sent to the API server: a frontend's
// /tokenize and the KV indexer's /query, through the service proxy (the server
// URL of a kubeconfig may add a prefix before /api).
var apiProxyPOST = regexp.MustCompile(`(^|/)api/v1/namespaces/[^/]+/services/[^/]+/proxy/(tokenize|query)$`)

// directPOST matches the only POSTs sent straight to a frontend or indexer
// (--frontend-url, --indexer-url): /tokenize and /query under any prefix.
var directPOST = regexp.MustCompile(`/(tokenize|query)$`)

// requestGuard is the transport of every client kubectl-dynamo makes: it lets
// through only GET (get, list, watch, discovery, service-proxy reads) and
// POSTs whose path allow matches, refuses everything else before it leaves
// the process, and turns every 3xx answer into a *RedirectError, so the
// http.Client above it never follows one (whatever its CheckRedirect).
type requestGuard struct {
	next  http.RoundTripper
	allow *regexp.Regexp
	what  string // "the Kubernetes API server", "the frontend"
}

// guardAPIServer wraps the transport of an API-server client.
func guardAPIServer(next http.RoundTripper) http.RoundTripper {
	return &requestGuard{next: next, allow: apiProxyPOST, what: "the Kubernetes API server"}
}

// guardDirect wraps the transport of a client for direct frontend URLs.
func guardDirect(next http.RoundTripper) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	return &requestGuard{next: next, allow: directPOST, what: "the frontend"}
}

// checkRequest is the guard's rule, on its own for tests and docs.
func checkRequest(method, path string, allow *regexp.Regexp, what string) error {
	switch {
	case method == http.MethodGet:
		return nil
	case method == http.MethodPost && allow.MatchString(path):
		return nil
	}
	return fmt.Errorf("%w: %s %s to %s (only GET, and POST to a frontend's /tokenize or the KV indexer's /query, are ever sent)",
		ErrRequestRefused, method, sanitizePath(path), what)
}

func (g *requestGuard) RoundTrip(r *http.Request) (*http.Response, error) {
	if err := checkRequest(r.Method, r.URL.Path, g.allow, g.what); err != nil {
		if r.Body != nil {
			r.Body.Close()
		}
		return nil, err
	}
	resp, err := g.next.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode >= 300 && resp.StatusCode < 400 && resp.StatusCode != http.StatusNotModified {
		loc := resp.Header.Get("Location")
		resp.Body.Close()
		return nil, &RedirectError{Status: resp.StatusCode, Method: r.Method, From: sanitizePath(r.URL.Path), To: redirectTarget(r, loc)}
	}
	return resp, nil
}

// WrappedRoundTripper lets client-go reach the transport underneath (to cancel
// requests on timeout).
func (g *requestGuard) WrappedRoundTripper() http.RoundTripper { return g.next }

// NoRedirects is the CheckRedirect of every http.Client kubectl-dynamo makes:
// it never follows a redirect and returns a *RedirectError naming the target.
// (The guarded transport already stops a redirect before the client sees it;
// this is the second lock.)
func NoRedirects(req *http.Request, via []*http.Request) error {
	e := &RedirectError{To: redirectTarget(req, req.URL.String())}
	if len(via) > 0 {
		prev := via[len(via)-1]
		e.Method, e.From = prev.Method, sanitizePath(prev.URL.Path)
	}
	if req.Response != nil {
		e.Status = req.Response.StatusCode
	}
	return e
}

// SafeHTTPClient returns a copy of c (or a new client) whose transport is
// guarded (GET, and POST to /tokenize and /query only; no redirect followed)
// and that never follows a redirect.
func SafeHTTPClient(c *http.Client) *http.Client {
	var cc http.Client
	if c != nil {
		cc = *c
	}
	if _, ok := cc.Transport.(*requestGuard); !ok {
		cc.Transport = guardDirect(cc.Transport)
	}
	cc.CheckRedirect = NoRedirects
	return &cc
}

// redirectTarget is a redirect's Location resolved against the request, with
// user info and query removed (they may carry credentials) and made safe to
// print.
func redirectTarget(r *http.Request, loc string) string {
	if loc == "" {
		return "(no Location)"
	}
	u, err := r.URL.Parse(loc)
	if err != nil {
		return sanitizePath(loc)
	}
	u.User = nil
	u.RawQuery = ""
	u.Fragment = ""
	return sanitizePath(u.String())
}

// sanitizePath keeps a path or URL from cluster data printable: control and
// format characters are shown escaped, and it is cut at 200 bytes.
func sanitizePath(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || (r >= 0x200b && r <= 0x200f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
			fmt.Fprintf(&b, "\\u%04x", r)
			continue
		}
		b.WriteRune(r)
		if b.Len() > 200 {
			b.WriteString("…")
			break
		}
	}
	return b.String()
}
