package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"syscall"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestUnreachableCause: connection-level failures (no connection, or a
// connection closed without an answer, also when client-go retried it until the
// request timeout) are told apart from an API server that answers slowly or
// answers an error.
func TestUnreachableCause(t *testing.T) {
	get := func(err error) error { return &url.Error{Op: "Get", URL: "https://10.0.0.1:6443/apis", Err: err} }
	dial := func(err error) error { return get(&net.OpError{Op: "dial", Net: "tcp", Err: err}) }
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	cases := []struct {
		name string
		ctx  context.Context
		err  error
		want string // "" = not unreachable
	}{
		{"refused", nil, dial(os.NewSyscallError("connect", syscall.ECONNREFUSED)), "connection refused"},
		{"no route", nil, dial(os.NewSyscallError("connect", syscall.EHOSTUNREACH)), "no route to host"},
		{"network unreachable", nil, dial(os.NewSyscallError("connect", syscall.ENETUNREACH)), "network unreachable"},
		{"unknown host", nil, dial(&net.DNSError{Err: "no such host", Name: "api.example", IsNotFound: true}), "host api.example not found"},
		{"dial timeout", nil, dial(&TimeoutErr{}), "no connection before the timeout"},
		{"EOF", nil, get(io.EOF), "connection closed without an answer (EOF)"},
		{"reset", nil, get(&net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}), "connection reset"},
		{"http2 lost", nil, get(errors.New("http2: client connection lost")), "connection lost"},
		// client-go's wrapPreviousError: the EOF is only in the text.
		{"EOF retried until the timeout", nil,
			fmt.Errorf("%w - error from a previous attempt: EOF", get(context.DeadlineExceeded)),
			"connection closed without an answer (EOF) on every attempt until the request timed out"},
		{"reset retried", nil,
			fmt.Errorf("%w - error from a previous attempt: read tcp 127.0.0.1:5->127.0.0.1:6: read: connection reset by peer", get(context.DeadlineExceeded)),
			"connection reset on every attempt until the request timed out"},
		// Slow answers are timeouts, not unreachable.
		{"slow", nil, get(errors.New("context deadline exceeded (Client.Timeout exceeded while awaiting headers)")), ""},
		{"deadline", nil, context.DeadlineExceeded, ""},
		{"timeout retried after a timeout", nil,
			fmt.Errorf("%w - error from a previous attempt: net/http: timeout awaiting response headers", get(context.DeadlineExceeded)), ""},
		// The server answered.
		{"forbidden", nil, apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", errors.New("no")), ""},
		{"server timeout", nil, apierrors.NewServerTimeout(schema.GroupResource{Resource: "pods"}, "list", 1), ""},
		// Ctrl-C is not the server's fault.
		{"cancelled", cancelled, get(io.EOF), ""},
	}
	for _, c := range cases {
		ctx := c.ctx
		if ctx == nil {
			ctx = context.Background()
		}
		got, ok := unreachableCause(ctx, c.err)
		if ok != (c.want != "") || got != c.want {
			t.Errorf("%s: unreachableCause(%v) = %q, %v; want %q", c.name, c.err, got, ok, c.want)
		}
	}
}

func TestAPIServerName(t *testing.T) {
	for detail, want := range map[string]string{
		"":                          "the API server",
		"(https://10.0.0.1:6443)":   "the API server (https://10.0.0.1:6443)",
		"prod (https://10.0.0.1:1)": "the API server of context prod (https://10.0.0.1:1)",
	} {
		if got := apiServerName(detail); got != want {
			t.Errorf("apiServerName(%q) = %q, want %q", detail, got, want)
		}
	}
}

type TimeoutErr struct{}

func (*TimeoutErr) Error() string { return "i/o timeout" }

func (*TimeoutErr) Timeout() bool { return true }

func (*TimeoutErr) Temporary() bool { return true }
