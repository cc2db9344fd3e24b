package kube

import (
	"context"
	"io"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// WatchJSON implements the watcher's API (pkg/source/watch) with one WATCH
// request whose answer, a stream of JSON events, the caller reads and closes.
func (k *RESTAPI) WatchJSON(ctx context.Context, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions) (io.ReadCloser, error) {
	opts.Watch = true
	return k.disc.Get().AbsPath(ListPath(gvr, namespace)).
		SpecificallyVersionedParams(&opts, metav1.ParameterCodec, metav1.SchemeGroupVersion).
		SetHeader("Accept", "application/json").Stream(ctx)
}
