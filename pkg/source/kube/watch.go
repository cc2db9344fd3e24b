package kube

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// Watch implements API with one WATCH request.
func (k *RESTAPI) Watch(ctx context.Context, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions) (watch.Interface, error) {
	if namespace == "" {
		return k.dyn.Resource(gvr).Watch(ctx, opts)
	}
	return k.dyn.Resource(gvr).Namespace(namespace).Watch(ctx, opts)
}
