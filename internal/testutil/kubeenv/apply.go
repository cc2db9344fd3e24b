package kubeenv

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
)

// FieldManager is the server-side-apply field manager Env.Apply uses.
const FieldManager = "kubeenv"

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// DecodeFiles reads Kubernetes objects from YAML or JSON files (multi-document
// YAML allowed) and from directories (their *.yaml, *.yml and *.json files,
// not recursive, in name order). Empty documents are skipped.
func DecodeFiles(paths ...string) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	for _, p := range paths {
		files := []string{p}
		if st, err := os.Stat(p); err != nil {
			return nil, err
		} else if st.IsDir() {
			files = nil
			entries, err := os.ReadDir(p)
			if err != nil {
				return nil, err
			}
			for _, de := range entries {
				switch strings.ToLower(filepath.Ext(de.Name())) {
				case ".yaml", ".yml", ".json":
					if !de.IsDir() {
						files = append(files, filepath.Join(p, de.Name()))
					}
				}
			}
			if len(files) == 0 {
				return nil, fmt.Errorf("no *.yaml, *.yml or *.json files in %s", p)
			}
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				return nil, err
			}
			o, err := Decode(data)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			objs = append(objs, o...)
		}
	}
	return objs, nil
}

// Decode parses Kubernetes objects from YAML (multi-document) or JSON. A List
// kind is flattened into its items.
func Decode(data []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var objs []*unstructured.Unstructured
	for {
		// Decode each document's JSON text first and then with apimachinery's
		// JSON package, which keeps integers as int64: decoding straight into a
		// map would turn them into float64 and round ids above 2^53.
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			if errors.Is(err, io.EOF) {
				return objs, nil
			}
			return nil, err
		}
		var m map[string]any
		if err := utiljson.Unmarshal(raw, &m); err != nil {
			return nil, err
		}
		if len(m) == 0 {
			continue
		}
		u := &unstructured.Unstructured{Object: m}
		if u.IsList() {
			l, err := u.ToList()
			if err != nil {
				return nil, err
			}
			for i := range l.Items {
				objs = append(objs, &l.Items[i])
			}
			continue
		}
		if u.GetAPIVersion() == "" || u.GetKind() == "" {
			return nil, fmt.Errorf("document %d has no apiVersion or kind", len(objs)+1)
		}
		objs = append(objs, u)
	}
}

// ApplyFiles decodes the files (see DecodeFiles) and applies the objects in
// order (see Apply).
func (e *Env) ApplyFiles(ctx context.Context, paths ...string) ([]*unstructured.Unstructured, error) {
	objs, err := DecodeFiles(paths...)
	if err != nil {
		return nil, err
	}
	return e.Apply(ctx, objs...)
}

// ApplyYAML decodes data (see Decode) and applies the objects in order.
func (e *Env) ApplyYAML(ctx context.Context, data []byte) ([]*unstructured.Unstructured, error) {
	objs, err := Decode(data)
	if err != nil {
		return nil, err
	}
	return e.Apply(ctx, objs...)
}

// Apply creates or updates the objects, in order, as the admin user with
// server-side apply (field manager "kubeenv", conflicts forced), and returns
// them as stored. It is a test helper: it mutates the cluster, which the plugin
// itself never does.
//
//   - A namespaced object without a namespace goes to "default".
//   - If the object has a "status" and its resource has a status subresource,
//     the status is applied through it too, so tests can set e.g. a Pod's phase
//     or a DGD's conditions in one call.
//   - A CustomResourceDefinition is waited for until it is Established and its
//     kinds are discoverable, so later objects in the same call can use it.
func (e *Env) Apply(ctx context.Context, objs ...*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	dyn, err := e.Dynamic()
	if err != nil {
		return nil, err
	}
	out := make([]*unstructured.Unstructured, 0, len(objs))
	for _, obj := range objs {
		got, err := e.applyOne(ctx, dyn, obj)
		if err != nil {
			return out, fmt.Errorf("apply %s %s: %w", obj.GetKind(), objName(obj), err)
		}
		out = append(out, got)
	}
	return out, nil
}

