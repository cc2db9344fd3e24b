package kube

import (
	"context"
	"io"
	"strconv"
)

// LogOptions select what one read of a container's log returns: the
// parameters of the API server's pods/log subresource.
type LogOptions struct {
	// Container names the container (the pod's only one when "").
	Container string
	// SinceSeconds keeps the lines of the last this many seconds (0: all).
	SinceSeconds int64
	// TailLines keeps the last this many lines (negative: all).
	TailLines int64
	// LimitBytes makes the API server stop after this many bytes (0: no
	// limit); the caller bounds its own read as well.
	LimitBytes int64
}

// PodLogs opens a container's log with one GET
// /api/v1/namespaces/NS/pods/POD/log (RBAC: get on pods/log), which the API
// server answers from the node's kubelet. The caller reads the body (at most
// LimitBytes) and closes it. A refusal is an apierrors status error
// (apierrors.IsForbidden for a 403).
func (k *RESTAPI) PodLogs(ctx context.Context, namespace, pod string, o LogOptions) (io.ReadCloser, error) {
	req := k.Rest.Get().Namespace(namespace).Resource("pods").Name(pod).SubResource("log")
	if o.Container != "" {
		req = req.Param("container", o.Container)
	}
	if o.SinceSeconds > 0 {
		req = req.Param("sinceSeconds", strconv.FormatInt(o.SinceSeconds, 10))
	}
	if o.TailLines >= 0 {
		req = req.Param("tailLines", strconv.FormatInt(o.TailLines, 10))
	}
	if o.LimitBytes > 0 {
		req = req.Param("limitBytes", strconv.FormatInt(o.LimitBytes, 10))
	}
	return req.Stream(ctx)
}
