package kube

import (
	"bytes"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestRawDecoder: the objects of watch events stay JSON; a Status is decoded
// (client-go reads the errors of answers through it, defaulting the version to
// v1); what the dynamic client's decoder refuses (no kind, not an object) is
// refused.
func TestRawDecoder(t *testing.T) {
	d := rawSerializer.SupportedMediaTypes()[0].Serializer
	tests := []struct {
		name    string
		doc     string
		want    string // "raw", "status" or an error's text
		message string // a Status's message
	}{
		{name: "pod", doc: `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p"}}`, want: "raw"},
		{name: "custom resource", doc: `{"apiVersion":"nvidia.com/v1alpha1","kind":"DynamoWorkerMetadata","metadata":{"name":"w"}}`, want: "raw"},
		{name: "status", doc: `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"too old resource version: 1 (5)","reason":"Expired","code":410}`,
			want: "status", message: "too old resource version: 1 (5)"},
		{name: "status without a version", doc: `{"kind":"Status","status":"Failure","message":"m","code":403,"reason":"Forbidden"}`, want: "status", message: "m"},
		{name: "a kind that is not a string", doc: `{"kind":7,"metadata":{}}`, want: "'Kind' is missing"},
		{name: "no kind", doc: `{"metadata":{"name":"p"}}`, want: "'Kind' is missing"},
		{name: "not an object", doc: `[1]`, want: "not a JSON object"},
		{name: "not JSON", doc: `{"kind":"Pod",}`, want: "not JSON"},
		{name: "trailing data", doc: `{"kind":"Pod"} {}`, want: "not JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// As client-go's Result.Error reads an answer's Status.
			obj, _, err := d.Decode([]byte(tt.doc), &schema.GroupVersionKind{Version: "v1"}, nil)
			switch tt.want {
			case "raw":
				r, ok := obj.(*RawObject)
				if err != nil || !ok || !bytes.Equal(r.JSON, []byte(tt.doc)) {
					t.Fatalf("Decode = %#v, %v; want the JSON as it is", obj, err)
				}
			case "status":
				st, ok := obj.(*metav1.Status)
				if err != nil || !ok || st.Message != tt.message {
					t.Fatalf("Decode = %#v, %v; want a Status saying %q", obj, err, tt.message)
				}
				if e := apierrors.FromObject(st); apierrors.ReasonForError(e) != st.Reason {
					t.Errorf("the Status reads as %v", e)
				}
			default:
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("Decode = %#v, %v; want an error saying %q", obj, err, tt.want)
				}
			}
		})
	}
	var _ runtime.Object = &RawObject{} // a watch.Event carries it
	if (&RawObject{}).GetObjectKind() == nil {
		t.Error("RawObject has no ObjectKind")
	}
}