func objName(o *unstructured.Unstructured) string {
	if ns := o.GetNamespace(); ns != "" {
		return ns + "/" + o.GetName()
	}
	return o.GetName()
}

func (e *Env) applyOne(ctx context.Context, dyn dynamic.Interface, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	gvk := obj.GroupVersionKind()
	mapping, err := e.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		e.mapper.Reset() // a CRD may have been installed since discovery was cached
		mapping, err = e.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	if err != nil {
		return nil, err
	}
	obj = obj.DeepCopy()
	obj.SetManagedFields(nil)
	obj.SetResourceVersion("")
	var ri dynamic.ResourceInterface = dyn.Resource(mapping.Resource)
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		if obj.GetNamespace() == "" {
			obj.SetNamespace(metav1.NamespaceDefault)
		}
		ri = dyn.Resource(mapping.Resource).Namespace(obj.GetNamespace())
	} else {
		obj.SetNamespace("")
	}
	opts := metav1.ApplyOptions{FieldManager: FieldManager, Force: true}
	got, err := ri.Apply(ctx, obj.GetName(), obj, opts)
	if err != nil {
		return nil, err
	}
	if status, ok := obj.Object["status"]; ok && status != nil {
		st, err := ri.ApplyStatus(ctx, obj.GetName(), obj, opts)
		switch {
		case err == nil:
			got = st
		case !isNotFound(err):
			return nil, fmt.Errorf("status: %w", err)
		}
		// NotFound: no status subresource, so the main apply already wrote it.
	}
	if mapping.Resource == crdGVR {
		if err := e.waitForCRD(ctx, got.GetName()); err != nil {
			return nil, err
		}
	}
	return got, nil
}

// InstallCRDs applies the CustomResourceDefinitions in the given files or
// directories (see DecodeFiles) and waits until each is Established and all its
// served versions are discoverable. Any other kind in the files is an error.
func (e *Env) InstallCRDs(ctx context.Context, paths ...string) error {
	objs, err := DecodeFiles(paths...)
	if err != nil {
		return err
	}
	for _, o := range objs {
		if o.GetKind() != "CustomResourceDefinition" {
			return fmt.Errorf("InstallCRDs: %s %s is not a CustomResourceDefinition", o.GetKind(), o.GetName())
		}
	}
	_, err = e.Apply(ctx, objs...)
	return err
}

// waitForCRD waits until the CRD is Established and its kind is resolvable in
// every served version through a fresh discovery.
func (e *Env) waitForCRD(ctx context.Context, name string) error {
	dyn, err := e.Dynamic()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var crd *unstructured.Unstructured
	var rejected error // a condition that will not resolve by waiting
	err = poll(ctx, 50*time.Millisecond, "CRD "+name+" to be Established", []*process{e.apiserver}, func(ctx context.Context) (bool, error) {
		crd, err = dyn.Resource(crdGVR).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
		for _, c := range conds {
			m, _ := c.(map[string]any)
			switch {
			case m["type"] == "Established" && m["status"] == "True":
				return true, nil
			case m["type"] == "NamesAccepted" && m["status"] == "False",
				m["type"] == "NonStructuralSchema" && m["status"] == "True":
				rejected = fmt.Errorf("CRD %s: %v %v: %v (%v)", name, m["type"], m["status"], m["message"], m["reason"])
				return true, nil
			}
		}
		return false, fmt.Errorf("conditions: %v", conds)
	})
	if err == nil {
		err = rejected
	}
	if err != nil {
		return err
	}
	group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
	kind, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "kind")
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	var served []string
	for _, v := range versions {
		m, _ := v.(map[string]any)
		if s, _ := m["served"].(bool); s {
			served = append(served, fmt.Sprint(m["name"]))
		}
	}
	return poll(ctx, 50*time.Millisecond, "CRD "+name+" in discovery", []*process{e.apiserver}, func(context.Context) (bool, error) {
		e.mapper.Reset()
		for _, v := range served {
			if _, err := e.mapper.RESTMapping(schema.GroupKind{Group: group, Kind: kind}, v); err != nil {
				return false, err
			}
		}
		return true, nil
	})
}
