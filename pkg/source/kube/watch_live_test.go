package kube_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/kubeenv"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/iolimit"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/kube"
)

// TestListJSONAndWatchMatchDynamicLive: on a real API server, ListJSON reads
// the items the dynamic client's List decodes, and Watch's events carry, as
// JSON, the objects the dynamic client's Watch decodes, and its errors are the
// dynamic client's; an answer larger than the limit is refused.
func TestListJSONAndWatchMatchDynamicLive(t *testing.T) {
	e := kubeenv.Start(t, kubeenv.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs := kubernetes.NewForConfigOrDie(e.RESTConfig)
	dyn := dynamic.NewForConfigOrDie(e.RESTConfig)
	api, err := kube.NewAPI(e.RESTConfig)
	if err != nil {
		t.Fatal(err)
	}
	const ns = "watch"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cm := func(name string, data map[string]string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "x"}}, Data: data}
	}
	for _, n := range []string{"a", "b"} {
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm(n, map[string]string{"k": n}), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	canon := func(v any) string {
		t.Helper()
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var m any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		b, _ = json.Marshal(m)
		return string(b)
	}

	// LIST.
	want, err := dyn.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	data, err := api.ListJSON(ctx, gvr, ns, metav1.ListOptions{}, kube.MaxListBytes)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
		Items []map[string]any `json:"items"`
	}
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Items) != len(want.Items) || len(got.Items) != 2 {
		t.Fatalf("ListJSON read %d items, the dynamic client %d", len(got.Items), len(want.Items))
	}
	for i := range got.Items {
		// The dynamic client adds the list's kind and apiVersion to each item.
		got.Items[i]["kind"], got.Items[i]["apiVersion"] = want.Items[i].GetKind(), want.Items[i].GetAPIVersion()
		if g, w := canon(got.Items[i]), canon(want.Items[i].Object); g != w {
			t.Errorf("item %d:\n ListJSON %s\n dynamic  %s", i, g, w)
		}
	}
	if _, err := api.ListJSON(ctx, gvr, ns, metav1.ListOptions{}, int64(len(data)-1)); !errors.Is(err, iolimit.ErrResponseTooLarge) {
		t.Errorf("ListJSON past its limit: err = %v, want %v", err, iolimit.ErrResponseTooLarge)
	}
	if d, err := api.ListJSON(ctx, gvr, ns, metav1.ListOptions{}, int64(len(data))); err != nil || len(d) != len(data) {
		t.Errorf("ListJSON at its limit: %d bytes, %v", len(d), err)
	}

	// WATCH from the LIST's resourceVersion, both clients at once.
	opts := metav1.ListOptions{ResourceVersion: got.Metadata.ResourceVersion}
	rawW, err := api.Watch(ctx, gvr, ns, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer rawW.Stop()
	dynW, err := dyn.Resource(gvr).Namespace(ns).Watch(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer dynW.Stop()
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm("c", map[string]string{"k": "c"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ConfigMaps(ns).Update(ctx, cm("a", map[string]string{"k": "a2"}), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cs.CoreV1().ConfigMaps(ns).Delete(ctx, "b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	next := func(w watch.Interface) watch.Event {
		t.Helper()
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatal("the watch ended")
			}
			return ev
		case <-ctx.Done():
			t.Fatal("no watch event")
		}
		return watch.Event{}
	}
	for i, typ := range []watch.EventType{watch.Added, watch.Modified, watch.Deleted} {
		r, d := next(rawW), next(dynW)
		raw, ok := r.Object.(*kube.RawObject)
		if r.Type != typ || d.Type != typ || !ok {
			t.Fatalf("event %d: %s %T and %s %T, want %s of a RawObject", i, r.Type, r.Object, d.Type, d.Object, typ)
		}
		var m map[string]any
		if err := json.Unmarshal(raw.JSON, &m); err != nil {
			t.Fatal(err)
		}
		if g, w := canon(m), canon(d.Object.(*unstructured.Unstructured).Object); g != w {
			t.Errorf("event %d:\n raw     %s\n dynamic %s", i, g, w)
		}
	}

	// The first event from resourceVersion 1, and the errors of a resource not
	// served and of a resourceVersion that is none: the same either way.
	outcome := func(w watch.Interface, err error) string {
		t.Helper()
		if err != nil {
			return "error: " + err.Error()
		}
		defer w.Stop()
		ev := next(w)
		obj := ev.Object
		if r, ok := obj.(*kube.RawObject); ok {
			var m map[string]any
			if err := json.Unmarshal(r.JSON, &m); err != nil {
				t.Fatal(err)
			}
			obj = &unstructured.Unstructured{Object: m}
		}
		return fmt.Sprintf("%s of a %T: %s", ev.Type, obj, canon(obj))
	}
	for _, c := range []struct {
		name string
		gvr  schema.GroupVersionResource
		rv   string
	}{
		{"from resourceVersion 1", gvr, "1"},
		{"a resource not served", schema.GroupVersionResource{Group: "nvidia.com", Version: "v1", Resource: "nothing"}, ""},
		{"a resourceVersion that is none", gvr, "abc"},
	} {
		o := metav1.ListOptions{ResourceVersion: c.rv}
		rawOut := outcome(api.Watch(ctx, c.gvr, ns, o))
		dynOut := outcome(dyn.Resource(c.gvr).Namespace(ns).Watch(ctx, o))
		t.Logf("%s: %.160s", c.name, rawOut)
		if rawOut != dynOut {
			t.Errorf("%s:\n raw     %s\n dynamic %s", c.name, rawOut, dynOut)
		}
	}
}
